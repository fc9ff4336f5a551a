//! Expired rows, deleted a short batch at a time: cron's chores (sessions, handles, API
//! signatures, idempotency records, flood counts). One statement per batch, each its own
//! transaction, so no visitor's write waits on a chore for more than one batch, whatever the
//! backlog (one `DELETE` of a large backlog holds SQLite's write lock for seconds).

use std::time::{Duration, Instant};

use super::{Backend, Db};

/// What expires. Each kind's statement reaches at most `$2` rows expired by `$1` through the index
/// on their expiry, and deletes them by primary key: the form both backends run well (no `rowid`,
/// no `ctid`, no `DELETE … LIMIT`). The oldest go first (`ORDER BY` the expiry): without it
/// PostgreSQL takes the first expired rows of a sequential scan, and behind each batch lie the dead
/// rows of every batch before it until vacuum comes, so a batch read more the longer the chore ran
/// (up to a second a batch on a backlog of millions). In the expiry's order the index is read,
/// whose entries for deleted rows are skipped once seen; on SQLite the same index range, in the
/// order it already had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expired {
    /// Admin sessions; Unix seconds.
    Sessions,
    /// Payment continuation handles; Unix seconds.
    Handles,
    /// API signatures seen; Unix seconds.
    Signatures,
    /// API idempotency records; Unix seconds.
    Idempotency,
    /// Flood counts; Unix milliseconds.
    Flood,
    /// The delivery log's attempts made before the cutoff, but none of a delivery still
    /// pending or held (a delivery sent again keeps its log); Unix seconds.
    WebhookAttempts,
    /// Deliveries done with (delivered, failed or set aside) whose last attempt was before
    /// the cutoff; never a pending or held one. Through `webhook_deliveries_due` (state, next_at).
    WebhookDeliveries,
    /// Outbox messages written before the cutoff that no delivery names any more.
    Outbox,
    /// Audit events older than the log's retention; Unix seconds, through `audit_log_at`.
    Audit,
}

impl Expired {
    fn statement(self) -> &'static str {
        match self {
            Expired::Sessions => {
                "DELETE FROM sessions WHERE id IN \
                 (SELECT id FROM sessions WHERE expiry <= $1 ORDER BY expiry LIMIT $2)"
            }
            Expired::Handles => {
                "DELETE FROM handles WHERE hash IN \
                 (SELECT hash FROM handles WHERE expires <= $1 ORDER BY expires LIMIT $2)"
            }
            Expired::Signatures => {
                "DELETE FROM api_signatures WHERE hash IN \
                 (SELECT hash FROM api_signatures WHERE expires <= $1 ORDER BY expires LIMIT $2)"
            }
            Expired::Idempotency => {
                "DELETE FROM api_idempotency WHERE id IN \
                 (SELECT id FROM api_idempotency WHERE expires_at <= $1 ORDER BY expires_at \
                 LIMIT $2)"
            }
            Expired::Flood => {
                "DELETE FROM flood WHERE (event, identifier, node, bucket_start) IN \
                 (SELECT event, identifier, node, bucket_start FROM flood \
                 WHERE expiration <= $1 ORDER BY expiration LIMIT $2)"
            }
            Expired::WebhookAttempts => {
                "DELETE FROM webhook_attempts WHERE id IN \
                 (SELECT a.id FROM webhook_attempts a WHERE a.at <= $1 AND NOT EXISTS \
                 (SELECT 1 FROM webhook_deliveries d WHERE d.id = a.delivery_id \
                 AND d.state IN ('pending', 'held')) LIMIT $2)"
            }
            Expired::WebhookDeliveries => {
                "DELETE FROM webhook_deliveries WHERE id IN \
                 (SELECT id FROM webhook_deliveries WHERE state IN ('delivered', 'failed', 'skipped') \
                 AND next_at <= $1 LIMIT $2)"
            }
            Expired::Outbox => {
                "DELETE FROM outbox WHERE id IN \
                 (SELECT o.id FROM outbox o WHERE o.created_at <= $1 AND NOT EXISTS \
                 (SELECT 1 FROM webhook_deliveries d WHERE d.outbox_id = o.id) LIMIT $2)"
            }
            Expired::Audit => {
                "DELETE FROM audit_log WHERE id IN \
                 (SELECT id FROM audit_log WHERE at < $1 ORDER BY at LIMIT $2)"
            }
        }
    }
}

/// Rows one batch deletes at most: a few milliseconds of the write lock on a loaded machine,
/// and few enough dead tuples at a time for PostgreSQL's autovacuum to keep up.
pub const BATCH: i64 = 500;

/// The pause after a batch is as long as the batch took, within these bounds. SQLite's busy
/// handler retries a waiting writer after sleeps that grow with its wait (1, 2, 5, 10, 15, 20,
/// 25 ms …), so a pause as long as the wait lets every writer that queued behind a batch in
/// before the next one; the chore runs at half speed at worst. At least 25 ms: with shorter
/// pauses a writer whose retry sleep had grown to 25 ms missed the gap again and again (335 ms
/// waited behind 350k rows on a loaded 2-core machine, with batches of 1000).
const PAUSE: (Duration, Duration) = (Duration::from_millis(25), Duration::from_millis(100));

/// Deletes every row of `kind` expired by `now` (its unit: seconds, or milliseconds for
/// `Flood`), `BATCH` rows a statement; how many went.
pub async fn delete(db: &Db, kind: Expired, now: i64) -> Result<u64, sqlx::Error> {
    delete_in_batches(db, kind, now, BATCH).await
}

/// How many times one batch is tried while another connection holds SQLite's write lock past
/// the busy timeout, before the run gives up (its rows wait for the next run).
pub const BUSY_TRIES: u32 = 10;

/// One batch. A batch that finds the write lock held past the busy timeout (SQLite, a visitor
/// writing without pause: cron would end with "database is locked") waits the longest pause and
/// tries again: the chore yields to visitors, it does not end the run on them.
async fn batch_yielding(db: &Db, kind: Expired, now: i64, batch: i64) -> Result<u64, sqlx::Error> {
    yielding(kind, || async {
        sqlx::query(kind.statement())
            .bind(now)
            .bind(batch)
            .execute(&db.pool)
            .await
            .map(|done| done.rows_affected())
    })
    .await
}

/// Runs `statement` (one batch) until it is not refused as busy, `BUSY_TRIES` times at most.
async fn yielding<F, Fut>(kind: Expired, mut statement: F) -> Result<u64, sqlx::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<u64, sqlx::Error>>,
{
    let mut tries = 0;
    loop {
        match statement().await {
            Ok(gone) => return Ok(gone),
            Err(e) if super::is_busy(&e) && tries + 1 < BUSY_TRIES => {
                tries += 1;
                tracing::debug!(kind = ?kind, tries, "a chore's batch waits for the write lock");
                tokio::time::sleep(PAUSE.1).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// After a batch: the WAL's pages go to the file (SQLite: passive, so no writer waits on it;
/// thus the WAL never grows to the automatic checkpoint's size on a visitor's commit, which
/// would copy and sync the chore's pages on that visitor's time), then the pause.
pub(crate) async fn between_batches(db: &Db, started: Instant) -> Result<(), sqlx::Error> {
    db.checkpoint().await?;
    tokio::time::sleep(started.elapsed().clamp(PAUSE.0, PAUSE.1)).await;
    Ok(())
}

/// `delete` with batches of `batch` rows.
pub async fn delete_in_batches(
    db: &Db,
    kind: Expired,
    now: i64,
    batch: i64,
) -> Result<u64, sqlx::Error> {
    let batch = batch.max(1);
    let mut total = 0;
    loop {
        let started = Instant::now();
        let gone = batch_yielding(db, kind, now, batch).await?;
        total += gone;
        // Fewer than asked: the backlog is gone (rows expiring meanwhile wait for the next run).
        // A file deleted under the server is written no more.
        if gone < batch as u64 || db.vanished() {
            return Ok(total);
        }
        between_batches(db, started).await?;
        if kind == Expired::Flood && db.backend == Backend::Sqlite {
            return Ok(total + walk_flood(db, now, batch).await?);
        }
    }
}

/// A flood count's key, in the order SQLite stores the table (migration 0018).
type FloodKey = (String, String, String, i64);

const FLOOD_KEY: &str = "(event, identifier, node, bucket_start)";

/// SQLite, a backlog of flood counts (the first batch, oldest first, came back full). The
/// identifiers are keyed hashes, so the oldest 500 rows lie on some 500 pages of each B-tree, and a
/// batch wrote megabytes (batches of seconds beside a visitor, whose writes then waited past the
/// busy timeout). Here the table is read in the order it is stored (`WITHOUT ROWID`, migration
/// 0018), `batch` rows a window: the window's far end is read without the write lock, then one
/// statement deletes the window's expired rows, which lie on a few neighbouring pages. The walk
/// reads the live rows too, once: it runs only behind a full batch, when the backlog is large.
async fn walk_flood(db: &Db, now: i64, batch: i64) -> Result<u64, sqlx::Error> {
    let mut after: Option<FloodKey> = None;
    let mut total = 0;
    loop {
        let started = Instant::now();
        let end = flood_window_end(db, after.as_ref(), batch).await?;
        total += yielding(Expired::Flood, || {
            delete_flood_window(db, after.as_ref(), end.as_ref(), now)
        })
        .await?;
        if end.is_none() || db.vanished() {
            return Ok(total);
        }
        after = end;
        between_batches(db, started).await?;
    }
}

/// The last key of the `batch` keys after `after`; `None` when fewer are left.
async fn flood_window_end(
    db: &Db,
    after: Option<&FloodKey>,
    batch: i64,
) -> Result<Option<FloodKey>, sqlx::Error> {
    let (filter, offset) = match after {
        Some(_) => (format!("WHERE {FLOOD_KEY} > ($1, $2, $3, $4)"), 5),
        None => (String::new(), 1),
    };
    let sql = format!(
        "SELECT event, identifier, node, bucket_start FROM flood {filter} \
         ORDER BY event, identifier, node, bucket_start LIMIT 1 OFFSET ${offset}"
    );
    let mut query = sqlx::query_as::<_, FloodKey>(&sql);
    if let Some((event, identifier, node, bucket)) = after {
        query = query.bind(event).bind(identifier).bind(node).bind(*bucket);
    }
    query.bind(batch - 1).fetch_optional(db.reader()).await
}

/// The statement deleting one window's expired flood rows: `$1` now (ms), then the four key
/// columns of the bound after which the window starts (`after`), then those of its last key
/// (`end`); the table's end without one.
pub fn flood_window_statement(after: bool, end: bool) -> String {
    // `+expiration`: never through `flood_expiration`. With statistics taken on a quiet day
    // (few rows, most live) SQLite judged that index the narrower way in, and read every
    // expired row of the backlog for each window.
    let mut filter = vec!["+expiration <= $1".to_owned()];
    let mut n = 2;
    for (bound, op) in [(after, ">"), (end, "<=")] {
        if bound {
            filter.push(format!(
                "{FLOOD_KEY} {op} (${}, ${}, ${}, ${})",
                n,
                n + 1,
                n + 2,
                n + 3
            ));
            n += 4;
        }
    }
    format!("DELETE FROM flood WHERE {}", filter.join(" AND "))
}

/// Deletes the expired rows after `after` up to `end` (to the table's end without one).
async fn delete_flood_window(
    db: &Db,
    after: Option<&FloodKey>,
    end: Option<&FloodKey>,
    now: i64,
) -> Result<u64, sqlx::Error> {
    let sql = flood_window_statement(after.is_some(), end.is_some());
    let mut query = sqlx::query(&sql).bind(now);
    for (event, identifier, node, bucket) in after.into_iter().chain(end) {
        query = query.bind(event).bind(identifier).bind(node).bind(*bucket);
    }
    Ok(query.execute(&db.pool).await?.rows_affected())
}
