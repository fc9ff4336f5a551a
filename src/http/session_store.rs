//! tower-sessions' store over the app's own database. A row holds what the session needs (its
//! data and its expiry) under a keyed hash of the session id, and never the id itself: the
//! database alone, or a copy of it, opens no session. The id comes back from the cookie on load.
//!
//! The hash is keyed with the site keys, so `orchestra keys rotate` signs every administrator
//! out (their rows no longer match): a rotation answers a leak, and sessions are part of it.

use std::sync::Arc;

use async_trait::async_trait;
use tower_sessions::cookie::time::OffsetDateTime;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{self, SessionStore};

use crate::domain::site::Site;
use crate::store::{self, Db};

/// The keyed hash's purpose: a session id's hash is not any other secret's.
const PURPOSE: &str = "session";

#[derive(Clone)]
pub struct DbSessionStore {
    db: Db,
    site: Arc<Site>,
}

impl std::fmt::Debug for DbSessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DbSessionStore")
    }
}

impl DbSessionStore {
    pub fn new(db: Db, site: Arc<Site>) -> Self {
        Self { db, site }
    }

    async fn key(&self, id: &Id) -> String {
        key_of(&self.site.get().await.keys, id)
    }
}

/// The keyed hash a session's row is named by.
pub fn key_of(keys: &crate::domain::keys::SiteKeys, id: &Id) -> String {
    keys.keyed_hash(PURPOSE, &id.to_string())
}

/// Where the browser's family waits in a session's data, for its row's `agent`.
pub const AGENT_KEY: &str = "agent";

/// The row's columns beside its data: whose session it is and the browser's family.
fn meta(record: &Record) -> store::sessions::Meta {
    store::sessions::Meta {
        admin_id: record
            .data
            .get(crate::http::context::ADMIN_KEY)
            .and_then(serde_json::Value::as_i64),
        epoch: record
            .data
            .get(crate::http::context::EPOCH_KEY)
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(0),
        agent: record
            .data
            .get(AGENT_KEY)
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned(),
    }
}

/// The row's `data`: the record's map alone, without its id.
fn encode(record: &Record) -> session_store::Result<String> {
    serde_json::to_string(&record.data).map_err(|e| session_store::Error::Encode(e.to_string()))
}

fn backend(e: impl std::fmt::Display) -> session_store::Error {
    session_store::Error::Backend(e.to_string())
}

#[async_trait]
impl SessionStore for DbSessionStore {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        let data = encode(record)?;
        loop {
            let key = self.key(&record.id).await;
            let expiry = record.expiry_date.unix_timestamp();
            let (meta, now) = (meta(record), store::now());
            if store::sessions::create_with(&self.db, &key, &data, expiry, &meta, now)
                .await
                .map_err(backend)?
            {
                return Ok(());
            }
            record.id = Id::default();
        }
    }

    async fn save(&self, record: &Record) -> session_store::Result<()> {
        store::sessions::save_with(
            &self.db,
            &self.key(&record.id).await,
            &encode(record)?,
            record.expiry_date.unix_timestamp(),
            &meta(record),
            store::now(),
        )
        .await
        .map_err(backend)
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        let row = store::sessions::load(&self.db, &self.key(id).await, store::now())
            .await
            .map_err(backend)?;
        let Some((data, expiry)) = row else {
            return Ok(None);
        };
        let decode = |e: &dyn std::fmt::Display| session_store::Error::Decode(e.to_string());
        Ok(Some(Record {
            id: *id,
            data: serde_json::from_str(&data).map_err(|e| decode(&e))?,
            expiry_date: OffsetDateTime::from_unix_timestamp(expiry).map_err(|e| decode(&e))?,
        }))
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        store::sessions::delete(&self.db, &self.key(id).await)
            .await
            .map_err(backend)
    }
}
