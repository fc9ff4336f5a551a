//! Languages: a closed set, Fluent bundles compiled into the binary, and negotiation.
//!
//! The bundles are immutable statics; the language is always passed in, never global.

use std::borrow::Cow;
use std::sync::LazyLock;

use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Lang {
    #[default]
    En,
    Fr,
}

impl Lang {
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Fr];

    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Fr => "fr",
        }
    }

    /// The language's own name, for the switcher.
    pub fn native_name(self) -> &'static str {
        match self {
            Lang::En => "English",
            Lang::Fr => "Français",
        }
    }

    pub fn from_code(code: &str) -> Option<Lang> {
        let primary = code.split(['-', '_', '.']).next()?.trim();
        if primary.eq_ignore_ascii_case("en") {
            Some(Lang::En)
        } else if primary.eq_ignore_ascii_case("fr") {
            Some(Lang::Fr)
        } else {
            None
        }
    }

    /// The best language of an `Accept-Language` header by its q-values, or `None`.
    pub fn from_accept_language(header: &str) -> Option<Lang> {
        let mut best: Option<(f32, Lang)> = None;
        for item in header.split(',').take(16) {
            let mut parts = item.split(';');
            let Some(lang) = parts.next().and_then(|t| Lang::from_code(t.trim())) else {
                continue;
            };
            let q = parts
                .find_map(|p| p.trim().strip_prefix("q="))
                .and_then(|q| q.parse::<f32>().ok())
                .unwrap_or(1.0);
            if q > 0.0 && best.is_none_or(|(bq, _)| q > bq) {
                best = Some((q, lang));
            }
        }
        best.map(|(_, l)| l)
    }

    /// The language for a command-line run: `ORCHESTRA_LANG`, else `LANG`, else English.
    pub fn from_env() -> Lang {
        std::env::var("ORCHESTRA_LANG")
            .ok()
            .or_else(|| std::env::var("LANG").ok())
            .and_then(|v| Lang::from_code(&v))
            .unwrap_or_default()
    }
}

/// A translatable message: a Fluent id and its arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub id: &'static str,
    pub args: Vec<(&'static str, String)>,
}

impl Message {
    pub fn new(id: &'static str) -> Self {
        Self {
            id,
            args: Vec::new(),
        }
    }

    pub fn arg(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.args.push((name, value.into()));
        self
    }

    pub fn render(&self, lang: Lang) -> String {
        let pairs: Vec<(&str, &str)> = self.args.iter().map(|(k, v)| (*k, v.as_str())).collect();
        tr(lang, self.id, &pairs)
    }
}

/// Every file of every language, compiled in: one per area.
const FILES: &[(Lang, &str, &str)] = &[
    (Lang::En, "main.ftl", include_str!("../locales/en/main.ftl")),
    (
        Lang::En,
        "admin.ftl",
        include_str!("../locales/en/admin.ftl"),
    ),
    (
        Lang::En,
        "admins.ftl",
        include_str!("../locales/en/admins.ftl"),
    ),
    (
        Lang::En,
        "doorway.ftl",
        include_str!("../locales/en/doorway.ftl"),
    ),
    (
        Lang::En,
        "delivery.ftl",
        include_str!("../locales/en/delivery.ftl"),
    ),
    (Lang::En, "mail.ftl", include_str!("../locales/en/mail.ftl")),
    (
        Lang::En,
        "webhooks.ftl",
        include_str!("../locales/en/webhooks.ftl"),
    ),
    (
        Lang::En,
        "drawing.ftl",
        include_str!("../locales/en/drawing.ftl"),
    ),
    (
        Lang::En,
        "two_step.ftl",
        include_str!("../locales/en/two_step.ftl"),
    ),
    (
        Lang::En,
        "audit.ftl",
        include_str!("../locales/en/audit.ftl"),
    ),
    (Lang::Fr, "main.ftl", include_str!("../locales/fr/main.ftl")),
    (
        Lang::Fr,
        "admin.ftl",
        include_str!("../locales/fr/admin.ftl"),
    ),
    (
        Lang::Fr,
        "admins.ftl",
        include_str!("../locales/fr/admins.ftl"),
    ),
    (
        Lang::Fr,
        "doorway.ftl",
        include_str!("../locales/fr/doorway.ftl"),
    ),
    (
        Lang::Fr,
        "delivery.ftl",
        include_str!("../locales/fr/delivery.ftl"),
    ),
    (Lang::Fr, "mail.ftl", include_str!("../locales/fr/mail.ftl")),
    (
        Lang::Fr,
        "webhooks.ftl",
        include_str!("../locales/fr/webhooks.ftl"),
    ),
    (
        Lang::Fr,
        "drawing.ftl",
        include_str!("../locales/fr/drawing.ftl"),
    ),
    (
        Lang::Fr,
        "two_step.ftl",
        include_str!("../locales/fr/two_step.ftl"),
    ),
    (
        Lang::Fr,
        "audit.ftl",
        include_str!("../locales/fr/audit.ftl"),
    ),
];

struct Bundles {
    en: FluentBundle<FluentResource>,
    fr: FluentBundle<FluentResource>,
}

static BUNDLES: LazyLock<Bundles> = LazyLock::new(|| Bundles {
    en: bundle(Lang::En),
    fr: bundle(Lang::Fr),
});

fn bundle(lang: Lang) -> FluentBundle<FluentResource> {
    let id = lang
        .code()
        .parse()
        .expect("language codes are valid identifiers");
    let mut bundle = FluentBundle::new_concurrent(vec![id]);
    // Isolation marks would show up as stray characters in plain-text refusals and terminals.
    bundle.set_use_isolating(false);
    for (l, name, source) in FILES {
        if *l == lang {
            let resource = FluentResource::try_new((*source).to_owned())
                .unwrap_or_else(|_| panic!("locales/{}/{name} does not parse", lang.code()));
            bundle
                .add_resource(resource)
                .unwrap_or_else(|_| panic!("locales/{}/{name} repeats a message", lang.code()));
        }
    }
    bundle
}

/// Translates `id` with string arguments. A missing message shows its id rather than failing:
/// the test of both locales keeps that from shipping.
pub fn tr(lang: Lang, id: &str, args: &[(&str, &str)]) -> String {
    if args.is_empty() {
        return text(lang, id).into_owned();
    }
    format(lang, id, args).0
}

/// `tr` without arguments, borrowed from the bundle when the message is plain text, as most
/// are: what templates show (`PageContext::text`), so a page's labels cost no allocation each.
pub fn text(lang: Lang, id: &str) -> Cow<'static, str> {
    let bundle = bundle_of(lang);
    let Some(pattern) = bundle.get_message(id).and_then(|m| m.value()) else {
        return Cow::Owned(id.to_owned());
    };
    bundle.format_pattern(pattern, None, &mut Vec::new())
}

fn bundle_of(lang: Lang) -> &'static FluentBundle<FluentResource> {
    match lang {
        Lang::En => &BUNDLES.en,
        Lang::Fr => &BUNDLES.fr,
    }
}

/// `tr`, with what Fluent could not resolve (a missing variable, message or term): shown in
/// the text as Fluent shows it, and failed on by the locale test.
fn format(
    lang: Lang,
    id: &str,
    args: &[(&str, &str)],
) -> (String, Vec<fluent_bundle::FluentError>) {
    let bundle = bundle_of(lang);
    let Some(pattern) = bundle.get_message(id).and_then(|m| m.value()) else {
        return (id.to_owned(), Vec::new());
    };
    let mut fluent_args = FluentArgs::new();
    for (k, v) in args {
        // Whole numbers go in as numbers so messages can select on them (plurals, "0 = off").
        match v.parse::<i64>() {
            Ok(n) if !v.starts_with('+') => fluent_args.set(*k, n),
            _ => fluent_args.set(*k, *v),
        }
    }
    let mut errors = Vec::new();
    let text = bundle
        .format_pattern(
            pattern,
            (!args.is_empty()).then_some(&fluent_args),
            &mut errors,
        )
        .into_owned();
    (text, errors)
}

/// The message ids a language defines (the locale test compares them).
pub fn message_ids(lang: Lang) -> Vec<String> {
    let mut ids = Vec::new();
    for (l, _, source) in FILES {
        if *l == lang {
            let resource = FluentResource::try_new((*source).to_owned()).unwrap_or_else(|(r, _)| r);
            for entry in resource.entries() {
                if let fluent_syntax::ast::Entry::Message(m) = entry {
                    ids.push(m.id.name.to_owned());
                }
            }
        }
    }
    ids.sort();
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_locales_hold_the_same_keys() {
        let en = message_ids(Lang::En);
        let fr = message_ids(Lang::Fr);
        let missing_fr: Vec<_> = en.iter().filter(|k| !fr.contains(k)).collect();
        let missing_en: Vec<_> = fr.iter().filter(|k| !en.contains(k)).collect();
        assert!(missing_fr.is_empty(), "missing in fr: {missing_fr:?}");
        assert!(missing_en.is_empty(), "missing in en: {missing_en:?}");
        assert!(en.len() > 50);
    }

    /// The variables a message's value uses (`{ $name }`, in selectors and function calls too).
    fn variables(source: &str, id: &str) -> Vec<String> {
        use fluent_syntax::ast::{Expression, InlineExpression, Pattern, PatternElement};
        fn inline(e: &InlineExpression<&str>, out: &mut Vec<String>) {
            match e {
                InlineExpression::VariableReference { id } => out.push(id.name.to_owned()),
                InlineExpression::FunctionReference { arguments, .. } => {
                    for a in &arguments.positional {
                        inline(a, out);
                    }
                    for a in &arguments.named {
                        inline(&a.value, out);
                    }
                }
                InlineExpression::Placeable { expression } => expr(expression, out),
                _ => {}
            }
        }
        fn expr(e: &Expression<&str>, out: &mut Vec<String>) {
            match e {
                Expression::Inline(e) => inline(e, out),
                Expression::Select { selector, variants } => {
                    inline(selector, out);
                    for v in variants {
                        pattern(&v.value, out);
                    }
                }
            }
        }
        fn pattern(p: &Pattern<&str>, out: &mut Vec<String>) {
            for element in &p.elements {
                if let PatternElement::Placeable { expression } = element {
                    expr(expression, out);
                }
            }
        }
        let resource = fluent_syntax::parser::parse(source).unwrap_or_else(|(r, _)| r);
        let mut out = Vec::new();
        for entry in &resource.body {
            if let fluent_syntax::ast::Entry::Message(m) = entry
                && m.id.name == id
                && let Some(value) = &m.value
            {
                pattern(value, &mut out);
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// Every message, given a value for each variable it uses, formats with no error from
    /// Fluent: no missing message or term it refers to, no variable it reads but is not given.
    #[test]
    fn every_message_formats_without_errors_in_both_languages() {
        let mut unpluralised = Vec::new();
        for lang in Lang::ALL {
            for id in message_ids(lang) {
                let names: Vec<String> = FILES
                    .iter()
                    .filter(|(l, _, _)| *l == lang)
                    .flat_map(|(_, _, source)| variables(source, &id))
                    .collect();
                // Every count is 1, so a plural left without a selector shows ("1 requests").
                // Bounds ($min, $max, the cells kept per period) are fixed numbers the code
                // gives, never 1.
                let args: Vec<(&str, &str)> = names
                    .iter()
                    .map(|n| {
                        let bound = matches!(n.as_str(), "min" | "max" | "callers");
                        (n.as_str(), if bound { "100" } else { "1" })
                    })
                    .collect();
                let (text, errors) = format(lang, &id, &args);
                assert!(errors.is_empty(), "{id} in {lang:?}: {errors:?}");
                assert!(!text.trim().is_empty(), "{id} is empty in {lang:?}");
                let plurals: &[&str] = match lang {
                    Lang::En => &[
                        "periods",
                        "requests",
                        "attempts",
                        "seconds",
                        "instances",
                        "links",
                        "fields",
                        "steps",
                        "hours",
                        "minutes",
                        "days",
                        "failures",
                        "tokens",
                        "notices",
                        "errors",
                        "warnings",
                        "notes",
                        "characters",
                        "versions",
                    ],
                    Lang::Fr => &[
                        "périodes",
                        "requêtes",
                        "tentatives",
                        "secondes",
                        "instances",
                        "liens",
                        "champs",
                        "étapes",
                        "heures",
                        "minutes",
                        "jours",
                        "échecs",
                        "jetons",
                        "avis",
                        "erreurs",
                        "avertissements",
                        "notes",
                        "caractères",
                        "versions",
                    ],
                };
                let padded = format!(" {text}");
                for word in plurals {
                    let one = format!(" 1 {word}");
                    // "avis" is both singular and plural.
                    if padded.contains(&one) && !(lang == Lang::Fr && *word == "avis") {
                        unpluralised.push(format!("{id} in {lang:?}: {text}"));
                    }
                }
            }
        }
        assert!(
            unpluralised.is_empty(),
            "plurals without a selector:\n{}",
            unpluralised.join("\n")
        );
    }

    #[test]
    fn accept_language_follows_q_values() {
        assert_eq!(
            Lang::from_accept_language("de, fr;q=0.8, en;q=0.5"),
            Some(Lang::Fr)
        );
        assert_eq!(Lang::from_accept_language("en-GB,fr;q=0.9"), Some(Lang::En));
        assert_eq!(Lang::from_accept_language("de, es"), None);
        assert_eq!(Lang::from_accept_language("fr;q=0"), None);
    }
}
