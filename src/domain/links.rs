//! Operations on instances shared by the admin pages and the CLI: start one, issue a link for a
//! participant, list and revoke links. Each validates its input the same way for both.

use crate::domain::capability::{self, Claims, Kind};
use crate::domain::keys::SiteKeys;
use crate::domain::settings::{MAX_TTL, MIN_TTL};
use crate::domain::workflow::{Definition, Participant};
use crate::error::Error;
use crate::i18n::Message;
use crate::store::links::LinkRow;
use crate::store::{self, Db};

/// Why an operation was refused, in the operator's words.
pub type Refused = Message;

pub const MAX_TITLE: usize = 200;
pub const MAX_BODY: usize = 10_000;

pub use crate::domain::workflow::history::Actor;

/// Starts an instance of a workflow, on its newest version, about a subject; returns its id.
pub async fn start(
    db: &Db,
    workflow_id: i64,
    title: &str,
    body: &str,
) -> Result<Result<i64, Vec<(&'static str, Refused)>>, sqlx::Error> {
    let mut errors = Vec::new();
    let workflow = store::workflows::by_id(db, workflow_id).await?;
    if workflow.is_none() {
        errors.push(("workflow", Message::new("instance-workflow-unknown")));
    }
    let title = title.trim();
    if title.is_empty() || title.chars().count() > MAX_TITLE {
        errors.push((
            "title",
            Message::new("instance-title-invalid").arg("max", MAX_TITLE.to_string()),
        ));
    }
    if body.chars().count() > MAX_BODY {
        errors.push((
            "body",
            Message::new("field-too-long").arg("max", MAX_BODY.to_string()),
        ));
    }
    let Some(workflow) = workflow.filter(|_| errors.is_empty()) else {
        return Ok(Err(errors));
    };
    let id = store::instances::create(
        db,
        workflow.id,
        workflow.version_id,
        title,
        body.trim(),
        &crate::domain::keys::random_token(),
    )
    .await?;
    tracing::info!(
        instance = id,
        workflow = workflow_id,
        version = workflow.version,
        "instance started"
    );
    Ok(Ok(id))
}

/// The participants of an instance's version who still have something to answer, in the order
/// they answer. A participant of a parallel step who has answered it waits for a later step.
pub async fn participants_left(
    db: &Db,
    instance: &store::instances::InstanceRow,
    definition: &Definition,
) -> Result<Vec<Participant>, sqlx::Error> {
    if instance.state.is_over() {
        return Ok(Vec::new());
    }
    let current = instance.step_index as usize;
    let answered =
        store::instances::answered_branches(db, instance.id, instance.step_index).await?;
    let mut left: Vec<Participant> = Vec::new();
    for (i, step) in definition.steps.iter().enumerate().skip(current) {
        for p in step.participants() {
            let done_here = i == current
                && step
                    .branch_of(p)
                    .is_some_and(|b| answered.iter().any(|a| a == b));
            if !done_here && !left.contains(p) {
                left.push(p.clone());
            }
        }
    }
    Ok(left)
}

/// An issued link: its URL (shown once) and its record's id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issued {
    pub url: String,
    pub id: i64,
    pub expires: i64,
}

/// Signs a link for a participant of an instance, that lives `ttl` seconds, records it (by a
/// keyed hash) and returns its URL on `base_url`.
#[allow(clippy::too_many_arguments)]
pub async fn issue(
    db: &Db,
    keys: &SiteKeys,
    base_url: &str,
    instance_id: i64,
    participant: &str,
    ttl: u64,
    now: i64,
    by: &Actor,
) -> Result<Result<Issued, Refused>, Error> {
    let Some(instance) = store::instances::by_id(db, instance_id).await? else {
        return Ok(Err(
            Message::new("link-instance-unknown").arg("id", instance_id.to_string())
        ));
    };
    if !(MIN_TTL..=MAX_TTL).contains(&ttl) {
        return Ok(Err(Message::new("link-ttl-invalid")
            .arg("min", MIN_TTL.to_string())
            .arg("max", MAX_TTL.to_string())));
    }
    if instance.state.is_over() {
        return Ok(Err(Message::new("link-instance-over")));
    }
    let version = store::workflows::version(db, instance.version_id)
        .await?
        .ok_or(Error::Corrupt(
            "an instance names a version that does not exist",
        ))?;
    let definition = Definition::from_json(&version.definition)
        .ok_or(Error::Corrupt("a stored workflow version does not parse"))?;
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
            return Ok(Err(
                Message::new("link-participant-missing").arg("participants", names())
            ));
        }
        Participant::default()
    } else {
        match Participant::parse(participant) {
            Some(p) if definition.participants().contains(&&p) => p,
            _ => {
                return Ok(Err(Message::new("link-participant-unknown")
                    .arg(
                        "participant",
                        participant.chars().take(40).collect::<String>(),
                    )
                    .arg("participants", names())));
            }
        }
    };
    if !participants_left(db, &instance, &definition)
        .await?
        .contains(&who)
    {
        return Ok(Err(
            Message::new("link-participant-done").arg("participant", who.as_str().to_owned())
        ));
    }
    let claims = Claims {
        kind: Kind::Link,
        instance: instance.id,
        branch: who.claim(),
        expires: now + ttl as i64,
    };
    let token = capability::sign(keys, &claims, &instance.token);
    let id = store::links::record(
        db,
        instance.id,
        instance.step_index,
        &keys.keyed_hash("link", &token),
        who.as_str(),
        claims.expires,
        &by.stored(),
    )
    .await?;
    tracing::info!(instance = instance.id, participant = %who, "link issued");
    Ok(Ok(Issued {
        url: format!("{}/interaction/{token}", base_url.trim_end_matches('/')),
        id,
        expires: claims.expires,
    }))
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

/// An instance's issued links, newest first, each with its state now.
pub async fn list(
    db: &Db,
    instance: &store::instances::InstanceRow,
    definition: &Definition,
    now: i64,
) -> Result<Vec<(LinkRow, LinkState)>, sqlx::Error> {
    let left = participants_left(db, instance, definition).await?;
    Ok(store::links::list(db, instance.id)
        .await?
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
        .collect())
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
