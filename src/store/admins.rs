//! Administrators and the one-time setup token.

use super::Db;

#[derive(Debug, sqlx::FromRow)]
pub struct Admin {
    pub id: i64,
    pub name: String,
    pub password_hash: String,
}

pub async fn count(db: &Db) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT COUNT(*) FROM admins")
        .fetch_one(db.reader())
        .await
}

pub async fn by_name(db: &Db, name: &str) -> Result<Option<Admin>, sqlx::Error> {
    sqlx::query_as("SELECT id, name, password_hash FROM admins WHERE name = $1")
        .bind(name)
        .fetch_optional(db.reader())
        .await
}

pub async fn by_id(db: &Db, id: i64) -> Result<Option<Admin>, sqlx::Error> {
    sqlx::query_as("SELECT id, name, password_hash FROM admins WHERE id = $1")
        .bind(id)
        .fetch_optional(db.reader())
        .await
}

/// Creates an administrator; `Ok(None)` when the name is taken.
pub async fn create(db: &Db, name: &str, password_hash: &str) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO admins (name, password_hash, created_at) VALUES ($1, $2, $3) \
         ON CONFLICT (name) DO NOTHING RETURNING id",
    )
    .bind(name)
    .bind(password_hash)
    .bind(super::now())
    .fetch_optional(&db.pool)
    .await
}

pub async fn set_password(db: &Db, id: i64, password_hash: &str) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE admins SET password_hash = $1 WHERE id = $2")
        .bind(password_hash)
        .bind(id)
        .execute(&db.pool)
        .await
        .map(|_| ())
}

/// Replaces any setup token with this one (stored as a keyed hash, never as it is).
pub async fn put_setup_token(db: &Db, token_hash: &str, expires: i64) -> Result<(), sqlx::Error> {
    let mut tx = db.pool.begin().await?;
    sqlx::query("DELETE FROM setup_tokens")
        .execute(&mut *tx)
        .await?;
    sqlx::query("INSERT INTO setup_tokens (token_hash, expires) VALUES ($1, $2)")
        .bind(token_hash)
        .bind(expires)
        .execute(&mut *tx)
        .await?;
    tx.commit().await
}

pub async fn setup_token_valid(db: &Db, token_hash: &str, now: i64) -> Result<bool, sqlx::Error> {
    let found: Option<i64> = sqlx::query_scalar(
        "SELECT expires FROM setup_tokens WHERE token_hash = $1 AND expires > $2",
    )
    .bind(token_hash)
    .bind(now)
    .fetch_optional(db.reader())
    .await?;
    Ok(found.is_some())
}

/// Creates the first administrator and spends the setup token, in one transaction; `Ok(None)`
/// when the token is no longer valid or an administrator already exists.
pub async fn create_first(
    db: &Db,
    token_hash: &str,
    name: &str,
    password_hash: &str,
) -> Result<Option<i64>, sqlx::Error> {
    let mut tx = db.pool.begin().await?;
    let spent = sqlx::query("DELETE FROM setup_tokens WHERE token_hash = $1 AND expires > $2")
        .bind(token_hash)
        .bind(super::now())
        .execute(&mut *tx)
        .await?
        .rows_affected();
    let existing: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM admins")
        .fetch_one(&mut *tx)
        .await?;
    if spent == 0 || existing > 0 {
        return Ok(None);
    }
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO admins (name, password_hash, created_at) VALUES ($1, $2, $3) RETURNING id",
    )
    .bind(name)
    .bind(password_hash)
    .bind(super::now())
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Some(id))
}
