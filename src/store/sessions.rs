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

/// What a row says of its session beside its data: whose it is and the browser's family,
/// taken from the data on each save.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    pub admin_id: Option<i64>,
    /// The administrator's epoch the session was signed in under (0 when none).
    pub epoch: i64,
    pub agent: String,
}

pub async fn save(db: &Db, id: &str, data: &str, expiry: i64) -> Result<(), sqlx::Error> {
    save_with(db, id, data, expiry, &Meta::default(), super::now()).await
}

/// Inserts only when the id is new; `false` on a collision.
pub async fn create(db: &Db, id: &str, data: &str, expiry: i64) -> Result<bool, sqlx::Error> {
    create_with(db, id, data, expiry, &Meta::default(), super::now()).await
}

/// Writes a session; `created_at` is set when the row is made and kept after, `seen_at` is
/// each save's time.
pub async fn save_with(
    db: &Db,
    id: &str,
    data: &str,
    expiry: i64,
    meta: &Meta,
    now: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO sessions (id, data, expiry, admin_id, agent, created_at, seen_at, epoch) \
         VALUES ($1, $2, $3, $4, $5, $6, $6, $7) \
         ON CONFLICT (id) DO UPDATE SET data = excluded.data, expiry = excluded.expiry, \
         admin_id = excluded.admin_id, agent = excluded.agent, seen_at = excluded.seen_at, \
         epoch = excluded.epoch",
    )
    .bind(id)
    .bind(data)
    .bind(expiry)
    .bind(meta.admin_id)
    .bind(&meta.agent)
    .bind(now)
    .bind(meta.epoch)
    .execute(&db.pool)
    .await
    .map(|_| ())
}

/// `create` with the row's columns beside its data.
pub async fn create_with(
    db: &Db,
    id: &str,
    data: &str,
    expiry: i64,
    meta: &Meta,
    now: i64,
) -> Result<bool, sqlx::Error> {
    sqlx::query(
        "INSERT INTO sessions (id, data, expiry, admin_id, agent, created_at, seen_at, epoch) \
         VALUES ($1, $2, $3, $4, $5, $6, $6, $7) ON CONFLICT (id) DO NOTHING",
    )
    .bind(id)
    .bind(data)
    .bind(expiry)
    .bind(meta.admin_id)
    .bind(&meta.agent)
    .bind(now)
    .bind(meta.epoch)
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

/// The most sessions of one administrator a list shows.
pub const LISTED: i64 = 50;

/// One of an administrator's live sessions, as their list shows it. By hand `Debug`: `id` is
/// a keyed hash of a session id, compared with the current one's and never shown.
#[derive(Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Listed {
    pub id: String,
    pub created_at: Option<i64>,
    pub seen_at: Option<i64>,
    pub agent: String,
}

impl std::fmt::Debug for Listed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listed")
            .field("created_at", &self.created_at)
            .field("seen_at", &self.seen_at)
            .finish_non_exhaustive()
    }
}

/// An administrator's live sessions, the last seen first, at most `LISTED` (`sessions_admin`):
/// unexpired, and signed in under the administrator's current epoch (a session from before a
/// password change, a reset or a sign-out everywhere no longer works, so it is not listed).
pub async fn of_admin(db: &Db, admin_id: i64, now: i64) -> Result<Vec<Listed>, sqlx::Error> {
    sqlx::query_as(
        "SELECT s.id, s.created_at, s.seen_at, s.agent FROM sessions s \
         JOIN admins a ON a.id = s.admin_id AND a.auth_epoch = s.epoch \
         WHERE s.admin_id = $1 AND s.expiry > $2 ORDER BY s.seen_at DESC, s.id LIMIT $3",
    )
    .bind(admin_id)
    .bind(now)
    .bind(LISTED)
    .fetch_all(db.reader())
    .await
}

/// Deletes the sessions expired by `now`, in short batches (`super::expired`).
pub async fn delete_expired(db: &Db, now: i64) -> Result<u64, sqlx::Error> {
    super::expired::delete(db, super::expired::Expired::Sessions, now).await
}

/// Signs an administrator out everywhere but the session `keep`: their epoch moves on (so
/// every session under the old one stops working, a row without its administrator's id
/// included) and their other rows are deleted, in one transaction. The new epoch, for `keep`
/// to go on under; `None` for an unknown administrator.
pub async fn end_others(db: &Db, admin_id: i64, keep: &str) -> Result<Option<i64>, sqlx::Error> {
    let mut tx = db.write().await?;
    let epoch: Option<i64> = sqlx::query_scalar(
        "UPDATE admins SET auth_epoch = auth_epoch + 1 WHERE id = $1 RETURNING auth_epoch",
    )
    .bind(admin_id)
    .fetch_optional(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM sessions WHERE admin_id = $1 AND id <> $2")
        .bind(admin_id)
        .bind(keep)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(epoch)
}
