//! Handing a participant of a running instance to someone else: a colleague on holiday, a
//! manager who left. The old contact's links stop working and the new contact is emailed, in
//! one transaction.

use super::{Actor, InstanceError, Refusal};
use crate::domain::mail::{self, ContactInput};
use crate::domain::workflow::versions::Cache;
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
    if !store::links::reassign(db, id, &row, current, &by.stored()).await? {
        return Err(Refusal::InstanceOver.into());
    }
    tracing::info!(instance = id, participant = %row.participant, "a participant was reassigned");
    Ok(())
}
