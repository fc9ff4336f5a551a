//! The email sender: claims due mail rows, signs each participant's link as it sends it, and
//! ends the steps whose deadline passed. Runs in `serve`'s background task and in
//! `orchestra cron`, never in a request.
//!
//! A row is sent only while its participant still has its step to answer: a link queued for a
//! step that moved on, or a reminder to a participant who answered, is set aside. The link is
//! signed here, recorded by its keyed hash (as an issued link is) before the SMTP exchange, and
//! its record deleted again when the server does not take the email; no link is ever stored in
//! a row, a log line or an error.

use lettre::message::Mailbox;

use super::compose::{About, Letter, mailbox, message_id};
use super::notice::{Notice, Told};
pub use super::{BACKOFF, LEASE, LONGEST_SEND, retry_at};
use super::{Mailer, Tried};
use crate::domain::capability::{self, Claims, Kind as ClaimKind};
use crate::domain::instance::progress;
use crate::domain::outbox::{Lease, Stop};
use crate::domain::site::Snapshot;
use crate::domain::workflow::history::{Event, answer_lines};
use crate::domain::workflow::labels::label_in;
use crate::domain::workflow::versions::Cache;
use crate::domain::workflow::{Definition, Participant, Step};
use crate::error::Error;
use crate::i18n::Lang;
use crate::store::instances::{InstanceRow, Lapsed};
use crate::store::mails::{self, Claimed, Kind, Outcome};
use crate::store::{self, Db};

/// Rows claimed per run.
pub const BATCH: i64 = 20;
/// What one run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Run {
    /// Rows this run held (a full batch: more may be due).
    pub claimed: u64,
    pub sent: u64,
    /// Not taken by the server, to be tried again.
    pub retried: u64,
    /// Not taken by the server, for good.
    pub failed: u64,
    pub skipped: u64,
    /// Steps whose deadline passed while they waited.
    pub lapsed: u64,
}

/// Sends what is due at `now` through `mailer` (`None`: no SMTP server is set, so only the
/// deadlines are kept, and the emails wait).
pub async fn run_once(
    db: &Db,
    versions: &Cache,
    site: &Snapshot,
    mailer: Option<&Mailer>,
    now: i64,
) -> Result<Run, Error> {
    run_until(db, versions, site, mailer, now, &Stop::never()).await
}

/// `run_once` that hands back what it has not begun once `stop` is set, or once its claim
/// leaves no room for another exchange: an email in flight is finished and recorded, never
/// cut off (a cut-off email may have been delivered while recorded as not sent, and its second
/// try would carry a second link).
pub async fn run_until(
    db: &Db,
    versions: &Cache,
    site: &Snapshot,
    mailer: Option<&Mailer>,
    now: i64,
    stop: &Stop,
) -> Result<Run, Error> {
    // Administrators' own emails first: an invitation or a security notice is a handful.
    if let Some(mailer) = mailer {
        super::admin::run_until(db, site, mailer, now, stop).await?;
    }
    let claimed = store::mails::claim(db, now, LEASE, BATCH, mailer.is_some()).await?;
    let lease = Lease::new(LEASE);
    let mut run = Run {
        claimed: claimed.len() as u64,
        ..Run::default()
    };
    let mut claimed = claimed.into_iter();
    while let Some(m) = claimed.next() {
        if stop.is_set() || !lease.room_for(LONGEST_SEND) {
            let rest: Vec<i64> = std::iter::once(m.id).chain(claimed.map(|m| m.id)).collect();
            store::queue::release(db, store::queue::Table::Mails, rest).await?;
            break;
        }
        // Each row at its own time: a batch's later rows are sent (and backed off from) when
        // they are, not when the batch was claimed.
        let now = now.max(store::now());
        let Some(instance) = store::instances::by_id(db, m.instance_id).await? else {
            mails::finish(db, &m, Outcome::Skipped, now).await?;
            continue;
        };
        let definition = versions.get(db, instance.version_id).await?;
        match m.kind() {
            Some(Kind::Deadline) => {
                if lapse(db, &instance, &definition, &m, now).await? {
                    run.lapsed += 1;
                }
            }
            Some(kind) => {
                // Claimed only with a mailer (`claim`'s `with_mail`).
                let Some(mailer) = mailer else { continue };
                let sent = if kind == Kind::Code {
                    send_code(db, site, mailer, &instance, &definition, &m, now).await?
                } else {
                    send_one(db, site, mailer, &instance, &definition, &m, kind, now).await?
                };
                let (count, tried) = match sent {
                    Sent::Yes => (&mut run.sent, Some(Tried::Sent)),
                    Sent::Retry => (&mut run.retried, Some(Tried::Retried)),
                    Sent::No => (&mut run.failed, Some(Tried::Failed)),
                    Sent::Skipped => (&mut run.skipped, None),
                };
                *count += 1;
                if let Some(tried) = tried {
                    mailer.figures.count(kind, tried);
                }
            }
            None => {
                mails::finish(db, &m, Outcome::Failed("unknown kind"), now).await?;
            }
        }
    }
    if let Some(mailer) = mailer {
        mailer
            .figures
            .waiting(store::mails::due_count(db, now).await?);
    }
    Ok(run)
}

/// A deadline row: the step lapses if it still waits. `true` when it did.
async fn lapse(
    db: &Db,
    instance: &InstanceRow,
    definition: &Definition,
    m: &Claimed,
    now: i64,
) -> Result<bool, Error> {
    let index = usize::try_from(m.step_index).unwrap_or(usize::MAX);
    let step = definition.steps.get(index);
    let expires = step.and_then(|s| s.expires.as_ref());
    let waiting = instance.step_index == m.step_index && !instance.state.is_over();
    // `then to P`: the step goes to whoever answers for P, once; without P's address it
    // lapses as a plain deadline would.
    if let (Some(step), Some(to), true) = (step, expires.and_then(|e| e.then_to.as_ref()), waiting)
        && let Some(theirs) = mails::contact(db, instance.id, to.as_str()).await?
    {
        let handed = mails::ContactRow {
            participant: step.participant.as_str().to_owned(),
            ..theirs
        };
        let by = crate::domain::workflow::history::Actor::Deadline.stored();
        let escalated = store::links::reassign(db, instance.id, &handed, true, None, &by).await?
            == store::links::Reassigned::Done;
        mails::finish(
            db,
            m,
            if escalated {
                Outcome::Done
            } else {
                Outcome::Skipped
            },
            now,
        )
        .await?;
        if escalated {
            tracing::info!(instance = instance.id, step = m.step_index, to = %to, "a step's deadline passed; handed on");
        }
        return Ok(escalated);
    }
    let then_next = expires.is_some_and(|e| e.then_next);
    // `then next` goes on to the next step that is asked; with none left, it ends as expired.
    let next = if then_next {
        let answers = progress::answers_for(db, instance.id, definition, index).await?;
        Some(progress::then_after(definition, index, &answers)).filter(|t| t.step.is_some())
    } else {
        None
    };
    let title = definition.steps.get(index).map_or("", |s| s.title.as_str());
    let lapsed = if waiting {
        let notify = definition.notify_names();
        store::instances::lapse(db, instance.id, m.step_index, title, next, &notify).await?
    } else {
        Lapsed::Nothing
    };
    mails::finish(
        db,
        m,
        if lapsed == Lapsed::Nothing {
            Outcome::Skipped
        } else {
            Outcome::Done
        },
        now,
    )
    .await?;
    if lapsed != Lapsed::Nothing {
        tracing::info!(instance = instance.id, step = m.step_index, outcome = ?lapsed, "a step's deadline passed");
    }
    Ok(lapsed != Lapsed::Nothing)
}

enum Sent {
    Yes,
    Retry,
    No,
    Skipped,
}

/// Whether `m`'s participant still has something to be emailed for: the instance runs and
/// still waits at the row's step; for a link, the participant has something left to answer
/// (at this step or a later one: an administrator may send ahead); for a reminder, the
/// participant answers this step and has not yet.
async fn still_waits(
    db: &Db,
    instance: &InstanceRow,
    definition: &Definition,
    step: &Step,
    m: &Claimed,
    kind: Kind,
) -> Result<bool, sqlx::Error> {
    if instance.state.is_over() || instance.step_index != m.step_index {
        return Ok(false);
    }
    let Some(who) = Participant::parse(&m.participant) else {
        return Ok(false);
    };
    if kind == Kind::Link {
        let left =
            crate::domain::instance::progress::participants_left(db, instance, definition).await?;
        return Ok(left.contains(&who));
    }
    let Some(branch) = step.branch_of(&who) else {
        return Ok(false);
    };
    let answered =
        store::instances::answered_branches(db, instance.id, instance.step_index).await?;
    Ok(!answered.iter().any(|b| b == branch))
}

#[allow(clippy::too_many_arguments)]
async fn send_one(
    db: &Db,
    site: &Snapshot,
    mailer: &Mailer,
    instance: &InstanceRow,
    definition: &Definition,
    m: &Claimed,
    kind: Kind,
    now: i64,
) -> Result<Sent, Error> {
    let step = definition
        .steps
        .get(usize::try_from(m.step_index).unwrap_or(usize::MAX))
        // A complete instance's outcome is told at its place past the last step.
        .or_else(|| kind.is_notice().then(|| definition.steps.last()).flatten());
    let contact = store::mails::contact(db, instance.id, &m.participant).await?;
    let (Some(step), Some(contact)) = (step, contact) else {
        mails::finish(db, m, Outcome::Skipped, now).await?;
        return Ok(Sent::Skipped);
    };
    if kind.is_notice() {
        return send_notice(
            db, site, mailer, instance, definition, step, &contact, m, now,
        )
        .await;
    }
    if !still_waits(db, instance, definition, step, m, kind).await? {
        mails::finish(db, m, Outcome::Skipped, now).await?;
        return Ok(Sent::Skipped);
    }
    let Some(to) = reader(db, m, &contact, now).await? else {
        return Ok(Sent::No);
    };
    let who = Participant::parse(&m.participant).unwrap_or_default();
    let settings = &site.settings;
    // The site's default lifetime, or up to the step's deadline when that is later (within
    // the longest lifetime a link may have): an emailed link works as long as its step waits.
    let mut expires = now + i64::try_from(settings.default_link_ttl).unwrap_or(i64::MAX / 2);
    if step.expires.is_some() {
        let longest = now + i64::try_from(crate::domain::settings::MAX_TTL).unwrap_or(0);
        if let Some(deadline) = store::mails::deadline_of(db, instance.id, m.step_index).await? {
            expires = expires.max(deadline.min(longest));
        }
    }
    let claims = Claims {
        kind: ClaimKind::Link,
        instance: instance.id,
        branch: who.claim(),
        expires,
    };
    let current = crate::domain::instance::current_keys(db, &site.keys).await?;
    let keys = current.as_ref().unwrap_or(&site.keys);
    let token = capability::sign(keys, &claims, &instance.token);
    let url = format!(
        "{}/interaction/{token}",
        settings.base_url.trim_end_matches('/')
    );
    let lang = Lang::from_code(&contact.lang).unwrap_or_default();
    let workflow = workflow_label(db, instance, lang).await?;
    let letter = Letter {
        about: About {
            lang,
            site: &settings.site_name,
            subject: &instance.subject_title,
            workflow: &workflow,
            step: step.title_in(lang),
            name: &contact.name,
        },
        kind,
        url: &url,
        expires: claims.expires,
    };
    let id = message_id(&site.keys, m.id, &settings.base_url, &mailer.from);
    let message = letter.message(from(mailer), to, &id);
    let link = store::links::record_unlisted(
        db,
        &store::links::NewLink {
            instance: instance.id,
            step: m.step_index,
            hash: &keys.keyed_hash("link", &token),
            participant: who.as_str(),
            expires: claims.expires,
            issued_by: "mail",
            generation: keys.generation(),
        },
    )
    .await?;
    let outcome = match message {
        Ok(message) => tokio::time::timeout(LONGEST_SEND, mailer.send(message))
            .await
            .unwrap_or(Err("timeout")),
        Err(e) => Err(e),
    };
    match outcome {
        Ok(()) => {
            let next = match (kind, step.remind) {
                (Kind::Reminder, Some(r)) => {
                    let so_far =
                        store::mails::reminders_at(db, instance.id, m.step_index, &m.participant)
                            .await?;
                    (so_far < i64::from(r.times))
                        .then(|| now + i64::try_from(r.after).unwrap_or(i64::MAX / 2))
                }
                _ => None,
            };
            store::instances::emailed(db, m, &step.title, next, now).await?;
            tracing::info!(instance = instance.id, participant = %who, kind = kind.as_str(), "an email was sent");
            Ok(Sent::Yes)
        }
        Err(error) => {
            store::links::forget(db, link).await?;
            let jitter = crate::domain::keys::random_bytes()[0];
            let (outcome, sent) = match retry_at(now, m.attempts + 1, jitter) {
                Some(at) => (Outcome::Retry(at, error), Sent::Retry),
                None => (Outcome::Failed(error), Sent::No),
            };
            mails::finish(db, m, outcome, now).await?;
            tracing::info!(instance = instance.id, participant = %who, error, "an email was not sent");
            Ok(sent)
        }
    }
}

/// The label of `instance`'s workflow in the reader's language (its subject, should the
/// workflow's row be gone): a read by primary key.
async fn workflow_label(db: &Db, instance: &InstanceRow, lang: Lang) -> Result<String, Error> {
    Ok(store::workflows::labels_of(db, instance.workflow_id)
        .await?
        .map_or_else(
            || instance.subject_title.clone(),
            |(label, labels)| label_in(&label, &labels, lang),
        ))
}

/// Sends a notice (no link): a branch not needed, or an instance's outcome to whoever filed
/// it, with the last comment given and a copy of what they submitted.
#[allow(clippy::too_many_arguments)]
async fn send_notice(
    db: &Db,
    site: &Snapshot,
    mailer: &Mailer,
    instance: &InstanceRow,
    definition: &Definition,
    step: &Step,
    contact: &store::mails::ContactRow,
    m: &Claimed,
    now: i64,
) -> Result<Sent, Error> {
    let Some(to) = reader(db, m, contact, now).await? else {
        return Ok(Sent::No);
    };
    let lang = Lang::from_code(&contact.lang).unwrap_or_default();
    let workflow = workflow_label(db, instance, lang).await?;
    let mut receipts = Vec::new();
    let (told, comment, answers) = if m.kind() == Some(Kind::Outcome) {
        // The receipts of what the reader answered, the ones the doorway offers.
        receipts = crate::domain::receipts::of_participant(
            db,
            &site.keys,
            &site.settings.base_url,
            instance.id,
            &m.participant,
        )
        .await?
        .into_iter()
        .map(|r| (r.file_name(), r.token))
        .collect();
        let history = store::instances::history(db, instance.id).await?;
        let said = |h: &&store::instances::HistoryRow, key: &str| {
            serde_json::from_str::<serde_json::Value>(&h.answer)
                .ok()
                .and_then(|v| v.get(key)?.as_str().map(str::to_owned))
                .filter(|c| !c.is_empty())
        };
        let comment = history
            .iter()
            .rev()
            .find_map(|h| said(&h, "comment").or_else(|| said(&h, "reason")))
            .unwrap_or_default();
        let answers = history
            .iter()
            .filter(|h| h.event == Event::Answered && h.participant == m.participant)
            .flat_map(|h| {
                let shown = definition
                    .steps
                    .get(usize::try_from(h.step_index).unwrap_or(usize::MAX));
                answer_lines(lang, &h.answer, shown)
            })
            .collect();
        (Told::Outcome(instance.state), comment, answers)
    } else {
        (Told::Closed, String::new(), Vec::new())
    };
    let notice = Notice {
        about: About {
            lang,
            site: &site.settings.site_name,
            subject: &instance.subject_title,
            workflow: &workflow,
            step: step.title_in(lang),
            name: &contact.name,
        },
        told,
        comment: &comment,
        answers,
        receipts,
    };
    let id = message_id(&site.keys, m.id, &site.settings.base_url, &mailer.from);
    let attached = notice.receipts.len() as u64;
    deliver(
        db,
        mailer,
        m,
        notice.message(from(mailer), to, &id),
        attached,
        now,
    )
    .await
}

/// Sends a `| verify email` step's code (`interaction::code`), derived here from the site keys
/// and its row, while it is the link's current code and lives: an email a newer code replaced,
/// or one whose code expired while it waited, is set aside.
async fn send_code(
    db: &Db,
    site: &Snapshot,
    mailer: &Mailer,
    instance: &InstanceRow,
    definition: &Definition,
    m: &Claimed,
    now: i64,
) -> Result<Sent, Error> {
    let row = store::email_codes::of_mail(db, m.id)
        .await?
        .filter(|r| !r.code_hash.is_empty() && r.expires_at > now);
    let contact = store::mails::contact(db, instance.id, &m.participant).await?;
    let step = definition
        .steps
        .get(usize::try_from(m.step_index).unwrap_or(usize::MAX));
    let (Some(row), Some(contact), Some(step)) = (row, contact, step) else {
        mails::finish(db, m, Outcome::Skipped, now).await?;
        return Ok(Sent::Skipped);
    };
    let Some(to) = reader(db, m, &contact, now).await? else {
        return Ok(Sent::No);
    };
    let lang = Lang::from_code(&contact.lang).unwrap_or_default();
    let workflow = workflow_label(db, instance, lang).await?;
    let about = About {
        lang,
        site: &site.settings.site_name,
        subject: &instance.subject_title,
        workflow: &workflow,
        step: step.title_in(lang),
        name: &contact.name,
    };
    let code = crate::domain::interaction::code::derive(&site.keys, row.link_id, &row.nonce);
    let id = message_id(&site.keys, m.id, &site.settings.base_url, &mailer.from);
    let message = super::code::message(&about, &code, from(mailer), to, &id);
    deliver(db, mailer, m, message, 0, now).await
}

/// Sends a message that carries no link (with `receipts` receipts attached) and records how it
/// went: sent, or tried again on the schedule (`retry_at`), or failed for good.
async fn deliver(
    db: &Db,
    mailer: &Mailer,
    m: &Claimed,
    message: Result<lettre::Message, &'static str>,
    receipts: u64,
    now: i64,
) -> Result<Sent, Error> {
    let outcome = match message {
        Ok(message) => tokio::time::timeout(LONGEST_SEND, mailer.send(message))
            .await
            .unwrap_or(Err("timeout")),
        Err(e) => Err(e),
    };
    let kind = m.kind().map_or("", Kind::as_str);
    match outcome {
        Ok(()) => {
            mails::finish(db, m, Outcome::Done, now).await?;
            mailer
                .figures
                .receipts
                .count(crate::domain::receipts::Outcome::Emailed, receipts);
            tracing::info!(instance = m.instance_id, participant = %m.participant, kind, "an email was sent");
            Ok(Sent::Yes)
        }
        Err(error) => {
            let jitter = crate::domain::keys::random_bytes()[0];
            let (outcome, sent) = match retry_at(now, m.attempts + 1, jitter) {
                Some(at) => (Outcome::Retry(at, error), Sent::Retry),
                None => (Outcome::Failed(error), Sent::No),
            };
            mails::finish(db, m, outcome, now).await?;
            tracing::info!(instance = m.instance_id, participant = %m.participant, kind, error, "an email was not sent");
            Ok(sent)
        }
    }
}

/// The reader's mailbox; `None` once the row failed for good, their address being one an
/// email cannot be written to.
async fn reader(
    db: &Db,
    m: &Claimed,
    contact: &store::mails::ContactRow,
    now: i64,
) -> Result<Option<Mailbox>, Error> {
    let to = mailbox(&contact.email, &contact.name);
    if to.is_none() {
        mails::finish(db, m, Outcome::Failed("address"), now).await?;
    }
    Ok(to)
}

fn from(mailer: &Mailer) -> Mailbox {
    mailer.from.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_over_about_two_days_then_stop() {
        assert_eq!(retry_at(1000, 1, 0), Some(1060));
        assert_eq!(retry_at(1000, 2, 255), Some(1000 + 300 + 30));
        let total: i64 = BACKOFF.iter().sum();
        assert!((86_400..3 * 86_400).contains(&total), "{total}");
        assert_eq!(retry_at(1000, BACKOFF.len() as i64 + 1, 0), None);
    }
}
