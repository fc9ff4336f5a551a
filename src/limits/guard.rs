//! The two-tier request guard: per caller and in total, over one rolling period.
//!
//! It holds no limits of its own. Whoever calls it passes the [`Address`], the caller's
//! identifier (a keyed hash, never the secret itself) and the limits read from the address's
//! settings (`Settings::limits_of`). Per address it keeps one set of decision counters
//! ([`Decisions`]): the metrics, the sizing chart, report-only's tally and the status report
//! all read them, so an outcome is counted once.
//!
//! Rules, each with a test that fails without it (tests/guard.rs):
//! - every request is counted, answered or not, before any expensive work; a limit on
//!   failures ([`FloodGuard::allows_as`]) is decided before the work too, and counts only the
//!   failures the work found ([`FloodGuard::failed`]), so a success costs nothing;
//! - a request the per-caller tier refuses is charged to neither tier, so one hammered link
//!   cannot spend the number every other visitor shares;
//! - a limit of 0 turns its tier off; when nothing counts, the flood store is never touched;
//! - in report-only mode ([`Mode::ReportOnly`]) a request counts exactly as it would when
//!   enforcing, and what would have been refused is answered and tallied
//!   ([`FloodGuard::would_refuse`]);
//! - while the flood store fails to sync, the operator's [`OnFault`] decides: count in the
//!   process (as always), let everything through, or refuse everything ([`StoreHealth`]);
//! - what each event answered and refused per period is kept for its sizing chart
//!   ([`FloodGuard::sizing`]), on the answered path only;
//! - the first refusal of each caller in a period is the one logged, by the guard's own bounded
//!   record ([`FirstRefusals`], [`LOGGED_CALLERS`]), never by a count in the flood store.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

pub use crate::limits::address::Address;
pub use crate::limits::counts::{DecisionCounts, RECENT_PERIODS, Recent};
use crate::limits::flood::{Clock, FloodStore, Tier};
pub use crate::limits::refused::{FirstRefusals, LOGGED_CALLERS};
use crate::limits::sizing::{History, Sizings};

/// The limits a caller of the guard read from its settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The site-wide switch.
    pub enabled: bool,
    /// Requests one caller may make in a period; 0 turns the tier off.
    pub per_caller: u64,
    /// Requests all callers together may make in a period; 0 turns the tier off.
    pub total: u64,
    pub period: Duration,
}

/// What a configuration does, with its true reason: the settings page and the status report
/// both name a state from this, so neither can give a reason the guard does not act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitsState {
    /// The site-wide switch is off: nothing counts, whatever the limits say.
    SwitchOff,
    /// The switch is on but the period is 0.
    PeriodZero,
    /// The switch is on and both limits are 0.
    BothZero,
    /// Only the per-caller tier counts: a flood of fresh callers is not capped.
    PerCallerOnly,
    /// Only the total counts: one caller can spend it all.
    TotalOnly,
    /// Both tiers count.
    Both,
}

impl LimitsState {
    pub fn of(limits: &Limits) -> Self {
        if !limits.enabled {
            Self::SwitchOff
        } else if limits.period.is_zero() {
            Self::PeriodZero
        } else {
            match (limits.per_caller > 0, limits.total > 0) {
                (false, false) => Self::BothZero,
                (true, false) => Self::PerCallerOnly,
                (false, true) => Self::TotalOnly,
                (true, true) => Self::Both,
            }
        }
    }

    pub fn is_counting(self) -> bool {
        matches!(self, Self::PerCallerOnly | Self::TotalOnly | Self::Both)
    }

    /// The doorway's message for this state, as the settings page shows it.
    pub fn message_id(self) -> &'static str {
        match self {
            Self::SwitchOff => "limits-state-switch-off",
            Self::PeriodZero => "limits-state-period-zero",
            Self::BothZero => "limits-state-not-counting",
            Self::PerCallerOnly => "limits-state-per-link-only",
            Self::TotalOnly => "limits-state-total-only",
            Self::Both => "limits-state-counting",
        }
    }

    /// `ok`, `note` or `warning`: the class the page styles it with.
    pub fn class(self) -> &'static str {
        match self {
            Self::Both => "ok",
            Self::PerCallerOnly | Self::TotalOnly => "note",
            Self::SwitchOff | Self::PeriodZero | Self::BothZero => "warning",
        }
    }
}

/// Which tier refused a request. Never shown to the caller; logged once per period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    PerCaller,
    Total,
}

impl Refusal {
    /// The tier's place in the decision counters and in `Address::tiers`: the per-caller tier
    /// first.
    pub fn index(self) -> usize {
        match self {
            Refusal::PerCaller => 0,
            Refusal::Total => 1,
        }
    }
}

/// Whether a guarded address refuses what its limits catch, or only reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    #[default]
    Enforce,
    /// Counts exactly as enforcing, answers everyone, and tallies what it would have refused:
    /// how an operator sizes the limits on real traffic before turning them on.
    ReportOnly,
}

/// What the guard does while its flood store is failing (`orchestra.request_limits.on_store_fault`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnFault {
    /// Count in this process until the store is back, then write the journal: what a
    /// per-process backend does anyway.
    #[default]
    Count,
    /// Answer everyone while the store fails.
    Allow,
    /// Refuse every counted request while the store fails.
    Refuse,
}

impl OnFault {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "count" => Some(Self::Count),
            "allow" => Some(Self::Allow),
            "refuse" => Some(Self::Refuse),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Count => "count",
            Self::Allow => "allow",
            Self::Refuse => "refuse",
        }
    }

    /// What the guard does while the store fails, as the log line of a failed sync says it.
    pub fn meanwhile(self) -> &'static str {
        match self {
            Self::Count => "counting in this process until it works (on_store_fault = count)",
            Self::Allow => {
                "letting every counted request through until it works (on_store_fault = allow)"
            }
            Self::Refuse => {
                "refusing every counted request until it works (on_store_fault = refuse)"
            }
        }
    }
}

/// How one address applies its limits: its mode, and the site's choice for store faults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    pub mode: Mode,
    pub on_fault: OnFault,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Allowed,
    Refused {
        tier: Refusal,
        /// Whether this is the first refusal of its kind in the period, the one worth a log
        /// line ([`FirstRefusals`]).
        first_in_period: bool,
    },
    /// Report-only mode: enforcing would have refused this request; it is answered.
    WouldRefuse {
        tier: Refusal,
        first_in_period: bool,
    },
}

impl Decision {
    /// Says a refusal in the log, once per kind and period (`first_in_period`), enforced or
    /// report-only alike: the caller by its keyed hash (`caller`, never the credential itself)
    /// and the tier as `address` names it. Every guarded caller logs through here, so the lines
    /// read the same wherever the guard refused; the decision is handed back to act on.
    pub fn logged(self, address: Address, caller: &str) -> Self {
        self.logged_as(address, caller, address.refused_what())
    }

    /// `logged`, saying `what` was refused in place of the address's own words: callers of one
    /// address counted apart (forged provider notices) are told apart in the log too.
    pub fn logged_as(self, address: Address, caller: &str, what: &str) -> Self {
        match self {
            Decision::Refused {
                tier,
                first_in_period: true,
            } => tracing::warn!(
                caller = %caller,
                tier = address.tiers()[tier.index()],
                "{what} refused; further refusals like it are not logged this period"
            ),
            Decision::WouldRefuse {
                tier,
                first_in_period: true,
            } => tracing::warn!(
                caller = %caller,
                tier = address.tiers()[tier.index()],
                "{what} would have been refused (report only); further ones like it are not logged this period"
            ),
            _ => {}
        }
        self
    }
}

/// The identifier the total tier is counted under.
pub const TOTAL: &str = "total";

pub struct FloodGuard {
    flood: Arc<dyn FloodStore>,
    health: StoreHealth,
    sizing: Sizings,
    decisions: Decisions,
    first_refusals: FirstRefusals,
    /// Whether the flood store read back its stored counts (`warm_up`): once per process.
    warmed: AtomicBool,
    /// Set by a counted decision, cleared by `upkeep`: what was counted since then may still
    /// be in the store's journal, to be written even once nothing counts any more.
    counted: AtomicBool,
}

impl FloodGuard {
    pub fn new(flood: Arc<dyn FloodStore>) -> Self {
        Self::with_clock(flood, Clock::system())
    }

    /// A guard whose tally of would-be refusals reads `clock` (the flood store's own).
    pub fn with_clock(flood: Arc<dyn FloodStore>, clock: Clock) -> Self {
        Self {
            flood,
            sizing: Sizings::new(clock.clone()),
            first_refusals: FirstRefusals::new(clock.clone()),
            health: StoreHealth::new(clock),
            decisions: Decisions::default(),
            warmed: AtomicBool::new(false),
            counted: AtomicBool::new(false),
        }
    }

    /// Reads what the flood store holds for the current periods, so a restart keeps the
    /// counts: at start when something counts, else when something starts counting
    /// (`upkeep`). Once per process: a later read would count this process's own writes twice.
    /// A read that fails is tried again at the next `upkeep` that counts.
    pub async fn warm_up(&self) {
        if self.warmed.load(Ordering::Acquire) {
            return;
        }
        match self.flood.warm_up().await {
            Ok(keys) => {
                self.warmed.store(true, Ordering::Release);
                tracing::debug!(keys, "flood store read back the current periods' counts");
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not read the stored counts; counting from zero")
            }
        }
    }

    /// The flood store's upkeep, at every sync interval and once at the stop, given whether
    /// anything counts now (`Settings::anything_counts`). While something counts: the warm-up
    /// if it has not happened, then a sync (which pings the store when it has nothing to
    /// write, so a fault is seen while the site only refuses). Once nothing counts: one more
    /// sync if anything was counted since the last one (until it works), then nothing at all,
    /// not even a ping. `None` when it did nothing.
    pub async fn upkeep(
        &self,
        counting: bool,
    ) -> Option<Result<(), crate::limits::flood::FloodError>> {
        if counting {
            self.warm_up().await;
        }
        let counted = self.counted.swap(false, Ordering::AcqRel);
        if !counting && !counted {
            return None;
        }
        let result = self.sync().await;
        if result.is_err() {
            // The journal keeps what it could not write: try again at the next upkeep.
            self.counted.store(true, Ordering::Release);
        }
        Some(result)
    }

    /// Notes that something was counted. A read, and a write only the first time after each
    /// `upkeep`: the refusal path shares the line, it does not fight over it.
    fn note_counted(&self) {
        if !self.counted.load(Ordering::Relaxed) {
            self.counted.store(true, Ordering::Relaxed);
        }
    }

    /// What the guard decided per address since the process started: the one count of each
    /// outcome, which the metrics endpoint, the sizing chart and the tally read.
    pub fn decisions(&self) -> &Decisions {
        &self.decisions
    }

    /// Whether the flood store is failing, since when, and what was decided meanwhile.
    pub fn health(&self) -> &StoreHealth {
        &self.health
    }

    /// Syncs the flood store and records whether it worked: the one place a store fault
    /// starts and ends.
    pub async fn sync(&self) -> Result<(), crate::limits::flood::FloodError> {
        let result = self.flood.sync().await;
        self.health.record(result.is_ok());
        result
    }

    /// What `address` would have refused in report-only mode, per tier, in the current period
    /// of `period` and the recent ones: its sizing history's figures.
    pub fn would_refuse(&self, address: Address, period: Duration) -> Recent {
        self.sizing(address, period).would_refuse()
    }

    /// `address`'s per-period figures for the sizing chart (`crate::limits::sizing`), for
    /// periods of `period`: its decision counters as they stood at each period's end, and the
    /// callers `check_as` saw answered.
    pub fn sizing(&self, address: Address, period: Duration) -> History {
        self.sizing
            .of(address)
            .history(period, self.decisions.read(address))
    }

    /// Closes the periods that ended, off the request path (the server's background task, at
    /// every sync): the sizing charts', and the log's (the summary line of callers refused
    /// past [`LOGGED_CALLERS`], [`FirstRefusals::summarize`]).
    pub fn tick(&self) {
        for address in Address::ALL {
            self.sizing.of(address).tick(self.decisions.read(address));
        }
        self.first_refusals.summarize(false);
    }

    /// At the stop: the log's summary line for the current periods too, which will not end in
    /// this process.
    pub fn close(&self) {
        self.first_refusals.summarize(true);
    }

    /// Removes the flood store's expired counts (cron's chore): the one thing besides counting
    /// anyone asks of the store, and it goes through the guard like the counting does.
    pub async fn collect_garbage(&self) -> Result<u64, crate::limits::flood::FloodError> {
        self.flood.collect_garbage().await
    }

    /// How many events `identifier` has under `address` in the rolling `window`: a read, which
    /// counts nothing (the administrators' list asks whether an account is held).
    pub fn count_of(&self, address: Address, identifier: &str, window: Duration) -> u64 {
        self.flood.count(address.event(), identifier, window)
    }

    /// The store itself, for the unit tests that read what the guard counted.
    #[cfg(test)]
    pub(crate) fn flood(&self) -> &Arc<dyn FloodStore> {
        &self.flood
    }

    /// Whether a configuration counts anything at all. The doorway, the status report and the
    /// settings pages all ask this, so they cannot disagree.
    pub fn is_counting(limits: &Limits) -> bool {
        LimitsState::of(limits).is_counting()
    }

    /// Whether a configuration refuses what it counts: the second question beside
    /// `is_counting`, asked by the same pages, so report-only cannot be mistaken for a cap.
    pub fn is_refusing(limits: &Limits, mode: Mode) -> bool {
        Self::is_counting(limits) && mode == Mode::Enforce
    }

    /// `check` under a mode. Enforcing, it is `check` itself; in report-only mode a refusal
    /// becomes [`Decision::WouldRefuse`], counted as such under `address`. Either way the
    /// counts are the same, so switching from report-only to enforcing keeps them.
    ///
    /// While the store fails (one atomic read to know), `policy.on_fault` decides; each
    /// counted request then is a decision made without the store, and is tallied as such.
    pub fn check_as(
        &self,
        address: Address,
        caller: &str,
        limits: &Limits,
        policy: Policy,
    ) -> Decision {
        self.check_as_within(address, caller, TOTAL, limits, policy)
    }

    /// `check_as` with the total tier counted under `total` instead of [`TOTAL`]: for callers of
    /// one address that must not spend each other's total (the notices: signed ones under
    /// [`TOTAL`], forged ones under a total of their own). `total` is a constant, never a
    /// caller's identifier.
    pub fn check_as_within(
        &self,
        address: Address,
        caller: &str,
        total: &str,
        limits: &Limits,
        policy: Policy,
    ) -> Decision {
        self.decide_as(address, caller, limits, policy, || {
            self.check_within(address, caller, total, limits)
        })
    }

    /// `check_as` for a limit on failures rather than on requests (the sign-in's per account):
    /// whether `caller` is under the per-caller limit and `total`, the identifier its total
    /// tier is counted under (the account across all its addresses), under the total, counting
    /// nothing; [`FloodGuard::failed`] counts a failure once the work found one. So a success
    /// costs nothing and needs no `clear`. Modes, store faults, metrics and the sizing chart are
    /// `check_as`'s. Not one step: attempts in flight at once may each pass the last place, so
    /// a caller can reach its limit plus what runs concurrently (the password pool bounds that).
    pub fn allows_as(
        &self,
        address: Address,
        caller: &str,
        total: &str,
        limits: &Limits,
        policy: Policy,
    ) -> Decision {
        self.decide_as(address, caller, limits, policy, || {
            self.allows(address, caller, total, limits)
        })
    }

    /// One failure of `caller`, and of `total`, at `address` (see [`FloodGuard::allows_as`]).
    pub fn failed(&self, address: Address, caller: &str, total: &str, limits: &Limits) {
        if !Self::is_counting(limits) {
            return;
        }
        self.note_counted();
        for (identifier, limit) in [(caller, limits.per_caller), (total, limits.total)] {
            if limit > 0 {
                self.flood
                    .register(address.event(), identifier, limits.period);
            }
        }
    }

    fn allows(&self, address: Address, caller: &str, total: &str, limits: &Limits) -> Decision {
        for (tier, identifier, limit) in [
            (Refusal::PerCaller, caller, limits.per_caller),
            (Refusal::Total, total, limits.total),
        ] {
            if limit > 0 && self.flood.count(address.event(), identifier, limits.period) >= limit {
                return Decision::Refused {
                    tier,
                    first_in_period: self
                        .first_refusals
                        .first(address, identifier, limits.period),
                };
            }
        }
        Decision::Allowed
    }

    /// What `check_as` and `allows_as` share around their decision (`decide`).
    fn decide_as(
        &self,
        address: Address,
        caller: &str,
        limits: &Limits,
        policy: Policy,
        decide: impl Fn() -> Decision,
    ) -> Decision {
        if !Self::is_counting(limits) {
            return Decision::Allowed;
        }
        self.note_counted();
        // One relaxed increment per counted decision, and, with the metrics endpoint on, the
        // time of one decision in DECISION_SAMPLE (`Decisions`).
        let slot = self.decisions.slot(address);
        let started = slot.start();
        let decision = if self.health.failing() {
            self.health.without_store.fetch_add(1, Ordering::Relaxed);
            match policy.on_fault {
                OnFault::Count => decide(),
                OnFault::Allow => Decision::Allowed,
                OnFault::Refuse => Decision::Refused {
                    tier: Refusal::Total,
                    first_in_period: false,
                },
            }
        } else {
            decide()
        };
        let decision = match (decision, policy.mode) {
            (
                Decision::Refused {
                    tier,
                    first_in_period,
                },
                Mode::ReportOnly,
            ) => Decision::WouldRefuse {
                tier,
                first_in_period,
            },
            (decision, _) => decision,
        };
        // Who was answered, for the sizing chart, on the answered path only (which renders a
        // page, checks a password or a notice anyway); before the outcome is counted, so a
        // period this request closes is closed without it.
        if !matches!(decision, Decision::Refused { .. }) {
            self.sizing
                .of(address)
                .answered(caller, limits.period, || self.decisions.read(address));
        }
        slot.record(decision, started);
        decision
    }

    /// Counts one request of `caller` to `event` and decides whether it may be answered.
    ///
    /// A refusal is logged once per period ([`FirstRefusals`]): per caller for the per-caller
    /// tier (a caller must have been answered `per_caller` times to get there, so these lines
    /// are bounded by the total), and once for the whole event for the total tier, so no flood
    /// of fresh identifiers can turn the log into a second flood.
    pub fn check(&self, address: Address, caller: &str, limits: &Limits) -> Decision {
        self.check_within(address, caller, TOTAL, limits)
    }

    /// `check` with the total tier counted under `total` ([`FloodGuard::check_as_within`]).
    fn check_within(
        &self,
        address: Address,
        caller: &str,
        total: &str,
        limits: &Limits,
    ) -> Decision {
        if !Self::is_counting(limits) {
            return Decision::Allowed;
        }
        let mut tiers = [
            Tier {
                identifier: caller,
                limit: limits.per_caller,
            },
            Tier {
                identifier: total,
                limit: limits.total,
            },
        ];
        let (tiers, kinds): (&[Tier<'_>], &[Refusal]) =
            match (limits.per_caller > 0, limits.total > 0) {
                (true, true) => (&tiers[..], &[Refusal::PerCaller, Refusal::Total]),
                (true, false) => (&tiers[..1], &[Refusal::PerCaller]),
                (false, _) => {
                    tiers.swap(0, 1);
                    (&tiers[..1], &[Refusal::Total])
                }
            };
        match self
            .flood
            .try_register(address.event(), tiers, limits.period)
        {
            Ok(()) => Decision::Allowed,
            Err(index) => {
                // Per caller for the per-caller tier, per event (`TOTAL`) for the total.
                let tier = kinds[index];
                Decision::Refused {
                    tier,
                    first_in_period: self.first_refusals.first(
                        address,
                        tiers[index].identifier,
                        limits.period,
                    ),
                }
            }
        }
    }
}

/// Whether the flood store's last sync failed, since when, and how many counted requests were
/// decided without it since. Atomics: the refusal path reads one of them.
pub struct StoreHealth {
    clock: Clock,
    /// When the current fault began, in ms; 0 while the store works.
    failing_since: AtomicI64,
    /// Counted requests decided while the store failed, since the process started.
    without_store: AtomicU64,
    /// Faults seen since the process started.
    faults: AtomicU64,
    /// Syncs that worked, and syncs that failed, since the process started.
    syncs: [AtomicU64; 2],
}

impl StoreHealth {
    fn new(clock: Clock) -> Self {
        Self {
            clock,
            failing_since: AtomicI64::new(0),
            without_store: AtomicU64::new(0),
            faults: AtomicU64::new(0),
            syncs: Default::default(),
        }
    }

    pub fn failing(&self) -> bool {
        self.failing_since.load(Ordering::Relaxed) != 0
    }

    /// How long the current fault has lasted, if there is one.
    pub fn failing_for(&self) -> Option<Duration> {
        match self.failing_since.load(Ordering::Relaxed) {
            0 => None,
            since => Some(Duration::from_millis(
                (self.clock.now_ms() - since).max(0) as u64
            )),
        }
    }

    pub fn decisions_without_store(&self) -> u64 {
        self.without_store.load(Ordering::Relaxed)
    }

    pub fn faults(&self) -> u64 {
        self.faults.load(Ordering::Relaxed)
    }

    /// Syncs through [`FloodGuard::sync`] since the process started: `(worked, failed)`.
    pub fn syncs(&self) -> (u64, u64) {
        (
            self.syncs[0].load(Ordering::Relaxed),
            self.syncs[1].load(Ordering::Relaxed),
        )
    }

    fn record(&self, worked: bool) {
        self.syncs[usize::from(!worked)].fetch_add(1, Ordering::Relaxed);
        if worked {
            if self.failing_since.swap(0, Ordering::AcqRel) != 0 {
                tracing::info!("flood store is back; counting through it again");
            }
        } else {
            let now = self.clock.now_ms().max(1);
            if self
                .failing_since
                .compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                self.faults.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// Counters the refusal path spreads over, one per thread modulo this, each on its own line.
pub(crate) const SHARDS: usize = 16;

thread_local! {
    static SHARD: Cell<usize> = const { Cell::new(usize::MAX) };
}
static NEXT_SHARD: AtomicUsize = AtomicUsize::new(0);

/// This thread's shard: counters written on the refusal path are split in [`SHARDS`] cache
/// lines, one per thread (more threads share), so no core writes a word another core writes.
pub(crate) fn shard_index() -> usize {
    SHARD.with(|s| {
        let mut i = s.get();
        if i == usize::MAX {
            i = NEXT_SHARD.fetch_add(1, Ordering::Relaxed) % SHARDS;
            s.set(i);
        }
        i
    })
}

/// One decision in this many is timed, per thread, once a timer is set
/// ([`Decisions::time_with`]): two clock reads on every decision would add about a third to
/// the decision itself (docs/operations.md, Metrics).
pub const DECISION_SAMPLE: u32 = 64;

thread_local! {
    /// Decisions this thread made since its last timed one.
    static UNTIMED: Cell<u32> = const { Cell::new(0) };
}

/// Per address, what the guard decided since the process started: fixed memory and atomics, no
/// lock, one relaxed increment per counted decision. The metrics endpoint copies these into
/// its counters when it is scraped (`crate::http::metrics`), so the refusal path never looks a
/// metric up.
#[derive(Default)]
pub struct Decisions {
    slots: [DecisionSlot; Address::COUNT],
}

#[repr(align(128))]
#[derive(Default)]
struct Outcomes([AtomicU64; 5]);

#[derive(Default)]
struct DecisionSlot {
    /// Allowed; refused per caller, in total; would have been refused per caller, in total.
    /// One set per thread's shard ([`shard_index`]): on the refusal path each thread writes
    /// only its own cache line.
    outcomes: [Outcomes; SHARDS],
    /// Requests a caller of the guard counted itself ([`Decisions::count_request`]).
    requests: AtomicU64,
    /// Where a sample of this event's decision times goes, once the metrics endpoint is on.
    timer: OnceLock<::metrics::Histogram>,
}

impl DecisionSlot {
    /// The start of a timed decision: one in [`DECISION_SAMPLE`], and only with a timer.
    fn start(&self) -> Option<Instant> {
        self.timer.get()?;
        UNTIMED.with(|n| {
            let seen = n.get() + 1;
            if seen >= DECISION_SAMPLE {
                n.set(0);
                Some(Instant::now())
            } else {
                n.set(seen);
                None
            }
        })
    }

    fn record(&self, decision: Decision, started: Option<Instant>) {
        let outcome = match decision {
            Decision::Allowed => 0,
            Decision::Refused { tier, .. } => 1 + tier.index(),
            Decision::WouldRefuse { tier, .. } => 3 + tier.index(),
        };
        self.outcomes[shard_index()].0[outcome].fetch_add(1, Ordering::Relaxed);
        if let (Some(started), Some(timer)) = (started, self.timer.get()) {
            timer.record(started.elapsed());
        }
    }
}

impl Decisions {
    fn slot(&self, address: Address) -> &DecisionSlot {
        &self.slots[address.index()]
    }

    /// What the guard decided at `address`.
    pub fn read(&self, address: Address) -> DecisionCounts {
        let slot = self.slot(address);
        let [allowed, r0, r1, w0, w1] = std::array::from_fn(|i| {
            slot.outcomes
                .iter()
                .map(|shard| shard.0[i].load(Ordering::Relaxed))
                .sum::<u64>()
        });
        DecisionCounts {
            allowed,
            refused: [r0, r1],
            would_refuse: [w0, w1],
            requests: slot.requests.load(Ordering::Relaxed),
        }
    }

    /// One more request at `address`, for a caller whose request is made of several decisions
    /// (a sign-in attempt: one per limit, `crate::domain::login`; see
    /// [`Address::counts_requests`]).
    pub fn count_request(&self, address: Address) {
        self.slot(address).requests.fetch_add(1, Ordering::Relaxed);
    }

    /// Times one decision in [`DECISION_SAMPLE`] at `address` into `histogram`, in seconds.
    /// Once per address and guard: a later call is ignored.
    pub fn time_with(&self, address: Address, histogram: ::metrics::Histogram) {
        let _ = self.slot(address).timer.set(histogram);
    }
}
