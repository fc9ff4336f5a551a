//! Receipts: what a participant keeps of an answer, a compact JWS (RFC 7515) signed with an
//! Ed25519 key of the site (EdDSA, RFC 8037) over the answer's line of history, verifiable by
//! anyone with a JOSE library against the site's public keys (`/.well-known/jwks.json`).
//!
//! The signing key is derived from the site keys under a purpose of its own, so no new secret
//! rests in the database and `orchestra keys rotate` changes it; only public keys are stored,
//! every one ever used, so a receipt signed before a rotation still verifies. A receipt holds
//! no link and no handle: the link's record id says which link answered.

use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use hmac::Mac;
use ring::signature::{ED25519, Ed25519KeyPair, KeyPair, UnparsedPublicKey};
use serde::{Deserialize, Serialize};

use crate::domain::keys::SiteKeys;
use crate::error::Error;
use crate::store::history::answer_sha256;
use crate::store::receipts::{self as stored, Line, PublicKey};
use crate::store::{self, Db};

/// The purpose the signing key's seed is derived under (`SiteKeys::keyed_hasher`).
const SIGNING_PURPOSE: &str = "receipt-signing";

/// The site's receipt key, made from its keys whenever needed.
pub struct Signer {
    pair: Ed25519KeyPair,
    /// The public key as a JWK's `x`, and its RFC 7638 thumbprint.
    pub x: String,
    pub kid: String,
}

impl Signer {
    pub fn of(keys: &SiteKeys) -> Self {
        let seed = keys.keyed_hasher(SIGNING_PURPOSE).finalize().into_bytes();
        // Any 32 bytes are a valid Ed25519 seed; the HMAC gives exactly 32.
        let pair = Ed25519KeyPair::from_seed_unchecked(&seed).expect("an Ed25519 seed of 32 bytes");
        let x = B64.encode(pair.public_key().as_ref());
        let kid = thumbprint(&x);
        Self { pair, x, kid }
    }

    /// The compact serialisation of `claims`, signed, with this key's `kid` in its header.
    pub fn sign(&self, claims: &Claims) -> String {
        let header = serde_json::json!({"alg": "EdDSA", "kid": self.kid, "typ": "JWT"});
        let input = format!(
            "{}.{}",
            B64.encode(header.to_string()),
            B64.encode(serde_json::to_vec(claims).unwrap_or_default())
        );
        let signature = self.pair.sign(input.as_bytes());
        format!("{input}.{}", B64.encode(signature.as_ref()))
    }

    /// Publishes this key among the site's public keys (a no-op once it is there).
    pub async fn publish(&self, db: &Db) -> Result<(), Error> {
        Ok(stored::publish(db, &self.kid, &self.x, store::now()).await?)
    }
}

/// The RFC 7638 thumbprint of an Ed25519 public key: the SHA-256 of its required members in
/// lexicographic order, without spaces, base64url.
pub fn thumbprint(x: &str) -> String {
    use sha2::{Digest, Sha256};
    let canonical = format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#);
    B64.encode(Sha256::digest(canonical.as_bytes()))
}

/// The JWK Set (RFC 7517) of `keys`: public keys only.
pub fn jwks(keys: &[PublicKey]) -> serde_json::Value {
    let keys: Vec<_> = keys
        .iter()
        .map(|k| {
            serde_json::json!({
                "kty": "OKP", "crv": "Ed25519", "x": k.x, "kid": k.kid,
                "alg": "EdDSA", "use": "sig",
            })
        })
        .collect();
    serde_json::json!({ "keys": keys })
}

/// What a receipt says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// The site's base URL.
    pub iss: String,
    /// When this receipt was first issued (a second download says the same).
    pub iat: i64,
    /// The receipt's id, kept with the answer's line (`receipts`).
    pub jti: String,
    pub instance: i64,
    pub step: StepClaim,
    pub round: i64,
    /// The participant's role name, never an address.
    pub participant: String,
    /// The SHA-256 of the answer as the history stores it (the evidence record lists it).
    pub answer_sha256: String,
    pub fields: Vec<FieldClaim>,
    /// When the answer was recorded.
    pub answered_at: i64,
    /// The record of the link it came through (`None` for a link issued before they were
    /// recorded).
    pub link_record: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepClaim {
    /// 1-based, as pages number steps.
    pub number: i64,
    pub title: String,
}

/// One field of the answer: a value, or a file by its name and SHA-256 (never its bytes).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldClaim {
    pub name: String,
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<FileClaim>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileClaim {
    pub name: String,
    pub sha256: String,
}

/// The fields of an answer as the history stores it: a form's fields with their labels as
/// recorded, and any other member (a review's decision and comment, a payment's figures) by
/// its name.
fn fields_of(answer: &str) -> Vec<FieldClaim> {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str(answer) else {
        return Vec::new();
    };
    let text = |v: &serde_json::Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    let member = |v: &serde_json::Value, key: &str| v.get(key).map(text).unwrap_or_default();
    let mut out = Vec::new();
    for (key, value) in &map {
        match (key.as_str(), value) {
            ("fields", serde_json::Value::Array(fields)) => {
                for f in fields {
                    let file = f
                        .get("file")
                        .filter(|f| f.is_object())
                        .map(|file| FileClaim {
                            name: member(file, "name"),
                            sha256: member(file, "sha256"),
                        });
                    out.push(FieldClaim {
                        name: member(f, "name"),
                        label: member(f, "label"),
                        value: file.is_none().then(|| member(f, "value")),
                        file,
                    });
                }
            }
            _ => out.push(FieldClaim {
                name: key.clone(),
                label: key.clone(),
                value: Some(text(value)),
                file: None,
            }),
        }
    }
    out
}

/// A receipt, and what it says.
#[derive(Clone, Debug)]
pub struct Receipt {
    pub token: String,
    pub claims: Claims,
}

impl Receipt {
    /// The name it is downloaded and attached under.
    pub fn file_name(&self) -> String {
        format!(
            "receipt-{}-{}.jws",
            self.claims.instance, self.claims.step.number
        )
    }
}

/// The receipt of an answer's line, signed now under the current keys, with the id and time it
/// was first issued. `None` when the answer's words are gone (retention or an erasure kept only
/// its SHA-256): a receipt must say what was answered.
pub async fn issue(
    db: &Db,
    keys: &SiteKeys,
    base_url: &str,
    line: &Line,
) -> Result<Option<Receipt>, Error> {
    let sha256 = answer_sha256(&line.answer);
    if line
        .answer_sha256
        .as_ref()
        .is_some_and(|kept| *kept != sha256)
    {
        return Ok(None);
    }
    let signer = Signer::of(keys);
    signer.publish(db).await?;
    let fresh = crate::domain::keys::random_token()[..32].to_owned();
    let (jti, iat) =
        stored::receipt_for(db, line.instance_id, line.id, &fresh, store::now()).await?;
    let claims = Claims {
        iss: base_url.to_owned(),
        iat,
        jti,
        instance: line.instance_id,
        step: StepClaim {
            number: line.step_index + 1,
            title: line.step_title.clone(),
        },
        round: line.round,
        participant: line.participant.clone(),
        answer_sha256: sha256,
        fields: fields_of(&line.answer),
        answered_at: line.at,
        link_record: line.link_id,
    };
    Ok(Some(Receipt {
        token: signer.sign(&claims),
        claims,
    }))
}

/// The receipts of what `participant` answered in `instance` (the outcome email's).
pub async fn of_participant(
    db: &Db,
    keys: &SiteKeys,
    base_url: &str,
    instance: i64,
    participant: &str,
) -> Result<Vec<Receipt>, Error> {
    let mut out = Vec::new();
    for line in stored::lines_of_participant(db, instance, participant).await? {
        out.extend(issue(db, keys, base_url, &line).await?);
    }
    Ok(out)
}

/// Why a receipt did not verify.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Invalid {
    /// Not three base64url parts of JSON: not a compact JWS.
    Malformed,
    /// Not signed with EdDSA (a `none` or an HMAC header is never taken).
    Algorithm,
    /// Signed under a key this site never published.
    UnknownKey,
    /// The signature does not match: something was changed.
    Signature,
    /// Signed, but not a receipt's claims.
    Claims,
}

impl Invalid {
    /// Its Fluent message.
    pub fn message_id(self) -> &'static str {
        match self {
            Invalid::Malformed => "cli-receipt-malformed",
            Invalid::Algorithm => "cli-receipt-algorithm",
            Invalid::UnknownKey => "cli-receipt-unknown-key",
            Invalid::Signature => "cli-receipt-signature",
            Invalid::Claims => "cli-receipt-claims",
        }
    }
}

/// Checks a compact JWS against `keys` (the site's published ones): its header, its key, its
/// signature, then its claims. Any input, garbage included, gets an answer.
pub fn verify(token: &str, keys: &[PublicKey]) -> Result<(Claims, String), Invalid> {
    let token = token.trim();
    let parts: Vec<&str> = token.split('.').collect();
    let [header, payload, signature] = parts[..] else {
        return Err(Invalid::Malformed);
    };
    let decode = |part: &str| B64.decode(part).map_err(|_| Invalid::Malformed);
    let header: serde_json::Value =
        serde_json::from_slice(&decode(header)?).map_err(|_| Invalid::Malformed)?;
    if header.get("alg").and_then(|a| a.as_str()) != Some("EdDSA") {
        return Err(Invalid::Algorithm);
    }
    // An extension this verifier does not know must not be ignored (RFC 7515, 4.1.11).
    if header.get("crit").is_some() {
        return Err(Invalid::Malformed);
    }
    let kid = header.get("kid").and_then(|k| k.as_str()).unwrap_or("");
    let key = keys
        .iter()
        .find(|k| k.kid == kid)
        .ok_or(Invalid::UnknownKey)?;
    let public = B64.decode(&key.x).map_err(|_| Invalid::UnknownKey)?;
    let signed = &token[..token.len() - signature.len() - 1];
    UnparsedPublicKey::new(&ED25519, public)
        .verify(signed.as_bytes(), &decode(signature)?)
        .map_err(|_| Invalid::Signature)?;
    let claims = serde_json::from_slice(&decode(payload)?).map_err(|_| Invalid::Claims)?;
    Ok((claims, kid.to_owned()))
}

/// What the instance's history says now of a receipt's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// The answer is there, with the receipt's SHA-256.
    Matches,
    /// Its words were erased; the SHA-256 kept with its line is still the receipt's.
    Erased,
    /// The history holds another SHA-256 for it.
    Differs,
    /// No such answer in this site's history (another site's receipt, or a deleted instance).
    Absent,
}

/// Looks up a verified receipt's answer in the history, by its receipt id.
pub async fn standing(db: &Db, claims: &Claims) -> Result<Standing, Error> {
    let receipts = stored::of_instance(db, claims.instance).await?;
    let Some(&(_, line, _)) = receipts.iter().find(|(id, _, _)| *id == claims.jti) else {
        return Ok(Standing::Absent);
    };
    let Some((kept, answer)) = stored::current_sha256(db, claims.instance, line).await? else {
        return Ok(Standing::Absent);
    };
    let kept = kept.unwrap_or_else(|| answer_sha256(&answer));
    Ok(if kept != claims.answer_sha256 {
        Standing::Differs
    } else if answer_sha256(&answer) == kept {
        Standing::Matches
    } else {
        Standing::Erased
    })
}

/// How receipts went, for the metrics' `orchestra_receipts_total{outcome}`: downloaded under a
/// link, carried by an outcome email, or refused (a receipt that is not the link's, or whose
/// answer was erased).
#[derive(Debug, Default)]
pub struct Figures {
    counts: [AtomicU64; Outcome::ALL.len()],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Downloaded,
    Emailed,
    Refused,
}

impl Outcome {
    pub const ALL: [Outcome; 3] = [Outcome::Downloaded, Outcome::Emailed, Outcome::Refused];

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Downloaded => "downloaded",
            Outcome::Emailed => "emailed",
            Outcome::Refused => "refused",
        }
    }
}

impl Figures {
    pub fn count(&self, outcome: Outcome, n: u64) {
        self.counts[outcome as usize].fetch_add(n, Ordering::Relaxed);
    }

    pub fn read(&self, outcome: Outcome) -> u64 {
        self.counts[outcome as usize].load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims() -> Claims {
        Claims {
            iss: "https://flows.example.org".into(),
            iat: 1,
            jti: "abc".into(),
            instance: 7,
            step: StepClaim {
                number: 1,
                title: "Request".into(),
            },
            round: 0,
            participant: "requester".into(),
            answer_sha256: "00".into(),
            fields: fields_of(
                r#"{"fields":[{"name":"amount","label":"Amount","value":"12"},
                {"name":"scan","label":"Scan","value":"a.pdf","file":{"id":3,"name":"a.pdf","size":4,"media_type":"application/pdf","sha256":"ff"}}]}"#,
            ),
            answered_at: 1,
            link_record: Some(4),
        }
    }

    fn published(signer: &Signer) -> Vec<PublicKey> {
        vec![PublicKey {
            kid: signer.kid.clone(),
            x: signer.x.clone(),
            created_at: 0,
        }]
    }

    #[test]
    fn a_receipt_verifies_under_its_key_and_no_other() {
        let signer = Signer::of(&SiteKeys::from_bytes([1; 32], [2; 32]));
        let token = signer.sign(&claims());
        assert_eq!(
            verify(&token, &published(&signer)),
            Ok((claims(), signer.kid.clone()))
        );
        let other = Signer::of(&SiteKeys::from_bytes([1; 32], [3; 32]));
        assert_ne!(other.kid, signer.kid);
        assert_eq!(verify(&token, &published(&other)), Err(Invalid::UnknownKey));
    }

    #[test]
    fn files_are_named_and_hashed_and_values_kept() {
        let fields = claims().fields;
        assert_eq!(fields[0].value.as_deref(), Some("12"));
        assert_eq!(
            fields[1].file,
            Some(FileClaim {
                name: "a.pdf".into(),
                sha256: "ff".into()
            })
        );
        assert_eq!(fields[1].value, None);
    }

    #[test]
    fn garbage_and_forgeries_are_refused_without_a_panic() {
        let signer = Signer::of(&SiteKeys::from_bytes([1; 32], [2; 32]));
        let keys = published(&signer);
        let token = signer.sign(&claims());
        for bad in ["", ".", "..", "a.b.c", "é.é.é", "a.b.c.d", "\u{0}"] {
            assert_eq!(verify(bad, &keys), Err(Invalid::Malformed), "{bad:?}");
        }
        let none = format!(
            "{}.{}.",
            B64.encode(r#"{"alg":"none"}"#),
            token.split('.').nth(1).unwrap()
        );
        assert_eq!(verify(&none, &keys), Err(Invalid::Algorithm));
        let mut changed = token.into_bytes();
        let at = changed.len() / 2;
        changed[at] = if changed[at] == b'A' { b'B' } else { b'A' };
        let changed = String::from_utf8(changed).unwrap();
        assert!(verify(&changed, &keys).is_err());
    }

    /// RFC 8037, appendix A.3: the thumbprint of its example key.
    #[test]
    fn the_thumbprint_is_rfc_7638s() {
        assert_eq!(
            thumbprint("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"),
            "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
        );
    }
}
