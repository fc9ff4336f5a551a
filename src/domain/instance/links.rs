//! An instance's links: issue one (its URL shown once), email one, list them a page at a time
//! with each one's state, revoke one or all.

use super::{Actor, InstanceError, Refusal, participant_left, participants_left};
use crate::domain::capability::{self, Claims, Kind};
use crate::domain::keys::SiteKeys;
use crate::domain::settings::{MAX_TTL, MIN_TTL};
use crate::domain::workflow::Definition;
use crate::domain::workflow::versions::Cache;
use crate::store::instances::InstanceRow;
use crate::store::links::LinkRow;
use crate::store::{self, Db};

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
) -> Result<Issued, InstanceError> {
    let Some(instance) = store::instances::by_id(db, instance_id).await? else {
        return Err(Refusal::InstanceUnknown(instance_id).into());
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
) -> Result<Issued, InstanceError> {
    if !(MIN_TTL..=MAX_TTL).contains(&order.ttl) {
        return Err(Refusal::TtlInvalid.into());
    }
    if instance.state.is_over() {
        return Err(Refusal::InstanceOver.into());
    }
    let who = participant_left(db, instance, definition, order.participant).await?;
    let claims = Claims {
        kind: Kind::Link,
        instance: instance.id,
        branch: who.claim(),
        expires: order.now + order.ttl as i64,
    };
    let current = current_keys(db, keys).await?;
    let keys = current.as_ref().unwrap_or(keys);
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
            generation: keys.generation(),
        },
        order.daily_cap,
    )
    .await?;
    let Ok(id) = recorded else {
        return Err(Refusal::LinkCap(order.daily_cap.unwrap_or(0)).into());
    };
    tracing::info!(instance = instance.id, participant = %who, "link issued");
    Ok(Issued {
        url: format!("{}/interaction/{token}", base_url.trim_end_matches('/')),
        id,
        expires: claims.expires,
    })
}

/// The site's keys read again when `keys` (a snapshot's, held a few seconds) are older than a
/// rotation made since, so no link is signed under keys already retired; `None` when they are
/// the current ones (one read of the generation).
pub async fn current_keys(db: &Db, keys: &SiteKeys) -> Result<Option<SiteKeys>, sqlx::Error> {
    if store::keys::generation(db).await? == keys.generation() {
        return Ok(None);
    }
    store::keys::load(db).await.map(Some)
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
) -> Result<(), InstanceError> {
    let daily_cap = api.map(|a| a.daily_cap);
    let Some(instance) = store::instances::by_id(db, instance_id).await? else {
        return Err(Refusal::InstanceUnknown(instance_id).into());
    };
    if instance.state.is_over() {
        return Err(Refusal::InstanceOver.into());
    }
    let definition = versions.get(db, instance.version_id).await?;
    let who = participant_left(db, &instance, &definition, participant).await?;
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
            return Err(Refusal::NoAddress(who.as_str().to_owned()).into());
        }
        store::mails::Queued::CapReached => {
            return Err(Refusal::LinkCap(daily_cap.unwrap_or(0)).into());
        }
        store::mails::Queued::QuotaSpent(spent) => {
            return Err(Refusal::EmailRate(spent).into());
        }
    }
    tracing::info!(instance = instance.id, participant = %who, "a link's email was queued");
    Ok(())
}

/// An issued link's state, as the instance page lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkState {
    Active,
    Expired,
    Revoked,
    /// Its participant has nothing left to answer.
    UsedUp,
    /// Signed under site keys a rotation has since replaced: it opens nothing.
    Void,
}

impl LinkState {
    pub fn message_id(self) -> &'static str {
        match self {
            LinkState::Active => "link-state-active",
            LinkState::Expired => "link-state-expired",
            LinkState::Revoked => "link-state-revoked",
            LinkState::UsedUp => "link-state-used-up",
            LinkState::Void => "link-state-void",
        }
    }

    /// The state as the API names it.
    pub fn as_str(self) -> &'static str {
        match self {
            LinkState::Active => "active",
            LinkState::Expired => "expired",
            LinkState::Revoked => "revoked",
            LinkState::UsedUp => "used_up",
            LinkState::Void => "void",
        }
    }

    pub const ALL: [LinkState; 5] = [
        LinkState::Active,
        LinkState::Expired,
        LinkState::Revoked,
        LinkState::UsedUp,
        LinkState::Void,
    ];
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
    let generation = store::keys::generation(db).await?;
    let page: store::InstancePage<LinkRow> =
        store::page_of_instance(db, instance.id, before, limit).await?;
    let links = page
        .rows
        .into_iter()
        .map(|l| {
            let state = if l.revoked_at.is_some() {
                LinkState::Revoked
            } else if l.generation < generation {
                LinkState::Void
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
        older: page.older,
        total: page.total,
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
