//! The per-process flood store.

use std::time::Duration;

use super::clock::Clock;
use super::store::{BoxFuture, FloodError, FloodStore, Tier};
use super::table::CountTable;

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

    fn collect_garbage(&self) -> BoxFuture<'_, Result<u64, FloodError>> {
        // The table's buckets expire by rolling over; there is nothing stored to remove.
        Box::pin(async { Ok(0) })
    }
}
