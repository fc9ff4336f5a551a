//! Administrator passwords: argon2id with the crate's recommended parameters.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub fn hash(password: &str) -> Result<String, argon2::password_hash::Error> {
    let salt = SaltString::encode_b64(&crate::domain::keys::random_bytes()[..16])?;
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
    workers: Arc<Semaphore>,
    admitted: Arc<Semaphore>,
    /// How long the last piece of work took, in microseconds; 0 before the first.
    last_micros: Arc<AtomicU64>,
    /// One check timed off the pool, for a wait asked before any work was timed.
    calibration: tokio::sync::OnceCell<Duration>,
}

/// A place taken in the pool's queue ([`Pool::admit`]): the sign-in takes one before it counts
/// anything, so a full pool's refusal is counted nowhere. Dropped unused, the place is free again.
pub struct Admission {
    admitted: OwnedSemaphorePermit,
    workers: Arc<Semaphore>,
    last_micros: Arc<AtomicU64>,
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
            workers: Arc::new(Semaphore::new(workers)),
            admitted: Arc::new(Semaphore::new(workers + queue)),
            last_micros: Arc::default(),
            calibration: tokio::sync::OnceCell::new(),
        }
    }

    /// One worker per core, and a queue of two per worker.
    pub fn for_this_machine() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self::new(cores, 2 * cores)
    }

    /// A place in the queue, or [`PoolError::Busy`] at once when there is none.
    pub fn admit(&self) -> Result<Admission, PoolError> {
        let admitted = self
            .admitted
            .clone()
            .try_acquire_owned()
            .map_err(|_| PoolError::Busy)?;
        Ok(Admission {
            admitted,
            workers: self.workers.clone(),
            last_micros: self.last_micros.clone(),
        })
    }

    /// Whether an [`admit`](Self::admit) now would be refused.
    pub fn is_full(&self) -> bool {
        self.admitted.available_permits() == 0
    }

    /// Runs `work` on a blocking thread once a worker is free (`admit`, then `Admission::run`).
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, PoolError> {
        self.admit()?.run(work).await
    }

    /// Waits as long as the last check took, without a worker, a core or argon2's memory: how
    /// the sign-in answers a name no account has in the time a wrong password takes. Before
    /// any check was timed, one check of the dummy hash is timed, once per process (callers
    /// meanwhile wait for it), off the pool so that a burst of first callers cannot fill it.
    pub async fn as_long_as_a_check(&self) {
        let wait = match self.last_micros.load(Ordering::Relaxed) {
            0 => {
                *self
                    .calibration
                    .get_or_init(|| async {
                        tokio::task::spawn_blocking(|| {
                            let started = Instant::now();
                            verify("", dummy_hash());
                            started.elapsed()
                        })
                        .await
                        .unwrap_or(Duration::from_millis(50))
                    })
                    .await
            }
            micros => Duration::from_micros(micros),
        };
        tokio::time::sleep(wait).await;
    }
}

impl Admission {
    /// Runs `work` on a blocking thread once a worker is free. Both places are held until the
    /// work ends, even if the caller stops waiting, so nothing runs past the bound.
    pub async fn run<T: Send + 'static>(
        self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, PoolError> {
        let worker = self
            .workers
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| PoolError::Busy)?;
        let (admitted, last_micros) = (self.admitted, self.last_micros);
        tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let out = work();
            let micros = started.elapsed().as_micros().clamp(1, u128::from(u64::MAX)) as u64;
            last_micros.store(micros, Ordering::Relaxed);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_pool_refuses_at_once_and_a_dropped_place_is_free_again() {
        let pool = Pool::new(1, 1);
        let first = pool.admit().unwrap();
        let second = pool.admit().unwrap();
        assert!(pool.is_full());
        assert_eq!(pool.admit().err(), Some(PoolError::Busy));
        drop(second);
        assert!(!pool.is_full());
        assert_eq!(first.run(|| 7).await, Ok(7));
        assert!(pool.admit().is_ok(), "a finished run gives its place back");
    }

    #[tokio::test]
    async fn a_check_is_timed_and_the_wait_for_a_missing_name_is_as_long() {
        let pool = Pool::new(1, 0);
        let started = Instant::now();
        pool.as_long_as_a_check().await;
        let calibrated = *pool
            .calibration
            .get()
            .expect("the first wait timed a check");
        assert!(started.elapsed() >= calibrated);
        assert!(!pool.is_full(), "the wait took no place in the pool");
        pool.run(|| verify("x", dummy_hash())).await.unwrap();
        let timed = pool.last_micros.load(Ordering::Relaxed);
        assert!(timed > 0, "a check on the pool is timed");
        let started = Instant::now();
        pool.as_long_as_a_check().await;
        assert!(started.elapsed() >= Duration::from_micros(timed));
    }
}
