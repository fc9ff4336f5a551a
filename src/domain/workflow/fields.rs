//! What a step asks: its interaction kind, a form's fields and their kinds, how a form's answer
//! is checked, and how an amount is written.

use serde::{Deserialize, Serialize};

use crate::i18n::Message;

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
    /// Every kind, in the order the editor's help lists them.
    pub const ALL: [FieldKind; 5] = [
        Self::Text,
        Self::Long,
        Self::Number,
        Self::Email,
        Self::Choice,
    ];

    /// The kinds' names as a definition writes them, for an error that says what is allowed.
    pub fn names() -> String {
        Self::ALL.map(Self::name).join(", ")
    }

    pub(super) fn parse(s: &str) -> Option<Self> {
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

pub(super) fn slug(label: &str) -> String {
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
