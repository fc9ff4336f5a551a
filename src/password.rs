//! Administrator passwords: argon2id with the crate's recommended parameters.

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};

pub fn hash(password: &str) -> Result<String, argon2::password_hash::Error> {
    let salt = SaltString::encode_b64(&crate::keys::random_bytes()[..16])?;
    Ok(Argon2::default()
        .hash_password(password.as_bytes(), &salt)?
        .to_string())
}

/// Whether `password` matches a stored hash; a malformed hash never matches.
pub fn verify(password: &str, stored: &str) -> bool {
    PasswordHash::new(stored)
        .map(|h| {
            Argon2::default()
                .verify_password(password.as_bytes(), &h)
                .is_ok()
        })
        .unwrap_or(false)
}

/// A hash to verify against when the name is unknown, so a wrong name costs what a wrong
/// password costs and the timing does not tell which names exist.
pub fn dummy_hash() -> &'static str {
    static DUMMY: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| hash("no such administrator").unwrap_or_default());
    &DUMMY
}

/// Makes the C allocator give every allocation of a few MiB back to the system when it is freed,
/// as argon2's 19 MiB are. glibc raises its mmap threshold to the size of the largest block freed
/// (up to 32 MiB), after which argon2's memory comes from per-thread arenas and stays there:
/// sign-in attempts spread over the blocking threads then kept up to one 19 MiB block per arena,
/// 16 on two cores, whatever the pool's bound. Setting the threshold fixes it (and turns the
/// raising off), so resident memory is the pool's workers' blocks while they run, and nothing
/// after. Called once, first thing, by the binary; elsewhere a no-op.
pub fn return_large_allocations_to_the_system() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets the allocator's parameters; any value is valid for this one.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 4 << 20);
    }
}

/// Where argon2 runs for the web server: at most `workers` checks at once (each takes about
/// 19 MiB and a core for a moment) and a short queue behind them. Past the queue an attempt is
/// refused at once ([`PoolError::Busy`]) rather than waiting: memory stays bounded whatever arrives.
pub struct Pool {
    workers: std::sync::Arc<tokio::sync::Semaphore>,
    admitted: std::sync::Arc<tokio::sync::Semaphore>,
}

#[derive(Debug, PartialEq, Eq)]
pub enum PoolError {
    /// Every worker and the queue are taken.
    Busy,
    /// The work panicked.
    Failed,
}

impl Pool {
    pub fn new(workers: usize, queue: usize) -> Self {
        let workers = workers.max(1);
        Self {
            workers: std::sync::Arc::new(tokio::sync::Semaphore::new(workers)),
            admitted: std::sync::Arc::new(tokio::sync::Semaphore::new(workers + queue)),
        }
    }

    /// One worker per core, and a queue of two per worker.
    pub fn for_this_machine() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self::new(cores, 2 * cores)
    }

    /// Runs `work` on a blocking thread once a worker is free. Both places are held until the
    /// work ends, even if the caller stops waiting, so nothing runs past the bound.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, PoolError> {
        let admitted = self
            .admitted
            .clone()
            .try_acquire_owned()
            .map_err(|_| PoolError::Busy)?;
        let worker = self
            .workers
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| PoolError::Busy)?;
        tokio::task::spawn_blocking(move || {
            let out = work();
            drop((worker, admitted));
            out
        })
        .await
        .map_err(|_| PoolError::Failed)
    }
}

impl Default for Pool {
    fn default() -> Self {
        Self::for_this_machine()
    }
}
