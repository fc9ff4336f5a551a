//! What an administrator may do: an owner everything (administrators and keys included), an
//! editor the work (workflows, instances, links, webhooks), a viewer reads everything but
//! secrets and changes nothing.

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    Viewer,
    Editor,
    Owner,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Owner, Role::Editor, Role::Viewer];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Owner => "owner",
            Self::Editor => "editor",
            Self::Viewer => "viewer",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// A stored role; anything unreadable counts as the least (the column's check forbids it).
    pub fn of(stored: &str) -> Self {
        Self::parse(stored).unwrap_or(Self::Viewer)
    }
}
