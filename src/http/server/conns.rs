//! The open connections, counted in all and per client address, each with its phase, so that
//! a full cap or exhausted descriptors close the longest-open idle connections instead of
//! refusing a newcomer or failing `accept`.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

/// Where a connection stands. Written by its own task only (its reads and its requests), read
/// by the accept loop to choose what to shed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    /// Open, nothing read yet.
    Fresh = 0,
    /// Between requests: the last answer is made, nothing of the next one read.
    Idle = 1,
    /// Part of a request's head has arrived.
    Head = 2,
    /// A request is being answered, from its whole head to its answer made.
    Busy = 3,
}

/// A client address as the per-address cap counts it: IPv4 whole, IPv6 by its /64, which one
/// subscriber usually holds whole (as `proxy::counted_group` counts sign-in attempts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Group {
    V4(u32),
    V6(u64),
}

impl Group {
    pub fn of(ip: IpAddr) -> Self {
        match ip.to_canonical() {
            IpAddr::V4(v4) => Group::V4(u32::from(v4)),
            IpAddr::V6(v6) => Group::V6((u128::from(v6) >> 64) as u64),
        }
    }
}

/// One open connection.
pub struct Conn {
    id: u64,
    /// `None` for a trusted proxy's connection: not capped per address.
    group: Option<Group>,
    phase: AtomicU8,
    /// Counts the requests answered, so that each idle period gets a deadline of its own.
    answered: AtomicU32,
    /// Chosen to be shed: its task closes it (finishing a request that began meanwhile).
    shedding: AtomicBool,
    pub shed: Notify,
}

impl Conn {
    fn new(id: u64, group: Option<Group>) -> Self {
        Self {
            id,
            group,
            phase: AtomicU8::new(Phase::Fresh as u8),
            answered: AtomicU32::new(0),
            shedding: AtomicBool::new(false),
            shed: Notify::new(),
        }
    }

    /// A connection counted nowhere (one being answered a refusal).
    pub fn detached() -> Self {
        Self::new(0, None)
    }

    pub fn phase(&self) -> Phase {
        match self.phase.load(Ordering::Relaxed) {
            0 => Phase::Fresh,
            1 => Phase::Idle,
            2 => Phase::Head,
            _ => Phase::Busy,
        }
    }

    pub fn set(&self, phase: Phase) {
        self.phase.store(phase as u8, Ordering::Relaxed);
    }

    /// How many requests this connection has answered.
    pub fn answered(&self) -> u32 {
        self.answered.load(Ordering::Relaxed)
    }

    fn idle(&self) -> bool {
        matches!(self.phase(), Phase::Fresh | Phase::Idle)
    }

    pub fn is_shed(&self) -> bool {
        self.shedding.load(Ordering::Relaxed)
    }
}

/// A request in progress, from its head read whole until its answer is made (dropped).
pub struct Busy(Arc<Conn>);

impl Busy {
    pub fn begin(conn: &Arc<Conn>) -> Self {
        conn.set(Phase::Busy);
        Busy(conn.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.answered.fetch_add(1, Ordering::Relaxed);
        self.0.set(Phase::Idle);
    }
}

#[derive(Clone, Copy, Default)]
struct Count {
    open: usize,
    /// Of `open`, those chosen to be shed: no longer counted against a cap.
    leaving: usize,
}

impl Count {
    fn staying(self) -> usize {
        self.open - self.leaving
    }
}

#[derive(Default)]
struct Inner {
    /// By id, which is the order they were accepted in: the first idle one found is the
    /// longest open.
    open: BTreeMap<u64, Arc<Conn>>,
    leaving: usize,
    groups: HashMap<Group, Count>,
    next_id: u64,
    /// Connections closed since memory was last given back.
    closed: usize,
}

impl Inner {
    /// Chooses the longest-open idle connection that `which` accepts, and tells it to close.
    fn shed_one(&mut self, which: impl Fn(&Conn) -> bool) -> bool {
        let Some(conn) = self
            .open
            .values()
            .find(|c| !c.is_shed() && c.idle() && which(c))
            .cloned()
        else {
            return false;
        };
        conn.shedding.store(true, Ordering::Relaxed);
        self.leaving += 1;
        if let Some(group) = conn.group
            && let Some(count) = self.groups.get_mut(&group)
        {
            count.leaving += 1;
        }
        conn.shed.notify_one();
        true
    }
}

/// Memory is given back once this many connections closed since the last time (or all did).
const TRIM_AFTER: usize = 16;

pub struct Registry {
    inner: Mutex<Inner>,
    cap: usize,
    per_address: usize,
}

impl Registry {
    pub fn new(cap: usize, per_address: usize) -> Self {
        Self {
            inner: Mutex::default(),
            cap: cap.max(1),
            per_address: per_address.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A place for a new connection from `group`: under both caps, or made by shedding an idle
    /// connection (of the same address, for its cap). `None` when every connection in the way
    /// is at work.
    pub fn admit(&self, group: Option<Group>) -> Option<Arc<Conn>> {
        let mut inner = self.lock();
        if let Some(group) = group {
            let count = inner.groups.get(&group).copied().unwrap_or_default();
            if count.staying() >= self.per_address && !inner.shed_one(|c| c.group == Some(group)) {
                return None;
            }
        }
        if inner.open.len() - inner.leaving >= self.cap && !inner.shed_one(|_| true) {
            return None;
        }
        inner.next_id += 1;
        let conn = Arc::new(Conn::new(inner.next_id, group));
        inner.open.insert(conn.id, conn.clone());
        if let Some(group) = group {
            inner.groups.entry(group).or_default().open += 1;
        }
        Some(conn)
    }

    /// Sheds up to `n` idle connections, longest open first; returns how many.
    pub fn shed_idle(&self, n: usize) -> usize {
        let mut inner = self.lock();
        (0..n).take_while(|_| inner.shed_one(|_| true)).count()
    }

    /// Tells every connection to close once its request in progress is answered.
    pub fn close_all(&self) {
        for conn in self.lock().open.values() {
            conn.shed.notify_one();
        }
    }

    /// Called once by each connection's task as it ends.
    pub fn remove(&self, conn: &Conn) {
        let mut inner = self.lock();
        if inner.open.remove(&conn.id).is_none() {
            return;
        }
        let shed = conn.is_shed();
        if shed {
            inner.leaving -= 1;
        }
        if let Some(group) = conn.group
            && let Some(count) = inner.groups.get_mut(&group)
        {
            count.open -= 1;
            if shed {
                count.leaving -= 1;
            }
            if count.open == 0 {
                inner.groups.remove(&group);
            }
        }
        inner.closed += 1;
    }

    /// Whether connections closed since the last call: enough of them (`TRIM_AFTER`), or all.
    pub fn take_closed(&self) -> bool {
        let mut inner = self.lock();
        let closed = std::mem::take(&mut inner.closed);
        closed >= TRIM_AFTER || (closed > 0 && inner.open.is_empty())
    }

    /// Connections shed but not yet closed.
    pub fn leaving(&self) -> usize {
        self.lock().leaving
    }

    pub fn open(&self) -> usize {
        self.lock().open.len()
    }
}

/// Removes its connection from the registry when its task ends, however it ends.
pub struct Registered<'a> {
    pub registry: &'a Registry,
    pub conn: Arc<Conn>,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.registry.remove(&self.conn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(last: u8) -> Option<Group> {
        Some(Group::of(IpAddr::from([192, 0, 2, last])))
    }

    #[test]
    fn a_full_cap_sheds_the_longest_open_idle_connection() {
        let registry = Registry::new(3, 10);
        let first = registry.admit(v4(1)).unwrap();
        let second = registry.admit(v4(2)).unwrap();
        let third = registry.admit(v4(3)).unwrap();
        first.set(Phase::Busy);
        second.set(Phase::Idle);
        third.set(Phase::Fresh);
        let fourth = registry.admit(v4(4)).expect("an idle one made room");
        assert!(!first.is_shed(), "a connection at work is never shed");
        assert!(second.is_shed(), "the longest-open idle one goes");
        assert!(!third.is_shed());
        // Until it has closed, the shed one no longer counts against the cap.
        third.set(Phase::Head);
        fourth.set(Phase::Busy);
        assert!(registry.admit(v4(5)).is_none(), "every one left is at work");
        registry.remove(&second);
        assert_eq!(registry.open(), 3);
        assert!(registry.admit(v4(5)).is_none());
        registry.remove(&first);
        assert!(registry.admit(v4(5)).is_some());
    }

    #[test]
    fn an_address_at_its_cap_sheds_its_own_idle_connections_only() {
        let registry = Registry::new(100, 2);
        let other = registry.admit(v4(9)).unwrap();
        let a = registry.admit(v4(1)).unwrap();
        let b = registry.admit(v4(1)).unwrap();
        a.set(Phase::Busy);
        b.set(Phase::Head);
        assert!(registry.admit(v4(1)).is_none(), "both at work");
        assert!(
            registry.admit(v4(2)).is_some(),
            "another address is not held up"
        );
        b.set(Phase::Idle);
        assert!(registry.admit(v4(1)).is_some());
        assert!(b.is_shed() && !a.is_shed() && !other.is_shed());
    }

    #[test]
    fn a_trusted_proxy_is_capped_only_in_all() {
        let registry = Registry::new(5, 1);
        for _ in 0..5 {
            registry.admit(None).unwrap().set(Phase::Busy);
        }
        assert!(registry.admit(None).is_none());
    }

    #[test]
    fn ipv6_counts_by_its_64_and_mapped_ipv4_as_ipv4() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::2".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(Group::of(a), Group::of(b));
        assert_ne!(Group::of(a), Group::of(c));
        let mapped: IpAddr = "::ffff:192.0.2.1".parse().unwrap();
        assert_eq!(Group::of(mapped), Group::of(IpAddr::from([192, 0, 2, 1])));
    }

    #[test]
    fn shedding_on_exhaustion_takes_idle_ones_in_order() {
        let registry = Registry::new(10, 10);
        let conns: Vec<_> = (0..4).map(|i| registry.admit(v4(i)).unwrap()).collect();
        conns[1].set(Phase::Busy);
        assert_eq!(registry.shed_idle(2), 2);
        assert!(conns[0].is_shed() && !conns[1].is_shed() && conns[2].is_shed());
        assert_eq!(registry.shed_idle(5), 1);
    }
}
