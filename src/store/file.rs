//! The SQLite file under a running process: whether it is still the file this process opened
//! (not deleted, not replaced), and whether it can be written.
//!
//! A deleted file keeps answering through the open descriptors, so writes would "succeed" into
//! a file nobody will see again: the watch notices the inode changed and the site refuses
//! writes. A connection SQLite opened while the file could not be written stays read-only for
//! good: the watch notes when that was, and the pool drops every connection at least that old
//! once the file can be written again, so the site recovers by itself.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug)]
pub struct Watch {
    path: PathBuf,
    /// (device, inode) of the file opened.
    id: Option<(u64, u64)>,
    vanished: AtomicBool,
    started: Instant,
    /// When the file was last seen not writable, in ms since `started` plus one (0: never).
    read_only_at: AtomicU64,
    writable: AtomicBool,
}

impl Watch {
    pub fn new(path: &str) -> Option<Self> {
        if path.starts_with(':') {
            return None; // `:memory:`
        }
        let path = PathBuf::from(path);
        let id = identity(&path);
        let watch = Self {
            path,
            id,
            vanished: AtomicBool::new(false),
            started: Instant::now(),
            read_only_at: AtomicU64::new(0),
            writable: AtomicBool::new(true),
        };
        watch.check();
        Some(watch)
    }

    /// Looks at the file again: one `stat` and one `access`, a few microseconds.
    pub fn check(&self) {
        if self.vanished.load(Ordering::Relaxed) {
            return;
        }
        let now = identity(&self.path);
        if now.is_none() || now != self.id {
            tracing::error!(
                "the database file was deleted or replaced while in use: refusing writes until restart"
            );
            self.vanished.store(true, Ordering::Relaxed);
            return;
        }
        let writable = writable(&self.path);
        if !writable {
            let at = self.started.elapsed().as_millis() as u64 + 1;
            self.read_only_at.fetch_max(at, Ordering::Relaxed);
        }
        self.writable.store(writable, Ordering::Relaxed);
    }

    /// Whether the file (and its WAL, when there is one) can be written now. As root, files
    /// are writable whatever their mode, and this says so.
    pub fn writable_now(&self) -> bool {
        let mut wal = self.path.clone().into_os_string();
        wal.push("-wal");
        let wal = PathBuf::from(wal);
        writable(&self.path) && (!wal.exists() || writable(&wal))
    }

    /// Sticky: a replaced file does not come back by being put back.
    pub fn vanished(&self) -> bool {
        self.vanished.load(Ordering::Relaxed)
    }

    /// Whether a pooled connection of this age may be used: not if it was opened before the
    /// file was last seen read-only and the file can be written now (it may be read-only).
    pub fn keep(&self, age: Duration) -> bool {
        let seen = self.read_only_at.load(Ordering::Relaxed);
        if seen == 0 || !self.writable.load(Ordering::Relaxed) {
            return true;
        }
        let opened_at = self.started.elapsed().saturating_sub(age).as_millis() as u64 + 1;
        opened_at > seen
    }
}

#[cfg(unix)]
fn identity(path: &std::path::Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn identity(path: &std::path::Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|_| (0, 0))
}

/// `access(W_OK)`: what SQLite will find when it opens the file, root's immutable files
/// included. Never an `open` of the file: closing a descriptor to a SQLite file would drop
/// the locks SQLite holds on it.
#[cfg(unix)]
fn writable(path: &std::path::Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return true;
    };
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

#[cfg(not(unix))]
fn writable(path: &std::path::Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.permissions().readonly())
}
