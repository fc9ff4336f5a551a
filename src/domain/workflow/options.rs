//! The line format's kinds, field types and options in tables: the editor's help is written
//! from them, and so are docs/workflows.md's lists (a test holds them together), so a new type
//! or option is documented where it is parsed or nowhere.

use super::FieldKind;
use crate::i18n::{Lang, tr};

/// One line of the table: an example as a definition writes it, and what it does (a message
/// id; `$types` is given the field types).
pub struct Documented {
    pub example: &'static str,
    pub help: &'static str,
}

/// A step's kinds.
pub const KINDS: &[Documented] = &[
    Documented {
        example: "form@employee: Expense claim | Amount* (number), Purpose* (choice: Travel / Meals / Other), Notes (long)",
        help: "kind-form-help",
    },
    Documented {
        example: "review[legal,finance]: Approve the contract",
        help: "kind-review-help",
    },
    Documented {
        example: "payment@payer: Pay the order | 49.90 EUR",
        help: "kind-payment-help",
    },
];

/// A form's field types, in `FieldKind::ALL`'s order, each as a field writes it.
pub const TYPES: &[Documented] = &[
    Documented {
        example: "Company* (text)",
        help: "type-text-help",
    },
    Documented {
        example: "Notes (long)",
        help: "type-long-help",
    },
    Documented {
        example: "Amount* (number, 0..100000)",
        help: "type-number-help",
    },
    Documented {
        example: "Email* (email)",
        help: "type-email-help",
    },
    Documented {
        example: "Due date* (date)",
        help: "type-date-help",
    },
    Documented {
        example: "I accept the terms* (checkbox)",
        help: "type-checkbox-help",
    },
    Documented {
        example: "Website (url)",
        help: "type-url-help",
    },
    Documented {
        example: "Purpose* (choice: Travel / Meals / Other)",
        help: "type-choice-help",
    },
    Documented {
        example: "Receipt* (file), Certificate* (file, 5 MB, pdf)",
        help: "type-file-help",
    },
];

/// A step's options, each after a bar on its line, and the translation line under it.
pub const OPTIONS: &[Documented] = &[
    Documented {
        example: "| show 1",
        help: "workflow-show-help",
    },
    Documented {
        example: "| help: Pick the size you wear.",
        help: "option-help-help",
    },
    Documented {
        example: "| only if Amount > 1000 and Purpose = Travel",
        help: "option-only-if-help",
    },
    Documented {
        example: "| 2 of 3",
        help: "option-quorum-help",
    },
    Documented {
        example: "| remind 2d x3",
        help: "option-remind-help",
    },
    Documented {
        example: "| expires 7d",
        help: "option-expires-help",
    },
    Documented {
        example: "| expires 7d then next",
        help: "option-expires-next-help",
    },
    Documented {
        example: "| expires 3d then to director",
        help: "option-expires-to-help",
    },
    Documented {
        example: "| forward",
        help: "option-forward-help",
    },
    Documented {
        example: "| verify email",
        help: "option-verify-email-help",
    },
    Documented {
        example: "| on reject back to 1",
        help: "option-reject-back-help",
    },
    Documented {
        example: "| on reject go 4",
        help: "option-reject-go-help",
    },
    Documented {
        example: "| on approve go end",
        help: "option-approve-go-help",
    },
    Documented {
        example: "| if Amount > 5000 go 4",
        help: "option-if-go-help",
    },
    Documented {
        example: "| rounds 3",
        help: "option-rounds-help",
    },
    Documented {
        example: "notify: finance, director",
        help: "option-notify-help",
    },
    Documented {
        example: "keep: 365 days",
        help: "option-keep-help",
    },
    Documented {
        example: "  fr: Vérifier le fournisseur | Société",
        help: "workflow-translation-help",
    },
];

/// What a line of the table does, in a language.
pub fn help(line: &Documented, lang: Lang) -> String {
    tr(lang, line.help, &[("types", &FieldKind::names())])
}

/// The kinds and options as docs/workflows.md lists them, in English.
pub fn markdown() -> String {
    table("kind or option", KINDS.iter().chain(OPTIONS))
}

/// The field types as docs/workflows.md lists them, in English.
pub fn types_markdown() -> String {
    table("field type", TYPES.iter())
}

fn table<'a>(head: &str, lines: impl Iterator<Item = &'a Documented>) -> String {
    let mut out = format!("| {head} | what it does |\n| --- | --- |\n");
    for line in lines {
        let example = line.example.replace('|', "\\|");
        let help = help(line, Lang::En).replace('|', "\\|");
        out.push_str(&format!("| `{example}` | {help} |\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::workflow::Definition;

    /// Every example parses, and says something in every language.
    #[test]
    fn every_example_is_a_definition_and_is_explained() {
        let base = "form@employee: Claim | Amount* (number), Purpose (choice: Travel / Meals)\n\
                    review@manager: Check\nreview@director: Sign\nreview@finance: Pay\n";
        for line in KINDS {
            Definition::parse(line.example).unwrap_or_else(|e| panic!("{}: {e:?}", line.example));
        }
        for line in OPTIONS {
            let step = if line.example.contains(" of ") {
                "review[alice,bob,carol]: Check"
            } else {
                "review@manager: Check"
            };
            let text = if line.example.starts_with("notify:") || line.example.starts_with("keep:") {
                format!("{base}{}\n", line.example)
            } else if line.example.starts_with("  ") {
                format!(
                    "review@manager: Vérifier\n{}\n",
                    line.example.replace(" | Société", "")
                )
            } else {
                base.replacen(
                    "review@manager: Check",
                    &format!("{step} {}", line.example),
                    1,
                )
            };
            Definition::parse(&text).unwrap_or_else(|e| panic!("{}: {e:?}", line.example));
        }
        for line in KINDS.iter().chain(OPTIONS).chain(TYPES) {
            for lang in Lang::ALL {
                assert_ne!(help(line, lang), line.help, "{} in {lang:?}", line.help);
            }
        }
        assert!(help(&KINDS[0], Lang::En).contains("choice"));
    }

    /// Every field type has its line, in `FieldKind::ALL`'s order, and its example is a
    /// form's fields of that type.
    #[test]
    fn every_field_type_is_documented_by_an_example_of_it() {
        assert_eq!(TYPES.len(), FieldKind::ALL.len());
        for (line, kind) in TYPES.iter().zip(FieldKind::ALL) {
            assert_eq!(line.help, format!("type-{}-help", kind.name()));
            let text = format!("form: Claim | {}\n", line.example);
            let definition =
                Definition::parse(&text).unwrap_or_else(|e| panic!("{}: {e:?}", line.example));
            let super::super::Interaction::Form { fields } = &definition.steps[0].interaction
            else {
                panic!("{}", line.example)
            };
            assert!(fields.iter().all(|f| f.kind == kind), "{}", line.example);
            assert_eq!(
                Definition::parse(&definition.to_text()).unwrap(),
                definition
            );
        }
    }

    fn block<'a>(docs: &'a str, name: &str) -> &'a str {
        let (start, end) = (
            format!("<!-- {name}:start -->\n"),
            format!("<!-- {name}:end -->"),
        );
        docs.split_once(&start)
            .and_then(|(_, rest)| rest.split_once(&end))
            .map(|(block, _)| block)
            .unwrap_or_else(|| panic!("docs/workflows.md has the {name} markers"))
    }

    /// docs/workflows.md lists what the editor's help lists, from the same tables. When an
    /// option or a type is added, the failure prints the block to paste between the markers.
    #[test]
    fn docs_list_every_kind_type_and_option() {
        let docs = include_str!("../../../docs/workflows.md");
        for (name, expected) in [("options", markdown()), ("types", types_markdown())] {
            assert!(
                block(docs, name) == expected,
                "docs/workflows.md's {name} list is out of date; paste:\n{expected}"
            );
        }
    }
}
