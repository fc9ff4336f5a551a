//! Requests the site has taken on come before refusals.
//!
//! A refusal is the cheapest answer the doorway gives, yet a flood of them can keep every worker
//! busy. A request that passed the guard leaves its worker at each database query (SQLite's run
//! on threads of their own, PostgreSQL's in another process), and when it comes back, the query's
//! thread and then the request itself wait for a CPU that the flood holds: the kernel hands a busy
//! core over only at its next tick, a few milliseconds later, once per query.
//!
//! So while the site is answering any request it took on, a refusal waits until it is not (at
//! most [`MAX_DEFER`]). The flooding connections then have nothing to run, the worker goes idle,
//! and the query's thread and the request get the CPU at once. When nothing is in progress, as
//! under a pure flood, a refusal pays one atomic read for this and is answered at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::response::Response;
use tokio::sync::Notify;

/// The longest a refusal waits for the site's work in progress. Long enough for the few queries
/// of a page; short enough that a refused caller still hears quickly under steady traffic.
pub const MAX_DEFER: Duration = Duration::from_millis(20);

/// How many requests the site is answering, how many refusals wait for that to fall to none,
/// and the signal that it has.
#[derive(Default)]
pub struct InProgress {
    count: AtomicUsize,
    waiting: AtomicUsize,
    idle: Notify,
}

/// One request in progress, counted until it is dropped (answered, or abandoned by its caller).
/// `http::common` counts every request the router answers, so on the doorway only requests that
/// passed the guard are counted; refusals never are.
pub struct Working(Arc<InProgress>);

impl Drop for Working {
    fn drop(&mut self) {
        // The signal takes a lock: only when a refusal waits for it, not after every request.
        // Sequentially consistent with `idle_within`: a refusal that saw this request in
        // progress counted itself as waiting first, so its count is seen here.
        if self.0.count.fetch_sub(1, Ordering::SeqCst) == 1
            && self.0.waiting.load(Ordering::SeqCst) > 0
        {
            self.0.idle.notify_waiters();
        }
    }
}

/// One refusal counted as waiting, until it stops (woken, timed out or abandoned).
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl InProgress {
    /// Counts one request until the returned value is dropped.
    pub fn enter(self: &Arc<Self>) -> Working {
        self.count.fetch_add(1, Ordering::SeqCst);
        Working(Arc::clone(self))
    }

    /// Whether any request is being answered.
    pub fn busy(&self) -> bool {
        self.count.load(Ordering::SeqCst) > 0
    }

    /// Waits until no request is being answered, or `max` has passed.
    pub async fn idle_within(&self, max: Duration) {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let _waiting = Waiting(&self.waiting);
        // Registered before the check, so a fall to none between the two is not missed.
        let idle = self.idle.notified();
        tokio::pin!(idle);
        idle.as_mut().enable();
        if !self.busy() {
            return;
        }
        let _ = tokio::time::timeout(max, idle).await;
    }
}

/// A refusal decided before routing (`crate::http::front`), and whether it lets the site's
/// work in progress go first: here, beside what it defers to, so that the doorway's guard and
/// the API's fast refusal make one without importing the front that calls them.
pub struct Refusal {
    pub response: Response,
    pub defer: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn idle_at_once_when_nothing_is_in_progress() {
        let work = Arc::new(InProgress::default());
        assert!(!work.busy());
        // Would take the whole wait if it did not see that nothing is in progress.
        tokio::time::timeout(
            Duration::from_secs(5),
            work.idle_within(Duration::from_secs(60)),
        )
        .await
        .expect("no wait when idle");
    }

    #[tokio::test]
    async fn a_refusal_waits_for_work_in_progress_then_goes() {
        let work = Arc::new(InProgress::default());
        let working = work.enter();
        assert!(work.busy());
        let waiter = tokio::spawn({
            let work = Arc::clone(&work);
            async move { work.idle_within(Duration::from_secs(60)).await }
        });
        tokio::task::yield_now().await;
        assert!(
            !waiter.is_finished(),
            "waits while a request is in progress"
        );
        drop(working);
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("goes when the work is done")
            .unwrap();
        assert!(!work.busy());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn no_waiting_refusal_is_left_behind_when_work_comes_and_goes() {
        let work = Arc::new(InProgress::default());
        for _ in 0..200 {
            let working = work.enter();
            let waiters: Vec<_> = (0..4)
                .map(|_| {
                    let work = Arc::clone(&work);
                    tokio::spawn(async move { work.idle_within(Duration::from_secs(60)).await })
                })
                .collect();
            // Let the waiters count themselves, and most of them park.
            while work.waiting.load(Ordering::SeqCst) < 4 {
                tokio::task::yield_now().await;
            }
            tokio::time::sleep(Duration::from_micros(200)).await;
            // During or after the waiters' checks: each must go at once, not at 60 s.
            drop(working);
            for waiter in waiters {
                tokio::time::timeout(Duration::from_secs(5), waiter)
                    .await
                    .expect("a waiting refusal was not woken")
                    .unwrap();
            }
        }
        assert_eq!(work.waiting.load(Ordering::SeqCst), 0);
        assert!(!work.busy());
    }

    #[tokio::test(start_paused = true)]
    async fn a_refusal_never_waits_longer_than_its_bound() {
        let work = Arc::new(InProgress::default());
        let _stuck = work.enter();
        let started = tokio::time::Instant::now();
        work.idle_within(MAX_DEFER).await;
        assert_eq!(started.elapsed(), MAX_DEFER);
    }
}
