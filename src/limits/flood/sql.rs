//! The SQL backend: the counting table in front of the app's database.
//!
//! Decisions are made in memory, so a refusal never waits on the database. What is shared is
//! the table's cells, not its keys: every registration adds to its key's two cells, and each
//! sync writes what this process added to each (event, cell, bucket) since the last one, in
//! one batch, to the `flood` table (its `identifier` the cell's name, [`cell_name`]). A
//! count-min table merges by addition, so the stored rows are every process's tables added up,
//! and their number is bounded by the table's size (events × cells × live buckets × processes),
//! whatever floods the site: a million made-up links cost the rows a quiet day's links do.
//! Each sync also reads what other processes stored for the cells of the keys this process
//! answered, and adds it to its own (`CountTable::set_remote`).
//!
//! Every process on one database must hash keys alike ([`super::table::key_hash`], the same in
//! every build) and use the same `ORCHESTRA_FLOOD_CELLS`: a process reads only cells of its
//! own table's size.
//!
//! Bound (docs/interaction.md): with P processes syncing every S, a key can be answered past its
//! limit N only by what other processes answered since their last sync, and never more than
//! P × N in a window in all. A process that cannot reach the database keeps counting on its own
//! (at most N for itself), and catches up at the first sync that succeeds.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use super::clock::Clock;
use super::store::{BoxFuture, FloodError, FloodStore, Tier};
use super::table::{self, CountTable, bucket_of};
use crate::store::Db;
use crate::store::flood::CountRow;

/// Cells whose others' counts are read at each sync, at most (a tenth of a second of the
/// sync's statement at a million rows, docs/performance.md).
const MAX_WATCHED: usize = 5_000;
/// Events a journal names; the guard's addresses are far fewer.
const MAX_EVENTS: usize = 64;

/// What this process added to one (event, cell, bucket) since the last sync.
#[derive(Clone, Copy)]
struct Pending {
    width: i64,
    window_ms: i64,
    count: i64,
}

/// (event's place in `Journal::events`, cell, bucket)
type PendingKey = (usize, usize, i64);

#[derive(Default)]
struct Journal {
    /// The events named so far, in the order first seen.
    events: Vec<String>,
    pending: HashMap<PendingKey, Pending>,
    /// (event, cell) pairs whose others' counts the next sync reads.
    watched: HashSet<(usize, usize)>,
}

impl Journal {
    fn event(&mut self, event: &str) -> Option<usize> {
        if let Some(i) = self.events.iter().position(|e| e == event) {
            return Some(i);
        }
        if self.events.len() >= MAX_EVENTS {
            return None;
        }
        self.events.push(event.to_owned());
        Some(self.events.len() - 1)
    }

    fn watch(&mut self, event: usize, cells: &[usize]) {
        for &cell in cells {
            if self.watched.len() < MAX_WATCHED {
                self.watched.insert((event, cell));
            }
        }
    }

    fn add(&mut self, key: PendingKey, row: Pending) {
        self.pending
            .entry(key)
            .and_modify(|p| p.count += row.count)
            .or_insert(row);
    }
}

pub struct SqlFlood {
    table: CountTable,
    db: Db,
    node: String,
    journal: Mutex<Journal>,
}

/// The name a cell is stored under: `c`, the table's cells a row, `.`, the cell's number.
pub fn cell_name(cells_per_row: usize, cell: usize) -> String {
    format!("c{cells_per_row}.{cell}")
}

/// A stored identifier read as a cell: (cells a row, cell), or `None` for a key stored whole
/// (rows written before the store kept cells).
fn parse_cell_name(identifier: &str) -> Option<(usize, usize)> {
    let (size, cell) = identifier.strip_prefix('c')?.split_once('.')?;
    Some((size.parse().ok()?, cell.parse().ok()?))
}

/// The names of the two cells a key is stored in, for a table of `configured_cells`
/// (`ORCHESTRA_FLOOD_CELLS`): what a reader outside the server (`orchestra admin list`) sums.
pub fn stored_cells(configured_cells: usize, event: &str, identifier: &str) -> [String; 2] {
    let per_row = table::cells_per_row_for(configured_cells);
    table::cells_of(table::key_hash(event, identifier), per_row).map(|c| cell_name(per_row, c))
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

    /// Journals one event in a key's cells. The journal holds one entry per (event, cell,
    /// bucket) touched since the last sync, so it is bounded by the table's size, not by the
    /// number of keys.
    fn journal_event(&self, journal: &mut Journal, event: &str, cells: &[usize], window: Duration) {
        let Some(e) = journal.event(event) else {
            return;
        };
        let (bucket, width) = bucket_of(self.table.clock().now_ms(), window);
        let row = Pending {
            width,
            window_ms: window.as_millis() as i64,
            count: 1,
        };
        for &cell in cells {
            journal.add((e, cell, bucket), row);
        }
        journal.watch(e, cells);
    }

    async fn sync_now(&self) -> Result<(), FloodError> {
        let (pending, watched, events) = {
            let mut journal = self.journal();
            (
                std::mem::take(&mut journal.pending),
                std::mem::take(&mut journal.watched),
                journal.events.clone(),
            )
        };
        let err = |e: sqlx::Error| FloodError(e.to_string());
        if pending.is_empty() && watched.is_empty() {
            // Nothing to write or read: ask the database anyway, so that a fault is seen (and
            // reported) while the site is quiet or only refusing, not at the next answer.
            return self.db.ping().await.map_err(err);
        }
        let per_row = self.table.cells_per_row();
        let rows = Rows {
            pending: pending.iter(),
            events: &events,
            per_row,
        };
        if let Err(e) = crate::store::flood::add_counts(&self.db, &self.node, rows).await {
            // Put the counts back so the next sync that works writes them; those expired
            // meanwhile go, so a long fault holds at most a window's buckets of each cell.
            let now = self.table.clock().now_ms();
            let mut journal = self.journal();
            for (key, row) in pending {
                if (key.2 + 1) * row.width + row.window_ms > now {
                    journal.add(key, row);
                }
            }
            return Err(err(e));
        }
        if watched.is_empty() {
            return Ok(());
        }
        let now = self.table.clock().now_ms();
        let names: Vec<(usize, usize, String)> = watched
            .iter()
            .map(|&(e, cell)| (e, cell, cell_name(per_row, cell)))
            .collect();
        let keys: Vec<(&str, &str)> = names
            .iter()
            .map(|(e, _, name)| (events[*e].as_str(), name.as_str()))
            .collect();
        let others = crate::store::flood::others_counts(&self.db, &self.node, now, &keys)
            .await
            .map_err(err)?;
        let mut by_cell: HashMap<(&str, usize), Vec<(i64, u64)>> = HashMap::new();
        for row in &others {
            if let Some((_, cell)) = parse_cell_name(&row.identifier) {
                by_cell
                    .entry((row.event.as_str(), cell))
                    .or_default()
                    .push((row.expiration, row.count.max(0) as u64));
            }
        }
        for (e, cell, _) in &names {
            let event = events[*e].as_str();
            let counts = by_cell.remove(&(event, *cell)).unwrap_or_default();
            self.table.set_remote(event, *cell, counts);
        }
        Ok(())
    }

    /// Rows read at start, the busiest first: room for every cell twice over.
    fn warm_up_rows(&self) -> i64 {
        (self.table.cells_per_row() as i64 * 4).max(50_000)
    }
}

/// A sync's rows, made as they are written: a statement's worth of strings at a time, not the
/// whole batch's (`tests/it/memory.rs`).
struct Rows<'a> {
    pending: std::collections::hash_map::Iter<'a, PendingKey, Pending>,
    events: &'a [String],
    per_row: usize,
}

impl Iterator for Rows<'_> {
    type Item = CountRow;

    fn next(&mut self) -> Option<CountRow> {
        let (&(e, cell, bucket), p) = self.pending.next()?;
        Some(CountRow {
            event: self.events[e].clone(),
            identifier: cell_name(self.per_row, cell),
            bucket_start: bucket * p.width,
            expiration: (bucket + 1) * p.width + p.window_ms,
            count: p.count,
        })
    }
}

impl FloodStore for SqlFlood {
    fn register(&self, event: &str, identifier: &str, window: Duration) {
        let cells = self.table.cells(self.table.key_hash(event, identifier));
        self.table.register_cells(cells, window);
        self.journal_event(&mut self.journal(), event, &cells, window);
    }

    fn count(&self, event: &str, identifier: &str, window: Duration) -> u64 {
        let cells = self.table.cells(self.table.key_hash(event, identifier));
        let mut journal = self.journal();
        if let Some(e) = journal.event(event) {
            journal.watch(e, &cells);
        }
        drop(journal);
        self.table.count(event, identifier, window)
    }

    fn try_register(&self, event: &str, tiers: &[Tier<'_>], window: Duration) -> Result<(), usize> {
        let (outcome, cells) = self.table.try_register_cells(event, tiers, window);
        if outcome.is_ok() {
            let mut journal = self.journal();
            for cells in &cells[..tiers.len().min(cells.len())] {
                self.journal_event(&mut journal, event, cells, window);
            }
        }
        // A refusal leaves the journal alone: a refused key is at its limit here already, and
        // other processes' counts can only add to that. Its cells are watched again from its
        // next answered request, so the refusal path takes one lock at most, the table's.
        outcome
    }

    fn sync(&self) -> BoxFuture<'_, Result<(), FloodError>> {
        Box::pin(self.sync_now())
    }

    fn warm_up(&self) -> BoxFuture<'_, Result<usize, FloodError>> {
        Box::pin(async move {
            let now = self.table.clock().now_ms();
            let rows = crate::store::flood::current_counts(&self.db, now, self.warm_up_rows())
                .await
                .map_err(|e| FloodError(e.to_string()))?;
            let per_row = self.table.cells_per_row();
            let mut by_cell: HashMap<(&str, usize), Vec<(i64, u64)>> = HashMap::new();
            for row in &rows {
                let count = row.count.max(0) as u64;
                match parse_cell_name(&row.identifier) {
                    Some((size, cell)) if size == per_row => by_cell
                        .entry((row.event.as_str(), cell))
                        .or_default()
                        .push((row.expiration, count)),
                    // Another table size's cells: not this table's cells (see the module).
                    Some(_) => {}
                    // A key stored whole by an earlier version: its count goes to its cells
                    // until it expires; no sync reads it again.
                    None => {
                        let hash = self.table.key_hash(&row.event, &row.identifier);
                        for cell in self.table.cells(hash) {
                            self.table.carry(&row.event, cell, row.expiration, count);
                        }
                    }
                }
            }
            let cells = by_cell.len();
            for ((event, cell), counts) in by_cell {
                self.table.set_remote(event, cell, counts);
            }
            Ok(cells)
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
