//! The API's idempotency records (`domain::api::idempotency` owns their rules): one row per
//! token and keyed hash of an `Idempotency-Key`, reserved before the work and holding its sealed
//! answer after. Every statement names its row by the unique (token, key hash) pair, or, for
//! the cleanup, reaches expired rows through the index on `expires_at`.

use super::Db;

/// A record as stored: its request's fingerprint, when it was reserved, and the answer once
/// the work is done (`status` is `None` while it is under way).
#[derive(Debug, sqlx::FromRow)]
pub struct Record {
    pub fingerprint: String,
    pub status: Option<i64>,
    pub location: Option<String>,
    /// Sealed (`domain::api::idempotency`), never the answer's text.
    pub body: Option<String>,
    pub created_at: i64,
    pub expires_at: i64,
}

/// The row of one token's key: the token and the keyed hash of its `Idempotency-Key`.
#[derive(Clone, Copy, Debug)]
pub struct Key<'a> {
    pub token: i64,
    pub hash: &'a str,
}

/// A statement about one key's row: `sql` names the token as `$1` and the key's hash as `$2`.
fn keyed<'q>(sql: &'q str, key: Key<'q>) -> AnyQuery<'q> {
    sqlx::query(sql).bind(key.token).bind(key.hash)
}

type AnyQuery<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>;

/// Whether a statement changed its one row.
async fn one_changed(db: &Db, query: AnyQuery<'_>) -> Result<bool, sqlx::Error> {
    Ok(query.execute(&db.pool).await?.rows_affected() == 1)
}

/// Reserves a key for a request: `true` when this call inserted the row, `false` when the key
/// has a row already. The unique (token, key hash) pair makes the database the referee between
/// concurrent requests, in this process or any other.
pub async fn reserve(
    db: &Db,
    key: Key<'_>,
    fingerprint: &str,
    now: i64,
    expires: i64,
) -> Result<bool, sqlx::Error> {
    let sql = "INSERT INTO api_idempotency (token_id, key_hash, fingerprint, created_at, \
         expires_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING";
    let query = keyed(sql, key).bind(fingerprint);
    one_changed(db, query.bind(now).bind(expires)).await
}

/// The record of a key. Read from the writers' pool: it follows a `reserve` that found the
/// row, and must see what that saw.
pub async fn find(db: &Db, key: Key<'_>) -> Result<Option<Record>, sqlx::Error> {
    sqlx::query_as(
        "SELECT fingerprint, status, location, body, created_at, expires_at \
         FROM api_idempotency WHERE token_id = $1 AND key_hash = $2",
    )
    .bind(key.token)
    .bind(key.hash)
    .fetch_optional(&db.pool)
    .await
}

/// Takes over a row that has expired, or whose work was left unfinished since before
/// `stale_before` (its process died): `true` when this call did. The condition is checked in
/// the UPDATE itself, so of two requests taking over one row only one can.
pub async fn take_over(
    db: &Db,
    key: Key<'_>,
    fingerprint: &str,
    now: i64,
    expires: i64,
    stale_before: i64,
) -> Result<bool, sqlx::Error> {
    let sql = "UPDATE api_idempotency SET fingerprint = $3, status = NULL, location = NULL, \
         body = NULL, created_at = $4, expires_at = $5 WHERE token_id = $1 AND key_hash = $2 \
         AND (expires_at <= $4 OR (status IS NULL AND created_at < $6))";
    let query = keyed(sql, key).bind(fingerprint).bind(now);
    one_changed(db, query.bind(expires).bind(stale_before)).await
}

/// Stores the answer of the reservation made at `reserved_at`; `false` when the row is no
/// longer that reservation's (taken over).
pub async fn complete(
    db: &Db,
    key: Key<'_>,
    reserved_at: i64,
    status: i64,
    location: Option<&str>,
    sealed_body: &str,
) -> Result<bool, sqlx::Error> {
    let sql = "UPDATE api_idempotency SET status = $4, location = $5, body = $6 \
         WHERE token_id = $1 AND key_hash = $2 AND created_at = $3 AND status IS NULL";
    let query = keyed(sql, key).bind(reserved_at).bind(status);
    one_changed(db, query.bind(location).bind(sealed_body)).await
}

/// Gives a reservation up (its request was refused or failed): the key is free again.
pub async fn release(db: &Db, key: Key<'_>, reserved_at: i64) -> Result<(), sqlx::Error> {
    let sql = "DELETE FROM api_idempotency \
         WHERE token_id = $1 AND key_hash = $2 AND created_at = $3 AND status IS NULL";
    one_changed(db, keyed(sql, key).bind(reserved_at))
        .await
        .map(|_| ())
}

/// Deletes the records expired by `now`, in short batches (`super::expired`), so the cleanup
/// never holds the write lock for long.
pub async fn delete_expired(db: &Db, now: i64) -> Result<u64, sqlx::Error> {
    super::expired::delete(db, super::expired::Expired::Idempotency, now).await
}
