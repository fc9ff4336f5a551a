//! The shape every sender of the outbox shares (emails, webhook deliveries): rows claimed by
//! lease (`store::queue`), a lease that outlives its batch, a stop that lets the message in
//! flight finish and hands the rest back, and `every`, the timer loop of the server's chores.

use std::future::Future;
use std::time::{Duration, Instant};

use tokio::sync::watch;

/// A batch's claim: taken at `taken` for `secs` seconds. A sender starts another message only
/// while the longest exchange it may take still ends, with room, before the claim lapses: a
/// lapsed claim is another sender's to take, and the message would go twice.
#[derive(Clone, Copy, Debug)]
pub struct Lease {
    taken: Instant,
    secs: u64,
}

/// What is kept between the end of the longest exchange and the lease's end: the time to
/// record what came of it.
const ROOM: Duration = Duration::from_secs(15);

impl Lease {
    pub fn new(secs: i64) -> Self {
        Lease {
            taken: Instant::now(),
            secs: u64::try_from(secs).unwrap_or(0),
        }
    }

    /// Whether an exchange of at most `longest`, started now, ends (and is recorded) in time.
    pub fn room_for(&self, longest: Duration) -> bool {
        self.taken.elapsed() + longest + ROOM <= Duration::from_secs(self.secs)
    }
}

/// The server's stop, as its chores see it: set once, at a graceful stop. A sender looks at it
/// between messages, never inside one, so a message in flight is finished and recorded.
#[derive(Clone, Debug)]
pub struct Stop(watch::Receiver<bool>);

/// What sets [`Stop`].
#[derive(Debug)]
pub struct StopSwitch(watch::Sender<bool>);

impl Stop {
    /// A switch and the stop it sets.
    pub fn new() -> (StopSwitch, Stop) {
        let (tx, rx) = watch::channel(false);
        (StopSwitch(tx), Stop(rx))
    }

    /// A stop that is never set (`orchestra cron`, tests).
    pub fn never() -> Stop {
        let (tx, rx) = watch::channel(false);
        // The receiver keeps the value; a dropped sender only means no change will come.
        drop(tx);
        Stop(rx)
    }

    pub fn is_set(&self) -> bool {
        *self.0.borrow()
    }

    /// Waits until the stop is set (forever when it never will be).
    pub async fn wait(&mut self) {
        if self.0.wait_for(|set| *set).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

impl StopSwitch {
    pub fn set(&self) {
        self.0.send_replace(true);
    }
}

/// Runs `task` every `interval`, the first at once, until `stop` is set; a run in progress when
/// it is set is finished, never dropped. Runs do not overlap: a long one delays the next.
pub async fn every<F, Fut>(interval: Duration, mut stop: Stop, mut task: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            biased;
            () = stop.wait() => return,
            _ = tick.tick() => {}
        }
        task().await;
        if stop.is_set() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_leaves_room_for_an_exchange_only_while_it_ends_in_time() {
        let lease = Lease::new(60);
        assert!(lease.room_for(Duration::from_secs(15)));
        assert!(lease.room_for(Duration::from_secs(44)));
        assert!(!lease.room_for(Duration::from_secs(46)));
        assert!(!Lease::new(10).room_for(Duration::ZERO));
    }

    #[tokio::test]
    async fn every_finishes_the_run_in_progress_and_stops() {
        let (switch, stop) = Stop::new();
        let runs = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let counted = runs.clone();
        let switch = std::sync::Arc::new(switch);
        let setter = switch.clone();
        every(Duration::from_millis(1), stop, move || {
            let (runs, setter) = (counted.clone(), setter.clone());
            async move {
                // The stop comes mid-run: the run still ends.
                setter.set();
                tokio::time::sleep(Duration::from_millis(20)).await;
                runs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        })
        .await;
        assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(!Stop::never().is_set());
    }
}
