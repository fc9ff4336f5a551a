//! The flood service: events registered against an identifier and counted in a rolling window.
//!
//! Callers (the guard, or any other public address) name an event, an identifier that is
//! already a keyed hash, and a window. Two backends implement [`FloodStore`]:
//! - [`MemoryFlood`]: per process, a fixed-size counting table ([`table::CountTable`]);
//! - [`SqlFlood`]: the same table in front of the app's database, whose cells (not its keys)
//!   it writes in batches and reads back on an interval, so every process on one database
//!   shares its counts.
//!
//! Both are conservative: a count may be higher than the true number of events (a cell shared
//! with another key, a bucket held slightly past the window), never lower. So "at most N in any
//! rolling window" holds whatever the timing of the requests.

mod clock;
mod memory;
mod sql;
mod store;
pub mod table;

pub use clock::Clock;
pub use memory::MemoryFlood;
pub use sql::{SqlFlood, stored_cells};
pub use store::{BoxFuture, FloodError, FloodStore, Tier};
pub use table::CountTable;

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
