//! The site keys row.

use super::Db;
use crate::domain::keys::SiteKeys;

/// The site keys, made and stored on first use.
pub async fn load_or_create(db: &Db) -> Result<SiteKeys, sqlx::Error> {
    let fresh = SiteKeys::generate();
    // Two processes starting at once both try; the first insert wins and both read it back.
    sqlx::query(
        "INSERT INTO site_keys (id, private_key, hash_salt, created_at, provider_key, token_key) \
         VALUES (1, $1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
    )
    .bind(fresh.private_key_hex())
    .bind(fresh.hash_salt_hex())
    .bind(super::now())
    .bind(fresh.provider_key_hex())
    .bind(fresh.token_key_hex())
    .execute(&db.pool)
    .await?;
    // A database made before provider notices gets its provider key on the first start after
    // the upgrade.
    sqlx::query("UPDATE site_keys SET provider_key = $1 WHERE id = 1 AND provider_key IS NULL")
        .bind(fresh.provider_key_hex())
        .execute(&db.pool)
        .await?;
    load(db).await
}

/// The stored keys; an error when they were never made.
pub async fn load(db: &Db) -> Result<SiteKeys, sqlx::Error> {
    let (private_key, hash_salt, provider, token_key): (
        String,
        String,
        Option<String>,
        Option<String>,
    ) = sqlx::query_as(
        "SELECT private_key, hash_salt, provider_key, token_key FROM site_keys WHERE id = 1",
    )
    .fetch_one(db.reader())
    .await?;
    SiteKeys::from_hex(
        &private_key,
        &hash_salt,
        provider.as_deref().unwrap_or(""),
        token_key.as_deref(),
    )
    .ok_or_else(|| sqlx::Error::Protocol("the stored site keys are malformed".into()))
}

/// Replaces the token key: every API token made so far stops authenticating (their stored
/// hashes were made under the old one).
pub async fn rotate_token_key(db: &Db) -> Result<(), sqlx::Error> {
    let fresh = SiteKeys::generate();
    sqlx::query("UPDATE site_keys SET token_key = $1 WHERE id = 1")
        .bind(fresh.token_key_hex())
        .execute(&db.pool)
        .await?;
    Ok(())
}

/// Replaces both link keys: every link and handle signed so far stops verifying. The token
/// key stays: API tokens keep working.
pub async fn rotate(db: &Db) -> Result<SiteKeys, sqlx::Error> {
    let fresh = SiteKeys::generate();
    sqlx::query(
        "UPDATE site_keys SET private_key = $1, hash_salt = $2, created_at = $3 WHERE id = 1",
    )
    .bind(fresh.private_key_hex())
    .bind(fresh.hash_salt_hex())
    .bind(super::now())
    .execute(&db.pool)
    .await?;
    load(db).await
}

/// When the keys were made or last rotated, if they exist.
pub async fn created_at(db: &Db) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar("SELECT created_at FROM site_keys WHERE id = 1")
        .fetch_optional(db.reader())
        .await
}
