//! What every request reads and no request should query for: the settings and the site keys,
//! held for a few seconds at a time.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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
    ///
    /// HMAC-SHA256, kept after weighing SipHash (docs/performance.md): a single 128-bit
    /// SipHash-2-4 would serve as the keyed function and saves about 0.1 µs a request, but
    /// names callers in 32 hex digits where the table, the logs and other processes know 64;
    /// two of them, to keep 64, cost what the HMAC costs with the CPU's SHA extensions.
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
    /// Which `Site` this is, for the per-thread copies (`with_fresh`): tests run many at once.
    id: u64,
    /// Bumped whenever `current` gets a new snapshot.
    generation: AtomicU64,
    /// When `current` expires, in nanoseconds since `epoch`.
    expires_ns: AtomicU64,
    epoch: Instant,
}

/// Each thread's copy of the snapshot it last used: which site, which generation.
struct ThreadCopy {
    site: u64,
    generation: u64,
    snapshot: Arc<Snapshot>,
}

thread_local! {
    static THREAD_COPY: RefCell<Option<ThreadCopy>> = const { RefCell::new(None) };
}

static NEXT_SITE: AtomicU64 = AtomicU64::new(1);

struct ClearOnDrop<'a>(&'a AtomicBool);

impl Drop for ClearOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl Site {
    pub async fn load(db: Db) -> Result<Self, sqlx::Error> {
        let snapshot = Self::read(&db).await?;
        let site = Self {
            db,
            current: RwLock::new((Arc::new(snapshot), Instant::now())),
            refreshing: AtomicBool::new(false),
            id: NEXT_SITE.fetch_add(1, Ordering::Relaxed),
            generation: AtomicU64::new(0),
            expires_ns: AtomicU64::new(0),
            epoch: Instant::now(),
        };
        site.expire_from_now();
        Ok(site)
    }

    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// The current snapshot expires `CACHE_TTL` from now. Called with `current` written.
    fn expire_from_now(&self) {
        self.expires_ns.store(
            self.now_ns() + CACHE_TTL.as_nanos() as u64,
            Ordering::Release,
        );
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

    /// Calls `f` on the snapshot without waiting, unless it is stale and nobody is reading it
    /// again (then `None`): the doorway's guard decides synchronously on it, and takes the slow
    /// path (`get`) at most once per `CACHE_TTL`.
    ///
    /// Every request of a flood comes here, on every worker at once. So each thread keeps its
    /// own copy of the snapshot, checked against a generation that only a refresh writes: the
    /// usual request reads one clock and two shared words, and writes nothing another core
    /// reads (no lock, no reference count). A refresh is seen by the next request on every
    /// thread. `f` must not call `with_fresh` again.
    pub fn with_fresh<R>(&self, f: impl FnOnce(&Snapshot) -> R) -> Option<R> {
        if self.now_ns() >= self.expires_ns.load(Ordering::Acquire)
            && !self.refreshing.load(Ordering::Acquire)
        {
            return None;
        }
        let generation = self.generation.load(Ordering::Acquire);
        THREAD_COPY.with(|copy| {
            let current = matches!(
                &*copy.borrow(),
                Some(c) if c.site == self.id && c.generation == generation
            );
            if !current {
                // The generation is read under the lock, so it goes with this snapshot.
                let (generation, snapshot) = {
                    let current = self.current.read().unwrap_or_else(|e| e.into_inner());
                    (self.generation.load(Ordering::Acquire), current.0.clone())
                };
                *copy.borrow_mut() = Some(ThreadCopy {
                    site: self.id,
                    generation,
                    snapshot,
                });
            }
            copy.borrow().as_ref().map(|c| f(&c.snapshot))
        })
    }

    /// Reads the database now. On a database error the previous snapshot stays in force and
    /// is retried at the next expiry, rather than failing every request.
    pub async fn refresh(&self) -> Arc<Snapshot> {
        match Self::read(&self.db).await {
            Ok(fresh) => {
                let fresh = Arc::new(fresh);
                let mut current = self.current.write().unwrap_or_else(|e| e.into_inner());
                *current = (fresh.clone(), Instant::now());
                self.generation.fetch_add(1, Ordering::AcqRel);
                self.expire_from_now();
                fresh
            }
            Err(e) => {
                tracing::error!(error = %e, "could not read settings and keys; keeping the previous ones");
                let mut current = self.current.write().unwrap_or_else(|e| e.into_inner());
                current.1 = Instant::now();
                self.expire_from_now();
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

    /// The guard's per-thread copies: a refresh (the saving process's, or the next one after
    /// an expiry) is seen by the next request on every thread, not only the one that read it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_refresh_is_seen_at_once_by_every_thread() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::open(&format!("sqlite:{}", dir.path().join("o.db").display()))
            .await
            .unwrap();
        let site = Arc::new(Site::load(db.clone()).await.unwrap());
        let per_link = |site: &Site| {
            site.with_fresh(|s| s.settings.interaction_limits().per_caller)
                .expect("fresh")
        };
        let on_another_thread = |site: &Arc<Site>| {
            let site = Arc::clone(site);
            std::thread::spawn(move || per_link(&site)).join().unwrap()
        };
        let before = per_link(&site);
        assert_eq!(on_another_thread(&site), before);
        Settings::save(&db, &[("interaction.limits.per_link", "7")])
            .await
            .unwrap()
            .unwrap();
        assert_eq!(per_link(&site), before, "the copy lives until a refresh");
        site.refresh().await;
        assert_eq!(per_link(&site), 7);
        assert_eq!(on_another_thread(&site), 7);
        // Another site in the same process is not confused with this one.
        Settings::save(&db, &[("interaction.limits.per_link", "9")])
            .await
            .unwrap()
            .unwrap();
        let other = Site::load(db).await.unwrap();
        assert_eq!(per_link(&other), 9);
        assert_eq!(per_link(&site), 7);
    }
}
