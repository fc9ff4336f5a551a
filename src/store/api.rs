//! API tokens, integrator keys and the signatures already seen.

use super::Db;

#[derive(Clone, Debug, sqlx::FromRow)]
pub struct TokenRow {
    pub id: i64,
    pub name: String,
    pub rate_per_minute: Option<i64>,
    pub burst: Option<i64>,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
    pub revoked_at: Option<i64>,
}

const TOKEN: &str = "id, name, rate_per_minute, burst, created_at, last_used_at, revoked_at";

/// Creates a token; `None` when the name is taken.
pub async fn create_token(
    db: &Db,
    name: &str,
    hash: &str,
    rate: Option<i64>,
    burst: Option<i64>,
) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO api_tokens (name, hash, rate_per_minute, burst, created_at) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING id",
    )
    .bind(name)
    .bind(hash)
    .bind(rate)
    .bind(burst)
    .bind(super::now())
    .fetch_optional(&db.pool)
    .await
}

/// The live token with this hash.
pub async fn token_by_hash(db: &Db, hash: &str) -> Result<Option<TokenRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {TOKEN} FROM api_tokens WHERE hash = $1 AND revoked_at IS NULL"
    ))
    .bind(hash)
    .fetch_optional(db.reader())
    .await
}

pub async fn tokens(db: &Db) -> Result<Vec<TokenRow>, sqlx::Error> {
    sqlx::query_as(&format!("SELECT {TOKEN} FROM api_tokens ORDER BY name"))
        .fetch_all(db.reader())
        .await
}

/// Notes a token's use, at most once a minute per token (a write per request would be a
/// write per API call).
pub async fn touch_token(db: &Db, id: i64, now: i64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE api_tokens SET last_used_at = $1 WHERE id = $2 \
         AND (last_used_at IS NULL OR last_used_at < $3)",
    )
    .bind(now)
    .bind(id)
    .bind(now - 60)
    .execute(&db.pool)
    .await
    .map(|_| ())
}

/// Revokes a live token by name; its id when there was one.
pub async fn revoke_token(db: &Db, name: &str) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar(
        "UPDATE api_tokens SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL RETURNING id",
    )
    .bind(super::now())
    .bind(name)
    .fetch_optional(&db.pool)
    .await
}

/// Makes (or, for an existing name, replaces) an integrator's signing key. The old key of that
/// name stops signing at once.
pub async fn put_integrator_key(
    db: &Db,
    name: &str,
    key_id: &str,
    secret: &str,
) -> Result<(), sqlx::Error> {
    let now = super::now();
    let mut tx = db.pool.begin().await?;
    sqlx::query(
        "UPDATE integrator_keys SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL",
    )
    .bind(now)
    .bind(name)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO integrator_keys (name, key_id, secret, created_at) VALUES ($1, $2, $3, $4)",
    )
    .bind(name)
    .bind(key_id)
    .bind(secret)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    tx.commit().await
}

/// The secret of a live integrator key.
pub async fn integrator_secret(db: &Db, key_id: &str) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT secret FROM integrator_keys WHERE key_id = $1 AND revoked_at IS NULL",
    )
    .bind(key_id)
    .fetch_optional(db.reader())
    .await
}

/// Records a signature; `false` when it was seen before (a replay).
pub async fn first_use_of_signature(
    db: &Db,
    hash: &str,
    expires: i64,
) -> Result<bool, sqlx::Error> {
    sqlx::query("INSERT INTO api_signatures (hash, expires) VALUES ($1, $2) ON CONFLICT DO NOTHING")
        .bind(hash)
        .bind(expires)
        .execute(&db.pool)
        .await
        .map(|r| r.rows_affected() == 1)
}

pub async fn delete_expired_signatures(db: &Db, now: i64) -> Result<u64, sqlx::Error> {
    sqlx::query("DELETE FROM api_signatures WHERE expires <= $1")
        .bind(now)
        .execute(&db.pool)
        .await
        .map(|r| r.rows_affected())
}

/// Running instances a token started.
pub async fn running_started_by(db: &Db, token: i64) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM instances WHERE api_token_id = $1 AND state = 'active'",
    )
    .bind(token)
    .fetch_one(db.reader())
    .await
}

pub async fn mark_started_by(db: &Db, instance: i64, token: i64) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE instances SET api_token_id = $1 WHERE id = $2")
        .bind(token)
        .bind(instance)
        .execute(&db.pool)
        .await
        .map(|_| ())
}

/// Links issued for an instance since a time.
pub async fn links_issued_since(db: &Db, instance: i64, since: i64) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT COUNT(*) FROM links WHERE instance_id = $1 AND issued_at > $2")
        .bind(instance)
        .bind(since)
        .fetch_one(db.reader())
        .await
}
