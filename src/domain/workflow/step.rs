//! A step of a workflow: who answers it, what it shows, its words in other languages, its
//! reminders and deadline.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Condition, Interaction, Participant};
use crate::i18n::Lang;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub title: String,
    /// Parallel branches, each a participant answering through its own link; empty for a step
    /// answered by `participant` alone.
    #[serde(default)]
    pub branches: Vec<Participant>,
    /// Who answers a step without branches. Definitions saved before participants existed
    /// name none, and go to the default participant.
    #[serde(default, skip_serializing_if = "Participant::is_default")]
    pub participant: Participant,
    pub interaction: Interaction,
    /// Earlier steps (0-based) whose answers this step shows its participant: a review shows
    /// what it reviews. Nothing is shown unless the definition asks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shows: Vec<usize>,
    /// The step's words in other languages, by language code: the title and the field labels
    /// in the fields' order. A visitor sees their language, else the definition's own words.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub translations: BTreeMap<String, StepText>,
    /// A few words under the step's title for whoever answers it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub help: String,
    /// Remind a participant who has an address and has not answered (`| remind 2d x3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remind: Option<Remind>,
    /// The step's deadline (`| expires 7d`, or `| expires 7d then next`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<Expires>,
    /// Conditions on earlier answers, all of which must hold for the step to be asked
    /// (`| only if Amount > 1000`); it is skipped otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub only_if: Vec<Condition>,
    /// For a step with branches: how many of them close it (`| 2 of 3`, `| any`); every
    /// branch when `None`. A review closes as approved once this many approve, and as
    /// rejected once that many can no longer approve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quorum: Option<usize>,
    /// Where the step sends its instance other than to the next step (`| on reject back to
    /// 1`, `| if Amount > 1000 go 3`, `| rounds 3`).
    #[serde(default, skip_serializing_if = "super::route::Routes::is_empty")]
    pub routes: super::route::Routes,
    /// `| forward`: its participant may hand the step to a colleague from the link's page.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub forward: bool,
    /// `| verify email`: the link's page shows the step only once its holder typed a code
    /// emailed to the participant's address (`interaction::code`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub verify_email: bool,
}

/// What a step's start queues: its participants' links (for those with an address), their
/// first reminder and the step's deadline, when its definition asks for them.
#[derive(Clone, Copy, Debug, Default)]
pub struct StepStart<'a> {
    pub participants: &'a [Participant],
    /// Seconds after the step starts that a participant who has not answered is reminded.
    pub remind_after: Option<i64>,
    /// Seconds after the step starts that it expires.
    pub expires_after: Option<i64>,
}

/// A step's reminders: the first `after` seconds after the step starts, then every `after`
/// seconds, at most `times` in all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Remind {
    pub after: u64,
    pub times: u32,
}

/// A step's deadline: `after` seconds after it starts, the instance ends as expired, or goes on
/// to the next step when `then_next`, or the step is handed to the person who answers for
/// another participant when `then_to` (`| expires 3d then to director`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expires {
    pub after: u64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub then_next: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub then_to: Option<Participant>,
}

/// The most reminders a step may send a participant, and the shortest wait before one: a
/// definition cannot make Orchestra send a stream of emails.
pub const MAX_REMINDERS: u32 = 10;
pub const MIN_REMIND_AFTER: u64 = 3600;
/// The shortest and longest deadline a step may have.
pub const MIN_EXPIRES_AFTER: u64 = 60;
pub const MAX_DELAY: u64 = 365 * 86_400;

/// A step's words in one language.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepText {
    pub title: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    /// Per field, in order: a choice's options in this language (empty for other fields).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<Vec<String>>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub help: String,
}

impl Step {
    /// The step's title in a language, falling back to the definition's own.
    pub fn title_in(&self, lang: Lang) -> &str {
        self.translations
            .get(lang.code())
            .map_or(self.title.as_str(), |t| t.title.as_str())
    }

    /// The label of the step's field at `index` in a language, falling back to the
    /// definition's own; `None` past the step's fields.
    pub fn label_in(&self, lang: Lang, index: usize) -> Option<&str> {
        let Interaction::Form { fields } = &self.interaction else {
            return None;
        };
        let own = fields.get(index)?.label.as_str();
        Some(
            self.translations
                .get(lang.code())
                .and_then(|t| t.labels.get(index))
                .map_or(own, String::as_str),
        )
    }

    /// The step's help in a language, falling back to the definition's own.
    pub fn help_in(&self, lang: Lang) -> &str {
        self.translations
            .get(lang.code())
            .map(|t| t.help.as_str())
            .filter(|h| !h.is_empty())
            .unwrap_or(&self.help)
    }

    /// The options of the step's field at `index` in a language, falling back to the
    /// definition's own (empty for a field that is no choice).
    pub fn options_in(&self, lang: Lang, index: usize) -> &[String] {
        let Interaction::Form { fields } = &self.interaction else {
            return &[];
        };
        let Some(field) = fields.get(index) else {
            return &[];
        };
        self.translations
            .get(lang.code())
            .and_then(|t| t.options.get(index))
            .filter(|o| o.len() == field.options.len() && !o.is_empty())
            .map_or(field.options.as_slice(), Vec::as_slice)
    }

    /// An option as recorded (the definition's own words) in a language: for showing an
    /// answer of the field named `name` to a reader of another language.
    pub fn option_named(&self, lang: Lang, name: &str, value: &str) -> Option<&str> {
        let Interaction::Form { fields } = &self.interaction else {
            return None;
        };
        let index = fields.iter().position(|f| f.name == name)?;
        let at = fields[index].options.iter().position(|o| o == value)?;
        self.options_in(lang, index).get(at).map(String::as_str)
    }

    /// The label of the field named `name` in a language, if the step has that field.
    pub fn label_named(&self, lang: Lang, name: &str) -> Option<&str> {
        let Interaction::Form { fields } = &self.interaction else {
            return None;
        };
        let index = fields.iter().position(|f| f.name == name)?;
        self.label_in(lang, index)
    }

    /// The kind of the field named `name`, if the step has that field.
    pub fn field_kind(&self, name: &str) -> Option<super::FieldKind> {
        let Interaction::Form { fields } = &self.interaction else {
            return None;
        };
        fields.iter().find(|f| f.name == name).map(|f| f.kind)
    }

    /// Whether a participant answers this step, and under which branch ("" for a step without
    /// branches).
    pub fn branch_of(&self, who: &Participant) -> Option<&str> {
        if self.branches.is_empty() {
            (self.participant == *who).then_some("")
        } else {
            self.branches
                .iter()
                .find(|b| *b == who)
                .map(Participant::as_str)
        }
    }

    /// What this step's start queues: its participants' links, its first reminder, its
    /// deadline.
    pub fn start(&self) -> StepStart<'_> {
        StepStart {
            participants: self.participants(),
            remind_after: self
                .remind
                .map(|r| i64::try_from(r.after).unwrap_or(i64::MAX)),
            expires_after: self
                .expires
                .as_ref()
                .map(|e| i64::try_from(e.after).unwrap_or(i64::MAX)),
        }
    }

    /// How many answers (approvals, for a review) close this step.
    pub fn needed(&self) -> usize {
        let all = self.participants().len();
        self.quorum.map_or(all, |k| k.clamp(1, all))
    }

    /// Everyone who answers this step.
    pub fn participants(&self) -> &[Participant] {
        if self.branches.is_empty() {
            std::slice::from_ref(&self.participant)
        } else {
            &self.branches
        }
    }

    /// The branches the step waits for ("" alone for a step without branches).
    pub fn awaited(&self) -> Vec<String> {
        if self.branches.is_empty() {
            vec![String::new()]
        } else {
            self.branches
                .iter()
                .map(|b| b.as_str().to_owned())
                .collect()
        }
    }
}
