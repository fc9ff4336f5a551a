//! What every request reads and no request should query for: the settings and the site keys,
//! held for a few seconds at a time.

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
    pub fn caller_id(&self, link: &str) -> String {
        let mut mac = self.caller_hasher.clone();
        mac.update(link.as_bytes());
        crate::capability::hex_encode(&mac.finalize().into_bytes())
    }
}

pub struct Site {
    db: Db,
    current: RwLock<(Arc<Snapshot>, Instant)>,
}

impl Site {
    pub async fn load(db: Db) -> Result<Self, sqlx::Error> {
        let snapshot = Self::read(&db).await?;
        Ok(Self {
            db,
            current: RwLock::new((Arc::new(snapshot), Instant::now())),
        })
    }

    async fn read(db: &Db) -> Result<Snapshot, sqlx::Error> {
        let settings = Settings::load(db).await?;
        let keys = store::keys::load_or_create(db).await?;
        Ok(Snapshot::new(settings, keys))
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    pub async fn get(&self) -> Arc<Snapshot> {
        {
            let current = self.current.read().unwrap_or_else(|e| e.into_inner());
            if current.1.elapsed() < CACHE_TTL {
                return current.0.clone();
            }
        }
        self.refresh().await
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
