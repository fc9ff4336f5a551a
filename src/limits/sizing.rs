//! The sizing history: per period, how busy each guarded address (the doorway, provider
//! notices, the sign-in's two limits) was while it counted, so an operator sees where a limit
//! would have bitten before setting it (docs/operations.md, "Sizing chart").
//!
//! Per period: requests in total, the busiest caller (its keyed hash, never a link, an address
//! or a name) and its count, the 99th percentile of per-caller counts, and refusals, real or
//! would-be. Bounded: at most [`MAX_CALLERS`] callers are told apart in a period,
//! [`PERIODS`] periods are kept, and [`Sizings`] keeps as many events as the guard tallies.
//!
//! The refusal path pays nothing here: refusals are the guard's own decision counters
//! (`guard::Decisions`), read when a period is closed. Everything else happens on requests that
//! are answered anyway (which already cost a page, or a password check), or off the request
//! path: a period's busiest caller and percentile are worked out once, when it closes, which
//! the server's background task usually does within a second of its end.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use crate::limits::flood::Clock;

/// Periods kept, the current one included: the guard's tally remembers as many.
pub const PERIODS: usize = crate::limits::slots::RECENT_PERIODS;
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
}

type CallerKey = [u8; CALLER_CHARS];

/// The period being counted.
#[derive(Default)]
struct Live {
    number: i64,
    callers: HashMap<CallerKey, u32>,
    answered: u64,
    would_refuse: u64,
    /// Answered requests of callers past `MAX_CALLERS`.
    untracked: u64,
    refused: u64,
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
        Figures {
            start_ms: self.number * period_ms,
            requests: self.answered + self.refused,
            busiest,
            p99: self.p99(callers),
            refused: self.refused,
            would_refuse: self.would_refuse,
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
    /// How much of the event's refusal count has been given to a period.
    refused_seen: u64,
}

/// One event's sizing history, per process (like the guard's tally).
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
                refused_seen: 0,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Figures for a report: a panic elsewhere leaves them usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One answered request of `caller` (its keyed hash, in hex) while the event counts over
    /// periods of `period`; `would_refuse` when report-only mode would have refused it.
    /// `refused` reads the event's refusals so far (as for [`Sizing::tick`]); it is called only
    /// when this request closes a period, so the answered path reads no counters otherwise.
    pub fn answered(
        &self,
        caller: &str,
        period: Duration,
        would_refuse: bool,
        refused: impl FnOnce() -> u64,
    ) {
        let ms = period_ms(period);
        let number = self.clock.now_ms().div_euclid(ms);
        let mut key = [b'0'; CALLER_CHARS];
        for (k, b) in key.iter_mut().zip(caller.bytes()) {
            *k = b;
        }
        let mut inner = self.lock();
        if inner.period_ms != ms {
            // A new period length: the old figures are not comparable, start again. Refusals
            // before the very first answer are this period's (counts a restart kept refuse
            // from the first request); those under an old length are not.
            if inner.period_ms != 0 {
                inner.refused_seen = refused();
            }
            inner.period_ms = ms;
            inner.live = Live::new(number);
            inner.closed.clear();
        } else if number > inner.live.number {
            advance(&mut inner, number, refused());
        }
        let live = &mut inner.live;
        live.answered += 1;
        live.would_refuse += u64::from(would_refuse);
        let full = live.callers.len() >= MAX_CALLERS;
        match live.callers.get_mut(&key) {
            Some(count) => *count = count.saturating_add(1),
            None if !full => {
                live.callers.insert(key, 1);
            }
            None => live.untracked += 1,
        }
    }

    /// Closes the periods that ended (working out their figures) and gives the refusals counted
    /// since to the period they fell in: `refused` is the event's refusals since the process
    /// started (`guard::Decisions`). The server's background task calls it at every sync, so a
    /// period is closed, and its refusals placed, within about a second of its end.
    pub fn tick(&self, refused: u64) {
        self.tick_in(&mut self.lock(), refused);
    }

    fn tick_in(&self, inner: &mut Inner, refused: u64) {
        if inner.period_ms == 0 {
            // Nothing answered yet: refusals wait for the history to start (`history`).
            return;
        }
        let number = self.clock.now_ms().div_euclid(inner.period_ms);
        advance(inner, number, refused);
        take_refusals(inner, refused);
    }

    /// The history kept for periods of `period`, the current one last; empty when the
    /// event counted over another period length, or has not counted yet. `refused` as for
    /// [`Sizing::tick`].
    pub fn history(&self, period: Duration, refused: u64) -> History {
        let ms = period_ms(period);
        let mut inner = self.lock();
        if inner.period_ms == 0 && refused > inner.refused_seen {
            // Refused before any was answered (counts a restart kept): they start it.
            inner.period_ms = ms;
            inner.live = Live::new(self.clock.now_ms().div_euclid(ms));
        }
        self.tick_in(&mut inner, refused);
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

fn take_refusals(inner: &mut Inner, refused: u64) {
    inner.live.refused += refused.saturating_sub(inner.refused_seen);
    inner.refused_seen = refused;
}

/// Moves the history on to period `number`, closing the live one and any gap between.
fn advance(inner: &mut Inner, number: i64, refused: u64) {
    if number <= inner.live.number {
        return;
    }
    take_refusals(inner, refused);
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

/// The sizing histories of the guard's events, one each: fixed slots claimed by event name
/// (`slots::find_slot`), so a request finds its event's history without a lock or a map.
pub struct Sizings {
    slots: Box<[SizingSlot]>,
}

struct SizingSlot {
    event: OnceLock<&'static str>,
    sizing: Sizing,
}

impl Sizings {
    pub fn new(clock: Clock, events: usize) -> Self {
        Self {
            slots: (0..events)
                .map(|_| SizingSlot {
                    event: OnceLock::new(),
                    sizing: Sizing::new(clock.clone()),
                })
                .collect(),
        }
    }

    /// `event`'s history; claimed when `claim` says so and a slot is free.
    pub fn of(&self, event: &'static str, claim: bool) -> Option<&Sizing> {
        crate::limits::slots::find_slot(&self.slots, event, claim, |s| &s.event).map(|s| &s.sizing)
    }

    /// Every event with a history, and the history.
    pub fn all(&self) -> impl Iterator<Item = (&'static str, &Sizing)> {
        self.slots
            .iter()
            .filter_map(|s| s.event.get().map(|e| (*e, &s.sizing)))
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

    #[test]
    fn a_period_s_figures_are_its_requests_busiest_percentile_and_refusals() {
        let clock = Clock::manual(3_600_000 * 1000);
        let sizing = Sizing::new(clock.clone());
        let mut refused = 0;
        for _ in 0..7 {
            sizing.answered(&caller(1), HOUR, false, || refused);
        }
        for i in 0..3 {
            sizing.answered(&caller(2), HOUR, i == 2, || refused);
        }
        for n in 0..148 {
            sizing.answered(&caller(100 + n), HOUR, false, || refused);
        }
        refused += 2;
        let history = sizing.history(HOUR, refused);
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
        refused += 1;
        clock.advance(HOUR * 3);
        sizing.answered(&caller(1), HOUR, false, || refused);
        let history = sizing.history(HOUR, refused);
        let counts: Vec<u64> = history.periods.iter().map(|p| p.requests).collect();
        assert_eq!(
            counts,
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
                .history(Duration::from_secs(60), refused)
                .periods
                .is_empty()
        );
    }

    #[test]
    fn the_history_is_bounded_in_periods_and_callers() {
        let clock = Clock::manual(0);
        let sizing = Sizing::new(clock.clone());
        for _ in 0..(PERIODS * 3) {
            sizing.answered(&caller(1), HOUR, false, || 0);
            clock.advance(HOUR);
        }
        assert_eq!(sizing.history(HOUR, 0).periods.len(), PERIODS);
        for n in 0..(MAX_CALLERS as u32 + 500) {
            sizing.answered(&caller(n), HOUR, false, || 0);
        }
        sizing.answered(&caller(7), HOUR, false, || 0);
        let history = sizing.history(HOUR, 0);
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
        assert!(sizing.history(HOUR, 0).periods.is_empty());
        let history = sizing.history(HOUR, 5);
        assert_eq!(history.periods.len(), 1);
        assert_eq!(
            (history.periods[0].requests, history.periods[0].refused),
            (5, 5)
        );
    }
}
