//! Participants' contacts and the emails queued for them (`domain::mail` owns their rules). A
//! mail row names an instance, a participant and a step: never a link. The sender signs the
//! link when it sends.

use super::Db;
use crate::domain::workflow::Participant;

/// A participant's contact, as given when the instance was started.
#[derive(Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ContactRow {
    pub participant: String,
    pub email: String,
    pub name: String,
    pub lang: String,
}

/// By hand: an address is personal data and stays out of any log line.
impl std::fmt::Debug for ContactRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContactRow")
            .field("participant", &self.participant)
            .field("lang", &self.lang)
            .finish_non_exhaustive()
    }
}

/// What a mail row is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The participant's link, when their step starts or an administrator asks.
    Link,
    /// A fresh link, again, while the step still waits for them.
    Reminder,
    /// The step's deadline: sent to nobody; the chore ends (or moves on from) the step.
    Deadline,
    /// The participant's branch was not needed: the step closed with enough approvals
    /// (`| 2 of 3`). No link.
    Closed,
    /// The instance ended: its outcome, told to whoever filed it (its first step's
    /// participants). No link.
    Outcome,
    /// The code a `| verify email` step asks for, derived when it is sent
    /// (`store::email_codes`). No link.
    Code,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Link => "link",
            Kind::Reminder => "reminder",
            Kind::Deadline => "deadline",
            Kind::Closed => "closed",
            Kind::Outcome => "outcome",
            Kind::Code => "code",
        }
    }

    /// Whether it tells something and carries no link.
    pub fn is_notice(self) -> bool {
        matches!(self, Kind::Closed | Kind::Outcome)
    }

    fn parse(s: &str) -> Option<Self> {
        [
            Kind::Link,
            Kind::Reminder,
            Kind::Deadline,
            Kind::Closed,
            Kind::Outcome,
            Kind::Code,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// Writes an instance's contacts inside the start's transaction.
pub(crate) async fn insert_contacts(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    instance: i64,
    contacts: &[ContactRow],
) -> Result<(), sqlx::Error> {
    for c in contacts {
        sqlx::query(
            "INSERT INTO contacts (instance_id, participant, email, name, lang) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(instance)
        .bind(&c.participant)
        .bind(&c.email)
        .bind(&c.name)
        .bind(&c.lang)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// Who asked for an email, which decides its place in the queue: the site's own (a step
/// that starts, a reminder, an administrator) go first; what an API token asked for goes after
/// them, so that a token's burst never stands before a participant's email.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    Site = 0,
    Token = 1,
}

/// Queues a row of `kind` due at `due` for each of `participants` who has an address, inside
/// the caller's transaction (a start, an answer that moves the instance on). One statement per
/// participant, each a primary-key probe of `contacts`. Returns how many rows were queued.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn queue_in(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    instance: i64,
    step: i64,
    participants: &[Participant],
    kind: Kind,
    lane: Lane,
    due: i64,
    now: i64,
) -> Result<u64, sqlx::Error> {
    let mut queued = 0;
    for p in participants {
        queued += sqlx::query(
            "INSERT INTO mails (instance_id, participant, step_index, kind, lane, next_at, \
             created_at) SELECT instance_id, participant, $3, $4, $5, $6, $7 FROM contacts \
             WHERE instance_id = $1 AND participant = $2",
        )
        .bind(instance)
        .bind(p.as_str())
        .bind(step)
        .bind(kind.as_str())
        .bind(lane as i64)
        .bind(due)
        .bind(now)
        .execute(&mut **tx)
        .await?
        .rows_affected();
    }
    Ok(queued)
}

/// Queues the outcome's email to whoever filed the instance (its first step's answerers with
/// an address), inside the transaction that ends it.
pub(crate) async fn queue_outcome_in(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    instance: i64,
    step: i64,
    notify: &[String],
    now: i64,
) -> Result<u64, sqlx::Error> {
    // The requester (whoever answered the first step), and whoever the definition names.
    let named = if notify.is_empty() {
        String::new()
    } else {
        format!(
            " OR c.participant IN ({})",
            super::placeholders(5, notify.len(), 1)
        )
    };
    let sql = format!(
        "INSERT INTO mails (instance_id, participant, step_index, kind, lane, next_at, \
         created_at) SELECT c.instance_id, c.participant, $2, 'outcome', $3, $4, $4 \
         FROM contacts c WHERE c.instance_id = $1 AND (c.participant IN (SELECT participant \
         FROM history WHERE instance_id = $1 AND step_index = 0 AND event = 'answered'){named})"
    );
    let mut query = sqlx::query(&sql)
        .bind(instance)
        .bind(step)
        .bind(Lane::Site as i64)
        .bind(now);
    for p in notify {
        query = query.bind(p);
    }
    Ok(query.execute(&mut **tx).await?.rows_affected())
}

/// The hourly quota of link emails asked for through the API: the keys to count one email
/// against (`token:ID`, and `address:` with the address's keyed hash), and how many each may
/// take in a clock hour.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MailQuota {
    pub token: i64,
    pub per_token: u64,
    /// The keyed hash of each address an email goes to (one entry per email).
    pub addresses: Vec<String>,
    pub per_address: u64,
}

/// Which quota a request went past.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuotaSpent {
    Address(u64),
    Token(u64),
}

/// Counts the quota's emails in the caller's transaction; past a cap, the caller rolls back
/// (nothing is queued or counted). One upsert per key, on `mail_quota`'s primary key.
pub(crate) async fn count_quota(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    quota: &MailQuota,
    now: i64,
) -> Result<Option<QuotaSpent>, sqlx::Error> {
    let hour = now.div_euclid(3600);
    let mut keys: Vec<(String, i64, u64, QuotaSpent)> = Vec::new();
    let emails = i64::try_from(quota.addresses.len()).unwrap_or(i64::MAX);
    if emails == 0 {
        return Ok(None);
    }
    keys.push((
        format!("token:{}", quota.token),
        emails,
        quota.per_token,
        QuotaSpent::Token(quota.per_token),
    ));
    for address in &quota.addresses {
        let key = format!("address:{address}");
        match keys.iter_mut().find(|k| k.0 == key) {
            Some(k) => k.1 += 1,
            None => keys.push((
                key,
                1,
                quota.per_address,
                QuotaSpent::Address(quota.per_address),
            )),
        }
    }
    for (key, n, cap, spent) in keys {
        let sent: i64 = sqlx::query_scalar(
            "INSERT INTO mail_quota (key, hour, sent) VALUES ($1, $2, $3) \
             ON CONFLICT (hour, key) DO UPDATE SET sent = mail_quota.sent + $3 RETURNING sent",
        )
        .bind(key)
        .bind(hour)
        .bind(n)
        .fetch_one(&mut **tx)
        .await?;
        if u64::try_from(sent).unwrap_or(u64::MAX) > cap {
            return Ok(Some(spent));
        }
    }
    Ok(None)
}

/// Queues a row due at `due` that needs no contact (a step's deadline).
pub(crate) async fn queue_deadline_in(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    instance: i64,
    step: i64,
    due: i64,
    now: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO mails (instance_id, participant, step_index, kind, next_at, created_at) \
         VALUES ($1, '', $2, 'deadline', $3, $4)",
    )
    .bind(instance)
    .bind(step)
    .bind(due)
    .bind(now)
    .execute(&mut **tx)
    .await
    .map(|_| ())
}

/// What queueing a link's email came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queued {
    Yes,
    /// The participant has no address in this instance.
    NoAddress,
    /// The instance had `daily_cap` links issued or emailed on request in a day.
    CapReached,
    /// The API's hourly quota of link emails is spent.
    QuotaSpent(QuotaSpent),
}

/// Queues one participant's link at the instance's current step, due now, when they have an
/// address (an administrator's or a token's *send*). Under a daily cap (the API's), the
/// instance's row is written first, so two sends wait for each other in any process, and the
/// links issued by hand and the link emails queued in the last day are counted in the same
/// transaction (a link the sender signed is counted once, as its email).
pub async fn queue_link(
    db: &Db,
    instance: i64,
    step: i64,
    participant: &Participant,
    daily_cap: Option<u64>,
    quota: Option<&MailQuota>,
    now: i64,
) -> Result<Queued, sqlx::Error> {
    let mut tx = db.write().await?;
    if let Some(cap) = daily_cap {
        sqlx::query("UPDATE instances SET id = id WHERE id = $1")
            .bind(instance)
            .execute(&mut *tx)
            .await?;
        let since = now - 24 * 3600;
        let asked: i64 = sqlx::query_scalar(
            "SELECT (SELECT COUNT(*) FROM links WHERE instance_id = $1 AND issued_at > $2 \
             AND issued_by <> 'mail') + (SELECT COUNT(*) FROM mails WHERE instance_id = $1 \
             AND kind = 'link' AND created_at > $2)",
        )
        .bind(instance)
        .bind(since)
        .fetch_one(&mut *tx)
        .await?;
        if u64::try_from(asked).unwrap_or(0) >= cap {
            return Ok(Queued::CapReached);
        }
    }
    let before: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM contacts WHERE instance_id = $1 AND participant = $2",
    )
    .bind(instance)
    .bind(participant.as_str())
    .fetch_one(&mut *tx)
    .await?;
    if before == 0 {
        return Ok(Queued::NoAddress);
    }
    if let Some(quota) = quota
        && let Some(spent) = count_quota(&mut tx, quota, now).await?
    {
        return Ok(Queued::QuotaSpent(spent));
    }
    let lane = if quota.is_some() {
        Lane::Token
    } else {
        Lane::Site
    };
    queue_in(
        &mut tx,
        instance,
        step,
        std::slice::from_ref(participant),
        Kind::Link,
        lane,
        now,
        now,
    )
    .await?;
    tx.commit().await?;
    Ok(Queued::Yes)
}

/// Queues a link email, in the site's lane, for each (instance, step, participant) that has an
/// address: one transaction for the whole batch. Returns how many were queued.
pub async fn queue_links(
    db: &Db,
    batch: &[(i64, i64, Participant)],
    now: i64,
) -> Result<u64, sqlx::Error> {
    let mut tx = db.write().await?;
    let mut queued = 0;
    for (instance, step, who) in batch {
        let who = std::slice::from_ref(who);
        queued += queue_in(
            &mut tx,
            *instance,
            *step,
            who,
            Kind::Link,
            Lane::Site,
            now,
            now,
        )
        .await?;
    }
    tx.commit().await?;
    Ok(queued)
}

/// An instance's contacts, by participant.
pub async fn contacts_of(db: &Db, instance: i64) -> Result<Vec<ContactRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT participant, email, name, lang FROM contacts WHERE instance_id = $1 \
         ORDER BY participant",
    )
    .bind(instance)
    .fetch_all(db.reader())
    .await
}

/// One participant's contact.
pub async fn contact(
    db: &Db,
    instance: i64,
    participant: &str,
) -> Result<Option<ContactRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT participant, email, name, lang FROM contacts \
         WHERE instance_id = $1 AND participant = $2",
    )
    .bind(instance)
    .bind(participant)
    .fetch_optional(&db.pool)
    .await
}

/// A mail row a sender holds.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct Claimed {
    pub id: i64,
    pub instance_id: i64,
    pub participant: String,
    pub step_index: i64,
    kind: String,
    pub attempts: i64,
}

impl Claimed {
    pub fn kind(&self) -> Option<Kind> {
        Kind::parse(&self.kind)
    }
}

/// Claims up to `limit` rows due at `now` for `lease` seconds (`store::queue`: of two senders,
/// in one process or several, only one holds a row), the site's lane first, then the API's.
/// Each lane is one range of `mails_lane_due`. `with_mail`: a server without SMTP still ends
/// steps at their deadlines, and takes only those.
pub async fn claim(
    db: &Db,
    now: i64,
    lease: i64,
    limit: i64,
    with_mail: bool,
) -> Result<Vec<Claimed>, sqlx::Error> {
    let mut due: Vec<Claimed> = Vec::new();
    for lane in [Lane::Site, Lane::Token] {
        let left = limit - i64::try_from(due.len()).unwrap_or(0);
        if left <= 0 {
            break;
        }
        let rows: Vec<Claimed> = sqlx::query_as(
            "SELECT id, instance_id, participant, step_index, kind, attempts FROM mails \
             WHERE state = 'pending' AND lane = $4 AND next_at <= $1 \
             AND (claimed_until IS NULL OR claimed_until < $1) \
             AND ($3 = 1 OR kind = 'deadline') ORDER BY next_at, id LIMIT $2",
        )
        .bind(now)
        .bind(left)
        .bind(i64::from(with_mail))
        .bind(lane as i64)
        .fetch_all(&db.pool)
        .await?;
        due.extend(rows);
    }
    let taken = super::queue::take(
        db,
        super::queue::Table::Mails,
        due.iter().map(|m| m.id).collect::<Vec<_>>(),
        now,
        now + lease,
    )
    .await?;
    Ok(due.into_iter().filter(|m| taken.contains(&m.id)).collect())
}

/// How a claimed row ended this time, when it was not sent (`sent` records that).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome<'a> {
    /// Not sent; try again at this time (the error's kind kept, never an address or a link).
    Retry(i64, &'a str),
    /// Not sent, and no more tries.
    Failed(&'a str),
    /// Nothing to send any more: the participant has nothing left to answer at that step.
    Skipped,
    /// A deadline row whose step lapsed.
    Done,
}

/// Records what came of a claimed row and releases its claim.
pub async fn finish(
    db: &Db,
    m: &Claimed,
    outcome: Outcome<'_>,
    now: i64,
) -> Result<(), sqlx::Error> {
    let (state, next_at, error) = match outcome {
        Outcome::Retry(at, e) => ("pending", at, Some(e)),
        Outcome::Failed(e) => ("failed", now, Some(e)),
        Outcome::Skipped => ("skipped", now, None),
        Outcome::Done => ("sent", now, None),
    };
    let tried = i64::from(!matches!(outcome, Outcome::Skipped));
    sqlx::query(
        "UPDATE mails SET state = $1, next_at = $2, error = $3, \
         attempts = attempts + $4, claimed_until = NULL WHERE id = $5",
    )
    .bind(state)
    .bind(next_at)
    .bind(error)
    .bind(tried)
    .bind(m.id)
    .execute(&db.pool)
    .await
    .map(|_| ())
}

/// Sets aside every pending row of an instance's step (answered, ended or expired: nothing is
/// left to remind of), inside the caller's transaction.
pub(crate) async fn settle_step_in(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    instance: i64,
    step: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE mails SET state = 'skipped' WHERE instance_id = $1 AND step_index = $2 \
         AND state = 'pending' AND kind IN ('reminder', 'deadline')",
    )
    .bind(instance)
    .bind(step)
    .execute(&mut **tx)
    .await
    .map(|_| ())
}

/// Sets aside every pending row of an instance that has ended (completed, rejected, cancelled,
/// expired), inside the transaction that ends it: nobody is sent a link to a closed instance.
pub(crate) async fn settle_instance_in(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    instance: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE mails SET state = 'skipped' WHERE instance_id = $1 AND state = 'pending' \
         AND kind NOT IN ('closed', 'outcome')",
    )
    .bind(instance)
    .execute(&mut **tx)
    .await
    .map(|_| ())
}

/// A mail row as an instance's page lists it.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct MailLine {
    pub id: i64,
    pub participant: String,
    pub step_index: i64,
    pub kind: String,
    pub state: String,
    pub attempts: i64,
    pub next_at: i64,
    pub sent_at: Option<i64>,
    pub error: Option<String>,
    pub created_at: i64,
}

/// An instance's newest `limit` emails (deadlines left out), by `mails_instance`.
pub async fn of_instance(db: &Db, instance: i64, limit: i64) -> Result<Vec<MailLine>, sqlx::Error> {
    sqlx::query_as(
        "SELECT id, participant, step_index, kind, state, attempts, next_at, sent_at, error, \
         created_at FROM mails WHERE instance_id = $1 AND kind <> 'deadline' \
         ORDER BY id DESC LIMIT $2",
    )
    .bind(instance)
    .bind(limit)
    .fetch_all(db.reader())
    .await
}

/// For the status report: when the oldest email still waiting was due (`None`: none waits), and
/// how many failed for good.
pub async fn waiting(db: &Db) -> Result<(Option<i64>, i64), sqlx::Error> {
    let oldest: Option<i64> = sqlx::query_scalar(
        "SELECT next_at FROM mails WHERE state = 'pending' AND kind <> 'deadline' \
         ORDER BY state, next_at LIMIT 1",
    )
    .fetch_optional(db.reader())
    .await?;
    let failed: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM (SELECT 1 FROM mails WHERE state = 'failed' LIMIT 1000) f",
    )
    .fetch_one(db.reader())
    .await?;
    Ok((oldest, failed))
}

/// How many emails are due and not sent at `now`, counted to 10,000 at most (a range of
/// `mails_due`).
pub async fn due_count(db: &Db, now: i64) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM (SELECT 1 FROM mails WHERE state = 'pending' AND next_at <= $1 \
         AND kind <> 'deadline' LIMIT 10000) d",
    )
    .bind(now)
    .fetch_one(db.reader())
    .await
}

/// When a step's deadline falls, while it is pending (by `mails_instance`).
pub async fn deadline_of(db: &Db, instance: i64, step: i64) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT next_at FROM mails WHERE instance_id = $1 AND step_index = $2 \
         AND kind = 'deadline' AND state = 'pending' ORDER BY id DESC LIMIT 1",
    )
    .bind(instance)
    .bind(step)
    .fetch_optional(&db.pool)
    .await
}

/// Whether any participant has an address (the status report says mail is off only then).
pub async fn any_contact(db: &Db) -> Result<bool, sqlx::Error> {
    let one: Option<i64> = sqlx::query_scalar("SELECT 1 FROM contacts LIMIT 1")
        .fetch_optional(db.reader())
        .await?;
    Ok(one.is_some())
}

/// Reminders a participant was sent at a step (the definition bounds them).
pub async fn reminders_at(
    db: &Db,
    instance: i64,
    step: i64,
    participant: &str,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM mails WHERE instance_id = $1 AND step_index = $2 \
         AND participant = $3 AND kind = 'reminder'",
    )
    .bind(instance)
    .bind(step)
    .bind(participant)
    .fetch_one(&db.pool)
    .await
}

/// Cron's cleanup of the API's email quota: the hours before the current one, a thousand rows
/// at a time, each batch a range of the primary key (`hour` first).
pub async fn clean_quota(db: &Db, now: i64) -> Result<u64, sqlx::Error> {
    let hour = now.div_euclid(3600);
    let mut gone = 0;
    loop {
        let n = sqlx::query(
            "DELETE FROM mail_quota WHERE (hour, key) IN \
             (SELECT hour, key FROM mail_quota WHERE hour < $1 ORDER BY hour LIMIT 1000)",
        )
        .bind(hour)
        .execute(&db.pool)
        .await?
        .rows_affected();
        gone += n;
        if n < 1000 {
            return Ok(gone);
        }
    }
}
