//! The two-tier request guard: per caller and in total, over one rolling period.
//!
//! It holds no limits of its own. Whoever calls it passes the event name, the caller's
//! identifier (a keyed hash, never the secret itself) and the limits read from its own
//! settings, so any public address can stand behind one.
//!
//! Rules, each with a test that fails without it (tests/guard.rs):
//! - every request is counted, answered or not, before any expensive work;
//! - a request the per-caller tier refuses is charged to neither tier, so one hammered link
//!   cannot spend the number every other visitor shares;
//! - a limit of 0 turns its tier off; when nothing counts, the flood store is never touched.

use std::sync::Arc;
use std::time::Duration;

use crate::flood::{FloodStore, Tier};

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
    pub fn name(self) -> &'static str {
        match self {
            Refusal::PerCaller => "per_link",
            Refusal::Total => "total",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Allowed,
    Refused {
        tier: Refusal,
        /// Whether this is the first refusal of its kind in the period, the one worth a log
        /// line (see [`FloodGuard::check`]).
        first_in_period: bool,
    },
}

/// The event under which the first refusal of each period is noted, so it is logged once.
pub const REFUSAL_LOGGED: &str = "guard.refusal_logged";

/// The identifier the total tier is counted under.
pub const TOTAL: &str = "total";

pub struct FloodGuard {
    flood: Arc<dyn FloodStore>,
}

impl FloodGuard {
    pub fn new(flood: Arc<dyn FloodStore>) -> Self {
        Self { flood }
    }

    pub fn flood(&self) -> &Arc<dyn FloodStore> {
        &self.flood
    }

    /// Whether a configuration counts anything at all. The doorway, the status report and the
    /// settings pages all ask this, so they cannot disagree.
    pub fn is_counting(limits: &Limits) -> bool {
        LimitsState::of(limits).is_counting()
    }

    /// Counts one request of `caller` to `event` and decides whether it may be answered.
    ///
    /// A refusal is logged once per period: per caller for the per-caller tier (a caller
    /// must have been answered `per_caller` times to get there, so these lines are bounded by
    /// the total), and once for the whole event for the total tier, so no flood of fresh
    /// identifiers can turn the log into a second flood.
    pub fn check(&self, event: &str, caller: &str, limits: &Limits) -> Decision {
        if !Self::is_counting(limits) {
            return Decision::Allowed;
        }
        let mut tiers = [
            Tier {
                identifier: caller,
                limit: limits.per_caller,
            },
            Tier {
                identifier: TOTAL,
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
        // The log throttle is one more count in the same store, under its own event and in the
        // same step: per caller for the per-caller tier, per event for the total.
        // No allocation.
        let notes = [caller, event];
        let notes = if kinds[0] == Refusal::Total {
            &notes[1..]
        } else {
            &notes[..]
        };
        match self
            .flood
            .try_register_noting(event, tiers, limits.period, REFUSAL_LOGGED, notes)
        {
            Ok(()) => Decision::Allowed,
            Err((index, first_in_period)) => {
                let tier = kinds[index];
                Decision::Refused {
                    tier,
                    first_in_period,
                }
            }
        }
    }
}
