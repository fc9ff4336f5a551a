//! Workflows: ordered steps, each answered through an interaction kind by a participant, or by
//! several participants in parallel branches. Definitions are written in a small line format
//! that administrators edit in one text area and the CLI prints; stored as JSON, one immutable
//! version per save (`versions`).
//!
//! Here the definition as a whole; a step in `step`, what it asks in `fields`, the line format
//! in `parse`.

use serde::{Deserialize, Serialize};

pub mod condition;
pub mod drawing;
pub mod edit;
pub mod history;
pub mod labels;
pub mod options;
pub mod route;
pub mod seed;
pub mod values;
pub mod versions;

pub use condition::Condition;
pub use fields::{
    DEFAULT_FILE_BYTES, Field, FieldKind, FileRule, FormCheck, Interaction, MAX_FILE_BYTES,
    MAX_FILE_FIELDS, MAX_OPTIONS, Shown, check_form, format_amount, format_amount_for, shown_value,
    size_text,
};
pub use participant::Participant;
pub use seed::suggested_per_link;
pub use state::InstanceState;
pub use step::{
    Expires, MAX_DELAY, MAX_REMINDERS, MIN_EXPIRES_AFTER, MIN_REMIND_AFTER, Remind, Step,
    StepStart, StepText,
};

mod fields;
mod parse;
mod participant;
mod state;
mod step;
mod translations;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Definition {
    pub steps: Vec<Step>,
    /// Participants emailed the instance's outcome besides its requester (`notify: finance`),
    /// when they have an address.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notify: Vec<Participant>,
    /// Days an ended instance keeps its answers, files and contacts (`keep: 365 days`), over
    /// the site's `records.retention_days`; `Some(0)` keeps them forever (`keep: forever`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_days: Option<u32>,
}

pub const MAX_STEPS: usize = 20;
/// Fields one form step may have, and characters a whole definition may have: a definition is
/// parsed and shown on every doorway page, so its size is bounded.
pub const MAX_FIELDS: usize = 30;
pub const MAX_DEFINITION_CHARS: usize = 20_000;

impl Definition {
    /// The participants `notify:` names, as stored.
    pub fn notify_names(&self) -> Vec<String> {
        self.notify.iter().map(|p| p.as_str().to_owned()).collect()
    }

    /// Every participant of the definition, in the order they first answer.
    pub fn participants(&self) -> Vec<&Participant> {
        let mut out: Vec<&Participant> = Vec::new();
        for p in self.steps.iter().flat_map(Step::participants) {
            if !out.contains(&p) {
                out.push(p);
            }
        }
        out
    }

    pub fn from_json(json: &str) -> Option<Self> {
        serde_json::from_str(json).ok()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{\"steps\":[]}".into())
    }
}

impl Definition {
    /// The most requests one participant's link makes to answer every step they answer, once
    /// each: a form then a payment on one link is 4. An answer after which the link has
    /// nothing to answer at once redirects to its thank-you page (post/redirect/get): one
    /// request more, unless it was a payment's (the payer leaves for the provider). A step a
    /// route may send the instance back through is asked once a round (`| rounds N`).
    pub fn requests_per_link(&self) -> u64 {
        let times = self.times_asked();
        let mut most = 0;
        for who in self.participants() {
            let mut on_link = 0;
            for (i, step) in self.steps.iter().enumerate() {
                if step.branch_of(who).is_none() {
                    continue;
                }
                // A download of each file the step shows is a request on the link too.
                let mut once = step.interaction.requests_on_link() + self.files_shown_by(step);
                // `| verify email`: the code page, *Email me a code*, the page saying where it
                // went, and the code typed.
                if step.verify_email {
                    once += CODE_REQUESTS;
                }
                let goes_on = self
                    .steps
                    .get(i + 1)
                    .is_some_and(|next| next.branch_of(who).is_some());
                if !goes_on && !matches!(step.interaction, Interaction::Payment { .. }) {
                    once += 1;
                }
                on_link += once * times[i];
            }
            most = most.max(on_link);
        }
        most
    }

    /// The file fields of the steps `step` shows, each a download its page offers.
    fn files_shown_by(&self, step: &Step) -> u64 {
        step.shows
            .iter()
            .filter_map(|&i| self.steps.get(i))
            .map(|shown| match &shown.interaction {
                Interaction::Form { fields } => {
                    fields.iter().filter(|f| f.kind == FieldKind::File).count() as u64
                }
                _ => 0,
            })
            .sum()
    }

    /// How many times each step may be asked: once, or once a round for the steps between a
    /// route back and its target.
    fn times_asked(&self) -> Vec<u64> {
        let rounds = u64::from(route::rounds(self));
        let mut times = vec![1; self.steps.len()];
        for (from, step) in self.steps.iter().enumerate() {
            for target in step.routes.targets() {
                if let route::Target::Step(to) = target
                    && to <= from
                {
                    for t in &mut times[to..=from] {
                        *t = rounds;
                    }
                }
            }
        }
        times
    }
}

/// The requests a link's holder makes to pass a `| verify email` step's code page, once.
pub const CODE_REQUESTS: u64 = 4;

#[cfg(test)]
mod requests_tests {
    use super::*;

    #[test]
    fn a_form_then_a_payment_on_one_link_is_four_requests() {
        let d = Definition::parse("form@payer: Address | Name*\npayment@payer: Pay | 49.90 EUR\n")
            .unwrap();
        assert_eq!(d.requests_per_link(), 4);
        // The page, the answer, and the thank-you page it redirects to.
        let two = Definition::parse("review[legal,finance]: Approve\n").unwrap();
        assert_eq!(two.requests_per_link(), 3);
        assert_eq!(suggested_per_link(), 12);
    }

    #[test]
    fn a_step_sent_back_to_is_counted_once_a_round() {
        let claim = "form@employee: Claim | Amount* (number)\n\
                     review@manager: Check | on reject back to 1 | rounds 3\n\
                     review@finance: Pay out\n";
        let d = Definition::parse(claim).unwrap();
        // The employee's page, answer and thank-you page, three rounds over.
        assert_eq!(d.requests_per_link(), 9);
        let once =
            Definition::parse(&claim.replace(" | on reject back to 1 | rounds 3", "")).unwrap();
        assert_eq!(once.requests_per_link(), 3);
    }

    #[test]
    fn a_step_behind_an_emailed_code_counts_the_code_pages_requests() {
        let d = Definition::parse(
            "review@legal: Approve | verify email
",
        )
        .unwrap();
        assert_eq!(d.requests_per_link(), 3 + CODE_REQUESTS);
    }
}
