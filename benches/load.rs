//! The load harness: `cargo bench --bench load` (docs/performance.md).
//!
//! Starts each server as its own process on 127.0.0.1 and drives it with `wrk`. The figure it
//! compares rows by is the **CPU time the server spends per request**: every thread's time on
//! CPU (`/proc/PID/task/TID/schedstat`, nanoseconds) read before and after each wrk run, divided
//! by the requests wrk completed; for a row on PostgreSQL the database server's processes are
//! counted too. Requests a second and latency depend on how much CPU the machine lends the
//! server at that moment; the CPU a request costs barely does. Rows that are compared run side
//! by side, in turns (each turn starts one row further on), and every target is a ratio between
//! two rows taken turn by turn, printed as min, median and max over the turns.
//!
//! The real `orchestra serve` binary serves the doorway rows, configured with `orchestra config
//! set` on its own database; this same executable, started again with `--serve KIND`, serves
//! the rows that are not Orchestra (the bare 429, tower_governor, the naive SQL store, the
//! floor of a page).
//!
//! Environment:
//! - `ORCHESTRA_LOAD_TURNS` (default 10): turns per group of rows; targets want at least 10;
//! - `ORCHESTRA_LOAD_SECS` (default 2): seconds each row is driven in one turn;
//! - `ORCHESTRA_LOAD_CONNECTIONS` (default 32), `ORCHESTRA_LOAD_THREADS` (default 1): for wrk;
//! - `ORCHESTRA_LOAD_SERVER_CPUS`: a `taskset` CPU list the servers are pinned to;
//! - `ORCHESTRA_LOAD_CLIENT_PRIORITY=1`: wrk at idle priority and the probe at real-time priority
//!   (`client_priority`), for a load generator that shares the server's cores;
//! - `ORCHESTRA_LOAD_ONLY`: run only the rows whose name contains one of these `|`-separated
//!   texts (`second link`, `bare|refusing|governor`, …);
//! - `ORCHESTRA_BENCH_POSTGRES_URL`, else `ORCHESTRA_TEST_POSTGRES_URL`: a PostgreSQL server
//!   whose admin URL may create databases; without one, a throwaway server is started when
//!   `initdb` is found (and then its CPU is counted), else the PostgreSQL rows are skipped.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../tests/it/helpers/http1.rs"]
mod http1;
#[path = "../tests/it/helpers/serve.rs"]
mod serve;

const ORCHESTRA: &str = env!("CARGO_BIN_EXE_orchestra");
/// How long a server may take to start listening.
const LISTEN_WAIT: Duration = Duration::from_secs(30);
/// Requests one link may make before it is refused, in the refusal rows.
const HAMMER_LIMIT: &str = "5";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--serve") {
        baseline::serve(&args[i + 1..]);
        return;
    }
    if args.iter().any(|a| a == "--list") {
        // `cargo bench -- --list` asks every bench target for its benchmarks.
        return;
    }
    let wrk_version = match Command::new("wrk").arg("--version").output() {
        Ok(out) => String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .nth(1)
            .unwrap_or("?")
            .to_owned(),
        Err(e) => {
            eprintln!(
                "The load harness drives its servers with wrk, which could not be run ({e}).\n\
                 Install it (Debian/Ubuntu: apt-get install wrk) and run `cargo bench --bench load` again."
            );
            std::process::exit(1);
        }
    };
    let secs = env_number("ORCHESTRA_LOAD_SECS", 2).max(1);
    let turns = env_number("ORCHESTRA_LOAD_TURNS", 10).max(1) as usize;
    let postgres = Postgres::find_or_start();
    println!("{}", machine(&wrk_version));
    println!(
        "{turns} turns of {secs} s a row, wrk {}; CPU: {}",
        wrk_shape(),
        cpu::SOURCE
    );
    if turns < 10 {
        println!("(fewer than 10 turns: the targets below are a first look, not a result)");
    }
    let rows = run(Duration::from_secs(secs), turns, postgres.as_ref());
    println!();
    print_table(&rows);
    print_targets(&rows);
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn wrk_shape() -> String {
    format!(
        "-t{} -c{}",
        env_number("ORCHESTRA_LOAD_THREADS", 1),
        env_number("ORCHESTRA_LOAD_CONNECTIONS", 32)
    )
}

/// The machine, named: CPU model, cores, kernel, and how the servers were placed.
fn machine(wrk_version: &str) -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name")?.split_once(':'))
        .map_or("unknown CPU", |(_, m)| m.trim())
        .to_owned();
    // The machine's cores, not this process's share of them (the harness may run under taskset).
    let cores = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    let placed = match std::env::var("ORCHESTRA_LOAD_SERVER_CPUS") {
        Ok(cpus) if !cpus.trim().is_empty() => format!("servers on CPU {}", cpus.trim()),
        _ => "unpinned".to_owned(),
    };
    format!(
        "Machine: {model}, {cores} cores, Linux {}, wrk {wrk_version}; load average {} before the run; {placed}",
        kernel.trim(),
        load.join(" ")
    )
}

/// CPU time of a server, and of the database server behind it, read from `/proc`.
mod cpu {
    use std::collections::HashMap;

    pub const SOURCE: &str = "server's time on CPU per request, every thread's \
        /proc/PID/task/TID/schedstat (ns), PostgreSQL's processes added on its rows";

    /// Whose CPU a row is charged: the server's process, and the PostgreSQL cluster's
    /// postmaster (its children are the backends) when the harness started that cluster.
    #[derive(Clone, Debug, Default)]
    pub struct Meter {
        pub server: u32,
        pub postmaster: Option<u32>,
    }

    /// Nanoseconds on CPU by thread id, and the database's part of them.
    #[derive(Clone, Debug, Default)]
    pub struct Reading {
        server: HashMap<u32, u64>,
        db: HashMap<u32, u64>,
    }

    /// CPU spent between two readings: (server ns, database ns).
    pub fn between(before: &Reading, after: &Reading) -> (u64, u64) {
        // A thread that ended between the readings is left out (it was idle, as every thread
        // that ends in these servers is); one born since counts from zero.
        let spent = |b: &HashMap<u32, u64>, a: &HashMap<u32, u64>| -> u64 {
            a.iter()
                .map(|(tid, &ns)| ns.saturating_sub(b.get(tid).copied().unwrap_or(0)))
                .sum()
        };
        (
            spent(&before.server, &after.server),
            spent(&before.db, &after.db),
        )
    }

    impl Meter {
        pub fn read(&self) -> Reading {
            let mut reading = Reading::default();
            threads(self.server, &mut reading.server);
            if let Some(postmaster) = self.postmaster {
                threads(postmaster, &mut reading.db);
                for child in children(postmaster) {
                    threads(child, &mut reading.db);
                }
            }
            reading
        }
    }

    /// Every thread of `pid`: the first field of its schedstat, the nanoseconds it ran. Where
    /// schedstat cannot be read, its user + system ticks from `stat`.
    fn threads(pid: u32, into: &mut HashMap<u32, u64>) {
        let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return;
        };
        for entry in dir.flatten() {
            let Some(tid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
                continue;
            };
            let path = entry.path();
            let ns = std::fs::read_to_string(path.join("schedstat"))
                .ok()
                .and_then(|s| s.split_whitespace().next()?.parse().ok())
                .or_else(|| stat_ticks(&path.join("stat")).map(|t| t * 10_000_000));
            if let Some(ns) = ns {
                into.insert(tid, ns);
            }
        }
    }

    /// utime + stime of a `stat` file, in clock ticks (100 a second on Linux).
    fn stat_ticks(path: &std::path::Path) -> Option<u64> {
        let stat = std::fs::read_to_string(path).ok()?;
        // Fields after the command name, which is in parentheses and may hold spaces.
        let rest = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // utime and stime are fields 14 and 15 of stat, 12 and 13 after the name.
        Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
    }

    fn children(parent: u32) -> Vec<u32> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .ok()
                    .and_then(|s| {
                        let rest = &s[s.rfind(')')? + 2..];
                        rest.split_whitespace().nth(1)?.parse::<u32>().ok()
                    })
                    == Some(parent)
            })
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Rows and turns

/// One wrk run (or one probe) against one row.
#[derive(Clone, Debug, Default)]
struct Turn {
    rps: f64,
    p50_us: f64,
    p99_us: f64,
    requests: u64,
    non_2xx: u64,
    server_ns: u64,
    db_ns: u64,
}

impl Turn {
    /// CPU microseconds per request, the server's and its database's.
    fn cpu_us(&self) -> f64 {
        if self.requests == 0 {
            return f64::NAN;
        }
        (self.server_ns + self.db_ns) as f64 / self.requests as f64 / 1e3
    }

    fn db_us(&self) -> f64 {
        if self.requests == 0 {
            return f64::NAN;
        }
        self.db_ns as f64 / self.requests as f64 / 1e3
    }
}

#[derive(Clone, Debug, Default)]
struct Row {
    name: String,
    /// In the order they were run; turn `i` of every row of a group ran in the same round.
    turns: Vec<Turn>,
    /// Whether a database server's CPU is counted in.
    with_db: bool,
    note: String,
}

/// What a row measures, so the targets can be checked by name.
mod rows {
    pub const BARE: &str = "bare axum 429 (floor)";
    pub const MEMORY: &str = "doorway refusing, flood=memory";
    pub const SQLITE: &str = "doorway refusing, flood=sql on SQLite";
    pub const POSTGRES: &str = "doorway refusing, flood=sql on PostgreSQL";
    pub const GOVERNOR: &str = "tower_governor refusing (key: path)";
    pub const API: &str = "API refusing (token over its bucket)";
    pub const NAIVE: &str = "naive SQL insert+count per request (SQLite)";
    pub const GOOD_OFF: &str = "good link answered, guard off";
    pub const GOOD_MEMORY: &str = "good link answered, guard counting (memory)";
    pub const GOOD_SQL: &str = "good link answered, guard counting (sql)";
    pub const GOOD_POSTGRES: &str = "good link answered, counting (sql), PostgreSQL";
    pub const FLOOR_SQLITE: &str = "floor: one read + page, SQLite";
    pub const FLOOR_POSTGRES: &str = "floor: one read + page, PostgreSQL";
    pub const API_READ_SQLITE: &str = "API GET /api/v1/instances/{id}, SQLite";
    pub const API_READ_POSTGRES: &str = "API GET /api/v1/instances/{id}, PostgreSQL";
    pub const SECOND_ALONE: &str = "second link, 250 req/s, no flood";
    pub const SECOND_FLOOD: &str = "second link, 250 req/s, one link flooded";
}

/// Whether the row named `name` is to be run (`ORCHESTRA_LOAD_ONLY`).
fn wanted(name: &str) -> bool {
    match std::env::var("ORCHESTRA_LOAD_ONLY") {
        Ok(only) if !only.is_empty() => only.split('|').any(|part| name.contains(part)),
        _ => true,
    }
}

fn run(dur: Duration, turns: usize, postgres: Option<&Postgres>) -> Vec<Row> {
    let mut table = Vec::new();
    let postgres_db = || match postgres.map(Postgres::database) {
        Some(Ok(db)) => Ok(db),
        Some(Err(e)) => Err(e),
        None => Err("no PostgreSQL (set ORCHESTRA_BENCH_POSTGRES_URL, or install initdb)".into()),
    };
    let postmaster = postgres.and_then(Postgres::postmaster);

    // The floor, the doorway on each backend, tower_governor and the naive store run side by
    // side and are measured in turns. The baselines answer a path of the doorway's real shape
    // and length (an instance, no branch, an expiry, 64 hex digits), so each server parses
    // and routes the same bytes.
    let path = &format!("/interaction/l.1..1796000000.{}", "ab".repeat(32));
    let mut baselines = Vec::new();
    let mut servers = Vec::new();
    let mut group: Vec<Entry> = Vec::new();
    if wanted(rows::BARE) {
        let bare = Baseline::start("bare", &[]);
        group.push(Entry::new(
            rows::BARE,
            bare.url(path),
            Expect::Refused,
            bare.meter(),
        ));
        baselines.push(bare);
    }
    let limits = [
        ("orchestra.request_limits.enabled", "true"),
        ("interaction.limits.per_link", HAMMER_LIMIT),
        ("interaction.limits.total", "1000000000"),
    ];
    for (name, flood) in [
        (rows::MEMORY, "memory"),
        (rows::SQLITE, "sql"),
        (rows::POSTGRES, "sql"),
    ] {
        if !wanted(name) {
            continue;
        }
        let db = if name == rows::POSTGRES {
            postgres_db()
        } else {
            Ok(Database::sqlite())
        };
        match db {
            Ok(db) => {
                let server = Orchestra::start(db, flood, &limits, 1, postmaster);
                server.hammer(&server.links[0], 20);
                group.push(Entry::new(
                    name,
                    server.url(&server.links[0]),
                    Expect::Refused,
                    server.meter(),
                ));
                servers.push(server);
            }
            Err(e) => group.push(Entry::skipped(name, &e)),
        }
    }
    if wanted(rows::GOVERNOR) {
        let governor = Baseline::start("governor", &[]);
        governor.hammer(path, 20);
        group.push(Entry::new(
            rows::GOVERNOR,
            governor.url(path),
            Expect::Refused,
            governor.meter(),
        ));
        baselines.push(governor);
    }
    if wanted(rows::API) {
        // A token allowed one request a minute: the harness's warm-up takes it, and every
        // request after is the API's refusal.
        let server = Orchestra::start(
            Database::sqlite(),
            "memory",
            &[("orchestra.request_limits.enabled", "true")],
            0,
            None,
        );
        let token = serve::cli(
            ORCHESTRA,
            &server.db_url(),
            &["token", "create", "load", "--rate", "1", "--burst", "1"],
        );
        let mut entry = Entry::new(
            rows::API,
            server.url("/api/v1/workflows"),
            Expect::Refused,
            server.meter(),
        );
        entry.headers.push(format!("Authorization: Bearer {token}"));
        group.push(entry);
        servers.push(server);
    }
    let naive_dir = tempfile::tempdir().expect("a temporary directory");
    if wanted(rows::NAIVE) {
        let db = naive_dir.path().join("naive.db").display().to_string();
        let naive = Baseline::start("naive", &[&db]);
        naive.hammer(path, 20);
        group.push(Entry::new(
            rows::NAIVE,
            naive.url(path),
            Expect::Refused,
            naive.meter(),
        ));
        baselines.push(naive);
    }
    table.extend(interleaved(&group, dur, turns));
    drop((baselines, servers));

    // The allowed path: the same good link answered, with the guard off and counting, and the
    // floor of any page: one primary-key read on the same kind of pool and a page rendered.
    let off = [("orchestra.request_limits.enabled", "false")];
    let counting = [
        ("orchestra.request_limits.enabled", "true"),
        ("interaction.limits.per_link", "1000000"),
        ("interaction.limits.total", "1000000000"),
    ];
    let mut servers = Vec::new();
    let mut baselines = Vec::new();
    let mut group = Vec::new();
    for (name, flood, limits, floor, api_read) in [
        (rows::GOOD_OFF, "sql", &off[..], None, None),
        (rows::GOOD_MEMORY, "memory", &counting[..], None, None),
        (
            rows::GOOD_SQL,
            "sql",
            &counting[..],
            Some(rows::FLOOR_SQLITE),
            Some(rows::API_READ_SQLITE),
        ),
        (
            rows::GOOD_POSTGRES,
            "sql",
            &counting[..],
            Some(rows::FLOOR_POSTGRES),
            Some(rows::API_READ_POSTGRES),
        ),
    ] {
        let floor = floor.filter(|f| wanted(f));
        let api_read = api_read.filter(|a| wanted(a));
        if !wanted(name) && floor.is_none() && api_read.is_none() {
            continue;
        }
        let db = if name == rows::GOOD_POSTGRES {
            postgres_db()
        } else {
            Ok(Database::sqlite())
        };
        let db = match db {
            Ok(db) => db,
            Err(e) => {
                group.push(Entry::skipped(name, &e));
                for other in [floor, api_read].into_iter().flatten() {
                    group.push(Entry::skipped(other, &e));
                }
                continue;
            }
        };
        let server = Orchestra::start(db, flood, limits, 1, postmaster);
        let good = server.links[0].clone();
        let page = server.page_bytes(&good);
        if wanted(name) {
            let mut entry = Entry::new(name, server.url(&good), Expect::Answered, server.meter());
            entry.note = format!("page {page} B");
            group.push(entry);
        }
        if let Some(floor_name) = floor {
            // The floor reads the same database, so the row it reads is the same row.
            let url = server.db_url();
            let floor = Baseline::start("floor", &[&url]);
            let mut meter = floor.meter();
            meter.postmaster = server.meter().postmaster;
            let floor_page = page_bytes(floor.addr, &good);
            let mut entry = Entry::new(floor_name, floor.url(&good), Expect::Answered, meter);
            entry.note = format!("page {floor_page} B");
            group.push(entry);
            baselines.push(floor);
        }
        if let Some(api_name) = api_read {
            // The same small instance the good link is of (started from the command line, two
            // history lines), read by a token with the read ability that reaches every instance
            // and a bucket wrk cannot empty: the API's read path, gate included.
            let token = serve::cli(
                ORCHESTRA,
                &server.db_url(),
                &[
                    "token",
                    "create",
                    "load-read",
                    "--abilities",
                    "read",
                    "--reach",
                    "all",
                    "--rate",
                    "1000000",
                    "--burst",
                    "1000000",
                ],
            );
            let path = format!("/api/v1/instances/{}", server.instances[0]);
            let mut entry = Entry::new(
                api_name,
                server.url(&path),
                Expect::Answered,
                server.meter(),
            );
            entry.headers.push(format!("Authorization: Bearer {token}"));
            entry.note = format!("JSON {} B", server.body_bytes(&path, &entry.headers[0]));
            group.push(entry);
        }
        servers.push(server);
    }
    table.extend(interleaved(&group, dur, turns));
    drop((baselines, servers));

    // One link flooded, another used at a steady pace: the second link's latency.
    if wanted(rows::SECOND_ALONE) || wanted(rows::SECOND_FLOOD) {
        table.extend(second_link(dur.max(Duration::from_secs(2)), turns));
    }
    table
}

/// The second link's latency at a steady pace, alone and while the first link is flooded, in
/// alternated turns on one server.
fn second_link(dur: Duration, turns: usize) -> [Row; 2] {
    // The per-link limit stays above what the probe asks of the second link in all its turns
    // (250 a second), and the first link is driven past it before the flood.
    let probed = 250 * (2 * turns as u64 * dur.as_secs() + 2);
    let limit = (probed + 1000).to_string();
    let flooded = [
        ("orchestra.request_limits.enabled", "true"),
        ("interaction.limits.per_link", limit.as_str()),
        ("interaction.limits.total", "1000000000"),
    ];
    let server = Orchestra::start(Database::sqlite(), "sql", &flooded, 2, None);
    server.hammer(&server.links[0], probed as usize + 1100);
    let second = server.links[1].clone();
    let meter = server.meter();
    let mut alone = Row {
        name: rows::SECOND_ALONE.to_owned(),
        ..Row::default()
    };
    let mut flood = Row {
        name: rows::SECOND_FLOOD.to_owned(),
        ..Row::default()
    };
    // Warm-up: the page once, the flood once.
    probe(server.addr, &second, Duration::from_secs(1));
    wrk_wait(wrk_spawn(
        &server.url(&server.links[0]),
        &[],
        Duration::from_secs(1),
    ));
    let mut refusals = Vec::new();
    for turn in 0..turns {
        for k in 0..2 {
            let flooded = (k + turn) % 2 == 1;
            eprintln!(
                "{} (turn {} of {turns}) …",
                if flooded { &flood.name } else { &alone.name },
                turn + 1
            );
            let before = meter.read();
            if flooded {
                let wrk = wrk_spawn(
                    &server.url(&server.links[0]),
                    &[],
                    dur + Duration::from_secs(1),
                );
                std::thread::sleep(Duration::from_millis(500));
                let mut t = probe(server.addr, &second, dur);
                let w = wrk_wait(wrk);
                let (server_ns, db_ns) = cpu::between(&before, &meter.read());
                refusals.push(w.rps);
                t.requests += w.requests;
                t.server_ns = server_ns;
                t.db_ns = db_ns;
                flood.turns.push(t);
            } else {
                let mut t = probe(server.addr, &second, dur);
                let (server_ns, db_ns) = cpu::between(&before, &meter.read());
                t.server_ns = server_ns;
                t.db_ns = db_ns;
                alone.turns.push(t);
            }
        }
    }
    refusals.sort_by(f64::total_cmp);
    flood.note = format!(
        "flood: {:.0} refusals/s (median); CPU over probe and flood",
        refusals[refusals.len() / 2]
    );
    alone.note = "CPU over the probe's requests alone".to_owned();
    for row in [&alone, &flood] {
        let wrong: u64 = row.turns.iter().map(|t| t.non_2xx).sum();
        if wrong > 0 {
            eprintln!("  {}: {wrong} answers were not 200!", row.name);
        }
    }
    [alone, flood]
}

#[derive(Clone, Copy, PartialEq)]
enum Expect {
    Refused,
    Answered,
}

/// A row to measure: a server's URL, or why it could not be measured.
struct Entry {
    name: &'static str,
    url: Result<String, String>,
    /// Request headers wrk sends besides `Accept-Language` (the API's bearer token).
    headers: Vec<String>,
    expect: Expect,
    meter: cpu::Meter,
    note: String,
}

impl Entry {
    fn new(name: &'static str, url: String, expect: Expect, meter: cpu::Meter) -> Self {
        Self {
            name,
            url: Ok(url),
            headers: Vec::new(),
            expect,
            meter,
            note: String::new(),
        }
    }

    fn skipped(name: &'static str, why: &str) -> Self {
        eprintln!("{name}: skipped: {why}");
        Self {
            name,
            url: Err(why.to_owned()),
            headers: Vec::new(),
            expect: Expect::Refused,
            meter: cpu::Meter::default(),
            note: String::new(),
        }
    }
}

/// Measures every row of `group` in turns: a second of warm-up each, then `turns` rounds, each
/// row driven for `dur` a round, starting one row further each round. Slow drifts in the
/// machine's load then fall on every row alike, and each target is a ratio between two rows of
/// the same round.
fn interleaved(group: &[Entry], dur: Duration, turns: usize) -> Vec<Row> {
    let live: Vec<(usize, &str)> = group
        .iter()
        .enumerate()
        .filter_map(|(i, e)| e.url.as_deref().ok().map(|u| (i, u)))
        .collect();
    for (i, url) in &live {
        eprintln!("{} (warm-up) …", group[*i].name);
        wrk_wait(wrk_spawn(url, &group[*i].headers, Duration::from_secs(1)));
    }
    let mut results: Vec<Vec<Turn>> = group.iter().map(|_| Vec::new()).collect();
    for round in 0..turns {
        for k in 0..live.len() {
            let (i, url) = live[(k + round) % live.len()];
            eprintln!("{} (turn {} of {turns}) …", group[i].name, round + 1);
            let meter = &group[i].meter;
            let before = meter.read();
            let w = wrk_wait(wrk_spawn(url, &group[i].headers, dur));
            let (server_ns, db_ns) = cpu::between(&before, &meter.read());
            results[i].push(Turn {
                rps: w.rps,
                p50_us: w.p50_us,
                p99_us: w.p99_us,
                requests: w.requests,
                non_2xx: w.non_2xx,
                server_ns,
                db_ns,
            });
        }
    }
    group
        .iter()
        .zip(results)
        .map(|(entry, turns)| {
            let mut note = entry.note.clone();
            if let Err(why) = &entry.url {
                note = format!("skipped: {why}");
            }
            let requests: u64 = turns.iter().map(|t| t.requests).sum();
            let non_2xx: u64 = turns.iter().map(|t| t.non_2xx).sum();
            let wrong = match entry.expect {
                // Every answer should be the 429.
                Expect::Refused if non_2xx + 10 < requests => {
                    format!("only {non_2xx} of {requests} refused!")
                }
                Expect::Answered if non_2xx > 0 => {
                    format!("{non_2xx} of {requests} not answered!")
                }
                _ => String::new(),
            };
            if !wrong.is_empty() {
                eprintln!("  {}: {wrong}", entry.name);
                note = format!("{note} {wrong}");
            }
            Row {
                name: entry.name.to_owned(),
                turns,
                with_db: entry.meter.postmaster.is_some(),
                note: note.trim().to_owned(),
            }
        })
        .collect()
}

/// One keep-alive connection asking for `path` every 4 ms; latency of each answer.
fn probe(addr: SocketAddr, path: &str, dur: Duration) -> Turn {
    if !client_priority() {
        return probe_here(addr, path, dur);
    }
    // A thread of its own, so only the probe is raised, not the wrk processes started later.
    std::thread::scope(|s| {
        s.spawn(|| {
            let tid = std::fs::read_link("/proc/thread-self")
                .ok()
                .and_then(|p| p.file_name()?.to_str()?.parse::<u32>().ok());
            let raised = tid.is_some_and(|tid| {
                Command::new("chrt")
                    .args(["--fifo", "--pid", "10", &tid.to_string()])
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
            });
            if !raised {
                eprintln!("  the probe could not be raised to real-time priority (chrt, as root)");
            }
            probe_here(addr, path, dur)
        })
        .join()
        .expect("the probe's thread")
    })
}

fn probe_here(addr: SocketAddr, path: &str, dur: Duration) -> Turn {
    let mut conn = http1::Conn::connect(addr).expect("connect the probe");
    let every = Duration::from_millis(4);
    let start = Instant::now();
    let mut latencies = Vec::new();
    let mut wrong = 0;
    let mut next = start;
    while start.elapsed() < dur {
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        }
        next += every;
        let sent = Instant::now();
        let status = conn.get(path).expect("probe request");
        latencies.push(sent.elapsed().as_secs_f64() * 1e6);
        if status != 200 {
            wrong += 1;
        }
    }
    let rps = latencies.len() as f64 / start.elapsed().as_secs_f64();
    latencies.sort_by(f64::total_cmp);
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    Turn {
        rps,
        p50_us: at(0.50),
        p99_us: at(0.99),
        requests: latencies.len() as u64,
        non_2xx: wrong,
        ..Turn::default()
    }
}

/// The body length of one answer to `path`.
fn page_bytes(addr: SocketAddr, path: &str) -> usize {
    let mut conn = http1::Conn::connect(addr).expect("connect");
    let status = conn.get(path).expect("request");
    assert_eq!(status, 200, "{path} is not answered");
    conn.last_body_len
}
// ---------------------------------------------------------------------------------------------
// wrk

struct WrkResult {
    rps: f64,
    p50_us: f64,
    p99_us: f64,
    requests: u64,
    non_2xx: u64,
}

/// `ORCHESTRA_LOAD_CLIENT_PRIORITY=1`: wrk in the idle scheduling class and the probe's thread
/// at real-time priority, so that on the server's own cores neither takes the server's CPU nor
/// waits for it, as a remote client would not. Needs `chrt` (util-linux), and root or
/// CAP_SYS_NICE for the probe; the harness says so when it cannot.
fn client_priority() -> bool {
    std::env::var("ORCHESTRA_LOAD_CLIENT_PRIORITY").is_ok_and(|v| v == "1")
}

fn wrk_spawn(url: &str, headers: &[String], dur: Duration) -> Child {
    let mut command = if client_priority() {
        let mut chrt = Command::new("chrt");
        chrt.args(["--idle", "0", "wrk"]);
        chrt
    } else {
        Command::new("wrk")
    };
    command
        .arg(format!("-t{}", env_number("ORCHESTRA_LOAD_THREADS", 1)))
        .arg(format!(
            "-c{}",
            env_number("ORCHESTRA_LOAD_CONNECTIONS", 32)
        ))
        .arg(format!("-d{}s", dur.as_secs().max(1)))
        .args(["--latency", "-H", "Accept-Language: en"])
        .args(headers.iter().flat_map(|h| ["-H", h.as_str()]))
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start wrk")
}

fn wrk_wait(child: Child) -> WrkResult {
    let out = child.wait_with_output().expect("wait for wrk");
    let text = String::from_utf8_lossy(&out.stdout);
    let number_after = |label: &str| -> Option<&str> {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(label))
            .and_then(|rest| rest.split_whitespace().next())
    };
    let parsed = (|| {
        Some(WrkResult {
            rps: number_after("Requests/sec:")?.parse().ok()?,
            p50_us: duration_us(number_after("50%")?)?,
            p99_us: duration_us(number_after("99%")?)?,
            requests: text
                .lines()
                .find(|l| l.contains("requests in"))?
                .split_whitespace()
                .next()?
                .parse()
                .ok()?,
            non_2xx: number_after("Non-2xx or 3xx responses:")
                .and_then(|n| n.parse().ok())
                .unwrap_or(0),
        })
    })();
    parsed.unwrap_or_else(|| {
        panic!(
            "could not read wrk's output:\n{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// wrk's durations: `812.00us`, `1.20ms`, `2.00s`.
fn duration_us(s: &str) -> Option<f64> {
    let split = s.find(|c: char| c.is_ascii_alphabetic())?;
    let (number, unit) = s.split_at(split);
    let number: f64 = number.parse().ok()?;
    Some(match unit {
        "us" => number,
        "ms" => number * 1e3,
        "s" => number * 1e6,
        "m" => number * 60e6,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// The tables

/// (min, median, max) of some values; the median of an even count is the mean of the middle two.
fn spread(mut values: Vec<f64>) -> Option<(f64, f64, f64)> {
    values.retain(|v| v.is_finite());
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let median = if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    };
    Some((values[0], median, values[n - 1]))
}

fn median_of(values: Vec<f64>) -> f64 {
    spread(values).map_or(f64::NAN, |(_, m, _)| m)
}

/// One line a row: requests a second, p50, p99 (medians of the turns, for information), and CPU
/// microseconds per request with its spread over the turns.
fn print_table(rows: &[Row]) {
    println!(
        "| {:<46} | {:>8} | {:>7} | {:>7} | {:>25} | {:>6} | note",
        "row", "req/s", "p50 ms", "p99 ms", "CPU µs/req: med (min–max)", "of db"
    );
    println!(
        "|{:-<48}|{:->10}|{:->9}|{:->9}|{:->27}|{:->8}|------",
        "", "", "", "", "", ""
    );
    for r in rows {
        let cpu = spread(r.turns.iter().map(Turn::cpu_us).collect());
        let Some((lo, mid, hi)) = cpu else {
            println!(
                "| {:<46} | {:>8} | {:>7} | {:>7} | {:>25} | {:>6} | {}",
                r.name, "—", "—", "—", "—", "—", r.note
            );
            continue;
        };
        let db = if r.with_db {
            format!(
                "{:.2}",
                median_of(r.turns.iter().map(Turn::db_us).collect())
            )
        } else {
            "—".to_owned()
        };
        println!(
            "| {:<46} | {:>8.0} | {:>7.3} | {:>7.3} | {:>25} | {:>6} | {}",
            r.name,
            median_of(r.turns.iter().map(|t| t.rps).collect()),
            median_of(r.turns.iter().map(|t| t.p50_us).collect()) / 1e3,
            median_of(r.turns.iter().map(|t| t.p99_us).collect()) / 1e3,
            format!("{mid:.2} ({lo:.2}–{hi:.2})"),
            db,
            r.note
        );
    }
    println!();
}

/// What a target compares, turn by turn.
#[derive(Clone, Copy)]
enum Measure {
    /// CPU per request of the first row ÷ the second's.
    Cpu,
    /// p99 latency of the first row ÷ the second's.
    P99,
}

/// A target: a ratio between two rows, taken in each turn.
struct Target {
    what: String,
    a: &'static str,
    b: &'static str,
    measure: Measure,
    bound: f64,
    at_least: bool,
}

fn targets() -> Vec<Target> {
    let mut list = Vec::new();
    let mut add = |what: String, a, b, measure, bound, at_least| {
        list.push(Target {
            what,
            a,
            b,
            measure,
            bound,
            at_least,
        })
    };
    for name in [rows::MEMORY, rows::SQLITE, rows::POSTGRES] {
        let what = format!(
            "CPU/req, {} ÷ bare 429",
            name.trim_start_matches("doorway ")
        );
        add(what, name, rows::BARE, Measure::Cpu, 1.05, false);
    }
    for name in [rows::MEMORY, rows::SQLITE, rows::POSTGRES] {
        let what = format!(
            "CPU/req, {} ÷ tower_governor",
            name.trim_start_matches("doorway ")
        );
        add(what, name, rows::GOVERNOR, Measure::Cpu, 1.0, false);
    }
    // The API's refusal "≥ 0.9 of the bare 429": requests per CPU second, so the bare 429's
    // CPU per request over the API's.
    add(
        "CPU/req, bare 429 ÷ API refusing".into(),
        rows::BARE,
        rows::API,
        Measure::Cpu,
        0.9,
        true,
    );
    for name in [rows::GOOD_MEMORY, rows::GOOD_SQL] {
        let what = format!(
            "CPU/req, {} ÷ guard off",
            name.trim_start_matches("good link answered, ")
        );
        add(what, name, rows::GOOD_OFF, Measure::Cpu, 1.05, false);
    }
    // "Good link answered ≥ 0.8× the floor": requests per CPU second, so the floor's CPU per
    // request over the good link's.
    add(
        "CPU/req, floor ÷ good link (SQLite)".into(),
        rows::FLOOR_SQLITE,
        rows::GOOD_SQL,
        Measure::Cpu,
        0.8,
        true,
    );
    add(
        "CPU/req, floor ÷ good link (PostgreSQL)".into(),
        rows::FLOOR_POSTGRES,
        rows::GOOD_POSTGRES,
        Measure::Cpu,
        0.8,
        true,
    );
    // The API's read of a small instance costs at most twice the visitor's page.
    add(
        "CPU/req, API read ÷ good link (SQLite)".into(),
        rows::API_READ_SQLITE,
        rows::GOOD_SQL,
        Measure::Cpu,
        2.0,
        false,
    );
    add(
        "CPU/req, API read ÷ good link (PostgreSQL)".into(),
        rows::API_READ_POSTGRES,
        rows::GOOD_POSTGRES,
        Measure::Cpu,
        2.0,
        false,
    );
    add(
        "p99, second link flooded ÷ not flooded".into(),
        rows::SECOND_FLOOD,
        rows::SECOND_ALONE,
        Measure::P99,
        2.0,
        false,
    );
    list
}

fn print_targets(rows: &[Row]) {
    let get = |name: &str| rows.iter().find(|r| r.name == name && !r.turns.is_empty());
    println!(
        "| {:<58} | {:>7} | {:>5} | {:>6} | {:>5} | {:>5} |",
        "target (ratio in each turn)", "bound", "min", "median", "max", "turns"
    );
    println!(
        "|{:-<60}|{:->9}|{:->7}|{:->8}|{:->7}|{:->7}|--------",
        "", "", "", "", "", ""
    );
    for t in targets() {
        let bound = format!("{} {}", if t.at_least { "≥" } else { "≤" }, t.bound);
        let (Some(a), Some(b)) = (get(t.a), get(t.b)) else {
            println!(
                "| {:<58} | {bound:>7} | {:>5} | {:>6} | {:>5} | {:>5} | not measured",
                t.what, "—", "—", "—", 0
            );
            continue;
        };
        let value = |x: &Turn| match t.measure {
            Measure::Cpu => x.cpu_us(),
            Measure::P99 => x.p99_us,
        };
        let ratios: Vec<f64> = a
            .turns
            .iter()
            .zip(&b.turns)
            .map(|(x, y)| value(x) / value(y))
            .collect();
        let n = ratios.len();
        let Some((lo, mid, hi)) = spread(ratios) else {
            continue;
        };
        let met = if t.at_least {
            mid >= t.bound
        } else {
            mid <= t.bound
        };
        println!(
            "| {:<58} | {bound:>7} | {lo:>5.2} | {mid:>6.2} | {hi:>5.2} | {n:>5} | {}",
            t.what,
            if met { "met" } else { "MISSED" }
        );
    }
    // Throughput, for information: the issue's other figure, from the same turns.
    if let (Some(g), true) = (get(rows::GOVERNOR), get(rows::BARE).is_some()) {
        for name in [rows::MEMORY, rows::SQLITE, rows::POSTGRES] {
            if let Some(r) = get(name) {
                let ratios = r.turns.iter().zip(&g.turns).map(|(x, y)| x.rps / y.rps);
                if let Some((lo, mid, hi)) = spread(ratios.collect()) {
                    println!(
                        "  (information) req/s, {} ÷ tower_governor: {mid:.2} ({lo:.2}–{hi:.2})",
                        name.trim_start_matches("doorway ")
                    );
                }
            }
        }
    }
    println!();
}
// ---------------------------------------------------------------------------------------------
// Servers

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port on 127.0.0.1")
}

fn stop(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Sends `n` requests on `path` so a limited link is refused before it is measured.
fn hammer(addr: SocketAddr, path: &str, n: usize) {
    let mut conn = http1::Conn::connect(addr).expect("connect");
    conn.pipeline(std::iter::repeat_n(path, n), 64, |_| {})
        .expect("hammer");
    let status = conn.get(path).expect("request");
    assert_eq!(status, 429, "{path} is not refused after {n} requests");
}

enum Database {
    Sqlite(tempfile::TempDir),
    Postgres(String),
}

impl Database {
    fn sqlite() -> Self {
        Database::Sqlite(tempfile::tempdir().expect("a temporary directory"))
    }

    fn url(&self) -> String {
        match self {
            Database::Sqlite(dir) => {
                format!("sqlite:{}", dir.path().join("orchestra.db").display())
            }
            Database::Postgres(url) => url.clone(),
        }
    }
}

/// The real `orchestra serve`, configured through its own command line.
struct Orchestra {
    child: Child,
    addr: SocketAddr,
    /// Paths of good links, each on its own instance.
    links: Vec<String>,
    /// The ids of those instances, in the same order.
    instances: Vec<String>,
    db: Database,
    /// The PostgreSQL cluster's postmaster, when its CPU is to be counted.
    postmaster: Option<u32>,
}

impl Orchestra {
    fn start(
        db: Database,
        flood: &str,
        settings: &[(&str, &str)],
        links: usize,
        postmaster: Option<u32>,
    ) -> Self {
        let url = db.url();
        let cli = |args: &[&str]| serve::cli(ORCHESTRA, &url, args);
        serve::configure(ORCHESTRA, &url, settings);
        let (links, instances) = (0..links)
            .map(|i| {
                let id = cli(&[
                    "instance",
                    "start",
                    "supplier_onboarding",
                    "--subject",
                    &format!("Load {i}"),
                ]);
                let link = cli(&["link", "issue", &id, "--participant", "supplier"]);
                let path = link
                    .find("/interaction/")
                    .map_or(link.as_str(), |i| &link[i..]);
                (path.to_owned(), id)
            })
            .unzip();
        let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let mut child = server_command(Path::new(ORCHESTRA))
            .args(["serve", "--bind", &addr.to_string()])
            .env("ORCHESTRA_DATABASE_URL", &url)
            .env("ORCHESTRA_FLOOD", flood)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start orchestra serve");
        serve::wait_until_listening(addr, &mut child, "orchestra serve", LISTEN_WAIT);
        let postmaster = postmaster.filter(|_| matches!(db, Database::Postgres(_)));
        Self {
            child,
            addr,
            links,
            instances,
            db,
            postmaster,
        }
    }

    fn meter(&self) -> cpu::Meter {
        cpu::Meter {
            server: self.child.id(),
            postmaster: self.postmaster,
        }
    }

    fn db_url(&self) -> String {
        self.db.url()
    }

    fn page_bytes(&self, path: &str) -> usize {
        page_bytes(self.addr, path)
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The body length of one answer to `path` sent with `header`, which must be a 200.
    fn body_bytes(&self, path: &str, header: &str) -> usize {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(self.addr).expect("connect");
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: {}\r\n{header}\r\nAccept-Language: en\r\n\
             Connection: close\r\n\r\n",
            self.addr
        )
        .expect("send");
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).expect("read the answer");
        let text = String::from_utf8_lossy(&answer);
        assert!(
            text.starts_with("HTTP/1.1 200"),
            "{path} is not answered: {}",
            text.lines().next().unwrap_or("")
        );
        text.find("\r\n\r\n")
            .map_or(0, |end| answer.len() - end - 4)
    }

    fn hammer(&self, path: &str, n: usize) {
        hammer(self.addr, path, n);
    }
}

impl Drop for Orchestra {
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}

/// A server that is not Orchestra: this executable again, with `--serve KIND`.
struct Baseline {
    child: Child,
    addr: SocketAddr,
}

/// A command that starts a server, pinned to `ORCHESTRA_LOAD_SERVER_CPUS` (a `taskset` CPU
/// list) when set. Run the harness itself under `taskset` on the other CPUs, and wrk and the
/// probe stay off the server's cores: what a remote load generator would be.
fn server_command(program: &Path) -> Command {
    match std::env::var("ORCHESTRA_LOAD_SERVER_CPUS") {
        Ok(cpus) if !cpus.trim().is_empty() => {
            let mut command = Command::new("taskset");
            command.args(["-c", cpus.trim()]).arg(program);
            command
        }
        _ => Command::new(program),
    }
}

impl Baseline {
    fn start(kind: &str, args: &[&str]) -> Self {
        let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let mut command = server_command(&std::env::current_exe().expect("this executable"));
        command.args(["--serve", kind, &addr.to_string()]);
        command.args(args);
        let mut child = command
            .stdout(Stdio::null())
            .spawn()
            .expect("start a baseline server");
        serve::wait_until_listening(addr, &mut child, kind, LISTEN_WAIT);
        Self { child, addr }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn hammer(&self, path: &str, n: usize) {
        hammer(self.addr, path, n);
    }

    fn meter(&self) -> cpu::Meter {
        cpu::Meter {
            server: self.child.id(),
            postmaster: None,
        }
    }
}

impl Drop for Baseline {
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}

/// A PostgreSQL server to make databases on: named by the environment, or started here.
struct Postgres {
    admin_url: String,
    /// A server this harness started, stopped when the harness ends.
    owned: Option<(PathBuf, tempfile::TempDir)>,
}

impl Postgres {
    fn find_or_start() -> Option<Self> {
        for name in [
            "ORCHESTRA_BENCH_POSTGRES_URL",
            "ORCHESTRA_TEST_POSTGRES_URL",
        ] {
            if let Ok(url) = std::env::var(name) {
                return Some(Self {
                    admin_url: url,
                    owned: None,
                });
            }
        }
        match Self::start() {
            Ok(p) => Some(p),
            Err(e) => {
                eprintln!("PostgreSQL row skipped: {e}");
                None
            }
        }
    }

    /// initdb and pg_ctl in a temporary directory, trust authentication on 127.0.0.1 only.
    fn start() -> Result<Self, String> {
        let bin = ["/usr/local/bin", "/usr/bin"]
            .iter()
            .map(PathBuf::from)
            .chain(
                std::fs::read_dir("/usr/lib/postgresql")
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path().join("bin")),
            )
            .find(|d| d.join("initdb").exists() && d.join("pg_ctl").exists())
            .ok_or("initdb and pg_ctl were not found")?;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let data = dir.path().join("data");
        let port = free_port();
        // PostgreSQL refuses to run as root: run it as the `postgres` user when we are root.
        let as_root = Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
        let run = |args: &[&str]| -> Result<(), String> {
            let mut command = if as_root {
                let mut c = Command::new("runuser");
                c.args(["-u", "postgres", "--"]);
                c.arg(bin.join(args[0]));
                c
            } else {
                Command::new(bin.join(args[0]))
            };
            let out = command
                .args(&args[1..])
                .output()
                .map_err(|e| e.to_string())?;
            if out.status.success() {
                Ok(())
            } else {
                Err(format!(
                    "{} failed: {}",
                    args[0],
                    String::from_utf8_lossy(&out.stderr)
                ))
            }
        };
        if as_root {
            Command::new("chown")
                .args(["-R", "postgres"])
                .arg(dir.path())
                .status()
                .map_err(|e| e.to_string())?;
        }
        let data_s = data.display().to_string();
        let sock = dir.path().display().to_string();
        run(&[
            "initdb",
            "-D",
            &data_s,
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
        ])?;
        let options = format!("-p {port} -k {sock} -c listen_addresses=127.0.0.1 -c fsync=off");
        let log = dir.path().join("log").display().to_string();
        run(&[
            "pg_ctl", "-D", &data_s, "-o", &options, "-l", &log, "-w", "start",
        ])?;
        eprintln!("started a throwaway PostgreSQL on 127.0.0.1:{port}");
        Ok(Self {
            admin_url: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
            owned: Some((bin, dir)),
        })
    }

    /// The postmaster's process id, when this harness started the cluster: its CPU, and its
    /// backends', is then counted on the PostgreSQL rows.
    fn postmaster(&self) -> Option<u32> {
        let (_, dir) = self.owned.as_ref()?;
        let pid = std::fs::read_to_string(dir.path().join("data").join("postmaster.pid")).ok()?;
        pid.lines().next()?.trim().parse().ok()
    }

    /// A fresh database on the server.
    fn database(&self) -> Result<Database, String> {
        let name = format!(
            "orchestra_load_{}",
            std::process::id() as u64 * 1000 + rand_suffix()
        );
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        runtime.block_on(async {
            use sqlx::Connection;
            sqlx::any::install_default_drivers();
            let mut conn = sqlx::AnyConnection::connect(&self.admin_url)
                .await
                .map_err(|e| e.to_string())?;
            sqlx::query(&format!("CREATE DATABASE {name}"))
                .execute(&mut conn)
                .await
                .map_err(|e| e.to_string())?;
            Ok::<_, String>(())
        })?;
        let base = self
            .admin_url
            .rsplit_once('/')
            .map_or(self.admin_url.as_str(), |(b, _)| b);
        Ok(Database::Postgres(format!("{base}/{name}")))
    }
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed) % 1000
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if let Some((bin, dir)) = &self.owned {
            let data = dir.path().join("data");
            let mut command = Command::new("runuser");
            command
                .args(["-u", "postgres", "--"])
                .arg(bin.join("pg_ctl"));
            let _ = command
                .arg("-D")
                .arg(&data)
                .args(["-m", "immediate", "stop"])
                .output()
                .or_else(|_| {
                    Command::new(bin.join("pg_ctl"))
                        .arg("-D")
                        .arg(&data)
                        .args(["-m", "immediate", "stop"])
                        .output()
                });
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The servers that are not Orchestra

// A bare axum server to compare with: axum's own extractors on purpose.
#[allow(clippy::disallowed_types)]
mod baseline {
    use std::net::SocketAddr;
    use std::sync::Arc;
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use axum::Router;
    use axum::extract::{Path, State};
    use axum::http::Request;
    use axum::response::{IntoResponse, Response};
    use axum::routing::get;
    use orchestra::http::doorway::refusal;
    use orchestra::i18n::Lang;
    use tower_governor::GovernorError;
    use tower_governor::governor::GovernorConfigBuilder;
    use tower_governor::key_extractor::KeyExtractor;

    /// `--serve KIND ADDR [SQLITE-PATH]`
    pub fn serve(args: &[String]) {
        let kind = args[0].as_str();
        let addr: SocketAddr = args[1].parse().expect("an address");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            let app = match kind {
                "bare" => bare(),
                "governor" => governor(),
                "naive" => naive(args.get(2).expect("a database path")).await,
                "floor" => floor(args.get(2).expect("a database URL")).await,
                other => panic!("no baseline server called {other}"),
            };
            let listener = tokio::net::TcpListener::bind(addr).await.expect("bind");
            axum::serve(listener, app).await.expect("serve");
        });
    }

    /// The floor: the doorway's route shape answering Orchestra's own refusal, with nothing
    /// in front.
    fn bare() -> Router {
        Router::new().route("/interaction/{link}", get(|| async { refusal(Lang::En) }))
    }

    #[derive(Clone)]
    struct PathKey;

    impl KeyExtractor for PathKey {
        type Key = String;
        fn extract<T>(&self, req: &Request<T>) -> Result<Self::Key, GovernorError> {
            Ok(req.uri().path().to_owned())
        }
    }

    /// tower_governor keyed by the link, 5 requests then one more every 12 minutes: as close
    /// to a per-link limit of 5 an hour as its token bucket gets.
    fn governor() -> Router {
        let config = GovernorConfigBuilder::default()
            .key_extractor(PathKey)
            .period(Duration::from_secs(720))
            .burst_size(5)
            .finish()
            .expect("a governor configuration");
        Router::new()
            .route("/interaction/{link}", get(|| async { "answered" }))
            .route_layer(tower_governor::GovernorLayer::new(Arc::new(config)))
    }

    /// The floor of a doorway page, not Orchestra: the page's route shape, one primary-key
    /// read on the same kind of pool (the app's own `Db`: sqlx's `Any` pool with the app's
    /// connection settings, on the same database) and an askama page of about the doorway
    /// page's size. What any page that reads its database once costs.
    async fn floor(url: &str) -> Router {
        let db = orchestra::store::Db::connect(url)
            .await
            .expect("open the database");
        Router::new()
            .route("/interaction/{*link}", get(floor_page))
            .with_state(db)
    }

    /// A page shaped like the doorway's form step (base.html and doorway/step.html).
    #[derive(askama::Template)]
    #[template(
        ext = "html",
        source = r#"<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="referrer" content="no-referrer">
  <title>Supplier details · {{ site_name }}</title>
  <link rel="stylesheet" href="/static/style.css">
</head>
<body>
  <header class="site">
    <span class="brand">{{ site_name }}</span>
    <nav class="languages" aria-label="Language">
      <strong lang="en" aria-current="true">English</strong>
      <a href="?lang=fr" lang="fr" hreflang="fr">Français</a>
    </nav>
  </header>
  <main>
<article class="subject">
  <h1 class="subject-title">{{ title }}</h1>
  {% if !body.is_empty() %}<div class="subject-body">{{ body }}</div>{% endif %}
</article>
<section class="step step-form">
  <p class="progress">Step {{ step_number }} / {{ step_count }}</p>
  <h2>Supplier details</h2>
  <form method="post" class="stack" novalidate>
  <input type="hidden" name="_step" value="{{ step_number }}">
    {% for (name, label, kind) in fields %}
      <label for="f-{{ name }}">{{ label }} <span class="required" title="required">*</span></label>
      {% if *kind == "long" %}
      <textarea id="f-{{ name }}" name="{{ name }}" rows="5" required></textarea>
      {% else %}
      <input id="f-{{ name }}" name="{{ name }}" value=""{% if *kind == "email" %} type="email" autocomplete="email"{% endif %} required>
      {% endif %}
    {% endfor %}
    <button type="submit">Send</button>
  </form>
</section>
  </main>
</body>
</html>
"#
    )]
    struct FloorPage<'a> {
        site_name: &'a str,
        title: &'a str,
        body: &'a str,
        step_number: i64,
        step_count: i64,
        fields: [(&'a str, &'a str, &'a str); 4],
    }

    async fn floor_page(
        State(db): State<orchestra::store::Db>,
        Path(link): Path<String>,
    ) -> Response {
        use askama::Template;
        // The instance named by a link `l.ID.…`.
        let id = link
            .strip_prefix("l.")
            .and_then(|rest| rest.split('.').next())
            .and_then(|id| id.parse::<i64>().ok());
        let Some(id) = id else {
            return axum::http::StatusCode::NOT_FOUND.into_response();
        };
        match orchestra::store::instances::by_id(&db, id).await {
            Ok(Some(row)) => {
                let page = FloorPage {
                    site_name: "Orchestra",
                    title: &row.subject_title,
                    body: &row.subject_body,
                    step_number: row.step_index + 1,
                    step_count: 2,
                    fields: [
                        ("company", "Company", "text"),
                        ("contact_email", "Contact email", "email"),
                        ("yearly_volume", "Yearly volume", "number"),
                        ("notes", "Notes", "long"),
                    ],
                };
                match page.render() {
                    Ok(html) => axum::response::Html(html).into_response(),
                    Err(_) => axum::http::StatusCode::INTERNAL_SERVER_ERROR.into_response(),
                }
            }
            Ok(None) => axum::http::StatusCode::NOT_FOUND.into_response(),
            Err(_) => axum::http::StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        }
    }

    /// The classic flood table: one row inserted and one count per request, in the database.
    async fn naive(path: &str) -> Router {
        use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal);
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .connect_with(options)
            .await
            .expect("open the naive store");
        sqlx::query(
            "CREATE TABLE flood (fid INTEGER PRIMARY KEY, event TEXT NOT NULL, \
             identifier TEXT NOT NULL, timestamp INTEGER NOT NULL, expiration INTEGER NOT NULL)",
        )
        .execute(&pool)
        .await
        .expect("create the flood table");
        sqlx::query("CREATE INDEX allow ON flood (event, identifier, timestamp)")
            .execute(&pool)
            .await
            .expect("index it");
        Router::new()
            .route("/interaction/{link}", get(naive_check))
            .with_state(pool)
    }

    async fn naive_check(
        State(pool): State<sqlx::SqlitePool>,
        Path(link): Path<String>,
    ) -> Response {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let inserted = sqlx::query(
            "INSERT INTO flood (event, identifier, timestamp, expiration) VALUES ('interaction', $1, $2, $3)",
        )
        .bind(&link)
        .bind(now)
        .bind(now + 3600)
        .execute(&pool)
        .await;
        let count: Result<i64, _> = sqlx::query_scalar(
            "SELECT COUNT(*) FROM flood WHERE event = 'interaction' AND identifier = $1 AND timestamp > $2",
        )
        .bind(&link)
        .bind(now - 3600)
        .fetch_one(&pool)
        .await;
        match (inserted, count) {
            (Ok(_), Ok(n)) if n <= 5 => "answered".into_response(),
            (Ok(_), Ok(_)) => refusal(Lang::En),
            _ => axum::http::StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        }
    }
}
