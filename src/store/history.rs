//! An instance's history: its lines as written in the transaction of each change, and the
//! reads of it, each through the history's `(instance_id, step_index)` index or by instance.

use super::Db;
use crate::domain::workflow::history::Event;

/// One line of history, as it will be shown.
#[derive(Clone, Debug)]
pub struct Entry<'a> {
    pub step: i64,
    pub branch: &'a str,
    pub event: Event,
    pub answer: &'a str,
    pub step_title: &'a str,
    pub kind: &'a str,
    pub participant: &'a str,
    pub actor: &'a str,
    /// For an answer: how it came (its link record, its client, how its holder was checked).
    pub by: Option<&'a By<'a>>,
}

/// How an answer came, kept on its line of history for receipts and the evidence record.
#[derive(Clone, Debug, Default)]
pub struct By<'a> {
    /// The link record it came through (`None`: a handle, the provider's notice, or a link
    /// issued before links were recorded).
    pub link: Option<i64>,
    /// The client's address as a keyed hash (`SiteKeys::keyed_hash("client", …)`).
    pub client: Option<&'a str>,
    /// How the link's holder was checked before answering: `email` for an emailed code.
    pub verified: Option<&'a str>,
}

impl Entry<'_> {
    /// A line of `event` with nothing else said (fields are set on top of it).
    pub fn of(event: Event) -> Self {
        Entry {
            step: 0,
            branch: "",
            event,
            answer: "",
            step_title: "",
            kind: "",
            participant: "",
            actor: "",
            by: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct HistoryRow {
    pub step_index: i64,
    pub branch: String,
    #[sqlx(try_from = "String")]
    pub event: Event,
    pub answer: String,
    pub at: i64,
    pub step_title: String,
    pub kind: String,
    pub participant: String,
    pub actor: String,
}

/// Writes one line of history and gives its id. An answer's line keeps the SHA-256 of its
/// answer as stored (`answer_sha256`).
pub(crate) async fn insert_history(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    instance: i64,
    e: &Entry<'_>,
    at: i64,
) -> Result<i64, sqlx::Error> {
    let answer = if e.answer.is_empty() { "{}" } else { e.answer };
    let by = e.by.cloned().unwrap_or_default();
    let sha256 = (e.event == Event::Answered).then(|| answer_sha256(answer));
    sqlx::query_scalar(
        "INSERT INTO history (instance_id, step_index, branch, event, answer, at, step_title, \
         kind, participant, actor, round, answer_sha256, link_id, client, verified) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, \
         (SELECT round FROM instances WHERE id = $1), $11, $12, $13, $14) RETURNING id",
    )
    .bind(instance)
    .bind(e.step)
    .bind(e.branch)
    .bind(e.event.as_str())
    .bind(answer)
    .bind(at)
    .bind(e.step_title)
    .bind(e.kind)
    .bind(e.participant)
    .bind(e.actor)
    .bind(sha256)
    .bind(by.link)
    .bind(by.client)
    .bind(by.verified)
    .fetch_one(&mut **tx)
    .await
}

/// The SHA-256 of an answer as its history line stores it (its JSON text), in hex: what a
/// receipt signs and the evidence record lists, so a copy of the answer can be checked.
pub fn answer_sha256(answer: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(answer.as_bytes()))
}

pub async fn history(db: &Db, instance: i64) -> Result<Vec<HistoryRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT step_index, branch, event, answer, at, step_title, kind, participant, actor \
         FROM history WHERE instance_id = $1 ORDER BY id",
    )
    .bind(instance)
    .fetch_all(db.reader())
    .await
}

/// A history line with its id, the cursor of a page of history.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct HistoryLine {
    pub id: i64,
    #[sqlx(flatten)]
    pub line: HistoryRow,
}

super::of_instance!(
    HistoryLine,
    "history",
    "id, step_index, branch, event, answer, at, step_title, kind, participant, actor"
);

/// Branches that answered a step in the instance's current round.
pub async fn answered_branches(
    db: &Db,
    instance: i64,
    step: i64,
) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT branch FROM history WHERE instance_id = $1 AND step_index = $2 \
         AND event = 'answered' AND round = (SELECT round FROM instances WHERE id = $1)",
    )
    .bind(instance)
    .bind(step)
    .fetch_all(db.reader())
    .await
}

/// The answers given at steps `from..=to` of an instance, oldest first: a step page showing
/// earlier answers reads them with the current step's in one statement.
pub async fn answers_between(
    db: &Db,
    instance: i64,
    from: i64,
    to: i64,
) -> Result<Vec<(i64, String, String)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT step_index, branch, answer FROM history WHERE instance_id = $1 \
         AND step_index >= $2 AND step_index <= $3 AND event = 'answered' ORDER BY id",
    )
    .bind(instance)
    .bind(from)
    .bind(to)
    .fetch_all(db.reader())
    .await
}

/// A step asked again in a later round, as its page shows it.
#[derive(Debug, Default)]
pub struct AskedAgain {
    /// The answer that sent the instance back to this step in this round (a review's decision
    /// and comment, as recorded), and whose it was.
    pub because: Option<(String, String)>,
    /// What this branch answered at this step before, as recorded.
    pub before: Option<String>,
}

/// What a step page asked again needs: why it was sent back in the instance's current round,
/// and the branch's latest earlier answer. Read only for an instance that went back (round
/// above 0), through the history's `(instance_id, step_index)` index.
pub async fn asked_again(
    db: &Db,
    instance: i64,
    step: i64,
    branch: &str,
) -> Result<Option<AskedAgain>, sqlx::Error> {
    let rows: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT event, participant, answer FROM history WHERE instance_id = $1 \
         AND step_index = $2 AND ((event = 'answered' AND branch = $3) \
         OR (event = 'reopened' AND round = (SELECT round FROM instances WHERE id = $1))) \
         ORDER BY id DESC",
    )
    .bind(instance)
    .bind(step)
    .bind(branch)
    .fetch_all(db.reader())
    .await?;
    let mut again = AskedAgain::default();
    for (event, participant, answer) in rows {
        match event.as_str() {
            "reopened" if again.because.is_none() => again.because = Some((participant, answer)),
            "answered" if again.before.is_none() => again.before = Some(answer),
            _ => {}
        }
    }
    Ok((again.because.is_some() || again.before.is_some()).then_some(again))
}

/// How many times a participant of an instance was forwarded from its link's page.
pub async fn forwards(db: &Db, instance: i64, participant: &str) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM history WHERE instance_id = $1 AND event = 'reassigned' \
         AND participant = $2 AND actor LIKE 'forward:%'",
    )
    .bind(instance)
    .bind(participant)
    .fetch_one(&db.pool)
    .await
}

/// How long an answered step waited, for the metrics' `orchestra_step_wait_seconds`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Asked {
    /// The instance's workflow, by its machine name (never a title: it is a metric's label).
    pub workflow: String,
    /// Seconds from the step's start to the answer.
    pub waited: i64,
}

/// When the step an instance now waits at was asked, read in the answer's transaction after
/// its instance row is taken and before the answer is written: the latest line of a move onto
/// a step (the start, a closing answer, a deadline that went on, a step passed over, a move
/// back), leaving out the answers already given at this step in this round, which came after
/// it. `instances.updated_at` would not do: every answer and cancellation moves it. Through the
/// history's `(instance_id, id)` index: an instance's lines, a few dozen.
pub async fn step_asked(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    instance: i64,
    step: i64,
    round: i64,
    now: i64,
) -> Result<Option<Asked>, sqlx::Error> {
    let row: Option<(String, Option<i64>)> = sqlx::query_as(
        "SELECT w.name, (SELECT MAX(h.at) FROM history h WHERE h.instance_id = i.id \
         AND h.event IN ('started', 'answered', 'step_expired', 'skipped', 'reopened') \
         AND NOT (h.event = 'answered' AND h.step_index = $2 AND h.round = $3)) \
         FROM instances i JOIN workflows w ON w.id = i.workflow_id WHERE i.id = $1",
    )
    .bind(instance)
    .bind(step)
    .bind(round)
    .fetch_optional(&mut **tx)
    .await?;
    Ok(row.and_then(|(workflow, at)| {
        Some(Asked {
            workflow,
            waited: (now - at?).max(0),
        })
    }))
}

/// A line of history as the evidence record gives it: everything it stores.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct RecordLine {
    pub id: i64,
    pub step_index: i64,
    pub round: i64,
    pub branch: String,
    pub event: String,
    pub answer: String,
    pub at: i64,
    pub step_title: String,
    pub kind: String,
    pub participant: String,
    pub actor: String,
    pub answer_sha256: Option<String>,
    pub link_id: Option<i64>,
    pub client: Option<String>,
    pub verified: Option<String>,
}

/// Every line of an instance's history, oldest first, through the history's index by instance:
/// an instance has tens of lines, its links capped a day and its rounds capped (`| rounds N`).
pub async fn record_lines(db: &Db, instance: i64) -> Result<Vec<RecordLine>, sqlx::Error> {
    sqlx::query_as(
        "SELECT id, step_index, round, branch, event, answer, at, step_title, kind, participant, \
         actor, answer_sha256, link_id, client, verified FROM history WHERE instance_id = $1 \
         ORDER BY id",
    )
    .bind(instance)
    .fetch_all(db.reader())
    .await
}
