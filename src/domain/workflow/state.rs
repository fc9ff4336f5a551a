//! An instance's state: running, or ended one way or the other.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstanceState {
    Active,
    Complete,
    Rejected,
    /// Ended by an administrator, the command line or an integrator before its steps did.
    Cancelled,
    /// A step's deadline passed with nobody's answer, and its definition ends the instance then.
    Expired,
}

impl InstanceState {
    pub const ALL: [InstanceState; 5] = [
        Self::Active,
        Self::Complete,
        Self::Rejected,
        Self::Cancelled,
        Self::Expired,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Complete => "complete",
            Self::Rejected => "rejected",
            Self::Cancelled => "cancelled",
            Self::Expired => "expired",
        }
    }

    /// The message naming the state in the visitor's language.
    pub fn message_id(self) -> &'static str {
        match self {
            Self::Active => "state-active",
            Self::Complete => "state-complete",
            Self::Rejected => "state-rejected",
            Self::Cancelled => "state-cancelled",
            Self::Expired => "state-expired",
        }
    }

    pub fn is_over(self) -> bool {
        self != Self::Active
    }
}

impl TryFrom<String> for InstanceState {
    type Error = String;

    fn try_from(s: String) -> Result<Self, String> {
        match s.as_str() {
            "active" => Ok(Self::Active),
            "complete" => Ok(Self::Complete),
            "rejected" => Ok(Self::Rejected),
            "cancelled" => Ok(Self::Cancelled),
            "expired" => Ok(Self::Expired),
            _ => Err(format!("unknown instance state {s:?}")),
        }
    }
}

impl fmt::Display for InstanceState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
