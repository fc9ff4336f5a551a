//! What an email says: subject, a text part and an HTML part, in the participant's language,
//! from Fluent's words and askama's templates (`templates/mail/`), as every page is made.

use askama::Template;
use lettre::message::{Mailbox, MultiPart};

use crate::i18n::{Lang, tr};
use crate::store::mails::Kind;

/// Everything one email tells its reader.
#[derive(Clone, Debug)]
pub struct Letter<'a> {
    pub lang: Lang,
    pub kind: Kind,
    /// The site's name: who is asking.
    pub site: &'a str,
    /// The instance's subject title.
    pub subject: &'a str,
    /// The step's title, in the reader's language.
    pub step: &'a str,
    /// The reader's name ("" when none was given).
    pub name: &'a str,
    /// The link, signed for this email alone.
    pub url: &'a str,
    pub expires: i64,
}

/// The words of one email, resolved in its language for the templates.
struct Words {
    greeting: String,
    intro: String,
    action: String,
    expires: String,
    yours: String,
    footer: String,
}

#[derive(Template)]
#[template(path = "mail/link.txt")]
struct Text<'a> {
    w: &'a Words,
    url: &'a str,
}

#[derive(Template)]
#[template(path = "mail/link.html")]
struct Html<'a> {
    w: &'a Words,
    url: &'a str,
    lang: &'a str,
    title: &'a str,
}

impl Letter<'_> {
    pub fn subject_line(&self) -> String {
        let id = match self.kind {
            Kind::Reminder => "mail-reminder-subject",
            _ => "mail-link-subject",
        };
        tr(
            self.lang,
            id,
            &[
                ("site", self.site),
                ("step", self.step),
                ("subject", self.subject),
            ],
        )
    }

    fn words(&self) -> Words {
        let t = |id: &str, args: &[(&str, &str)]| tr(self.lang, id, args);
        let intro_id = match self.kind {
            Kind::Reminder => "mail-reminder-intro",
            _ => "mail-link-intro",
        };
        Words {
            greeting: if self.name.is_empty() {
                t("mail-greeting-anonymous", &[])
            } else {
                t("mail-greeting", &[("name", self.name)])
            },
            intro: t(
                intro_id,
                &[
                    ("site", self.site),
                    ("step", self.step),
                    ("subject", self.subject),
                ],
            ),
            action: t("mail-link-action", &[]),
            expires: t(
                "mail-link-expires",
                &[("expires", &crate::time::format_utc(self.expires))],
            ),
            yours: t("mail-link-yours", &[]),
            footer: t("mail-footer", &[("site", self.site)]),
        }
    }

    /// The text and HTML parts.
    pub fn bodies(&self) -> (String, String) {
        let w = self.words();
        let text = Text {
            w: &w,
            url: self.url,
        }
        .render()
        .unwrap_or_default();
        let html = Html {
            w: &w,
            url: self.url,
            lang: self.lang.code(),
            title: &self.subject_line(),
        }
        .render()
        .unwrap_or_default();
        (text, html)
    }

    /// The message, from `from` to `to`.
    pub fn message(&self, from: Mailbox, to: Mailbox) -> Result<lettre::Message, &'static str> {
        let (text, html) = self.bodies();
        lettre::Message::builder()
            .from(from)
            .to(to)
            .subject(self.subject_line())
            .multipart(MultiPart::alternative_plain_html(text, html))
            .map_err(|_| "message")
    }
}

/// The reader's mailbox: their address, under their name when one was given.
pub fn mailbox(email: &str, name: &str) -> Option<Mailbox> {
    let address = email.parse().ok()?;
    Some(Mailbox::new(
        (!name.is_empty()).then(|| name.to_owned()),
        address,
    ))
}
