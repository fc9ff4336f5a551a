//! What an email says: subject, a text part and an HTML part, in the participant's language,
//! from Fluent's words and askama's templates (`templates/mail/`), as every page is made.

use askama::Template;
use lettre::message::header::ContentType;
use lettre::message::header::{HeaderName, HeaderValue};
use lettre::message::{Attachment, Mailbox, MultiPart};

use crate::domain::keys::SiteKeys;
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
    colon: String,
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
                &[("expires", &date_words(lang, self.expires))],
            ),
            yours: tr(lang, "mail-link-yours", &[]),
            footer: tr(lang, "mail-footer", &args),
            colon: tr(lang, "mail-colon", &[]),
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

    /// The message, from `from` to `to`, under the Message-ID `id` (`message_id`).
    pub fn message(
        &self,
        from: Mailbox,
        to: Mailbox,
        id: &str,
    ) -> Result<lettre::Message, &'static str> {
        message(from, to, id, self.subject_line(), self.bodies())
    }
}

/// An email of a text and an HTML part, with the headers mail systems expect: its
/// `Message-ID` (RFC 5322; a message without one is scored as spam), and `Auto-Submitted:
/// auto-generated` (RFC 3834) so that out-of-office replies are not sent back. lettre writes
/// the `Date` itself.
pub fn message(
    from: Mailbox,
    to: Mailbox,
    id: &str,
    subject: String,
    bodies: (String, String),
) -> Result<lettre::Message, &'static str> {
    message_with(from, to, id, subject, bodies, &[])
}

/// `message` with text files attached after its two parts (`multipart/mixed`): an outcome's
/// receipts, as (file name, text).
pub fn message_with(
    from: Mailbox,
    to: Mailbox,
    id: &str,
    subject: String,
    (text, html): (String, String),
    attached: &[(String, String)],
) -> Result<lettre::Message, &'static str> {
    let parts = MultiPart::alternative_plain_html(text, html);
    let body = if attached.is_empty() {
        parts
    } else {
        // RFC 7515's media type of a compact JWS.
        let jose = ContentType::parse("application/jose").map_err(|_| "message")?;
        attached
            .iter()
            .fold(MultiPart::mixed().multipart(parts), |m, (name, text)| {
                m.singlepart(Attachment::new(name.clone()).body(text.clone(), jose.clone()))
            })
    };
    lettre::Message::builder()
        .from(from)
        .to(to)
        .subject(subject)
        .message_id(Some(id.to_owned()))
        .raw_header(HeaderValue::new(
            HeaderName::new_from_ascii_str("Auto-Submitted"),
            "auto-generated".to_owned(),
        ))
        .multipart(body)
        .map_err(|_| "message")
}

/// A moment in words in the reader's language, in UTC with the zone said ("December 12, 2026
/// at 17:47 UTC", "12 décembre 2026 à 17:47 UTC"): a mail client shows no script that could
/// put it in the reader's zone, as the doorway's page does.
pub fn date_words(lang: Lang, unix: i64) -> String {
    let [year, month, day, hour, minute] = crate::time::civil_utc(unix).map(|n| n.to_string());
    tr(
        lang,
        "mail-date",
        &[
            ("year", &year),
            ("month", &month),
            ("day", &day),
            // One text, not two numbers: Fluent would write 7:05 as "7:5".
            ("time", &format!("{hour:0>2}:{minute:0>2}")),
        ],
    )
}

/// The reader's mailbox: their address, under their name when one was given.
pub fn mailbox(email: &str, name: &str) -> Option<Mailbox> {
    let address = email.parse().ok()?;
    Some(Mailbox::new(
        (!name.is_empty()).then(|| name.to_owned()),
        address,
    ))
}

/// The Message-ID of the queued email `row`: `<hash@host>`, the same on each try of the row
/// (a retry after a failure), so a receiver that got both keeps one. Its left part is a keyed
/// hash of the row's id, which tells nothing and cannot be guessed for another row; its host
/// is the site's (its base URL's; an IPv6 address keeps its brackets, a domain literal as RFC
/// 5322 writes one), or the sender's domain should the base URL name none.
pub fn message_id(keys: &SiteKeys, row: i64, base_url: &str, from: &Mailbox) -> String {
    let hash = keys.keyed_hash("message-id", &row.to_string());
    let host = url::Url::parse(base_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| from.email.domain().to_owned());
    format!("<{}@{host}>", &hash[..32])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// French puts a narrow no-break space (U+202F) before `:`, `;`, `?` and `!` where they end
    /// a clause; a plain space or none would break the line before the sign or look English.
    /// The signs inside a word or an address (`smtp://`, `?tls=`, `17:47`) or after a JSON key
    /// (`"send": true`) are no clause's end.
    #[test]
    fn french_mail_words_keep_a_narrow_space_before_high_signs() {
        let source = include_str!("../../../locales/fr/mail.ftl");
        let mut wrong = Vec::new();
        for line in source.lines().filter(|l| !l.starts_with('#')) {
            let value = line.split_once(" = ").map_or(line, |(_, v)| v);
            let chars: Vec<char> = value.chars().collect();
            for (i, c) in chars.iter().enumerate() {
                let ends = chars.get(i + 1).is_none_or(|n| n.is_whitespace());
                let before = i.checked_sub(1).map(|b| chars[b]);
                let code = before == Some('"');
                if ":;?!".contains(*c) && ends && !code && before != Some('\u{202F}') {
                    wrong.push(line.to_owned());
                }
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
        // The colon the templates put after a label is the language's.
        assert_eq!(tr(Lang::Fr, "mail-colon", &[]), "\u{202F}:");
        assert_eq!(tr(Lang::En, "mail-colon", &[]), ":");
    }

    fn luminance(hex: &str) -> f64 {
        let channel = |i: usize| {
            let c = f64::from(u8::from_str_radix(&hex[i..i + 2], 16).unwrap()) / 255.0;
            if c <= 0.039_28 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * channel(0) + 0.7152 * channel(2) + 0.0722 * channel(4)
    }

    /// The HTML email's footer, small grey text on the page's background, reads at WCAG AA
    /// (4.5:1), as the template writes both colours.
    #[test]
    fn the_footer_reaches_aa_contrast() {
        let base = include_str!("../../../templates/mail/base.html");
        let colour_after = |line: &str, key: &str| {
            let at = line.find(key).unwrap() + key.len();
            line[at..at + 6].to_owned()
        };
        let body = base.lines().find(|l| l.starts_with("<body")).unwrap();
        let footer = base.lines().find(|l| l.contains("w.footer")).unwrap();
        let (bg, fg) = (
            luminance(&colour_after(body, "background:#")),
            luminance(&colour_after(footer, ";color:#")),
        );
        let ratio = (bg.max(fg) + 0.05) / (bg.min(fg) + 0.05);
        assert!(ratio >= 4.5, "{ratio:.2}:1");
        assert!(footer.contains("font-size:13px"), "{footer}");
    }

    #[test]
    fn dates_are_in_words_in_the_readers_language() {
        // 2026-12-12 17:47 UTC; 2027-03-01 07:05 UTC.
        assert_eq!(
            date_words(Lang::En, 1_797_097_620),
            "December 12, 2026 at 17:47 UTC"
        );
        assert_eq!(
            date_words(Lang::Fr, 1_797_097_620),
            "12 décembre 2026 à 17:47 UTC"
        );
        assert_eq!(
            date_words(Lang::En, 1_803_884_700),
            "March 1, 2027 at 07:05 UTC"
        );
        assert_eq!(
            date_words(Lang::Fr, 1_803_884_700),
            "1er mars 2027 à 07:05 UTC"
        );
    }

    #[test]
    fn a_rows_message_id_is_its_own_the_same_on_each_try_and_tells_nothing() {
        let keys = SiteKeys::from_bytes([1; 32], [2; 32]);
        let from: Mailbox = "Orchestra <orchestra@mail.example.org>".parse().unwrap();
        let id = message_id(&keys, 7, "https://flows.example.org:8443/base", &from);
        assert_eq!(
            id,
            message_id(&keys, 7, "https://flows.example.org:8443/base", &from)
        );
        assert_ne!(
            id,
            message_id(&keys, 8, "https://flows.example.org:8443/base", &from)
        );
        assert!(
            id.starts_with('<') && id.ends_with("@flows.example.org>"),
            "{id}"
        );
        let left = &id[1..id.find('@').unwrap()];
        assert!(
            left.len() == 32 && left.chars().all(|c| c.is_ascii_hexdigit()),
            "{id}"
        );
        // No host in the base URL: the sender's domain.
        let id = message_id(&keys, 7, "not a url", &from);
        assert!(id.ends_with("@mail.example.org>"), "{id}");
    }
}
