//! Versions of a workflow: every save makes one, and none ever changes. An instance keeps the
//! version it started on until it ends, so the doorway may keep parsed versions in memory.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use super::Definition;
use crate::error::Error;
use crate::store::{self, Db};

/// Parsed versions by id. Versions are immutable, so an entry never goes stale; the map is
/// bounded so that no number of versions makes it grow without end.
#[derive(Default)]
pub struct Cache {
    map: RwLock<HashMap<i64, Arc<Definition>>>,
}

/// Entries kept before the cache starts again from empty. A site has a few dozen versions; this
/// is a bound, not a working size.
const MAX_ENTRIES: usize = 4096;

impl Cache {
    /// The version's definition, read from the database the first time only.
    pub async fn get(&self, db: &Db, version: i64) -> Result<Arc<Definition>, Error> {
        if let Some(d) = self
            .map
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&version)
        {
            return Ok(d.clone());
        }
        let row = store::workflows::version(db, version)
            .await?
            .ok_or(Error::Corrupt(
                "an instance names a version that does not exist",
            ))?;
        let definition = Arc::new(
            Definition::from_json(&row.definition)
                .ok_or(Error::Corrupt("a stored workflow version does not parse"))?,
        );
        let mut map = self.map.write().unwrap_or_else(|e| e.into_inner());
        if map.len() >= MAX_ENTRIES {
            map.clear();
        }
        map.insert(version, definition.clone());
        Ok(definition)
    }
}
