//! The site keys row.

use super::Db;
use super::webhooks::{self, EndpointRow};
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
    let row = stored(db.reader()).await?;
    keys_of(&row.0, &row.1, &row)
}

/// The keys row as stored: private key, hash salt, provider key, token key (hex), generation.
type Stored = (String, String, Option<String>, Option<String>, i64);

async fn stored<'e>(
    executor: impl sqlx::Executor<'e, Database = sqlx::Any>,
) -> Result<Stored, sqlx::Error> {
    sqlx::query_as(
        "SELECT private_key, hash_salt, provider_key, token_key, generation FROM site_keys \
         WHERE id = 1",
    )
    .fetch_one(executor)
    .await
}

/// The keys of a stored row, with its link keys (`private_key`, `hash_salt`) as given.
fn keys_of(private_key: &str, hash_salt: &str, row: &Stored) -> Result<SiteKeys, sqlx::Error> {
    SiteKeys::from_hex(
        private_key,
        hash_salt,
        row.2.as_deref().unwrap_or(""),
        row.3.as_deref(),
    )
    .map(|keys| keys.with_generation(row.4))
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

/// Replaces both link keys: every link and handle signed so far stops verifying, and the keys'
/// generation moves on (a link recorded under an older one is void). The retired link keys are
/// kept until `keep_until`, to recognise a voided link (never to accept one). The token
/// key stays: API tokens keep working. What is sealed under the keys and must outlive them, the
/// webhook endpoints' secrets, is sealed again by `reseal(old, new, endpoint)` in the same
/// transaction, so no endpoint is left with a secret nobody can open (one that did not open
/// under the old keys either stays as it was).
pub async fn rotate(
    db: &Db,
    reseal: impl Fn(&SiteKeys, &SiteKeys, &EndpointRow) -> Option<String>,
    keep_until: i64,
) -> Result<SiteKeys, sqlx::Error> {
    let fresh = SiteKeys::generate();
    let (private_key, hash_salt) = (fresh.private_key_hex(), fresh.hash_salt_hex());
    let mut tx = db.write().await?;
    let row = stored(&mut *tx).await?;
    let old = keys_of(&row.0, &row.1, &row)?;
    let new = keys_of(&private_key, &hash_salt, &row)?.with_generation(row.4 + 1);
    let now = super::now();
    sqlx::query(
        "INSERT INTO retired_link_keys (generation, private_key, hash_salt, retired_at, \
         keep_until) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (generation) DO NOTHING",
    )
    .bind(row.4)
    .bind(&row.0)
    .bind(&row.1)
    .bind(now)
    .bind(keep_until)
    .execute(&mut *tx)
    .await?;
    // Endpoints are made one by one by administrators and API tokens: a few, read at once.
    let endpoints: Vec<EndpointRow> = sqlx::query_as(&format!(
        "SELECT {} FROM webhook_endpoints",
        webhooks::COLUMNS
    ))
    .fetch_all(&mut *tx)
    .await?;
    for endpoint in &endpoints {
        if let Some(sealed) = reseal(&old, &new, endpoint) {
            sqlx::query("UPDATE webhook_endpoints SET secret = $1 WHERE id = $2")
                .bind(sealed)
                .bind(endpoint.id)
                .execute(&mut *tx)
                .await?;
        }
    }
    sqlx::query(
        "UPDATE site_keys SET private_key = $1, hash_salt = $2, created_at = $3, \
         generation = $4 WHERE id = 1",
    )
    .bind(&private_key)
    .bind(&hash_salt)
    .bind(now)
    .bind(new.generation())
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(new)
}

/// When the keys were made or last rotated, if they exist.
pub async fn created_at(db: &Db) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar("SELECT created_at FROM site_keys WHERE id = 1")
        .fetch_optional(db.reader())
        .await
}

/// The link keys retired by rotations and still kept at `now`, newest first: each as keys of
/// their own generation (only their link keys are set).
pub async fn retired(db: &Db, now: i64) -> Result<Vec<SiteKeys>, sqlx::Error> {
    let rows: Vec<(i64, String, String)> = sqlx::query_as(
        "SELECT generation, private_key, hash_salt FROM retired_link_keys \
         WHERE keep_until > $1 ORDER BY generation DESC",
    )
    .bind(now)
    .fetch_all(db.reader())
    .await?;
    rows.into_iter()
        .map(|(generation, private_key, hash_salt)| {
            let zero = hex::encode([0u8; 32]);
            SiteKeys::from_hex(&private_key, &hash_salt, &zero, Some(&zero))
                .map(|k| k.with_generation(generation))
                .ok_or_else(|| sqlx::Error::Protocol("retired link keys are malformed".into()))
        })
        .collect()
}

/// Deletes the retired link keys no link signed under them can need any more.
pub async fn prune_retired(db: &Db, now: i64) -> Result<u64, sqlx::Error> {
    Ok(
        sqlx::query("DELETE FROM retired_link_keys WHERE keep_until <= $1")
            .bind(now)
            .execute(&db.pool)
            .await?
            .rows_affected(),
    )
}

/// The generation of the site's link keys now.
pub async fn generation(db: &Db) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT generation FROM site_keys WHERE id = 1")
        .fetch_one(db.reader())
        .await
}
