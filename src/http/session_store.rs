//! tower-sessions' store over the app's own database. Session ids are kept as their SHA-256,
//! so the table alone does not let anyone take over a session.

use async_trait::async_trait;
use sha2::{Digest, Sha256};
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{self, SessionStore};

use crate::store::{self, Db};

#[derive(Clone, Debug)]
pub struct DbSessionStore {
    db: Db,
}

impl DbSessionStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

fn key(id: &Id) -> String {
    crate::capability::hex_encode(&Sha256::digest(id.to_string().as_bytes()))
}

fn backend(e: impl std::fmt::Display) -> session_store::Error {
    session_store::Error::Backend(e.to_string())
}

#[async_trait]
impl SessionStore for DbSessionStore {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        loop {
            let data = serde_json::to_string(record)
                .map_err(|e| session_store::Error::Encode(e.to_string()))?;
            if store::sessions::create(
                &self.db,
                &key(&record.id),
                &data,
                record.expiry_date.unix_timestamp(),
            )
            .await
            .map_err(backend)?
            {
                return Ok(());
            }
            record.id = Id::default();
        }
    }

    async fn save(&self, record: &Record) -> session_store::Result<()> {
        let data = serde_json::to_string(record)
            .map_err(|e| session_store::Error::Encode(e.to_string()))?;
        store::sessions::save(
            &self.db,
            &key(&record.id),
            &data,
            record.expiry_date.unix_timestamp(),
        )
        .await
        .map_err(backend)
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        let data = store::sessions::load(&self.db, &key(id), store::now())
            .await
            .map_err(backend)?;
        data.map(|d| {
            serde_json::from_str(&d).map_err(|e| session_store::Error::Decode(e.to_string()))
        })
        .transpose()
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        store::sessions::delete(&self.db, &key(id))
            .await
            .map_err(backend)
    }
}
