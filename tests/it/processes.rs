//! Two `orchestra serve` processes on one database, `ORCHESTRA_FLOOD=sql`: what
//! they answer together stays within the limits plus the bound stated in src/limits/flood/sql.rs and
//! docs/performance.md:
//! - each process answers at most N of a key in a window, so P processes at most P × N;
//! - past N, a process answers a key only until its first sync after it first saw that key
//!   (from then on it adds every other process's counts, read at each sync).
//!
//! On one SQLite file by default (two processes sharing it through WAL), and on one PostgreSQL
//! database when `ORCHESTRA_TEST_POSTGRES_URL` is set (`.ci/run`'s second pass).

use std::time::Duration;

use crate::helpers::{self, http1, serve};

const BIN: &str = env!("CARGO_BIN_EXE_orchestra");
const PER_LINK: usize = 10;
const TOTAL: usize = 100;
const SYNC_MS: u64 = 100;
/// Long enough for both processes to have synced at least twice, on a busy machine.
const SETTLE: Duration = Duration::from_millis(SYNC_MS * 8);

struct Pair {
    a: http1::Conn,
    b: http1::Conn,
    _servers: (serve::Served, serve::Served),
    _db: helpers::TestDb,
}

async fn two_processes() -> Pair {
    let db = helpers::fresh_database().await;
    serve::configure(
        BIN,
        &db.url,
        &[
            ("orchestra.request_limits.enabled", "true"),
            ("interaction.limits.per_link", &PER_LINK.to_string()),
            ("interaction.limits.total", &TOTAL.to_string()),
        ],
    );
    let env = [
        ("ORCHESTRA_FLOOD", "sql"),
        ("ORCHESTRA_FLOOD_SYNC_MS", "100"),
    ];
    let servers = (
        serve::serve(BIN, &db.url, &env),
        serve::serve(BIN, &db.url, &env),
    );
    Pair {
        a: http1::Conn::connect(servers.0.addr).expect("connect to A"),
        b: http1::Conn::connect(servers.1.addr).expect("connect to B"),
        _servers: servers,
        _db: db,
    }
}

fn answered(conn: &mut http1::Conn, path: &str, n: usize) -> usize {
    (0..n)
        .filter(|_| conn.get(path).expect("request") != 429)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_link_hammered_through_both_processes_in_turn() {
    let mut pair = two_processes().await;

    // Fast, with no time to sync: each process counts alone, and stops at N.
    let link = "/interaction/l.1..1900000000.fast";
    let mut total = 0;
    for _ in 0..4 * PER_LINK {
        total += answered(&mut pair.a, link, 1);
        total += answered(&mut pair.b, link, 1);
    }
    assert!(total >= PER_LINK, "only {total} answered");
    assert!(
        total <= 2 * PER_LINK,
        "{total} answered: more than P × N = {}",
        2 * PER_LINK
    );
    std::thread::sleep(SETTLE);
    assert_eq!(
        answered(&mut pair.a, link, 5) + answered(&mut pair.b, link, 5),
        0
    );

    // In turns of two with both synced in between: past N only by what the second process
    // answered before its first sync after it first saw the link, here its first turn.
    let link = "/interaction/l.1..1900000000.turns";
    let mut total = 0;
    for turn in 0..2 * PER_LINK {
        let conn = if turn % 2 == 0 {
            &mut pair.a
        } else {
            &mut pair.b
        };
        total += answered(conn, link, 2);
        std::thread::sleep(SETTLE);
    }
    assert!(total >= PER_LINK, "only {total} answered");
    assert!(
        total <= PER_LINK + 2,
        "{total} answered: more than N + 2 = {}",
        PER_LINK + 2
    );

    // All of N through A, then B: one answer on first sight, none after its next sync.
    let link = "/interaction/l.1..1900000000.a-then-b";
    assert_eq!(answered(&mut pair.a, link, 2 * PER_LINK), PER_LINK);
    std::thread::sleep(SETTLE);
    assert_eq!(
        answered(&mut pair.b, link, 1),
        1,
        "B has not seen the link yet"
    );
    std::thread::sleep(SETTLE);
    assert_eq!(
        answered(&mut pair.b, link, PER_LINK),
        0,
        "B did not read A's count"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_links_through_both_processes_stay_within_the_total() {
    let mut pair = two_processes().await;

    // 40 links of 5 requests each, alternating processes, as fast as they answer: 200 requests
    // against a total of 100 and a per-link limit of 10.
    let mut total = 0;
    for i in 0..40 {
        let link = format!("/interaction/l.2..1900000000.many-{i}");
        let mut this_link = 0;
        for r in 0..5 {
            let conn = if r % 2 == 0 { &mut pair.a } else { &mut pair.b };
            this_link += answered(conn, &link, 1);
        }
        assert!(this_link <= 2 * PER_LINK);
        total += this_link;
    }
    assert!(total >= TOTAL, "only {total} answered");
    assert!(
        total <= 2 * TOTAL,
        "{total} answered: more than P × total = {}",
        2 * TOTAL
    );

    // Once both have synced, the total is full on both, for links neither has seen.
    std::thread::sleep(SETTLE);
    for i in 0..5 {
        let link = format!("/interaction/l.2..1900000000.after-{i}");
        answered(&mut pair.a, &link, 1);
        answered(&mut pair.b, &link, 1);
    }
    std::thread::sleep(SETTLE);
    let late = (0..10)
        .map(|i| {
            let link = format!("/interaction/l.2..1900000000.late-{i}");
            answered(&mut pair.a, &link, 1) + answered(&mut pair.b, &link, 1)
        })
        .sum::<usize>();
    assert_eq!(
        late, 0,
        "the shared total did not hold once both had synced"
    );
}
