//! A workflow's label in each language. `workflows.label` is the label in the default language
//! and what any language without its own label shows; `workflows.labels` holds the others as a
//! JSON object, language code to label (`{"fr": "Intégration des fournisseurs"}`).

use std::collections::BTreeMap;

use crate::i18n::Lang;

/// The label of a workflow whose stored label is `label` and other labels `labels` (the JSON
/// column), in `lang`: its own label there, else `label`. Unreadable JSON falls back too: a
/// name in the wrong language is better than none.
pub fn label_in(label: &str, labels: &str, lang: Lang) -> String {
    if lang == Lang::default() {
        return label.to_owned();
    }
    parse(labels)
        .remove(lang.code())
        .filter(|l| !l.trim().is_empty())
        .unwrap_or_else(|| label.to_owned())
}

/// [`label_in`] for a workflow that may be gone (`label` `None`): `None` then.
pub fn maybe_label_in(label: Option<&str>, labels: Option<&str>, lang: Lang) -> Option<String> {
    label.map(|l| label_in(l, labels.unwrap_or("{}"), lang))
}

/// The languages a workflow may have a label of its own in, besides `label`'s.
pub fn others() -> impl Iterator<Item = Lang> {
    Lang::ALL.into_iter().filter(|&l| l != Lang::default())
}

/// The stored labels as language and label, in [`others`]' order; unknown codes are dropped.
pub fn read(labels: &str) -> Vec<(Lang, String)> {
    let mut map = parse(labels);
    others()
        .filter_map(|lang| map.remove(lang.code()).map(|l| (lang, l)))
        .collect()
}

/// The labels to store: each trimmed, the empty ones left out.
pub fn to_json(labels: &[(Lang, String)]) -> String {
    let map: BTreeMap<&str, &str> = labels
        .iter()
        .filter(|(lang, l)| *lang != Lang::default() && !l.trim().is_empty())
        .map(|(lang, l)| (lang.code(), l.trim()))
        .collect();
    serde_json::to_string(&map).unwrap_or_else(|_| "{}".into())
}

/// The form field (and problem key) of the label in `lang`: `label_fr`.
pub fn field(lang: Lang) -> &'static str {
    match lang {
        Lang::En => "label_en",
        Lang::Fr => "label_fr",
    }
}

fn parse(labels: &str) -> BTreeMap<String, String> {
    serde_json::from_str(labels).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_falls_back_to_the_default_one() {
        let stored = to_json(&[(Lang::Fr, "  Contrats ".into())]);
        assert_eq!(stored, r#"{"fr":"Contrats"}"#);
        assert_eq!(label_in("Contracts", &stored, Lang::Fr), "Contrats");
        assert_eq!(label_in("Contracts", &stored, Lang::En), "Contracts");
        assert_eq!(label_in("Contracts", "{}", Lang::Fr), "Contracts");
        assert_eq!(label_in("Contracts", "not json", Lang::Fr), "Contracts");
        assert_eq!(to_json(&[(Lang::Fr, " ".into())]), "{}");
        assert_eq!(read(&stored), [(Lang::Fr, "Contrats".to_owned())]);
    }
}
