//! A key rotation that keeps participants going: the rotation itself (the retired link keys
//! kept while a link signed under them could still be unexpired), fresh link emails for
//! everyone still asked, the count of running instances left with no working link, and the
//! recognising of a genuine link that expired or was voided, whose holder may ask for a fresh
//! one from its refused page.
//!
//! A link voided by a rotation is told apart by its record's key generation
//! (`store::links::LinkRow::generation`), with no write to the links at the rotation. Its text
//! can only be checked against the retired keys (its signature and its record's keyed hash were
//! both made under them): they recognise it, and never accept an answer.

use crate::domain::capability::{self, Kind};
use crate::domain::interaction::{self, ANSWER_GRACE_SECS, Resolution};
use crate::domain::keys::SiteKeys;
use crate::domain::settings::MAX_TTL;
use crate::domain::site::{CACHE_TTL, Snapshot};
use crate::domain::workflow::Participant;
use crate::domain::workflow::versions::Cache;
use crate::error::Error;
use crate::store::{self, Db};

/// How many instances one transaction of a resend queues emails for.
pub const RESEND_BATCH: i64 = 200;
/// How many times the holder of one link may ask for a fresh one from its refused page.
pub const MOST_FRESH_ASKS: i64 = 3;

/// Until when link keys retired at `now` are kept: the longest a link signed under them just
/// before (or by a process that had not yet seen the rotation) could stay unexpired, and the
/// grace in which an expired link is still recognised.
pub fn keep_until(now: i64) -> i64 {
    let longest = i64::try_from(MAX_TTL).unwrap_or(i64::MAX / 4);
    now + longest + ANSWER_GRACE_SECS + CACHE_TTL.as_secs() as i64
}

/// Rotates the link keys (`store::keys::rotate`), keeping the retired ones for `keep_until`.
pub async fn rotate_keys(db: &Db) -> Result<SiteKeys, sqlx::Error> {
    let now = store::now();
    let new = store::keys::rotate(
        db,
        crate::domain::delivery::endpoints::reseal,
        keep_until(now),
    )
    .await?;
    // Receipts signed from now on verify under the new key; the old ones stay published.
    let signer = crate::domain::receipts::Signer::of(&new);
    store::receipts::publish(db, &signer.kid, &signer.x, now).await?;
    Ok(new)
}

/// What a resend did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resent {
    /// Running instances walked.
    pub instances: u64,
    /// Link emails queued.
    pub emails: u64,
}

/// Queues a fresh link email to every participant the current step of a running instance still
/// waits on and who has an address; the sender signs each link when it sends, under the keys
/// in force then. A batch of instances per transaction, so no one transaction spans them all.
/// A participant of a later step is emailed when that step starts, as always.
pub async fn resend(db: &Db, versions: &Cache) -> Result<Resent, Error> {
    let mut resent = Resent::default();
    let mut after = 0;
    loop {
        let batch = store::lists::running_after(db, after, RESEND_BATCH).await?;
        let Some(last) = batch.last() else {
            break;
        };
        after = last.id;
        let mut asked = Vec::new();
        for instance in &batch {
            let definition = versions.get(db, instance.version_id).await?;
            for who in waiting_now(db, instance, &definition).await? {
                asked.push((instance.id, instance.step_index, who));
            }
        }
        resent.instances += batch.len() as u64;
        resent.emails += store::mails::queue_links(db, &asked, store::now()).await?;
    }
    Ok(resent)
}

/// The participants the current step of a running instance waits on.
async fn waiting_now(
    db: &Db,
    instance: &store::instances::InstanceRow,
    definition: &crate::domain::workflow::Definition,
) -> Result<Vec<Participant>, sqlx::Error> {
    let Some(step) = definition.steps.get(instance.step_index as usize) else {
        return Ok(Vec::new());
    };
    if instance.state.is_over() {
        return Ok(Vec::new());
    }
    let answered =
        store::instances::answered_branches(db, instance.id, instance.step_index).await?;
    Ok(step
        .participants()
        .iter()
        .filter(|p| {
            step.branch_of(p)
                .is_some_and(|b| !answered.iter().any(|a| a == b))
        })
        .cloned()
        .collect())
}

/// How many running instances a rotation left with no working link (their links voided, no
/// fresh one live or on its way).
pub async fn without_working_link(db: &Db, now: i64) -> Result<i64, sqlx::Error> {
    let generation = store::keys::generation(db).await?;
    // Before any rotation no link can be void: the walk over running instances is skipped.
    if generation == 0 {
        return Ok(0);
    }
    store::links::running_without_working_link(db, generation, now).await
}

/// A refused link recognised as genuine: one the site signed and recorded, unrevoked, that
/// expired within the grace or was voided by a rotation. Named by its record's keyed hash.
pub struct Genuine {
    hash: String,
}

/// Whether a link the doorway refused is genuine (`Genuine`). A link under the current keys
/// that expired recently is the interaction's `ExpiredRecently`; one under retired keys is
/// looked up by its keyed hash under each, and its signature checked against its instance's
/// token. A link that is neither costs one read and one HMAC per retired key, found or not.
pub async fn genuine(
    db: &Db,
    versions: &Cache,
    site: &Snapshot,
    link: &str,
    now: i64,
) -> Result<Option<Genuine>, Error> {
    let resolution =
        interaction::resolve_answer(db, versions, &site.keys, link, now, ANSWER_GRACE_SECS).await?;
    Ok(match resolution {
        Resolution::ExpiredRecently(resolved) => expired(site, &resolved),
        Resolution::Usable(_) => None,
        Resolution::Refused => voided(db, &site.retired, link, now).await?,
    })
}

/// A link `interaction::resolve_answer` found expired within the grace, as `Genuine`: a link,
/// never a handle.
pub fn expired(site: &Snapshot, resolved: &interaction::Resolved) -> Option<Genuine> {
    (resolved.claims.kind == Kind::Link).then(|| Genuine {
        hash: site.keys.keyed_hash("link", &resolved.link),
    })
}

/// `genuine` for a link the current keys refused, under the retired keys: nothing to do (no
/// read) when no rotation's keys are kept.
pub async fn voided(
    db: &Db,
    retired: &[SiteKeys],
    link: &str,
    now: i64,
) -> Result<Option<Genuine>, sqlx::Error> {
    let Some(parsed) = capability::parse(link).filter(|p| p.claims.kind == Kind::Link) else {
        return Ok(None);
    };
    let expires = parsed.claims.expires;
    if now - expires >= ANSWER_GRACE_SECS {
        return Ok(None);
    }
    for keys in retired {
        let hash = keys.keyed_hash("link", link);
        let record = store::links::live_record(db, parsed.claims.instance, &hash).await?;
        let token = record.as_ref().map_or(ABSENT, |(token, _)| token.as_str());
        // Its signature as it was made: the expiry was checked above.
        if capability::verify(keys, &parsed, token, expires - 1) && record.is_some() {
            return Ok(Some(Genuine { hash }));
        }
    }
    Ok(None)
}

/// What an unknown record's signature is checked against, so both cost one HMAC.
const ABSENT: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// What a fresh link's request came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Fresh {
    /// Counted: an email was queued when the instance still waits on the participant and they
    /// have an address; the page says the same either way.
    Asked,
    /// This link asked its `MOST_FRESH_ASKS` already.
    TooMany,
}

/// The holder of a genuine link asks for a fresh one to the address on file: counted on the
/// link's record, and queued as a link email (signed when sent) when the current step of its
/// running instance still waits on its participant and they have an address.
pub async fn ask_fresh(db: &Db, versions: &Cache, genuine: &Genuine) -> Result<Fresh, Error> {
    let Some((instance, participant)) =
        store::links::ask_fresh(db, &genuine.hash, MOST_FRESH_ASKS).await?
    else {
        return Ok(Fresh::TooMany);
    };
    let Some(row) = store::instances::by_id(db, instance).await? else {
        return Ok(Fresh::Asked);
    };
    let definition = versions.get(db, row.version_id).await?;
    let waiting = waiting_now(db, &row, &definition).await?;
    if let Some(who) = waiting.into_iter().find(|p| p.as_str() == participant) {
        let queued =
            store::mails::queue_links(db, &[(row.id, row.step_index, who)], store::now()).await?;
        tracing::info!(
            instance = row.id,
            queued,
            "a fresh link was asked for from a refused page"
        );
    }
    Ok(Fresh::Asked)
}
