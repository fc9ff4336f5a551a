//! Payments: started from the doorway, confirmed only by the provider's signed,
//! server-to-server notice. The payer's return trip is never proof of payment; it only shows
//! where the payment stands.
//!
//! A notice is a JSON body `{"payment": "<reference>", "outcome": "paid" | "failed",
//! "timestamp": <unix seconds>}` signed with HMAC-SHA256 under the provider key (hex, in the
//! `Provider-Signature` header). Applying it and recording what it brought are one transaction,
//! and the same notice sent again, or many times at once, joins the change already made.

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use super::Resolved;
use crate::domain::capability::{self, Claims, Kind};
use crate::domain::delivery::Topic;
use crate::domain::instance::progress;
use crate::domain::keys::SiteKeys;
use crate::domain::workflow::versions::Cache;
use crate::domain::workflow::{Interaction, Step, format_amount};
use crate::error::Error;
use crate::store::instances::{Answer, Recorded};
use crate::store::payments::NewPayment;
use crate::store::{self, Db};

/// How long a continuation handle lives.
pub const HANDLE_TTL: i64 = 30 * 60;
/// A notice older (or further in the future) than this is refused.
pub const NOTICE_MAX_AGE: i64 = 5 * 60;
/// The largest notice body read.
pub const MAX_NOTICE_BYTES: usize = 4096;
/// The header carrying a notice's signature.
pub const SIGNATURE_HEADER: &str = "provider-signature";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PaymentState {
    Pending,
    Paid,
    Failed,
    /// Closed with its instance, which was cancelled: a later notice changes nothing.
    Cancelled,
}

impl PaymentState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Paid => "paid",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(Self::Pending),
            "paid" => Some(Self::Paid),
            "failed" => Some(Self::Failed),
            "cancelled" => Some(Self::Cancelled),
            _ => None,
        }
    }
}

/// Sends the payer to the provider: starts a payment for the step, or joins the one under way,
/// and returns a continuation handle for the way back.
pub async fn start(
    db: &Db,
    keys: &SiteKeys,
    resolved: &Resolved,
    step: &Step,
    branch: &str,
    now: i64,
) -> Result<String, Error> {
    let Interaction::Payment {
        amount_cents,
        currency,
    } = &step.interaction
    else {
        return Err(Error::Corrupt(
            "a payment started on a step that is not one",
        ));
    };
    let expires = now + HANDLE_TTL;
    let claims = Claims {
        kind: Kind::Handle,
        instance: resolved.instance.id,
        branch: resolved.participant.claim(),
        expires,
    };
    let handle = capability::sign(keys, &claims, &resolved.instance.token);
    let reference = crate::domain::keys::random_token();
    store::payments::start(
        db,
        &NewPayment {
            reference: &reference[..32],
            instance: resolved.instance.id,
            step: resolved.instance.step_index,
            branch,
            participant: resolved.participant.as_str(),
            amount_cents: *amount_cents,
            currency,
        },
        &keys.keyed_hash("handle", &handle),
        expires,
    )
    .await?;
    Ok(handle)
}

/// What the provider says happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Paid,
    Failed,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Notice {
    pub payment: String,
    pub outcome: Outcome,
    pub timestamp: i64,
}

/// The payment a notice names, read without checking anything: the guard counts notices per
/// payment it names, signed and forged ones apart.
pub fn payment_named(body: &[u8]) -> Option<String> {
    serde_json::from_slice::<Notice>(body)
        .ok()
        .map(|n| n.payment)
}

/// The signature of a notice body, as the provider sends it.
pub fn sign(keys: &SiteKeys, body: &[u8]) -> String {
    hex::encode(mac(keys, body).finalize().into_bytes())
}

fn mac(keys: &SiteKeys, body: &[u8]) -> Hmac<Sha256> {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(keys.provider_key()).expect("HMAC takes any key length");
    mac.update(body);
    mac
}

/// What a notice did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Applied {
    /// Whether this notice made the change, or joined one already made.
    pub changed: bool,
    pub state: PaymentState,
    /// How long the payment's step waited, when this notice answered it (for the metrics).
    #[serde(skip)]
    pub asked: Option<store::instances::Asked>,
}

/// A notice body whose signature verified under the provider key: only [`verify`] makes one.
#[derive(Clone, Copy)]
pub struct Signed<'a>(&'a [u8]);

/// Checks a notice's signature: one HMAC-SHA256 over the body (at most `MAX_NOTICE_BYTES`) and
/// a comparison in constant time, no database. The guard counts signed and forged notices
/// apart, so this runs before the count (docs/interaction.md, Provider notices).
pub fn verify<'a>(keys: &SiteKeys, body: &'a [u8], signature: &str) -> Option<Signed<'a>> {
    let given = hex::decode(signature.trim()).ok()?;
    mac(keys, body).verify_slice(&given).ok()?;
    Some(Signed(body))
}

/// Receives a signed notice: its age, then the change. `Ok(None)` is the one refusal every bad
/// notice gets (stale, malformed, unknown payment, and a bad signature before it): it says
/// nothing about why.
pub async fn receive(
    db: &Db,
    versions: &Cache,
    signed: Signed<'_>,
    now: i64,
) -> Result<Option<Applied>, Error> {
    let Ok(notice) = serde_json::from_slice::<Notice>(signed.0) else {
        return Ok(None);
    };
    if (now - notice.timestamp).abs() > NOTICE_MAX_AGE {
        return Ok(None);
    }
    apply(db, versions, &notice).await
}

/// Applies a verified notice. The payment leaves `pending` and, when paid, its step's answer is
/// recorded, in one transaction: if recording fails, nothing changed and the provider's retry
/// applies it.
pub async fn apply(db: &Db, versions: &Cache, notice: &Notice) -> Result<Option<Applied>, Error> {
    let Some(payment) = store::payments::by_reference(db, &notice.payment).await? else {
        return Ok(None);
    };
    let state = PaymentState::parse(&payment.state)
        .ok_or(Error::Corrupt("a payment's state is unknown"))?;
    if state != PaymentState::Pending {
        return Ok(Some(Applied {
            changed: false,
            state,
            asked: None,
        }));
    }
    let instance = store::instances::by_id(db, payment.instance_id)
        .await?
        .ok_or(Error::Corrupt("a payment names no instance"))?;
    let definition = versions.get(db, instance.version_id).await?;
    let new_state = match notice.outcome {
        Outcome::Paid => PaymentState::Paid,
        Outcome::Failed => PaymentState::Failed,
    };
    let mut tx = db.write().await?;
    let Some(settled) =
        store::payments::settle_in(&mut tx, &payment.reference, new_state.as_str()).await?
    else {
        // Another notice settled it between the read and the lock: join its change.
        drop(tx);
        let now = store::payments::by_id(db, payment.id)
            .await?
            .and_then(|p| PaymentState::parse(&p.state))
            .unwrap_or(new_state);
        return Ok(Some(Applied {
            changed: false,
            state: now,
            asked: None,
        }));
    };
    let mut asked = None;
    if new_state == PaymentState::Paid {
        let step = definition
            .steps
            .get(settled.step_index as usize)
            .ok_or(Error::Corrupt("a payment names a step its version lacks"))?;
        let json = serde_json::json!({
            "status": "paid",
            "amount": format_amount(settled.amount_cents),
            "amount_cents": settled.amount_cents,
            "currency": settled.currency,
            "provider": "test",
            "payment": settled.reference,
        })
        .to_string();
        // Told in the transaction that settles it: a rollback tells nothing.
        store::outbox::record(
            &mut tx,
            &store::outbox::Message {
                step: Some(settled.step_index),
                step_title: Some(&step.title),
                participant: Some(&settled.participant),
                amount_cents: Some(settled.amount_cents),
                currency: Some(&settled.currency),
                ..store::outbox::Message::of(Topic::PaymentConfirmed, settled.instance_id)
            },
            store::now(),
        )
        .await?;
        let awaited = step.awaited();
        let from = settled.step_index as usize;
        let mut answers = progress::answers_for(db, settled.instance_id, &definition, from).await?;
        answers.put_json(from, &json);
        let (then, on_reject) = progress::routes_from(&definition, from, &answers);
        let recorded = store::instances::record_answer_in(
            &mut tx,
            &Answer {
                instance: settled.instance_id,
                step: settled.step_index,
                branch: &settled.branch,
                answer_json: &json,
                branches: &awaited,
                rejects: false,
                needed: step.needed(),
                step_title: &step.title,
                kind: step.interaction.kind(),
                participant: &settled.participant,
                then,
                on_reject,
                rounds: i64::from(crate::domain::workflow::route::rounds(&definition)),
                notify: &definition.notify_names(),
                files: &[],
                by: store::instances::By::default(),
            },
        )
        .await?;
        asked = recorded.asked.clone();
        if recorded == Recorded::Stale {
            // The money moved; the step had already moved on (another branch rejected, or the
            // links were revoked and the step answered otherwise). The payment stays paid.
            tracing::warn!(
                instance = settled.instance_id,
                step = settled.step_index,
                "a payment was confirmed for a step that had moved on"
            );
        }
    }
    tx.commit().await?;
    tracing::info!(
        instance = settled.instance_id,
        step = settled.step_index,
        state = new_state.as_str(),
        "payment settled by the provider's notice"
    );
    Ok(Some(Applied {
        changed: true,
        state: new_state,
        asked,
    }))
}
