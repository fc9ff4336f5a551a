//! The line format's kinds and options in one table: the editor's help is written from it, and
//! so is docs/workflows.md's list (a test holds the two together), so a new option is
//! documented where it is parsed or nowhere.

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
        example: "  fr: Vérifier le fournisseur | Société",
        help: "workflow-translation-help",
    },
];

/// What a line of the table does, in a language.
pub fn help(line: &Documented, lang: Lang) -> String {
    tr(lang, line.help, &[("types", &FieldKind::names())])
}

/// The table as docs/workflows.md lists it, in English.
pub fn markdown() -> String {
    let mut out = String::from("| kind or option | what it does |\n| --- | --- |\n");
    for line in KINDS.iter().chain(OPTIONS) {
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
            let text = if line.example.starts_with("notify:") {
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
        for line in KINDS.iter().chain(OPTIONS) {
            for lang in Lang::ALL {
                assert_ne!(help(line, lang), line.help, "{} in {lang:?}", line.help);
            }
        }
        assert!(help(&KINDS[0], Lang::En).contains("choice"));
    }

    /// docs/workflows.md lists what the editor's help lists, from the same table. When an
    /// option is added, the failure prints the block to paste between the markers.
    #[test]
    fn docs_list_every_kind_and_option() {
        let docs = include_str!("../../../docs/workflows.md");
        let (start, end) = ("<!-- options:start -->\n", "<!-- options:end -->");
        let block = docs
            .split_once(start)
            .and_then(|(_, rest)| rest.split_once(end))
            .map(|(block, _)| block)
            .expect("docs/workflows.md has the options markers");
        let expected = markdown();
        assert!(
            block == expected,
            "docs/workflows.md's list is out of date; paste:\n{expected}"
        );
    }
}
