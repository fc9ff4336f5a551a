//! The flood service: events registered against an identifier and counted in a rolling window.
//!
//! Callers (the guard, or any other public address) name an event, an identifier that is
//! already a keyed hash, and a window. Two backends implement [`FloodStore`]:
//! - [`MemoryFlood`]: per process, a fixed-size counting table ([`table::CountTable`]);
//! - [`SqlFlood`]: the same table in front of the app's database, which it writes in batches and
//!   reads back on an interval, so every process on one database shares its counts.
//!
//! Both are conservative: a count may be higher than the true number of events (a cell shared
//! with another key, a bucket held slightly past the window), never lower. So "at most N in any
//! rolling window" holds whatever the timing of the requests.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

mod sql;
pub mod table;

pub use sql::SqlFlood;
pub use table::CountTable;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A store failure (SQL backend only). Counting itself never fails: it happens in memory.
#[derive(Debug)]
pub struct FloodError(pub String);

impl std::fmt::Display for FloodError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "flood store: {}", self.0)
    }
}

impl std::error::Error for FloodError {}

/// One tier of an atomic registration: an identifier and the most events it may have.
#[derive(Clone, Copy, Debug)]
pub struct Tier<'a> {
    pub identifier: &'a str,
    pub limit: u64,
}

/// The flood service's interface: counting, and nothing else (what the guard logs, say, is the
/// guard's own state). Identifiers must already be keyed hashes: a store may keep them, print
/// them in diagnostics and share them with other processes.
pub trait FloodStore: Send + Sync + 'static {
    /// Registers one event of `identifier` under `event`, counted for `window`.
    fn register(&self, event: &str, identifier: &str, window: Duration);

    /// How many events of `identifier` fall in the rolling `window` ending now.
    fn count(&self, event: &str, identifier: &str, window: Duration) -> u64;

    /// In one step: when every tier has fewer than its limit of events in `window`, registers
    /// one event for each and returns `Ok`; otherwise registers nothing and returns the index
    /// of the first full tier. Two concurrent callers can never both take the last place.
    fn try_register(&self, event: &str, tiers: &[Tier<'_>], window: Duration) -> Result<(), usize>;

    /// Forgets every event of `identifier` under `event`.
    fn clear(&self, event: &str, identifier: &str);

    /// Pushes pending events to the shared store and reads other processes' counts. Nothing to
    /// do for a per-process backend.
    fn sync(&self) -> BoxFuture<'_, Result<(), FloodError>> {
        Box::pin(async { Ok(()) })
    }

    /// Reads what is stored for the current periods, before the first decision: a restart
    /// keeps the counts. Nothing to do for a per-process backend.
    fn warm_up(&self) -> BoxFuture<'_, Result<usize, FloodError>> {
        Box::pin(async { Ok(0) })
    }

    /// Removes expired events; returns how many stored records went.
    fn collect_garbage(&self) -> BoxFuture<'_, Result<u64, FloodError>>;
}

/// The time the flood service counts in, in milliseconds. Tests drive it by hand.
#[derive(Clone)]
pub struct Clock(Option<Arc<AtomicI64>>);

impl Clock {
    /// The system clock.
    pub fn system() -> Self {
        Self(None)
    }

    /// A clock that only moves when told, starting at `start_ms`.
    pub fn manual(start_ms: i64) -> Self {
        Self(Some(Arc::new(AtomicI64::new(start_ms))))
    }

    pub fn now_ms(&self) -> i64 {
        match &self.0 {
            Some(t) => t.load(Ordering::Relaxed),
            None => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as i64)
                .unwrap_or(0),
        }
    }

    pub fn now_secs(&self) -> i64 {
        self.now_ms().div_euclid(1000)
    }

    /// Moves a manual clock forward; does nothing to the system clock.
    pub fn advance(&self, by: Duration) {
        if let Some(t) = &self.0 {
            t.fetch_add(by.as_millis() as i64, Ordering::Relaxed);
        }
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Clock(manual)"
        } else {
            "Clock(system)"
        })
    }
}

/// The per-process backend: the counting table alone.
pub struct MemoryFlood {
    table: CountTable,
}

impl MemoryFlood {
    pub fn new(cells_per_row: usize, clock: Clock) -> Self {
        Self {
            table: CountTable::new(cells_per_row, clock),
        }
    }
}

impl FloodStore for MemoryFlood {
    fn register(&self, event: &str, identifier: &str, window: Duration) {
        self.table.register(event, identifier, window);
    }

    fn count(&self, event: &str, identifier: &str, window: Duration) -> u64 {
        self.table.count(event, identifier, window)
    }

    fn try_register(&self, event: &str, tiers: &[Tier<'_>], window: Duration) -> Result<(), usize> {
        self.table.try_register(event, tiers, window)
    }

    fn clear(&self, event: &str, identifier: &str) {
        self.table.clear(event, identifier);
    }

    fn collect_garbage(&self) -> BoxFuture<'_, Result<u64, FloodError>> {
        // The table's buckets expire by rolling over; there is nothing stored to remove.
        Box::pin(async { Ok(0) })
    }
}

/// Which backend the operator chose (`ORCHESTRA_FLOOD`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sql,
    Memory,
}

impl Backend {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "sql" => Some(Self::Sql),
            "memory" => Some(Self::Memory),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Sql => "sql",
            Self::Memory => "memory",
        }
    }
}
