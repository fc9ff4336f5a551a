//! Token buckets for API callers: a rate per minute and a burst, refilled continuously, so
//! there is no window seam. Keyed by an API token's id (never its text); no axum here.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::limits::flood::Clock;

/// One caller's allowance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Policy {
    /// Requests refilled per minute.
    pub per_minute: u32,
    /// The most requests that may be made at once.
    pub burst: u32,
}

/// What one request got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub allowed: bool,
    /// Whole requests left after this one.
    pub remaining: u32,
    /// Seconds until the bucket is full again (`RateLimit`'s `t`), rounded up.
    pub reset_secs: u64,
    /// For a refusal: whole seconds until one request fits, rounded up and never below 1.
    pub retry_after_secs: u64,
}

struct Bucket {
    /// Requests available, in thousandths (integer arithmetic: no float drift).
    milli: u64,
    at_ms: i64,
}

/// Every caller's bucket. Callers are API tokens an administrator made, so the map is bounded
/// by that table; a revoked token's bucket is dropped with `forget`.
pub struct Buckets {
    clock: Clock,
    /// foldhash: the keys are ids of tokens an administrator made, not chosen by a caller.
    map: Mutex<HashMap<i64, Bucket, foldhash::fast::RandomState>>,
}

impl Buckets {
    pub fn new(clock: Clock) -> Self {
        Self {
            clock,
            map: Mutex::new(HashMap::default()),
        }
    }

    /// Takes one request from `caller`'s bucket under `policy`.
    pub fn take(&self, caller: i64, policy: Policy) -> Verdict {
        let now = self.clock.now_ms();
        let (capacity, per_minute) = Self::shape(policy);
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let bucket = map.entry(caller).or_insert(Bucket {
            milli: capacity,
            at_ms: now,
        });
        let elapsed = u64::try_from(now - bucket.at_ms).unwrap_or(0);
        bucket.milli = (bucket.milli + elapsed * per_minute / 60).min(capacity);
        bucket.at_ms = now;
        let allowed = bucket.milli >= 1000;
        if allowed {
            bucket.milli -= 1000;
        }
        Self::verdict(allowed, bucket.milli, capacity, per_minute)
    }

    /// A bucket's capacity in thousandths of a request, and its refill per minute.
    fn shape(policy: Policy) -> (u64, u64) {
        (
            u64::from(policy.burst.max(1)) * 1000,
            u64::from(policy.per_minute.max(1)),
        )
    }

    fn verdict(allowed: bool, milli: u64, capacity: u64, per_minute: u64) -> Verdict {
        // Thousandths of a request refilled per millisecond is per_minute / 60: milliseconds
        // for `missing` thousandths to refill, rounded up.
        let wait_ms = |missing: u64| (missing * 60).div_ceil(per_minute);
        let secs = |ms: u64| ms.div_ceil(1000);
        Verdict {
            allowed,
            remaining: u32::try_from(milli / 1000).unwrap_or(u32::MAX),
            reset_secs: secs(wait_ms(capacity - milli)),
            retry_after_secs: if allowed {
                0
            } else {
                secs(wait_ms(1000 - milli)).max(1)
            },
        }
    }

    /// The refusal `take` would answer for `caller` now, without taking: `None` when its
    /// bucket holds a request (or it has none yet: a new bucket is full). A refusal takes
    /// nothing either way, so this is `take`'s answer whenever it refuses.
    pub fn refused(&self, caller: i64, policy: Policy) -> Option<Verdict> {
        let map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let bucket = map.get(&caller)?;
        let (capacity, per_minute) = Self::shape(policy);
        let elapsed = u64::try_from(self.clock.now_ms() - bucket.at_ms).unwrap_or(0);
        let milli = (bucket.milli + elapsed * per_minute / 60).min(capacity);
        (milli < 1000).then(|| Self::verdict(false, milli, capacity, per_minute))
    }

    pub fn forget(&self, caller: i64) {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&caller);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn buckets() -> (Buckets, Clock) {
        let clock = Clock::manual(1_000_000);
        (Buckets::new(clock.clone()), clock)
    }

    const POLICY: Policy = Policy {
        per_minute: 60,
        burst: 5,
    };

    #[test]
    fn a_burst_then_one_a_second_with_no_seam() {
        let (b, clock) = buckets();
        for left in (0..5).rev() {
            let v = b.take(1, POLICY);
            assert!(v.allowed);
            assert_eq!(v.remaining, left);
        }
        let refused = b.take(1, POLICY);
        assert!(!refused.allowed);
        assert_eq!(refused.retry_after_secs, 1);
        clock.advance(Duration::from_millis(999));
        assert!(!b.take(1, POLICY).allowed, "not a whole request yet");
        clock.advance(Duration::from_millis(1));
        assert!(b.take(1, POLICY).allowed, "refilled continuously");
        assert_eq!(
            b.take(2, POLICY).remaining,
            4,
            "another caller has its own bucket"
        );
    }

    #[test]
    fn retry_after_rounds_up_and_is_never_zero() {
        let (b, clock) = buckets();
        let slow = Policy {
            per_minute: 7,
            burst: 1,
        };
        assert!(b.take(1, slow).allowed);
        let v = b.take(1, slow);
        // 60 / 7 = 8.57 s for one request.
        assert_eq!((v.allowed, v.retry_after_secs), (false, 9));
        clock.advance(Duration::from_millis(8_500));
        let v = b.take(1, slow);
        assert_eq!(
            (v.allowed, v.retry_after_secs),
            (false, 1),
            "0.07 s left is 1, not 0"
        );
        let fast = Policy {
            per_minute: 600_000,
            burst: 1,
        };
        assert!(b.take(3, fast).allowed);
        let v = b.take(3, fast);
        assert!(!v.allowed);
        assert_eq!(v.retry_after_secs, 1, "never below 1");
    }
}
