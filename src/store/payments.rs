//! Payments and the continuation handles that return to them. A payment is confirmed only by
//! the provider's signed notice; a handle only shows where its payment stands.

use super::Db;

#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct PaymentRow {
    pub id: i64,
    pub reference: String,
    pub instance_id: i64,
    pub step_index: i64,
    pub branch: String,
    pub participant: String,
    pub amount_cents: i64,
    pub currency: String,
    pub state: String,
}

const COLUMNS: &str =
    "id, reference, instance_id, step_index, branch, participant, amount_cents, currency, state";

/// A payment to start for one participant's step.
pub struct NewPayment<'a> {
    pub reference: &'a str,
    pub instance: i64,
    pub step: i64,
    pub branch: &'a str,
    pub participant: &'a str,
    pub amount_cents: i64,
    pub currency: &'a str,
}

/// Starts a payment, or joins the one already under way for the same step and branch, and
/// points the handle at it. Two starts at once make one payment, and each start's handle (every
/// handle is distinct: `capability` signs a nonce into each) points at it; a handle written twice
/// is updated in place: never a unique-key error.
pub async fn start(
    db: &Db,
    p: &NewPayment<'_>,
    handle_hash: &str,
    handle_expires: i64,
) -> Result<PaymentRow, sqlx::Error> {
    let now = super::now();
    let open_key = format!("{}:{}:{}", p.instance, p.step, p.branch);
    let mut tx = db.write().await?;
    sqlx::query(
        "INSERT INTO payments (reference, instance_id, step_index, branch, participant, \
         amount_cents, currency, state, open_key, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9, $9) ON CONFLICT DO NOTHING",
    )
    .bind(p.reference)
    .bind(p.instance)
    .bind(p.step)
    .bind(p.branch)
    .bind(p.participant)
    .bind(p.amount_cents)
    .bind(p.currency)
    .bind(&open_key)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    let payment: PaymentRow = sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM payments WHERE open_key = $1"
    ))
    .bind(&open_key)
    .fetch_one(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO handles (hash, instance_id, expires, payment_id) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (hash) DO UPDATE SET payment_id = excluded.payment_id",
    )
    .bind(handle_hash)
    .bind(p.instance)
    .bind(handle_expires)
    .bind(payment.id)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(payment)
}

pub async fn by_id(db: &Db, id: i64) -> Result<Option<PaymentRow>, sqlx::Error> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM payments WHERE id = $1"))
        .bind(id)
        .fetch_optional(db.reader())
        .await
}

/// The payment an unexpired handle returns to.
pub async fn by_handle(db: &Db, hash: &str, now: i64) -> Result<Option<PaymentRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM payments WHERE id = \
         (SELECT payment_id FROM handles WHERE hash = $1 AND expires > $2)"
    ))
    .bind(hash)
    .bind(now)
    .fetch_optional(db.reader())
    .await
}

/// Moves a pending payment to its final state inside the caller's transaction. `Some` with the
/// payment when this call made the change; `None` when it was already final (or unknown).
pub async fn settle_in(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    reference: &str,
    state: &str,
) -> Result<Option<PaymentRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "UPDATE payments SET state = $1, open_key = NULL, updated_at = $2 \
         WHERE reference = $3 AND state = 'pending' RETURNING {COLUMNS}"
    ))
    .bind(state)
    .bind(super::now())
    .bind(reference)
    .fetch_optional(&mut **tx)
    .await
}

pub async fn by_reference(db: &Db, reference: &str) -> Result<Option<PaymentRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM payments WHERE reference = $1"
    ))
    .bind(reference)
    .fetch_optional(db.reader())
    .await
}

/// Deletes the handles expired by `now`, in short batches (`super::expired`).
pub async fn delete_expired_handles(db: &Db, now: i64) -> Result<u64, sqlx::Error> {
    super::expired::delete(db, super::expired::Expired::Handles, now).await
}
