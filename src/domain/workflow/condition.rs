//! Conditions on earlier answers: `| only if Amount > 1000 and Purpose = Travel` skips a step
//! unless every condition holds. A condition names a field of an earlier step by its label in
//! that step's own words; numbers compare as numbers, text and choices as text.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{Definition, FieldKind, Interaction, Step};
use crate::i18n::Message;

/// One comparison of an earlier step's field with a value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Condition {
    /// The earlier step (0-based) whose field it reads.
    pub step: usize,
    /// The field's name (its slug) in that step.
    pub field: String,
    pub op: Op,
    pub value: String,
}

/// A comparison. Ordering ones need a number field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// Each operator's spellings, the longer first where one begins another: how a definition may
/// write it. The first spelling is how it is written back.
const SPELLINGS: [(&str, Op); 9] = [
    ("≠", Op::Ne),
    ("!=", Op::Ne),
    ("≤", Op::Le),
    ("<=", Op::Le),
    ("≥", Op::Ge),
    (">=", Op::Ge),
    ("=", Op::Eq),
    ("<", Op::Lt),
    (">", Op::Gt),
];

impl Op {
    pub fn symbol(self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::Ne => "≠",
            Op::Lt => "<",
            Op::Le => "≤",
            Op::Gt => ">",
            Op::Ge => "≥",
        }
    }

    fn orders(self) -> bool {
        !matches!(self, Op::Eq | Op::Ne)
    }

    fn holds(self, ordering: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match self {
            Op::Eq => ordering == Equal,
            Op::Ne => ordering != Equal,
            Op::Lt => ordering == Less,
            Op::Le => ordering != Greater,
            Op::Gt => ordering == Greater,
            Op::Ge => ordering != Less,
        }
    }
}

/// The operators as an error lists them.
pub fn operators() -> &'static str {
    "=, ≠ (!=), <, ≤ (<=), >, ≥ (>=)"
}

/// A number as a form's number field takes it: `1000`, `1000.50`, `1000,50`; an answer is
/// stored canonically (`1250.5`), and one recorded before that (`1 250,50`) is read as an
/// English visitor's.
fn number(text: &str) -> Option<f64> {
    let plain = |t: &str| t.trim().replace(',', ".").parse::<f64>().ok();
    plain(text)
        .or_else(|| plain(&super::values::parse_number(text, crate::i18n::Lang::En).ok()?))
        .filter(|n| n.is_finite())
}

/// The answers given so far, by step (0-based) and field name: the latest answer of each.
#[derive(Debug, Default)]
pub struct Answers(HashMap<(usize, String), String>);

impl Answers {
    /// From the history's answer lines `(step, branch, answer JSON)`, oldest first: a later
    /// answer of a step replaces an earlier one.
    pub fn from_history(rows: &[(i64, String, String)]) -> Self {
        let mut answers = Self::default();
        for (step, _, json) in rows {
            answers.put_json(usize::try_from(*step).unwrap_or(usize::MAX), json);
        }
        answers
    }

    /// Notes an answer (its JSON as recorded) given at `step`.
    pub fn put_json(&mut self, step: usize, json: &str) {
        #[derive(Deserialize)]
        struct Fields {
            fields: Vec<Field>,
        }
        #[derive(Deserialize)]
        struct Field {
            name: String,
            value: String,
        }
        if let Ok(given) = serde_json::from_str::<Fields>(json) {
            for f in given.fields {
                self.0.insert((step, f.name), f.value);
            }
        }
    }

    pub fn get(&self, step: usize, field: &str) -> Option<&str> {
        self.0.get(&(step, field.to_owned())).map(String::as_str)
    }
}

impl Condition {
    /// Whether it holds over `answers`. A field left empty, or a number that is none, holds no
    /// condition but `≠`.
    pub fn holds(&self, definition: &Definition, answers: &Answers) -> bool {
        let given = answers.get(self.step, &self.field).unwrap_or("").trim();
        let numeric = definition
            .steps
            .get(self.step)
            .and_then(|s| s.field_kind(&self.field))
            == Some(FieldKind::Number);
        let ordering = if numeric {
            number(given)
                .zip(number(&self.value))
                .and_then(|(a, b)| a.partial_cmp(&b))
        } else if given.is_empty() {
            None
        } else {
            Some(given.to_lowercase().cmp(&self.value.to_lowercase()))
        };
        match ordering {
            Some(o) => self.op.holds(o),
            None => self.op == Op::Ne,
        }
    }
}

/// `Amount > 1000 and Purpose = Travel` on a step after `earlier`: the conditions, or what is
/// wrong with them (the caller adds the line).
pub fn parse(text: &str, earlier: &[Step]) -> Result<Vec<Condition>, Message> {
    text.split(" and ")
        .map(|one| parse_one(one.trim(), earlier))
        .collect()
}

fn parse_one(text: &str, earlier: &[Step]) -> Result<Condition, Message> {
    let found = text.char_indices().find_map(|(at, _)| {
        SPELLINGS
            .iter()
            .find(|(spelling, _)| text[at..].starts_with(spelling))
            .map(|&(spelling, op)| (at, spelling.len(), op))
    });
    let Some((at, len, op)) = found else {
        return Err(Message::new("definition-condition").arg("operators", operators()));
    };
    let label = text[..at].trim();
    let value = text[at + len..].trim();
    if label.is_empty() || value.is_empty() || value.chars().count() > 200 {
        return Err(Message::new("definition-condition").arg("operators", operators()));
    }
    // The most recent earlier step asking a field of that label.
    let found = earlier.iter().enumerate().rev().find_map(|(index, step)| {
        let Interaction::Form { fields } = &step.interaction else {
            return None;
        };
        fields
            .iter()
            .find(|f| f.label.to_lowercase() == label.to_lowercase())
            .map(|f| (index, f))
    });
    let Some((step, field)) = found else {
        let labels: Vec<&str> = earlier
            .iter()
            .filter_map(|s| match &s.interaction {
                Interaction::Form { fields } => Some(fields),
                _ => None,
            })
            .flatten()
            .map(|f| f.label.as_str())
            .collect();
        return Err(if labels.is_empty() {
            Message::new("definition-condition-nothing-before").arg("field", label)
        } else {
            Message::new("definition-condition-field")
                .arg("field", label)
                .arg("allowed", labels.join(", "))
        });
    };
    let named = |id: &'static str| {
        Message::new(id)
            .arg("field", field.label.clone())
            .arg("value", value)
    };
    match field.kind {
        FieldKind::Number if number(value).is_none() => {
            return Err(named("definition-condition-number"));
        }
        FieldKind::Number => {}
        _ if op.orders() => return Err(named("definition-condition-order")),
        FieldKind::Choice => {
            let option = field
                .options
                .iter()
                .find(|o| o.to_lowercase() == value.to_lowercase())
                .ok_or_else(|| {
                    named("definition-condition-option").arg("allowed", field.options.join(" / "))
                })?;
            return Ok(Condition {
                step,
                field: field.name.clone(),
                op,
                value: option.clone(),
            });
        }
        _ => {}
    }
    Ok(Condition {
        step,
        field: field.name.clone(),
        op,
        value: value.to_owned(),
    })
}

/// The conditions as a definition writes them, after `only if `.
pub fn to_text(conditions: &[Condition], definition_steps: &[Step]) -> String {
    conditions
        .iter()
        .map(|c| {
            let label = match definition_steps.get(c.step).map(|s| &s.interaction) {
                Some(Interaction::Form { fields }) => fields
                    .iter()
                    .find(|f| f.name == c.field)
                    .map_or(c.field.as_str(), |f| f.label.as_str()),
                _ => c.field.as_str(),
            };
            format!("{label} {} {}", c.op.symbol(), c.value)
        })
        .collect::<Vec<_>>()
        .join(" and ")
}

/// Where an instance goes after step `from` closes: the first later step whose conditions hold
/// over `answers` (`None`: past the last, so complete), and the steps skipped on the way.
pub fn next_after(
    definition: &Definition,
    from: usize,
    answers: &Answers,
) -> (Option<usize>, Vec<usize>) {
    let mut skipped = Vec::new();
    for index in from + 1..definition.steps.len() {
        let step = &definition.steps[index];
        if step.only_if.iter().all(|c| c.holds(definition, answers)) {
            return (Some(index), skipped);
        }
        skipped.push(index);
    }
    (None, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::Lang;

    const CLAIM: &str = "form@employee: Expense claim | Amount* (number), Purpose* (choice: Travel / Meals / Other), Notes\n\
                         review@manager: Manager review\n\
                         review@finance: Finance review | only if Amount > 1000\n\
                         review@travel: Travel desk | only if purpose = travel and Amount ≤ 5000\n";

    fn answers(amount: &str, purpose: &str) -> Answers {
        let mut a = Answers::default();
        a.put_json(
            0,
            &serde_json::json!({"fields": [
                {"name": "amount", "label": "Amount", "value": amount},
                {"name": "purpose", "label": "Purpose", "value": purpose},
            ]})
            .to_string(),
        );
        a
    }

    fn error(text: &str) -> String {
        Definition::parse(text).unwrap_err().render(Lang::En)
    }

    #[test]
    fn a_step_is_asked_only_when_its_conditions_hold_over_earlier_answers() {
        let d = Definition::parse(CLAIM).unwrap();
        // Under 1,000 finance is passed over; the travel desk asked for travel.
        assert_eq!(
            next_after(&d, 1, &answers("500", "Travel")),
            (Some(3), vec![2])
        );
        // Numbers compare as numbers ("999.5" is less than "1000", "1000,01" more).
        assert_eq!(
            next_after(&d, 1, &answers("999.5", "Meals")),
            (None, vec![2, 3])
        );
        assert_eq!(
            next_after(&d, 1, &answers("1000,01", "Meals")),
            (Some(2), vec![])
        );
        // Stored canonically ("1250.5"), or as typed before numbers were ("1 250,50").
        for given in ["1250.5", "1 250,50", "1\u{202f}250,50"] {
            assert_eq!(
                next_after(&d, 1, &answers(given, "Meals")),
                (Some(2), vec![]),
                "{given}"
            );
        }
        // Over 5,000 neither travel condition holds: past the last step, complete.
        assert_eq!(
            next_after(&d, 2, &answers("6000", "Travel")),
            (None, vec![3])
        );
        // A field left empty holds no condition.
        assert_eq!(
            next_after(&d, 1, &answers("", "Travel")),
            (None, vec![2, 3])
        );
        // Written back as it reads, the choice in the option's own words.
        let text = d.to_text();
        assert!(text.contains("| only if Amount > 1000\n"), "{text}");
        assert!(
            text.contains("| only if Purpose = Travel and Amount ≤ 5000\n"),
            "{text}"
        );
        assert_eq!(Definition::parse(&text).unwrap(), d);
    }

    #[test]
    fn every_operator_has_its_spellings() {
        for (written, op) in [
            ("=", Op::Eq),
            ("≠", Op::Ne),
            ("!=", Op::Ne),
            ("<", Op::Lt),
            ("≤", Op::Le),
            ("<=", Op::Le),
            (">", Op::Gt),
            ("≥", Op::Ge),
            (">=", Op::Ge),
        ] {
            let text =
                format!("form: A | Amount (number)\nreview: B | only if Amount {written} 10\n");
            let d = Definition::parse(&text).unwrap();
            assert_eq!(d.steps[1].only_if[0].op, op, "{written}");
        }
    }

    #[test]
    fn a_bad_condition_names_its_line_the_field_and_what_is_allowed() {
        assert_eq!(
            error("form: A | Amount (number)\nreview: B | only if Total > 10\n"),
            "Line 2: “Total” is no field of an earlier step; a condition can read Amount."
        );
        assert_eq!(
            error("review: B | only if Amount > 10\n"),
            "Line 1: \"only if Amount\" reads an earlier answer, but no step before this one asks a field."
        );
        assert_eq!(
            error("form: A | Amount (number)\nreview: B | only if Amount > ten\n"),
            "Line 2: “ten” is not a number to compare “Amount” with."
        );
        assert_eq!(
            error("form: A | Name\nreview: B | only if Name > Bob\n"),
            "Line 2: “Name” is not a number field; compare it with = or ≠."
        );
        assert_eq!(
            error("form: A | Size (choice: S / M)\nreview: B | only if Size = XL\n"),
            "Line 2: “XL” is not an option of “Size”: S / M."
        );
        assert!(
            error("form: A | Amount (number)\nreview: B | only if Amount is big\n")
                .starts_with("Line 2: write a condition as a field of an earlier step"),
        );
        // A later step's field is not an earlier answer.
        assert!(
            error("review: B | only if Amount > 1\nform: A | Amount (number)\n")
                .starts_with("Line 1:"),
        );
    }

    #[test]
    fn definitions_without_conditions_are_stored_as_before() {
        let d = Definition::parse("form: A | Amount (number)\nreview: B\n").unwrap();
        assert!(!d.to_json().contains("only_if"));
    }
}
