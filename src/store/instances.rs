//! Instances and their history. History lines record what they showed at the time (the step's
//! title, kind and participant), so no later version of the workflow changes them.

pub(crate) use super::history::insert_history;
pub use super::history::{
    Asked, AskedAgain, By, Entry, HistoryLine, HistoryRow, answered_branches, answers_between,
    asked_again, forwards, history,
};
use super::mails::{self, ContactRow};
use super::outbox::{self, Message};
use super::{Backend, Db};
use crate::domain::delivery::answered::AnsweredFiles;
use crate::domain::delivery::topic::Topic;
use crate::domain::workflow::history::Event;
use crate::domain::workflow::{InstanceState, Participant, StepStart};

#[derive(Clone, Debug, sqlx::FromRow)]
pub struct InstanceRow {
    pub id: i64,
    pub workflow_id: i64,
    pub version_id: i64,
    pub subject_title: String,
    pub subject_body: String,
    pub token: String,
    pub step_index: i64,
    #[sqlx(try_from = "String")]
    pub state: InstanceState,
    pub created_at: i64,
    pub updated_at: i64,
    /// How many times a route sent the instance back to an earlier step.
    pub round: i64,
    /// When its answers, files and contacts were erased (retention or `contact erase`).
    #[sqlx(default)]
    pub erased_at: Option<i64>,
}

pub(crate) const COLUMNS: &str = "id, workflow_id, version_id, subject_title, subject_body, token, \
     step_index, state, created_at, updated_at, round, erased_at";
/// The same columns, named through the table, for reads that join others.
const QUALIFIED: &str = "instances.id, instances.workflow_id, instances.version_id, \
     instances.subject_title, instances.subject_body, instances.token, instances.step_index, \
     instances.state, instances.created_at, instances.updated_at, instances.round, \
     instances.erased_at";

/// Queues what a step's start sends, inside the transaction that starts it.
async fn open_step(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    instance: i64,
    step: i64,
    start: &StepStart<'_>,
    lane: mails::Lane,
    now: i64,
) -> Result<(), sqlx::Error> {
    let p = start.participants;
    let site = mails::Lane::Site;
    mails::queue_in(tx, instance, step, p, mails::Kind::Link, lane, now, now).await?;
    if let Some(after) = start.remind_after {
        let (kind, due) = (mails::Kind::Reminder, now + after);
        mails::queue_in(tx, instance, step, p, kind, site, due, now).await?;
    }
    if let Some(after) = start.expires_after {
        mails::queue_deadline_in(tx, instance, step, now + after, now).await?;
    }
    Ok(())
}

/// An instance about to be started.
#[derive(Clone, Copy, Debug)]
pub struct New<'a> {
    pub workflow_id: i64,
    pub version_id: i64,
    pub title: &'a str,
    pub body: &'a str,
    pub token: &'a str,
    /// Who starts it, as `started_by` stores it: `admin`, `cli` or `api`.
    pub started_by: &'a str,
    /// Who starts it, as its first history line names them (`Actor::stored`).
    pub actor: &'a str,
    /// The participants' addresses, checked (`domain::mail::contacts`).
    pub contacts: &'a [ContactRow],
    /// What its first step's start queues.
    pub first: StepStart<'a>,
    /// For an API start: the hourly quota its first step's link emails count against.
    pub mail_quota: Option<&'a mails::MailQuota>,
}

/// The hard cap an API token starts under: at most `running_cap` of its instances active.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quota {
    pub token: i64,
    pub running_cap: u64,
}

/// A start refused because its token already runs its cap of instances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapReached;

/// Why a start was refused: nothing was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartRefused {
    RunningCap,
    EmailQuota(mails::QuotaSpent),
}

/// Starts an instance and writes its first history line; for a token, counts its running
/// instances and takes the place in the same transaction. The token's row is written first, so
/// two starts of one token wait for each other (a row lock on PostgreSQL, the write lock on
/// SQLite) in this process or any other: neither can count before the other has inserted.
pub async fn create(
    db: &Db,
    new: &New<'_>,
    quota: Option<Quota>,
) -> Result<Result<i64, StartRefused>, sqlx::Error> {
    let now = super::now();
    let mut tx = db.write().await?;
    if let Some(quota) = quota {
        // The token's running figure is taken and checked in one statement; its row lock holds
        // a second start of the token (in any process) until this one commits or rolls back.
        let cap = i64::try_from(quota.running_cap).unwrap_or(i64::MAX);
        let taken = sqlx::query(
            "UPDATE api_tokens SET running = running + 1 WHERE id = $1 AND running < $2",
        )
        .bind(quota.token)
        .bind(cap)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if taken == 0 {
            return Ok(Err(StartRefused::RunningCap));
        }
    }
    sqlx::query("UPDATE workflow_versions SET running = running + 1 WHERE id = $1")
        .bind(new.version_id)
        .execute(&mut *tx)
        .await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO instances (workflow_id, version_id, subject_title, subject_body, token, \
         step_index, state, created_at, updated_at, api_token_id, started_by) \
         VALUES ($1, $2, $3, $4, $5, 0, 'active', $6, $6, $7, $8) RETURNING id",
    )
    .bind(new.workflow_id)
    .bind(new.version_id)
    .bind(new.title)
    .bind(new.body)
    .bind(new.token)
    .bind(now)
    .bind(quota.map(|q| q.token))
    .bind(new.started_by)
    .fetch_one(&mut *tx)
    .await?;
    insert_history(
        &mut tx,
        id,
        &Entry {
            answer: "{}",
            actor: new.actor,
            ..Entry::of(Event::Started)
        },
        now,
    )
    .await?;
    outbox::record(&mut tx, &Message::of(Topic::InstanceStarted, id), now).await?;
    mails::insert_contacts(&mut tx, id, new.contacts).await?;
    if let Some(mail_quota) = new.mail_quota
        && let Some(spent) = mails::count_quota(&mut tx, mail_quota, now).await?
    {
        return Ok(Err(StartRefused::EmailQuota(spent)));
    }
    let lane = match quota {
        Some(_) => mails::Lane::Token,
        None => mails::Lane::Site,
    };
    open_step(&mut tx, id, 0, &new.first, lane, now).await?;
    tx.commit().await?;
    Ok(Ok(id))
}

/// Marks every live link record of `instance` revoked by `by`, inside the caller's transaction
/// (a revoke of all its links, or its cancel).
pub(crate) async fn revoke_records(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    instance: i64,
    by: &str,
    now: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE links SET revoked_at = $1, revoked_by = $2 WHERE instance_id = $3 AND revoked_at IS NULL",
    )
    .bind(now)
    .bind(by)
    .bind(instance)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub async fn by_id(db: &Db, id: i64) -> Result<Option<InstanceRow>, sqlx::Error> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM instances WHERE id = $1"))
        .bind(id)
        .fetch_optional(db.reader())
        .await
}

/// An instance as a link finds it, with the link's record and the current step's answered
/// branches in the same read.
#[derive(Debug)]
pub struct ForLink {
    pub instance: InstanceRow,
    /// `None`: no record (a link issued before links were recorded); `Some(0)`: not revoked;
    /// else when it was revoked.
    pub revoked_at: Option<i64>,
    /// The link's record.
    pub link_id: Option<i64>,
    /// The branches that have answered the instance's current step ("" for a step without
    /// branches), in no particular order (no sort on the doorway's read).
    pub answered: Vec<String>,
}

/// A row of `for_link`: the instance and the link's record, once per answered branch of the
/// current step (once, with no branch, when none answered).
#[derive(sqlx::FromRow)]
struct ForLinkRow {
    #[sqlx(flatten)]
    instance: InstanceRow,
    revoked_at: Option<i64>,
    link_id: Option<i64>,
    answered_branch: Option<String>,
}

/// The row a link or handle reads, as a table named `instances`: the instance it names, or,
/// when there is none, the one before it, a stand-in read and decoded as the named one would
/// be. A link to a missing instance then costs what a link to an existing one costs (one row
/// read, decoded, its link looked up, its HMAC checked), so the time of a refusal does not tell
/// which instances exist. The caller keeps the row only when its id is the one asked for.
/// Instances are never deleted and their ids start at 1, so every id from 1 up finds a row
/// once one instance exists (an id below 1 is no instance's, and finds none).
///
/// One probe of the primary key finds it: a backward range scan that stops at its first row.
/// On PostgreSQL the scan is the statement's table (`Index Scan Backward using instances_pkey`,
/// then the row's joins): the `COALESCE` of the named id and the newest one it replaced took
/// two probes for an instance that exists and three for one that does not (16 and 20 buffers
/// for the link's read at 1,000,000 instances, 12 in both cases now). SQLite runs such a
/// derived table as a co-routine, which cost its doorway page 2.5 µs of CPU more than the
/// second lookup it saves (a rowid `SEARCH`, cheap there): there the scan finds the id
/// (`SEARCH instances USING INTEGER PRIMARY KEY (rowid<?)`) and the row is read by it.
///
/// `(from, where)`: the statement's `FROM` item and the clause that ends it.
fn named_or_before(backend: Backend) -> (String, &'static str) {
    match backend {
        Backend::Postgres => (
            format!(
                "(SELECT {COLUMNS} FROM instances WHERE id <= $1 ORDER BY id DESC LIMIT 1) \
                 AS instances"
            ),
            "",
        ),
        Backend::Sqlite => (
            "instances".to_owned(),
            " WHERE instances.id = \
             (SELECT id FROM instances WHERE id <= $1 ORDER BY id DESC LIMIT 1)",
        ),
    }
}

/// A statement for each backend, made once.
struct PerBackend([String; 2]);

impl PerBackend {
    fn new(make: impl Fn(Backend) -> String) -> Self {
        Self([make(Backend::Sqlite), make(Backend::Postgres)])
    }

    fn get(&self, db: &Db) -> &str {
        match db.backend {
            Backend::Sqlite => &self.0[0],
            Backend::Postgres => &self.0[1],
        }
    }
}

/// `for_link`'s statement: the doorway runs it on every page.
static FOR_LINK: std::sync::LazyLock<PerBackend> = std::sync::LazyLock::new(|| {
    PerBackend::new(|backend| {
        let (from, end) = named_or_before(backend);
        format!(
            "SELECT {QUALIFIED}, l.revoked_at, l.id AS link_id, \
             h.branch AS answered_branch \
             FROM {from} LEFT JOIN links l ON l.hash = $2 AND l.instance_id = instances.id \
             LEFT JOIN history h ON h.instance_id = instances.id \
             AND h.step_index = instances.step_index AND h.round = instances.round \
             AND h.event = 'answered'{end}"
        )
    })
});

/// `for_handle`'s statement: every return from the provider runs it.
static FOR_HANDLE: std::sync::LazyLock<PerBackend> = std::sync::LazyLock::new(|| {
    PerBackend::new(|backend| {
        let (from, end) = named_or_before(backend);
        format!(
            "SELECT {QUALIFIED}, p.id AS payment_id, p.state AS payment_state \
             FROM {from} \
             LEFT JOIN handles h ON h.hash = $2 AND h.instance_id = instances.id \
             AND h.expires > $3 \
             LEFT JOIN payments p ON p.id = h.payment_id{end}"
        )
    })
});

/// One read for a link: the instance, whether the link's record is revoked, and which
/// branches answered the current step (what a step page needs to know before it offers its
/// form: the doorway's page reads nothing else unless its step shows earlier answers). When the
/// instance does not exist, the row is a stand-in (see `named_or_before`): keep it only when
/// its id is `id`.
pub async fn for_link(db: &Db, id: i64, link_hash: &str) -> Result<Option<ForLink>, sqlx::Error> {
    let rows: Vec<ForLinkRow> = sqlx::query_as(FOR_LINK.get(db))
        .bind(id)
        .bind(link_hash)
        .fetch_all(db.reader())
        .await?;
    let mut rows = rows.into_iter();
    let Some(first) = rows.next() else {
        return Ok(None);
    };
    let answered = std::iter::once(first.answered_branch)
        .chain(rows.map(|r| r.answered_branch))
        .flatten()
        .collect();
    Ok(Some(ForLink {
        instance: first.instance,
        // A record's revocation time, 0 while it stands; none without a record.
        revoked_at: first.link_id.map(|_| first.revoked_at.unwrap_or(0)),
        link_id: first.link_id,
        answered,
    }))
}

/// An instance as a continuation handle finds it, with the payment it returns to.
#[derive(Debug, sqlx::FromRow)]
pub struct ForHandle {
    #[sqlx(flatten)]
    pub instance: InstanceRow,
    pub payment_id: Option<i64>,
    pub payment_state: Option<String>,
}

/// One read for a handle: the instance, and the payment the handle returns to while it is
/// unexpired. Like `for_link`, a stand-in row when the instance does not exist.
pub async fn for_handle(
    db: &Db,
    id: i64,
    handle_hash: &str,
    now: i64,
) -> Result<Option<ForHandle>, sqlx::Error> {
    sqlx::query_as(FOR_HANDLE.get(db))
        .bind(id)
        .bind(handle_hash)
        .bind(now)
        .fetch_optional(db.reader())
        .await
}

pub async fn recent(db: &Db, limit: i64) -> Result<Vec<InstanceRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM instances ORDER BY id DESC LIMIT $1"
    ))
    .bind(limit)
    .fetch_all(db.reader())
    .await
}

/// What an answer did to its instance.
#[derive(Debug, PartialEq, Eq)]
pub enum Recorded {
    /// Recorded; other branches of the step are still open.
    Waiting,
    /// Recorded, and the instance moved to the next step.
    Advanced,
    /// Recorded, and the instance ended in this state.
    Ended(InstanceState),
    /// Not recorded: the step moved on or this branch was already answered.
    Stale,
}

/// Where a closed step sends its instance, as the workflow decided it.
#[derive(Clone, Debug, Default)]
pub struct Then<'a> {
    /// The next step to ask; `None`: the instance is complete.
    pub step: Option<i64>,
    /// What the next step's start queues (nothing when complete).
    pub start: StepStart<'a>,
    /// The steps passed over on the way, their conditions not holding: `(index, title, kind)`.
    pub skipped: Vec<(i64, &'a str, &'a str)>,
    /// Where a complete instance's place is left: its number of steps.
    pub end: i64,
    /// A move to this step or an earlier one: a new round, the steps from `step` on asked
    /// again. Past the instance's last round it ends as rejected instead.
    pub again: bool,
    /// The next step's title and kind, for a move back's history line.
    pub title: &'a str,
    pub kind: &'a str,
}

/// One answer to a step, as the workflow decided it.
pub struct Answer<'a> {
    pub instance: i64,
    pub step: i64,
    pub branch: &'a str,
    pub answer_json: &'a str,
    /// Every branch the step waits for ("" for a step without branches).
    pub branches: &'a [String],
    /// Whether this answer is a review's rejection.
    pub rejects: bool,
    /// How many approvals (answers, for a form) close the step: every branch's, or fewer
    /// (`| 2 of 3`). It closes as rejected once that many can no longer approve.
    pub needed: usize,
    pub step_title: &'a str,
    pub kind: &'a str,
    pub participant: &'a str,
    /// Where the instance goes once the step is complete.
    pub then: Then<'a>,
    /// Where it goes when the step closes as rejected (`| on reject back to 1`); `None`: it
    /// ends as rejected.
    pub on_reject: Option<Then<'a>>,
    /// The rounds the instance may go through (`| rounds N`).
    pub rounds: i64,
    /// Who besides the requester is emailed the outcome, should the instance end.
    pub notify: &'a [String],
    /// Files that arrived with the answer, kept with it.
    pub files: &'a [i64],
    /// How the answer came: its link record, client and check.
    pub by: By<'a>,
}

/// What recording an answer did, and how long its step had waited (`None` when stale).
#[derive(Debug, PartialEq, Eq)]
pub struct Answered {
    pub recorded: Recorded,
    pub asked: Option<Asked>,
    /// The answer's line of history (`None` when stale).
    pub line: Option<i64>,
}

/// An answer is compared by what it did to its instance.
impl PartialEq<Recorded> for Answered {
    fn eq(&self, other: &Recorded) -> bool {
        self.recorded == *other
    }
}

/// Records an answer and moves the instance on when its step is complete, in one transaction.
pub async fn record_answer(db: &Db, a: &Answer<'_>) -> Result<Answered, sqlx::Error> {
    let mut tx = db.write().await?;
    let outcome = record_answer_in(&mut tx, a).await?;
    if outcome != Recorded::Stale {
        tx.commit().await?;
    }
    Ok(outcome)
}

/// Records an answer inside a transaction the caller commits (a payment notice records the
/// payment's state and its answer together). The first statement takes the instance's row (its
/// write lock), so two branches answered at the same moment are counted one after the other and
/// the step advances exactly once.
pub async fn record_answer_in(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    a: &Answer<'_>,
) -> Result<Answered, sqlx::Error> {
    let now = super::now();
    let round: Option<i64> = sqlx::query_scalar(
        "UPDATE instances SET updated_at = $1 WHERE id = $2 AND step_index = $3 \
         AND state = 'active' RETURNING round",
    )
    .bind(now)
    .bind(a.instance)
    .bind(a.step)
    .fetch_optional(&mut **tx)
    .await?;
    let stale = Answered {
        recorded: Recorded::Stale,
        asked: None,
        line: None,
    };
    let Some(round) = round else {
        return Ok(stale);
    };
    let answered: Vec<(String, String)> = sqlx::query_as(
        "SELECT branch, answer FROM history WHERE instance_id = $1 AND step_index = $2 \
         AND round = $3 AND event = 'answered'",
    )
    .bind(a.instance)
    .bind(a.step)
    .bind(round)
    .fetch_all(&mut **tx)
    .await?;
    if answered.iter().any(|(b, _)| b == a.branch) {
        return Ok(stale);
    }
    let asked = super::history::step_asked(tx, a.instance, a.step, round, now).await?;
    let line = insert_history(
        tx,
        a.instance,
        &Entry {
            step: a.step,
            branch: a.branch,
            event: Event::Answered,
            answer: a.answer_json,
            step_title: a.step_title,
            kind: a.kind,
            participant: a.participant,
            actor: "",
            by: Some(&a.by),
        },
        now,
    )
    .await?;
    super::files::keep_in(tx, a.instance, a.step, a.files).await?;
    // That a step was answered, by whom: never the answer itself.
    let files = AnsweredFiles::of_answer(a.answer_json).to_json();
    outbox::record(
        tx,
        &Message {
            step: Some(a.step),
            step_title: Some(a.step_title),
            participant: Some(a.participant),
            files: files.as_deref(),
            ..Message::of(Topic::StepAnswered, a.instance)
        },
        now,
    )
    .await?;
    let rejections = answered
        .iter()
        .filter(|(_, json)| is_rejection(json))
        .count()
        + usize::from(a.rejects);
    let approvals = answered.len() + 1 - rejections;
    let needed = a.needed.clamp(1, a.branches.len().max(1));
    let outcome = if approvals >= needed {
        let early = approvals + rejections < a.branches.len();
        if early {
            closed_by_quorum(tx, a, now).await?;
        }
        let moved = move_on(
            tx,
            a.instance,
            &a.then,
            Some(&Sender::of(a, round)),
            a.notify,
            now,
        )
        .await?;
        if early {
            // Told after the move, which sets aside what was pending for the step.
            let not_needed: Vec<Participant> = a
                .branches
                .iter()
                .filter(|b| *b != a.branch && !answered.iter().any(|(done, _)| done == *b))
                .filter_map(|b| Participant::parse(b))
                .collect();
            let (kind, lane) = (mails::Kind::Closed, mails::Lane::Site);
            mails::queue_in(tx, a.instance, a.step, &not_needed, kind, lane, now, now).await?;
        }
        moved
    } else if a.branches.len() - rejections < needed {
        match &a.on_reject {
            Some(then) => {
                let sender = Sender::of(a, round);
                move_on(tx, a.instance, then, Some(&sender), a.notify, now).await?
            }
            None => {
                set_state(
                    tx,
                    a.instance,
                    a.step,
                    InstanceState::Rejected,
                    a.notify,
                    now,
                )
                .await?;
                Recorded::Ended(InstanceState::Rejected)
            }
        }
    } else {
        Recorded::Waiting
    };
    if outcome != Recorded::Waiting {
        // The step is over: its reminders and deadline have nothing left to do.
        mails::settle_step_in(tx, a.instance, a.step).await?;
    }
    Ok(Answered {
        recorded: outcome,
        asked,
        line: Some(line),
    })
}

/// Whether a recorded answer is a review's rejection (its `decision`).
fn is_rejection(answer_json: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(answer_json)
        .ok()
        .and_then(|v| v.get("decision")?.as_str().map(|d| d == "reject"))
        .unwrap_or(false)
}

/// Notes that a step closed with enough approvals before every branch answered.
async fn closed_by_quorum(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    a: &Answer<'_>,
    now: i64,
) -> Result<(), sqlx::Error> {
    let entry = Entry {
        step: a.step,
        step_title: a.step_title,
        kind: a.kind,
        ..Entry::of(Event::ClosedByQuorum)
    };
    insert_history(tx, a.instance, &entry, now).await?;
    let message = Message {
        step: Some(a.step),
        step_title: Some(a.step_title),
        ..Message::of(Topic::StepClosed, a.instance)
    };
    outbox::record(tx, &message, now).await
}

/// What moved an instance on: the answer that closed its step, for a move back's history line.
struct Sender<'a> {
    step: i64,
    participant: &'a str,
    answer_json: &'a str,
    /// The instance's round when it answered, and the most it may have.
    round: i64,
    rounds: i64,
}

impl<'a> Sender<'a> {
    fn of(a: &'a Answer<'_>, round: i64) -> Self {
        Sender {
            step: a.step,
            participant: a.participant,
            answer_json: a.answer_json,
            round,
            rounds: a.rounds,
        }
    }
}

/// Moves an instance on from a closed step: the skipped steps noted in its history, then the
/// next step opened, or the instance complete. A move back (`then.again`) starts a new round,
/// its history line saying whose answer sent it back; past the last round the instance ends as
/// rejected.
async fn move_on(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    instance: i64,
    then: &Then<'_>,
    sender: Option<&Sender<'_>>,
    notify: &[String],
    now: i64,
) -> Result<Recorded, sqlx::Error> {
    if then.again
        && let Some(sender) = sender
    {
        if sender.round + 1 >= sender.rounds {
            set_state(
                tx,
                instance,
                sender.step,
                InstanceState::Rejected,
                notify,
                now,
            )
            .await?;
            return Ok(Recorded::Ended(InstanceState::Rejected));
        }
        sqlx::query("UPDATE instances SET round = round + 1 WHERE id = $1")
            .bind(instance)
            .execute(&mut **tx)
            .await?;
    }
    for &(step, step_title, kind) in &then.skipped {
        let entry = Entry {
            step,
            step_title,
            kind,
            ..Entry::of(Event::Skipped)
        };
        insert_history(tx, instance, &entry, now).await?;
        let message = Message {
            step: Some(step),
            step_title: Some(step_title),
            ..Message::of(Topic::StepSkipped, instance)
        };
        outbox::record(tx, &message, now).await?;
    }
    let Some(next) = then.step else {
        set_state(tx, instance, then.end, InstanceState::Complete, notify, now).await?;
        return Ok(Recorded::Ended(InstanceState::Complete));
    };
    sqlx::query("UPDATE instances SET step_index = $1 WHERE id = $2")
        .bind(next)
        .bind(instance)
        .execute(&mut **tx)
        .await?;
    if then.again
        && let Some(sender) = sender
    {
        let entry = Entry {
            step: next,
            step_title: then.title,
            kind: then.kind,
            participant: sender.participant,
            answer: sender.answer_json,
            ..Entry::of(Event::Reopened)
        };
        insert_history(tx, instance, &entry, now).await?;
        let message = Message {
            step: Some(next),
            step_title: Some(then.title),
            participant: Some(sender.participant),
            ..Message::of(Topic::StepReopened, instance)
        };
        outbox::record(tx, &message, now).await?;
    }
    open_step(tx, instance, next, &then.start, mails::Lane::Site, now).await?;
    Ok(Recorded::Advanced)
}

/// Moves a running instance's place to the ended in its version's figures, and frees it in its
/// API token's: inside the transaction that ends it, so the figures never drift.
async fn count_end(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    instance: i64,
) -> Result<(), sqlx::Error> {
    // The token's row first, then the version's: the order a start takes them in (`create`),
    // so that an ending and a start never wait for each other in a circle (PostgreSQL's
    // deadlock, found by the three-node soak).
    sqlx::query(
        "UPDATE api_tokens SET running = running - 1 \
         WHERE id = (SELECT api_token_id FROM instances WHERE id = $1)",
    )
    .bind(instance)
    .execute(&mut **tx)
    .await?;
    sqlx::query(
        "UPDATE workflow_versions SET running = running - 1, ended = ended + 1 \
         WHERE id = (SELECT version_id FROM instances WHERE id = $1)",
    )
    .bind(instance)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

async fn set_state(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    instance: i64,
    step: i64,
    state: InstanceState,
    notify: &[String],
    now: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE instances SET state = $1, step_index = $2, ended_at = $3 WHERE id = $4")
        .bind(state.as_str())
        .bind(step)
        .bind(now)
        .bind(instance)
        .execute(&mut **tx)
        .await?;
    count_end(tx, instance).await?;
    mails::settle_instance_in(tx, instance).await?;
    mails::queue_outcome_in(tx, instance, step, notify, now).await?;
    insert_history(
        tx,
        instance,
        &Entry {
            step,
            ..Entry::of(Event::ended_as(state).expect("an instance is set to an end state only"))
        },
        now,
    )
    .await?;
    outbox::record(tx, &ended(instance, step, state), now).await
}

/// The message an instance's end sends.
fn ended(instance: i64, step: i64, state: InstanceState) -> Message<'static> {
    Message {
        step: Some(step),
        state: Some(state),
        ..Message::of(Topic::InstanceEnded, instance)
    }
}

/// Ends a running instance as cancelled, in one transaction: its state, a new token (so every
/// link and handle issued for it stops verifying), every link record marked revoked, a payment
/// under way closed (so a later provider notice finds it settled and changes nothing), and the
/// history line saying who and why (`reason_json`). `false` when no running instance has this
/// id (missing, or ended already): nothing is written then.
pub async fn cancel(
    db: &Db,
    instance: i64,
    token: &str,
    by: &str,
    reason_json: &str,
    notify: &[String],
) -> Result<bool, sqlx::Error> {
    let now = super::now();
    let mut tx = db.write().await?;
    let step: Option<i64> = sqlx::query_scalar(
        "UPDATE instances SET state = $1, token = $2, updated_at = $3, ended_at = $3 \
         WHERE id = $4 AND state = 'active' RETURNING step_index",
    )
    .bind(InstanceState::Cancelled.as_str())
    .bind(token)
    .bind(now)
    .bind(instance)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(step) = step else {
        return Ok(false);
    };
    count_end(&mut tx, instance).await?;
    mails::settle_instance_in(&mut tx, instance).await?;
    mails::queue_outcome_in(&mut tx, instance, step, notify, now).await?;
    revoke_records(&mut tx, instance, by, now).await?;
    sqlx::query(
        "UPDATE payments SET state = 'cancelled', open_key = NULL, updated_at = $1 \
         WHERE instance_id = $2 AND state = 'pending'",
    )
    .bind(now)
    .bind(instance)
    .execute(&mut *tx)
    .await?;
    insert_history(
        &mut tx,
        instance,
        &Entry {
            step,
            actor: by,
            answer: reason_json,
            ..Entry::of(Event::Cancelled)
        },
        now,
    )
    .await?;
    outbox::record(
        &mut tx,
        &ended(instance, step, InstanceState::Cancelled),
        now,
    )
    .await?;
    tx.commit().await?;
    Ok(true)
}

/// Records an email the server took, in one transaction: its history line (emailed or
/// reminded, naming the participant), the row sent and its claim released, and, for a reminder
/// with more to come, the next one due at `next_reminder`.
pub async fn emailed(
    db: &Db,
    m: &mails::Claimed,
    step_title: &str,
    next_reminder: Option<i64>,
    now: i64,
) -> Result<(), sqlx::Error> {
    let mut tx = db.write().await?;
    let event = if m.kind() == Some(mails::Kind::Reminder) {
        Event::Reminded
    } else {
        Event::Emailed
    };
    insert_history(
        &mut tx,
        m.instance_id,
        &Entry {
            step: m.step_index,
            step_title,
            participant: &m.participant,
            actor: "mail",
            ..Entry::of(event)
        },
        super::now(),
    )
    .await?;
    sqlx::query(
        "UPDATE mails SET state = 'sent', sent_at = $1, attempts = attempts + 1, error = NULL, \
         claimed_until = NULL WHERE id = $2",
    )
    .bind(now)
    .bind(m.id)
    .execute(&mut *tx)
    .await?;
    if let Some(at) = next_reminder {
        sqlx::query(
            "INSERT INTO mails (instance_id, participant, step_index, kind, next_at, created_at) \
             VALUES ($1, $2, $3, 'reminder', $4, $5)",
        )
        .bind(m.instance_id)
        .bind(&m.participant)
        .bind(m.step_index)
        .bind(at)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await
}

/// What a step's deadline did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lapsed {
    /// The instance went on to the next step.
    MovedOn,
    /// The instance ended as expired.
    Ended,
    /// Nothing: the step had been answered, or the instance had ended, by then.
    Nothing,
}

/// A step's deadline, in one transaction: when the instance still waits at `step`, it goes on
/// to the next step (`next`: that step's start) or, without one, ends as expired (its figures,
/// its pending emails set aside, the history line, the `instance.ended` message). The first
/// statement takes the instance's row, so an answer recorded at the same moment either comes
/// first (and the deadline finds nothing) or waits and finds the step moved on.
pub async fn lapse(
    db: &Db,
    instance: i64,
    step: i64,
    step_title: &str,
    next: Option<Then<'_>>,
    notify: &[String],
) -> Result<Lapsed, sqlx::Error> {
    let now = super::now();
    let mut tx = db.write().await?;
    let held = sqlx::query(
        "UPDATE instances SET updated_at = $1 WHERE id = $2 AND step_index = $3 AND state = 'active'",
    )
    .bind(now)
    .bind(instance)
    .bind(step)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if held == 0 {
        return Ok(Lapsed::Nothing);
    }
    mails::settle_step_in(&mut tx, instance, step).await?;
    let outcome = match next {
        Some(then) => {
            insert_history(
                &mut tx,
                instance,
                &Entry {
                    step,
                    step_title,
                    ..Entry::of(Event::StepExpired)
                },
                now,
            )
            .await?;
            match move_on(&mut tx, instance, &then, None, notify, now).await? {
                Recorded::Advanced => Lapsed::MovedOn,
                _ => Lapsed::Ended,
            }
        }
        None => {
            set_state(&mut tx, instance, step, InstanceState::Expired, notify, now).await?;
            Lapsed::Ended
        }
    };
    tx.commit().await?;
    Ok(outcome)
}

/// An instance with what its view names it by, in one read.
#[derive(Debug, sqlx::FromRow)]
pub struct Shown {
    #[sqlx(flatten)]
    pub instance: InstanceRow,
    #[sqlx(flatten)]
    pub naming: super::workflows::Naming,
}

/// An instance and its [`Naming`](super::workflows::Naming), by primary keys.
pub async fn shown(db: &Db, id: i64) -> Result<Option<Shown>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS}, {} FROM instances WHERE id = $1",
        super::workflows::NAMING
    ))
    .bind(id)
    .fetch_optional(db.reader())
    .await
}
