//! The integrator API's rules, with no web in them: bearer tokens (kept as a keyed hash) and
//! their scopes (`scope`), integrator keys whose request signatures earn a bigger bucket, the
//! hard caps, who gets past the gate (`gate`) and retries (`idempotency`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use crate::domain::keys::SiteKeys;
use crate::domain::settings::Settings;
use crate::error::Error;
use crate::limits::bucket::Policy;
use crate::store::{self, Db, api::TokenRow};

pub mod gate;
pub mod idempotency;
pub mod scope;

use scope::Scope;

/// A signature more than this far from the server's clock (either way) is refused.
pub const SIGNATURE_MAX_AGE: i64 = 5 * 60;
/// The prefix of every token's text, so a leaked one is recognisable in a scan.
pub const TOKEN_PREFIX: &str = "orch_";

/// The purpose a token's keyed hash is made for.
pub use crate::domain::keys::TOKEN_PURPOSE;

/// A token's keyed hash as its 32 bytes, as [`Seen`] keys it; the database stores it as 64 hex
/// digits ([`stored_hash`]). Made by `site::Snapshot::token_key` on a request's path.
pub type TokenKey = [u8; 32];

fn token_hash(keys: &SiteKeys, text: &str) -> String {
    use hmac::Mac;
    let mut mac = keys.token_hasher();
    mac.update(text.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// The text a token's keyed hash is stored under in the database.
pub fn stored_hash(key: &TokenKey) -> String {
    hex::encode(key)
}

/// The credentials of an `Authorization` value in the `Bearer` scheme, whose name is
/// case-insensitive (RFC 9110, 11.1): `bearer x` is `Bearer x`. `None` for any other scheme.
/// No allocation: the API's fast refusal calls it.
pub fn bearer_credentials(value: &str) -> Option<&str> {
    let (scheme, rest) = value.split_at_checked(6)?;
    (scheme.eq_ignore_ascii_case("bearer") && rest.starts_with(' ')).then(|| rest.trim())
}

/// Whether a bearer text can be a token at all (its prefix, a bounded length): anything else is
/// refused without hashing it.
pub fn could_be_token(text: &str) -> bool {
    text.starts_with(TOKEN_PREFIX) && text.len() <= 200
}

/// A token's name: what the CLI and the list call it.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

fn random_hex(bytes: usize) -> String {
    hex::encode(&crate::domain::keys::random_bytes()[..bytes])
}

/// A new token with the default scope (`Scope::default`): stored by its keyed hash; its text
/// is returned once, to be printed or shown once. `Ok(None)` when the name is taken.
pub async fn create_token(
    db: &Db,
    keys: &SiteKeys,
    name: &str,
    rate: Option<u32>,
    burst: Option<u32>,
) -> Result<Option<String>, Error> {
    create_scoped_token(db, keys, name, rate, burst, &Scope::default()).await
}

/// `create_token` with the scope given.
pub async fn create_scoped_token(
    db: &Db,
    keys: &SiteKeys,
    name: &str,
    rate: Option<u32>,
    burst: Option<u32>,
    scope: &Scope,
) -> Result<Option<String>, Error> {
    let text = format!("{TOKEN_PREFIX}{}", random_hex(32));
    let created = store::api::create_token(
        db,
        name,
        &token_hash(keys, &text),
        rate.map(i64::from),
        burst.map(i64::from),
        scope,
    )
    .await?;
    Ok(created.map(|_| text))
}

/// The first of these workflow names that this site does not have (a typo would otherwise make
/// a token that can never work).
pub async fn unknown_workflow(db: &Db, names: &[String]) -> Result<Option<String>, Error> {
    if names.is_empty() {
        return Ok(None);
    }
    let workflows = store::workflows::list(db).await?;
    Ok(names
        .iter()
        .find(|n| !workflows.iter().any(|w| &w.name == *n))
        .cloned())
}

/// The keyed hash a bearer text is stored under, or `None` for a text that cannot be a token
/// (no database read is spent on it).
pub fn bearer_hash(keys: &SiteKeys, text: &str) -> Option<String> {
    could_be_token(text).then(|| token_hash(keys, text))
}

/// The live token stored under a keyed hash.
pub async fn authenticate_hash(db: &Db, hash: &str) -> Result<Option<TokenRow>, Error> {
    Ok(store::api::token_by_hash(db, hash).await?)
}

/// Tokens this process authenticated, by keyed hash (its bytes, not its hex): what the API's
/// fast refusal needs to find a token's bucket without reading the database
/// (`http::api::refusal`), and what lets a token in again without a read for [`FRESH`].
///
/// A token revoked in this process is forgotten at once (`forget_id`); one revoked by another
/// process (the CLI, another node) is refused by the read made once its entry is older than
/// [`FRESH`], so within a second. Bounded: when full, it starts again empty (the next request of
/// each token puts it back).
pub struct Seen {
    /// foldhash: the keys are keyed hashes, which no caller can choose without the site's key.
    map: Mutex<HashMap<TokenKey, SeenToken, foldhash::fast::RandomState>>,
    /// The one turn at the database that the tokens of every address past its failure limit
    /// share (`gate::Gate::admit`): their reads wait in line, one at a time, and take at most
    /// one of the pool's connections whatever they send.
    past_limit: tokio::sync::Semaphore,
}

impl Default for Seen {
    fn default() -> Self {
        Self {
            map: Mutex::default(),
            past_limit: tokio::sync::Semaphore::new(1),
        }
    }
}

/// A token as read from the database, and when (the site's clock, in milliseconds).
struct SeenToken {
    token: Arc<TokenRow>,
    read_ms: i64,
}

/// Tokens [`Seen`] holds at most.
const MAX_SEEN: usize = 10_000;

/// How long a token read from the database lets it in again without a second read: how late
/// another process's revocation or change of scope may take effect here.
pub const FRESH: Duration = Duration::from_secs(1);
const FRESH_MS: i64 = FRESH.as_millis() as i64;

impl Seen {
    fn map(&self) -> MutexGuard<'_, HashMap<TokenKey, SeenToken, foldhash::fast::RandomState>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `f` of the token stored under `key`, read under the lock: the fast refusal takes what
    /// it needs without a reference count of its own.
    pub fn read<R>(&self, key: &TokenKey, f: impl FnOnce(&TokenRow) -> R) -> Option<R> {
        self.map().get(key).map(|t| f(&t.token))
    }

    /// The token stored under `key` when it was read from the database within [`FRESH`] before
    /// `now_ms` (a clock set back makes it read again).
    pub fn fresh(&self, key: &TokenKey, now_ms: i64) -> Option<Arc<TokenRow>> {
        self.map()
            .get(key)
            .filter(|t| (0..FRESH_MS).contains(&(now_ms - t.read_ms)))
            .map(|t| t.token.clone())
    }

    /// Waits for the turn at the database of the addresses past their failure limit, held until
    /// the permit is dropped. First come, first served: a good token waits behind the reads
    /// queued before it, and is then read like any other.
    pub async fn past_limit_turn(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        self.past_limit.acquire().await.ok()
    }

    /// Notes a token just read from the database at `read_ms`.
    pub fn put(&self, key: TokenKey, token: Arc<TokenRow>, read_ms: i64) {
        let mut map = self.map();
        if map.len() >= MAX_SEEN && !map.contains_key(&key) {
            map.clear();
        }
        map.insert(key, SeenToken { token, read_ms });
    }

    /// Notes that a token's use was written at `at`, so a row held here does not ask for the
    /// same write again within `store::api::TOUCH_EVERY`.
    pub fn touched(&self, id: i64, at: i64) {
        for seen in self.map().values_mut().filter(|t| t.token.id == id) {
            let mut token = TokenRow::clone(&seen.token);
            token.last_used_at = Some(at);
            seen.token = Arc::new(token);
        }
    }

    /// Forgets a keyed hash the database no longer knows (revoked).
    pub fn forget(&self, key: &TokenKey) {
        self.map().remove(key);
    }

    /// Forgets a token revoked in this process.
    pub fn forget_id(&self, id: i64) {
        self.map().retain(|_, t| t.token.id != id);
    }
}

/// A token's bucket: its own numbers, else the site's, times the integrator multiplier when the
/// request was signed by a trusted integrator.
pub fn policy(token: &TokenRow, settings: &Settings, signed: bool) -> Policy {
    let clamp = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    let per_minute = token
        .rate_per_minute
        .map_or(settings.api_rate_per_minute, |r| r.max(1) as u64);
    let burst = token.burst.map_or(settings.api_burst, |b| b.max(1) as u64);
    let times = if signed {
        settings.api_signed_multiplier
    } else {
        1
    };
    Policy {
        per_minute: clamp(per_minute.saturating_mul(times)),
        burst: clamp(burst.saturating_mul(times)),
    }
}

/// A new signing key for an integrator (replacing any it had): `(key id, secret)`, shown once.
pub async fn create_integrator_key(db: &Db, name: &str) -> Result<(String, String), Error> {
    let key_id = format!("ik_{}", random_hex(8));
    let secret = random_hex(32);
    store::api::put_integrator_key(db, name, &key_id, &secret).await?;
    Ok((key_id, secret))
}

/// The request's signed parts.
pub struct Signed<'a> {
    pub key_id: &'a str,
    pub timestamp: &'a str,
    pub signature: &'a str,
    pub method: &'a str,
    pub path: &'a str,
    pub body: &'a [u8],
}

/// What a request signature is worth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signature {
    /// Good, fresh and first seen: the integrator's tier.
    Valid,
    /// Unknown key, tampered, stale or replayed: refused.
    Refused,
}

/// The text a request signature covers: method, path, the body's SHA-256 and the timestamp,
/// one per line.
pub fn signing_input(method: &str, path: &str, body: &[u8], timestamp: &str) -> String {
    format!(
        "{method}\n{path}\n{}\n{timestamp}",
        hex::encode(Sha256::digest(body))
    )
}

/// The signature an integrator sends: hex HMAC-SHA256 of `signing_input` under its secret.
pub fn sign(secret: &str, input: &str) -> String {
    hex::encode(signing_mac(secret, input).finalize().into_bytes())
}

fn signing_mac(secret: &str, input: &str) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(input.as_bytes());
    mac
}

pub async fn check_signature(db: &Db, s: &Signed<'_>, now: i64) -> Result<Signature, Error> {
    let Ok(at) = s.timestamp.parse::<i64>() else {
        return Ok(Signature::Refused);
    };
    if (now - at).abs() > SIGNATURE_MAX_AGE {
        return Ok(Signature::Refused);
    }
    let Some(secret) = store::api::integrator_secret(db, s.key_id).await? else {
        return Ok(Signature::Refused);
    };
    // Compared as bytes in constant time (`verify_slice`), the hex spelling aside.
    let given = hex::decode(s.signature).unwrap_or_default();
    let mac = signing_mac(
        &secret,
        &signing_input(s.method, s.path, s.body, s.timestamp),
    );
    if mac.verify_slice(&given).is_err() {
        return Ok(Signature::Refused);
    }
    // A signature is good once: recorded until it could no longer pass the age check.
    let seen = hex::encode(Sha256::digest(s.signature.as_bytes()));
    if !store::api::first_use_of_signature(db, &seen, at + 2 * SIGNATURE_MAX_AGE).await? {
        return Ok(Signature::Refused);
    }
    Ok(Signature::Valid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64) -> Arc<TokenRow> {
        Arc::new(TokenRow {
            id,
            name: format!("t{id}"),
            rate_per_minute: None,
            burst: None,
            created_at: 0,
            last_used_at: None,
            revoked_at: None,
            scope: Scope::default(),
        })
    }

    fn key(i: usize) -> TokenKey {
        let mut key = [0; 32];
        key[..8].copy_from_slice(&(i as u64).to_le_bytes());
        key
    }

    #[test]
    fn a_seen_token_is_found_by_its_key_until_it_is_forgotten() {
        let seen = Seen::default();
        seen.put(key(1), row(1), 0);
        seen.put(key(2), row(2), 0);
        assert_eq!(seen.read(&key(1), |t| t.id), Some(1));
        assert_eq!(seen.read(&key(3), |t| t.id), None);
        seen.forget(&key(1));
        assert_eq!(seen.read(&key(1), |t| t.id), None);
        seen.forget_id(2);
        assert_eq!(seen.read(&key(2), |t| t.id), None);
    }

    #[test]
    fn the_bearer_scheme_is_case_insensitive_and_nothing_else_is_a_bearer() {
        for value in [
            "Bearer orch_1",
            "bearer orch_1",
            "BEARER  orch_1 ",
            "bEaReR orch_1",
        ] {
            assert_eq!(bearer_credentials(value), Some("orch_1"), "{value}");
        }
        for value in [
            "Bearerorch_1",
            "Basic orch_1",
            "Bear",
            "",
            "Bearé orch_1",
            "orch_1",
        ] {
            assert_eq!(bearer_credentials(value), None, "{value}");
        }
    }

    #[test]
    fn a_seen_token_lets_in_without_a_read_only_while_fresh() {
        let seen = Seen::default();
        seen.put(key(1), row(1), 5_000);
        assert_eq!(seen.fresh(&key(1), 5_999).map(|t| t.id), Some(1));
        assert!(seen.fresh(&key(1), 6_000).is_none());
        assert!(
            seen.fresh(&key(1), 4_999).is_none(),
            "a clock set back reads again"
        );
        assert!(seen.fresh(&key(2), 5_000).is_none());
        seen.touched(1, 42);
        assert_eq!(seen.read(&key(1), |t| t.last_used_at), Some(Some(42)));
    }

    #[test]
    fn seen_starts_again_empty_when_full() {
        let seen = Seen::default();
        for i in 0..MAX_SEEN {
            seen.put(key(i), row(i as i64), 0);
        }
        assert_eq!(seen.map().len(), MAX_SEEN);
        seen.put(key(MAX_SEEN), row(-1), 0);
        assert_eq!(seen.map().len(), 1);
        assert_eq!(seen.read(&key(MAX_SEEN), |t| t.id), Some(-1));
    }
}
