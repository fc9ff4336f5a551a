//! Handing a participant of a running instance to someone else: a colleague on holiday, a
//! manager who left. The old contact's links stop working and the new contact is emailed, in
//! one transaction.

use super::{Actor, InstanceError, Refusal};
use crate::domain::mail::{self, ApiMail, ContactInput};
use crate::domain::workflow::versions::Cache;
use crate::store::links::Reassigned;
use crate::store::{self, Db};

/// Gives `contact.participant` of instance `id` to the new contact `contact` (an address, a
/// name, a language: checked as at a start). The new contact is emailed their link when the
/// instance waits for that participant now; else when their step comes.
pub async fn reassign(
    db: &Db,
    versions: &Cache,
    id: i64,
    contact: &ContactInput,
    by: &Actor,
) -> Result<(), InstanceError> {
    reassign_for(db, versions, id, contact, by, None).await
}

/// [`reassign`] as an API token asks it (`api`): the new contact's email counts against the
/// token's hourly quotas of link emails, so a token cannot flood an inbox by handing a
/// participant over and over, and it queues after the site's own.
pub async fn reassign_for(
    db: &Db,
    versions: &Cache,
    id: i64,
    contact: &ContactInput,
    by: &Actor,
    api: Option<&ApiMail<'_>>,
) -> Result<(), InstanceError> {
    let Some(instance) = store::instances::by_id(db, id).await? else {
        return Err(Refusal::InstanceUnknown(id).into());
    };
    if instance.state.is_over() {
        return Err(Refusal::InstanceOver.into());
    }
    let definition = versions.get(db, instance.version_id).await?;
    let rows = mail::check(&definition, std::slice::from_ref(contact)).map_err(|refusals| {
        InstanceError::Refused(refusals.into_iter().map(Refusal::Contact).collect())
    })?;
    let Some(row) = rows.into_iter().next() else {
        return Err(Refusal::NoAddress(contact.participant.clone()).into());
    };
    let left = super::participants_left(db, &instance, &definition).await?;
    if !left.iter().any(|p| p.as_str() == row.participant) {
        return Err(Refusal::ParticipantDone(row.participant).into());
    }
    let current = definition
        .steps
        .get(usize::try_from(instance.step_index).unwrap_or(usize::MAX))
        .is_some_and(|s| {
            s.participants()
                .iter()
                .any(|p| p.as_str() == row.participant)
        });
    let quota = api.map(|a| a.quota([row.email.as_str()]));
    match store::links::reassign(db, id, &row, current, quota.as_ref(), &by.stored()).await? {
        Reassigned::Done => {}
        Reassigned::NotRunning => return Err(Refusal::InstanceOver.into()),
        Reassigned::QuotaSpent(spent) => return Err(Refusal::EmailRate(spent).into()),
    }
    tracing::info!(instance = id, participant = %row.participant, "a participant was reassigned");
    Ok(())
}
