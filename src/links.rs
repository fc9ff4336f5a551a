//! Operations on instances shared by the admin pages and the CLI: start one, issue a link,
//! revoke its links. Each validates its input the same way for both.

use crate::capability::{self, Claims, Kind};
use crate::i18n::Message;
use crate::keys::SiteKeys;
use crate::settings::{MAX_TTL, MIN_TTL};
use crate::store::{self, Db};
use crate::workflow::Definition;

/// Why an operation was refused, in the operator's words.
pub type Refused = Message;

pub const MAX_TITLE: usize = 200;
pub const MAX_BODY: usize = 10_000;

/// Starts an instance of a workflow about a subject; returns its id.
pub async fn start(
    db: &Db,
    workflow_id: i64,
    title: &str,
    body: &str,
) -> Result<Result<i64, Vec<(&'static str, Refused)>>, sqlx::Error> {
    let mut errors = Vec::new();
    if store::workflows::by_id(db, workflow_id).await?.is_none() {
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
    if !errors.is_empty() {
        return Ok(Err(errors));
    }
    let id = store::instances::create(
        db,
        workflow_id,
        title,
        body.trim(),
        &crate::keys::random_token(),
    )
    .await?;
    tracing::info!(instance = id, workflow = workflow_id, "instance started");
    Ok(Ok(id))
}

/// Signs a link for an instance (and a branch) that lives `ttl` seconds, and returns its URL
/// on `base_url`. The link is not stored anywhere; only the instance's history notes it.
pub async fn issue(
    db: &Db,
    keys: &SiteKeys,
    base_url: &str,
    instance_id: i64,
    branch: Option<&str>,
    ttl: u64,
    now: i64,
) -> Result<Result<String, Refused>, sqlx::Error> {
    let Some(instance) = store::instances::by_id(db, instance_id).await? else {
        return Ok(Err(
            Message::new("link-instance-unknown").arg("id", instance_id.to_string())
        ));
    };
    let branch = branch.map(str::trim).filter(|b| !b.is_empty());
    if let Some(b) = branch {
        let workflow = store::workflows::by_id(db, instance.workflow_id).await?;
        let known = workflow
            .and_then(|w| Definition::from_json(&w.definition))
            .is_some_and(|d| d.steps.iter().any(|s| s.branches.iter().any(|x| x == b)));
        if !known {
            return Ok(Err(
                Message::new("link-branch-unknown").arg("branch", b.to_owned())
            ));
        }
    }
    if !(MIN_TTL..=MAX_TTL).contains(&ttl) {
        return Ok(Err(Message::new("link-ttl-invalid")
            .arg("min", MIN_TTL.to_string())
            .arg("max", MAX_TTL.to_string())));
    }
    let claims = Claims {
        kind: Kind::Link,
        instance: instance.id,
        branch: branch.map(str::to_owned),
        expires: now + ttl as i64,
    };
    let token = capability::sign(keys, &claims, &instance.token);
    store::instances::note(
        db,
        instance.id,
        instance.step_index,
        branch.unwrap_or(""),
        "link_issued",
    )
    .await?;
    Ok(Ok(format!(
        "{}/interaction/{token}",
        base_url.trim_end_matches('/')
    )))
}

/// Rotates the instance's token: every link and handle issued for it stops working.
pub async fn revoke(db: &Db, instance_id: i64) -> Result<bool, sqlx::Error> {
    let Some(instance) = store::instances::by_id(db, instance_id).await? else {
        return Ok(false);
    };
    store::instances::rotate_token(db, instance.id, &crate::keys::random_token()).await?;
    store::instances::note(db, instance.id, instance.step_index, "", "links_revoked").await?;
    tracing::info!(instance = instance.id, "links revoked");
    Ok(true)
}
