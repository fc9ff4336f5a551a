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

/// What one attempt came to.
#[derive(Clone, Debug)]
pub struct Attempt<'a> {
    pub status: Option<i64>,
    pub latency_ms: i64,
    /// Why no answer came (`timeout`, `connect`, `refused address` …), never a URL or a body.
    pub error: Option<&'a str>,
    pub ok: bool,
    /// When to try again after a failure; `None`: give up (the delivery is `failed`).
    pub retry_at: Option<i64>,
}

/// Records an attempt in one transaction: the log line, the delivery's state (delivered,
/// due again, or failed) and its claim released, and the endpoint's run of failures (reset by
/// a success; past `disable_after` the endpoint is disabled).
pub async fn finish(
    db: &Db,
    d: &Claimed,
    a: &Attempt<'_>,
    disable_after: i64,
    now: i64,
) -> Result<(), sqlx::Error> {
    let mut tx = db.pool.begin().await?;
    sqlx::query(
        "INSERT INTO webhook_attempts (endpoint_id, delivery_id, attempt, status, latency_ms, \
         error, at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(d.endpoint_id)
    .bind(d.id)
    .bind(d.attempts + 1)
    .bind(a.status)
    .bind(a.latency_ms)
    .bind(a.error)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    let state = match (a.ok, a.retry_at) {
        (true, _) => "delivered",
        (false, Some(_)) => "pending",
        (false, None) => "failed",
    };
    sqlx::query(
        "UPDATE webhook_deliveries SET state = $1, attempts = attempts + 1, \
         next_at = $2, claimed_until = NULL WHERE id = $3",
    )
    .bind(state)
    .bind(a.retry_at.unwrap_or(now))
    .bind(d.id)
    .execute(&mut *tx)
    .await?;
    if a.ok {
        sqlx::query("UPDATE webhook_endpoints SET failures = 0 WHERE id = $1")
            .bind(d.endpoint_id)
            .execute(&mut *tx)
            .await?;
    } else {
        sqlx::query(
            "UPDATE webhook_endpoints SET failures = failures + 1, \
             enabled = CASE WHEN failures + 1 >= $1 THEN 0 ELSE enabled END WHERE id = $2",
        )
        .bind(disable_after)
        .bind(d.endpoint_id)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await
}

/// Sets a delivery aside without an attempt (its endpoint is disabled): `skipped`.
pub async fn skip(db: &Db, id: i64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE webhook_deliveries SET state = 'skipped', claimed_until = NULL WHERE id = $1",
    )
    .bind(id)
    .execute(&db.pool)
    .await
    .map(|_| ())
}

/// An endpoint's delivery log, newest first: (attempt, status, latency in ms, error).
pub async fn attempts(
    db: &Db,
    endpoint: i64,
    limit: i64,
) -> Result<Vec<(i64, Option<i64>, i64, Option<String>)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT attempt, status, latency_ms, error FROM webhook_attempts \
         WHERE endpoint_id = $1 ORDER BY id DESC LIMIT $2",
    )
    .bind(endpoint)
    .bind(limit)
    .fetch_all(&db.pool)
    .await
}

/// How many endpoints there are, and how many of them are disabled, for the status report.
pub async fn counts(db: &Db) -> Result<(i64, i64), sqlx::Error> {
    sqlx::query_as(
        "SELECT COUNT(*), COALESCE(SUM(CASE WHEN enabled = 0 THEN 1 ELSE 0 END), 0) \
         FROM webhook_endpoints",
    )
    .fetch_one(&db.pool)
    .await
}
