//! Two-step sign-in rows: an administrator's sealed TOTP secret, the last time step accepted,
//! and the keyed hashes of their recovery codes. What is sealed and how is `domain::two_step`'s.

use super::Db;

/// The two-step key (hex), a site key of its own that no rotation changes; made on first use.
/// Two processes making it at once both write only where none is, and both read the winner.
pub async fn key(db: &Db, fresh_hex: &str) -> Result<String, sqlx::Error> {
    let stored: Option<Option<String>> =
        sqlx::query_scalar("SELECT two_step_key FROM site_keys WHERE id = 1")
            .fetch_optional(db.reader())
            .await?;
    if let Some(Some(key)) = stored {
        return Ok(key);
    }
    sqlx::query("UPDATE site_keys SET two_step_key = $1 WHERE id = 1 AND two_step_key IS NULL")
        .bind(fresh_hex)
        .execute(&db.pool)
        .await?;
    sqlx::query_scalar("SELECT two_step_key FROM site_keys WHERE id = 1")
        .fetch_one(&db.pool)
        .await
}

#[derive(Debug, sqlx::FromRow)]
pub struct Row {
    pub secret: String,
    pub enabled_at: Option<i64>,
    pub last_step: i64,
}

pub async fn of(db: &Db, admin: i64) -> Result<Option<Row>, sqlx::Error> {
    sqlx::query_as("SELECT secret, enabled_at, last_step FROM admin_two_step WHERE admin_id = $1")
        .bind(admin)
        .fetch_optional(&db.pool)
        .await
}

/// Whether the administrator has two-step sign-in on (confirmed, not only being set up).
pub async fn is_on(db: &Db, admin: i64) -> Result<bool, sqlx::Error> {
    let on: Option<i64> = sqlx::query_scalar(
        "SELECT admin_id FROM admin_two_step WHERE admin_id = $1 AND enabled_at IS NOT NULL",
    )
    .bind(admin)
    .fetch_optional(db.reader())
    .await?;
    Ok(on.is_some())
}

/// A new secret being set up, replacing one being set up before; `false` (nothing written)
/// when two-step sign-in is already on.
pub async fn begin(db: &Db, admin: i64, sealed: &str, now: i64) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "INSERT INTO admin_two_step (admin_id, secret, enabled_at, last_step, created_at) \
         VALUES ($1, $2, NULL, 0, $3) ON CONFLICT (admin_id) DO UPDATE SET secret = $2, \
         last_step = 0, created_at = $3 WHERE admin_two_step.enabled_at IS NULL",
    )
    .bind(admin)
    .bind(sealed)
    .bind(now)
    .execute(&db.pool)
    .await?
    .rows_affected();
    Ok(done == 1)
}

/// Turns on the secret being set up, with `step` as its first code's, and its recovery codes
/// (their keyed hashes) in place of any before. `false` when there was none being set up.
pub async fn enable(
    db: &Db,
    admin: i64,
    step: i64,
    code_hashes: &[String],
    now: i64,
) -> Result<bool, sqlx::Error> {
    let mut tx = db.write().await?;
    let done = sqlx::query(
        "UPDATE admin_two_step SET enabled_at = $1, last_step = $2 \
         WHERE admin_id = $3 AND enabled_at IS NULL AND last_step <= $2",
    )
    .bind(now)
    .bind(step)
    .bind(admin)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if done != 1 {
        return Ok(false);
    }
    sqlx::query("DELETE FROM admin_recovery_codes WHERE admin_id = $1")
        .bind(admin)
        .execute(&mut *tx)
        .await?;
    for hash in code_hashes {
        sqlx::query("INSERT INTO admin_recovery_codes (admin_id, code_hash) VALUES ($1, $2)")
            .bind(admin)
            .bind(hash)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(true)
}

/// Takes the code of time step `step`: `true` once, when no code of this step or a later one
/// was taken before (so a code is never accepted twice, even by two servers at once).
pub async fn take_step(db: &Db, admin: i64, step: i64) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE admin_two_step SET last_step = $1 \
         WHERE admin_id = $2 AND enabled_at IS NOT NULL AND last_step < $1",
    )
    .bind(step)
    .bind(admin)
    .execute(&db.pool)
    .await?
    .rows_affected();
    Ok(done == 1)
}

/// Uses up the recovery code with this keyed hash: `true` once, when it was unused.
pub async fn take_recovery(db: &Db, admin: i64, hash: &str, now: i64) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE admin_recovery_codes SET used_at = $1 \
         WHERE admin_id = $2 AND code_hash = $3 AND used_at IS NULL",
    )
    .bind(now)
    .bind(admin)
    .bind(hash)
    .execute(&db.pool)
    .await?
    .rows_affected();
    Ok(done == 1)
}

/// Recovery codes not yet used.
pub async fn recovery_left(db: &Db, admin: i64) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM admin_recovery_codes WHERE admin_id = $1 AND used_at IS NULL",
    )
    .bind(admin)
    .fetch_one(db.reader())
    .await
}

/// Turns two-step sign-in off: the secret and the recovery codes are gone. `false` when it was
/// neither on nor being set up.
pub async fn remove(db: &Db, admin: i64) -> Result<bool, sqlx::Error> {
    let mut tx = db.write().await?;
    sqlx::query("DELETE FROM admin_recovery_codes WHERE admin_id = $1")
        .bind(admin)
        .execute(&mut *tx)
        .await?;
    let done = sqlx::query("DELETE FROM admin_two_step WHERE admin_id = $1")
        .bind(admin)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    tx.commit().await?;
    Ok(done == 1)
}
