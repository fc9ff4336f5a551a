//! `Idempotency-Key` on the API's POSTs that make something (a start, a link's issue), as the
//! IETF draft (draft-ietf-httpapi-idempotency-key-header) and Stripe have it: a request retried
//! with the same key by the same token makes one thing, and gets the first answer again.
//!
//! The key is reserved before the work by inserting its row (unique on token and key hash), so
//! of two requests at once only one works; the other is told the first is under way. The work's
//! success is stored; a refusal or a failure gives the key up, so a corrected request may use it.
//! A key names one request: the same key with another method, path or body is refused.
//!
//! **Secrets in stored answers.** An issued link's answer holds the link, which is the
//! capability itself, and it cannot be made again (a link's signature takes a fresh nonce, so
//! re-signing gives another link). So every answer is stored sealed with AES-256-GCM (the
//! `cookie` crate's private jar, as the one-time cookies are: a kept AEAD, no crypto of ours),
//! under a key derived by HKDF from the site keys' keyed hash for this purpose. The row's name
//! (token and key hash) is the associated data, so a sealed answer moved to another row does not
//! open. The key's text is stored only as a keyed hash, the request only as a keyed
//! fingerprint. A copy of the database alone opens nothing; rotating the site keys makes every
//! record unreachable (its key hash changes), as it voids every link the answers held.

use std::fmt;

use cookie::{Cookie, CookieJar};
use hmac::Mac;

use crate::domain::keys::SiteKeys;
use crate::error::Error;
use crate::store::{self, Db};

/// The request header.
pub const HEADER: &str = "idempotency-key";
/// The longest key taken, in bytes (each a visible ASCII character).
pub const MAX_KEY_LEN: usize = 255;
/// How long a key holds its answer: a day, as Stripe keeps them.
pub const LIFETIME_SECS: i64 = 24 * 60 * 60;
/// A reservation left without an answer this long belongs to a request that will never finish
/// (its process died: a live request's work runs to its end even when its client leaves, see
/// `http::api`); a retry may then take the key over.
pub const STALE_SECS: i64 = 5 * 60;

const KEY_PURPOSE: &str = "api-idempotency-key";
const FINGERPRINT_PURPOSE: &str = "api-idempotency-request";
const SEAL_PURPOSE: &str = "api-idempotency-answer";

/// A key as a caller sent it. `Debug` does not print it: keys are not logged.
pub struct Key(String);

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Key(<redacted>)")
    }
}

impl Key {
    /// A key of 1 to `MAX_KEY_LEN` visible ASCII characters (`!` to `~`); `None` otherwise.
    pub fn parse(value: &[u8]) -> Option<Self> {
        let fits = !value.is_empty()
            && value.len() <= MAX_KEY_LEN
            && value.iter().all(|b| (0x21..=0x7e).contains(b));
        fits.then(|| Self(String::from_utf8_lossy(value).into_owned()))
    }
}

/// An answer to replay: its status, its `Location` and its JSON body. `Debug` does not print
/// the body (a link's answer holds the link).
#[derive(Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub location: Option<String>,
    pub body: String,
}

impl fmt::Debug for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Answer")
            .field("status", &self.status)
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

/// What a request with a key may do.
#[derive(Debug)]
pub enum Begun {
    /// The key is this request's: do the work, then `complete` or `release`.
    Fresh(Reservation),
    /// The key's request was done: its answer, to send again.
    Replay(Answer),
    /// The key was used for another request (method, path or body).
    Reused,
    /// The key's first request is still at work.
    InProgress,
}

/// A key reserved for one request's work.
#[derive(Debug)]
pub struct Reservation {
    token: i64,
    key_hash: String,
    at: i64,
    seal: Seal,
}

/// The sealing key and the row's name it seals for.
struct Seal {
    key: cookie::Key,
    name: String,
}

impl fmt::Debug for Seal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Seal(<redacted>)")
    }
}

impl Seal {
    fn new(keys: &SiteKeys, token: i64, key_hash: &str) -> Self {
        Self {
            key: cookie::Key::derive_from(&keys.keyed_hasher(SEAL_PURPOSE).finalize().into_bytes()),
            // The associated data: the row the answer belongs to.
            name: format!("idempotency.{token}.{key_hash}"),
        }
    }

    fn seal(&self, body: &str) -> Option<String> {
        let mut jar = CookieJar::new();
        jar.private_mut(&self.key)
            .add(Cookie::new(self.name.clone(), body.to_owned()));
        jar.get(&self.name).map(|c| c.value().to_owned())
    }

    fn open(&self, sealed: &str) -> Option<String> {
        let cookie = Cookie::new(self.name.clone(), sealed.to_owned());
        CookieJar::new()
            .private(&self.key)
            .decrypt(cookie)
            .map(|c| c.value().to_owned())
    }
}

/// The keyed fingerprint of a request: its method, its path and its body.
pub fn fingerprint(keys: &SiteKeys, method: &str, path: &str, body: &[u8]) -> String {
    let mut mac = keys.keyed_hasher(FINGERPRINT_PURPOSE);
    mac.update(method.as_bytes());
    mac.update(b"\0");
    mac.update(path.as_bytes());
    mac.update(b"\0");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

/// Reserves `key` for a request of `token` whose fingerprint is `fingerprint`, or says why not.
pub async fn begin(
    db: &Db,
    keys: &SiteKeys,
    token: i64,
    key: &Key,
    fingerprint: &str,
    now: i64,
) -> Result<Begun, Error> {
    let key_hash = keys.keyed_hash(KEY_PURPOSE, &key.0);
    let expires = now + LIFETIME_SECS;
    let fresh = |key_hash: String| {
        Begun::Fresh(Reservation {
            seal: Seal::new(keys, token, &key_hash),
            token,
            key_hash,
            at: now,
        })
    };
    let row = |hash| store::idempotency::Key { token, hash };
    if store::idempotency::reserve(db, row(&key_hash), fingerprint, now, expires).await? {
        return Ok(fresh(key_hash));
    }
    let Some(record) = store::idempotency::find(db, row(&key_hash)).await? else {
        // Released between the two statements: the caller may simply try again.
        return Ok(Begun::InProgress);
    };
    let stale = record.status.is_none() && record.created_at < now - STALE_SECS;
    if record.expires_at <= now || stale {
        let taken = store::idempotency::take_over(
            db,
            row(&key_hash),
            fingerprint,
            now,
            expires,
            now - STALE_SECS,
        )
        .await?;
        return Ok(if taken {
            fresh(key_hash)
        } else {
            Begun::InProgress
        });
    }
    if record.fingerprint != fingerprint {
        return Ok(Begun::Reused);
    }
    let (Some(status), Some(body)) = (record.status, record.body) else {
        return Ok(Begun::InProgress);
    };
    let body = Seal::new(keys, token, &key_hash)
        .open(&body)
        .ok_or(Error::Corrupt(
            "an idempotency record's answer does not open",
        ))?;
    Ok(Begun::Replay(Answer {
        status: u16::try_from(status)
            .map_err(|_| Error::Corrupt("an idempotency record's status"))?,
        location: record.location,
        body,
    }))
}

impl Reservation {
    fn row(&self) -> store::idempotency::Key<'_> {
        store::idempotency::Key {
            token: self.token,
            hash: &self.key_hash,
        }
    }

    /// Stores the work's answer, sealed, for the key's retries.
    pub async fn complete(self, db: &Db, answer: &Answer) -> Result<(), Error> {
        let sealed = self
            .seal
            .seal(&answer.body)
            .ok_or(Error::Corrupt("an answer could not be sealed"))?;
        store::idempotency::complete(
            db,
            self.row(),
            self.at,
            i64::from(answer.status),
            answer.location.as_deref(),
            &sealed,
        )
        .await?;
        Ok(())
    }

    /// Gives the key up: the work was refused or failed, and made nothing to replay.
    pub async fn release(&self, db: &Db) -> Result<(), Error> {
        Ok(store::idempotency::release(db, self.row(), self.at).await?)
    }
}

/// Deletes the records expired by `now`, a short batch per statement so that no write waits
/// long behind the cleanup; how many went.
pub async fn clean(db: &Db, now: i64) -> Result<u64, sqlx::Error> {
    store::idempotency::delete_expired(db, now).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_one_to_255_visible_ascii_characters() {
        assert!(Key::parse(b"a").is_some());
        assert!(Key::parse(&[b'~'; MAX_KEY_LEN]).is_some());
        assert!(Key::parse(b"order-17/retry_2:x").is_some());
        for bad in [
            &b""[..],
            &[b'a'; MAX_KEY_LEN + 1],
            b"with space",
            b"tab\there",
            "clé".as_bytes(),
            b"nul\0",
        ] {
            assert!(Key::parse(bad).is_none(), "{bad:?}");
        }
        assert_eq!(
            format!("{:?}", Key::parse(b"secret").unwrap()),
            "Key(<redacted>)"
        );
    }

    #[test]
    fn a_sealed_answer_opens_only_for_its_row_and_its_keys() {
        let keys = SiteKeys::from_bytes([1; 32], [2; 32]);
        let seal = Seal::new(&keys, 7, "abc");
        let sealed = seal.seal(r#"{"url":"https://x/i/secret"}"#).unwrap();
        assert!(!sealed.contains("secret"));
        assert_eq!(
            seal.open(&sealed).as_deref(),
            Some(r#"{"url":"https://x/i/secret"}"#)
        );
        assert_eq!(
            Seal::new(&keys, 8, "abc").open(&sealed),
            None,
            "another token"
        );
        assert_eq!(
            Seal::new(&keys, 7, "abd").open(&sealed),
            None,
            "another key"
        );
        let rotated = SiteKeys::from_bytes([1; 32], [3; 32]);
        assert_eq!(Seal::new(&rotated, 7, "abc").open(&sealed), None);
    }

    #[test]
    fn the_fingerprint_covers_method_path_and_body() {
        let keys = SiteKeys::from_bytes([1; 32], [2; 32]);
        let one = fingerprint(&keys, "POST", "/a", b"{}");
        assert_eq!(one, fingerprint(&keys, "POST", "/a", b"{}"));
        assert_ne!(one, fingerprint(&keys, "POST", "/b", b"{}"));
        assert_ne!(one, fingerprint(&keys, "POST", "/a", b"{ }"));
        assert_ne!(one, fingerprint(&keys, "PUT", "/a", b"{}"));
    }
}
