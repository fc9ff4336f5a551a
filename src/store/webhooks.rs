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
    /// The API token that registered it (sent only its own instances' messages); `None` for
    /// an administrator's.
    pub api_token_id: Option<i64>,
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
            .field("api_token_id", &self.api_token_id)
            .finish_non_exhaustive()
    }
}

pub(crate) const COLUMNS: &str =
    "id, url, events, secret, enabled, failures, created_at, api_token_id";

/// Inserts an endpoint whose secret is sealed by `seal` once its id is known (the id is the
/// seal's associated data), in one transaction: no row ever holds an unsealed secret. `token`:
/// the API token registering it for its own instances, `None` for an administrator's.
pub async fn create(
    db: &Db,
    url: &str,
    events: &str,
    token: Option<i64>,
    seal: impl FnOnce(i64) -> Option<String>,
    now: i64,
) -> Result<Option<i64>, sqlx::Error> {
    let mut tx = db.write().await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO webhook_endpoints (url, events, secret, created_at, api_token_id) \
         VALUES ($1, $2, '', $3, $4) RETURNING id",
    )
    .bind(url)
    .bind(events)
    .bind(now)
    .bind(token)
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

/// The endpoints an API token registered, oldest first.
pub async fn of_token(db: &Db, token: i64) -> Result<Vec<EndpointRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM webhook_endpoints WHERE api_token_id = $1 ORDER BY id"
    ))
    .bind(token)
    .fetch_all(&db.pool)
    .await
}

/// Deletes an endpoint of a token's own; `false` when it has none by that id (another's
/// included: the same answer).
pub async fn delete_of_token(db: &Db, token: i64, id: i64) -> Result<bool, sqlx::Error> {
    sqlx::query("DELETE FROM webhook_endpoints WHERE id = $1 AND api_token_id = $2")
        .bind(id)
        .bind(token)
        .execute(&db.pool)
        .await
        .map(|r| r.rows_affected() == 1)
}

/// An endpoint as the admin page lists it: the row, the name of the token that registered it,
/// and when it was last tried.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct Listed {
    #[sqlx(flatten)]
    pub endpoint: EndpointRow,
    pub token_name: Option<String>,
    pub last_attempt_at: Option<i64>,
}

/// Every endpoint, oldest first, for the admin page. The last attempt is read through
/// `webhook_attempts_endpoint` (endpoint_id, id): one index probe per endpoint.
pub async fn listed(db: &Db) -> Result<Vec<Listed>, sqlx::Error> {
    sqlx::query_as(&format!("{LISTED} ORDER BY e.id"))
        .fetch_all(&db.pool)
        .await
}

/// One endpoint as `listed` reads it, for its delivery log's page.
pub async fn listed_one(db: &Db, id: i64) -> Result<Option<Listed>, sqlx::Error> {
    sqlx::query_as(&format!("{LISTED} WHERE e.id = $1"))
        .bind(id)
        .fetch_optional(&db.pool)
        .await
}

const LISTED: &str = "SELECT e.id, e.url, e.events, e.secret, e.enabled, e.failures, \
     e.created_at, e.api_token_id, t.name AS token_name, \
     (SELECT a.at FROM webhook_attempts a WHERE a.endpoint_id = e.id \
      ORDER BY a.id DESC LIMIT 1) AS last_attempt_at \
     FROM webhook_endpoints e LEFT JOIN api_tokens t ON t.id = e.api_token_id";

/// Enables an endpoint again with its run of failures forgotten: new messages are queued for
/// it from now on (those set aside while it was disabled stay `skipped`; each can be sent
/// again). `false` when there is no such endpoint.
pub async fn enable(db: &Db, id: i64) -> Result<bool, sqlx::Error> {
    sqlx::query("UPDATE webhook_endpoints SET enabled = 1, failures = 0 WHERE id = $1")
        .bind(id)
        .execute(&db.pool)
        .await
        .map(|r| r.rows_affected() == 1)
}

/// One line of an endpoint's delivery log: an attempt, with the delivery and message it was for.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct LogLine {
    pub id: i64,
    pub delivery_id: i64,
    pub attempt: i64,
    pub status: Option<i64>,
    pub latency_ms: i64,
    pub error: Option<String>,
    pub at: i64,
    /// The message's id and event; `None` once cron cleaned the delivery away.
    pub outbox_id: Option<i64>,
    pub event: Option<String>,
    pub delivery_state: Option<String>,
}

/// An endpoint's delivery log, newest first: at most `limit` attempts before the attempt
/// `before` (keyset: `webhook_attempts_endpoint` (endpoint_id, id) is read from the key on,
/// never counted through), `None` for the newest.
pub async fn log(
    db: &Db,
    endpoint: i64,
    before: Option<i64>,
    limit: i64,
) -> Result<Vec<LogLine>, sqlx::Error> {
    sqlx::query_as(
        "SELECT a.id, a.delivery_id, a.attempt, a.status, a.latency_ms, a.error, a.at, \
         d.outbox_id, o.event, d.state AS delivery_state \
         FROM webhook_attempts a \
         LEFT JOIN webhook_deliveries d ON d.id = a.delivery_id \
         LEFT JOIN outbox o ON o.id = d.outbox_id \
         WHERE a.endpoint_id = $1 AND a.id < $2 ORDER BY a.id DESC LIMIT $3",
    )
    .bind(endpoint)
    .bind(before.unwrap_or(i64::MAX))
    .bind(limit)
    .fetch_all(&db.pool)
    .await
}

/// What asking to send a delivery again came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Again {
    Queued,
    /// A sender holds it this moment: it is being sent.
    Busy,
    /// No such delivery to this endpoint.
    Missing,
}

/// Queues a delivery of `endpoint` again, due `now`, whatever its state: the same message, so
/// the same `webhook-id`. Its attempts go on counting (a failed one gets one more try, then
/// fails again). A delivery a sender holds is left to it.
pub async fn send_again(
    db: &Db,
    endpoint: i64,
    delivery: i64,
    now: i64,
) -> Result<Again, sqlx::Error> {
    let queued = sqlx::query(
        "UPDATE webhook_deliveries SET state = 'pending', next_at = $1 \
         WHERE id = $2 AND endpoint_id = $3 AND (claimed_until IS NULL OR claimed_until < $1)",
    )
    .bind(now)
    .bind(delivery)
    .bind(endpoint)
    .execute(&db.pool)
    .await?
    .rows_affected();
    if queued == 1 {
        return Ok(Again::Queued);
    }
    let exists: Option<i64> =
        sqlx::query_scalar("SELECT id FROM webhook_deliveries WHERE id = $1 AND endpoint_id = $2")
            .bind(delivery)
            .bind(endpoint)
            .fetch_optional(&db.pool)
            .await?;
    Ok(if exists.is_some() {
        Again::Busy
    } else {
        Again::Missing
    })
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
    let mut tx = db.write().await?;
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

/// How many deliveries are due and not made at `now`, counted to 10,000 at most (a range of
/// `webhook_deliveries_due`, the index alone).
pub async fn due_count(db: &Db, now: i64) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM (SELECT 1 FROM webhook_deliveries WHERE state = 'pending' \
         AND next_at <= $1 LIMIT 10000) d",
    )
    .bind(now)
    .fetch_one(db.reader())
    .await
}

/// When the oldest delivery still waiting was due; `None` when none waits (the first entry
/// of `webhook_deliveries_due`).
pub async fn oldest_waiting(db: &Db) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT next_at FROM webhook_deliveries WHERE state = 'pending' \
         ORDER BY state, next_at LIMIT 1",
    )
    .fetch_optional(db.reader())
    .await
}
