//! Emails that tell and carry no link: a branch was not needed (its step closed with enough
//! approvals), or an instance ended (its outcome, to whoever filed it, with the last comment
//! and a copy of what they submitted).

use askama::Template;
use lettre::message::{Mailbox, MultiPart};

use crate::domain::workflow::InstanceState;
use crate::i18n::{Lang, tr};

/// What a notice tells.
#[derive(Clone, Copy, Debug)]
pub enum Told {
    /// The reader's branch of `step` was not needed.
    Closed,
    /// The instance ended in this state.
    Outcome(InstanceState),
}

/// One notice, in its reader's language.
#[derive(Clone, Debug)]
pub struct Notice<'a> {
    pub lang: Lang,
    pub told: Told,
    pub site: &'a str,
    pub subject: &'a str,
    /// The step's title, in the reader's language.
    pub step: &'a str,
    pub name: &'a str,
    /// The last comment or reason given ("" when none).
    pub comment: &'a str,
    /// What the reader submitted, as label and value lines.
    pub answers: Vec<(String, String)>,
}

struct Words {
    greeting: String,
    intro: String,
    comment_heading: String,
    answers_heading: String,
    footer: String,
}

#[derive(Template)]
#[template(path = "mail/notice.txt")]
struct Text<'a> {
    w: &'a Words,
    comment: &'a str,
    answers: &'a [(String, String)],
}

#[derive(Template)]
#[template(path = "mail/notice.html")]
struct Html<'a> {
    w: &'a Words,
    comment: &'a str,
    answers: &'a [(String, String)],
    lang: &'a str,
    title: &'a str,
}

impl Notice<'_> {
    fn args(&self) -> [(&str, &str); 3] {
        [
            ("site", self.site),
            ("step", self.step),
            ("subject", self.subject),
        ]
    }

    pub fn subject_line(&self) -> String {
        let id = match self.told {
            Told::Closed => "mail-closed-subject",
            Told::Outcome(state) => outcome_id(state, "subject"),
        };
        tr(self.lang, id, &self.args())
    }

    fn words(&self) -> Words {
        let t = |id: &str| tr(self.lang, id, &self.args());
        let intro = match self.told {
            Told::Closed => "mail-closed-intro",
            Told::Outcome(state) => outcome_id(state, "intro"),
        };
        Words {
            greeting: if self.name.is_empty() {
                t("mail-greeting-anonymous")
            } else {
                tr(self.lang, "mail-greeting", &[("name", self.name)])
            },
            intro: t(intro),
            comment_heading: t("mail-outcome-comment"),
            answers_heading: t("mail-outcome-answers"),
            footer: t("mail-footer"),
        }
    }

    /// The text and HTML parts.
    pub fn bodies(&self) -> (String, String) {
        let w = self.words();
        let text = Text {
            w: &w,
            comment: self.comment,
            answers: &self.answers,
        }
        .render()
        .unwrap_or_default();
        let html = Html {
            w: &w,
            comment: self.comment,
            answers: &self.answers,
            lang: self.lang.code(),
            title: &self.subject_line(),
        }
        .render()
        .unwrap_or_default();
        (text, html)
    }

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

/// The message of an outcome's `part` (`subject` or `intro`).
fn outcome_id(state: InstanceState, part: &str) -> &'static str {
    match (state, part) {
        (InstanceState::Complete, "subject") => "mail-outcome-complete-subject",
        (InstanceState::Complete, _) => "mail-outcome-complete-intro",
        (InstanceState::Rejected, "subject") => "mail-outcome-rejected-subject",
        (InstanceState::Rejected, _) => "mail-outcome-rejected-intro",
        (InstanceState::Expired, "subject") => "mail-outcome-expired-subject",
        (InstanceState::Expired, _) => "mail-outcome-expired-intro",
        (_, "subject") => "mail-outcome-cancelled-subject",
        _ => "mail-outcome-cancelled-intro",
    }
}
