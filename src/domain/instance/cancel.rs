//! Cancelling an instance.

use super::{Actor, InstanceError, MAX_REASON, Refusal};
use crate::store::{self, Db};

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
) -> Result<(), InstanceError> {
    let reason = reason.trim();
    if reason.chars().count() > MAX_REASON {
        return Err(Refusal::ReasonTooLong.into());
    }
    let answer = match reason {
        "" => String::new(),
        r => serde_json::json!({ "reason": r }).to_string(),
    };
    let token = crate::domain::keys::random_token();
    // Who besides the requester is told the outcome: the instance's version says.
    let notify = match store::instances::by_id(db, instance_id).await? {
        Some(row) => store::workflows::version(db, row.version_id)
            .await?
            .and_then(|v| crate::domain::workflow::Definition::from_json(&v.definition))
            .map(|d| d.notify_names())
            .unwrap_or_default(),
        None => Vec::new(),
    };
    if store::instances::cancel(db, instance_id, &token, &by.stored(), &answer, &notify).await? {
        tracing::info!(instance = instance_id, "instance cancelled");
        return Ok(());
    }
    Err(match store::instances::by_id(db, instance_id).await? {
        None => Refusal::InstanceUnknown(instance_id),
        Some(row) => Refusal::Ended(row.state),
    }
    .into())
}
