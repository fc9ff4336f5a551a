//! `| forward`: the participant holding a step's link hands it to a colleague from the link's
//! page. It is a reassignment made by the link's holder: their links stop working, the
//! colleague becomes the participant's contact and is emailed a link, in one transaction, and
//! the history says who forwarded to whom. An instance's participant can be forwarded at most
//! `MAX_FORWARDS` times, so no link holder can make Orchestra mail addresses without bound.

use super::Resolved;
use crate::domain::capability::Kind;
use crate::domain::mail::{self, ContactInput, Part};
use crate::domain::workflow::Step;
use crate::domain::workflow::history::Actor;
use crate::error::Error;
use crate::i18n::Message;
use crate::store::{self, Db};

/// The most times one participant of an instance may be forwarded.
pub const MAX_FORWARDS: i64 = 3;

/// The form's fields: not a definition's (those are slugs, never starting with `_`).
pub const EMAIL: &str = "_fwd_email";
pub const NAME: &str = "_fwd_name";
pub const LANG: &str = "_fwd_lang";
/// The submit button that asks for a forward rather than an answer.
pub const ACTION: &str = "_forward";

/// Whether this link may forward `step` now.
pub fn offered(resolved: &Resolved, step: &Step) -> bool {
    step.forward && resolved.claims.kind == Kind::Link
}

/// A forward refused: each field's words, and a line for the top of the page.
pub struct Refused {
    pub field_errors: Vec<(String, Message)>,
    pub errors: Vec<Message>,
}

/// What a forward came to.
pub enum Forwarded {
    /// Done: the colleague, as the page names them.
    To(String),
    Refused(Refused),
}

/// Forwards the link's participant to the colleague `submitted` names.
pub async fn forward(
    db: &Db,
    resolved: &Resolved,
    step: &Step,
    submitted: &[(String, String)],
) -> Result<Forwarded, Error> {
    let get = |name: &str| super::posted(submitted, name);
    if !offered(resolved, step) {
        return Ok(Forwarded::Refused(Refused {
            field_errors: Vec::new(),
            errors: vec![Message::new("doorway-forward-not-offered")],
        }));
    }
    let participant = resolved.participant.as_str().to_owned();
    let given = ContactInput {
        participant: participant.clone(),
        email: get(EMAIL),
        name: get(NAME),
        lang: get(LANG),
    };
    let field = |part: Part| match part {
        Part::Email | Part::Participant => EMAIL,
        Part::Name => NAME,
        Part::Lang => LANG,
    };
    let checked = mail::check(&resolved.definition, std::slice::from_ref(&given));
    let row = match checked {
        Ok(rows) => match rows.into_iter().next() {
            Some(row) => row,
            None => {
                return Ok(Forwarded::Refused(refused(vec![(
                    EMAIL.to_owned(),
                    Message::new("doorway-forward-email"),
                )])));
            }
        },
        Err(refusals) => {
            return Ok(Forwarded::Refused(refused(
                refusals
                    .iter()
                    .map(|r| (field(r.part).to_owned(), r.message()))
                    .collect(),
            )));
        }
    };
    let instance = resolved.instance.id;
    let by = Actor::Forward(participant.clone()).stored();
    if store::instances::forwards(db, instance, &participant).await? >= MAX_FORWARDS {
        return Ok(Forwarded::Refused(Refused {
            field_errors: Vec::new(),
            errors: vec![
                Message::new("doorway-forward-limit").arg("max", MAX_FORWARDS.to_string()),
            ],
        }));
    }
    let to = if row.name.is_empty() {
        row.email.clone()
    } else {
        row.name.clone()
    };
    let done = store::links::reassign(db, instance, &row, true, None, &by).await?;
    if done != store::links::Reassigned::Done {
        return Ok(Forwarded::Refused(Refused {
            field_errors: Vec::new(),
            errors: vec![Message::new("doorway-forward-not-offered")],
        }));
    }
    tracing::info!(instance, participant = %participant, "a step was forwarded from its link");
    Ok(Forwarded::To(to))
}

fn refused(field_errors: Vec<(String, Message)>) -> Refused {
    Refused {
        field_errors,
        errors: vec![Message::new("doorway-form-has-errors")],
    }
}
