//! What a flood store is: counting events against an identifier in a rolling window, and
//! nothing else (the guard's own state, such as what it logged, is the guard's).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

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
