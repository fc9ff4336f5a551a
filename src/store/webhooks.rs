//! Webhook endpoints as stored (`domain::delivery::endpoints` owns their rules). The secret
//! column holds the signing key sealed, never in clear.

use super::Db;

#[derive(Clone, sqlx::FromRow)]
pub struct EndpointRow {
    pub id: i64,
    pub url: String,
    /// Comma-separated event names; empty for every event.
    pub events: String,
    /// Sealed (`domain::delivery::endpoints`).
    pub secret: String,
    pub enabled: i64,
    pub failures: i64,
    pub created_at: i64,
}

/// By hand: the sealed secret stays out of any log line.
impl std::fmt::Debug for EndpointRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndpointRow")
            .field("id", &self.id)
            .field("url", &self.url)
            .field("events", &self.events)
            .field("enabled", &self.enabled)
            .field("failures", &self.failures)
            .finish_non_exhaustive()
    }
}

const COLUMNS: &str = "id, url, events, secret, enabled, failures, created_at";

/// Inserts an endpoint whose secret is sealed by `seal` once its id is known (the id is the
/// seal's associated data), in one transaction: no row ever holds an unsealed secret.
pub async fn create(
    db: &Db,
    url: &str,
    events: &str,
    seal: impl FnOnce(i64) -> Option<String>,
    now: i64,
) -> Result<Option<i64>, sqlx::Error> {
    let mut tx = db.pool.begin().await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO webhook_endpoints (url, events, secret, created_at) \
         VALUES ($1, $2, '', $3) RETURNING id",
    )
    .bind(url)
    .bind(events)
    .bind(now)
    .fetch_one(&mut *tx)
    .await?;
    let Some(sealed) = seal(id) else {
        return Ok(None);
    };
    sqlx::query("UPDATE webhook_endpoints SET secret = $1 WHERE id = $2")
        .bind(sealed)
        .bind(id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Some(id))
}

pub async fn all(db: &Db) -> Result<Vec<EndpointRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM webhook_endpoints ORDER BY id"
    ))
    .fetch_all(&db.pool)
    .await
}

pub async fn by_id(db: &Db, id: i64) -> Result<Option<EndpointRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM webhook_endpoints WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(&db.pool)
    .await
}

/// `false` when there was no such endpoint.
pub async fn delete(db: &Db, id: i64) -> Result<bool, sqlx::Error> {
    sqlx::query("DELETE FROM webhook_endpoints WHERE id = $1")
        .bind(id)
        .execute(&db.pool)
        .await
        .map(|r| r.rows_affected() == 1)
}

/// A delivery a worker holds, with the message it carries and where it goes.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct Claimed {
    pub id: i64,
    pub outbox_id: i64,
    pub endpoint_id: i64,
    pub attempts: i64,
}

/// Claims up to `limit` deliveries due at `now` for `lease` seconds. Each is taken by an UPDATE
/// that checks no live claim holds it, so a delivery claimed here is claimed nowhere else: on
/// SQLite the write lock orders the UPDATEs; on PostgreSQL the second UPDATE waits for the
/// first's row lock and then re-reads the row, finds the claim, and changes nothing. (A
/// `FOR UPDATE SKIP LOCKED` read would spare that wait; the portable claim keeps one SQL set.)
pub async fn claim(db: &Db, now: i64, lease: i64, limit: i64) -> Result<Vec<Claimed>, sqlx::Error> {
    let due: Vec<Claimed> = sqlx::query_as(
        "SELECT id, outbox_id, endpoint_id, attempts FROM webhook_deliveries \
         WHERE state = 'pending' AND next_at <= $1 \
         AND (claimed_until IS NULL OR claimed_until < $1) ORDER BY next_at, id LIMIT $2",
    )
    .bind(now)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    let mut claimed = Vec::with_capacity(due.len());
    for d in due {
        let taken = sqlx::query(
            "UPDATE webhook_deliveries SET claimed_until = $1 WHERE id = $2 \
             AND state = 'pending' AND (claimed_until IS NULL OR claimed_until < $3)",
        )
        .bind(now + lease)
        .bind(d.id)
        .bind(now)
        .execute(&db.pool)
        .await?
        .rows_affected();
        if taken == 1 {
            claimed.push(d);
        }
    }
    Ok(claimed)
}

/// The deliveries of a message, as (endpoint, state, attempts).
pub async fn deliveries_of(
    db: &Db,
    outbox_id: i64,
) -> Result<Vec<(i64, String, i64)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT endpoint_id, state, attempts FROM webhook_deliveries \
         WHERE outbox_id = $1 ORDER BY endpoint_id",
    )
    .bind(outbox_id)
    .fetch_all(&db.pool)
    .await
}
