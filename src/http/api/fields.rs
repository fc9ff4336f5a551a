//! The API's rate-limit answer as bytes: the `429`'s JSON body, `Retry-After` and the RateLimit
//! fields. The common numbers are made once, so that the fast refusal allocates none of them;
//! the rest are formatted as they come. Either way the bytes are the same (unit tests below).

use std::cell::RefCell;
use std::sync::LazyLock;

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderName, HeaderValue};

use crate::limits::bucket::{Policy, Verdict};

/// The policy's name in the RateLimit fields.
const POLICY_NAME: &str = "token";
/// The body's text before the seconds, and after them.
const BODY_HEAD: &str = "{\"error\":\"rate_limited\",\"retry_after_seconds\":";
const BODY_TAIL: &str = "}";
/// Seconds the tables hold, from 1: an hour covers every wait of a bucket refilling at least
/// one request a minute, and a full bucket of up to 60 at that rate.
const TABLE_MAX: u64 = 3600;

fn body_text(seconds: u64) -> String {
    format!("{BODY_HEAD}{seconds}{BODY_TAIL}")
}

fn ratelimit_text(remaining: u32, reset_secs: u64) -> String {
    format!("\"{POLICY_NAME}\";r={remaining};t={reset_secs}")
}

fn policy_text(policy: Policy) -> String {
    let window = (u64::from(policy.burst) * 60).div_ceil(u64::from(policy.per_minute.max(1)));
    format!("\"{POLICY_NAME}\";q={};w={}", policy.burst, window.max(1))
}

/// The texts for 1..=`TABLE_MAX`, one after another in one string that lives as long as the
/// process, so each is a `&'static str` that a `Bytes` or a `HeaderValue` borrows for free.
struct Texts {
    all: String,
    /// Where the text for `n` ends, at `n - 1`; it starts where the one before ends.
    ends: Vec<usize>,
}

impl Texts {
    fn new(text: impl Fn(u64) -> String) -> Self {
        let mut all = String::new();
        let mut ends = Vec::with_capacity(TABLE_MAX as usize);
        for n in 1..=TABLE_MAX {
            all.push_str(&text(n));
            ends.push(all.len());
        }
        Self { all, ends }
    }

    fn get(&'static self, n: u64) -> Option<&'static str> {
        let i = usize::try_from(n).ok()?.checked_sub(1)?;
        let end = *self.ends.get(i)?;
        let start = i.checked_sub(1).map_or(0, |before| self.ends[before]);
        self.all.get(start..end)
    }
}

/// The bodies: `Retry-After` is the digits inside them.
static BODIES: LazyLock<Texts> = LazyLock::new(|| Texts::new(body_text));
/// `RateLimit` with nothing remaining, as every refusal has it.
static EMPTY: LazyLock<Texts> = LazyLock::new(|| Texts::new(|t| ratelimit_text(0, t)));

/// A text made at run time as a header value; only ASCII digits and punctuation are ever
/// formatted, so it always is one.
fn header_value(text: String) -> Option<HeaderValue> {
    HeaderValue::try_from(text).ok()
}

/// The body and the `Retry-After` value of a refusal `seconds` long (at least 1: the caller
/// makes sure, so that the two say the same number).
pub(super) fn refusal(seconds: u64) -> (Bytes, HeaderValue) {
    match BODIES.get(seconds) {
        Some(body) => {
            let digits = &body[BODY_HEAD.len()..body.len() - BODY_TAIL.len()];
            (
                Bytes::from_static(body.as_bytes()),
                HeaderValue::from_static(digits),
            )
        }
        None => (Bytes::from(body_text(seconds)), HeaderValue::from(seconds)),
    }
}

/// `RateLimit`: what remains and the seconds until the bucket is full.
fn ratelimit(remaining: u32, reset_secs: u64) -> Option<HeaderValue> {
    match (remaining, EMPTY.get(reset_secs)) {
        (0, Some(text)) => Some(HeaderValue::from_static(text)),
        _ => header_value(ratelimit_text(remaining, reset_secs)),
    }
}

thread_local! {
    /// The last `RateLimit-Policy` value this thread made, with its policy. A memo of a pure
    /// function, read by nothing else: most tokens share the site's policy, so a refusal clones
    /// it (a reference count) instead of formatting it.
    static LAST_POLICY: RefCell<Option<(Policy, HeaderValue)>> = const { RefCell::new(None) };
}

/// `RateLimit-Policy`: the burst (`q`) and the seconds to refill it (`w`).
fn ratelimit_policy(policy: Policy) -> Option<HeaderValue> {
    LAST_POLICY
        .try_with(|last| {
            let mut last = last.try_borrow_mut().ok()?;
            if let Some((_, value)) = last.as_ref().filter(|(p, _)| *p == policy) {
                return Some(value.clone());
            }
            let value = header_value(policy_text(policy))?;
            *last = Some((policy, value.clone()));
            Some(value)
        })
        .ok()
        .flatten()
        .or_else(|| header_value(policy_text(policy)))
}

/// The RateLimit draft's two fields.
const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// The seconds a refusal's `Retry-After` says: never below 1.
pub(super) fn retry_after_secs(verdict: Verdict) -> u64 {
    verdict.retry_after_secs.max(1)
}

/// The RateLimit draft's fields: the policy (`q` requests, `w` the seconds to refill a burst)
/// and what remains (`r`) with the seconds until the bucket is full (`t`). On a refusal `t` is
/// `Retry-After`'s number instead: the draft has the two name the same moment when both are
/// sent, and the moment a request fits again is the one a refused client waits for.
pub(super) fn rate_headers(headers: &mut HeaderMap, policy: Policy, verdict: Verdict) {
    if let Some(v) = ratelimit_policy(policy) {
        headers.insert(RATELIMIT_POLICY, v);
    }
    let reset = if verdict.allowed {
        verdict.reset_secs
    } else {
        retry_after_secs(verdict)
    };
    if let Some(v) = ratelimit(verdict.remaining, reset) {
        headers.insert(RATELIMIT, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1, the tables' last value, one past it, and far past it.
    const EDGES: [u64; 5] = [1, 2, TABLE_MAX, TABLE_MAX + 1, u64::MAX];

    #[test]
    fn a_refusal_from_the_table_is_the_formatted_one() {
        for seconds in EDGES {
            let (body, retry_after) = refusal(seconds);
            assert_eq!(body, body_text(seconds).as_bytes(), "{seconds}");
            assert_eq!(
                retry_after,
                HeaderValue::from(seconds),
                "{seconds}: Retry-After is the body's number"
            );
            let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(json["retry_after_seconds"], seconds, "{seconds}");
        }
        assert_eq!(
            &refusal(60).0[..],
            br#"{"error":"rate_limited","retry_after_seconds":60}"#
        );
    }

    #[test]
    fn ratelimit_from_the_table_is_the_formatted_one() {
        for reset in [0].into_iter().chain(EDGES) {
            for remaining in [0, 1, u32::MAX] {
                let formatted = format!("\"token\";r={remaining};t={reset}");
                assert_eq!(
                    ratelimit(remaining, reset)
                        .as_ref()
                        .map(HeaderValue::as_bytes),
                    Some(formatted.as_bytes()),
                );
            }
        }
    }

    #[test]
    fn a_refusal_s_reset_is_its_retry_after() {
        let headers = |allowed, retry_after_secs| {
            let mut h = HeaderMap::new();
            let verdict = Verdict {
                allowed,
                remaining: 0,
                reset_secs: 20,
                retry_after_secs,
            };
            rate_headers(
                &mut h,
                Policy {
                    per_minute: 6,
                    burst: 2,
                },
                verdict,
            );
            h[RATELIMIT].to_str().unwrap().to_owned()
        };
        assert_eq!(headers(false, 10), "\"token\";r=0;t=10");
        assert_eq!(
            headers(false, 0),
            "\"token\";r=0;t=1",
            "never below 1, as Retry-After"
        );
        assert_eq!(
            headers(true, 0),
            "\"token\";r=0;t=20",
            "answered: until full"
        );
    }

    #[test]
    fn ratelimit_policy_is_formatted_once_per_policy_and_always_the_same() {
        let policies = [
            (1, 1, "\"token\";q=1;w=60"),
            (60, 20, "\"token\";q=20;w=20"),
            (60, 20, "\"token\";q=20;w=20"),
            (7, 3, "\"token\";q=3;w=26"),
            (600_000, 1, "\"token\";q=1;w=1"),
            (0, 2, "\"token\";q=2;w=120"),
            (1, 1, "\"token\";q=1;w=60"),
        ];
        for (per_minute, burst, expected) in policies {
            let policy = Policy { per_minute, burst };
            assert_eq!(
                ratelimit_policy(policy).as_ref().map(HeaderValue::as_bytes),
                Some(expected.as_bytes()),
                "{policy:?}"
            );
        }
    }
}
