//! The guard's record of who was refused already in the current period, per event: what
//! makes the first refusal of each caller the one logged, in fixed memory (`guard` uses it).

use std::hash::BuildHasher;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use crate::limits::address::Address;
use crate::limits::flood::Clock;

/// Callers whose first refusal in a period is logged, per event and period at most. Past it,
/// refused callers are counted rather than logged, and one summary line a period says how
/// many ([`FirstRefusals::summarize`]).
pub const LOGGED_CALLERS: usize = 32_768;
/// Callers an event remembers per period, logged or not: the summary's count is exact up to
/// `TRACKED_CALLERS - LOGGED_CALLERS` callers past the bound, and says "at least" beyond.
const TRACKED_CALLERS: usize = 98_304;
/// Places in an event's set, a power of two: kept at most three quarters full, so a lookup
/// reads a few neighbouring words. 8 bytes each: 1 MiB per event, allocated zeroed at its first
/// refusal (the pages are touched as callers arrive).
const CALLER_SLOTS: usize = 131_072;
/// Places a lookup reads at most; a caller past them is counted as past the bound.
const MAX_PROBES: usize = 64;

/// Which callers were refused already in the current period, per event: the guard's own state,
/// never the flood store's (whose cells are shared between keys, so a second count there
/// loses callers to collisions). An open-addressed set of words, each a caller's keyed hash
/// (32 bits of its own hash of it, never the caller itself) tagged with its period, so a new
/// period starts empty without clearing anything. Fixed memory.
///
/// A refusal of a caller already seen reads a few words and writes none, and takes no lock: the
/// usual request of a flood. A caller's first refusal takes its event's lock once, to count it
/// against the bound (what the flood store's table lock was before). Two callers' hashes that
/// agree in all 49 bits the set compares (17 of place, 32 stored) share a line: about one in
/// 2^32 of lookups that meet another caller, for the rest of that period.
pub struct FirstRefusals {
    clock: Clock,
    hasher: foldhash::quality::RandomState,
    events: [EventRefusals; Address::COUNT],
}

#[derive(Default)]
struct EventRefusals {
    slots: OnceLock<Box<[AtomicU64]>>,
    /// The number of the period in which the bound was reached (plus one; 0: not reached):
    /// past it, refusals of callers not yet seen are answered from this one word.
    full_in: AtomicI64,
    period: std::sync::Mutex<PeriodLog>,
}

impl EventRefusals {
    /// The log of period `number` (of `period_ms`), locked: the one before it, when it ended
    /// with callers unlogged, is summarized first.
    fn current(
        &self,
        event: &str,
        number: i64,
        period_ms: i64,
    ) -> std::sync::MutexGuard<'_, PeriodLog> {
        let mut period_log = self.period.lock().unwrap_or_else(|e| e.into_inner());
        if number > period_log.number || period_ms != period_log.period_ms {
            if let Some(ended) = period_log.roll(number, period_ms) {
                summary_line(event, ended);
            }
        }
        period_log
    }
}

/// An event's log in its current period: taken on a caller's first refusal only.
#[derive(Default)]
struct PeriodLog {
    /// The period's number since the epoch, and its length.
    number: i64,
    period_ms: i64,
    logged: usize,
    /// Callers refused past the bound, each counted once (while they fit in the set).
    unlogged: usize,
    /// Whether callers past the set's room went uncounted: `unlogged` is then a floor.
    at_least: bool,
}

impl PeriodLog {
    /// Starts period `number` (of `period_ms`), returning the one that ended with callers left
    /// unlogged, for its summary line.
    fn roll(&mut self, number: i64, period_ms: i64) -> Option<(usize, bool)> {
        let ended = (self.unlogged > 0 || self.at_least).then_some((self.unlogged, self.at_least));
        *self = PeriodLog {
            number,
            period_ms,
            ..PeriodLog::default()
        };
        ended
    }
}

/// `n` words, zeroed by the allocator: the pages are not touched until a caller lands on them.
fn zeroed_words(n: usize) -> Box<[AtomicU64]> {
    let layout = std::alloc::Layout::array::<AtomicU64>(n).expect("a set of this size");
    assert!(layout.size() > 0);
    // SAFETY: the layout is non-empty; all-zero bytes are a valid `AtomicU64` (0); the pointer
    // comes from the global allocator with this very layout, as `Box<[AtomicU64]>` frees it.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout).cast::<AtomicU64>();
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, n))
    }
}

/// The tag a period's words carry: never 0, so an empty place (0) is never a current caller.
fn period_tag(number: i64) -> u64 {
    number.rem_euclid(i64::from(u32::MAX)) as u64 + 1
}

fn summary_line(event: &str, (callers, at_least): (usize, bool)) {
    tracing::warn!(
        event,
        callers,
        at_least,
        logged = LOGGED_CALLERS,
        "callers refused past the log's bound in a period, not logged one by one"
    );
}

impl FirstRefusals {
    pub fn new(clock: Clock) -> Self {
        Self {
            clock,
            hasher: foldhash::quality::RandomState::default(),
            events: Default::default(),
        }
    }

    /// Whether this is `key`'s first refusal under `event` in the current period of length
    /// `period`, and within the bound: the one worth a log line. `key` is a keyed hash already
    /// (a caller, or `TOTAL` for the total tier).
    pub fn first(&self, address: Address, key: &str, period: Duration) -> bool {
        let log = &self.events[address.index()];
        let event = address.event();
        let period_ms = (period.as_millis() as i64).max(1);
        let number = self.clock.now_ms().div_euclid(period_ms);
        let tag = period_tag(number);
        let hash = self.hasher.hash_one(key);
        let word = (tag << 32) | (hash >> 32);
        let slots = log.slots.get_or_init(|| zeroed_words(CALLER_SLOTS));
        let mut place = hash as usize & (CALLER_SLOTS - 1);
        let mut probes = 0;
        while probes < MAX_PROBES {
            let seen = slots[place].load(Ordering::Acquire);
            if seen == word {
                return false;
            }
            if seen >> 32 == tag {
                // Another caller of this period: it was here before this one could be.
                place = (place + 1) & (CALLER_SLOTS - 1);
                probes += 1;
                continue;
            }
            // Empty, or an earlier period's: this caller's place, unless another takes it first.
            if log.full_in.load(Ordering::Acquire) == number + 1 {
                return false;
            }
            let mut period_log = log.current(event, number, period_ms);
            if period_log.logged + period_log.unlogged >= TRACKED_CALLERS {
                period_log.at_least = true;
                log.full_in.store(number + 1, Ordering::Release);
                return false;
            }
            if slots[place]
                .compare_exchange(seen, word, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                // Taken meanwhile: read it again (it may be this very caller).
                continue;
            }
            if period_log.logged < LOGGED_CALLERS {
                period_log.logged += 1;
                return true;
            }
            period_log.unlogged += 1;
            return false;
        }
        log.current(event, number, period_ms).at_least = true;
        false
    }

    /// Writes the summary line of each event whose period ended with callers refused past the
    /// bound (`all`: of the current periods too, at the stop), once per period.
    pub fn summarize(&self, all: bool) {
        let now = self.clock.now_ms();
        for address in Address::ALL {
            let log = &self.events[address.index()];
            let event = address.event();
            let mut period_log = log.period.lock().unwrap_or_else(|e| e.into_inner());
            if period_log.period_ms == 0 {
                continue;
            }
            let number = now.div_euclid(period_log.period_ms);
            if !all && number <= period_log.number {
                continue;
            }
            if period_log.unlogged > 0 || period_log.at_least {
                summary_line(event, (period_log.unlogged, period_log.at_least));
            }
            if all {
                // The current period goes on: its callers stay seen, its summary is written.
                period_log.unlogged = 0;
                period_log.at_least = false;
            } else {
                let period_ms = period_log.period_ms;
                period_log.roll(number, period_ms);
            }
        }
    }
}
