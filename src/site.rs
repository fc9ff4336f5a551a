//! What every request reads and no request should query for: the settings and the site keys,
//! held for a few seconds at a time.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::keys::SiteKeys;
use crate::settings::Settings;
use crate::store::{self, Db};

/// How long a process keeps settings and keys before reading them again. The process that
/// saves a form refreshes at once; every other process (another server on the same database,
/// `orchestra config set`, `orchestra keys rotate`) is seen within this time.
pub const CACHE_TTL: Duration = Duration::from_secs(5);

pub struct Snapshot {
    pub settings: Settings,
    pub keys: SiteKeys,
    /// The keyed hash that names a doorway caller, keyed once per snapshot so that each
    /// request only pays for hashing its own link.
    caller_hasher: Hmac<Sha256>,
}

impl Snapshot {
    pub fn new(settings: Settings, keys: SiteKeys) -> Self {
        let caller_hasher =
            Hmac::<Sha256>::new_from_slice(keys.keyed_hash("doorway-caller", "").as_bytes())
                .expect("HMAC takes any key length");
        Self {
            settings,
            keys,
            caller_hasher,
        }
    }

    /// The flood identifier of a doorway caller: a keyed hash of its whole link, full length.
    pub fn caller_id(&self, link: &str) -> CallerId {
        let mut mac = self.caller_hasher.clone();
        mac.update(link.as_bytes());
        let digest = mac.finalize().into_bytes();
        let mut hex = [0u8; 64];
        for (pair, &b) in hex.chunks_exact_mut(2).zip(digest.iter()) {
            pair.copy_from_slice(&crate::capability::hex_pair(b));
        }
        CallerId(hex)
    }
}

/// A caller's keyed hash as 64 hex characters, on the stack: the refusal path allocates
/// nothing for it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CallerId([u8; 64]);

impl CallerId {
    pub fn as_str(&self) -> &str {
        // Only ASCII hex digits are ever written.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl std::fmt::Display for CallerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for CallerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

pub struct Site {
    db: Db,
    current: RwLock<(Arc<Snapshot>, Instant)>,
    /// Set while one request reads the settings again.
    refreshing: AtomicBool,
}

struct ClearOnDrop<'a>(&'a AtomicBool);

impl Drop for ClearOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl Site {
    pub async fn load(db: Db) -> Result<Self, sqlx::Error> {
        let snapshot = Self::read(&db).await?;
        Ok(Self {
            db,
            current: RwLock::new((Arc::new(snapshot), Instant::now())),
            refreshing: AtomicBool::new(false),
        })
    }

    async fn read(db: &Db) -> Result<Snapshot, sqlx::Error> {
        let settings = Settings::load(db).await?;
        // Read only: the keys are made once, by `crate::open`, not on every refresh.
        let keys = store::keys::load(db).await?;
        Ok(Snapshot::new(settings, keys))
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    /// The settings and keys, read again when older than `CACHE_TTL`. One request reads them;
    /// every other request meanwhile keeps the previous snapshot, so an expiry under a flood
    /// costs one pair of queries, not one per request.
    pub async fn get(&self) -> Arc<Snapshot> {
        let snapshot = {
            let current = self.current.read().unwrap_or_else(|e| e.into_inner());
            if current.1.elapsed() < CACHE_TTL {
                return current.0.clone();
            }
            current.0.clone()
        };
        if self
            .refreshing
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return snapshot;
        }
        // Cleared however this future ends, even if it is dropped half way.
        let _reading = ClearOnDrop(&self.refreshing);
        self.refresh().await
    }

    /// The snapshot without waiting, unless it is stale and nobody is reading it again: the
    /// doorway's guard decides synchronously on it, and takes the slow path (`get`) at most
    /// once per `CACHE_TTL`.
    pub fn fresh(&self) -> Option<Arc<Snapshot>> {
        let current = self.current.read().unwrap_or_else(|e| e.into_inner());
        (current.1.elapsed() < CACHE_TTL || self.refreshing.load(Ordering::Acquire))
            .then(|| current.0.clone())
    }

    /// Reads the database now. On a database error the previous snapshot stays in force and
    /// is retried at the next expiry, rather than failing every request.
    pub async fn refresh(&self) -> Arc<Snapshot> {
        match Self::read(&self.db).await {
            Ok(fresh) => {
                let fresh = Arc::new(fresh);
                *self.current.write().unwrap_or_else(|e| e.into_inner()) =
                    (fresh.clone(), Instant::now());
                fresh
            }
            Err(e) => {
                tracing::error!(error = %e, "could not read settings and keys; keeping the previous ones");
                let mut current = self.current.write().unwrap_or_else(|e| e.into_inner());
                current.1 = Instant::now();
                current.0.clone()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_id_is_the_full_keyed_hash_of_the_link() {
        let keys = SiteKeys::from_bytes([1; 32], [2; 32]);
        let snapshot = Snapshot::new(Settings::default(), keys.clone());
        let id = snapshot.caller_id("l.1..9.abc");
        let mut mac =
            Hmac::<Sha256>::new_from_slice(keys.keyed_hash("doorway-caller", "").as_bytes())
                .unwrap();
        mac.update(b"l.1..9.abc");
        assert_eq!(
            id.as_str(),
            crate::capability::hex_encode(&mac.finalize().into_bytes())
        );
        assert_ne!(id, snapshot.caller_id("l.1..9.abd"));
        let other_salt = Snapshot::new(Settings::default(), SiteKeys::from_bytes([1; 32], [3; 32]));
        assert_ne!(id, other_salt.caller_id("l.1..9.abc"));
    }
}
