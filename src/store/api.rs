//! API tokens (with their scopes), integrator keys and the signatures already seen.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::Db;
use super::instances::{COLUMNS, InstanceRow};
use crate::domain::api::scope::Scope;

#[derive(Clone, Debug, sqlx::FromRow)]
pub struct TokenRow {
    pub id: i64,
    pub name: String,
    pub rate_per_minute: Option<i64>,
    pub burst: Option<i64>,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
    pub revoked_at: Option<i64>,
    #[sqlx(flatten)]
    pub scope: Scope,
}

const TOKEN: &str = "id, name, rate_per_minute, burst, created_at, last_used_at, revoked_at, \
     abilities, reach, workflows";

/// A scope from its three columns (`Scope::stored`).
impl<'r> sqlx::FromRow<'r, AnyRow> for Scope {
    fn from_row(row: &'r AnyRow) -> Result<Self, sqlx::Error> {
        let abilities: String = row.try_get("abilities")?;
        let reach: String = row.try_get("reach")?;
        let workflows: Option<String> = row.try_get("workflows")?;
        Scope::from_stored(&abilities, &reach, workflows.as_deref()).map_err(|e| {
            sqlx::Error::ColumnDecode {
                index: "abilities, reach, workflows".into(),
                source: format!("a token's scope: {e}").into(),
            }
        })
    }
}

/// Creates a token; `None` when the name is taken.
pub async fn create_token(
    db: &Db,
    name: &str,
    hash: &str,
    rate: Option<i64>,
    burst: Option<i64>,
    scope: &Scope,
) -> Result<Option<i64>, sqlx::Error> {
    let (abilities, reach, workflows) = scope.stored();
    sqlx::query_scalar(
        "INSERT INTO api_tokens (name, hash, rate_per_minute, burst, created_at, abilities, \
         reach, workflows) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
         ON CONFLICT DO NOTHING RETURNING id",
    )
    .bind(name)
    .bind(hash)
    .bind(rate)
    .bind(burst)
    .bind(super::now())
    .bind(abilities)
    .bind(reach)
    .bind(workflows)
    .fetch_optional(&db.pool)
    .await
}

/// Replaces a live token's scope, by name; its id when there was one.
pub async fn set_scope(db: &Db, name: &str, scope: &Scope) -> Result<Option<i64>, sqlx::Error> {
    let (abilities, reach, workflows) = scope.stored();
    sqlx::query_scalar(
        "UPDATE api_tokens SET abilities = $1, reach = $2, workflows = $3 \
         WHERE name = $4 AND revoked_at IS NULL RETURNING id",
    )
    .bind(abilities)
    .bind(reach)
    .bind(workflows)
    .bind(name)
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

/// How often a token's use is noted, in seconds.
pub const TOUCH_EVERY: i64 = 60;

/// Notes a token's use, at most once a minute per token (a write per request would be a
/// write per API call).
pub async fn touch_token(db: &Db, id: i64, now: i64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE api_tokens SET last_used_at = $1 WHERE id = $2 \
         AND (last_used_at IS NULL OR last_used_at < $3)",
    )
    .bind(now)
    .bind(id)
    .bind(now - TOUCH_EVERY)
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
    let mut tx = db.write().await?;
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

/// Deletes the signatures expired by `now`, in short batches (`super::expired`).
pub async fn delete_expired_signatures(db: &Db, now: i64) -> Result<u64, sqlx::Error> {
    super::expired::delete(db, super::expired::Expired::Signatures, now).await
}

/// An instance as the API reaches it: its row, who started it, its workflow's machine name.
#[derive(Debug, sqlx::FromRow)]
pub struct Reached {
    #[sqlx(flatten)]
    pub instance: InstanceRow,
    /// The token that started it; `None` for an administrator or the command line.
    pub api_token_id: Option<i64>,
    /// Its version's number and workflow's names: the instance's view needs no read of them.
    #[sqlx(flatten)]
    pub naming: super::workflows::Naming,
}

impl Reached {
    /// The workflow's machine name, which a token's scope names workflows by (empty once the
    /// workflow is deleted: no scope names it).
    pub fn workflow_name(&self) -> &str {
        self.naming.workflow_name.as_deref().unwrap_or("")
    }
}

/// An instance with what a token's scope is checked against, in one read by primary keys.
pub async fn reached(db: &Db, id: i64) -> Result<Option<Reached>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS}, api_token_id, {} FROM instances WHERE id = $1",
        super::workflows::NAMING
    ))
    .bind(id)
    .fetch_optional(db.reader())
    .await
}
