//! Workflows: ordered steps, each answered through an interaction kind by a participant, or by
//! several participants in parallel branches. Definitions are written in a small line format
//! that administrators edit in one text area and the CLI prints; stored as JSON, one immutable
//! version per save (`versions`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::i18n::{Lang, Message};

pub mod history;
pub mod seed;
pub mod versions;

pub use participant::Participant;
pub use state::InstanceState;

mod participant;
mod state;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Definition {
    pub steps: Vec<Step>,
}

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
/// to the next step when `then_next`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expires {
    pub after: u64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub then_next: bool,
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
                .map(|e| i64::try_from(e.after).unwrap_or(i64::MAX)),
        }
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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Interaction {
    Form { fields: Vec<Field> },
    Review,
    Payment { amount_cents: i64, currency: String },
}

impl Interaction {
    pub fn kind(&self) -> &'static str {
        match self {
            Interaction::Form { .. } => "form",
            Interaction::Review => "review",
            Interaction::Payment { .. } => "payment",
        }
    }

    /// Requests one visit to this step makes on its link: the page, then the answer (for a
    /// payment: the payment step, then *Pay now*). The provider's return trip comes back on a
    /// continuation handle, a flood identifier of its own, so it is not counted here.
    pub fn requests_on_link(&self) -> u64 {
        match self {
            Interaction::Form { .. } | Interaction::Review | Interaction::Payment { .. } => 2,
        }
    }

    /// The message naming this kind in the visitor's language.
    pub fn message_id(&self) -> &'static str {
        match self {
            Interaction::Form { .. } => "kind-form",
            Interaction::Review => "kind-review",
            Interaction::Payment { .. } => "kind-payment",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Field {
    pub name: String,
    pub label: String,
    pub kind: FieldKind,
    pub required: bool,
    /// A choice's options, as the definition writes them; the answer records the one picked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
}

impl Field {
    /// The option a choice's posted value (its slug) names, as the definition writes it.
    pub fn option_of(&self, posted: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|o| slug(o) == posted)
            .map(String::as_str)
    }

    /// The value a choice's option posts.
    pub fn option_value(option: &str) -> String {
        slug(option)
    }
}

/// Options one choice may offer.
pub const MAX_OPTIONS: usize = 30;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldKind {
    Text,
    Email,
    Number,
    Long,
    Choice,
}

impl FieldKind {
    fn parse(s: &str) -> Option<Self> {
        match s {
            "text" => Some(Self::Text),
            "email" => Some(Self::Email),
            "number" => Some(Self::Number),
            "long" => Some(Self::Long),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Email => "email",
            Self::Number => "number",
            Self::Long => "long",
            Self::Choice => "choice",
        }
    }

    fn max_len(self) -> usize {
        if self == Self::Long { 5000 } else { 200 }
    }
}

pub const MAX_STEPS: usize = 20;
/// Fields one form step may have, and characters a whole definition may have: a definition is
/// parsed and shown on every doorway page, so its size is bounded.
pub const MAX_FIELDS: usize = 30;
pub const MAX_DEFINITION_CHARS: usize = 20_000;

impl Definition {
    /// Every participant of the definition, in the order they first answer.
    pub fn participants(&self) -> Vec<&Participant> {
        let mut out: Vec<&Participant> = Vec::new();
        for p in self.steps.iter().flat_map(Step::participants) {
            if !out.contains(&p) {
                out.push(p);
            }
        }
        out
    }

    pub fn from_json(json: &str) -> Option<Self> {
        serde_json::from_str(json).ok()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{\"steps\":[]}".into())
    }

    /// Parses the line format; every error names its line.
    ///
    /// ```text
    /// form: Supplier details | Company*, Email* (email), Quantity (number), Notes (long)
    /// review[legal,finance]: Approve the contract
    /// payment@payer: Pay the order | 49.90 EUR
    /// ```
    ///
    /// `@name` names the participant who answers a step; `[a,b]` makes parallel branches, each a
    /// participant. A step that names none goes to the default participant.
    pub fn parse(text: &str) -> Result<Self, Message> {
        Self::parse_all(text).map_err(|mut errors| errors.swap_remove(0))
    }

    /// `parse`, saying what is wrong with every line rather than the first (the definition
    /// editor shows them all); never an empty list of errors.
    pub fn parse_all(text: &str) -> Result<Self, Vec<Message>> {
        if text.chars().count() > MAX_DEFINITION_CHARS {
            return Err(vec![
                Message::new("definition-too-large").arg("max", MAX_DEFINITION_CHARS.to_string()),
            ]);
        }
        let mut steps: Vec<Step> = Vec::new();
        let mut errors = Vec::new();
        // Whether the last step line parsed: a translation under a bad step is not judged.
        let mut last_ok = false;
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some((lang, words)) = translation_line(line) {
                match steps.last_mut() {
                    Some(step) if last_ok => {
                        if let Err(e) = translate(step, lang, words, n + 1) {
                            errors.push(e);
                        }
                    }
                    Some(_) => {}
                    None => errors.push(
                        Message::new("definition-translation-first")
                            .arg("line", (n + 1).to_string()),
                    ),
                }
                continue;
            }
            match parse_step(n + 1, line, steps.len()) {
                Ok(step) => {
                    steps.push(step);
                    last_ok = true;
                }
                Err(e) => {
                    errors.push(e);
                    // Keeps the step count right for later lines' `show` numbers.
                    steps.push(Step {
                        title: String::new(),
                        branches: Vec::new(),
                        participant: Participant::default(),
                        interaction: Interaction::Review,
                        shows: Vec::new(),
                        translations: BTreeMap::new(),
                        help: String::new(),
                        remind: None,
                        expires: None,
                    });
                    last_ok = false;
                }
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        if steps.is_empty() {
            return Err(vec![Message::new("definition-empty")]);
        }
        if steps.len() > MAX_STEPS {
            return Err(vec![
                Message::new("definition-too-long").arg("max", MAX_STEPS.to_string()),
            ]);
        }
        Ok(Self { steps })
    }

    /// The line format of this definition; `parse(to_text())` gives it back.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for step in &self.steps {
            out.push_str(step.interaction.kind());
            if !step.branches.is_empty() {
                let names: Vec<&str> = step.branches.iter().map(Participant::as_str).collect();
                out.push('[');
                out.push_str(&names.join(","));
                out.push(']');
            } else if !step.participant.is_default() {
                out.push('@');
                out.push_str(step.participant.as_str());
            }
            out.push_str(": ");
            out.push_str(&step.title);
            match &step.interaction {
                Interaction::Form { fields } => {
                    out.push_str(" | ");
                    let fields: Vec<String> = fields
                        .iter()
                        .map(|f| {
                            let star = if f.required { "*" } else { "" };
                            if f.kind == FieldKind::Choice {
                                format!("{}{star} (choice: {})", f.label, f.options.join(" / "))
                            } else {
                                format!("{}{star} ({})", f.label, f.kind.name())
                            }
                        })
                        .collect();
                    out.push_str(&fields.join(", "));
                }
                Interaction::Review => {}
                Interaction::Payment {
                    amount_cents,
                    currency,
                } => {
                    out.push_str(&format!(" | {} {currency}", format_amount(*amount_cents)));
                }
            }
            if !step.shows.is_empty() {
                let numbers: Vec<String> = step.shows.iter().map(|i| (i + 1).to_string()).collect();
                out.push_str(" | show ");
                out.push_str(&numbers.join(", "));
            }
            if let Some(r) = step.remind {
                out.push_str(&format!(
                    " | remind {} x{}",
                    crate::time::format_duration(r.after),
                    r.times
                ));
            }
            if let Some(e) = step.expires {
                out.push_str(&format!(
                    " | expires {}",
                    crate::time::format_duration(e.after)
                ));
                if e.then_next {
                    out.push_str(" then next");
                }
            }
            if !step.help.is_empty() {
                out.push_str(" | help: ");
                out.push_str(&step.help);
            }
            out.push('\n');
            for (lang, text) in &step.translations {
                out.push_str("  ");
                out.push_str(lang);
                out.push_str(": ");
                out.push_str(&text.title);
                if !text.labels.is_empty() {
                    let labels: Vec<String> = text
                        .labels
                        .iter()
                        .enumerate()
                        .map(
                            |(i, l)| match text.options.get(i).filter(|o| !o.is_empty()) {
                                Some(options) => format!("{l} ({})", options.join(" / ")),
                                None => l.clone(),
                            },
                        )
                        .collect();
                    out.push_str(" | ");
                    out.push_str(&labels.join(", "));
                }
                if !text.help.is_empty() {
                    out.push_str(" | help: ");
                    out.push_str(&text.help);
                }
                out.push('\n');
            }
        }
        out
    }
}

fn parse_fields(details: &str) -> Result<Vec<Field>, &'static str> {
    let mut fields: Vec<Field> = Vec::new();
    for spec in details.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let mut options = Vec::new();
        let (label, kind) = match spec.split_once('(') {
            Some((label, kind)) => {
                let kind = kind.strip_suffix(')').ok_or("definition-field")?.trim();
                match kind.strip_prefix("choice:") {
                    Some(list) => {
                        options = parse_options(list).ok_or("definition-options")?;
                        (label.trim(), FieldKind::Choice)
                    }
                    None => (
                        label.trim(),
                        FieldKind::parse(kind).ok_or("definition-field-kind")?,
                    ),
                }
            }
            None => (spec, FieldKind::Text),
        };
        let (label, required) = match label.strip_suffix('*') {
            Some(l) => (l.trim(), true),
            None => (label, false),
        };
        let name = slug(label);
        if name.is_empty() || label.chars().count() > 100 {
            return Err("definition-field");
        }
        if fields.iter().any(|f| f.name == name) {
            return Err("definition-field-twice");
        }
        fields.push(Field {
            name,
            label: label.to_owned(),
            kind,
            required,
            options,
        });
    }
    if fields.is_empty() {
        return Err("definition-no-fields");
    }
    Ok(fields)
}

/// `Small / Medium / Large`: 2 to `MAX_OPTIONS` distinct options of at most 100 characters.
fn parse_options(list: &str) -> Option<Vec<String>> {
    let options: Vec<String> = list.split('/').map(|o| o.trim().to_owned()).collect();
    let mut slugs: Vec<String> = options.iter().map(|o| slug(o)).collect();
    let ok = (2..=MAX_OPTIONS).contains(&options.len())
        && options.iter().all(|o| o.chars().count() <= 100)
        && slugs.iter().all(|s| !s.is_empty());
    slugs.sort();
    slugs.dedup();
    (ok && slugs.len() == options.len()).then_some(options)
}

fn slug(label: &str) -> String {
    let mut out = String::new();
    for c in label.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_owned()
}

fn parse_amount(details: &str) -> Option<(i64, String)> {
    let (amount, currency) = details.split_once(' ')?;
    let currency = currency.trim();
    if currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let (units, cents) = match amount.split_once(['.', ',']) {
        Some((u, c)) if c.len() == 2 => (u, c),
        Some(_) => return None,
        None => (amount, "00"),
    };
    if units.is_empty() || !units.bytes().all(|b| b.is_ascii_digit()) || units.len() > 9 {
        return None;
    }
    let cents: i64 = cents
        .parse()
        .ok()
        .filter(|_| cents.bytes().all(|b| b.is_ascii_digit()))?;
    let total = units.parse::<i64>().ok()? * 100 + cents;
    (total > 0).then(|| (total, currency.to_owned()))
}

impl Definition {
    /// The most requests one participant's link makes to answer every step they answer, once
    /// each: a form then a payment on one link is 4. An answer after which the link has
    /// nothing to answer at once redirects to its thank-you page (post/redirect/get): one
    /// request more, unless it was a payment's (the payer leaves for the provider).
    pub fn requests_per_link(&self) -> u64 {
        let mut most = 0;
        for who in self.participants() {
            let mut on_link = 0;
            for (i, step) in self.steps.iter().enumerate() {
                if step.branch_of(who).is_none() {
                    continue;
                }
                on_link += step.interaction.requests_on_link();
                let goes_on = self
                    .steps
                    .get(i + 1)
                    .is_some_and(|next| next.branch_of(who).is_some());
                if !goes_on && !matches!(step.interaction, Interaction::Payment { .. }) {
                    on_link += 1;
                }
            }
            most = most.max(on_link);
        }
        most
    }
}

/// A per-link limit that lets the shipped examples' busiest link through three times over
/// (reloads, a second try, a page opened twice).
pub fn suggested_per_link() -> u64 {
    seed::EXAMPLES
        .iter()
        .filter_map(|(_, _, text)| Definition::parse(text).ok())
        .map(|d| d.requests_per_link())
        .max()
        .unwrap_or(2)
        * 3
}

/// An amount of cents as the language writes it: 49.90 or 49,90.
pub fn format_amount_for(lang: crate::i18n::Lang, cents: i64, currency: &str) -> String {
    let plain = format_amount(cents);
    match lang {
        crate::i18n::Lang::Fr => format!("{} {currency}", plain.replace('.', ",")),
        crate::i18n::Lang::En => format!("{plain} {currency}"),
    }
}

pub fn format_amount(cents: i64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// A form answer checked against its fields: the values as typed, and an error per field.
pub struct FormCheck {
    pub values: Vec<(String, String)>,
    pub errors: Vec<(String, Message)>,
}

pub fn check_form(fields: &[Field], submitted: &[(String, String)]) -> FormCheck {
    let mut values = Vec::new();
    let mut errors = Vec::new();
    for field in fields {
        let value = submitted
            .iter()
            .find(|(k, _)| *k == field.name)
            .map(|(_, v)| v.trim().to_owned())
            .unwrap_or_default();
        let error = if value.is_empty() {
            field.required.then(|| Message::new("field-required"))
        } else if value.chars().count() > field.kind.max_len() {
            Some(Message::new("field-too-long").arg("max", field.kind.max_len().to_string()))
        } else {
            match field.kind {
                FieldKind::Choice if !field.options.iter().any(|o| slug(o) == value) => {
                    Some(Message::new("field-choice"))
                }
                FieldKind::Email if !looks_like_email(&value) => Some(Message::new("field-email")),
                FieldKind::Number
                    if value
                        .replace(',', ".")
                        .parse::<f64>()
                        .map_or(true, |n| !n.is_finite()) =>
                {
                    Some(Message::new("field-number"))
                }
                _ => None,
            }
        };
        if let Some(e) = error {
            errors.push((field.name.clone(), e));
        }
        values.push((field.name.clone(), value));
    }
    FormCheck { values, errors }
}

fn looks_like_email(s: &str) -> bool {
    match s.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !s.contains(char::is_whitespace)
        }
        None => false,
    }
}

/// One line of a definition as a step, or what is wrong with it (`line` counts from 1).
fn parse_step(line_number: usize, line: &str, earlier: usize) -> Result<Step, Message> {
    let at = |id: &'static str| Message::new(id).arg("line", line_number.to_string());
    let (head, rest) = line
        .split_once(':')
        .ok_or_else(|| at("definition-no-colon"))?;
    let (head, participant) = match head.split_once('@') {
        Some((head, who)) => (
            head,
            Participant::parse(who.trim()).ok_or_else(|| at("definition-participant"))?,
        ),
        None => (head, Participant::default()),
    };
    let (kind, branches) = match head.trim().split_once('[') {
        Some(_) if !participant.is_default() => {
            return Err(at("definition-participant-and-branches"));
        }
        Some((kind, list)) => {
            let list = list
                .strip_suffix(']')
                .ok_or_else(|| at("definition-branches"))?;
            let branches = list
                .split(',')
                .map(|b| Participant::parse(b.trim()))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| at("definition-branch-name"))?;
            let mut unique = branches.clone();
            unique.sort();
            unique.dedup();
            if unique.len() != branches.len() {
                return Err(at("definition-branch-twice"));
            }
            (kind.trim(), branches)
        }
        None => (head.trim(), Vec::new()),
    };
    let mut segments = rest.split('|').map(str::trim);
    let title = segments.next().unwrap_or("");
    let mut details = "";
    let mut shows = Vec::new();
    let mut help = String::new();
    let mut remind = None;
    let mut expires = None;
    for segment in segments {
        if let Some(spec) = segment.strip_prefix("remind ") {
            if remind.is_some() {
                return Err(at("definition-remind"));
            }
            remind = Some(parse_remind(spec).ok_or_else(|| at("definition-remind"))?);
        } else if let Some(spec) = segment.strip_prefix("expires ") {
            if expires.is_some() {
                return Err(at("definition-expires"));
            }
            expires = Some(parse_expires(spec).ok_or_else(|| at("definition-expires"))?);
        } else if let Some(words) = segment.strip_prefix("help:") {
            if !help.is_empty() || words.trim().is_empty() || words.chars().count() > 500 {
                return Err(at("definition-help"));
            }
            help = words.trim().to_owned();
        } else if let Some(list) = show_list(segment) {
            if !shows.is_empty() {
                return Err(at("definition-show"));
            }
            shows = parse_shows(list, earlier).ok_or_else(|| at("definition-show"))?;
        } else if details.is_empty() {
            details = segment;
        } else {
            return Err(at("definition-segments"));
        }
    }
    if title.is_empty() || title.chars().count() > 200 {
        return Err(at("definition-title"));
    }
    let interaction = match kind {
        "form" => {
            let fields = parse_fields(details).map_err(&at)?;
            if fields.len() > MAX_FIELDS {
                return Err(at("definition-too-many-fields").arg("max", MAX_FIELDS.to_string()));
            }
            Interaction::Form { fields }
        }
        "review" if details.is_empty() => Interaction::Review,
        "review" => return Err(at("definition-segments")),
        "payment" => {
            let (amount, currency) =
                parse_amount(details).ok_or_else(|| at("definition-amount"))?;
            Interaction::Payment {
                amount_cents: amount,
                currency,
            }
        }
        _ => return Err(at("definition-kind")),
    };
    Ok(Step {
        title: title.to_owned(),
        branches,
        participant,
        interaction,
        shows,
        translations: BTreeMap::new(),
        help,
        remind,
        expires,
    })
}

/// `2d x3`: the wait (at least an hour) and how many reminders (1 to `MAX_REMINDERS`; one
/// when not said).
fn parse_remind(spec: &str) -> Option<Remind> {
    let mut words = spec.split_whitespace();
    let after = crate::time::parse_duration(words.next()?)?;
    let times = match words.next() {
        Some(n) => n.strip_prefix('x')?.parse().ok()?,
        None => 1,
    };
    let ok = words.next().is_none()
        && (MIN_REMIND_AFTER..=MAX_DELAY).contains(&after)
        && (1..=MAX_REMINDERS).contains(&times);
    ok.then_some(Remind { after, times })
}

/// `7d` or `7d then next`.
fn parse_expires(spec: &str) -> Option<Expires> {
    let mut words = spec.split_whitespace();
    let after = crate::time::parse_duration(words.next()?)?;
    let then_next = match (words.next(), words.next(), words.next()) {
        (None, _, _) => false,
        (Some("then"), Some("next"), None) => true,
        _ => return None,
    };
    (MIN_EXPIRES_AFTER..=MAX_DELAY)
        .contains(&after)
        .then_some(Expires { after, then_next })
}

/// `show 1, 2` in a step line: the list after the word, if the segment is one.
fn show_list(segment: &str) -> Option<&str> {
    let list = segment.strip_prefix("show")?;
    (list.starts_with(char::is_whitespace)
        && list
            .split(',')
            .all(|n| !n.trim().is_empty() && n.trim().bytes().all(|b| b.is_ascii_digit())))
    .then_some(list)
}

/// Step numbers (from 1) of earlier steps, as indices; `None` if one is not an earlier step.
fn parse_shows(list: &str, earlier: usize) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for n in list.split(',') {
        let n: usize = n.trim().parse().ok()?;
        if n == 0 || n > earlier {
            return None;
        }
        if !out.contains(&(n - 1)) {
            out.push(n - 1);
        }
    }
    out.sort_unstable();
    Some(out)
}

/// A translation line (`fr: Titre | Libellé, …`, under the step it translates): its language
/// and its words. A step kind is never a language code, so the two cannot be confused.
fn translation_line(line: &str) -> Option<(Lang, &str)> {
    let (head, words) = line.split_once(':')?;
    let head = head.trim();
    let lang = Lang::ALL.into_iter().find(|l| l.code() == head)?;
    Some((lang, words.trim()))
}

/// Adds a translation to a step: a title, and for a form one label per field in order.
fn translate(step: &mut Step, lang: Lang, words: &str, line_number: usize) -> Result<(), Message> {
    let at = |id: &'static str| Message::new(id).arg("line", line_number.to_string());
    if step.translations.contains_key(lang.code()) {
        return Err(at("definition-translation-twice"));
    }
    let mut segments = words.split('|').map(str::trim);
    let title = segments.next().unwrap_or("");
    let (mut labels, mut help) = (None, String::new());
    for segment in segments {
        if let Some(words) = segment.strip_prefix("help:") {
            if !help.is_empty() || words.trim().is_empty() || words.chars().count() > 500 {
                return Err(at("definition-help"));
            }
            help = words.trim().to_owned();
        } else if labels.is_none() {
            labels = Some(segment);
        } else {
            return Err(at("definition-segments"));
        }
    }
    if title.is_empty() || title.chars().count() > 200 {
        return Err(at("definition-title"));
    }
    let (labels, options): (Vec<String>, Vec<Vec<String>>) = match (&step.interaction, labels) {
        (Interaction::Form { fields }, Some(labels)) => {
            let wrong =
                || at("definition-translation-labels").arg("count", fields.len().to_string());
            let specs: Vec<&str> = labels.split(',').map(str::trim).collect();
            if specs.len() != fields.len() {
                return Err(wrong());
            }
            let mut out = (Vec::new(), Vec::new());
            for (spec, field) in specs.into_iter().zip(fields) {
                let (label, options) = match spec.split_once('(') {
                    Some((label, list)) if field.kind == FieldKind::Choice => {
                        let list = list.strip_suffix(')').ok_or_else(wrong)?;
                        let options = parse_options(list)
                            .filter(|o| o.len() == field.options.len())
                            .ok_or_else(|| at("definition-translation-options"))?;
                        (label.trim(), options)
                    }
                    _ => (spec, Vec::new()),
                };
                if label.is_empty() || label.chars().count() > 100 {
                    return Err(wrong());
                }
                out.0.push(label.to_owned());
                out.1.push(options);
            }
            if out.1.iter().all(Vec::is_empty) {
                out.1.clear();
            }
            out
        }
        (Interaction::Form { .. }, None) => (Vec::new(), Vec::new()),
        (_, Some(_)) => return Err(at("definition-segments")),
        (_, None) => (Vec::new(), Vec::new()),
    };
    step.translations.insert(
        lang.code().to_owned(),
        StepText {
            title: title.to_owned(),
            labels,
            options,
            help,
        },
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "form: Supplier details | Company*, Email* (email), Quantity (number), Notes (long)\n\
                          review[legal,finance]: Approve the contract\n\
                          payment@payer: Pay the order | 49.90 EUR\n";

    #[test]
    fn reminders_and_deadlines_are_step_options_within_bounds() {
        let def = Definition::parse(
            "review@legal: Sign | remind 2d x3 | expires 14d\n\
             payment@payer: Pay | 5.00 EUR | expires 7d then next | help: Pay soon\n\
             review@legal: Check | remind 12h\n",
        )
        .unwrap();
        assert_eq!(
            def.steps[0].remind,
            Some(Remind {
                after: 2 * 86_400,
                times: 3
            })
        );
        assert_eq!(
            def.steps[0].expires,
            Some(Expires {
                after: 14 * 86_400,
                then_next: false
            })
        );
        assert_eq!(
            def.steps[1].expires,
            Some(Expires {
                after: 7 * 86_400,
                then_next: true
            })
        );
        assert_eq!(
            def.steps[2].remind,
            Some(Remind {
                after: 12 * 3600,
                times: 1
            })
        );
        assert_eq!(Definition::parse(&def.to_text()).unwrap(), def);
        let start = def.steps[0].start();
        assert_eq!(start.remind_after, Some(2 * 86_400));
        assert_eq!(start.expires_after, Some(14 * 86_400));
        for bad in [
            "review: Sign | remind 30m",
            "review: Sign | remind 2d x11",
            "review: Sign | remind 2d x0",
            "review: Sign | remind soon",
            "review: Sign | remind 2d | remind 3d",
            "review: Sign | expires 30s",
            "review: Sign | expires 400d",
            "review: Sign | expires 7d then",
            "review: Sign | expires 7d then stop",
        ] {
            let error = Definition::parse(bad).unwrap_err();
            assert!(
                ["definition-remind", "definition-expires"].contains(&error.id),
                "{bad}: {error:?}"
            );
        }
    }

    #[test]
    fn the_line_format_round_trips() {
        let def = Definition::parse(SAMPLE).unwrap();
        assert_eq!(def.steps.len(), 3);
        let branches: Vec<&str> = def.steps[1].branches.iter().map(|b| b.as_str()).collect();
        assert_eq!(branches, ["legal", "finance"]);
        assert_eq!(def.steps[2].participant.as_str(), "payer");
        assert!(def.steps[0].participant.is_default());
        assert_eq!(
            def.steps[2].interaction,
            Interaction::Payment {
                amount_cents: 4990,
                currency: "EUR".into()
            }
        );
        assert_eq!(Definition::parse(&def.to_text()).unwrap(), def);
        assert_eq!(Definition::from_json(&def.to_json()).unwrap(), def);
    }

    #[test]
    fn errors_name_their_line() {
        let err = Definition::parse("review: fine\nquiz: What?").unwrap_err();
        assert_eq!(err.id, "definition-kind");
        assert_eq!(err.args, [("line", "2".to_string())]);
        for bad in [
            "",
            "review[Legal]: x",
            "review[a,a]: x",
            "payment: x | 1.5 EUR",
            "form: x | a (date)",
            "form: x",
            "review@: x",
            "review@Legal: x",
            "review[a,b]@c: x",
        ] {
            assert!(Definition::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn form_answers_are_checked_and_kept() {
        let def = Definition::parse(SAMPLE).unwrap();
        let Interaction::Form { fields } = &def.steps[0].interaction else {
            panic!()
        };
        let check = check_form(
            fields,
            &[
                ("company".into(), "".into()),
                ("email".into(), "not-an-email".into()),
                ("quantity".into(), "many".into()),
            ],
        );
        let failed: Vec<_> = check
            .errors
            .iter()
            .map(|(f, m)| (f.as_str(), m.id))
            .collect();
        assert_eq!(
            failed,
            [
                ("company", "field-required"),
                ("email", "field-email"),
                ("quantity", "field-number")
            ]
        );
        assert_eq!(check.values[1], ("email".into(), "not-an-email".into()));
    }
}

#[cfg(test)]
mod words_tests {
    use super::*;

    const TRANSLATED: &str = "form@supplier: Supplier details | Company*, Notes (long)\n\
                              \x20 fr: Fournisseur | Société, Remarques\n\
                              review@reviewer: Check | show 1\n\
                              \x20 fr: Vérifier\n";

    #[test]
    fn a_step_speaks_the_visitors_language_else_its_own() {
        let def = Definition::parse(TRANSLATED).unwrap();
        let form = &def.steps[0];
        assert_eq!(form.title_in(Lang::Fr), "Fournisseur");
        assert_eq!(form.title_in(Lang::En), "Supplier details");
        assert_eq!(form.label_in(Lang::Fr, 1), Some("Remarques"));
        assert_eq!(form.label_named(Lang::En, "company"), Some("Company"));
        assert_eq!(form.label_in(Lang::Fr, 2), None);
        assert_eq!(def.steps[1].shows, [0]);
        assert_eq!(Definition::parse(&def.to_text()).unwrap(), def);
        assert_eq!(Definition::from_json(&def.to_json()).unwrap(), def);
        // A definition saved before translations existed reads as before.
        let old = r#"{"steps":[{"title":"T","interaction":{"kind":"review"}}]}"#;
        assert!(
            Definition::from_json(old).unwrap().steps[0]
                .translations
                .is_empty()
        );
    }

    #[test]
    fn a_choice_and_help_are_parsed_translated_and_checked() {
        let text = "form: Order | Size* (choice: Small / Medium / Large), Note | help: Pick one.\n\
                    \x20 fr: Commande | Taille (Petit / Moyen / Grand), Remarque | help: Choisissez.\n";
        let def = Definition::parse(text).unwrap();
        let step = &def.steps[0];
        let Interaction::Form { fields } = &step.interaction else {
            panic!()
        };
        assert_eq!(fields[0].kind, FieldKind::Choice);
        assert_eq!(fields[0].options, ["Small", "Medium", "Large"]);
        assert_eq!(step.options_in(Lang::Fr, 0), ["Petit", "Moyen", "Grand"]);
        assert_eq!(step.options_in(Lang::En, 0), ["Small", "Medium", "Large"]);
        assert!(step.options_in(Lang::Fr, 1).is_empty());
        assert_eq!(step.help_in(Lang::Fr), "Choisissez.");
        assert_eq!(step.help_in(Lang::En), "Pick one.");
        assert_eq!(step.option_named(Lang::Fr, "size", "Medium"), Some("Moyen"));
        assert_eq!(Definition::parse(&def.to_text()).unwrap(), def);
        let ok = check_form(fields, &[("size".into(), "medium".into())]);
        assert!(ok.errors.is_empty());
        assert_eq!(fields[0].option_of("medium"), Some("Medium"));
        let bad = check_form(fields, &[("size".into(), "huge".into())]);
        assert_eq!(bad.errors[0].1.id, "field-choice");
        for (text, id) in [
            ("form: A | S (choice: One)\n", "definition-options"),
            ("form: A | S (choice: One / one)\n", "definition-options"),
            (
                "form: A | S (choice: One / Two)\n fr: B | S (Un)\n",
                "definition-translation-options",
            ),
            ("review: A | help:\n", "definition-help"),
            ("review: A | help: x | help: y\n", "definition-help"),
        ] {
            let errors = Definition::parse_all(text).unwrap_err();
            assert_eq!(errors[0].id, id, "{text:?}");
        }
    }

    #[test]
    fn bad_show_and_translation_lines_name_their_line() {
        for (text, id) in [
            ("review: A | show 1\n", "definition-show"),
            ("review: A\nreview: B | show 2\n", "definition-show"),
            ("review: A\nreview: B | show 0\n", "definition-show"),
            ("fr: Titre\nreview: A\n", "definition-translation-first"),
            (
                "review: A\n fr: B\n fr: C\n",
                "definition-translation-twice",
            ),
            (
                "form: A | X, Y\n fr: B | X\n",
                "definition-translation-labels",
            ),
            ("review: A\n fr: B | X\n", "definition-segments"),
            ("review: A | oops\n", "definition-segments"),
            ("form: A | X | Y\n", "definition-segments"),
        ] {
            let errors = Definition::parse_all(text).unwrap_err();
            assert_eq!(errors[0].id, id, "{text:?}");
            assert!(errors[0].args.iter().any(|(k, _)| *k == "line"), "{text:?}");
        }
        // A label that starts with the word is a label, not a list of steps.
        let def = Definition::parse("form: A | show size\n").unwrap();
        assert!(def.steps[0].shows.is_empty());
    }
}

#[cfg(test)]
mod requests_tests {
    use super::*;

    #[test]
    fn a_form_then_a_payment_on_one_link_is_four_requests() {
        let d = Definition::parse("form@payer: Address | Name*\npayment@payer: Pay | 49.90 EUR\n")
            .unwrap();
        assert_eq!(d.requests_per_link(), 4);
        // The page, the answer, and the thank-you page it redirects to.
        let two = Definition::parse("review[legal,finance]: Approve\n").unwrap();
        assert_eq!(two.requests_per_link(), 3);
        assert_eq!(suggested_per_link(), 12);
    }
}
