//! Receipts: the public keys they are signed under (`receipt_keys`), each answer's receipt id
//! (`receipts`), and the answer lines they sign, read from the history.

use super::Db;

/// A public key receipts were signed under, as published.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct PublicKey {
    /// Its RFC 7638 thumbprint, a receipt's `kid`.
    pub kid: String,
    /// The key itself, base64url (a JWK's `x`).
    pub x: String,
    pub created_at: i64,
}

/// Publishes a key; a key already published stays as it was (two processes may both publish
/// the current key at their start).
pub async fn publish(db: &Db, kid: &str, x: &str, now: i64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO receipt_keys (kid, x, created_at) VALUES ($1, $2, $3) \
         ON CONFLICT (kid) DO NOTHING",
    )
    .bind(kid)
    .bind(x)
    .bind(now)
    .execute(&db.pool)
    .await?;
    Ok(())
}

/// Every key receipts were ever signed under, newest first: a rotation adds one and keeps the
/// old, so what was signed before still verifies.
pub async fn public_keys(db: &Db) -> Result<Vec<PublicKey>, sqlx::Error> {
    sqlx::query_as("SELECT kid, x, created_at FROM receipt_keys ORDER BY created_at DESC, kid")
        .fetch_all(db.reader())
        .await
}

/// An answer's line of history as a receipt signs it.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct Line {
    pub id: i64,
    pub instance_id: i64,
    pub step_index: i64,
    pub round: i64,
    pub step_title: String,
    pub participant: String,
    pub answer: String,
    pub answer_sha256: Option<String>,
    pub link_id: Option<i64>,
    pub at: i64,
}

const LINE: &str = "SELECT id, instance_id, step_index, CAST(round AS BIGINT) AS round, \
    step_title, participant, answer, answer_sha256, CAST(link_id AS BIGINT) AS link_id, at \
    FROM history";

/// The answer line `id` of `instance`, if it is one.
pub async fn line(db: &Db, instance: i64, id: i64) -> Result<Option<Line>, sqlx::Error> {
    sqlx::query_as(&format!(
        "{LINE} WHERE id = $1 AND instance_id = $2 AND event = 'answered'"
    ))
    .bind(id)
    .bind(instance)
    .fetch_optional(db.reader())
    .await
}

/// The answers of `instance` given through the link record `link`, oldest first: the only
/// answers that link's holder gets receipts for.
pub async fn lines_of_link(db: &Db, instance: i64, link: i64) -> Result<Vec<Line>, sqlx::Error> {
    lines_where(db, instance, Whose::Link(link)).await
}

/// The answers of `instance` given by `participant`, oldest first (the outcome email's).
pub async fn lines_of_participant(
    db: &Db,
    instance: i64,
    participant: &str,
) -> Result<Vec<Line>, sqlx::Error> {
    lines_where(db, instance, Whose::Participant(participant)).await
}

enum Whose<'a> {
    Link(i64),
    Participant(&'a str),
}

async fn lines_where(db: &Db, instance: i64, whose: Whose<'_>) -> Result<Vec<Line>, sqlx::Error> {
    let column = match whose {
        Whose::Link(_) => "link_id",
        Whose::Participant(_) => "participant",
    };
    let sql = format!(
        "{LINE} WHERE instance_id = $1 AND {column} = $2 AND event = 'answered' ORDER BY id"
    );
    let query = sqlx::query_as(&sql).bind(instance);
    let query = match whose {
        Whose::Link(link) => query.bind(link),
        Whose::Participant(participant) => query.bind(participant),
    };
    query.fetch_all(db.reader()).await
}

/// The receipt of the answer line `history`: its id and when it was first issued, made now with
/// `fresh` as its id when it has none. Two requests at once both insert; one wins and both read
/// it back.
pub async fn receipt_for(
    db: &Db,
    instance: i64,
    history: i64,
    fresh: &str,
    now: i64,
) -> Result<(String, i64), sqlx::Error> {
    sqlx::query(
        "INSERT INTO receipts (id, instance_id, history_id, issued_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (history_id) DO NOTHING",
    )
    .bind(fresh)
    .bind(instance)
    .bind(history)
    .bind(now)
    .execute(&db.pool)
    .await?;
    sqlx::query_as("SELECT id, issued_at FROM receipts WHERE history_id = $1")
        .bind(history)
        .fetch_one(&db.pool)
        .await
}

/// The receipts issued for `instance`'s answers: (receipt id, history line id, issued at),
/// oldest first. For the evidence record.
pub async fn of_instance(db: &Db, instance: i64) -> Result<Vec<(String, i64, i64)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT id, history_id, issued_at FROM receipts WHERE instance_id = $1 ORDER BY history_id",
    )
    .bind(instance)
    .fetch_all(db.reader())
    .await
}

/// What a receipt's answer line holds now: `None` when the line is gone, else its SHA-256 and
/// whether its words are still there (retention or an erasure empties them and keeps the hash).
pub async fn current_sha256(
    db: &Db,
    instance: i64,
    history: i64,
) -> Result<Option<(Option<String>, String)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT answer_sha256, answer FROM history WHERE id = $1 AND instance_id = $2 \
         AND event = 'answered'",
    )
    .bind(history)
    .bind(instance)
    .fetch_optional(db.reader())
    .await
}
