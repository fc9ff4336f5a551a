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
    /// A file's size cap and accepted kinds; `None` for every other type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<FileRule>,
}

/// What a `(file)` field takes: at most `max_bytes`, of the kinds named.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileRule {
    pub max_bytes: u64,
    pub kinds: Vec<crate::domain::files::Kind>,
}

impl Default for FileRule {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_FILE_BYTES,
            kinds: crate::domain::files::Kind::SAFE.to_vec(),
        }
    }
}

/// A file field's cap when its definition names none.
pub const DEFAULT_FILE_BYTES: u64 = 10 << 20;
/// The most any file field may name: a site's own cap (a setting) is at most this.
pub const MAX_FILE_BYTES: u64 = 100 << 20;
/// File fields one form may hold.
pub const MAX_FILE_FIELDS: usize = 5;

impl FileRule {
    /// `5 MB`, `pdf image`, or both, comma-separated after `file`; sizes are binary
    /// (1 MB = 1,048,576 bytes) as a file manager shows them.
    pub(super) fn parse(args: &[&str]) -> Option<Self> {
        let mut rule = Self::default();
        let mut kinds = Vec::new();
        for arg in args {
            if let Some(bytes) = parse_size(arg) {
                if !(1..=MAX_FILE_BYTES).contains(&bytes) {
                    return None;
                }
                rule.max_bytes = bytes;
            } else {
                for word in arg.split_whitespace() {
                    let kind = crate::domain::files::Kind::parse(word)?;
                    if !kinds.contains(&kind) {
                        kinds.push(kind);
                    }
                }
            }
        }
        if !kinds.is_empty() {
            rule.kinds = kinds;
        }
        Some(rule)
    }

    /// The arguments as a definition writes them, after `file`.
    pub(super) fn to_text(&self) -> String {
        let mut out = String::new();
        if self.max_bytes != DEFAULT_FILE_BYTES {
            out.push_str(&format!(", {}", size_text(self.max_bytes)));
        }
        if self.kinds != crate::domain::files::Kind::SAFE {
            let names: Vec<&str> = self.kinds.iter().map(|k| k.name()).collect();
            out.push_str(&format!(", {}", names.join(" ")));
        }
        out
    }
}

/// `5 MB`, `500 KB`, `1.5 MB`, `2 GB` (binary units).
fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let unit: u64 = match unit.trim().to_ascii_uppercase().as_str() {
        "KB" | "KIB" | "K" => 1 << 10,
        "MB" | "MIB" | "M" => 1 << 20,
        "GB" | "GIB" | "G" => 1 << 30,
        _ => return None,
    };
    let bytes = number * unit as f64;
    (bytes.is_finite() && bytes >= 1.0 && bytes <= u64::MAX as f64).then_some(bytes as u64)
}

/// A size in the unit that writes it shortest: `5 MB`, `500 KB`.
pub fn size_text(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes % (1 << 20) == 0 {
        format!("{} MB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes % (1 << 10) == 0 {
        format!("{} KB", bytes >> 10)
    } else {
        format!("{bytes} B")
    }
}

/// Splits a list on the commas outside parentheses: `A (file, 5 MB), B` is two fields.
pub(super) fn split_outside_parens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
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
    File,
}

impl FieldKind {
    /// Every kind, in the order the editor's help lists them.
    pub const ALL: [FieldKind; 6] = [
        Self::Text,
        Self::Long,
        Self::Number,
        Self::Email,
        Self::Choice,
        Self::File,
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
            "file" => Some(Self::File),
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
            Self::File => "file",
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
