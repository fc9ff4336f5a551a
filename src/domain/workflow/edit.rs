//! Making and saving workflows, whoever asks (the admin pages, the command line): one check of
//! a workflow's name, label and definition, so each says the same about the same text.

use super::{Definition, labels};
use crate::error::Refusable;
use crate::i18n::{Lang, Message};
use crate::store::{self, Db};

/// A workflow as typed: its machine name, its label, its labels in other languages (`None`:
/// keep the stored ones) and its definition in the line format.
#[derive(Clone, Copy, Debug)]
pub struct Draft<'a> {
    pub name: &'a str,
    pub label: &'a str,
    pub labels: Option<&'a [(Lang, String)]>,
    pub definition: &'a str,
}

/// What is wrong with a draft, each under the field it is about (`name`, `label`, `label_fr`,
/// `definition`): every wrong line of a definition, not the first.
pub type Problems = Vec<(&'static str, Message)>;

/// Why a workflow was not made or saved; nothing changed.
#[derive(Debug)]
pub enum Refusal {
    Invalid(Problems),
    NameTaken,
    NotFound,
}

/// The longest machine name and label.
pub const MAX_NAME: usize = 64;
pub const MAX_LABEL: usize = 100;

/// A machine name: 1 to `MAX_NAME` lower-case letters, digits and `_`.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// Checks a draft (its name only when `creating`: a saved workflow keeps its name) and gives
/// its definition parsed.
pub fn check(draft: &Draft<'_>, creating: bool) -> Result<Definition, Problems> {
    let mut problems = Problems::new();
    if creating && !valid_name(draft.name.trim()) {
        problems.push(("name", Message::new("workflow-name-invalid")));
    }
    let label = draft.label.trim();
    if label.is_empty() || label.chars().count() > MAX_LABEL {
        problems.push(("label", Message::new("workflow-label-invalid")));
    }
    for (lang, other) in draft.labels.unwrap_or_default() {
        let other = other.trim();
        if other.chars().count() > MAX_LABEL || other.chars().any(char::is_control) {
            problems.push((
                labels::field(*lang),
                Message::new("workflow-label-other-invalid"),
            ));
        }
    }
    let definition = match Definition::parse_all(draft.definition) {
        Ok(d) => Some(d),
        Err(messages) => {
            problems.extend(messages.into_iter().map(|m| ("definition", m)));
            None
        }
    };
    match definition {
        Some(d) if problems.is_empty() => Ok(d),
        _ => Err(problems),
    }
}

/// Makes a workflow and its version 1; gives its id.
pub async fn create(db: &Db, draft: &Draft<'_>) -> Result<i64, Refusable<Refusal>> {
    let definition = check(draft, true).map_err(|p| Refusable::Refused(Refusal::Invalid(p)))?;
    let name = draft.name.trim();
    let labels = labels::to_json(draft.labels.unwrap_or_default());
    store::workflows::create_labelled(db, name, draft.label.trim(), &labels, &definition.to_json())
        .await?
        .ok_or(Refusable::Refused(Refusal::NameTaken))
}

/// Saves a workflow's labels and, when its definition changed, a new version.
pub async fn save(
    db: &Db,
    id: i64,
    draft: &Draft<'_>,
) -> Result<store::workflows::Saved, Refusable<Refusal>> {
    let definition = check(draft, false).map_err(|p| Refusable::Refused(Refusal::Invalid(p)))?;
    let labels = draft.labels.map(labels::to_json);
    let (label, definition) = (draft.label.trim(), definition.to_json());
    match store::workflows::save_labelled(db, id, label, labels.as_deref(), &definition).await? {
        store::workflows::Saved::NotFound => Err(Refusable::Refused(Refusal::NotFound)),
        saved => Ok(saved),
    }
}
