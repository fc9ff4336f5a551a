//! A step's words in another language: the translation lines under a step of a definition
//! (`fr: Titre | Libellé, …`), read into the step's `translations`.

use super::fields::{parse_options, split_outside_parens};
use super::{FieldKind, Interaction, Step, StepText};
use crate::i18n::{Lang, Message};

/// A translation line (`fr: Titre | Libellé, …`, under the step it translates): its language
/// and its words. A step kind is never a language code, so the two cannot be confused.
pub(super) fn translation_line(line: &str) -> Option<(Lang, &str)> {
    let (head, words) = line.split_once(':')?;
    let head = head.trim();
    let lang = Lang::ALL.into_iter().find(|l| l.code() == head)?;
    Some((lang, words.trim()))
}

/// Adds a translation to a step: a title, and for a form one label per field in order.
pub(super) fn translate(
    step: &mut Step,
    lang: Lang,
    words: &str,
    line_number: usize,
) -> Result<(), Message> {
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
            let specs: Vec<&str> = split_outside_parens(labels)
                .into_iter()
                .map(str::trim)
                .collect();
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
    use crate::domain::workflow::Definition;
    use crate::domain::workflow::check_form;

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
        let ok = check_form(fields, &[("size".into(), "medium".into())], Lang::En);
        assert!(ok.errors.is_empty());
        assert_eq!(fields[0].option_of("medium"), Some("Medium"));
        let bad = check_form(fields, &[("size".into(), "huge".into())], Lang::En);
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
