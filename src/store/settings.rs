//! Stored site settings: name → value text. Typing and validation live in `crate::domain::settings`.

use super::Db;

pub async fn all(db: &Db) -> Result<Vec<(String, String)>, sqlx::Error> {
    sqlx::query_as("SELECT name, value FROM settings")
        .fetch_all(db.reader())
        .await
}

pub async fn get(db: &Db, name: &str) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar("SELECT value FROM settings WHERE name = $1")
        .bind(name)
        .fetch_optional(db.reader())
        .await
}

/// Writes several values in one transaction: a form saves all its fields or none.
pub async fn put_all(db: &Db, values: &[(&str, String)]) -> Result<(), sqlx::Error> {
    let mut tx = db.write().await?;
    for (name, value) in values {
        sqlx::query(
            "INSERT INTO settings (name, value) VALUES ($1, $2) \
             ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        )
        .bind(*name)
        .bind(value.as_str())
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await
}
