//! The events an outbox message can carry: one closed enum, spelled once for the table, the
//! payload's `type` and an endpoint's filter.

/// What happened, as a receiver subscribes to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Topic {
    InstanceStarted,
    StepAnswered,
    /// The instance ended; its state (complete, rejected, cancelled) travels with it.
    InstanceEnded,
    PaymentConfirmed,
    /// A route sent the instance back to this step (a new round); `participant` is whose
    /// answer did.
    StepReopened,
    /// A step was passed over: its conditions did not hold, or a route jumped past it.
    StepSkipped,
    /// A participant was handed to a new contact (by an operator, a forward or a deadline).
    StepReassigned,
    /// A step with branches closed once enough of them approved (`| 2 of 3`).
    StepClosed,
}

impl Topic {
    pub const ALL: [Topic; 8] = [
        Topic::InstanceStarted,
        Topic::StepAnswered,
        Topic::InstanceEnded,
        Topic::PaymentConfirmed,
        Topic::StepReopened,
        Topic::StepSkipped,
        Topic::StepReassigned,
        Topic::StepClosed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Topic::InstanceStarted => "instance.started",
            Topic::StepAnswered => "step.answered",
            Topic::InstanceEnded => "instance.ended",
            Topic::PaymentConfirmed => "payment.confirmed",
            Topic::StepReopened => "step.reopened",
            Topic::StepSkipped => "step.skipped",
            Topic::StepReassigned => "step.reassigned",
            Topic::StepClosed => "step.closed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

impl TryFrom<String> for Topic {
    type Error = String;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::parse(&s).ok_or_else(|| format!("unknown outbox event {s:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::Topic;

    #[test]
    fn every_topic_reads_back_from_its_name() {
        for t in Topic::ALL {
            assert_eq!(Topic::parse(t.as_str()), Some(t));
        }
        assert_eq!(Topic::parse("instance.deleted"), None);
    }
}
