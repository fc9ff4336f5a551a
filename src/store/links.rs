//! Issued links, recorded by a keyed hash of the link: never the link itself.

use super::Db;
use super::instances::{CapReached, Entry, insert_history, revoke_records};
use crate::domain::workflow::history::Event;

#[derive(Clone, Debug, sqlx::FromRow)]
pub struct LinkRow {
    pub id: i64,
    pub participant: String,
    pub expires: i64,
    pub issued_by: String,
    pub issued_at: i64,
    pub revoked_at: Option<i64>,
    pub revoked_by: Option<String>,
    /// The generation of the site keys it was signed under (`SiteKeys::generation`).
    pub generation: i64,
}

/// A link about to be recorded, by the keyed hash of its text.
#[derive(Clone, Copy, Debug)]
pub struct NewLink<'a> {
    pub instance: i64,
    pub step: i64,
    pub hash: &'a str,
    pub participant: &'a str,
    pub expires: i64,
    pub issued_by: &'a str,
    /// The generation of the keys that signed it.
    pub generation: i64,
}

/// Records an issued link and notes it in the history, in one transaction; returns the
/// record's id. The same link issued twice (same participant and expiry, in the same second)
/// is one record.
pub async fn record(
    db: &Db,
    link: &NewLink<'_>,
    daily_cap: Option<u64>,
) -> Result<Result<i64, CapReached>, sqlx::Error> {
    let now = super::now();
    let mut tx = db.write().await?;
    if let Some(cap) = daily_cap {
        // The instance's row is written first, so two issues for it wait for each other in
        // any process: neither counts before the other has recorded its link.
        sqlx::query("UPDATE instances SET id = id WHERE id = $1")
            .bind(link.instance)
            .execute(&mut *tx)
            .await?;
        let issued: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM links WHERE instance_id = $1 AND issued_at > $2",
        )
        .bind(link.instance)
        .bind(now - 24 * 3600)
        .fetch_one(&mut *tx)
        .await?;
        if u64::try_from(issued).unwrap_or(0) >= cap {
            return Ok(Err(CapReached));
        }
    }
    sqlx::query(
        "INSERT INTO links (instance_id, hash, participant, expires, issued_by, issued_at, \
         generation) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (hash) DO NOTHING",
    )
    .bind(link.instance)
    .bind(link.hash)
    .bind(link.participant)
    .bind(link.expires)
    .bind(link.issued_by)
    .bind(now)
    .bind(link.generation)
    .execute(&mut *tx)
    .await?;
    let id: i64 = sqlx::query_scalar("SELECT id FROM links WHERE hash = $1")
        .bind(link.hash)
        .fetch_one(&mut *tx)
        .await?;
    insert_history(
        &mut tx,
        link.instance,
        &Entry {
            step: link.step,
            participant: link.participant,
            actor: link.issued_by,
            ..Entry::of(Event::LinkIssued)
        },
        now,
    )
    .await?;
    tx.commit().await?;
    Ok(Ok(id))
}

/// Records a link the email sender signed, before it is sent: no history line yet (the line
/// saying it was emailed is written once the server took it, `store::mails::sent`). Returns the
/// record's id; a link the server did not take is deleted again (`forget`).
pub async fn record_unlisted(db: &Db, link: &NewLink<'_>) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO links (instance_id, hash, participant, expires, issued_by, issued_at, \
         generation) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
    )
    .bind(link.instance)
    .bind(link.hash)
    .bind(link.participant)
    .bind(link.expires)
    .bind(link.issued_by)
    .bind(super::now())
    .bind(link.generation)
    .fetch_one(&db.pool)
    .await
}

/// Deletes the record of a link that was never sent.
pub async fn forget(db: &Db, id: i64) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM links WHERE id = $1")
        .bind(id)
        .execute(&db.pool)
        .await
        .map(|_| ())
}

pub async fn list(db: &Db, instance: i64) -> Result<Vec<LinkRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT id, participant, expires, issued_by, issued_at, revoked_at, revoked_by, \
         generation FROM links WHERE instance_id = $1 ORDER BY id DESC",
    )
    .bind(instance)
    .fetch_all(db.reader())
    .await
}

super::of_instance!(
    LinkRow,
    "links",
    "id, participant, expires, issued_by, issued_at, revoked_at, revoked_by, generation"
);

/// Revokes one link of an instance; `false` when there is no such live record.
pub async fn revoke(
    db: &Db,
    instance: i64,
    step: i64,
    link: i64,
    by: &str,
) -> Result<bool, sqlx::Error> {
    let now = super::now();
    let mut tx = db.write().await?;
    let participant: Option<String> = sqlx::query_scalar(
        "UPDATE links SET revoked_at = $1, revoked_by = $2 \
         WHERE id = $3 AND instance_id = $4 AND revoked_at IS NULL RETURNING participant",
    )
    .bind(now)
    .bind(by)
    .bind(link)
    .bind(instance)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(participant) = participant else {
        return Ok(false);
    };
    let entry = Entry {
        step,
        participant: &participant,
        actor: by,
        ..Entry::of(Event::LinkRevoked)
    };
    noted_and_committed(tx, instance, &entry, now).await
}

/// Gives the instance a new token, so every link and handle issued for it stops verifying, and
/// marks every record revoked; one transaction.
pub async fn revoke_all(
    db: &Db,
    instance: i64,
    step: i64,
    token: &str,
    by: &str,
) -> Result<bool, sqlx::Error> {
    let now = super::now();
    let mut tx = db.write().await?;
    let found = sqlx::query("UPDATE instances SET token = $1, updated_at = $2 WHERE id = $3")
        .bind(token)
        .bind(now)
        .bind(instance)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    if found == 0 {
        return Ok(false);
    }
    revoke_records(&mut tx, instance, by, now).await?;
    let entry = Entry {
        step,
        actor: by,
        ..Entry::of(Event::LinksRevoked)
    };
    noted_and_committed(tx, instance, &entry, now).await
}

/// Notes the change just made in the instance's history and commits it: `true`, it was made.
async fn noted_and_committed(
    mut tx: sqlx::Transaction<'_, sqlx::Any>,
    instance: i64,
    entry: &Entry<'_>,
    now: i64,
) -> Result<bool, sqlx::Error> {
    insert_history(&mut tx, instance, entry, now).await?;
    tx.commit().await?;
    Ok(true)
}

/// Hands a participant of a running instance to a new contact, in one transaction: their live
/// link records revoked (every link issued to them stops working), their contact replaced,
/// their link emailed to the new contact when the current step is theirs (`emailed`), and a
/// history line naming who did it. An email an API token asks for (`quota`) is counted against
/// its hourly quotas in the same transaction and queued in the token's lane; past a quota
/// nothing is changed.
pub async fn reassign(
    db: &Db,
    instance: i64,
    contact: &super::mails::ContactRow,
    emailed: bool,
    quota: Option<&super::mails::MailQuota>,
    by: &str,
) -> Result<Reassigned, sqlx::Error> {
    // To whom, in the history: the new contact's name, else their address (an operator's
    // page shows the contacts anyway; no log line does).
    let to = serde_json::json!({
        "to": if contact.name.is_empty() { &contact.email } else { &contact.name }
    })
    .to_string();
    let now = super::now();
    let mut tx = db.write().await?;
    // The instance's row first (its write lock): a reassignment and an answer take turns.
    let held = "UPDATE instances SET updated_at = $1 WHERE id = $2 AND state = 'active' \
         RETURNING step_index";
    let held = sqlx::query_scalar(held).bind(now).bind(instance);
    let Some(step) = held.fetch_optional(&mut *tx).await? else {
        return Ok(Reassigned::NotRunning);
    };
    if emailed
        && let Some(quota) = quota
        && let Some(spent) = super::mails::count_quota(&mut tx, quota, now).await?
    {
        return Ok(Reassigned::QuotaSpent(spent));
    }
    let who = contact.participant.as_str();
    sqlx::query(
        "UPDATE links SET revoked_at = $1, revoked_by = $2 \
         WHERE instance_id = $3 AND participant = $4 AND revoked_at IS NULL",
    )
    .bind(now)
    .bind(by)
    .bind(instance)
    .bind(who)
    .execute(&mut *tx)
    .await?;
    // Emails still waiting to go to the old address go to nobody.
    sqlx::query(
        "UPDATE mails SET state = 'skipped' WHERE instance_id = $1 AND participant = $2 \
         AND state = 'pending' AND kind = 'link'",
    )
    .bind(instance)
    .bind(who)
    .execute(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM contacts WHERE instance_id = $1 AND participant = $2")
        .bind(instance)
        .bind(who)
        .execute(&mut *tx)
        .await?;
    super::mails::insert_contacts(&mut tx, instance, std::slice::from_ref(contact)).await?;
    if emailed {
        let participant = [crate::domain::workflow::Participant::parse(who).unwrap_or_default()];
        let lane = if quota.is_some() {
            super::mails::Lane::Token
        } else {
            super::mails::Lane::Site
        };
        let kind = super::mails::Kind::Link;
        super::mails::queue_in(&mut tx, instance, step, &participant, kind, lane, now, now).await?;
    }
    let entry = Entry {
        step,
        participant: who,
        actor: by,
        answer: &to,
        ..Entry::of(Event::Reassigned)
    };
    // That a participant was handed over, and at which step: never to whom.
    let message = super::outbox::Message {
        step: Some(step),
        participant: Some(who),
        ..super::outbox::Message::of(
            crate::domain::delivery::topic::Topic::StepReassigned,
            instance,
        )
    };
    super::outbox::record(&mut tx, &message, now).await?;
    noted_and_committed(tx, instance, &entry, now).await?;
    Ok(Reassigned::Done)
}

/// What [`reassign`] came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Reassigned {
    Done,
    /// No running instance has this id.
    NotRunning,
    /// The API token's hourly quota of link emails is spent: nothing was changed.
    QuotaSpent(super::mails::QuotaSpent),
}

/// A live (unrevoked) record of a link by its keyed hash, with its instance's current token to
/// check the link's signature against: what recognises a link signed under retired keys.
pub async fn live_record(
    db: &Db,
    instance: i64,
    hash: &str,
) -> Result<Option<(String, String)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT i.token, l.participant FROM links l JOIN instances i ON i.id = l.instance_id \
         WHERE l.hash = $1 AND l.instance_id = $2 AND l.revoked_at IS NULL",
    )
    .bind(hash)
    .bind(instance)
    .fetch_optional(db.reader())
    .await
}

/// Counts one more request for a fresh link from the holder of the link recorded under
/// `hash`, while it has asked fewer than `most` times: its instance and participant, or `None`
/// past that (or with no record).
pub async fn ask_fresh(
    db: &Db,
    hash: &str,
    most: i64,
) -> Result<Option<(i64, String)>, sqlx::Error> {
    sqlx::query_as(
        "UPDATE links SET fresh_asked = fresh_asked + 1 WHERE hash = $1 AND fresh_asked < $2 \
         RETURNING instance_id, participant",
    )
    .bind(hash)
    .bind(most)
    .fetch_optional(&db.pool)
    .await
}

/// How many running instances had a link that a key rotation voided (unrevoked, unexpired, of
/// a generation below `generation`) and have no working link left: none of this generation
/// live and no link email waiting to go.
pub async fn running_without_working_link(
    db: &Db,
    generation: i64,
    now: i64,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM instances i WHERE i.state = 'active' \
         AND EXISTS (SELECT 1 FROM links l WHERE l.instance_id = i.id AND l.generation < $1 \
         AND l.revoked_at IS NULL AND l.expires > $2) \
         AND NOT EXISTS (SELECT 1 FROM links l WHERE l.instance_id = i.id \
         AND l.generation = $1 AND l.revoked_at IS NULL AND l.expires > $2) \
         AND NOT EXISTS (SELECT 1 FROM mails m WHERE m.instance_id = i.id AND m.kind = 'link' \
         AND m.state = 'pending')",
    )
    .bind(generation)
    .bind(now)
    .fetch_one(db.reader())
    .await
}
