//! Instances, their history, and continuation handles.

use super::Db;

#[derive(Clone, Debug, sqlx::FromRow)]
pub struct InstanceRow {
    pub id: i64,
    pub workflow_id: i64,
    pub subject_title: String,
    pub subject_body: String,
    pub token: String,
    pub step_index: i64,
    pub state: String,
    pub created_at: i64,
    pub updated_at: i64,
}

#[derive(Clone, Debug, sqlx::FromRow)]
pub struct HistoryRow {
    pub step_index: i64,
    pub branch: String,
    pub event: String,
    pub answer: String,
    pub at: i64,
}

const COLUMNS: &str = "id, workflow_id, subject_title, subject_body, token, step_index, state, created_at, updated_at";

pub async fn create(
    db: &Db,
    workflow_id: i64,
    title: &str,
    body: &str,
    token: &str,
) -> Result<i64, sqlx::Error> {
    let now = super::now();
    let mut tx = db.pool.begin().await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO instances (workflow_id, subject_title, subject_body, token, step_index, state, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, 0, 'active', $5, $5) RETURNING id",
    )
    .bind(workflow_id)
    .bind(title)
    .bind(body)
    .bind(token)
    .bind(now)
    .fetch_one(&mut *tx)
    .await?;
    insert_history(&mut tx, id, 0, "", "started", "{}", now).await?;
    tx.commit().await?;
    Ok(id)
}

async fn insert_history(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    instance: i64,
    step: i64,
    branch: &str,
    event: &str,
    answer: &str,
    at: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO history (instance_id, step_index, branch, event, answer, at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(instance)
    .bind(step)
    .bind(branch)
    .bind(event)
    .bind(answer)
    .bind(at)
    .execute(&mut **tx)
    .await
    .map(|_| ())
}

pub async fn by_id(db: &Db, id: i64) -> Result<Option<InstanceRow>, sqlx::Error> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM instances WHERE id = $1"))
        .bind(id)
        .fetch_optional(&db.pool)
        .await
}

pub async fn recent(db: &Db, limit: i64) -> Result<Vec<InstanceRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM instances ORDER BY id DESC LIMIT $1"
    ))
    .bind(limit)
    .fetch_all(&db.pool)
    .await
}

pub async fn history(db: &Db, instance: i64) -> Result<Vec<HistoryRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT step_index, branch, event, answer, at FROM history WHERE instance_id = $1 ORDER BY id",
    )
    .bind(instance)
    .fetch_all(&db.pool)
    .await
}

/// Branches already answered at a step.
pub async fn answered_branches(
    db: &Db,
    instance: i64,
    step: i64,
) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT branch FROM history WHERE instance_id = $1 AND step_index = $2 AND event = 'answered'",
    )
    .bind(instance)
    .bind(step)
    .fetch_all(&db.pool)
    .await
}

/// Adds a history line outside an answer (a link issued, links revoked).
pub async fn note(
    db: &Db,
    instance: i64,
    step: i64,
    branch: &str,
    event: &str,
) -> Result<(), sqlx::Error> {
    let mut tx = db.pool.begin().await?;
    insert_history(&mut tx, instance, step, branch, event, "{}", super::now()).await?;
    tx.commit().await
}

/// What an answer did to its instance.
#[derive(Debug, PartialEq, Eq)]
pub enum Recorded {
    /// Recorded; other branches of the step are still open.
    Waiting,
    /// Recorded, and the instance moved to the next step.
    Advanced,
    /// Recorded, and the instance ended in this state.
    Ended(&'static str),
    /// Not recorded: the step moved on or this branch was already answered.
    Stale,
}

/// One answer to a step, as the workflow decided it.
pub struct Answer<'a> {
    pub instance: i64,
    pub step: i64,
    pub branch: &'a str,
    pub answer_json: &'a str,
    /// Every branch the step waits for ("" for a step without branches).
    pub branches: &'a [String],
    pub last_step: bool,
    /// Set when this answer ends the instance whatever the other branches say (a rejection).
    pub ends_as: Option<&'static str>,
}

/// Records an answer and moves the instance on when its step is complete, in one transaction.
/// The first statement takes the instance's row (its write lock), so two branches answered at
/// the same moment are counted one after the other and the step advances exactly once.
pub async fn record_answer(db: &Db, a: &Answer<'_>) -> Result<Recorded, sqlx::Error> {
    let now = super::now();
    let mut tx = db.pool.begin().await?;
    let locked = sqlx::query(
        "UPDATE instances SET updated_at = $1 WHERE id = $2 AND step_index = $3 AND state = 'active'",
    )
    .bind(now)
    .bind(a.instance)
    .bind(a.step)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if locked == 0 {
        return Ok(Recorded::Stale);
    }
    let answered: Vec<String> = sqlx::query_scalar(
        "SELECT branch FROM history WHERE instance_id = $1 AND step_index = $2 AND event = 'answered'",
    )
    .bind(a.instance)
    .bind(a.step)
    .fetch_all(&mut *tx)
    .await?;
    if answered.iter().any(|b| b == a.branch) {
        return Ok(Recorded::Stale);
    }
    insert_history(
        &mut tx,
        a.instance,
        a.step,
        a.branch,
        "answered",
        a.answer_json,
        now,
    )
    .await?;
    let complete = a
        .branches
        .iter()
        .all(|b| b == a.branch || answered.contains(b));
    let outcome = if let Some(state) = a.ends_as {
        set_state(&mut tx, a.instance, a.step, state, now).await?;
        Recorded::Ended(state)
    } else if !complete {
        Recorded::Waiting
    } else if a.last_step {
        set_state(&mut tx, a.instance, a.step + 1, "complete", now).await?;
        Recorded::Ended("complete")
    } else {
        sqlx::query("UPDATE instances SET step_index = $1 WHERE id = $2")
            .bind(a.step + 1)
            .bind(a.instance)
            .execute(&mut *tx)
            .await?;
        Recorded::Advanced
    };
    tx.commit().await?;
    Ok(outcome)
}

async fn set_state(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    instance: i64,
    step: i64,
    state: &str,
    now: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE instances SET state = $1, step_index = $2 WHERE id = $3")
        .bind(state)
        .bind(step)
        .bind(instance)
        .execute(&mut **tx)
        .await?;
    insert_history(tx, instance, step, "", state, "{}", now).await
}

/// Gives the instance a new token: every link and handle issued for it stops verifying.
pub async fn rotate_token(db: &Db, instance: i64, token: &str) -> Result<bool, sqlx::Error> {
    sqlx::query("UPDATE instances SET token = $1, updated_at = $2 WHERE id = $3")
        .bind(token)
        .bind(super::now())
        .bind(instance)
        .execute(&db.pool)
        .await
        .map(|r| r.rows_affected() == 1)
}

pub async fn put_handle(
    db: &Db,
    hash: &str,
    instance: i64,
    expires: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO handles (hash, instance_id, expires) VALUES ($1, $2, $3)")
        .bind(hash)
        .bind(instance)
        .bind(expires)
        .execute(&db.pool)
        .await
        .map(|_| ())
}

/// Whether a handle is known, unexpired and unused.
pub async fn handle_usable(db: &Db, hash: &str, now: i64) -> Result<bool, sqlx::Error> {
    let found: Option<i64> = sqlx::query_scalar(
        "SELECT instance_id FROM handles WHERE hash = $1 AND expires > $2 AND used = 0",
    )
    .bind(hash)
    .bind(now)
    .fetch_optional(&db.pool)
    .await?;
    Ok(found.is_some())
}

/// Spends a handle; `false` when it was already spent (a replayed return trip).
pub async fn spend_handle(db: &Db, hash: &str, now: i64) -> Result<bool, sqlx::Error> {
    sqlx::query("UPDATE handles SET used = 1 WHERE hash = $1 AND used = 0 AND expires > $2")
        .bind(hash)
        .bind(now)
        .execute(&db.pool)
        .await
        .map(|r| r.rows_affected() == 1)
}

pub async fn delete_expired_handles(db: &Db, now: i64) -> Result<u64, sqlx::Error> {
    sqlx::query("DELETE FROM handles WHERE expires <= $1")
        .bind(now)
        .execute(&db.pool)
        .await
        .map(|r| r.rows_affected())
}
