//! The flood table: per process, per key, per bucket counts (see `crate::flood::sql`).

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

/// Adds counts to this node's rows, in one transaction.
pub async fn add_counts<'a>(
    db: &Db,
    node: &str,
    rows: impl Iterator<Item = &'a CountRow>,
) -> Result<(), sqlx::Error> {
    let mut tx = db.pool.begin().await?;
    for row in rows {
        sqlx::query(
            "INSERT INTO flood (event, identifier, node, bucket_start, expiration, count) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (event, identifier, node, bucket_start) \
             DO UPDATE SET count = flood.count + excluded.count",
        )
        .bind(&row.event)
        .bind(&row.identifier)
        .bind(node)
        .bind(row.bucket_start)
        .bind(row.expiration)
        .bind(row.count)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await
}

/// Live counts other nodes registered for the given keys.
pub async fn others_counts(
    db: &Db,
    node: &str,
    now_ms: i64,
    keys: &[(&str, &str)],
) -> Result<Vec<CountRow>, sqlx::Error> {
    let mut out = Vec::new();
    for (event, identifier) in keys {
        let rows = sqlx::query(
            "SELECT bucket_start, expiration, count FROM flood \
             WHERE event = $1 AND identifier = $2 AND node <> $3 AND expiration > $4",
        )
        .bind(*event)
        .bind(*identifier)
        .bind(node)
        .bind(now_ms)
        .fetch_all(&db.pool)
        .await?;
        for row in rows {
            out.push(CountRow {
                event: (*event).to_owned(),
                identifier: (*identifier).to_owned(),
                bucket_start: row.try_get(0)?,
                expiration: row.try_get(1)?,
                count: row.try_get(2)?,
            });
        }
    }
    Ok(out)
}

pub async fn delete_key(db: &Db, event: &str, identifier: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM flood WHERE event = $1 AND identifier = $2")
        .bind(event)
        .bind(identifier)
        .execute(&db.pool)
        .await
        .map(|_| ())
}

pub async fn delete_expired(db: &Db, now_ms: i64) -> Result<u64, sqlx::Error> {
    sqlx::query("DELETE FROM flood WHERE expiration <= $1")
        .bind(now_ms)
        .execute(&db.pool)
        .await
        .map(|r| r.rows_affected())
}

/// Every identifier in the table (tests and diagnostics read this).
pub async fn identifiers(db: &Db) -> Result<Vec<(String, String)>, sqlx::Error> {
    sqlx::query_as("SELECT DISTINCT event, identifier FROM flood")
        .fetch_all(&db.pool)
        .await
}
