//! The time the flood stores and the guard count in.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

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
