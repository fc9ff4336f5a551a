//! Admin sessions for tower-sessions, in the app's own database. `id` is the keyed hash the
//! session store names a session by (`http::session_store`), never the session id itself.

use super::Db;

/// A live session's data and expiry (Unix seconds).
pub async fn load(db: &Db, id: &str, now: i64) -> Result<Option<(String, i64)>, sqlx::Error> {
    sqlx::query_as("SELECT data, expiry FROM sessions WHERE id = $1 AND expiry > $2")
        .bind(id)
        .bind(now)
        .fetch_optional(db.reader())
        .await
}

pub async fn save(db: &Db, id: &str, data: &str, expiry: i64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO sessions (id, data, expiry) VALUES ($1, $2, $3) \
         ON CONFLICT (id) DO UPDATE SET data = excluded.data, expiry = excluded.expiry",
    )
    .bind(id)
    .bind(data)
    .bind(expiry)
    .execute(&db.pool)
    .await
    .map(|_| ())
}

/// Inserts only when the id is new; `false` on a collision.
pub async fn create(db: &Db, id: &str, data: &str, expiry: i64) -> Result<bool, sqlx::Error> {
    sqlx::query(
        "INSERT INTO sessions (id, data, expiry) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING",
    )
    .bind(id)
    .bind(data)
    .bind(expiry)
    .execute(&db.pool)
    .await
    .map(|r| r.rows_affected() == 1)
}

pub async fn delete(db: &Db, id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM sessions WHERE id = $1")
        .bind(id)
        .execute(&db.pool)
        .await
        .map(|_| ())
}

/// Deletes the sessions expired by `now`, in short batches (`super::expired`).
pub async fn delete_expired(db: &Db, now: i64) -> Result<u64, sqlx::Error> {
    super::expired::delete(db, super::expired::Expired::Sessions, now).await
}
