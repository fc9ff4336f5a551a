//! What an email says: subject, a text part and an HTML part, in the participant's language,
//! from Fluent's words and askama's templates (`templates/mail/`), as every page is made.

use askama::Template;
use lettre::message::{Mailbox, MultiPart};

use crate::i18n::{Lang, tr};
use crate::store::mails::Kind;

/// Who an email is for and what it is about: what every email says.
#[derive(Clone, Debug)]
pub struct About<'a> {
    pub lang: Lang,
    /// The site's name: who is asking.
    pub site: &'a str,
    /// The instance's subject title.
    pub subject: &'a str,
    /// Its workflow's label, in the reader's language.
    pub workflow: &'a str,
    /// The step's title, in the reader's language.
    pub step: &'a str,
    /// The reader's name ("" when none was given).
    pub name: &'a str,
}

impl About<'_> {
    /// The arguments every email's words may name.
    pub fn args(&self) -> [(&str, &str); 4] {
        [
            ("site", self.site),
            ("step", self.step),
            ("subject", self.subject),
            ("workflow", self.workflow),
        ]
    }

    /// "Hello Lee," or "Hello,".
    pub fn greeting(&self) -> String {
        if self.name.is_empty() {
            tr(self.lang, "mail-greeting-anonymous", &[])
        } else {
            tr(self.lang, "mail-greeting", &[("name", self.name)])
        }
    }
}

/// Everything a link's email tells its reader.
#[derive(Clone, Debug)]
pub struct Letter<'a> {
    pub about: About<'a>,
    pub kind: Kind,
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
        tr(self.about.lang, id, &self.about.args())
    }

    fn words(&self) -> Words {
        let (lang, args) = (self.about.lang, self.about.args());
        let intro_id = match self.kind {
            Kind::Reminder => "mail-reminder-intro",
            _ => "mail-link-intro",
        };
        Words {
            greeting: self.about.greeting(),
            intro: tr(lang, intro_id, &args),
            action: tr(lang, "mail-link-action", &[]),
            expires: tr(
                lang,
                "mail-link-expires",
                &[("expires", &crate::time::format_utc(self.expires))],
            ),
            yours: tr(lang, "mail-link-yours", &[]),
            footer: tr(lang, "mail-footer", &args),
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
            lang: self.about.lang.code(),
            title: &self.subject_line(),
        }
        .render()
        .unwrap_or_default();
        (text, html)
    }

    /// The message, from `from` to `to`.
    pub fn message(&self, from: Mailbox, to: Mailbox) -> Result<lettre::Message, &'static str> {
        message(from, to, self.subject_line(), self.bodies())
    }
}

/// An email of a text and an HTML part.
pub fn message(
    from: Mailbox,
    to: Mailbox,
    subject: String,
    (text, html): (String, String),
) -> Result<lettre::Message, &'static str> {
    lettre::Message::builder()
        .from(from)
        .to(to)
        .subject(subject)
        .multipart(MultiPart::alternative_plain_html(text, html))
        .map_err(|_| "message")
}

/// The reader's mailbox: their address, under their name when one was given.
pub fn mailbox(email: &str, name: &str) -> Option<Mailbox> {
    let address = email.parse().ok()?;
    Some(Mailbox::new(
        (!name.is_empty()).then(|| name.to_owned()),
        address,
    ))
}
