//! The SQL backend: the counting table in front of the app's database.
//!
//! Decisions are made in memory, so a refusal never waits on the database. Every registration
//! is journalled and written to the `flood` table in one batch per sync; each sync also reads
//! what other processes counted for the keys this process answered, and adds it to its own.
//!
//! Bound (docs/interaction.md): with P processes syncing every S, a key can be answered past its
//! limit N only by what other processes answered since their last sync, and never more than
//! P × N in a window in all. A process that cannot reach the database keeps counting on its own
//! (at most N for itself), and catches up at the first sync that succeeds.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use super::clock::Clock;
use super::store::{BoxFuture, FloodError, FloodStore, Tier};
use super::table::{CountTable, bucket_of};
use crate::store::Db;

/// Pending rows kept between syncs at most; past that, new keys' events are counted locally
/// only (the totals, always present, keep being written).
const MAX_PENDING: usize = 50_000;
/// Keys whose remote counts are refreshed at each sync, at most.
const MAX_WATCHED: usize = 5_000;
/// Stored rows read at start, the busiest first.
const WARM_UP_ROWS: i64 = 50_000;

use crate::store::flood::CountRow as PendingRow;

struct Watched {
    event: String,
    identifier: String,
    window: Duration,
}

#[derive(Default)]
struct Journal {
    pending: HashMap<(u64, i64), PendingRow>,
    watched: HashMap<u64, Watched>,
}

pub struct SqlFlood {
    table: CountTable,
    db: Db,
    node: String,
    journal: Mutex<Journal>,
}

/// This process's name among those sharing the flood table: 16 random hex digits. (Not
/// `domain::keys`: the limiter sits below the domain and imports nothing of it.)
fn node_name() -> String {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).expect("the operating system's random source is unavailable");
    hex::encode(bytes)
}

impl SqlFlood {
    pub fn new(db: Db, cells_per_row: usize, clock: Clock) -> Self {
        Self {
            table: CountTable::new(cells_per_row, clock),
            db,
            node: node_name(),
            journal: Mutex::new(Journal::default()),
        }
    }

    fn journal(&self) -> std::sync::MutexGuard<'_, Journal> {
        self.journal.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn note(journal: &mut Journal, hash: u64, event: &str, identifier: &str, window: Duration) {
        if journal.watched.len() < MAX_WATCHED {
            journal.watched.entry(hash).or_insert_with(|| Watched {
                event: event.to_owned(),
                identifier: identifier.to_owned(),
                window,
            });
        }
    }

    fn journal_event(
        &self,
        journal: &mut Journal,
        hash: u64,
        event: &str,
        identifier: &str,
        window: Duration,
    ) {
        let (bucket, width) = bucket_of(self.table.clock().now_ms(), window);
        let window_ms = window.as_millis() as i64;
        let full = journal.pending.len() >= MAX_PENDING;
        match journal.pending.get_mut(&(hash, bucket)) {
            Some(row) => row.count += 1,
            None if !full => {
                journal.pending.insert(
                    (hash, bucket),
                    PendingRow {
                        event: event.to_owned(),
                        identifier: identifier.to_owned(),
                        bucket_start: bucket * width,
                        expiration: (bucket + 1) * width + window_ms,
                        count: 1,
                    },
                );
            }
            None => {}
        }
        Self::note(journal, hash, event, identifier, window);
    }

    async fn sync_now(&self) -> Result<(), FloodError> {
        let (pending, watched) = {
            let mut journal = self.journal();
            (
                std::mem::take(&mut journal.pending),
                std::mem::take(&mut journal.watched),
            )
        };
        let err = |e: sqlx::Error| FloodError(e.to_string());
        if pending.is_empty() && watched.is_empty() {
            // Nothing to write or read: ask the database anyway, so that a fault is seen (and
            // reported) while the site is quiet or only refusing, not at the next answer.
            return self.db.ping().await.map_err(err);
        }
        let rows: Vec<((u64, i64), PendingRow)> = pending.into_iter().collect();
        let result =
            crate::store::flood::add_counts(&self.db, &self.node, rows.iter().map(|(_, row)| row))
                .await;
        if let Err(e) = result {
            // Put the counts back so the next sync that works writes them.
            let mut journal = self.journal();
            for (key, row) in rows {
                match journal.pending.get_mut(&key) {
                    Some(p) => p.count += row.count,
                    None => {
                        journal.pending.insert(key, row);
                    }
                }
            }
            return Err(err(e));
        }
        if watched.is_empty() {
            return Ok(());
        }
        let now = self.table.clock().now_ms();
        let keys: Vec<(&str, &str)> = watched
            .values()
            .map(|w| (w.event.as_str(), w.identifier.as_str()))
            .collect();
        let others = crate::store::flood::others_counts(&self.db, &self.node, now, &keys)
            .await
            .map_err(err)?;
        let mut by_key: HashMap<u64, Vec<(i64, u64)>> = HashMap::new();
        for row in others {
            let hash = self.table.key_hash(&row.event, &row.identifier);
            by_key
                .entry(hash)
                .or_default()
                .push((row.bucket_start, row.count.max(0) as u64));
        }
        for (hash, w) in &watched {
            let buckets = by_key.remove(hash).unwrap_or_default();
            self.table.set_remote(*hash, w.window, &buckets);
        }
        Ok(())
    }
}

impl FloodStore for SqlFlood {
    fn register(&self, event: &str, identifier: &str, window: Duration) {
        self.table.register(event, identifier, window);
        let hash = self.table.key_hash(event, identifier);
        self.journal_event(&mut self.journal(), hash, event, identifier, window);
    }

    fn count(&self, event: &str, identifier: &str, window: Duration) -> u64 {
        let hash = self.table.key_hash(event, identifier);
        Self::note(&mut self.journal(), hash, event, identifier, window);
        self.table.count(event, identifier, window)
    }

    fn try_register(&self, event: &str, tiers: &[Tier<'_>], window: Duration) -> Result<(), usize> {
        let (outcome, hashes) = self.table.try_register_hashed(event, tiers, window);
        if outcome.is_ok() {
            let mut journal = self.journal();
            for (tier, &hash) in tiers.iter().zip(&hashes) {
                self.journal_event(&mut journal, hash, event, tier.identifier, window);
            }
        }
        // A refusal leaves the journal alone: a refused key is at its limit here already, and
        // other processes' counts can only add to that. It is watched again from its next
        // answered request, so the refusal path takes one lock at most, the table's.
        outcome
    }

    fn sync(&self) -> BoxFuture<'_, Result<(), FloodError>> {
        Box::pin(self.sync_now())
    }

    fn warm_up(&self) -> BoxFuture<'_, Result<usize, FloodError>> {
        Box::pin(async move {
            let now = self.table.clock().now_ms();
            let rows = crate::store::flood::current_counts(&self.db, now, WARM_UP_ROWS)
                .await
                .map_err(|e| FloodError(e.to_string()))?;
            // A row's window is not stored, but its span is: a bucket of `window / BUCKETS`
            // and the window after it (`journal_event`), so the window is 10/11 of the span.
            let mut by_key: HashMap<u64, (Duration, Vec<(i64, u64)>)> = HashMap::new();
            for row in &rows {
                let span = row.expiration - row.bucket_start;
                let width = span / (super::table::BUCKETS + 1);
                if width <= 0 {
                    continue;
                }
                let window = Duration::from_millis((span - width) as u64);
                let hash = self.table.key_hash(&row.event, &row.identifier);
                by_key
                    .entry(hash)
                    .or_insert_with(|| (window, Vec::new()))
                    .1
                    .push((row.bucket_start, row.count.max(0) as u64));
            }
            let keys = by_key.len();
            for (hash, (window, buckets)) in by_key {
                self.table.set_remote(hash, window, &buckets);
            }
            Ok(keys)
        })
    }

    fn collect_garbage(&self) -> BoxFuture<'_, Result<u64, FloodError>> {
        Box::pin(async move {
            let now = self.table.clock().now_ms();
            crate::store::flood::delete_expired(&self.db, now)
                .await
                .map_err(|e| FloodError(e.to_string()))
        })
    }
}
