//! Bounded memory under a flood, on the real `orchestra serve` process, on both flood backends.
//!
//! The counting table has a fixed capacity (`ORCHESTRA_FLOOD_CELLS`), so a million made-up
//! links must not grow the server; and because a key that lands on another's cells inherits
//! their counts, no flood of fresh links can give a hammered link its allowance back.
//!
//! A million requests take about a minute and a half a backend against a debug build (two
//! cores), and a few seconds in release: `cargo test --release --test it -- --ignored million`.
//! `.ci/run` runs them; a plain `cargo test` skips them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::helpers::{http1, serve};

const BIN: &str = env!("CARGO_BIN_EXE_orchestra");
const FLOOD_LINKS: u64 = 1_000_000;
const CONNECTIONS: u64 = 4;
/// The counting table at its default size (`config::DEFAULT_FLOOD_CELLS` cells a row, two rows
/// of 64-byte cells): its pages are taken as keys land on them, so a flood of distinct links
/// brings the memory backend up to it, and nothing else may grow.
const TABLE_KIB: u64 = 2 * orchestra::config::DEFAULT_FLOOD_CELLS as u64 * 64 / 1024;
/// The sql backend keeps the same table, and beside it the sync's own SQLite connection, whose
/// page cache is no larger than the table, and the journal of what changed since the last sync
/// (at most a few entries per cell): three tables' worth at most (docs/performance.md).
const SQL_GROWTH_KIB: u64 = 3 * TABLE_KIB;

fn limits_on(database_url: &str) {
    limits_of(database_url, "5");
}

fn limits_of(database_url: &str, per_link: &str) {
    serve::configure(
        BIN,
        database_url,
        &[
            ("orchestra.request_limits.enabled", "true"),
            ("interaction.limits.per_link", per_link),
            ("interaction.limits.total", "1000000000"),
        ],
    );
}

/// Sends one request on each of `links` distinct made-up links, spread over a few keep-alive
/// connections; returns how many were refused.
fn flood(server: &serve::Served, prefix: &str, links: u64) -> u64 {
    let refused = AtomicU64::new(0);
    std::thread::scope(|s| {
        for c in 0..CONNECTIONS {
            let refused = &refused;
            s.spawn(move || {
                let mut conn = http1::Conn::connect(server.addr).expect("connect");
                let paths = (c..links)
                    .step_by(CONNECTIONS as usize)
                    .map(|i| format!("/interaction/{prefix}-{i:x}"));
                conn.pipeline(paths, 128, |status| {
                    if status == 429 {
                        refused.fetch_add(1, Ordering::Relaxed);
                    }
                })
                .expect("flood");
            });
        }
    });
    refused.into_inner()
}

fn a_million_made_up_links_leave_memory_flat(flood_backend: &str) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let url = format!("sqlite:{}", dir.path().join("orchestra.db").display());
    limits_on(&url);
    let server = serve::serve(BIN, &url, &[("ORCHESTRA_FLOOD", flood_backend)]);
    // A short warm-up (the runtime, the connections' buffers, the allocator's arenas), then the
    // baseline: the table's pages, touched as keys arrive, count as growth.
    flood(&server, "warm-up", 1_000);
    let before = server.rss_kib();
    let started = Instant::now();
    let refused = flood(&server, "made-up", FLOOD_LINKS);
    let after = server.rss_kib();
    let growth = after.saturating_sub(before);
    let bound = if flood_backend == "memory" {
        TABLE_KIB
    } else {
        SQL_GROWTH_KIB
    };
    eprintln!(
        "flood={flood_backend}: {FLOOD_LINKS} made-up links in {:.1} s ({refused} refused); \
         VmRSS {before} KiB -> {after} KiB, grew {growth} KiB (now RssAnon {} KiB, RssFile {} \
         KiB, RssShmem {} KiB)",
        started.elapsed().as_secs_f64(),
        server.status_kib("RssAnon"),
        server.status_kib("RssFile"),
        server.status_kib("RssShmem"),
    );
    assert!(
        growth <= bound,
        "flood={flood_backend}: resident memory grew by {growth} KiB, more than {bound}"
    );
}

#[test]
#[ignore = "slow: run by .ci/run"]
fn a_million_made_up_links_leave_memory_flat_on_the_memory_backend() {
    a_million_made_up_links_leave_memory_flat("memory");
}

#[test]
#[ignore = "slow: run by .ci/run"]
fn a_million_made_up_links_leave_memory_flat_on_the_sql_backend() {
    a_million_made_up_links_leave_memory_flat("sql");
}

fn flooding_distinct_links_cannot_reset_a_hammered_link(flood_backend: &str) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let url = format!("sqlite:{}", dir.path().join("orchestra.db").display());
    limits_on(&url);
    // The smallest table there is (16 cells a row): every made-up link shares cells with the
    // hammered one or with each other, over and over.
    let server = serve::serve(
        BIN,
        &url,
        &[
            ("ORCHESTRA_FLOOD", flood_backend),
            ("ORCHESTRA_FLOOD_CELLS", "16"),
            ("ORCHESTRA_FLOOD_SYNC_MS", "50"),
        ],
    );
    let hammered = "/interaction/l.7..1900000000.hammered";
    let mut conn = http1::Conn::connect(server.addr).expect("connect");
    let answered = (0..5)
        .filter(|_| conn.get(hammered).expect("request") != 429)
        .count();
    assert_eq!(
        answered, 5,
        "the first five requests of the link are answered"
    );
    assert_eq!(
        conn.get(hammered).expect("request"),
        429,
        "the sixth is refused"
    );

    // Batches of 99 fresh links and the hammered one, pipelined.
    let mut fresh_answered = 0;
    let mut hammered_answered = 0;
    for batch in 0..300 {
        let paths: Vec<String> = (0..100)
            .map(|i| {
                if i == 50 {
                    hammered.to_owned()
                } else {
                    format!("/interaction/fresh-{batch}-{i}")
                }
            })
            .collect();
        let mut statuses = Vec::with_capacity(100);
        conn.pipeline(&paths, 100, |status| statuses.push(status))
            .expect("flood");
        for (i, status) in statuses.into_iter().enumerate() {
            match (i == 50, status == 429) {
                (true, false) => hammered_answered += 1,
                (false, false) => fresh_answered += 1,
                _ => {}
            }
        }
        assert_eq!(
            hammered_answered, 0,
            "flood={flood_backend}: the hammered link was answered again after {batch} batches"
        );
    }
    assert!(fresh_answered > 0, "the fresh links were counted at all");
    assert_eq!(conn.get(hammered).expect("request"), 429);
}

#[test]
fn flooding_distinct_links_cannot_reset_a_hammered_link_on_the_memory_backend() {
    flooding_distinct_links_cannot_reset_a_hammered_link("memory");
}

#[test]
fn flooding_distinct_links_cannot_reset_a_hammered_link_on_the_sql_backend() {
    flooding_distinct_links_cannot_reset_a_hammered_link("sql");
}

/// The resident memory once the last requests' and syncs' buffers are given back: the least of
/// a few readings over half a second (a sync running when one is read holds its batch).
fn settled_rss_kib(server: &serve::Served) -> u64 {
    (0..8)
        .map(|_| {
            std::thread::sleep(std::time::Duration::from_millis(60));
            server.rss_kib()
        })
        .min()
        .unwrap_or(0)
}

/// The SQLite file in bytes, its write-ahead log folded in first (the log is reused, not
/// shrunk, so only the file says what is kept).
fn database_bytes(url: &str, file: &std::path::Path) -> u64 {
    tokio::runtime::Runtime::new()
        .expect("a runtime")
        .block_on(async {
            let pool = sqlx::SqlitePool::connect(url)
                .await
                .expect("open the database");
            sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
                .execute(&pool)
                .await
                .expect("checkpoint");
            pool.close().await;
        });
    std::fs::metadata(file).expect("the database file").len()
}

/// The sql store persists the counting table's cells, not one row per key: made-up links on a
/// table of 1,024 cells a row grow the database by its cells at most, and once every cell has
/// been met, 20,000 fresh made-up links grow the server by less than the table's 128 KiB. The
/// sync has one SQLite connection of its own, whose page cache is no larger than the table: in
/// the pools' eight caches the `flood` table's pages grew the server by 1.5 MiB here, and a
/// store that kept a row per key grows both by megabytes.
#[test]
fn made_up_links_grow_the_database_and_the_server_by_the_table_at_most() {
    const LINKS: u64 = 20_000;
    const CELLS: u64 = 1024;
    let table_kib = orchestra::limits::flood::table::bytes_for(CELLS as usize) as u64 / 1024;
    const MAX_DISK_GROWTH: u64 = 1024 * 1024;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("orchestra.db");
    let url = format!("sqlite:{}", file.display());
    // Limits no made-up link reaches, so each is answered and counted (a refusal counts
    // nothing): the most a flood can make the store keep.
    limits_of(&url, "1000000");
    let disk_before = database_bytes(&url, &file);
    let mut server = serve::serve(
        BIN,
        &url,
        &[
            ("ORCHESTRA_FLOOD", "sql"),
            ("ORCHESTRA_FLOOD_CELLS", "1024"),
            ("ORCHESTRA_FLOOD_SYNC_MS", "50"),
            // glibc gives freed memory back now and then, so from one flood to the next the
            // resident memory swings by megabytes either way; kept, it is the peak of what was
            // in use, which grows only when more is used.
            ("MALLOC_TRIM_THRESHOLD_", "4294967295"),
            ("MALLOC_MMAP_THRESHOLD_", "33554432"),
            ("MALLOC_ARENA_MAX", "1"),
        ],
    );
    // Floods that meet every cell, bring the flood table's pages into the sync connection's
    // cache and the sync's buffers to their size: what a measured flood adds is what a flood
    // costs once the site has seen one. The baseline is the highest the resident memory has
    // stood after any flood so far (a settled reading): from one flood to the next it swings by
    // a few hundred KiB either way (connections' buffers, the runtime's threads), and the
    // question is whether fresh links take it past where floods already took it. Three
    // measured floods, their median growth.
    let mut high_water = 0;
    for round in 0..8 {
        flood(&server, &format!("warm-up-{round}"), LINKS / 2);
        high_water = high_water.max(settled_rss_kib(&server));
    }
    let mut growths: Vec<u64> = (0..3)
        .map(|round| {
            flood(&server, &format!("made-up-{round}"), LINKS);
            let after = settled_rss_kib(&server);
            let growth = after.saturating_sub(high_water);
            high_water = high_water.max(after);
            growth
        })
        .collect();
    growths.sort_unstable();
    let rss_growth = growths[1];
    // A stop writes what is left to the database.
    server.terminate();
    assert!(
        server
            .exited_within(std::time::Duration::from_secs(30))
            .is_some(),
        "the server did not stop"
    );
    let disk_after = database_bytes(&url, &file);
    let disk_growth = disk_after.saturating_sub(disk_before);
    eprintln!(
        "{} made-up links, {CELLS} cells a row: database {disk_before} -> {disk_after} bytes; \
         VmRSS grew past its high-water mark by {growths:?} KiB over three floods of {LINKS}",
        7 * LINKS
    );
    assert!(
        disk_growth <= MAX_DISK_GROWTH,
        "the database grew by {disk_growth} bytes, more than {MAX_DISK_GROWTH}"
    );
    assert!(
        rss_growth <= table_kib,
        "the server grew by {rss_growth} KiB (median), more than the table's {table_kib} KiB"
    );
}
