//! Workflow definitions, stored as JSON text.

use super::Db;

#[derive(Clone, Debug, sqlx::FromRow)]
pub struct WorkflowRow {
    pub id: i64,
    pub name: String,
    pub label: String,
    pub definition: String,
}

/// Every workflow by label, ignoring case. Sorted here rather than in SQL: SQLite orders text
/// by bytes and PostgreSQL by the database's locale, so `ORDER BY label` differs by backend.
pub async fn list(db: &Db) -> Result<Vec<WorkflowRow>, sqlx::Error> {
    let mut rows: Vec<WorkflowRow> =
        sqlx::query_as("SELECT id, name, label, definition FROM workflows ORDER BY id")
            .fetch_all(&db.pool)
            .await?;
    rows.sort_by_cached_key(|w| (w.label.to_lowercase(), w.id));
    Ok(rows)
}

pub async fn by_id(db: &Db, id: i64) -> Result<Option<WorkflowRow>, sqlx::Error> {
    sqlx::query_as("SELECT id, name, label, definition FROM workflows WHERE id = $1")
        .bind(id)
        .fetch_optional(&db.pool)
        .await
}

pub async fn by_name(db: &Db, name: &str) -> Result<Option<WorkflowRow>, sqlx::Error> {
    sqlx::query_as("SELECT id, name, label, definition FROM workflows WHERE name = $1")
        .bind(name)
        .fetch_optional(&db.pool)
        .await
}

pub async fn count(db: &Db) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT COUNT(*) FROM workflows")
        .fetch_one(&db.pool)
        .await
}

/// Creates a workflow; `Ok(None)` when the machine name is taken.
pub async fn create(
    db: &Db,
    name: &str,
    label: &str,
    definition: &str,
) -> Result<Option<i64>, sqlx::Error> {
    let now = super::now();
    sqlx::query_scalar(
        "INSERT INTO workflows (name, label, definition, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $4) ON CONFLICT (name) DO NOTHING RETURNING id",
    )
    .bind(name)
    .bind(label)
    .bind(definition)
    .bind(now)
    .fetch_optional(&db.pool)
    .await
}

pub async fn update(db: &Db, id: i64, label: &str, definition: &str) -> Result<bool, sqlx::Error> {
    sqlx::query("UPDATE workflows SET label = $1, definition = $2, updated_at = $3 WHERE id = $4")
        .bind(label)
        .bind(definition)
        .bind(super::now())
        .bind(id)
        .execute(&db.pool)
        .await
        .map(|r| r.rows_affected() == 1)
}
