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
    /// Failed attempts since its last success (shown; it no longer disables anything).
    pub failures: i64,
    /// When its first failed attempt since its last success was made; `None` while it works.
    pub failing_since: Option<i64>,
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
            .field("failing_since", &self.failing_since)
            .field("api_token_id", &self.api_token_id)
            .finish_non_exhaustive()
    }
}

pub(crate) const COLUMNS: &str =
    "id, url, events, secret, enabled, failures, failing_since, created_at, api_token_id";

/// What making an endpoint came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Made {
    Id(i64),
    /// The secret could not be sealed: nothing was written.
    Unsealed,
    /// The token holds as many endpoints as it may: nothing was written.
    CapReached,
}

/// Inserts an endpoint whose secret is sealed by `seal` once its id is known (the id is the
/// seal's associated data), in one transaction: no row ever holds an unsealed secret. `token`:
/// the API token registering it for its own instances and the most it may hold (its row is
/// written first, so two registrations of one token wait for each other in any process and
/// the count is exact), `None` for an administrator's.
pub async fn create(
    db: &Db,
    url: &str,
    events: &str,
    token: Option<(i64, u64)>,
    seal: impl FnOnce(i64) -> Option<String>,
    now: i64,
) -> Result<Made, sqlx::Error> {
    let mut tx = db.write().await?;
    if let Some((token, cap)) = token {
        sqlx::query("UPDATE api_tokens SET id = id WHERE id = $1")
            .bind(token)
            .execute(&mut *tx)
            .await?;
        let held: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM webhook_endpoints WHERE api_token_id = $1")
                .bind(token)
                .fetch_one(&mut *tx)
                .await?;
        if u64::try_from(held).unwrap_or(0) >= cap {
            return Ok(Made::CapReached);
        }
    }
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO webhook_endpoints (url, events, secret, created_at, api_token_id) \
         VALUES ($1, $2, '', $3, $4) RETURNING id",
    )
    .bind(url)
    .bind(events)
    .bind(now)
    .bind(token.map(|(t, _)| t))
    .fetch_one(&mut *tx)
    .await?;
    let Some(sealed) = seal(id) else {
        return Ok(Made::Unsealed);
    };
    sqlx::query("UPDATE webhook_endpoints SET secret = $1 WHERE id = $2")
        .bind(sealed)
        .bind(id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Made::Id(id))
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
     e.failing_since, e.created_at, e.api_token_id, t.name AS token_name, \
     (SELECT a.at FROM webhook_attempts a WHERE a.endpoint_id = e.id \
      ORDER BY a.id DESC LIMIT 1) AS last_attempt_at \
     FROM webhook_endpoints e LEFT JOIN api_tokens t ON t.id = e.api_token_id";

/// A delivery's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliveryState {
    /// Due at its `next_at`, for any sender to claim.
    Pending,
    /// Its endpoint is disabled: it waits, and is due again once the endpoint is enabled.
    Held,
    Delivered,
    /// Refused by an endpoint that took other messages meanwhile, every try of its schedule.
    Failed,
    /// Set aside by an older version while its endpoint was disabled; "retry" sends it.
    Skipped,
}

impl DeliveryState {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Held => "held",
            DeliveryState::Delivered => "delivered",
            DeliveryState::Failed => "failed",
            DeliveryState::Skipped => "skipped",
        }
    }
}

/// How many deliveries one statement moves at most when an endpoint is enabled, disabled or
/// retried: short writes, so that no visitor's write waits long behind a backlog.
const MOVE_BATCH: i64 = 500;

/// Moves an endpoint's deliveries from `from` states to `to`, due at `next_at`, in batches
/// (by `webhook_deliveries_endpoint`); `fresh` starts their retry schedule again. Rows a
/// sender holds are left to it. Returns how many moved.
async fn move_deliveries(
    db: &Db,
    endpoint: i64,
    from: &[DeliveryState],
    to: DeliveryState,
    next_at: Option<i64>,
    fresh: bool,
    now: i64,
) -> Result<u64, sqlx::Error> {
    let mut moved = 0;
    for state in from {
        loop {
            let n = sqlx::query(
                "UPDATE webhook_deliveries SET state = $1, next_at = COALESCE($2, next_at), \
                 attempts = CASE WHEN $3 = 1 THEN 0 ELSE attempts END WHERE id IN \
                 (SELECT id FROM webhook_deliveries WHERE endpoint_id = $4 AND state = $5 \
                  AND (claimed_until IS NULL OR claimed_until < $6) LIMIT $7)",
            )
            .bind(to.as_str())
            .bind(next_at)
            .bind(i64::from(fresh))
            .bind(endpoint)
            .bind(state.as_str())
            .bind(now)
            .bind(MOVE_BATCH)
            .execute(&db.pool)
            .await?
            .rows_affected();
            moved += n;
            if n < u64::try_from(MOVE_BATCH).unwrap_or(0) || *state == to {
                break;
            }
        }
    }
    Ok(moved)
}

/// Enables an endpoint again with its run of failures forgotten: what waited for it while it
/// was disabled is due at once. `None` when there is no such endpoint, else how many
/// deliveries are due again.
pub async fn enable(db: &Db, id: i64, now: i64) -> Result<Option<u64>, sqlx::Error> {
    let found = sqlx::query(
        "UPDATE webhook_endpoints SET enabled = 1, failures = 0, failing_since = NULL \
         WHERE id = $1",
    )
    .bind(id)
    .execute(&db.pool)
    .await?
    .rows_affected();
    if found == 0 {
        return Ok(None);
    }
    let held = [DeliveryState::Held];
    move_deliveries(db, id, &held, DeliveryState::Pending, Some(now), true, now)
        .await
        .map(Some)
}

/// Disables an endpoint: nothing is sent to it, and what is queued for it waits (`held`) until
/// it is enabled again. `false` when there is no such endpoint.
pub async fn disable(db: &Db, id: i64, now: i64) -> Result<bool, sqlx::Error> {
    let found = sqlx::query("UPDATE webhook_endpoints SET enabled = 0 WHERE id = $1")
        .bind(id)
        .execute(&db.pool)
        .await?
        .rows_affected();
    if found == 0 {
        return Ok(false);
    }
    let pending = [DeliveryState::Pending];
    move_deliveries(db, id, &pending, DeliveryState::Held, None, false, now).await?;
    Ok(true)
}

/// "Retry now": every delivery of the endpoint that waits (due later in its schedule, failed
/// for good, or set aside) is due at once with a fresh schedule, the same message each (so the
/// same `webhook-id`). On a disabled endpoint they wait for it to be enabled. `None` when there
/// is no such endpoint, else how many are due again.
pub async fn retry_now(db: &Db, id: i64, now: i64) -> Result<Option<u64>, sqlx::Error> {
    let Some(endpoint) = by_id(db, id).await? else {
        return Ok(None);
    };
    let to = if endpoint.enabled == 1 {
        DeliveryState::Pending
    } else {
        DeliveryState::Held
    };
    let waiting = [
        DeliveryState::Pending,
        DeliveryState::Held,
        DeliveryState::Failed,
        DeliveryState::Skipped,
    ];
    let moved = move_deliveries(db, id, &waiting, to, Some(now), true, now).await?;
    Ok(Some(if to == DeliveryState::Pending {
        moved
    } else {
        0
    }))
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
        "UPDATE webhook_deliveries SET next_at = $1, state = CASE WHEN \
         (SELECT enabled FROM webhook_endpoints WHERE id = $3) = 1 THEN 'pending' ELSE 'held' END \
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
    pub created_at: i64,
}

/// The enabled endpoints with a delivery due at `now`, oldest first: one probe of
/// `webhook_deliveries_endpoint` per enabled endpoint.
pub async fn due_endpoints(db: &Db, now: i64) -> Result<Vec<i64>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT e.id FROM webhook_endpoints e WHERE e.enabled = 1 AND EXISTS \
         (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.state = 'pending' \
          AND d.next_at <= $1 AND (d.claimed_until IS NULL OR d.claimed_until < $1)) \
         ORDER BY e.id",
    )
    .bind(now)
    .fetch_all(db.reader())
    .await
}

/// Claims up to `limit` of an endpoint's deliveries due at `now`, oldest due first, for
/// `lease` seconds (`store::queue`: each is claimed by one sender only).
pub async fn claim(
    db: &Db,
    endpoint: i64,
    now: i64,
    lease: i64,
    limit: i64,
) -> Result<Vec<Claimed>, sqlx::Error> {
    let due: Vec<Claimed> = sqlx::query_as(
        "SELECT id, outbox_id, endpoint_id, attempts, created_at FROM webhook_deliveries \
         WHERE endpoint_id = $1 AND state = 'pending' AND next_at <= $2 \
         AND (claimed_until IS NULL OR claimed_until < $2) ORDER BY next_at, id LIMIT $3",
    )
    .bind(endpoint)
    .bind(now)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    let taken = super::queue::take(
        db,
        super::queue::Table::WebhookDeliveries,
        due.iter().map(|d| d.id).collect::<Vec<_>>(),
        now,
        now + lease,
    )
    .await?;
    Ok(due.into_iter().filter(|d| taken.contains(&d.id)).collect())
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
    /// When to try again after a failure; `None`: the schedule is spent.
    pub retry_at: Option<i64>,
}

/// What recording an attempt came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finished {
    Delivered,
    /// Due again at its next try.
    Retry,
    /// Its schedule is spent while the endpoint took other messages: this one failed.
    Failed,
    /// Its schedule is spent and the endpoint failed every attempt since before this message
    /// was queued: the endpoint is disabled, and this message and every other waits for it.
    Disabled,
}

/// Records an attempt in one transaction: the log line, the delivery's state and its claim
/// released, and the endpoint's run of failures. A success ends the run and makes what waits
/// for the endpoint due at once (it works again: no need to wait out each message's backoff).
/// A failure starts the run (`failing_since`) or adds to it; an endpoint is disabled only when a
/// delivery has spent its whole schedule with the endpoint failing for at least `disable_after`
/// seconds (the schedule's length: it failed all along this message's life).
pub async fn finish(
    db: &Db,
    d: &Claimed,
    a: &Attempt<'_>,
    disable_after: i64,
    now: i64,
) -> Result<Finished, sqlx::Error> {
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
    let failing_since: Option<i64> = if a.ok {
        sqlx::query(
            "UPDATE webhook_endpoints SET failures = 0, failing_since = NULL WHERE id = $1",
        )
        .bind(d.endpoint_id)
        .execute(&mut *tx)
        .await?;
        None
    } else {
        sqlx::query_scalar(
            "UPDATE webhook_endpoints SET failures = failures + 1, \
             failing_since = COALESCE(failing_since, $1) WHERE id = $2 RETURNING failing_since",
        )
        .bind(now)
        .bind(d.endpoint_id)
        .fetch_optional(&mut *tx)
        .await?
        .flatten()
    };
    let finished = match (a.ok, a.retry_at) {
        (true, _) => Finished::Delivered,
        (false, Some(_)) => Finished::Retry,
        // Failing for as long as this message's schedule: nothing was taken meanwhile.
        (false, None) if failing_since.is_some_and(|since| since <= now - disable_after) => {
            Finished::Disabled
        }
        (false, None) => Finished::Failed,
    };
    let (state, next_at, attempts) = match finished {
        Finished::Delivered => (DeliveryState::Delivered, now, d.attempts + 1),
        Finished::Retry => (
            DeliveryState::Pending,
            a.retry_at.unwrap_or(now),
            d.attempts + 1,
        ),
        Finished::Failed => (DeliveryState::Failed, now, d.attempts + 1),
        // It waits with the rest, and starts a fresh schedule once the endpoint is enabled.
        Finished::Disabled => (DeliveryState::Held, now, 0),
    };
    sqlx::query(
        "UPDATE webhook_deliveries SET state = $1, attempts = $2, next_at = $3, \
         claimed_until = NULL WHERE id = $4",
    )
    .bind(state.as_str())
    .bind(attempts)
    .bind(next_at)
    .bind(d.id)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    match finished {
        Finished::Disabled => {
            disable(db, d.endpoint_id, now).await?;
        }
        // It works again: what waits out a backoff goes now, a batch at a time (the next
        // success brings the next batch), outside the attempt's transaction so that a long
        // backlog never holds the writer.
        Finished::Delivered => {
            sqlx::query(
                "UPDATE webhook_deliveries SET next_at = $1 WHERE id IN \
                 (SELECT id FROM webhook_deliveries WHERE endpoint_id = $2 \
                  AND state = 'pending' AND next_at > $1 LIMIT $3)",
            )
            .bind(now)
            .bind(d.endpoint_id)
            .bind(MOVE_BATCH)
            .execute(&db.pool)
            .await?;
        }
        Finished::Retry | Finished::Failed => {}
    }
    Ok(finished)
}

/// Sets a claimed delivery to wait without an attempt (its endpoint was disabled meanwhile).
pub async fn hold(db: &Db, id: i64) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE webhook_deliveries SET state = 'held', claimed_until = NULL WHERE id = $1")
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
