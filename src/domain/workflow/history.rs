//! What an instance's history records: the events, and who caused those an operator did.

use super::InstanceState;

/// One kind of history line. Stored by [`Event::as_str`]; read back through `TryFrom`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Started,
    Answered,
    Complete,
    Rejected,
    LinkIssued,
    LinkRevoked,
    LinksRevoked,
    /// The instance was cancelled; its answer holds the reason given, if any.
    Cancelled,
}

impl Event {
    pub const ALL: [Event; 8] = [
        Event::Started,
        Event::Answered,
        Event::Complete,
        Event::Rejected,
        Event::LinkIssued,
        Event::LinkRevoked,
        Event::LinksRevoked,
        Event::Cancelled,
    ];

    /// As stored, and as the API names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Event::Started => "started",
            Event::Answered => "answered",
            Event::Complete => "complete",
            Event::Rejected => "rejected",
            Event::LinkIssued => "link_issued",
            Event::LinkRevoked => "link_revoked",
            Event::LinksRevoked => "links_revoked",
            Event::Cancelled => "cancelled",
        }
    }

    /// The message naming it in the reader's language.
    pub fn message_id(self) -> &'static str {
        match self {
            Event::Started => "event-started",
            Event::Answered => "event-answered",
            Event::Complete => "event-complete",
            Event::Rejected => "event-rejected",
            Event::LinkIssued => "event-link-issued",
            Event::LinkRevoked => "event-link-revoked",
            Event::LinksRevoked => "event-links-revoked",
            Event::Cancelled => "event-cancelled",
        }
    }

    /// The line an instance's end writes; `None` for a state that is no end.
    pub fn ended_as(state: InstanceState) -> Option<Event> {
        match state {
            InstanceState::Active => None,
            InstanceState::Complete => Some(Event::Complete),
            InstanceState::Rejected => Some(Event::Rejected),
            InstanceState::Cancelled => Some(Event::Cancelled),
        }
    }
}

impl TryFrom<String> for Event {
    type Error = String;

    fn try_from(stored: String) -> Result<Self, String> {
        Event::ALL
            .into_iter()
            .find(|e| e.as_str() == stored)
            .ok_or_else(|| format!("unknown history event {stored:?}"))
    }
}

/// Who did something to an instance's links, as the history shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Actor {
    Admin(String),
    CommandLine,
    /// An integrator, by its API token's name.
    Api(String),
}

impl Actor {
    /// As stored: `admin:<name>`, `api:<name>` or `cli`, so no name can pass for another kind.
    pub fn stored(&self) -> String {
        match self {
            Actor::Admin(name) => format!("admin:{name}"),
            Actor::CommandLine => "cli".into(),
            Actor::Api(name) => format!("api:{name}"),
        }
    }

    pub fn from_stored(s: &str) -> Option<Self> {
        if s == "cli" {
            return Some(Actor::CommandLine);
        }
        if let Some(name) = s.strip_prefix("admin:") {
            return Some(Actor::Admin(name.to_owned()));
        }
        s.strip_prefix("api:")
            .map(|name| Actor::Api(name.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::{Lang, tr};

    #[test]
    fn every_event_reads_back_as_itself_and_is_named_in_both_languages() {
        for event in Event::ALL {
            assert_eq!(Event::try_from(event.as_str().to_owned()), Ok(event));
            for lang in Lang::ALL {
                assert_ne!(tr(lang, event.message_id(), &[]), event.message_id());
            }
        }
        assert!(Event::try_from("other".to_owned()).is_err());
    }

    #[test]
    fn every_actor_reads_back_as_itself() {
        for actor in [
            Actor::Admin("ada".into()),
            Actor::CommandLine,
            Actor::Api("billing".into()),
        ] {
            assert_eq!(Actor::from_stored(&actor.stored()), Some(actor));
        }
        assert_eq!(Actor::from_stored("someone"), None);
    }
}
