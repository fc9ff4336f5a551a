//! The email carrying a `| verify email` step's code: short, in the reader's language, the
//! code in its text and never in its subject, no link. The sender derives the code as it sends
//! (`interaction::code::derive`): neither the mail row nor the code's row holds it.

use askama::Template;
use lettre::message::Mailbox;

use super::compose::About;
use crate::domain::interaction::code::LIFETIME;
use crate::i18n::tr;

struct Words {
    greeting: String,
    intro: String,
    expires: String,
    ignore: String,
    footer: String,
}

#[derive(Template)]
#[template(path = "mail/code.txt")]
struct Text<'a> {
    w: &'a Words,
    code: &'a str,
}

#[derive(Template)]
#[template(path = "mail/code.html")]
struct Html<'a> {
    w: &'a Words,
    code: &'a str,
    lang: &'a str,
    title: &'a str,
}

/// The subject line, and the text and HTML parts, of a code's email.
fn bodies(about: &About<'_>, code: &str) -> (String, (String, String)) {
    let (lang, args) = (about.lang, about.args());
    let minutes = (LIFETIME / 60).to_string();
    let w = Words {
        greeting: about.greeting(),
        intro: tr(lang, "mail-code-intro", &args),
        expires: tr(lang, "mail-code-expires", &[("minutes", &minutes)]),
        ignore: tr(lang, "mail-code-ignore", &[]),
        footer: tr(lang, "mail-footer", &args),
    };
    let subject = tr(lang, "mail-code-subject", &args);
    let text = Text { w: &w, code }.render().unwrap_or_default();
    let html = Html {
        w: &w,
        code,
        lang: lang.code(),
        title: &subject,
    }
    .render()
    .unwrap_or_default();
    (subject, (text, html))
}

/// The code's email, from `from` to `to` under the Message-ID `id`.
pub(super) fn message(
    about: &About<'_>,
    code: &str,
    from: Mailbox,
    to: Mailbox,
    id: &str,
) -> Result<lettre::Message, &'static str> {
    let (subject, parts) = bodies(about, code);
    super::compose::message(from, to, id, subject, parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::Lang;

    /// The subject never carries the code (a lock screen shows subjects); the text does,
    /// whole, with French typography in French.
    #[test]
    fn the_code_is_in_the_text_and_never_in_the_subject() {
        for lang in Lang::ALL {
            let about = About {
                lang,
                site: "Acme",
                subject: "Onboarding",
                workflow: "Suppliers",
                step: "Bank details",
                name: "",
            };
            let (subject, (text, html)) = bodies(&about, "042917");
            assert!(!subject.contains("042917"), "{subject}");
            assert!(text.contains("042917") && html.contains("042917"), "{text}");
            assert!(!text.contains("http"), "no link: {text}");
        }
        let about = About {
            lang: Lang::Fr,
            site: "Acme",
            subject: "Onboarding",
            workflow: "Suppliers",
            step: "Bank details",
            name: "",
        };
        let (_, (text, _)) = bodies(&about, "042917");
        assert!(text.contains("(Bank details)\u{202F}:"), "{text}");
    }
}
