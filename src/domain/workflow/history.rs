//! What an instance's history records: the events, and who caused those an operator did.

use super::{InstanceState, Shown, Step, format_amount_for, shown_value};
use crate::domain::files::Stored;
use crate::i18n::Lang;

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
    /// A participant's link was emailed to them.
    Emailed,
    /// A participant was reminded, with a fresh link.
    Reminded,
    /// A step's deadline passed; the instance went on to the next step.
    StepExpired,
    /// A step's deadline passed and the instance ended as expired.
    Expired,
    /// A step was passed over: its conditions on earlier answers did not hold.
    Skipped,
    /// A step with branches closed once enough of them approved (`| 2 of 3`); the others
    /// were not needed.
    ClosedByQuorum,
    /// A participant was handed to a new contact; the old one's links stopped working.
    Reassigned,
    /// A route sent the instance back to this step (a new round): its `participant` is whose
    /// answer did, its answer that answer (a review's decision and comment).
    Reopened,
}

impl Event {
    pub const ALL: [Event; 16] = [
        Event::Started,
        Event::Answered,
        Event::Complete,
        Event::Rejected,
        Event::LinkIssued,
        Event::LinkRevoked,
        Event::LinksRevoked,
        Event::Cancelled,
        Event::Emailed,
        Event::Reminded,
        Event::StepExpired,
        Event::Expired,
        Event::Skipped,
        Event::ClosedByQuorum,
        Event::Reassigned,
        Event::Reopened,
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
            Event::Emailed => "emailed",
            Event::Reminded => "reminded",
            Event::StepExpired => "step_expired",
            Event::Expired => "expired",
            Event::Skipped => "skipped",
            Event::ClosedByQuorum => "closed_by_quorum",
            Event::Reassigned => "reassigned",
            Event::Reopened => "reopened",
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
            Event::Emailed => "event-emailed",
            Event::Reminded => "event-reminded",
            Event::StepExpired => "event-step-expired",
            Event::Expired => "event-expired",
            Event::Skipped => "event-skipped",
            Event::ClosedByQuorum => "event-closed-by-quorum",
            Event::Reassigned => "event-reassigned",
            Event::Reopened => "event-reopened",
        }
    }

    /// The line an instance's end writes; `None` for a state that is no end.
    pub fn ended_as(state: InstanceState) -> Option<Event> {
        match state {
            InstanceState::Active => None,
            InstanceState::Complete => Some(Event::Complete),
            InstanceState::Rejected => Some(Event::Rejected),
            InstanceState::Cancelled => Some(Event::Cancelled),
            InstanceState::Expired => Some(Event::Expired),
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
    /// The email sender, which signs a participant's link when it sends it.
    Mail,
    /// A step's deadline that handed it on (`| expires 3d then to director`).
    Deadline,
    /// The participant who answered for this one forwarded the step from their link's page.
    Forward(String),
}

impl Actor {
    /// As stored: `admin:<name>`, `api:<name>` or `cli`, so no name can pass for another kind.
    pub fn stored(&self) -> String {
        match self {
            Actor::Admin(name) => format!("admin:{name}"),
            Actor::CommandLine => "cli".into(),
            Actor::Api(name) => format!("api:{name}"),
            Actor::Mail => "mail".into(),
            Actor::Deadline => "deadline".into(),
            Actor::Forward(who) => format!("forward:{who}"),
        }
    }

    pub fn from_stored(s: &str) -> Option<Self> {
        if s == "cli" {
            return Some(Actor::CommandLine);
        }
        if s == "mail" {
            return Some(Actor::Mail);
        }
        if s == "deadline" {
            return Some(Actor::Deadline);
        }
        if let Some(who) = s.strip_prefix("forward:") {
            return Some(Actor::Forward(who.to_owned()));
        }
        if let Some(name) = s.strip_prefix("admin:") {
            return Some(Actor::Admin(name.to_owned()));
        }
        s.strip_prefix("api:")
            .map(|name| Actor::Api(name.to_owned()))
    }
}

/// An answer as label/value lines in the reader's language, field labels from its step's
/// words when the step is known. Reads the answers recorded today
/// (labels included) and those recorded before labels were (field names only).
pub fn answer_lines(lang: Lang, json: &str, step: Option<&Step>) -> Vec<(String, String)> {
    answer_items(lang, json, step)
        .into_iter()
        .map(|(label, shown)| (label, shown.text))
        .collect()
}

/// `answer_lines` with each value as shown (`shown_value`): typed values in the reader's
/// writing, and a web address with the link it opens.
pub fn answer_items(lang: Lang, json: &str, step: Option<&Step>) -> Vec<(String, Shown)> {
    let t = |id: &str| crate::i18n::tr(lang, id, &[]);
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(json) else {
        return Vec::new();
    };
    let text = |v: &serde_json::Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    // Retention or an erasure took the words: said where they were.
    if map.get("erased") == Some(&serde_json::Value::Bool(true)) {
        return vec![(t("history-answer"), Shown::text(t("history-erased")))];
    }
    let mut out = Vec::new();
    match map.get("fields") {
        Some(serde_json::Value::Array(fields)) => {
            for f in fields {
                // The step's words in the reader's language, else the label as recorded.
                let translated = f
                    .get("name")
                    .and_then(|n| n.as_str())
                    .and_then(|n| step?.label_named(lang, n));
                let label = translated
                    .map(str::to_owned)
                    .or_else(|| f.get("label").map(text))
                    .unwrap_or_default();
                let value = f.get("value").map(text).unwrap_or_default();
                // A choice's option in the reader's language, else as recorded.
                let name = f.get("name").and_then(|n| n.as_str());
                let file = f
                    .get("file")
                    .and_then(|file| serde_json::from_value::<Stored>(file.clone()).ok());
                let value = match (file, name.and_then(|n| step?.option_named(lang, n, &value))) {
                    (Some(file), _) => Shown {
                        text: format!("{} ({})", file.name, file.size_in(lang)),
                        file: Some(file.id),
                        ..Shown::default()
                    },
                    (None, Some(option)) => Shown::text(option.to_owned()),
                    (None, None) => {
                        shown_value(name.and_then(|n| step?.field_kind(n)), &value, lang)
                    }
                };
                out.push((label, value));
            }
        }
        Some(serde_json::Value::Object(fields)) => {
            for (k, v) in fields {
                out.push((k.clone(), Shown::text(text(v))));
            }
        }
        _ => {}
    }
    if let Some(d) = map.get("decision").and_then(|d| d.as_str()) {
        let decision = match d {
            "approve" => t("history-decision-approve"),
            "reject" => t("history-decision-reject"),
            other => other.to_owned(),
        };
        out.push((t("history-decision"), Shown::text(decision)));
        if let Some(c) = map
            .get("comment")
            .and_then(|c| c.as_str())
            .filter(|c| !c.is_empty())
        {
            out.push((t("history-comment"), Shown::text(c.to_owned())));
        }
    }
    if let Some(to) = map.get("to").and_then(|r| r.as_str()) {
        out.push((t("history-to"), Shown::text(to.to_owned())));
    }
    if let Some(reason) = map
        .get("reason")
        .and_then(|r| r.as_str())
        .filter(|r| !r.is_empty())
    {
        out.push((t("history-reason"), Shown::text(reason.to_owned())));
    }
    if map.get("status").and_then(|s| s.as_str()) == Some("paid") {
        let currency = map.get("currency").and_then(|c| c.as_str()).unwrap_or("");
        let cents = map
            .get("amount_cents")
            .and_then(|c| c.as_i64())
            .or_else(|| {
                let a = map.get("amount")?.as_str()?;
                let (u, c) = a.split_once('.')?;
                Some(u.parse::<i64>().ok()? * 100 + c.parse::<i64>().ok()?)
            });
        let amount = cents.map_or_else(String::new, |c| format_amount_for(lang, c, currency));
        out.push((
            t("history-payment"),
            Shown::text(format!("{} — {amount}", t("history-paid"))),
        ));
    }
    out
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
            Actor::Mail,
            Actor::Deadline,
            Actor::Forward("manager".into()),
        ] {
            assert_eq!(Actor::from_stored(&actor.stored()), Some(actor));
        }
        assert_eq!(Actor::from_stored("someone"), None);
    }
}
