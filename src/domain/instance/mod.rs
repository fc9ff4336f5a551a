//! An instance, in one place: start one, issue and email its participants' links, list and
//! revoke them, cancel it, and read it as one [`View`] that the admin page, the API and the CLI
//! all show. Each operation validates its input the same way for every caller and answers
//! `Result<T, InstanceError>`: refused (each refusal naming its field, in the reader's
//! language) or failed.

mod cancel;
pub mod evidence;
pub mod evidence_page;
mod links;
pub mod progress;
mod reassign;
mod start;
mod view;

pub use cancel::cancel;
pub use links::{
    Issued, LinkPage, LinkState, Order, current_keys, issue, issue_on, list, revoke, revoke_one,
    send,
};
pub use progress::participants_left;
pub use reassign::{reassign, reassign_for};
pub use start::{Start, start};
pub use view::{View, ViewOptions};

use crate::domain::settings::{MAX_TTL, MIN_TTL};
use crate::domain::workflow::{Definition, InstanceState, Participant};
use crate::error::Error;
use crate::i18n::Message;
use crate::store::Db;
use crate::store::instances::InstanceRow;

pub use crate::domain::workflow::history::Actor;
pub use crate::store::instances::Quota;

/// What an operation on an instance came to when it did not happen: refused (nothing was
/// changed; a start lists every refusal, the others one), or failed.
#[derive(Debug, thiserror::Error)]
pub enum InstanceError {
    #[error("refused")]
    Refused(Vec<Refusal>),
    #[error(transparent)]
    Failed(Error),
}

impl InstanceError {
    fn refused(refusal: Refusal) -> Self {
        InstanceError::Refused(vec![refusal])
    }

    /// The refusals, for the caller to show; a failure is handed on (`?` makes it the caller's
    /// own error).
    pub fn refusals(self) -> Result<Vec<Refusal>, Error> {
        match self {
            InstanceError::Refused(refusals) => Ok(refusals),
            InstanceError::Failed(e) => Err(e),
        }
    }

    /// The first refusal (every operation but a start has one), or the failure.
    pub fn refusal(self) -> Result<Refusal, Error> {
        let refusals = self.refusals()?;
        refusals
            .into_iter()
            .next()
            .ok_or(Error::Corrupt("a refusal without its reason"))
    }
}

impl From<Error> for InstanceError {
    fn from(e: Error) -> Self {
        InstanceError::Failed(e)
    }
}

impl From<sqlx::Error> for InstanceError {
    fn from(e: sqlx::Error) -> Self {
        InstanceError::Failed(e.into())
    }
}

impl From<Refusal> for InstanceError {
    fn from(r: Refusal) -> Self {
        InstanceError::refused(r)
    }
}

/// Why an operation on an instance was refused (a start, a link issued or emailed, a cancel): each knows the field it is about and
/// says why in the reader's language, so the admin form, the CLI and the API read one answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    WorkflowUnknown,
    TitleInvalid,
    BodyTooLong,
    InstanceUnknown(i64),
    InstanceOver,
    TtlInvalid,
    ParticipantMissing {
        participants: String,
    },
    ParticipantUnknown {
        participant: String,
        participants: String,
    },
    ParticipantDone(String),
    /// An API token runs as many instances as its site allows (the hard cap).
    RunningCap(u64),
    /// An instance had as many links issued through the API in a day as the site allows.
    LinkCap(u64),
    /// A participant's contact, refused.
    Contact(crate::domain::mail::ContactRefusal),
    /// "Send" asked for a participant who has no address.
    NoAddress(String),
    /// The API's hourly quota of link emails (to one address, or by one token) is spent.
    EmailRate(crate::store::mails::QuotaSpent),
    /// A cancel of an instance that has ended already, in this state: nothing was changed.
    Ended(InstanceState),
    /// A cancel's reason is longer than [`MAX_REASON`]: nothing was changed.
    ReasonTooLong,
}

impl Refusal {
    /// The field of the form (or the request) it is about.
    pub fn field(&self) -> &'static str {
        match self {
            Refusal::WorkflowUnknown | Refusal::RunningCap(_) => "workflow",
            Refusal::TitleInvalid => "title",
            Refusal::BodyTooLong => "body",
            Refusal::InstanceUnknown(_)
            | Refusal::InstanceOver
            | Refusal::LinkCap(_)
            | Refusal::Ended(_) => "instance",
            Refusal::ReasonTooLong => "reason",
            Refusal::TtlInvalid => "ttl",
            Refusal::ParticipantMissing { .. }
            | Refusal::ParticipantUnknown { .. }
            | Refusal::ParticipantDone(_)
            | Refusal::NoAddress(_)
            | Refusal::EmailRate(_) => "participant",
            Refusal::Contact(c) => match c.part {
                crate::domain::mail::Part::Participant => "contacts",
                crate::domain::mail::Part::Email => "email",
                crate::domain::mail::Part::Name => "name",
                crate::domain::mail::Part::Lang => "lang",
            },
        }
    }

    /// The participant a contact's refusal is about (`None` for any other refusal): with
    /// `field`, it names the form's field (`email_legal`) or the API body's
    /// (`participants.legal.email`).
    pub fn contact_of(&self) -> Option<&str> {
        match self {
            Refusal::Contact(c) => Some(&c.participant),
            _ => None,
        }
    }

    pub fn message(&self) -> Message {
        match self {
            Refusal::WorkflowUnknown => Message::new("instance-workflow-unknown"),
            Refusal::TitleInvalid => {
                Message::new("instance-title-invalid").arg("max", MAX_TITLE.to_string())
            }
            Refusal::BodyTooLong => Message::new("field-too-long").arg("max", MAX_BODY.to_string()),
            Refusal::InstanceUnknown(id) => {
                Message::new("link-instance-unknown").arg("id", id.to_string())
            }
            Refusal::InstanceOver => Message::new("link-instance-over"),
            Refusal::TtlInvalid => Message::new("link-ttl-invalid")
                .arg("min", MIN_TTL.to_string())
                .arg("max", MAX_TTL.to_string()),
            Refusal::ParticipantMissing { participants } => {
                Message::new("link-participant-missing").arg("participants", participants.clone())
            }
            Refusal::ParticipantUnknown {
                participant,
                participants,
            } => Message::new("link-participant-unknown")
                .arg("participant", participant.clone())
                .arg("participants", participants.clone()),
            Refusal::ParticipantDone(participant) => {
                Message::new("link-participant-done").arg("participant", participant.clone())
            }
            Refusal::RunningCap(cap) => Message::new("api-running-cap").arg("cap", cap.to_string()),
            Refusal::LinkCap(cap) => Message::new("api-link-cap").arg("cap", cap.to_string()),
            Refusal::Contact(c) => c.message(),
            Refusal::NoAddress(participant) => {
                Message::new("link-no-address").arg("participant", participant.clone())
            }
            Refusal::EmailRate(crate::store::mails::QuotaSpent::Address(cap)) => {
                Message::new("api-email-rate-address").arg("cap", cap.to_string())
            }
            Refusal::EmailRate(crate::store::mails::QuotaSpent::Token(cap)) => {
                Message::new("api-email-rate-token").arg("cap", cap.to_string())
            }
            Refusal::Ended(_) => Message::new("instance-cancel-ended"),
            Refusal::ReasonTooLong => {
                Message::new("instance-cancel-reason-long").arg("max", MAX_REASON.to_string())
            }
        }
    }
}

pub const MAX_TITLE: usize = 200;
pub const MAX_BODY: usize = 10_000;
/// The longest reason a cancel keeps, in characters.
pub const MAX_REASON: usize = 500;

/// The participant `participant` names (the default one when empty), when it is one of the
/// definition's and still has something to answer in the instance.
pub(crate) async fn participant_left(
    db: &Db,
    instance: &InstanceRow,
    definition: &Definition,
    participant: &str,
) -> Result<Participant, InstanceError> {
    let participant = participant.trim();
    let names = || {
        definition
            .participants()
            .iter()
            .map(|p| p.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let who = if participant.is_empty() {
        if !definition.participants().contains(&&Participant::default()) {
            return Err(InstanceError::refused(Refusal::ParticipantMissing {
                participants: names(),
            }));
        }
        Participant::default()
    } else {
        match Participant::parse(participant) {
            Some(p) if definition.participants().contains(&&p) => p,
            _ => {
                return Err(InstanceError::refused(Refusal::ParticipantUnknown {
                    participant: participant.chars().take(40).collect(),
                    participants: names(),
                }));
            }
        }
    };
    if !participants_left(db, instance, definition)
        .await?
        .contains(&who)
    {
        return Err(InstanceError::refused(Refusal::ParticipantDone(
            who.as_str().to_owned(),
        )));
    }
    Ok(who)
}
