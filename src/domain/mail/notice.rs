//! Emails that tell and carry no link: a branch was not needed (its step closed with enough
//! approvals), or an instance ended (its outcome, to whoever filed it, with the last comment
//! and a copy of what they submitted).

use askama::Template;
use lettre::message::Mailbox;

use super::compose::About;
use crate::domain::workflow::InstanceState;
use crate::i18n::tr;

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
    pub about: About<'a>,
    pub told: Told,
    /// The last comment or reason given ("" when none).
    pub comment: &'a str,
    /// What the reader submitted, as label and value lines.
    pub answers: Vec<(String, String)>,
    /// The receipts of the reader's answers, attached: (file name, compact JWS).
    pub receipts: Vec<(String, String)>,
}

struct Words {
    greeting: String,
    intro: String,
    comment_heading: String,
    answers_heading: String,
    footer: String,
    colon: String,
    /// What the attached receipts are ("" when none is attached).
    receipts: String,
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
    pub fn subject_line(&self) -> String {
        let id = match self.told {
            Told::Closed => "mail-closed-subject",
            Told::Outcome(state) => outcome_id(state, "subject"),
        };
        tr(self.about.lang, id, &self.about.args())
    }

    fn words(&self) -> Words {
        let (lang, args) = (self.about.lang, self.about.args());
        let intro = match self.told {
            Told::Closed => "mail-closed-intro",
            Told::Outcome(state) => outcome_id(state, "intro"),
        };
        Words {
            greeting: self.about.greeting(),
            intro: tr(lang, intro, &args),
            comment_heading: tr(lang, "mail-outcome-comment", &[]),
            answers_heading: tr(lang, "mail-outcome-answers", &[]),
            footer: tr(lang, "mail-footer", &args),
            colon: tr(lang, "mail-colon", &[]),
            receipts: if self.receipts.is_empty() {
                String::new()
            } else {
                tr(lang, "mail-outcome-receipts", &[])
            },
        }
    }

    /// The message, from `from` to `to` under the Message-ID `id`: a text and an HTML part.
    pub fn message(
        &self,
        from: Mailbox,
        to: Mailbox,
        id: &str,
    ) -> Result<lettre::Message, &'static str> {
        let w = self.words();
        let (comment, answers) = (self.comment, self.answers.as_slice());
        let text = Text {
            w: &w,
            comment,
            answers,
        };
        let subject = self.subject_line();
        let html = Html {
            w: &w,
            comment,
            answers,
            lang: self.about.lang.code(),
            title: &subject,
        };
        let bodies = (
            text.render().unwrap_or_default(),
            html.render().unwrap_or_default(),
        );
        super::compose::message_with(from, to, id, subject, bodies, &self.receipts)
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
