//! Webhook endpoints as stored (`domain::delivery::endpoints` owns their rules). The secret
//! column holds the signing key sealed, never in clear.

use super::Db;

#[derive(Clone, sqlx::FromRow)]
pub struct EndpointRow {
    pub id: i64,
    pub url: String,
    /// Comma-separated event names; empty for every event.
    pub events: String,
    /// Sealed (`domain::delivery::endpoints`).
    pub secret: String,
    pub enabled: i64,
    pub failures: i64,
    pub created_at: i64,
}

/// By hand: the sealed secret stays out of any log line.
impl std::fmt::Debug for EndpointRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndpointRow")
            .field("id", &self.id)
            .field("url", &self.url)
            .field("events", &self.events)
            .field("enabled", &self.enabled)
            .field("failures", &self.failures)
            .finish_non_exhaustive()
    }
}

const COLUMNS: &str = "id, url, events, secret, enabled, failures, created_at";

/// Inserts an endpoint whose secret is sealed by `seal` once its id is known (the id is the
/// seal's associated data), in one transaction: no row ever holds an unsealed secret.
pub async fn create(
    db: &Db,
    url: &str,
    events: &str,
    seal: impl FnOnce(i64) -> Option<String>,
    now: i64,
) -> Result<Option<i64>, sqlx::Error> {
    let mut tx = db.pool.begin().await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO webhook_endpoints (url, events, secret, created_at) \
         VALUES ($1, $2, '', $3) RETURNING id",
    )
    .bind(url)
    .bind(events)
    .bind(now)
    .fetch_one(&mut *tx)
    .await?;
    let Some(sealed) = seal(id) else {
        return Ok(None);
    };
    sqlx::query("UPDATE webhook_endpoints SET secret = $1 WHERE id = $2")
        .bind(sealed)
        .bind(id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Some(id))
}

pub async fn all(db: &Db) -> Result<Vec<EndpointRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM webhook_endpoints ORDER BY id"
    ))
    .fetch_all(&db.pool)
    .await
}

pub async fn by_id(db: &Db, id: i64) -> Result<Option<EndpointRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM webhook_endpoints WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(&db.pool)
    .await
}

/// `false` when there was no such endpoint.
pub async fn delete(db: &Db, id: i64) -> Result<bool, sqlx::Error> {
    sqlx::query("DELETE FROM webhook_endpoints WHERE id = $1")
        .bind(id)
        .execute(&db.pool)
        .await
        .map(|r| r.rows_affected() == 1)
}
