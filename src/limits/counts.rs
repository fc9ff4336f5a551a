//! What the guard's decision counters and the sizing history share: an address's counts as
//! read, and how many recent periods are kept. Here, below both, so neither imports the other.

/// Periods the sizing history remembers, the current one included: the tally of would-be
/// refusals the status report shows covers as many.
pub const RECENT_PERIODS: usize = 24;

/// One address's decisions as read, since the process started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecisionCounts {
    pub allowed: u64,
    /// Per tier, in `Refusal::index` order.
    pub refused: [u64; 2],
    /// Per tier: report-only decisions that enforcing would have refused.
    pub would_refuse: [u64; 2],
    /// What `Decisions::count_request` counted.
    pub requests: u64,
}

impl DecisionCounts {
    /// Every counted decision, whatever it was.
    pub fn decided(&self) -> u64 {
        self.allowed + self.refused.iter().sum::<u64>() + self.would_refuse.iter().sum::<u64>()
    }

    /// What was counted since `earlier`, a reading of the same counters.
    pub fn since(&self, earlier: &DecisionCounts) -> DecisionCounts {
        let minus =
            |a: [u64; 2], b: [u64; 2]| [a[0].saturating_sub(b[0]), a[1].saturating_sub(b[1])];
        DecisionCounts {
            allowed: self.allowed.saturating_sub(earlier.allowed),
            refused: minus(self.refused, earlier.refused),
            would_refuse: minus(self.would_refuse, earlier.would_refuse),
            requests: self.requests.saturating_sub(earlier.requests),
        }
    }

    /// `self` and `other` together.
    pub fn add(&mut self, other: &DecisionCounts) {
        self.allowed += other.allowed;
        self.requests += other.requests;
        for i in 0..2 {
            self.refused[i] += other.refused[i];
            self.would_refuse[i] += other.would_refuse[i];
        }
    }
}

/// What one address would have refused in report-only mode, per tier: in the current period,
/// and in the recent ones ([`RECENT_PERIODS`], the current one included) together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Recent {
    pub current: [u64; 2],
    pub recent: [u64; 2],
}
