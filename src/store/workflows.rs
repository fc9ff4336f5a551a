//! Workflows and their versions. A version's definition is JSON text and never changes once
//! written; saving a workflow adds a version.

use super::Db;

#[derive(Clone, Debug, sqlx::FromRow)]
pub struct WorkflowRow {
    pub id: i64,
    pub name: String,
    pub label: String,
    /// Its label in other languages: a JSON object (`domain::workflow::labels`).
    pub labels: String,
    /// The newest version: what new instances start on.
    pub version_id: i64,
    pub version: i64,
    pub definition: String,
}

#[derive(Clone, Debug, sqlx::FromRow)]
pub struct VersionRow {
    pub id: i64,
    pub workflow_id: i64,
    pub number: i64,
    pub definition: String,
    pub created_at: i64,
}

/// A version with how many instances are on it.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct VersionLine {
    pub id: i64,
    pub number: i64,
    pub created_at: i64,
    pub running: i64,
    pub ended: i64,
}

/// A workflow with its newest version that is not deleted.
const LATEST: &str = "SELECT w.id, w.name, w.label, w.labels, v.id AS version_id, v.number AS version, \
     v.definition FROM workflows w JOIN workflow_versions v ON v.workflow_id = w.id \
     AND v.number = (SELECT MAX(number) FROM workflow_versions x \
                     WHERE x.workflow_id = w.id AND x.deleted_at IS NULL) \
     WHERE w.deleted_at IS NULL";

/// Every workflow by label, ignoring case. Sorted here rather than in SQL: SQLite orders text
/// by bytes and PostgreSQL by the database's locale, so `ORDER BY label` differs by backend.
pub async fn list(db: &Db) -> Result<Vec<WorkflowRow>, sqlx::Error> {
    let mut rows: Vec<WorkflowRow> = sqlx::query_as(&format!("{LATEST} ORDER BY w.id"))
        .fetch_all(db.reader())
        .await?;
    rows.sort_by_cached_key(|w| (w.label.to_lowercase(), w.id));
    Ok(rows)
}

pub async fn by_id(db: &Db, id: i64) -> Result<Option<WorkflowRow>, sqlx::Error> {
    sqlx::query_as(&format!("{LATEST} AND w.id = $1"))
        .bind(id)
        .fetch_optional(db.reader())
        .await
}

pub async fn by_name(db: &Db, name: &str) -> Result<Option<WorkflowRow>, sqlx::Error> {
    sqlx::query_as(&format!("{LATEST} AND w.name = $1"))
        .bind(name)
        .fetch_optional(db.reader())
        .await
}

/// The label of any workflow, deleted or not (an ended instance still names its workflow).
pub async fn label(db: &Db, id: i64) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar("SELECT label FROM workflows WHERE id = $1")
        .bind(id)
        .fetch_optional(db.reader())
        .await
}

/// The label and other labels of any workflow, deleted or not: what an email names it by.
pub async fn labels_of(db: &Db, id: i64) -> Result<Option<(String, String)>, sqlx::Error> {
    sqlx::query_as("SELECT label, labels FROM workflows WHERE id = $1")
        .bind(id)
        .fetch_optional(db.reader())
        .await
}

/// A workflow's machine name and label, by id: what an instance's API view names it by.
pub async fn name_and_label(db: &Db, id: i64) -> Result<Option<(String, String)>, sqlx::Error> {
    sqlx::query_as("SELECT name, label FROM workflows WHERE id = $1")
        .bind(id)
        .fetch_optional(db.reader())
        .await
}

/// Instances by workflow (its machine name) and state, for the metrics: counted per
/// `(workflow_id, state)` over the `instances (workflow_id, state, id)` index alone, then
/// named (see docs/plans/instance_counts_*.txt for the plans on a million instances).
pub const INSTANCE_COUNTS: &str = "SELECT w.name, c.state, c.n FROM \
     (SELECT workflow_id, state, COUNT(*) AS n FROM instances GROUP BY workflow_id, state) c \
     JOIN workflows w ON w.id = c.workflow_id";

pub async fn instance_counts(db: &Db) -> Result<Vec<(String, String, i64)>, sqlx::Error> {
    sqlx::query_as(INSTANCE_COUNTS).fetch_all(db.reader()).await
}

pub async fn count(db: &Db) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT COUNT(*) FROM workflows")
        .fetch_one(db.reader())
        .await
}

pub async fn version(db: &Db, id: i64) -> Result<Option<VersionRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT id, workflow_id, number, definition, created_at FROM workflow_versions WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(db.reader())
    .await
}

/// A workflow's version by its number, unless deleted.
pub async fn version_numbered(
    db: &Db,
    workflow: i64,
    number: i64,
) -> Result<Option<VersionRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT id, workflow_id, number, definition, created_at FROM workflow_versions \
         WHERE workflow_id = $1 AND number = $2 AND deleted_at IS NULL",
    )
    .bind(workflow)
    .bind(number)
    .fetch_optional(db.reader())
    .await
}

/// A workflow's versions, newest first, with the instances on each (the figures the starts,
/// ends and cancels keep: `store::instances`). Deleted versions are left out.
pub async fn versions(db: &Db, workflow: i64) -> Result<Vec<VersionLine>, sqlx::Error> {
    sqlx::query_as(
        "SELECT v.id, v.number, v.created_at, v.running, v.ended \
         FROM workflow_versions v WHERE v.workflow_id = $1 AND v.deleted_at IS NULL \
         ORDER BY v.number DESC",
    )
    .bind(workflow)
    .fetch_all(db.reader())
    .await
}

/// Instances still running on a workflow's versions other than `except`.
pub async fn running_elsewhere(db: &Db, workflow: i64, except: i64) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT CAST(COALESCE(SUM(running), 0) AS BIGINT) FROM workflow_versions \
         WHERE workflow_id = $1 AND id <> $2",
    )
    .bind(workflow)
    .bind(except)
    .fetch_one(db.reader())
    .await
}

/// Creates a workflow and its version 1, with no label in other languages; `Ok(None)` when the
/// machine name is taken.
pub async fn create(
    db: &Db,
    name: &str,
    label: &str,
    definition: &str,
) -> Result<Option<i64>, sqlx::Error> {
    create_labelled(db, name, label, "{}", definition).await
}

/// [`create`] with its labels in other languages (a JSON object).
pub async fn create_labelled(
    db: &Db,
    name: &str,
    label: &str,
    labels: &str,
    definition: &str,
) -> Result<Option<i64>, sqlx::Error> {
    let now = super::now();
    let mut tx = db.write().await?;
    let id: Option<i64> = sqlx::query_scalar(
        "INSERT INTO workflows (name, label, labels, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $4) ON CONFLICT (name) DO NOTHING RETURNING id",
    )
    .bind(name)
    .bind(label)
    .bind(labels)
    .bind(now)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(id) = id else {
        return Ok(None);
    };
    insert_version(&mut tx, id, 1, definition, now).await?;
    tx.commit().await?;
    Ok(Some(id))
}

async fn insert_version(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    workflow: i64,
    number: i64,
    definition: &str,
    now: i64,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO workflow_versions (workflow_id, number, definition, created_at) \
         VALUES ($1, $2, $3, $4) RETURNING id",
    )
    .bind(workflow)
    .bind(number)
    .bind(definition)
    .bind(now)
    .fetch_one(&mut **tx)
    .await
}

/// What saving a workflow did.
#[derive(Debug, PartialEq, Eq)]
pub enum Saved {
    /// A new version with this number.
    Version(i64),
    /// The definition is the newest version's: only the label changed.
    LabelOnly,
    NotFound,
}

/// Saves a workflow: its label, and a new version when the definition differs from the newest.
/// The workflow's row is written first, so two saves at once number their versions in turn.
/// Its labels in other languages are kept.
pub async fn save(db: &Db, id: i64, label: &str, definition: &str) -> Result<Saved, sqlx::Error> {
    save_labelled(db, id, label, None, definition).await
}

/// [`save`], and its labels in other languages (a JSON object) when `labels` is given.
pub async fn save_labelled(
    db: &Db,
    id: i64,
    label: &str,
    labels: Option<&str>,
    definition: &str,
) -> Result<Saved, sqlx::Error> {
    let now = super::now();
    let mut tx = db.write().await?;
    let found = sqlx::query(
        "UPDATE workflows SET label = $1, labels = COALESCE($2, labels), updated_at = $3 \
         WHERE id = $4 AND deleted_at IS NULL",
    )
    .bind(label)
    .bind(labels)
    .bind(now)
    .bind(id)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if found == 0 {
        return Ok(Saved::NotFound);
    }
    let newest: Option<(i64, String)> = sqlx::query_as(
        "SELECT number, definition FROM workflow_versions WHERE workflow_id = $1 \
         AND deleted_at IS NULL ORDER BY number DESC LIMIT 1",
    )
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    if newest.as_ref().is_some_and(|(_, d)| d == definition) {
        tx.commit().await?;
        return Ok(Saved::LabelOnly);
    }
    // Numbers are never reused, deleted versions included.
    let number: i64 = sqlx::query_scalar(
        "SELECT COALESCE(MAX(number), 0) + 1 FROM workflow_versions WHERE workflow_id = $1",
    )
    .bind(id)
    .fetch_one(&mut *tx)
    .await?;
    insert_version(&mut tx, id, number, definition, now).await?;
    tx.commit().await?;
    Ok(Saved::Version(number))
}

/// What a deletion did.
#[derive(Debug, PartialEq, Eq)]
pub enum Deleted {
    Done,
    /// Refused: this many instances still run on it.
    Running(i64),
    /// Refused: a workflow keeps at least one version.
    LastVersion,
    NotFound,
}

/// Deletes a workflow unless an instance still runs on it. Ended instances keep their history
/// and name it still, so the row is marked deleted rather than removed.
pub async fn delete(db: &Db, id: i64) -> Result<Deleted, sqlx::Error> {
    let mut tx = db.write().await?;
    // The row first: a concurrent start waits for this transaction.
    let found =
        sqlx::query("UPDATE workflows SET deleted_at = $1 WHERE id = $2 AND deleted_at IS NULL")
            .bind(super::now())
            .bind(id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
    if found == 0 {
        return Ok(Deleted::NotFound);
    }
    let running: i64 = sqlx::query_scalar(
        "SELECT CAST(COALESCE(SUM(running), 0) AS BIGINT) FROM workflow_versions WHERE workflow_id = $1",
    )
    .bind(id)
    .fetch_one(&mut *tx)
    .await?;
    if running > 0 {
        return Ok(Deleted::Running(running));
    }
    tx.commit().await?;
    Ok(Deleted::Done)
}

/// Deletes one version of a workflow unless an instance still runs on it or it is the only one.
pub async fn delete_version(db: &Db, workflow: i64, number: i64) -> Result<Deleted, sqlx::Error> {
    let mut tx = db.write().await?;
    let now = super::now();
    let lock =
        sqlx::query("UPDATE workflows SET updated_at = $1 WHERE id = $2 AND deleted_at IS NULL")
            .bind(now)
            .bind(workflow)
            .execute(&mut *tx)
            .await?
            .rows_affected();
    let version: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM workflow_versions WHERE workflow_id = $1 AND number = $2 AND deleted_at IS NULL",
    )
    .bind(workflow)
    .bind(number)
    .fetch_optional(&mut *tx)
    .await?;
    let (1, Some(version)) = (lock, version) else {
        return Ok(Deleted::NotFound);
    };
    let left: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM workflow_versions WHERE workflow_id = $1 AND deleted_at IS NULL",
    )
    .bind(workflow)
    .fetch_one(&mut *tx)
    .await?;
    if left <= 1 {
        return Ok(Deleted::LastVersion);
    }
    let running: i64 = sqlx::query_scalar("SELECT running FROM workflow_versions WHERE id = $1")
        .bind(version)
        .fetch_one(&mut *tx)
        .await?;
    if running > 0 {
        return Ok(Deleted::Running(running));
    }
    sqlx::query("UPDATE workflow_versions SET deleted_at = $1 WHERE id = $2")
        .bind(now)
        .bind(version)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Deleted::Done)
}

/// What an instance's view names its version by: the version's number (0 once it is gone) and
/// its workflow's machine name and label (`None` once the workflow is deleted).
#[derive(Clone, Debug, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct Naming {
    pub version_number: Option<i64>,
    pub workflow_name: Option<String>,
    pub workflow_label: Option<String>,
    pub workflow_labels: Option<String>,
}

/// The subqueries that read a [`Naming`] beside an instance's row (`instances` in the FROM):
/// primary-key probes, in the instance's own read.
pub const NAMING: &str = "(SELECT number FROM workflow_versions v WHERE v.id = instances.version_id) \
     AS version_number, \
     (SELECT name FROM workflows w WHERE w.id = instances.workflow_id) AS workflow_name, \
     (SELECT label FROM workflows w WHERE w.id = instances.workflow_id) AS workflow_label, \
     (SELECT labels FROM workflows w WHERE w.id = instances.workflow_id) AS workflow_labels";

/// Whether any workflow has been saved since it was added (the dashboard's first steps).
pub async fn any_edited(db: &Db) -> Result<bool, sqlx::Error> {
    let edited: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM workflows WHERE updated_at > created_at AND deleted_at IS NULL",
    )
    .fetch_one(db.reader())
    .await?;
    Ok(edited > 0)
}
