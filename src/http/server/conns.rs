//! The open connections, counted in all and per client address, each with its phase, so that
//! a full cap or exhausted descriptors close a connection that is getting nowhere instead of
//! refusing a newcomer or failing `accept`: first the one that has waited longest for a whole
//! request head (fresh, or part of a head read), then the longest-open idle one. A newcomer is
//! refused only when every connection in its way is answering a request. Under pressure (the
//! table more than `PRESSED` full) the heads' deadline shortens (`Registry::shed_slow`).

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

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

/// The group a request's connection is counted in, put in each request's extensions: what
/// `http::body` counts an address's share of the bodies' budget by. `None` for a trusted
/// proxy's connection, which is counted only in all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counted(pub Option<Group>);

/// Milliseconds on this process's own clock, for the order connections are shed in.
fn now_ms() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// One open connection.
pub struct Conn {
    id: u64,
    /// `None` for a trusted proxy's connection: not capped per address.
    group: Option<Group>,
    phase: AtomicU8,
    /// Since when it has waited for a whole head (`now_ms`): its opening for its first request,
    /// the first byte of the head for a later one. Meaningful while fresh or in a head.
    since: AtomicU64,
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
            since: AtomicU64::new(now_ms()),
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

    /// The first bytes of a head arrived: a later request's head is waited for from now, the
    /// first one still from the opening (as its deadline is).
    pub fn head_begins(&self) {
        match self.phase() {
            Phase::Fresh => self.set(Phase::Head),
            Phase::Idle => {
                self.since.store(now_ms(), Ordering::Relaxed);
                self.set(Phase::Head);
            }
            Phase::Head | Phase::Busy => {}
        }
    }

    fn since(&self) -> u64 {
        self.since.load(Ordering::Relaxed)
    }

    /// The group it is counted in.
    pub fn counted(&self) -> Counted {
        Counted(self.group)
    }

    /// How many requests this connection has answered.
    pub fn answered(&self) -> u32 {
        self.answered.load(Ordering::Relaxed)
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
    /// Chooses, among the connections `which` accepts, the one getting nowhere longest, and
    /// tells it to close: the one that has waited longest for a whole head (fresh, or part of a
    /// head read), else the longest-open idle one; never one answering a request.
    fn shed_one(&mut self, which: impl Fn(&Conn) -> bool) -> bool {
        let mut waiting: Option<&Arc<Conn>> = None;
        let mut idle: Option<&Arc<Conn>> = None;
        for conn in self.open.values() {
            if conn.is_shed() || !which(conn) {
                continue;
            }
            match conn.phase() {
                Phase::Busy => {}
                Phase::Idle => {
                    idle.get_or_insert(conn);
                }
                Phase::Fresh | Phase::Head => {
                    if waiting.is_none_or(|w| conn.since() < w.since()) {
                        waiting = Some(conn);
                    }
                    // On its first head, it has waited since its opening: every connection
                    // after it in the map opened later, so has waited less.
                    if conn.answered() == 0 {
                        break;
                    }
                }
            }
        }
        let Some(conn) = waiting.or(idle).cloned() else {
            return false;
        };
        self.mark_shed(&conn);
        true
    }

    fn mark_shed(&mut self, conn: &Conn) {
        conn.shedding.store(true, Ordering::Relaxed);
        self.leaving += 1;
        if let Some(group) = conn.group
            && let Some(count) = self.groups.get_mut(&group)
        {
            count.leaving += 1;
        }
        conn.shed.notify_one();
    }
}

/// Past this part of the cap in all (three quarters), the table is under pressure: a head
/// waited for longer than the shortened header deadline is closed (`Registry::shed_slow`).
pub const PRESSED: (usize, usize) = (3, 4);

/// The header deadline under pressure: a fifth of the configured one, and not under a second
/// (or the configured one, if that is shorter).
pub fn pressed_header_timeout(header: Duration) -> Duration {
    (header / 5).max(header.min(Duration::from_secs(1)))
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

    /// A place for a new connection from `group`: under both caps, or made by shedding a
    /// connection getting nowhere (of the same address, for its cap; see `Inner::shed_one`).
    /// `None` when every connection in the way is answering a request.
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

    /// Sheds up to `n` connections getting nowhere, in the order `admit` does; returns how many.
    pub fn shed(&self, n: usize) -> usize {
        let mut inner = self.lock();
        (0..n).take_while(|_| inner.shed_one(|_| true)).count()
    }

    /// Whether the connections staying fill more than `PRESSED` of the cap in all.
    pub fn pressed(&self) -> bool {
        let inner = self.lock();
        (inner.open.len() - inner.leaving) * PRESSED.1 > self.cap * PRESSED.0
    }

    /// Sheds every connection that has waited longer than `limit` for a whole head; returns how
    /// many. Called under pressure, with the shortened header deadline.
    pub fn shed_slow(&self, limit: Duration) -> usize {
        self.shed_waiting_since(now_ms().saturating_sub(limit.as_millis() as u64))
    }

    fn shed_waiting_since(&self, before_ms: u64) -> usize {
        let mut inner = self.lock();
        let slow: Vec<Arc<Conn>> = inner
            .open
            .values()
            .filter(|c| {
                !c.is_shed()
                    && matches!(c.phase(), Phase::Fresh | Phase::Head)
                    && c.since() < before_ms
            })
            .cloned()
            .collect();
        for conn in &slow {
            inner.mark_shed(conn);
        }
        slow.len()
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
    fn a_full_cap_sheds_the_connection_waiting_longest_for_a_head_before_any_idle_one() {
        let registry = Registry::new(4, 10);
        let idle = registry.admit(v4(1)).unwrap();
        let busy = registry.admit(v4(2)).unwrap();
        let head = registry.admit(v4(3)).unwrap();
        let fresh = registry.admit(v4(4)).unwrap();
        idle.set(Phase::Busy);
        drop(Busy(idle.clone()));
        busy.set(Phase::Busy);
        head.head_begins();
        let fifth = registry.admit(v4(5)).expect("a waiting one made room");
        assert!(head.is_shed(), "the one waiting longest for its head goes");
        assert!(!idle.is_shed() && !busy.is_shed() && !fresh.is_shed());
        // Until it has closed, the shed one no longer counts against the cap.
        let sixth = registry.admit(v4(6)).unwrap();
        assert!(
            fresh.is_shed(),
            "then the next one waiting, before the idle one"
        );
        fifth.set(Phase::Busy);
        sixth.set(Phase::Busy);
        assert!(registry.admit(v4(7)).is_some());
        assert!(
            idle.is_shed(),
            "an idle one only when none is waiting for a head"
        );
        registry.remove(&head);
        registry.remove(&fresh);
        registry.remove(&idle);
        assert_eq!(registry.open(), 4);
    }

    #[test]
    fn a_refusal_comes_only_when_every_connection_in_the_way_is_answering() {
        let registry = Registry::new(2, 10);
        registry.admit(v4(1)).unwrap().set(Phase::Busy);
        registry.admit(v4(2)).unwrap().set(Phase::Busy);
        assert!(registry.admit(v4(3)).is_none());
    }

    #[test]
    fn a_later_head_waits_from_its_first_byte_and_the_first_from_the_opening() {
        let registry = Registry::new(3, 10);
        let kept = registry.admit(v4(1)).unwrap();
        kept.set(Phase::Busy);
        drop(Busy(kept.clone()));
        let fresh = registry.admit(v4(2)).unwrap();
        // Opened earlier, but its second head began after the other's opening.
        kept.since.store(0, Ordering::Relaxed);
        fresh.since.store(5, Ordering::Relaxed);
        kept.head_begins();
        kept.since.store(10, Ordering::Relaxed);
        registry.admit(v4(3)).unwrap();
        assert!(registry.admit(v4(4)).is_some());
        assert!(fresh.is_shed() && !kept.is_shed());
    }

    #[test]
    fn an_address_at_its_cap_sheds_its_own_waiting_connections_only() {
        let registry = Registry::new(100, 2);
        let other = registry.admit(v4(9)).unwrap();
        let a = registry.admit(v4(1)).unwrap();
        let b = registry.admit(v4(1)).unwrap();
        a.set(Phase::Busy);
        b.set(Phase::Busy);
        assert!(registry.admit(v4(1)).is_none(), "both answering");
        assert!(
            registry.admit(v4(2)).is_some(),
            "another address is not held up"
        );
        b.set(Phase::Head);
        assert!(registry.admit(v4(1)).is_some());
        assert!(b.is_shed() && !a.is_shed() && !other.is_shed());
    }

    #[test]
    fn under_pressure_heads_waited_for_too_long_are_shed() {
        let registry = Registry::new(8, 8);
        let conns: Vec<_> = (0..6).map(|i| registry.admit(v4(i)).unwrap()).collect();
        assert!(!registry.pressed(), "six of eight is three quarters");
        let seventh = registry.admit(v4(7)).unwrap();
        assert!(registry.pressed());
        for (conn, since) in conns.iter().zip([1, 2, 3, 50, 60, 70]) {
            conn.since.store(since, Ordering::Relaxed);
        }
        conns[1].set(Phase::Busy);
        conns[2].set(Phase::Idle);
        seventh.since.store(80, Ordering::Relaxed);
        assert_eq!(registry.shed_waiting_since(55), 2);
        assert!(conns[0].is_shed() && conns[3].is_shed());
        assert!(!conns[1].is_shed() && !conns[2].is_shed() && !conns[4].is_shed());
        assert!(!registry.pressed(), "the shed no longer count");
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
    fn shedding_on_exhaustion_takes_them_in_order() {
        let registry = Registry::new(10, 10);
        let conns: Vec<_> = (0..4).map(|i| registry.admit(v4(i)).unwrap()).collect();
        conns[1].set(Phase::Busy);
        assert_eq!(registry.shed(2), 2);
        assert!(conns[0].is_shed() && !conns[1].is_shed() && conns[2].is_shed());
        assert_eq!(registry.shed(5), 1);
    }
}
