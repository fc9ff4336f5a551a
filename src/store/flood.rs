//! The flood table: per process, per event, per counting-table cell, per bucket counts (see
//! `crate::limits::flood::sql`; rows written before it kept cells hold one key each).

use sqlx::Row;

use super::Db;

#[derive(Debug)]
pub struct CountRow {
    pub event: String,
    pub identifier: String,
    pub bucket_start: i64,
    pub expiration: i64,
    pub count: i64,
}

/// Rows written by one statement: well under SQLite's and PostgreSQL's parameter limits.
const ROWS_PER_STATEMENT: usize = 200;

/// Adds counts to this node's rows, in one transaction, many rows a statement.
pub async fn add_counts<R: std::borrow::Borrow<CountRow>>(
    db: &Db,
    node: &str,
    rows: impl IntoIterator<Item = R>,
) -> Result<(), sqlx::Error> {
    // Taken a statement's worth at a time: a sync's rows are made as they are written, so
    // what it holds at once is one statement's, not the whole batch's (`tests/it/memory.rs`).
    let mut rows = rows.into_iter().peekable();
    if rows.peek().is_none() {
        return Ok(());
    }
    let mut tx = db.write().await?;
    let mut chunk: Vec<R> = Vec::with_capacity(ROWS_PER_STATEMENT);
    loop {
        chunk.extend(rows.by_ref().take(ROWS_PER_STATEMENT));
        if chunk.is_empty() {
            break;
        }
        // Only placeholders are generated here; every value is bound.
        let sql = format!(
            "INSERT INTO flood (event, identifier, node, bucket_start, expiration, count) VALUES {} \
             ON CONFLICT (event, identifier, node, bucket_start) \
             DO UPDATE SET count = flood.count + excluded.count",
            super::placeholders(1, chunk.len(), 6)
        );
        // Not kept in the connection's statement cache: a batch's size varies from one sync
        // to the next, and a cache of large statements, one per size, grows the server by
        // megabytes (`tests/it/memory.rs`).
        let mut query = sqlx::query(&sql).persistent(false);
        for row in &chunk {
            let row = row.borrow();
            query = query
                .bind(&row.event)
                .bind(&row.identifier)
                .bind(node)
                .bind(row.bucket_start)
                .bind(row.expiration)
                .bind(row.count);
        }
        query.execute(&mut *tx).await?;
        chunk.clear();
    }
    tx.commit().await
}

/// Identifiers read by one statement.
const KEYS_PER_STATEMENT: usize = 500;

/// The sync's read of other processes' live counts of `keys` identifiers: `$1` this node,
/// `$2` now (ms), then the identifiers. Up to a sync at every request, so it must cost what it
/// reads: the index `flood_identifier (identifier, expiration)` (migration 0011) answers it with
/// a seek per identifier, where the primary key (starting with `event`) could not.
pub fn others_counts_statement(keys: usize) -> String {
    format!(
        "SELECT event, identifier, bucket_start, expiration, count FROM flood \
         WHERE node <> $1 AND expiration > $2 AND identifier IN ({})",
        super::placeholders(3, keys, 1)
    )
}

/// Live counts other nodes registered for the given keys.
pub async fn others_counts(
    db: &Db,
    node: &str,
    now_ms: i64,
    keys: &[(&str, &str)],
) -> Result<Vec<CountRow>, sqlx::Error> {
    let mut out = Vec::new();
    for chunk in keys.chunks(KEYS_PER_STATEMENT) {
        let sql = others_counts_statement(chunk.len());
        let asked: std::collections::HashSet<(&str, &str)> = chunk.iter().copied().collect();
        // Not cached, as in `add_counts`: one statement per number of keys.
        let mut query = sqlx::query(&sql).persistent(false).bind(node).bind(now_ms);
        for (_, identifier) in chunk {
            query = query.bind(*identifier);
        }
        for row in query.fetch_all(db.reader()).await? {
            let event: String = row.try_get(0)?;
            let identifier: String = row.try_get(1)?;
            // The same identifier may be counted under several events; keep the asked ones.
            if !asked.contains(&(event.as_str(), identifier.as_str())) {
                continue;
            }
            out.push(CountRow {
                event,
                identifier,
                bucket_start: row.try_get(2)?,
                expiration: row.try_get(3)?,
                count: row.try_get(4)?,
            });
        }
    }
    Ok(out)
}

/// Every process's unexpired counts, the busiest first, at most `limit` rows: what a server
/// reads at start so that a restart keeps the counts.
pub async fn current_counts(
    db: &Db,
    now_ms: i64,
    limit: i64,
) -> Result<Vec<CountRow>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT event, identifier, bucket_start, expiration, count FROM flood \
         WHERE expiration > $1 ORDER BY count DESC LIMIT $2",
    )
    .bind(now_ms)
    .bind(limit)
    .fetch_all(db.reader())
    .await?;
    rows.into_iter()
        .map(|row| {
            Ok(CountRow {
                event: row.try_get(0)?,
                identifier: row.try_get(1)?,
                bucket_start: row.try_get(2)?,
                expiration: row.try_get(3)?,
                count: row.try_get(4)?,
            })
        })
        .collect()
}

/// Deletes the counts expired by `now_ms`, in short batches (`super::expired`).
pub async fn delete_expired(db: &Db, now_ms: i64) -> Result<u64, sqlx::Error> {
    super::expired::delete(db, super::expired::Expired::Flood, now_ms).await
}

/// Every identifier in the table (tests and diagnostics read this).
pub async fn identifiers(db: &Db) -> Result<Vec<(String, String)>, sqlx::Error> {
    sqlx::query_as("SELECT DISTINCT event, identifier FROM flood")
        .fetch_all(db.reader())
        .await
}

/// Forgets every process's counts of one identifier under one event (the primary key's first
/// two columns, so the delete reads only that identifier's rows); returns how many rows went.
pub async fn delete_identifier(db: &Db, event: &str, identifier: &str) -> Result<u64, sqlx::Error> {
    sqlx::query("DELETE FROM flood WHERE event = $1 AND identifier = $2")
        .bind(event)
        .bind(identifier)
        .execute(&db.pool)
        .await
        .map(|r| r.rows_affected())
}

/// Every process's live count of one key under one event, as the servers count it: the smaller
/// of its two `cells`' sums (`limits::flood::stored_cells`), plus what an earlier version
/// stored for the key whole. Read by the primary key's first two columns (the command line's
/// list of administrators asks it of each one).
pub async fn live_count_of_cells(
    db: &Db,
    event: &str,
    identifier: &str,
    cells: &[String; 2],
    now_ms: i64,
) -> Result<u64, sqlx::Error> {
    let mut smallest = i64::MAX;
    for cell in cells {
        smallest = smallest.min(live_count(db, event, cell, now_ms).await?);
    }
    let whole = live_count(db, event, identifier, now_ms).await?;
    Ok((smallest.max(0) + whole.max(0)) as u64)
}

async fn live_count(
    db: &Db,
    event: &str,
    identifier: &str,
    now_ms: i64,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT CAST(COALESCE(SUM(count), 0) AS BIGINT) FROM flood \
         WHERE event = $1 AND identifier = $2 AND expiration > $3",
    )
    .bind(event)
    .bind(identifier)
    .bind(now_ms)
    .fetch_one(db.reader())
    .await
}
