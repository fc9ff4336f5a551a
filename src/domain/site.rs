//! What every request reads and no request should query for: the settings and the site keys,
//! held for a few seconds at a time.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::domain::keys::SiteKeys;
use crate::domain::settings::Settings;
use crate::store::{self, Db};

/// How long a process keeps settings and keys before reading them again. The process that
/// saves a form refreshes at once; every other process (another server on the same database,
/// `orchestra config set`, `orchestra keys rotate`) is seen within this time.
pub const CACHE_TTL: Duration = Duration::from_secs(5);

pub struct Snapshot {
    pub settings: Settings,
    pub keys: SiteKeys,
    /// The link keys retired by rotations and still kept, newest first: they only recognise a
    /// voided link (`domain::rotation::genuine`), never accept one.
    pub retired: Vec<SiteKeys>,
    /// The keyed hash that names a doorway caller, keyed once per snapshot so that each
    /// request only pays for hashing its own link.
    caller_hasher: Hmac<Sha256>,
    /// `keys.token_hasher()`, keyed once: the API's fast refusal.
    token_hasher: Hmac<Sha256>,
    /// Callers named by `caller_id`, over every snapshot of the site (`Site::callers_hashed`).
    hashed: Arc<HashCount>,
}

/// How many doorway callers were named by their keyed hash, an HMAC each: what the doorway's
/// off-state saves, made visible. One cache line per thread's shard, so the refusal path adds
/// one relaxed increment to a line no other core writes.
#[derive(Default)]
pub struct HashCount([ShardLine; crate::limits::guard::SHARDS]);

#[repr(align(128))]
#[derive(Default)]
struct ShardLine(AtomicU64);

impl HashCount {
    fn add(&self) {
        self.0[crate::limits::guard::shard_index()]
            .0
            .fetch_add(1, Ordering::Relaxed);
    }

    fn read(&self) -> u64 {
        self.0.iter().map(|l| l.0.load(Ordering::Relaxed)).sum()
    }
}

impl Snapshot {
    pub fn new(settings: Settings, keys: SiteKeys) -> Self {
        let caller_hasher =
            Hmac::<Sha256>::new_from_slice(keys.keyed_hash("doorway-caller", "").as_bytes())
                .expect("HMAC takes any key length");
        let token_hasher = keys.token_hasher();
        Self {
            settings,
            keys,
            retired: Vec::new(),
            caller_hasher,
            token_hasher,
            hashed: Arc::default(),
        }
    }

    /// The keyed hash an API token's text is stored under (`api::bearer_hash`), as its bytes;
    /// `None` for a text that cannot be a token. The API's fast refusal and `gate` both name a
    /// token by this, so `api::Seen` holds what the refusal looks for.
    pub fn token_key(&self, text: &str) -> Option<crate::domain::api::TokenKey> {
        if !crate::domain::api::could_be_token(text) {
            return None;
        }
        let mut mac = self.token_hasher.clone();
        mac.update(text.as_bytes());
        Some(mac.finalize().into_bytes().into())
    }

    /// The flood identifier of a doorway caller: a keyed hash of its whole link, full length.
    pub fn caller_id(&self, link: &str) -> CallerId {
        self.hashed.add();
        let mut mac = self.caller_hasher.clone();
        mac.update(link.as_bytes());
        hex64(&mac.finalize().into_bytes())
    }
}

/// 32 bytes as 64 hex digits, on the stack.
fn hex64(digest: &[u8]) -> CallerId {
    let mut hex = [0u8; 64];
    hex::encode_to_slice(digest, &mut hex).expect("a 32-byte digest fills 64 digits");
    CallerId(hex)
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
    shared: Arc<Shared>,
}

/// What the background refresh shares with the requests that read the snapshot.
struct Shared {
    db: Db,
    current: RwLock<Current>,
    /// Tickets handed to reads of the database and to saves, in the order they began: a
    /// snapshot is installed only over one of an earlier ticket (`Shared::install`).
    tickets: AtomicU64,
    /// Set while a background task reads the settings again.
    refreshing: AtomicBool,
    /// This site among others in the process (tests run several), for the threads' copies.
    id: u64,
    /// Moved on by every new snapshot: a thread's copy of an older one is out of date.
    generation: AtomicU64,
    /// What every snapshot of this site counts its callers' hashes into.
    hashed: Arc<HashCount>,
}

/// The snapshot in force, when it was installed, and the ticket of the read or save that made
/// it.
struct Current {
    snapshot: Arc<Snapshot>,
    at: Instant,
    ticket: u64,
}

/// Sites made so far in this process.
static SITES: AtomicU64 = AtomicU64::new(0);

/// One thread's copy of its site's snapshot (`Site::with_snapshot`): (site, generation,
/// snapshot).
type Copy = (u64, u64, Arc<Snapshot>);

thread_local! {
    static COPY: RefCell<Option<Copy>> = const { RefCell::new(None) };
}

struct ClearOnDrop<'a>(&'a AtomicBool);

impl Drop for ClearOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl Site {
    pub async fn load(db: Db) -> Result<Self, sqlx::Error> {
        let hashed = Arc::<HashCount>::default();
        let snapshot = Self::read(&db, &hashed).await?;
        let shared = Arc::new(Shared {
            db,
            current: RwLock::new(Current {
                snapshot: Arc::new(snapshot),
                at: Instant::now(),
                ticket: 0,
            }),
            tickets: AtomicU64::new(1),
            refreshing: AtomicBool::new(false),
            id: SITES.fetch_add(1, Ordering::Relaxed),
            generation: AtomicU64::new(0),
            hashed,
        });
        // Every `CACHE_TTL`, read again in the background, so that the doorway's guard, which
        // reads a thread's copy (`with_snapshot`) and no clock, sees other processes' changes.
        // The task ends with the site.
        let weak = Arc::downgrade(&shared);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(CACHE_TTL).await;
                let Some(shared) = weak.upgrade() else {
                    return;
                };
                if shared
                    .refreshing
                    .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    let _reading = ClearOnDrop(&shared.refreshing);
                    shared.refresh().await;
                }
            }
        });
        Ok(Self { shared })
    }

    /// Runs `f` on the snapshot without waiting and without a shared write: each thread keeps
    /// its own copy, checked against the site's generation with one relaxed load, so a request
    /// on the doorway's refusal path touches no lock, no reference count and no clock here.
    /// Sees a new snapshot as soon as `refresh` or the background task made it.
    pub fn with_snapshot<R>(&self, f: impl FnOnce(&Snapshot) -> R) -> R {
        let shared = &*self.shared;
        let generation = shared.generation.load(Ordering::Acquire);
        let mut f = Some(f);
        let done = COPY.with(|copy| {
            let copy = copy.try_borrow().ok()?;
            let (site, seen, snapshot) = copy.as_ref()?;
            (*site == shared.id && *seen == generation)
                .then(|| f.take().map(|f| f(snapshot)))
                .flatten()
        });
        if let Some(done) = done {
            return done;
        }
        let snapshot = self.now();
        // Kept for the next request on this thread, unless `f` of an outer call on this very
        // thread is still reading the old copy (then this call simply uses its own).
        COPY.with(|copy| {
            if let Ok(mut copy) = copy.try_borrow_mut() {
                *copy = Some((shared.id, generation, snapshot.clone()));
            }
        });
        let f = f.expect("`f` runs once: the copy above did not run it");
        f(&snapshot)
    }

    async fn read(db: &Db, hashed: &Arc<HashCount>) -> Result<Snapshot, sqlx::Error> {
        let settings = Settings::load(db).await?;
        // Read only: the keys are made once, by `crate::open`, not on every refresh.
        let keys = store::keys::load(db).await?;
        let mut snapshot = Snapshot::new(settings, keys);
        snapshot.retired = store::keys::retired(db, store::now()).await?;
        snapshot.hashed = hashed.clone();
        Ok(snapshot)
    }

    pub fn db(&self) -> &Db {
        &self.shared.db
    }

    /// How many doorway callers this site named by their keyed hash since it was loaded: with
    /// nothing counting, the doorway names none (tests/doorway.rs).
    pub fn callers_hashed(&self) -> u64 {
        self.shared.hashed.read()
    }

    /// The settings and keys, never waiting on the database: when they are older than
    /// `CACHE_TTL`, one background task reads them again while every request keeps the
    /// snapshot it has. A database that hangs or fails therefore never holds up a request
    /// here (a refusal during a database fault is as fast as without one).
    pub async fn get(&self) -> Arc<Snapshot> {
        self.now()
    }

    fn now(&self) -> Arc<Snapshot> {
        let (snapshot, stale) = {
            let current = self
                .shared
                .current
                .read()
                .unwrap_or_else(|e| e.into_inner());
            (current.snapshot.clone(), current.at.elapsed() >= CACHE_TTL)
        };
        if stale
            && self
                .shared
                .refreshing
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    let shared = self.shared.clone();
                    runtime.spawn(async move {
                        let _reading = ClearOnDrop(&shared.refreshing);
                        shared.refresh().await;
                    });
                }
                Err(_) => self.shared.refreshing.store(false, Ordering::Release),
            }
        }
        snapshot
    }

    /// Reads the database now (a form that saved settings wants them at once). On a database
    /// error the previous snapshot stays in force and is retried at the next expiry.
    pub async fn refresh(&self) -> Arc<Snapshot> {
        self.shared.refresh().await
    }

    /// The settings `Settings::save` just stored, in place of the current ones, with the
    /// current keys: a save is answered without reading back what it wrote.
    pub fn saved(&self, settings: Settings) -> Arc<Snapshot> {
        // The save is committed: any read that begins after this ticket sees it.
        let ticket = self.shared.ticket();
        let keys = self.shared.read_current().snapshot.keys.clone();
        let mut fresh = Snapshot::new(settings, keys);
        fresh.hashed = self.shared.hashed.clone();
        self.shared.install(ticket, Arc::new(fresh))
    }
}

impl Shared {
    async fn refresh(&self) -> Arc<Snapshot> {
        let ticket = self.ticket();
        match Site::read(&self.db, &self.hashed).await {
            Ok(fresh) => self.install(ticket, Arc::new(fresh)),
            Err(e) => {
                tracing::error!(error = %e, "could not read settings and keys; keeping the previous ones");
                let mut current = self.write_current();
                current.at = Instant::now();
                current.snapshot.clone()
            }
        }
    }

    fn ticket(&self) -> u64 {
        self.tickets.fetch_add(1, Ordering::AcqRel)
    }

    /// Puts `fresh` in force unless a snapshot of a later ticket already is: a background read
    /// that began before a save and ends after it must not put the old settings back (it did,
    /// for up to `CACHE_TTL`). What is in force is returned either way.
    fn install(&self, ticket: u64, fresh: Arc<Snapshot>) -> Arc<Snapshot> {
        let mut current = self.write_current();
        if ticket < current.ticket {
            return current.snapshot.clone();
        }
        *current = Current {
            snapshot: fresh.clone(),
            at: Instant::now(),
            ticket,
        };
        // Moved on while the lock is held, so a thread's copy never outlives what it copied.
        self.generation.fetch_add(1, Ordering::Release);
        fresh
    }

    fn read_current(&self) -> std::sync::RwLockReadGuard<'_, Current> {
        self.current.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write_current(&self) -> std::sync::RwLockWriteGuard<'_, Current> {
        self.current.write().unwrap_or_else(|e| e.into_inner())
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
        assert_eq!(id.as_str(), hex::encode(mac.finalize().into_bytes()));
        assert_ne!(id, snapshot.caller_id("l.1..9.abd"));
        let other_salt = Snapshot::new(Settings::default(), SiteKeys::from_bytes([1; 32], [3; 32]));
        assert_ne!(id, other_salt.caller_id("l.1..9.abc"));
    }

    /// A read that began before a save and ends after it is older than the save: it must not
    /// put the old settings back in force (it did, until the next refresh, `CACHE_TTL` later).
    #[tokio::test]
    async fn a_read_that_began_before_a_save_does_not_undo_it() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite:{}", dir.path().join("site.db").display());
        let db = crate::open(&url).await.unwrap();
        let site = Site::load(db.clone()).await.unwrap();
        let before = site.get().await.settings.site_name.clone();
        // The background refresh takes its ticket and reads the settings as they are...
        let ticket = site.shared.ticket();
        let stale = Arc::new(Site::read(&db, &site.shared.hashed).await.unwrap());
        // ...an administrator saves meanwhile...
        let saved = Settings::save(&db, &[("orchestra.site_name", "Renamed")])
            .await
            .expect("a valid name");
        site.saved(saved);
        // ...and the refresh ends after the save.
        let in_force = site.shared.install(ticket, stale);
        assert_eq!(in_force.settings.site_name, "Renamed", "was {before}");
        assert_eq!(site.get().await.settings.site_name, "Renamed");
        // A read that begins after the save is newer, and is installed.
        let fresh = site.refresh().await;
        assert_eq!(fresh.settings.site_name, "Renamed");
        let n = site.shared.read_current().ticket;
        assert!(n > ticket, "the fresh read's ticket is in force");
    }

    #[test]
    fn a_token_key_is_the_hash_its_token_is_stored_under() {
        let keys = SiteKeys::from_bytes([1; 32], [2; 32]);
        let snapshot = Snapshot::new(Settings::default(), keys.clone());
        let text = "orch_0123456789abcdef";
        assert_eq!(
            snapshot
                .token_key(text)
                .map(|k| crate::domain::api::stored_hash(&k)),
            crate::domain::api::bearer_hash(&keys, text)
        );
        assert!(snapshot.token_key("not a token").is_none());
        assert!(
            snapshot
                .token_key(&format!("orch_{}", "a".repeat(200)))
                .is_none()
        );
    }
}
