//! The load harness: `cargo bench --bench load` (docs/performance.md).
//!
//! Starts each server as its own process on 127.0.0.1, drives it with `wrk` for a few seconds,
//! and prints one table: requests a second, p50, p99 and the ratio to the bare 429. The real
//! `orchestra serve` binary serves the doorway rows, configured with `orchestra config set` on
//! its own database; this same executable, started again with `--serve KIND`, serves the rows
//! that are not Orchestra (the bare 429, tower_governor, the naive SQL store).
//!
//! Environment:
//! - `ORCHESTRA_LOAD_SECS` (default 5): measured seconds per row, after one second of warm-up;
//! - `ORCHESTRA_LOAD_RUNS` (default 1): whole runs; with more than one, a table of medians too;
//! - `ORCHESTRA_LOAD_CONNECTIONS` (default 32), `ORCHESTRA_LOAD_THREADS` (default 1): for wrk;
//! - `ORCHESTRA_LOAD_CLIENT_PRIORITY=1`: wrk at idle priority and the probe at real-time priority
//!   (`client_priority`), for a load generator that shares the server's cores;
//! - `ORCHESTRA_LOAD_ONLY`: run only the rows whose name contains one of these `|`-separated
//!   texts (`second link`, `bare|refusing`, …), to look again at one part without the whole run;
//! - `ORCHESTRA_BENCH_POSTGRES_URL`, else `ORCHESTRA_TEST_POSTGRES_URL`: a PostgreSQL server
//!   whose admin URL may create databases; without one, a throwaway server is started when
//!   `initdb` is found, else the PostgreSQL row is skipped and the table says so.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[path = "support/http1.rs"]
mod http1;
#[path = "support/serve.rs"]
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
    if let Err(e) = Command::new("wrk").arg("--version").output() {
        eprintln!(
            "The load harness drives its servers with wrk, which could not be run ({e}).\n\
             Install it (Debian/Ubuntu: apt-get install wrk) and run `cargo bench --bench load` again."
        );
        std::process::exit(1);
    }
    let secs = env_number("ORCHESTRA_LOAD_SECS", 5);
    let runs = env_number("ORCHESTRA_LOAD_RUNS", 1).max(1);
    let postgres = Postgres::find_or_start();
    let mut tables = Vec::new();
    for run in 1..=runs {
        eprintln!("run {run} of {runs}");
        let table = run_once(secs, postgres.as_ref());
        println!(
            "\nRun {run} of {runs} ({secs} s a row, wrk {})",
            wrk_shape()
        );
        print_table(&table);
        println!("Targets:");
        for check in checks(&table) {
            check.print("");
        }
        tables.push(table);
    }
    if runs > 1 {
        let medians = medians(&tables);
        println!("\nMedians of {runs} runs (ratios: the median of each run's ratio)");
        print_table(&medians);
        print_median_checks(&tables);
    }
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

// ---------------------------------------------------------------------------------------------
// One run

#[derive(Clone, Debug, Default)]
struct Row {
    name: String,
    rps: f64,
    p50_us: f64,
    p99_us: f64,
    /// Requests a second over the bare 429's, when the row is a throughput row.
    ratio: Option<f64>,
    note: String,
}

/// What a row measures, so the targets can be checked by name.
mod rows {
    pub const BARE: &str = "bare axum 429 (floor)";
    pub const MEMORY: &str = "doorway refusing, flood=memory";
    pub const SQLITE: &str = "doorway refusing, flood=sql on SQLite";
    pub const POSTGRES: &str = "doorway refusing, flood=sql on PostgreSQL";
    pub const GOVERNOR: &str = "tower_governor refusing (key: path)";
    pub const NAIVE: &str = "naive SQL insert+count per request (SQLite)";
    pub const GOOD_OFF: &str = "good link answered, guard off";
    pub const GOOD_MEMORY: &str = "good link answered, guard counting (memory)";
    pub const GOOD_SQL: &str = "good link answered, guard counting (sql)";
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

fn run_once(secs: u64, postgres: Option<&Postgres>) -> Vec<Row> {
    let mut table = Vec::new();
    let dur = Duration::from_secs(secs);

    // The floor, the doorway on each backend and tower_governor run side by side and are
    // measured in turns (`interleaved`), so a change in the machine's load falls on all alike.
    // The baselines answer a path of the doorway's real shape and length (an instance, no
    // branch, an expiry, 64 hex digits), so each server parses and routes the same bytes.
    let path = &format!("/interaction/l.1..1796000000.{}", "ab".repeat(32));
    let mut baselines = Vec::new();
    let mut servers = Vec::new();
    let mut group: Vec<Entry> = Vec::new();
    if wanted(rows::BARE) {
        let bare = Baseline::start("bare", None);
        group.push(Entry::new(rows::BARE, bare.url(path), Expect::Refused));
        baselines.push(bare);
    }
    let limits = [
        ("orchestra.request_limits.enabled", "true"),
        ("interaction.limits.per_link", HAMMER_LIMIT),
        ("interaction.limits.total", "1000000000"),
    ];
    let postgres_db = || match postgres.map(Postgres::database) {
        Some(Ok(db)) => Ok(db),
        Some(Err(e)) => Err(e),
        None => Err("no PostgreSQL (set ORCHESTRA_BENCH_POSTGRES_URL, or install initdb)".into()),
    };
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
                let server = Orchestra::start(db, flood, &limits, 1);
                server.hammer(&server.links[0], 20);
                group.push(Entry::new(
                    name,
                    server.url(&server.links[0]),
                    Expect::Refused,
                ));
                servers.push(server);
            }
            Err(e) => group.push(Entry::skipped(name, &e)),
        }
    }
    if wanted(rows::GOVERNOR) {
        let governor = Baseline::start("governor", None);
        governor.hammer(path, 20);
        group.push(Entry::new(
            rows::GOVERNOR,
            governor.url(path),
            Expect::Refused,
        ));
        baselines.push(governor);
    }
    table.extend(interleaved(&group, dur));
    drop((baselines, servers));

    if wanted(rows::NAIVE) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let naive = Baseline::start("naive", Some(&dir.path().join("naive.db")));
        naive.hammer(path, 20);
        let entry = Entry::new(rows::NAIVE, naive.url(path), Expect::Refused);
        table.extend(interleaved(&[entry], dur));
    }

    // The allowed path: the same good link answered, with the guard off and counting.
    let off = [("orchestra.request_limits.enabled", "false")];
    let counting = [
        ("orchestra.request_limits.enabled", "true"),
        ("interaction.limits.per_link", "1000000"),
        ("interaction.limits.total", "1000000000"),
    ];
    let mut servers = Vec::new();
    let mut group = Vec::new();
    for (name, flood, limits) in [
        (rows::GOOD_OFF, "sql", &off[..]),
        (rows::GOOD_MEMORY, "memory", &counting[..]),
        (rows::GOOD_SQL, "sql", &counting[..]),
    ] {
        if !wanted(name) {
            continue;
        }
        let server = Orchestra::start(Database::sqlite(), flood, limits, 1);
        group.push(Entry::new(
            name,
            server.url(&server.links[0]),
            Expect::Answered,
        ));
        servers.push(server);
    }
    table.extend(interleaved(&group, dur));
    drop(servers);

    // One link flooded, another used at a steady pace: the second link's latency.
    if wanted(rows::SECOND_ALONE) || wanted(rows::SECOND_FLOOD) {
        table.extend(second_link(dur));
    }

    let floor = table
        .iter()
        .find(|r| r.name == rows::BARE)
        .map_or(0.0, |r| r.rps);
    for row in &mut table {
        if floor > 0.0 && row.rps > 0.0 && !row.name.starts_with("second link") {
            row.ratio = Some(row.rps / floor);
        }
    }
    table
}

/// The second link's latency at a steady pace, alone and while the first link is flooded.
fn second_link(dur: Duration) -> [Row; 2] {
    let flooded = [
        ("orchestra.request_limits.enabled", "true"),
        ("interaction.limits.per_link", "3000"),
        ("interaction.limits.total", "1000000000"),
    ];
    let server = Orchestra::start(Database::sqlite(), "sql", &flooded, 2);
    server.hammer(&server.links[0], 3100);
    let second = server.links[1].clone();
    let probe_for = dur.min(Duration::from_secs(4));
    let alone = probe(rows::SECOND_ALONE, server.addr, &second, probe_for);
    let flood = wrk_spawn(
        &server.url(&server.links[0]),
        probe_for + Duration::from_secs(2),
    );
    std::thread::sleep(Duration::from_millis(700));
    let mut row = probe(rows::SECOND_FLOOD, server.addr, &second, probe_for);
    let flood = wrk_wait(flood);
    row.note = format!("flood: {:.0} refusals/s", flood.rps);
    [alone, row]
}

fn skipped(name: &str, why: &str) -> Row {
    eprintln!("{name}: skipped: {why}");
    Row {
        name: name.to_owned(),
        note: format!("skipped: {why}"),
        ..Row::default()
    }
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
    expect: Expect,
}

impl Entry {
    fn new(name: &'static str, url: String, expect: Expect) -> Self {
        Self {
            name,
            url: Ok(url),
            expect,
        }
    }

    fn skipped(name: &'static str, why: &str) -> Self {
        Self {
            name,
            url: Err(why.to_owned()),
            expect: Expect::Refused,
        }
    }
}

/// Turns per row in `interleaved`.
const TURNS: u32 = 3;

/// Measures every row of `group` in turns: a second of warm-up each, then `TURNS` rounds, each
/// row driven for `dur / 2` (at least a second) a round, starting one row further each round.
/// Slow drifts in the machine's load then fall on every row alike, and the ratios between rows
/// of one run are what the harness compares. Requests a second: the mean of the turns; p50 and
/// p99: their medians.
fn interleaved(group: &[Entry], dur: Duration) -> Vec<Row> {
    let slice = (dur / 2).max(Duration::from_secs(1));
    let live: Vec<(usize, &str)> = group
        .iter()
        .enumerate()
        .filter_map(|(i, e)| e.url.as_deref().ok().map(|u| (i, u)))
        .collect();
    for (i, url) in &live {
        eprintln!("{} (warm-up) …", group[*i].name);
        wrk_wait(wrk_spawn(url, Duration::from_secs(1)));
    }
    let mut results: Vec<Vec<WrkResult>> = group.iter().map(|_| Vec::new()).collect();
    for round in 0..TURNS as usize {
        for k in 0..live.len() {
            let (i, url) = live[(k + round) % live.len()];
            eprintln!("{} (turn {} of {TURNS}) …", group[i].name, round + 1);
            results[i].push(wrk_wait(wrk_spawn(url, slice)));
        }
    }
    let median = |mut v: Vec<f64>| -> f64 {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    group
        .iter()
        .zip(results)
        .map(|(entry, turns)| {
            if let Err(why) = &entry.url {
                return skipped(entry.name, why);
            }
            let requests: u64 = turns.iter().map(|t| t.requests).sum();
            let non_2xx: u64 = turns.iter().map(|t| t.non_2xx).sum();
            let note = match entry.expect {
                // Every answer should be the 429.
                Expect::Refused if non_2xx + 10 < requests => {
                    format!("only {non_2xx} of {requests} refused!")
                }
                Expect::Answered if non_2xx > 0 => {
                    format!("{non_2xx} of {requests} not answered!")
                }
                _ => String::new(),
            };
            if !note.is_empty() {
                eprintln!("  {}: {note}", entry.name);
            }
            Row {
                name: entry.name.to_owned(),
                rps: turns.iter().map(|t| t.rps).sum::<f64>() / turns.len() as f64,
                p50_us: median(turns.iter().map(|t| t.p50_us).collect()),
                p99_us: median(turns.iter().map(|t| t.p99_us).collect()),
                ratio: None,
                note,
            }
        })
        .collect()
}

/// One keep-alive connection asking for `path` every 4 ms; latency of each answer.
fn probe(name: &str, addr: SocketAddr, path: &str, dur: Duration) -> Row {
    eprintln!("{name} …");
    if !client_priority() {
        return probe_here(name, addr, path, dur);
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
            probe_here(name, addr, path, dur)
        })
        .join()
        .expect("the probe's thread")
    })
}

fn probe_here(name: &str, addr: SocketAddr, path: &str, dur: Duration) -> Row {
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
    Row {
        name: name.to_owned(),
        rps,
        p50_us: at(0.50),
        p99_us: at(0.99),
        ratio: None,
        note: if wrong > 0 {
            format!("{wrong} answers were not 200!")
        } else {
            String::new()
        },
    }
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

fn wrk_spawn(url: &str, dur: Duration) -> Child {
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
// The table

fn print_table(rows: &[Row]) {
    println!(
        "| {:<44} | {:>9} | {:>9} | {:>9} | {:>8} | note",
        "row", "req/s", "p50 ms", "p99 ms", "÷ bare"
    );
    println!(
        "|{:-<46}|{:->11}|{:->11}|{:->11}|{:->10}|------",
        "", "", "", "", ""
    );
    for r in rows {
        if r.rps == 0.0 {
            println!(
                "| {:<44} | {:>9} | {:>9} | {:>9} | {:>8} | {}",
                r.name, "—", "—", "—", "—", r.note
            );
            continue;
        }
        let ratio = r.ratio.map_or("—".to_owned(), |x| format!("{x:.2}"));
        println!(
            "| {:<44} | {:>9.0} | {:>9.3} | {:>9.3} | {:>8} | {}",
            r.name,
            r.rps,
            r.p50_us / 1e3,
            r.p99_us / 1e3,
            ratio,
            r.note
        );
    }
    println!();
}

/// One of issue 4's targets, as measured in one run.
struct Check {
    what: String,
    value: Option<f64>,
    target: f64,
    at_least: bool,
}

impl Check {
    fn print(&self, runs: &str) {
        let Some(v) = self.value else {
            println!("  n/a    {}: not measured", self.what);
            return;
        };
        let met = if self.at_least {
            v >= self.target
        } else {
            v <= self.target
        };
        println!(
            "  {} {}: {v:.2} (target {} {}){runs}",
            if met { "met   " } else { "MISSED" },
            self.what,
            if self.at_least { "≥" } else { "≤" },
            self.target
        );
    }
}

/// The targets, each a ratio between two rows of the same run.
fn checks(rows: &[Row]) -> Vec<Check> {
    let get = |name: &str| rows.iter().find(|r| r.name == name && r.rps > 0.0);
    let mut checks = Vec::new();
    let mut check = |what: String, value: Option<f64>, target: f64, at_least: bool| {
        checks.push(Check {
            what,
            value,
            target,
            at_least,
        });
    };
    for name in [rows::MEMORY, rows::SQLITE, rows::POSTGRES] {
        check(
            format!("{name} ÷ bare 429"),
            get(name).and_then(|r| r.ratio),
            0.9,
            true,
        );
    }
    let governor = get(rows::GOVERNOR).map(|r| r.rps);
    for name in [rows::MEMORY, rows::SQLITE, rows::POSTGRES] {
        let value = get(name).zip(governor).map(|(r, g)| r.rps / g);
        check(format!("{name} ÷ tower_governor"), value, 1.0, true);
    }
    let off = get(rows::GOOD_OFF).map(|r| r.rps);
    for name in [rows::GOOD_MEMORY, rows::GOOD_SQL] {
        let value = get(name).zip(off).map(|(r, o)| r.rps / o);
        check(format!("{name} ÷ guard off"), value, 0.95, true);
    }
    let alone = get(rows::SECOND_ALONE).map(|r| r.p99_us);
    let value = get(rows::SECOND_FLOOD)
        .zip(alone)
        .map(|(r, a)| r.p99_us / a);
    check(
        "second link p99, flooded ÷ not flooded".into(),
        value,
        2.0,
        false,
    );
    checks
}

/// Each target's median over the runs, each run's ratio taken within that run.
fn print_median_checks(tables: &[Vec<Row>]) {
    let runs: Vec<Vec<Check>> = tables.iter().map(|t| checks(t)).collect();
    println!("Targets (median of the runs' ratios):");
    for (i, first) in runs[0].iter().enumerate() {
        let mut values: Vec<f64> = runs.iter().filter_map(|r| r[i].value).collect();
        let listed = values
            .iter()
            .map(|v| format!("{v:.2}"))
            .collect::<Vec<_>>()
            .join(", ");
        values.sort_by(f64::total_cmp);
        Check {
            what: first.what.clone(),
            value: values.get(values.len() / 2).copied(),
            target: first.target,
            at_least: first.at_least,
        }
        .print(&format!("; runs: {listed}"));
    }
}

fn medians(tables: &[Vec<Row>]) -> Vec<Row> {
    let median = |mut v: Vec<f64>| -> f64 {
        v.sort_by(f64::total_cmp);
        if v.is_empty() { 0.0 } else { v[v.len() / 2] }
    };
    tables[0]
        .iter()
        .enumerate()
        .map(|(i, first)| {
            let cells: Vec<&Row> = tables
                .iter()
                .map(|t| &t[i])
                .filter(|r| r.rps > 0.0)
                .collect();
            let ratios: Vec<f64> = cells.iter().filter_map(|r| r.ratio).collect();
            Row {
                name: first.name.clone(),
                rps: median(cells.iter().map(|r| r.rps).collect()),
                p50_us: median(cells.iter().map(|r| r.p50_us).collect()),
                p99_us: median(cells.iter().map(|r| r.p99_us).collect()),
                ratio: (!ratios.is_empty()).then(|| median(ratios)),
                note: if cells.is_empty() {
                    first.note.clone()
                } else {
                    String::new()
                },
            }
        })
        .collect()
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
    _db: Database,
}

impl Orchestra {
    fn start(db: Database, flood: &str, settings: &[(&str, &str)], links: usize) -> Self {
        let url = db.url();
        let cli = |args: &[&str]| serve::cli(ORCHESTRA, &url, args);
        serve::configure(ORCHESTRA, &url, settings);
        let links = (0..links)
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
                path.to_owned()
            })
            .collect();
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
        Self {
            child,
            addr,
            links,
            _db: db,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
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
    fn start(kind: &str, db: Option<&Path>) -> Self {
        let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let mut command = server_command(&std::env::current_exe().expect("this executable"));
        command.args(["--serve", kind, &addr.to_string()]);
        if let Some(db) = db {
            command.arg(db);
        }
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
