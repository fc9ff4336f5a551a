//! The evidence record in a reader's words: one body (`templates/evidence/body.html`) shown by
//! the admin page and written whole by `orchestra instance evidence ID --format html`, made from
//! the same record the JSON gives, so the two never tell different stories.

use askama::Template;

use super::evidence::Evidence;
use crate::domain::workflow::history::{self, Actor, Event};
use crate::domain::workflow::labels::maybe_label_in;
use crate::i18n::{Lang, Message, tr};

/// The record as its reader reads it: every value already in words.
pub struct Page {
    pub lang: Lang,
    pub title: String,
    pub facts: Vec<(String, String)>,
    pub sha256: String,
    pub generated_at: String,
    pub steps: Vec<[String; 4]>,
    pub lines: Vec<Line>,
    pub links: Vec<[String; 6]>,
    pub emails: Vec<[String; 6]>,
    pub files: Vec<[String; 5]>,
    pub contacts: Vec<[String; 3]>,
    pub receipts: Vec<[String; 3]>,
}

pub struct Line {
    pub id: i64,
    pub at: String,
    pub step: String,
    pub event: String,
    pub who: String,
    pub answer: Vec<(String, String)>,
    pub sha256: String,
    pub link: String,
    pub client: String,
    pub verified: String,
}

impl Page {
    pub fn text(&self, id: &str) -> String {
        tr(self.lang, id, &[])
    }

    pub fn of(ev: &Evidence, lang: Lang) -> Self {
        let t = |id: &str| tr(lang, id, &[]);
        let r = &ev.record;
        let i = &r.instance;
        let state = crate::domain::workflow::InstanceState::ALL
            .into_iter()
            .find(|s| s.as_str() == i.state)
            .map_or_else(|| i.state.to_owned(), |s| t(s.message_id()));
        let mut facts = vec![
            (
                t("instance-workflow"),
                maybe_label_in(
                    i.workflow_label.as_deref(),
                    ev.workflow_labels.as_deref(),
                    lang,
                )
                .or_else(|| i.workflow.clone())
                .unwrap_or_default(),
            ),
            (t("evidence-version"), i.version.to_string()),
            (t("instance-state"), state),
            (
                t("evidence-step-round"),
                Message::new("evidence-step-round-value")
                    .arg("step", i.step.to_string())
                    .arg("round", (i.round + 1).to_string())
                    .render(lang),
            ),
            (t("evidence-started"), when(&i.started_at)),
            (t("instance-updated"), when(&i.updated_at)),
            (t("evidence-site"), r.site.clone()),
        ];
        if let Some(at) = &i.erased_at {
            facts.push((t("evidence-erased"), when(at)));
        }
        let who = |participant: &str, branch: &str| {
            if branch.is_empty() || branch == participant {
                participant.to_owned()
            } else {
                format!("{participant} ({branch})")
            }
        };
        // A step's title in the reader's language when the version has its words and the line
        // recorded that step's own title.
        let title = |number: i64, recorded: &str| {
            usize::try_from(number - 1)
                .ok()
                .and_then(|n| ev.definition.steps.get(n))
                .filter(|s| recorded.is_empty() || s.title == recorded)
                .map_or_else(|| recorded.to_owned(), |s| s.title_in(lang).to_owned())
        };
        let lines = r
            .history
            .iter()
            .map(|h| Line {
                id: h.id,
                at: when(&h.at),
                step: Message::new("evidence-step-of-round")
                    .arg("step", h.step.to_string())
                    .arg("title", title(h.step, &h.step_title))
                    .arg("round", (h.round + 1).to_string())
                    .render(lang),
                event: Event::try_from(h.event.clone())
                    .map_or_else(|_| h.event.clone(), |e| t(e.message_id())),
                who: if h.actor.is_empty() {
                    who(&h.participant, &h.branch)
                } else {
                    actor(lang, &h.actor)
                },
                answer: h
                    .answer
                    .as_deref()
                    .map(|json| {
                        let step = usize::try_from(h.step - 1)
                            .ok()
                            .and_then(|n| ev.definition.steps.get(n))
                            .filter(|s| s.title == h.step_title);
                        history::answer_items(lang, json, step)
                            .into_iter()
                            .map(|(label, shown)| (label, shown.text))
                            .collect()
                    })
                    .unwrap_or_default(),
                sha256: h.answer_sha256.clone().unwrap_or_default(),
                link: h.link.map(|l| format!("#{l}")).unwrap_or_default(),
                client: h.client.as_deref().map(short).unwrap_or_default(),
                verified: match h.verified.as_deref() {
                    Some("email") => t("evidence-verified-email"),
                    Some(other) => other.to_owned(),
                    None => String::new(),
                },
            })
            .collect();
        let address = |participant: &str| {
            r.contacts
                .iter()
                .find(|c| c.participant == participant)
                .map_or_else(
                    || participant.to_owned(),
                    |c| format!("{participant} <{}>", c.email),
                )
        };
        Page {
            lang,
            title: Message::new("evidence-title")
                .arg("id", i.id.to_string())
                .arg("title", i.subject_title.clone())
                .render(lang),
            facts,
            sha256: ev.sha256.clone(),
            generated_at: when(&ev.generated_at),
            steps: r
                .steps
                .iter()
                .map(|s| {
                    [
                        s.number.to_string(),
                        title(s.number as i64, &s.title),
                        s.kind.to_owned(),
                        s.participants.join(", "),
                    ]
                })
                .collect(),
            lines,
            links: r
                .links
                .iter()
                .map(|l| {
                    [
                        format!("#{}", l.id),
                        l.participant.clone(),
                        format!("{} · {}", when(&l.issued_at), actor(lang, &l.issued_by)),
                        when(&l.expires),
                        match (&l.revoked_at, &l.revoked_by) {
                            (Some(at), Some(by)) => format!("{} · {}", when(at), actor(lang, by)),
                            (Some(at), None) => when(at),
                            _ => String::new(),
                        },
                        l.used_by
                            .iter()
                            .map(|n| format!("#{n}"))
                            .collect::<Vec<_>>()
                            .join(", "),
                    ]
                })
                .collect(),
            emails: r
                .emails
                .iter()
                .map(|m| {
                    [
                        format!("#{}", m.id),
                        t(match m.kind.as_str() {
                            "reminder" => "mail-kind-reminder",
                            "closed" => "mail-kind-closed",
                            "outcome" => "mail-kind-outcome",
                            _ => "mail-kind-link",
                        }),
                        address(&m.participant),
                        m.step.to_string(),
                        t(match m.state.as_str() {
                            "sent" => "mail-state-sent",
                            "failed" => "mail-state-failed",
                            "skipped" => "mail-state-skipped",
                            _ => "mail-state-pending",
                        }),
                        when(m.sent_at.as_ref().unwrap_or(&m.queued_at)),
                    ]
                })
                .collect(),
            files: r
                .files
                .iter()
                .map(|f| {
                    [
                        f.name.clone(),
                        f.step.to_string(),
                        crate::domain::files::size_in(lang, f.size.max(0) as u64),
                        f.media_type.clone(),
                        f.sha256.clone(),
                    ]
                })
                .collect(),
            receipts: r
                .receipts
                .iter()
                .map(|x| [x.id.clone(), format!("#{}", x.line), when(&x.issued_at)])
                .collect(),
            contacts: r
                .contacts
                .iter()
                .map(|c| [c.participant.clone(), c.name.clone(), c.email.clone()])
                .collect(),
        }
    }
}

/// A time of the record (`2026-12-06T08:57:30Z`) as a reader reads it: `2026-12-06 08:57:30 UTC`.
fn when(iso: &str) -> String {
    match iso.strip_suffix('Z') {
        Some(t) => format!("{} UTC", t.replacen('T', " ", 1)),
        None => iso.to_owned(),
    }
}

/// A keyed hash shown short: enough to tell two clients apart on a page; the JSON has it whole.
fn short(hash: &str) -> String {
    hash.chars().take(12).collect()
}

fn actor(lang: Lang, stored: &str) -> String {
    match Actor::from_stored(stored) {
        Some(Actor::Admin(name)) => name,
        Some(Actor::CommandLine) => tr(lang, "actor-cli", &[]),
        Some(Actor::Mail) => tr(lang, "actor-mail", &[]),
        Some(Actor::Deadline) => tr(lang, "actor-deadline", &[]),
        Some(Actor::Forward(who)) => tr(lang, "actor-forward", &[("participant", &who)]),
        Some(Actor::Api(name)) => tr(lang, "actor-api", &[("token", &name)]),
        None => stored.to_owned(),
    }
}

/// The record as a document of its own, for `--format html`: the body and its styles, nothing
/// to fetch.
#[derive(Template)]
#[template(path = "evidence/document.html")]
struct Document<'a> {
    page: &'a Page,
}

pub fn document(ev: &Evidence, lang: Lang) -> String {
    let page = Page::of(ev, lang);
    Document { page: &page }.render().unwrap_or_default()
}
