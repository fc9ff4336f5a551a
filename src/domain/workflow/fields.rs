//! What a step asks: its interaction kind, a form's fields and their kinds, how a form's answer
//! is checked, and how an amount is written.

use serde::{Deserialize, Serialize};

use super::values;
use crate::i18n::{Lang, Message};

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
    /// A number's inclusive bounds, min then max (`(number, 0..100000)`); `None` for none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<(f64, f64)>,
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
    /// The field as a definition writes it: `Amount* (number, 0..100000)`.
    pub(super) fn to_text(&self) -> String {
        let star = if self.required { "*" } else { "" };
        let args = if self.kind == FieldKind::Choice {
            format!(": {}", self.options.join(" / "))
        } else if let Some(rule) = &self.file {
            rule.to_text()
        } else if let Some((min, max)) = self.range {
            format!(", {}..{}", values::bound_text(min), values::bound_text(max))
        } else {
            String::new()
        };
        format!("{}{star} ({}{args})", self.label, self.kind.name())
    }

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
    Date,
    Checkbox,
    Url,
}

impl FieldKind {
    /// Every kind, in the order the editor's help lists them.
    pub const ALL: [FieldKind; 9] = [
        Self::Text,
        Self::Long,
        Self::Number,
        Self::Email,
        Self::Date,
        Self::Checkbox,
        Self::Url,
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
            "date" => Some(Self::Date),
            "checkbox" => Some(Self::Checkbox),
            "url" => Some(Self::Url),
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
            Self::Date => "date",
            Self::Checkbox => "checkbox",
            Self::Url => "url",
        }
    }

    fn max_len(self) -> usize {
        match self {
            Self::Long => 5000,
            Self::Url => values::MAX_URL,
            _ => 200,
        }
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

/// A form answer checked against its fields: the values as typed (given back with the
/// errors), as stored (canonical, see `values`), and an error per field.
pub struct FormCheck {
    pub values: Vec<(String, String)>,
    pub stored: Vec<(String, String)>,
    pub errors: Vec<(String, Message)>,
}

/// Checks a form's answer as typed by a visitor reading `lang`, which says how they write
/// numbers and dates.
pub fn check_form(fields: &[Field], submitted: &[(String, String)], lang: Lang) -> FormCheck {
    let mut check = FormCheck {
        values: Vec::new(),
        stored: Vec::new(),
        errors: Vec::new(),
    };
    for field in fields {
        let value = submitted
            .iter()
            .find(|(k, _)| *k == field.name)
            .map(|(_, v)| v.trim().to_owned())
            .unwrap_or_default();
        let stored = if value.is_empty() {
            if field.required {
                Err(Message::new(if field.kind == FieldKind::Checkbox {
                    "field-checkbox-required"
                } else {
                    "field-required"
                }))
            } else {
                Ok(String::new())
            }
        } else if value.chars().count() > field.kind.max_len() {
            Err(Message::new("field-too-long").arg("max", field.kind.max_len().to_string()))
        } else {
            canonical(field, &value, lang)
        };
        match stored {
            Ok(stored) => check.stored.push((field.name.clone(), stored)),
            Err(e) => check.errors.push((field.name.clone(), e)),
        }
        check.values.push((field.name.clone(), value));
    }
    check
}

/// A value typed in a field, not empty, as stored; or why it is refused.
fn canonical(field: &Field, value: &str, lang: Lang) -> Result<String, Message> {
    match field.kind {
        FieldKind::Choice if !field.options.iter().any(|o| slug(o) == value) => {
            Err(Message::new("field-choice"))
        }
        FieldKind::Email if !looks_like_email(value) => Err(Message::new("field-email")),
        FieldKind::Number => {
            let number = values::parse_number(value, lang)?;
            match field.range {
                Some((min, max)) if number.parse::<f64>().map_or(true, |n| n < min || n > max) => {
                    let shown = |b: f64| {
                        let text = values::bound_text(b);
                        values::show_number(&text, lang).unwrap_or(text)
                    };
                    Err(Message::new("field-number-range")
                        .arg("min", shown(min))
                        .arg("max", shown(max)))
                }
                _ => Ok(number),
            }
        }
        FieldKind::Date => values::parse_date(value, lang),
        FieldKind::Url => values::parse_url(value),
        // Whatever a ticked box posts, it is stored as ticked.
        FieldKind::Checkbox => Ok(values::TICKED.to_owned()),
        _ => Ok(value.to_owned()),
    }
}

/// A stored value as a reader sees it in `lang`: numbers and dates in the reader's writing, a
/// checkbox as yes or no, a web address also as a link; any other value, or one recorded
/// before it was stored canonically, as recorded.
pub fn shown_value(kind: Option<FieldKind>, stored: &str, lang: Lang) -> Shown {
    let text = match kind {
        Some(FieldKind::Number) => values::show_number(stored, lang),
        Some(FieldKind::Date) => values::show_date(stored, lang),
        Some(FieldKind::Checkbox) => Some(crate::i18n::tr(
            lang,
            if stored.is_empty() {
                "field-checkbox-no"
            } else {
                "field-checkbox-yes"
            },
            &[],
        )),
        _ => None,
    };
    Shown {
        text: text.unwrap_or_else(|| stored.to_owned()),
        link: (kind == Some(FieldKind::Url))
            .then(|| values::link_of(stored))
            .flatten(),
        file: None,
    }
}

/// An answer's value as shown: its text, and for a web address the link it opens (only one
/// `values::parse_url` takes: http or https); for a file, its id, which the page showing it
/// makes a download of (`link`) under its own address.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Shown {
    pub text: String,
    pub link: Option<String>,
    pub file: Option<i64>,
}

impl Shown {
    pub fn text(text: String) -> Self {
        Self {
            text,
            link: None,
            file: None,
        }
    }
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

/// `Small / Medium / Large`: 2 to `MAX_OPTIONS` distinct options of at most 100 characters.
pub(super) fn parse_options(list: &str) -> Option<Vec<String>> {
    let options: Vec<String> = list.split('/').map(|o| o.trim().to_owned()).collect();
    let mut slugs: Vec<String> = options.iter().map(|o| slug(o)).collect();
    let ok = (2..=MAX_OPTIONS).contains(&options.len())
        && options.iter().all(|o| o.chars().count() <= 100)
        && slugs.iter().all(|s| !s.is_empty());
    slugs.sort();
    slugs.dedup();
    (ok && slugs.len() == options.len()).then_some(options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::workflow::Definition;

    fn form(text: &str) -> Vec<Field> {
        let definition = Definition::parse(text).unwrap();
        assert_eq!(
            Definition::parse(&definition.to_text()).unwrap(),
            definition
        );
        match &definition.steps[0].interaction {
            Interaction::Form { fields } => fields.clone(),
            _ => panic!("{text}"),
        }
    }

    fn check(fields: &[Field], posted: &[(&str, &str)], lang: Lang) -> FormCheck {
        let posted: Vec<(String, String)> = posted
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        check_form(fields, &posted, lang)
    }

    #[test]
    fn typed_values_are_stored_canonically_and_given_back_as_typed() {
        let fields = form(
            "form: Claim | Amount* (number, 0..100000), Due* (date), Site (url), Agree* (checkbox)\n",
        );
        assert_eq!(fields[0].range, Some((0.0, 100000.0)));
        let ok = check(
            &fields,
            &[
                ("amount", "1\u{202f}250,50"),
                ("due", "31/12/2027"),
                ("site", "HTTPS://Example.org"),
                ("agree", "yes"),
            ],
            Lang::Fr,
        );
        assert!(ok.errors.is_empty(), "{:?}", ok.errors);
        let stored: Vec<&str> = ok.stored.iter().map(|(_, v)| v.as_str()).collect();
        assert_eq!(
            stored,
            ["1250.5", "2027-12-31", "https://example.org/", "yes"]
        );
        assert_eq!(ok.values[0].1, "1\u{202f}250,50");

        let bad = check(
            &fields,
            &[
                ("amount", "100000,5"),
                ("due", "31/02/2027"),
                ("site", "javascript:alert(1)"),
            ],
            Lang::Fr,
        );
        let ids: Vec<(&str, &str)> = bad.errors.iter().map(|(f, m)| (f.as_str(), m.id)).collect();
        assert_eq!(
            ids,
            [
                ("amount", "field-number-range"),
                ("due", "field-date-impossible"),
                ("site", "field-url"),
                ("agree", "field-checkbox-required"),
            ]
        );
        assert_eq!(
            bad.errors[0].1.render(Lang::Fr),
            "Saisissez un nombre de 0 à 100\u{202f}000."
        );
        assert_eq!(bad.values[1].1, "31/02/2027");
        // An optional box left unticked is stored empty.
        let optional = form("form: A | Newsletter (checkbox)\n");
        assert_eq!(check(&optional, &[], Lang::En).stored[0].1, "");
    }

    #[test]
    fn a_field_stored_before_bounds_existed_still_loads_and_writes_none() {
        let old = r#"{"name":"amount","label":"Amount","kind":"number","required":true}"#;
        let field: Field = serde_json::from_str(old).unwrap();
        assert_eq!(field.range, None);
        assert_eq!(serde_json::to_string(&field).unwrap(), old);
    }

    #[test]
    fn stored_values_are_shown_in_the_readers_writing() {
        let shown = |kind, v| shown_value(Some(kind), v, Lang::Fr).text;
        assert_eq!(shown(FieldKind::Number, "1250.5"), "1\u{202f}250,5");
        assert_eq!(shown(FieldKind::Number, "1 250,50"), "1 250,50");
        assert_eq!(shown(FieldKind::Date, "2027-12-31"), "31 décembre 2027");
        assert_eq!(shown(FieldKind::Checkbox, "yes"), "Oui");
        let url = shown_value(Some(FieldKind::Url), "https://example.org/", Lang::En);
        assert_eq!(url.link.as_deref(), Some("https://example.org/"));
        let old = shown_value(Some(FieldKind::Url), "javascript:alert(1)", Lang::En);
        assert_eq!((old.text.as_str(), old.link), ("javascript:alert(1)", None));
        assert_eq!(
            shown_value(Some(FieldKind::Text), "https://x.org/", Lang::En).link,
            None
        );
    }
}
