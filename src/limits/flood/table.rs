//! The counting table behind both flood backends: fixed memory, rolling buckets, never low.
//!
//! A count-min sketch of two rows. A key's events are added to one cell in each row, and its
//! count is the smaller of the two. Cells are shared between keys, so a count can only be too
//! high: a key that lands on another key's cell inherits that key's events and never starts
//! from a fresh allowance, whatever else floods the table. Each cell keeps `BUCKETS + 1`
//! buckets of `window / BUCKETS` milliseconds; a bucket is counted while any part of it lies in
//! the window, so an event is counted for its whole window and at most one bucket longer.
//!
//! What other processes counted (the SQL backend's sync) is kept per event and cell, as the
//! shared store holds it: a key's count is the smaller, over its two cells, of this process's
//! cell plus the others' counts of that event in that cell. Count-min tables merge by addition,
//! so that is never below the key's count summed over every process.

use std::collections::HashMap;

use foldhash::quality::RandomState;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering, fence};
use std::time::Duration;

use super::clock::Clock;
use super::store::Tier;

/// Buckets a window is cut into: the finer, the sooner a count falls after the window.
pub const BUCKETS: i64 = 10;
const RING: usize = BUCKETS as usize + 1;
const ROWS: usize = 2;
/// Tiers one registration may span; more are ignored.
pub const MAX_TIERS: usize = 4;

/// The bucket width for a window, and the index of the bucket `now_ms` falls in.
pub fn bucket_of(now_ms: i64, window: Duration) -> (i64, i64) {
    let window_ms = (window.as_millis() as i64).max(BUCKETS);
    let width = (window_ms + BUCKETS - 1) / BUCKETS;
    (now_ms.div_euclid(width), width)
}

#[derive(Clone, Copy, Default)]
struct Cell {
    newest: i64,
    width: i64,
    counts: [u32; RING],
}

impl Cell {
    fn live(&self, now_b: i64, width: i64) -> u64 {
        if self.width == 0 {
            return 0;
        }
        if self.width != width {
            // Counted under another window (the period changed): keep all of it until it is
            // surely out of any window, rather than guess which part still counts.
            let end = (self.newest + 1) * self.width;
            let window = width * BUCKETS;
            if end + window + self.width * BUCKETS <= now_b * width {
                return 0;
            }
            return self.counts.iter().map(|&c| u64::from(c)).sum();
        }
        if self.newest >= now_b {
            // Every bucket in the ring is inside the window (the usual case under a flood:
            // the newest bucket is the current one). The same sum as below, without its steps.
            return self.counts.iter().map(|&c| u64::from(c)).sum();
        }
        let oldest = now_b - BUCKETS;
        (0..RING as i64)
            .map(|j| self.newest - j)
            .filter(|&b| b >= oldest)
            .map(|b| u64::from(self.counts[b.rem_euclid(RING as i64) as usize]))
            .sum()
    }

    fn add(&mut self, now_b: i64, width: i64, n: u32) {
        if self.width != width {
            let carried = self.live(now_b, width).min(u64::from(u32::MAX)) as u32;
            *self = Cell {
                newest: now_b,
                width,
                counts: [0; RING],
            };
            self.counts[now_b.rem_euclid(RING as i64) as usize] = carried;
        }
        if now_b > self.newest {
            let steps = (now_b - self.newest).min(RING as i64);
            for k in 1..=steps {
                self.counts[(self.newest + k).rem_euclid(RING as i64) as usize] = 0;
            }
            self.newest = now_b;
        }
        // A clock that stepped back adds to the newest bucket: later, never earlier, expiry.
        let slot = self.newest.rem_euclid(RING as i64) as usize;
        self.counts[slot] = self.counts[slot].saturating_add(n);
    }
}

/// A cell as the table keeps it: the same fields as [`Cell`], each an atomic, so that a refusal
/// can read cells without the lock (`CountTable::refused_as_it_stands`). Only a holder of the
/// lock writes them, inside a [`Writing`].
#[derive(Default)]
struct SharedCell {
    newest: AtomicI64,
    width: AtomicI64,
    counts: [AtomicU32; RING],
}

impl SharedCell {
    fn load(&self) -> Cell {
        Cell {
            newest: self.newest.load(Ordering::Relaxed),
            width: self.width.load(Ordering::Relaxed),
            counts: std::array::from_fn(|j| self.counts[j].load(Ordering::Relaxed)),
        }
    }

    fn store(&self, cell: &Cell) {
        self.newest.store(cell.newest, Ordering::Relaxed);
        self.width.store(cell.width, Ordering::Relaxed);
        for (shared, &count) in self.counts.iter().zip(&cell.counts) {
            shared.store(count, Ordering::Relaxed);
        }
    }

    fn add(&self, now_b: i64, width: i64, n: u32) {
        let mut cell = self.load();
        cell.add(now_b, width, n);
        self.store(&cell);
    }
}

/// All cells, zeroed: all-zero atomics are `SharedCell::default()`, and zeroed memory from the
/// allocator leaves the pages untouched until a key lands on them.
fn zeroed_cells(n: usize) -> Box<[SharedCell]> {
    if n == 0 {
        return Box::new([]);
    }
    let layout = std::alloc::Layout::array::<SharedCell>(n).expect("a table of this size");
    // SAFETY: the layout is non-empty; a `SharedCell` is integers only, for which all-zero bytes
    // are a valid value; the pointer comes from the global allocator with this very layout, as
    // `Box<[SharedCell]>` frees it.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout).cast::<SharedCell>();
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, n))
    }
}

/// The table's hash of a key: the same in every process and every build, since processes
/// sharing one database must put a key in the same cells (and `orchestra admin list` reads
/// them). Keys reach the table as keyed hashes (the doorway's callers) or constants, so no
/// caller can pick where its key lands; what the hash needs is speed and spread, not
/// resistance to chosen inputs: eight bytes a multiply, then a full mix.
pub fn key_hash(event: &str, identifier: &str) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = 0x243F_6A88_85A3_08D3_u64 ^ (event.len() as u64);
    for part in [event.as_bytes(), &[0xff], identifier.as_bytes()] {
        for chunk in part.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            h = (h ^ u64::from_le_bytes(word))
                .wrapping_mul(K)
                .rotate_left(29);
        }
    }
    // splitmix64's finalizer: every input bit reaches every output bit.
    h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^ (h >> 31)
}

/// The two cells of a key in a table of `cells_per_row` (a power of two) cells a row: one in
/// each row, numbered across both.
pub fn cells_of(hash: u64, cells_per_row: usize) -> [usize; ROWS] {
    let mask = cells_per_row - 1;
    let second = hash.rotate_left(32).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    [
        hash as usize & mask,
        cells_per_row + (second as usize & mask),
    ]
}

/// The number of cells a row for a configured size (`ORCHESTRA_FLOOD_CELLS`).
pub fn cells_per_row_for(configured: usize) -> usize {
    configured.clamp(16, 1 << 30).next_power_of_two()
}

/// The table's size in bytes for a configured size: its rows of cells, allocated at start.
pub fn bytes_for(configured: usize) -> usize {
    cells_per_row_for(configured) * ROWS * std::mem::size_of::<Cell>()
}

/// What other processes counted of one event in one cell, read from the shared store:
/// `(expiration in ms, count)`, each counted until its expiration.
#[derive(Default)]
struct Remote {
    synced: Vec<(i64, u64)>,
    /// Read once at start from rows kept per key (before the store kept cells): never
    /// replaced by a sync, they go as they expire.
    carried: Vec<(i64, u64)>,
}

impl Remote {
    fn live(&self, now_ms: i64) -> u64 {
        self.synced
            .iter()
            .chain(&self.carried)
            .filter(|(expiration, _)| *expiration > now_ms)
            .map(|(_, c)| *c)
            .sum()
    }
}

struct Inner {
    /// By (hash of the event, cell): at most one entry per event and cell.
    remote: HashMap<(u64, usize), Remote, RandomState>,
}

/// The lock, held to write cells: while it lives, `seq` is odd, so a read without the lock
/// that overlaps it knows to take the lock instead.
struct Writing<'a> {
    inner: std::sync::MutexGuard<'a, Inner>,
    seq: &'a AtomicU64,
    start: u64,
}

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        // Before the lock is released (fields drop after this).
        self.seq.store(self.start + 2, Ordering::Release);
    }
}

/// A fixed-capacity, conservative, rolling-window counter. All methods are cheap and
/// synchronous: one hash, two cells, one short lock; a refusal that changes nothing takes no
/// lock at all.
pub struct CountTable {
    cells_per_row: usize,
    clock: Clock,
    /// Written only under `inner`'s lock.
    rows: Box<[SharedCell]>,
    /// A sequence lock over `rows`: odd while cells are being written, and moved on by every
    /// write, so a read without the lock can tell whether it saw one consistent state.
    seq: AtomicU64,
    inner: Mutex<Inner>,
}

impl CountTable {
    /// `cells_per_row` is rounded up to a power of two. Memory is `2 × cells × 64` bytes,
    /// allocated once (the pages are touched as keys arrive).
    pub fn new(cells_per_row: usize, clock: Clock) -> Self {
        let cells_per_row = cells_per_row_for(cells_per_row);
        Self {
            cells_per_row,
            clock,
            rows: zeroed_cells(cells_per_row * ROWS),
            seq: AtomicU64::new(0),
            inner: Mutex::new(Inner {
                remote: HashMap::default(),
            }),
        }
    }

    pub fn cells_per_row(&self) -> usize {
        self.cells_per_row
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The table's hash of a key ([`key_hash`]).
    pub fn key_hash(&self, event: &str, identifier: &str) -> u64 {
        key_hash(event, identifier)
    }

    /// A key's two cells, by its hash.
    pub fn cells(&self, hash: u64) -> [usize; ROWS] {
        cells_of(hash, self.cells_per_row)
    }

    /// This process's own count of a key: the smaller of its cells.
    fn local(&self, cells: [usize; ROWS], now_b: i64, width: i64) -> u64 {
        cells
            .iter()
            .map(|&i| self.rows[i].load().live(now_b, width))
            .min()
            .unwrap_or(0)
    }

    /// A key's count across processes: per cell, this process's count plus what the others
    /// counted of the event there; the smaller of the two cells.
    fn estimate(&self, inner: &Inner, event: &str, cells: [usize; ROWS], now: Now) -> u64 {
        if inner.remote.is_empty() {
            return self.local(cells, now.bucket, now.width);
        }
        let event = event_hash(event);
        cells
            .iter()
            .map(|&i| {
                let remote = inner.remote.get(&(event, i)).map_or(0, |r| r.live(now.ms));
                self.rows[i].load().live(now.bucket, now.width) + remote
            })
            .min()
            .unwrap_or(0)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave a cell half-written in a way that matters
        // (counts only grow), so a poisoned lock is used as it is.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The lock, to write cells (a sequence-lock writer).
    fn write(&self) -> Writing<'_> {
        let inner = self.lock();
        let start = self.seq.load(Ordering::Relaxed);
        self.seq.store(start + 1, Ordering::Relaxed);
        // No cell written below is seen by a reader that does not also see `seq` move.
        fence(Ordering::Release);
        Writing {
            inner,
            seq: &self.seq,
            start,
        }
    }

    /// Whether a key with these cells is refused by a registration, read without the lock: its
    /// own count already at `limit`. Under a flood of one link every worker asks this, and none
    /// of them writes a word another core reads. `false` means "ask under the lock", never
    /// "allowed".
    ///
    /// Exact, not an approximation: counts only grow within a bucket, and what other processes
    /// counted (`remote`) only adds, so if this process's own counts refuse, the count under the
    /// lock refuses too; and the first tier has no tier before it that could have refused
    /// instead.
    fn refused_as_it_stands(
        &self,
        cells: [usize; ROWS],
        limit: u64,
        now_b: i64,
        width: i64,
    ) -> bool {
        let start = self.seq.load(Ordering::Acquire);
        if start & 1 == 1 {
            return false;
        }
        let full = self.local(cells, now_b, width) >= limit;
        // The cells read above were all written before `seq` was read again unchanged.
        fence(Ordering::Acquire);
        full && self.seq.load(Ordering::Relaxed) == start
    }

    pub fn register(&self, event: &str, identifier: &str, window: Duration) {
        self.register_cells(self.cells(key_hash(event, identifier)), window);
    }

    /// `register`, for a key whose cells the caller has (the SQL backend journals them too).
    pub fn register_cells(&self, cells: [usize; ROWS], window: Duration) {
        let (now_b, width) = bucket_of(self.clock.now_ms(), window);
        let _writing = self.write();
        for i in cells {
            self.rows[i].add(now_b, width, 1);
        }
    }

    pub fn count(&self, event: &str, identifier: &str, window: Duration) -> u64 {
        let now = Now::of(&self.clock, window);
        let cells = self.cells(key_hash(event, identifier));
        let inner = self.lock();
        self.estimate(&inner, event, cells, now)
    }

    /// In one step: when every tier has fewer than its limit of events in `window`, registers
    /// one event for each and returns `Ok`; otherwise registers nothing and returns the index
    /// of the first full tier (`FloodStore::try_register`).
    pub fn try_register(
        &self,
        event: &str,
        tiers: &[Tier<'_>],
        window: Duration,
    ) -> Result<(), usize> {
        self.try_register_cells(event, tiers, window).0
    }

    /// `try_register`, giving back each tier's cells too, so a caller that journals the
    /// cells (the SQL backend) need not hash the keys again.
    pub fn try_register_cells(
        &self,
        event: &str,
        tiers: &[Tier<'_>],
        window: Duration,
    ) -> (Result<(), usize>, [[usize; ROWS]; MAX_TIERS]) {
        let now = Now::of(&self.clock, window);
        let mut keys = [[0usize; ROWS]; MAX_TIERS];
        let tiers = &tiers[..tiers.len().min(keys.len())];
        let Some(first) = tiers.first() else {
            return (Ok(()), keys);
        };
        keys[0] = self.cells(key_hash(event, first.identifier));
        // The flood's usual request: the first tier full.
        if self.refused_as_it_stands(keys[0], first.limit, now.bucket, now.width) {
            return (Err(0), keys);
        }
        for (cells, tier) in keys.iter_mut().zip(tiers).skip(1) {
            *cells = self.cells(key_hash(event, tier.identifier));
        }
        let writing = self.write();
        let inner = &writing.inner;
        for (index, (tier, &cells)) in tiers.iter().zip(&keys).enumerate() {
            if self.estimate(inner, event, cells, now) >= tier.limit {
                return (Err(index), keys);
            }
        }
        for cells in &keys[..tiers.len()] {
            for &i in cells {
                self.rows[i].add(now.bucket, now.width, 1);
            }
        }
        (Ok(()), keys)
    }

    /// Replaces what other processes counted of `event` in `cell`: `(expiration in ms, count)`
    /// pairs, as the shared store holds them.
    pub fn set_remote(&self, event: &str, cell: usize, counts: Vec<(i64, u64)>) {
        if cell >= self.cells_per_row * ROWS {
            return;
        }
        let now_ms = self.clock.now_ms();
        let mut inner = self.lock();
        let key = (event_hash(event), cell);
        match inner.remote.get_mut(&key) {
            Some(remote) => {
                remote.synced = counts;
                remote
                    .carried
                    .retain(|(expiration, _)| *expiration > now_ms);
                if remote.synced.is_empty() && remote.carried.is_empty() {
                    inner.remote.remove(&key);
                }
            }
            None if counts.is_empty() => {}
            None => {
                inner.remote.insert(
                    key,
                    Remote {
                        synced: counts,
                        carried: Vec::new(),
                    },
                );
            }
        }
    }

    /// Adds counts of `event` in `cell` that no sync reads again (counts kept per key before
    /// the store kept cells): they stay until they expire.
    pub fn carry(&self, event: &str, cell: usize, expiration: i64, count: u64) {
        if cell >= self.cells_per_row * ROWS {
            return;
        }
        let mut inner = self.lock();
        let remote = inner.remote.entry((event_hash(event), cell)).or_default();
        remote.carried.push((expiration, count));
    }
}

/// The hash remote counts are kept under for an event.
fn event_hash(event: &str) -> u64 {
    key_hash(event, "")
}

/// The time a decision is made at: in ms, and as a bucket of the window's width.
#[derive(Clone, Copy)]
struct Now {
    ms: i64,
    bucket: i64,
    width: i64,
}

impl Now {
    fn of(clock: &Clock, window: Duration) -> Self {
        let ms = clock.now_ms();
        let (bucket, width) = bucket_of(ms, window);
        Self { ms, bucket, width }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: Duration = Duration::from_secs(3600);

    fn tier(identifier: &str, limit: u64) -> Tier<'_> {
        Tier { identifier, limit }
    }

    #[test]
    fn counts_fall_only_after_the_whole_window() {
        let clock = Clock::manual(1_000_000_000);
        let table = CountTable::new(1024, clock.clone());
        table.register("e", "a", HOUR);
        assert_eq!(table.count("e", "a", HOUR), 1);
        clock.advance(HOUR - Duration::from_millis(1));
        assert_eq!(table.count("e", "a", HOUR), 1, "dropped inside the window");
        clock.advance(HOUR / 10 + Duration::from_millis(1));
        assert_eq!(
            table.count("e", "a", HOUR),
            0,
            "held more than one bucket too long"
        );
    }

    #[test]
    fn no_rolling_window_ever_holds_more_than_the_limit() {
        // Requests every 7 seconds for five hours against a limit of 20 an hour: look back over
        // every answered request and check each one-hour span.
        let clock = Clock::manual(5_000_000);
        let table = CountTable::new(1024, clock.clone());
        let mut answered = Vec::new();
        for _ in 0..(5 * 3600 / 7) {
            if table.try_register("e", &[tier("k", 20)], HOUR).is_ok() {
                answered.push(clock.now_ms());
            }
            clock.advance(Duration::from_secs(7));
        }
        for (i, &start) in answered.iter().enumerate() {
            let inside = answered[i..]
                .iter()
                .take_while(|&&t| t < start + 3_600_000)
                .count();
            assert!(inside <= 20, "{inside} answered in the hour from {start}");
        }
        assert!(
            answered.len() >= 80,
            "only {} answered in five hours",
            answered.len()
        );
    }

    #[test]
    fn a_refusal_registers_nothing_in_any_tier() {
        let table = CountTable::new(1024, Clock::manual(0));
        for _ in 0..3 {
            table
                .try_register("e", &[tier("link", 3), tier("total", 100)], HOUR)
                .unwrap();
        }
        assert_eq!(
            table.try_register("e", &[tier("link", 3), tier("total", 100)], HOUR),
            Err(0)
        );
        assert_eq!(table.count("e", "total", HOUR), 3);
        assert_eq!(table.count("e", "link", HOUR), 3);
        assert_eq!(
            table.try_register("e", &[tier("other", 3), tier("total", 3)], HOUR),
            Err(1)
        );
        assert_eq!(table.count("e", "other", HOUR), 0);
    }

    #[test]
    fn flooding_distinct_keys_never_lowers_a_hammered_count() {
        let table = CountTable::new(64, Clock::manual(0));
        while table
            .try_register("e", &[tier("hammered", 5)], HOUR)
            .is_ok()
        {}
        for i in 0..100_000 {
            let _ = table.try_register("e", &[tier(&format!("made-up-{i}"), 5)], HOUR);
            assert!(table.count("e", "hammered", HOUR) >= 5);
        }
        assert_eq!(
            table.try_register("e", &[tier("hammered", 5)], HOUR),
            Err(0)
        );
    }

    #[test]
    fn a_changed_window_keeps_what_was_counted() {
        let table = CountTable::new(1024, Clock::manual(10_000_000));
        for _ in 0..4 {
            table.register("e", "a", HOUR);
        }
        assert_eq!(table.count("e", "a", Duration::from_secs(60)), 4);
        table.register("e", "a", Duration::from_secs(60));
        assert_eq!(table.count("e", "a", Duration::from_secs(60)), 5);
    }

    #[test]
    fn remote_counts_add_to_local_ones() {
        let clock = Clock::manual(7_200_000);
        let table = CountTable::new(1024, clock.clone());
        let expiration = 7_200_000 + HOUR.as_millis() as i64 * 11 / 10;
        for cell in table.cells(table.key_hash("e", "a")) {
            table.set_remote("e", cell, vec![(expiration, 4)]);
        }
        table.register("e", "a", HOUR);
        assert_eq!(table.count("e", "a", HOUR), 5);
        assert_eq!(table.count("other event", "a", HOUR), 0);
        clock.advance(HOUR * 2);
        assert_eq!(table.count("e", "a", HOUR), 0);
    }
}
