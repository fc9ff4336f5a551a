//! The outbox (`domain::delivery` owns its rules): one row per message, inserted inside the
//! transaction of the change it tells of, so a change that rolls back leaves no message. The
//! columns are typed and few (ids, the workflow's machine name, a step's number and title, a
//! participant, a state, an amount): none can carry a link, a handle, a secret or an answer.

use super::Db;
use crate::domain::delivery::answered::AnsweredFiles;
use crate::domain::delivery::topic::Topic;
use crate::domain::workflow::InstanceState;

/// A message about to be written: what happened to which instance, and what a receiver may
/// know of it.
#[derive(Clone, Copy, Debug)]
pub struct Message<'a> {
    pub topic: Topic,
    pub instance: i64,
    pub step: Option<i64>,
    pub step_title: Option<&'a str>,
    pub participant: Option<&'a str>,
    pub state: Option<InstanceState>,
    pub amount_cents: Option<i64>,
    pub currency: Option<&'a str>,
    /// For an answer: the files it brought, as `AnsweredFiles::to_json` writes them.
    pub files: Option<&'a str>,
}

impl Message<'_> {
    /// A message of `topic` about `instance`, with nothing else said (fields are set on top).
    pub fn of(topic: Topic, instance: i64) -> Self {
        Message {
            topic,
            instance,
            step: None,
            step_title: None,
            participant: None,
            state: None,
            amount_cents: None,
            currency: None,
            files: None,
        }
    }
}

/// A message as stored.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct MessageRow {
    pub id: i64,
    #[sqlx(try_from = "String")]
    pub event: Topic,
    pub instance_id: i64,
    pub workflow: String,
    pub step_index: Option<i64>,
    pub step_title: Option<String>,
    pub participant: Option<String>,
    pub state: Option<String>,
    pub amount_cents: Option<i64>,
    pub currency: Option<String>,
    pub created_at: i64,
    /// What files a step.answered message's answer brought (never the answer itself); `None`
    /// for every other message.
    #[sqlx(try_from = "Option<String>")]
    pub files: AnsweredFiles,
}

const COLUMNS: &str = "id, event, instance_id, workflow, step_index, step_title, participant, \
     state, amount_cents, currency, created_at, files";

/// Writes a message inside the caller's transaction, and queues a delivery of it to every
/// endpoint that takes its event (held, when the endpoint is disabled: it waits for it): they commit, or vanish, with the change. The
/// workflow's machine name is read in the same statement, from the instance's row. An API
/// token's endpoint is queued a message only when that token started the instance and is not
/// revoked: one `INSERT … SELECT` decides it (the subquery reads the instance and the token by
/// their primary keys).
pub async fn record(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    m: &Message<'_>,
    now: i64,
) -> Result<(), sqlx::Error> {
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO outbox (event, instance_id, workflow, step_index, step_title, participant, \
         state, amount_cents, currency, created_at, files) VALUES ($1, $2, \
         (SELECT w.name FROM instances i JOIN workflows w ON w.id = i.workflow_id WHERE i.id = $2), \
         $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
    )
    .bind(m.topic.as_str())
    .bind(m.instance)
    .bind(m.step)
    .bind(m.step_title)
    .bind(m.participant)
    .bind(m.state.map(InstanceState::as_str))
    .bind(m.amount_cents)
    .bind(m.currency)
    .bind(now)
    .bind(m.files)
    .fetch_one(&mut **tx)
    .await?;
    sqlx::query(QUEUE)
        .bind(id)
        .bind(now)
        .bind(format!("%,{},%", m.topic.as_str()))
        .bind(m.instance)
        .execute(&mut **tx)
        .await
        .map(|_| ())
}

/// The deliveries of message `$1`, due at `$2`, about instance `$4`: every endpoint
/// whose events match `$3` (`events` is a comma list without spaces; an event name holds no
/// LIKE wildcard), an administrator's (no token) or the live token's that started the instance.
/// A NULL `api_token_id` on the instance (started by an administrator or the CLI) matches no
/// token's endpoint.
pub const QUEUE: &str = "INSERT INTO webhook_deliveries (outbox_id, endpoint_id, state, next_at, created_at) \
     SELECT $1, e.id, CASE WHEN e.enabled = 1 THEN 'pending' ELSE 'held' END, $2, $2 \
     FROM webhook_endpoints e WHERE (e.events = '' OR ',' || e.events || ',' LIKE $3) \
     AND (e.api_token_id IS NULL OR e.api_token_id = \
     (SELECT i.api_token_id FROM instances i JOIN api_tokens t ON t.id = i.api_token_id \
      WHERE i.id = $4 AND t.revoked_at IS NULL))";

/// The messages about an instance, oldest first.
pub async fn for_instance(db: &Db, instance: i64) -> Result<Vec<MessageRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM outbox WHERE instance_id = $1 ORDER BY id"
    ))
    .bind(instance)
    .fetch_all(&db.pool)
    .await
}

/// Messages after `after`, oldest first, at most `limit`.
pub async fn after(db: &Db, after: i64, limit: i64) -> Result<Vec<MessageRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM outbox WHERE id > $1 ORDER BY id LIMIT $2"
    ))
    .bind(after)
    .bind(limit)
    .fetch_all(&db.pool)
    .await
}

pub async fn by_id(db: &Db, id: i64) -> Result<Option<MessageRow>, sqlx::Error> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM outbox WHERE id = $1"))
        .bind(id)
        .fetch_optional(&db.pool)
        .await
}
