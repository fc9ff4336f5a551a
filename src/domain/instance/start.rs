//! Starting an instance.

use super::{Actor, InstanceError, MAX_BODY, MAX_TITLE, Quota, Refusal};
use crate::domain::mail::{ApiMail, ContactInput};
use crate::domain::workflow::Definition;
use crate::store::{self, Db};

/// What an instance is started with.
#[derive(Clone, Copy, Debug)]
pub struct Start<'a> {
    pub workflow_id: i64,
    pub title: &'a str,
    pub body: &'a str,
    pub by: &'a Actor,
    /// The participants' addresses, as typed or sent (checked here).
    pub contacts: &'a [ContactInput],
    /// An API token's start: its running cap, and the quotas its link emails count against.
    pub api: Option<(Quota, &'a ApiMail<'a>)>,
}

impl<'a> Start<'a> {
    /// A start by `by` of `workflow_id` about `title`, with no body, contacts or API bounds
    /// (set on top).
    pub fn new(workflow_id: i64, title: &'a str, by: &'a Actor) -> Self {
        Start {
            workflow_id,
            title,
            body: "",
            by,
            contacts: &[],
            api: None,
        }
    }
}

/// Starts an instance of a workflow, on its newest version, about a subject; returns its id.
/// Started for an API token, the token's running cap is counted and the instance taken in one
/// transaction (`store::instances::create`), so no two starts both take the last place, in one
/// process or several; its first step's link emails are counted against the token's hourly
/// quotas in the same transaction. Every refusal is returned at once, each naming its field.
pub async fn start(db: &Db, order: &Start<'_>) -> Result<i64, InstanceError> {
    let Start {
        workflow_id,
        title,
        body,
        by,
        contacts,
        api,
    } = *order;
    let (quota, api_mail) = match api {
        Some((quota, mail)) => (Some(quota), Some(mail)),
        None => (None, None),
    };
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
        return Err(InstanceError::Refused(errors));
    };
    if !errors.is_empty() {
        return Err(InstanceError::Refused(errors));
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
            return Err(Refusal::RunningCap(cap).into());
        }
        Err(store::instances::StartRefused::EmailQuota(spent)) => {
            return Err(Refusal::EmailRate(spent).into());
        }
    };
    tracing::info!(
        instance = id,
        workflow = workflow_id,
        version = workflow.version,
        "instance started"
    );
    Ok(id)
}
