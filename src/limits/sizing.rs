//! The sizing history: per period, how busy each guarded address (the doorway, provider
//! notices, the sign-in's two limits) was while it counted, so an operator sees where a limit
//! would have bitten before setting it (docs/operations.md, "Sizing chart").
//!
//! Per period: requests in total, the busiest caller (its keyed hash, never a link, an address
//! or a name) and its count, the 99th percentile of per-caller counts, and refusals, real or
//! would-be. Bounded: at most [`MAX_CALLERS`] callers are told apart in a period,
//! [`PERIODS`] periods are kept, and [`Sizings`] keeps as many events as the guard tallies.
//!
//! Nothing here counts an outcome: a period's requests, refusals and would-be refusals are the
//! guard's own decision counters (`guard::Decisions`, the one count of each outcome), read as a
//! period closes and given to it as the difference since the last reading ([`DecisionCounts`]).
//! What the history adds is who was answered, on requests answered anyway (which already cost
//! a page, or a password check); the refusal path pays nothing here. A period's busiest caller
//! and percentile are worked out once, when it closes, which the server's background task
//! usually does within a second of its end: a decision made in that second is given to the
//! period that just closed.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use crate::limits::address::Address;
use crate::limits::counts::{DecisionCounts, Recent};
use crate::limits::flood::Clock;

/// Periods kept, the current one included.
pub const PERIODS: usize = crate::limits::counts::RECENT_PERIODS;
/// Callers told apart in one period; further callers' requests are still counted, as callers
/// of one request each (what a flood of fresh links is), and the period is marked approximate.
pub const MAX_CALLERS: usize = 10_000;
/// Hex characters of a caller's keyed hash kept and shown: enough to tell callers apart.
pub const CALLER_CHARS: usize = 16;

/// One period as the chart and its table show it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Figures {
    /// When the period began, in ms since the epoch.
    pub start_ms: i64,
    /// Requests counted: answered and refused.
    pub requests: u64,
    /// The caller that was answered most, and how often.
    pub busiest: Option<Busiest>,
    /// The 99th percentile (nearest rank) of per-caller counts.
    pub p99: u64,
    /// Requests refused while enforcing.
    pub refused: u64,
    /// Requests report-only mode would have refused (and answered).
    pub would_refuse: u64,
    /// The same, per tier (the per-caller tier first).
    pub would_refuse_tiers: [u64; 2],
    /// Callers seen, counting the ones past [`MAX_CALLERS`] as one request each.
    pub callers: u64,
    /// More callers came than are told apart: busiest and percentile are estimates.
    pub approximate: bool,
    /// The period still running: its figures are so far.
    pub current: bool,
}

impl Figures {
    /// Refusals, real or would-be: what a limit did or would have done.
    pub fn refusals(&self) -> u64 {
        self.refused + self.would_refuse
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Busiest {
    /// The first [`CALLER_CHARS`] hex characters of the caller's keyed hash.
    pub caller: String,
    pub count: u64,
}

/// The history for one period length, oldest period first, the current one last.
#[derive(Clone, Debug, Default)]
pub struct History {
    pub period: Duration,
    pub periods: Vec<Figures>,
}

impl History {
    /// Nothing was counted in any period kept.
    pub fn is_empty(&self) -> bool {
        self.periods.iter().all(|p| p.requests == 0)
    }

    /// What report-only mode would have refused, per tier: in the current period, and in all
    /// the periods kept.
    pub fn would_refuse(&self) -> Recent {
        let mut seen = Recent::default();
        for p in &self.periods {
            for tier in 0..2 {
                seen.recent[tier] += p.would_refuse_tiers[tier];
                if p.current {
                    seen.current[tier] += p.would_refuse_tiers[tier];
                }
            }
        }
        seen
    }
}

type CallerKey = [u8; CALLER_CHARS];

/// The period being counted.
#[derive(Default)]
struct Live {
    number: i64,
    callers: HashMap<CallerKey, u32>,
    /// Answered requests of callers past `MAX_CALLERS`.
    untracked: u64,
    /// The decisions given to this period so far.
    counts: DecisionCounts,
}

impl Live {
    fn new(number: i64) -> Self {
        Self {
            number,
            ..Self::default()
        }
    }

    /// Works out the period's figures: one pass over at most `MAX_CALLERS` counts.
    fn figures(&self, period_ms: i64, current: bool) -> Figures {
        let busiest = self
            .callers
            .iter()
            // Ties go to the smaller hash, so the same counts always name the same caller.
            .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
            .map(|(key, &count)| Busiest {
                caller: String::from_utf8_lossy(key).into_owned(),
                count: u64::from(count),
            });
        let callers = self.callers.len() as u64 + self.untracked;
        let counts = &self.counts;
        Figures {
            start_ms: self.number * period_ms,
            requests: counts.decided(),
            busiest,
            p99: self.p99(callers),
            refused: counts.refused.iter().sum(),
            would_refuse: counts.would_refuse.iter().sum(),
            would_refuse_tiers: counts.would_refuse,
            callers,
            approximate: self.untracked > 0,
            current,
        }
    }

    /// Nearest rank: the smallest count that at least 99 % of callers stay at or under.
    fn p99(&self, callers: u64) -> u64 {
        if callers == 0 {
            return 0;
        }
        let rank = (callers * 99).div_ceil(100);
        // Untracked callers count one request each: they rank lowest.
        if rank <= self.untracked {
            return 1;
        }
        let mut counts: Vec<u32> = self.callers.values().copied().collect();
        let index = (rank - self.untracked - 1) as usize;
        let (_, nth, _) = counts.select_nth_unstable(index);
        u64::from(*nth)
    }
}

struct Inner {
    /// The period length the history is kept for; 0 until the first request.
    period_ms: i64,
    live: Live,
    /// Closed periods, oldest first.
    closed: VecDeque<Figures>,
    /// The decision counters as last given to a period.
    seen: DecisionCounts,
}

/// One address's sizing history, per process.
pub struct Sizing {
    clock: Clock,
    inner: Mutex<Inner>,
}

fn period_ms(period: Duration) -> i64 {
    (period.as_millis() as i64).max(1)
}

impl Sizing {
    pub fn new(clock: Clock) -> Self {
        Self {
            clock,
            inner: Mutex::new(Inner {
                period_ms: 0,
                live: Live::default(),
                closed: VecDeque::new(),
                seen: DecisionCounts::default(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Figures for a report: a panic elsewhere leaves them usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One answered request of `caller` (its keyed hash, in hex) while the address counts over
    /// periods of `period`, before the guard counts its outcome. `counts` reads the address's
    /// decision counters (as for [`Sizing::tick`]); it is called only when this request closes
    /// a period, so the answered path reads no counters otherwise.
    pub fn answered(
        &self,
        caller: &str,
        period: Duration,
        counts: impl FnOnce() -> DecisionCounts,
    ) {
        let ms = period_ms(period);
        let number = self.clock.now_ms().div_euclid(ms);
        let mut key = [b'0'; CALLER_CHARS];
        for (k, b) in key.iter_mut().zip(caller.bytes()) {
            *k = b;
        }
        let mut inner = self.lock();
        if inner.period_ms != ms {
            // A new period length: the old figures are not comparable, start again. Decisions
            // before the very first answer are this period's (counts a restart kept refuse
            // from the first request); those under an old length are not.
            if inner.period_ms != 0 {
                inner.seen = counts();
            }
            inner.period_ms = ms;
            inner.live = Live::new(number);
            inner.closed.clear();
        } else if number > inner.live.number {
            advance(&mut inner, number, counts());
        }
        let live = &mut inner.live;
        let full = live.callers.len() >= MAX_CALLERS;
        match live.callers.get_mut(&key) {
            Some(count) => *count = count.saturating_add(1),
            None if !full => {
                live.callers.insert(key, 1);
            }
            None => live.untracked += 1,
        }
    }

    /// Closes the periods that ended (working out their figures) and gives the decisions counted
    /// since to the period they fell in: `counts` is the address's decision counters since the
    /// process started (`guard::Decisions`). The server's background task calls it at every
    /// sync, so a period is closed, and its decisions placed, within about a second of its end.
    pub fn tick(&self, counts: DecisionCounts) {
        self.tick_in(&mut self.lock(), counts);
    }

    fn tick_in(&self, inner: &mut Inner, counts: DecisionCounts) {
        if inner.period_ms == 0 {
            // Nothing answered yet: decisions wait for the history to start (`history`).
            return;
        }
        let number = self.clock.now_ms().div_euclid(inner.period_ms);
        advance(inner, number, counts);
        take(inner, counts);
    }

    /// The history kept for periods of `period`, the current one last; empty when the
    /// address counted over another period length, or has not counted yet. `counts` as for
    /// [`Sizing::tick`].
    pub fn history(&self, period: Duration, counts: DecisionCounts) -> History {
        let ms = period_ms(period);
        let mut inner = self.lock();
        if inner.period_ms == 0 && counts.decided() > inner.seen.decided() {
            // Decided before any was answered (refusals of counts a restart kept): they start it.
            inner.period_ms = ms;
            inner.live = Live::new(self.clock.now_ms().div_euclid(ms));
        }
        self.tick_in(&mut inner, counts);
        if inner.period_ms != ms {
            return History {
                period,
                periods: Vec::new(),
            };
        }
        let mut periods: Vec<Figures> = inner.closed.iter().cloned().collect();
        periods.push(inner.live.figures(ms, true));
        History { period, periods }
    }
}

/// Gives the live period what was decided since the last reading.
fn take(inner: &mut Inner, counts: DecisionCounts) {
    let since = counts.since(&inner.seen);
    inner.live.counts.add(&since);
    inner.seen = counts;
}

/// Moves the history on to period `number`, closing the live one and any gap between.
fn advance(inner: &mut Inner, number: i64, counts: DecisionCounts) {
    if number <= inner.live.number {
        return;
    }
    take(inner, counts);
    let ms = inner.period_ms;
    let closed = inner.live.figures(ms, false);
    push(&mut inner.closed, closed);
    // Periods without a request are drawn as such, up to the number kept.
    let gap = (number - inner.live.number - 1).min(PERIODS as i64);
    for n in (number - gap)..number {
        push(
            &mut inner.closed,
            Figures {
                start_ms: n * ms,
                ..Figures::default()
            },
        );
    }
    inner.live = Live::new(number);
}

/// The sizing histories of the guarded addresses, one each, indexed by [`Address::index`].
pub struct Sizings {
    addresses: [Sizing; Address::COUNT],
}

impl Sizings {
    pub fn new(clock: Clock) -> Self {
        Self {
            addresses: std::array::from_fn(|_| Sizing::new(clock.clone())),
        }
    }

    /// `address`'s history.
    pub fn of(&self, address: Address) -> &Sizing {
        &self.addresses[address.index()]
    }
}

fn push(closed: &mut VecDeque<Figures>, figures: Figures) {
    // The live period takes the last of the `PERIODS` places.
    while closed.len() >= PERIODS - 1 {
        closed.pop_front();
    }
    closed.push_back(figures);
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: Duration = Duration::from_secs(3600);

    fn caller(n: u32) -> String {
        format!("{n:016x}{}", "f".repeat(48))
    }

    /// One answered request, as the guard makes it: the history first, then the counters.
    fn answer(sizing: &Sizing, counts: &mut DecisionCounts, caller: &str, would_refuse: bool) {
        let seen = *counts;
        sizing.answered(caller, HOUR, || seen);
        if would_refuse {
            counts.would_refuse[0] += 1;
        } else {
            counts.allowed += 1;
        }
    }

    #[test]
    fn a_period_s_figures_are_its_requests_busiest_percentile_and_refusals() {
        let clock = Clock::manual(3_600_000 * 1000);
        let sizing = Sizing::new(clock.clone());
        let mut counts = DecisionCounts::default();
        for _ in 0..7 {
            answer(&sizing, &mut counts, &caller(1), false);
        }
        for i in 0..3 {
            answer(&sizing, &mut counts, &caller(2), i == 2);
        }
        for n in 0..148 {
            answer(&sizing, &mut counts, &caller(100 + n), false);
        }
        counts.refused[0] += 2;
        let history = sizing.history(HOUR, counts);
        assert_eq!(history.periods.len(), 1);
        let now = &history.periods[0];
        assert_eq!(now.requests, 160);
        assert_eq!(
            now.busiest,
            Some(Busiest {
                caller: "0000000000000001".into(),
                count: 7
            })
        );
        // 150 callers: the 149th smallest count.
        assert_eq!(now.p99, 3);
        assert_eq!((now.refused, now.would_refuse, now.refusals()), (2, 1, 3));
        assert!(now.current && !now.approximate);

        // A refusal late in the period, placed when the next answer closes it.
        counts.refused[1] += 1;
        clock.advance(HOUR * 3);
        answer(&sizing, &mut counts, &caller(1), false);
        let history = sizing.history(HOUR, counts);
        let requests: Vec<u64> = history.periods.iter().map(|p| p.requests).collect();
        assert_eq!(
            requests,
            [161, 0, 0, 1],
            "closed (with its late refusal), two empty, current"
        );
        assert!(!history.periods[0].current && history.periods[3].current);
        assert_eq!(
            history.periods[0].refused, 3,
            "refusals stay in their period"
        );
        assert_eq!(history.periods[3].refused, 0);
        assert!(
            sizing
                .history(Duration::from_secs(60), counts)
                .periods
                .is_empty()
        );
    }

    #[test]
    fn the_history_is_bounded_in_periods_and_callers() {
        let clock = Clock::manual(0);
        let sizing = Sizing::new(clock.clone());
        let mut counts = DecisionCounts::default();
        for _ in 0..(PERIODS * 3) {
            answer(&sizing, &mut counts, &caller(1), false);
            clock.advance(HOUR);
        }
        assert_eq!(sizing.history(HOUR, counts).periods.len(), PERIODS);
        let before = counts;
        for n in 0..(MAX_CALLERS as u32 + 500) {
            answer(&sizing, &mut counts, &caller(n), false);
        }
        answer(&sizing, &mut counts, &caller(7), false);
        let history = sizing.history(HOUR, counts);
        assert_eq!(counts.since(&before).allowed, MAX_CALLERS as u64 + 501);
        let now = history.periods.last().unwrap();
        assert_eq!(sizing.lock().live.callers.len(), MAX_CALLERS);
        assert_eq!(now.callers, MAX_CALLERS as u64 + 500);
        assert_eq!(now.requests, MAX_CALLERS as u64 + 501);
        assert_eq!(now.busiest.as_ref().map(|b| b.count), Some(2));
        assert_eq!(now.p99, 1);
        assert!(now.approximate);
    }

    #[test]
    fn refusals_before_any_answer_start_the_history() {
        let clock = Clock::manual(0);
        let sizing = Sizing::new(clock);
        assert!(
            sizing
                .history(HOUR, DecisionCounts::default())
                .periods
                .is_empty()
        );
        let refused = DecisionCounts {
            refused: [5, 0],
            ..DecisionCounts::default()
        };
        let history = sizing.history(HOUR, refused);
        assert_eq!(history.periods.len(), 1);
        assert_eq!(
            (history.periods[0].requests, history.periods[0].refused),
            (5, 5)
        );
    }

    #[test]
    fn would_be_refusals_are_kept_per_tier_for_the_recent_periods_and_then_forgotten() {
        let clock = Clock::manual(1_000_000);
        let sizing = Sizing::new(clock.clone());
        let mut counts = DecisionCounts::default();
        answer(&sizing, &mut counts, &caller(1), false);
        counts.would_refuse = [1, 1];
        let seen = sizing.history(HOUR, counts).would_refuse();
        assert_eq!(
            seen,
            Recent {
                current: [1, 1],
                recent: [1, 1]
            }
        );
        clock.advance(HOUR);
        answer(&sizing, &mut counts, &caller(1), true);
        assert_eq!(
            sizing.history(HOUR, counts).would_refuse(),
            Recent {
                current: [1, 0],
                recent: [2, 1]
            }
        );
        clock.advance(HOUR * PERIODS as u32);
        assert_eq!(
            sizing.history(HOUR, counts).would_refuse(),
            Recent::default()
        );
        counts.would_refuse[1] += 1;
        assert_eq!(sizing.history(HOUR, counts).would_refuse().recent, [0, 1]);
    }
}
