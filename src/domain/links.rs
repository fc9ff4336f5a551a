//! Operations on instances shared by the admin pages and the CLI: start one, issue a link for a
//! participant, list and revoke links. Each validates its input the same way for both.

use crate::domain::capability::{self, Claims, Kind};
use crate::domain::keys::SiteKeys;
use crate::domain::settings::{MAX_TTL, MIN_TTL};
use crate::domain::workflow::versions::Cache;
use crate::domain::workflow::{Definition, InstanceState, Participant};
use crate::error::Error;
use crate::i18n::Message;
use crate::store::instances::InstanceRow;
use crate::store::links::LinkRow;
use crate::store::{self, Db};

/// Why starting an instance or issuing a link was refused: each knows the field it is about and
/// says why in the reader's language, so the admin form, the CLI and the API read one answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    WorkflowUnknown,
    TitleInvalid,
    BodyTooLong,
    InstanceUnknown(i64),
    InstanceOver,
    TtlInvalid,
    ParticipantMissing {
        participants: String,
    },
    ParticipantUnknown {
        participant: String,
        participants: String,
    },
    ParticipantDone(String),
    /// An API token runs as many instances as its site allows (the hard cap).
    RunningCap(u64),
    /// An instance had as many links issued through the API in a day as the site allows.
    LinkCap(u64),
    /// A participant's contact, refused.
    Contact(crate::domain::mail::ContactRefusal),
    /// "Send" asked for a participant who has no address.
    NoAddress(String),
    /// The API's hourly quota of link emails (to one address, or by one token) is spent.
    EmailRate(crate::store::mails::QuotaSpent),
}

impl Refusal {
    /// The field of the form (or the request) it is about.
    pub fn field(&self) -> &'static str {
        match self {
            Refusal::WorkflowUnknown | Refusal::RunningCap(_) => "workflow",
            Refusal::TitleInvalid => "title",
            Refusal::BodyTooLong => "body",
            Refusal::InstanceUnknown(_) | Refusal::InstanceOver | Refusal::LinkCap(_) => "instance",
            Refusal::TtlInvalid => "ttl",
            Refusal::ParticipantMissing { .. }
            | Refusal::ParticipantUnknown { .. }
            | Refusal::ParticipantDone(_)
            | Refusal::NoAddress(_)
            | Refusal::EmailRate(_) => "participant",
            Refusal::Contact(c) => match c.part {
                crate::domain::mail::Part::Participant => "contacts",
                crate::domain::mail::Part::Email => "email",
                crate::domain::mail::Part::Name => "name",
                crate::domain::mail::Part::Lang => "lang",
            },
        }
    }

    /// The participant a contact's refusal is about (`None` for any other refusal): with
    /// `field`, it names the form's field (`email_legal`) or the API body's
    /// (`participants.legal.email`).
    pub fn contact_of(&self) -> Option<&str> {
        match self {
            Refusal::Contact(c) => Some(&c.participant),
            _ => None,
        }
    }

    pub fn message(&self) -> Message {
        match self {
            Refusal::WorkflowUnknown => Message::new("instance-workflow-unknown"),
            Refusal::TitleInvalid => {
                Message::new("instance-title-invalid").arg("max", MAX_TITLE.to_string())
            }
            Refusal::BodyTooLong => Message::new("field-too-long").arg("max", MAX_BODY.to_string()),
            Refusal::InstanceUnknown(id) => {
                Message::new("link-instance-unknown").arg("id", id.to_string())
            }
            Refusal::InstanceOver => Message::new("link-instance-over"),
            Refusal::TtlInvalid => Message::new("link-ttl-invalid")
                .arg("min", MIN_TTL.to_string())
                .arg("max", MAX_TTL.to_string()),
            Refusal::ParticipantMissing { participants } => {
                Message::new("link-participant-missing").arg("participants", participants.clone())
            }
            Refusal::ParticipantUnknown {
                participant,
                participants,
            } => Message::new("link-participant-unknown")
                .arg("participant", participant.clone())
                .arg("participants", participants.clone()),
            Refusal::ParticipantDone(participant) => {
                Message::new("link-participant-done").arg("participant", participant.clone())
            }
            Refusal::RunningCap(cap) => Message::new("api-running-cap").arg("cap", cap.to_string()),
            Refusal::LinkCap(cap) => Message::new("api-link-cap").arg("cap", cap.to_string()),
            Refusal::Contact(c) => c.message(),
            Refusal::NoAddress(participant) => {
                Message::new("link-no-address").arg("participant", participant.clone())
            }
            Refusal::EmailRate(crate::store::mails::QuotaSpent::Address(cap)) => {
                Message::new("api-email-rate-address").arg("cap", cap.to_string())
            }
            Refusal::EmailRate(crate::store::mails::QuotaSpent::Token(cap)) => {
                Message::new("api-email-rate-token").arg("cap", cap.to_string())
            }
        }
    }
}

pub const MAX_TITLE: usize = 200;
pub const MAX_BODY: usize = 10_000;

pub use crate::domain::workflow::history::Actor;
pub use crate::store::instances::Quota;

/// Starts an instance of a workflow, on its newest version, about a subject; returns its id.
/// Started for an API token, the token's running cap is counted and the instance taken in one
/// transaction (`store::instances::create`), so no two starts both take the last place, in one
/// process or several.
// Eight inputs until the instance module takes a `Start` order (the next move of this file).
#[allow(clippy::too_many_arguments)]
pub async fn start(
    db: &Db,
    workflow_id: i64,
    title: &str,
    body: &str,
    by: &Actor,
    quota: Option<Quota>,
    contacts: &[crate::domain::mail::ContactInput],
    api_mail: Option<&crate::domain::mail::ApiMail<'_>>,
) -> Result<Result<i64, Vec<Refusal>>, sqlx::Error> {
    let mut errors = Vec::new();
    let workflow = store::workflows::by_id(db, workflow_id).await?;
    let definition = workflow
        .as_ref()
        .and_then(|w| Definition::from_json(&w.definition));
    if definition.is_none() {
        errors.push(Refusal::WorkflowUnknown);
    }
    let contacts = match &definition {
        Some(d) => match crate::domain::mail::check(d, contacts) {
            Ok(rows) => rows,
            Err(refusals) => {
                errors.extend(refusals.into_iter().map(Refusal::Contact));
                Vec::new()
            }
        },
        None => Vec::new(),
    };
    let title = title.trim();
    if title.is_empty() || title.chars().count() > MAX_TITLE {
        errors.push(Refusal::TitleInvalid);
    }
    if body.chars().count() > MAX_BODY {
        errors.push(Refusal::BodyTooLong);
    }
    let (Some(workflow), Some(definition)) = (workflow, definition) else {
        return Ok(Err(errors));
    };
    if !errors.is_empty() {
        return Ok(Err(errors));
    }
    let first = definition
        .steps
        .first()
        .map(|s| s.start())
        .unwrap_or_default();
    // The first step's link emails, counted against an API token's hourly quotas.
    let mail_quota = api_mail.map(|m| {
        m.quota(
            contacts
                .iter()
                .filter(|c| {
                    first
                        .participants
                        .iter()
                        .any(|p| p.as_str() == c.participant)
                })
                .map(|c| c.email.as_str()),
        )
    });
    let started = store::instances::create(
        db,
        &store::instances::New {
            workflow_id: workflow.id,
            version_id: workflow.version_id,
            title,
            body: body.trim(),
            token: &crate::domain::keys::random_token(),
            started_by: crate::domain::lists::Starter::of(by).as_str(),
            actor: &by.stored(),
            contacts: &contacts,
            first,
            mail_quota: mail_quota.as_ref(),
        },
        quota,
    )
    .await?;
    let id = match started {
        Ok(id) => id,
        Err(store::instances::StartRefused::RunningCap) => {
            let cap = quota.map_or(0, |q| q.running_cap);
            return Ok(Err(vec![Refusal::RunningCap(cap)]));
        }
        Err(store::instances::StartRefused::EmailQuota(spent)) => {
            return Ok(Err(vec![Refusal::EmailRate(spent)]));
        }
    };
    tracing::info!(
        instance = id,
        workflow = workflow_id,
        version = workflow.version,
        "instance started"
    );
    Ok(Ok(id))
}

pub use crate::domain::instance::participants_left;

/// An issued link: its URL (shown once) and its record's id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issued {
    pub url: String,
    pub id: i64,
    pub expires: i64,
}

/// What a link is issued with: for whom, for how long, by whom, and under which daily cap (the
/// API's; `None` from the admin pages and the CLI).
#[derive(Clone, Debug)]
pub struct Order<'a> {
    pub participant: &'a str,
    pub ttl: u64,
    pub now: i64,
    pub by: &'a Actor,
    pub daily_cap: Option<u64>,
}

/// Signs a link for a participant of an instance, that lives `ttl` seconds, records it (by a
/// keyed hash) and returns its URL on `base_url`.
pub async fn issue(
    db: &Db,
    versions: &Cache,
    keys: &SiteKeys,
    base_url: &str,
    instance_id: i64,
    order: &Order<'_>,
) -> Result<Result<Issued, Refusal>, Error> {
    let Some(instance) = store::instances::by_id(db, instance_id).await? else {
        return Ok(Err(Refusal::InstanceUnknown(instance_id)));
    };
    let definition = versions.get(db, instance.version_id).await?;
    issue_on(db, keys, base_url, &instance, &definition, order).await
}

/// `issue` on an instance already read (the API reads it once, to check its reach).
pub async fn issue_on(
    db: &Db,
    keys: &SiteKeys,
    base_url: &str,
    instance: &InstanceRow,
    definition: &Definition,
    order: &Order<'_>,
) -> Result<Result<Issued, Refusal>, Error> {
    if !(MIN_TTL..=MAX_TTL).contains(&order.ttl) {
        return Ok(Err(Refusal::TtlInvalid));
    }
    if instance.state.is_over() {
        return Ok(Err(Refusal::InstanceOver));
    }
    let who = match participant_left(db, instance, definition, order.participant).await? {
        Ok(who) => who,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let claims = Claims {
        kind: Kind::Link,
        instance: instance.id,
        branch: who.claim(),
        expires: order.now + order.ttl as i64,
    };
    let token = capability::sign(keys, &claims, &instance.token);
    let recorded = store::links::record(
        db,
        &store::links::NewLink {
            instance: instance.id,
            step: instance.step_index,
            hash: &keys.keyed_hash("link", &token),
            participant: who.as_str(),
            expires: claims.expires,
            issued_by: &order.by.stored(),
        },
        order.daily_cap,
    )
    .await?;
    let Ok(id) = recorded else {
        return Ok(Err(Refusal::LinkCap(order.daily_cap.unwrap_or(0))));
    };
    tracing::info!(instance = instance.id, participant = %who, "link issued");
    Ok(Ok(Issued {
        url: format!("{}/interaction/{token}", base_url.trim_end_matches('/')),
        id,
        expires: claims.expires,
    }))
}

/// The participant `participant` names (the default one when empty), when it is one of the
/// definition's and still has something to answer in the instance.
async fn participant_left(
    db: &Db,
    instance: &InstanceRow,
    definition: &Definition,
    participant: &str,
) -> Result<Result<Participant, Refusal>, sqlx::Error> {
    let participant = participant.trim();
    let names = || {
        definition
            .participants()
            .iter()
            .map(|p| p.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let who = if participant.is_empty() {
        if !definition.participants().contains(&&Participant::default()) {
            return Ok(Err(Refusal::ParticipantMissing {
                participants: names(),
            }));
        }
        Participant::default()
    } else {
        match Participant::parse(participant) {
            Some(p) if definition.participants().contains(&&p) => p,
            _ => {
                return Ok(Err(Refusal::ParticipantUnknown {
                    participant: participant.chars().take(40).collect(),
                    participants: names(),
                }));
            }
        }
    };
    if !participants_left(db, instance, definition)
        .await?
        .contains(&who)
    {
        return Ok(Err(Refusal::ParticipantDone(who.as_str().to_owned())));
    }
    Ok(Ok(who))
}

/// Queues an email with a participant's link, as "Issue a link" would show it: the sender signs
/// it when it sends (`domain::mail::send`), with the site's default lifetime. Refused like an
/// issue, when the participant has no address in this instance, and for an API token (`api`)
/// past the API's links-per-instance-per-day cap (which an emailed link counts toward as an
/// issued one does) or its hourly quotas of link emails per address and per token: a token
/// cannot flood an inbox, and its emails queue after the site's own.
pub async fn send(
    db: &Db,
    versions: &Cache,
    instance_id: i64,
    participant: &str,
    api: Option<&crate::domain::mail::ApiMail<'_>>,
) -> Result<Result<(), Refusal>, Error> {
    let daily_cap = api.map(|a| a.daily_cap);
    let Some(instance) = store::instances::by_id(db, instance_id).await? else {
        return Ok(Err(Refusal::InstanceUnknown(instance_id)));
    };
    if instance.state.is_over() {
        return Ok(Err(Refusal::InstanceOver));
    }
    let definition = versions.get(db, instance.version_id).await?;
    let who = match participant_left(db, &instance, &definition, participant).await? {
        Ok(who) => who,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let quota = match api {
        Some(api) => store::mails::contact(db, instance.id, who.as_str())
            .await?
            .map(|c| api.quota([c.email.as_str()])),
        None => None,
    };
    let queued = store::mails::queue_link(
        db,
        instance.id,
        instance.step_index,
        &who,
        daily_cap,
        quota.as_ref(),
        store::now(),
    )
    .await?;
    match queued {
        store::mails::Queued::Yes => {}
        store::mails::Queued::NoAddress => {
            return Ok(Err(Refusal::NoAddress(who.as_str().to_owned())));
        }
        store::mails::Queued::CapReached => {
            return Ok(Err(Refusal::LinkCap(daily_cap.unwrap_or(0))));
        }
        store::mails::Queued::QuotaSpent(spent) => {
            return Ok(Err(Refusal::EmailRate(spent)));
        }
    }
    tracing::info!(instance = instance.id, participant = %who, "a link's email was queued");
    Ok(Ok(()))
}

/// An issued link's state, as the instance page lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkState {
    Active,
    Expired,
    Revoked,
    /// Its participant has nothing left to answer.
    UsedUp,
}

impl LinkState {
    pub fn message_id(self) -> &'static str {
        match self {
            LinkState::Active => "link-state-active",
            LinkState::Expired => "link-state-expired",
            LinkState::Revoked => "link-state-revoked",
            LinkState::UsedUp => "link-state-used-up",
        }
    }
}

/// A page of an instance's links, newest first: up to `limit` older than `before` (from the
/// newest when `None`), each with its state, and the id to read older ones from.
pub struct LinkPage {
    pub links: Vec<(LinkRow, LinkState)>,
    pub older: Option<i64>,
    /// How many links the instance has in all.
    pub total: i64,
}

/// An instance's issued links, a page at a time, newest first, each with its state now.
pub async fn list(
    db: &Db,
    instance: &store::instances::InstanceRow,
    definition: &Definition,
    now: i64,
    before: Option<i64>,
    limit: i64,
) -> Result<LinkPage, sqlx::Error> {
    let left = participants_left(db, instance, definition).await?;
    let mut rows = store::links::page(db, instance.id, before, limit).await?;
    let limit = usize::try_from(limit).unwrap_or(0);
    let older = (rows.len() > limit).then(|| {
        rows.truncate(limit);
        rows.last().map(|l| l.id)
    });
    let total = store::links::count(db, instance.id).await?;
    let links = rows
        .into_iter()
        .map(|l| {
            let state = if l.revoked_at.is_some() {
                LinkState::Revoked
            } else if l.expires <= now {
                LinkState::Expired
            } else if !left.iter().any(|p| p.as_str() == l.participant) {
                LinkState::UsedUp
            } else {
                LinkState::Active
            };
            (l, state)
        })
        .collect();
    Ok(LinkPage {
        links,
        older: older.flatten(),
        total,
    })
}

/// Revokes one link of an instance; `false` when there is no such live link.
pub async fn revoke_one(
    db: &Db,
    instance_id: i64,
    link: i64,
    by: &Actor,
) -> Result<bool, sqlx::Error> {
    let Some(instance) = store::instances::by_id(db, instance_id).await? else {
        return Ok(false);
    };
    let done =
        store::links::revoke(db, instance.id, instance.step_index, link, &by.stored()).await?;
    if done {
        tracing::info!(instance = instance.id, link, "link revoked");
    }
    Ok(done)
}

/// Rotates the instance's token: every link and handle issued for it stops working.
pub async fn revoke(db: &Db, instance_id: i64, by: &Actor) -> Result<bool, sqlx::Error> {
    let Some(instance) = store::instances::by_id(db, instance_id).await? else {
        return Ok(false);
    };
    store::links::revoke_all(
        db,
        instance.id,
        instance.step_index,
        &crate::domain::keys::random_token(),
        &by.stored(),
    )
    .await?;
    tracing::info!(instance = instance.id, "links revoked");
    Ok(true)
}

/// The longest reason a cancel keeps, in characters.
pub const MAX_REASON: usize = 500;

/// Why a cancel was not done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CancelRefusal {
    /// No instance has this id.
    Missing(i64),
    /// It has ended already, in this state: nothing was changed.
    Ended(InstanceState),
    /// The reason is longer than [`MAX_REASON`]: nothing was changed.
    ReasonTooLong,
}

impl CancelRefusal {
    /// The refusal in the reader's language.
    pub fn message(self) -> Message {
        match self {
            CancelRefusal::Missing(id) => {
                Message::new("link-instance-unknown").arg("id", id.to_string())
            }
            CancelRefusal::Ended(_) => Message::new("instance-cancel-ended"),
            CancelRefusal::ReasonTooLong => {
                Message::new("instance-cancel-reason-long").arg("max", MAX_REASON.to_string())
            }
        }
    }
}

/// Cancels a running instance, for the admin page, the CLI and the API alike: it ends as
/// cancelled, every link and handle of it stops working (the same refusal as any bad link), a
/// payment under way is closed, and the history says who and why (`reason`, trimmed; none when
/// empty). Its running-instance cap place is freed with its state, and its workflow may be
/// deleted once every instance of it has ended.
pub async fn cancel(
    db: &Db,
    instance_id: i64,
    by: &Actor,
    reason: &str,
) -> Result<Result<(), CancelRefusal>, sqlx::Error> {
    let reason = reason.trim();
    if reason.chars().count() > MAX_REASON {
        return Ok(Err(CancelRefusal::ReasonTooLong));
    }
    let answer = match reason {
        "" => String::new(),
        r => serde_json::json!({ "reason": r }).to_string(),
    };
    let token = crate::domain::keys::random_token();
    if store::instances::cancel(db, instance_id, &token, &by.stored(), &answer).await? {
        tracing::info!(instance = instance_id, "instance cancelled");
        return Ok(Ok(()));
    }
    Ok(Err(
        match store::instances::by_id(db, instance_id).await? {
            None => CancelRefusal::Missing(instance_id),
            Some(row) => CancelRefusal::Ended(row.state),
        },
    ))
}
