//! Issue 10, part 3: the Prometheus endpoint, over real TCP with the real router and on the
//! real binary. Its counters equal the requests sent (answered, refused, would-be refused, by
//! address and tier), it lives on its own address only (`ORCHESTRA_METRICS_BIND`, off unless
//! set), and the app's own address has no `/metrics`.
//!
//! Each server has its own recorder (never the process's global one), so the tests of this
//! file run side by side and each reads exactly its own figures.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use orchestra::http::metrics::Metrics;
use orchestra::limits::guard::{DECISION_SAMPLE, Limits, Mode, OnFault, Policy};

use crate::helpers::{self, Flood, TestApp, get, http1, read, serve, spawn};

const BIN: &str = env!("CARGO_BIN_EXE_orchestra");

/// The metrics endpoint of a test app, on a loopback port of its own; its base URL.
async fn serve_metrics(app: &TestApp) -> String {
    serve_on_loopback(Metrics::new(app.state.guard.clone())).await
}

/// Serves `metrics` on a loopback port of its own; its base URL.
pub(crate) async fn serve_on_loopback(metrics: Metrics) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(orchestra::http::metrics::serve(
        listener,
        Arc::new(metrics),
        std::future::pending(),
    ));
    base
}

/// The figures of one scrape: `name` and its labels, sorted, to the value.
pub(crate) struct Scrape(pub(crate) BTreeMap<String, f64>);

impl Scrape {
    pub(crate) fn parse(text: &str) -> Self {
        let mut figures = BTreeMap::new();
        for line in text.lines() {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (series, value) = line.rsplit_once(' ').expect("a series and its value");
            let series = match series.split_once('{') {
                None => series.to_owned(),
                Some((name, labels)) => {
                    let mut labels: Vec<&str> = labels
                        .trim_end_matches('}')
                        .split(',')
                        .filter(|l| !l.is_empty())
                        .collect();
                    labels.sort_unstable();
                    format!("{name}{{{}}}", labels.join(","))
                }
            };
            let value = value
                .parse()
                .unwrap_or_else(|_| panic!("a number in {line:?}"));
            assert!(
                figures.insert(series.clone(), value).is_none(),
                "{series} twice"
            );
        }
        Self(figures)
    }

    /// One series, labels in any order: `get("orchestra_guard_refused_total", &[("tier", "total")])`.
    pub(crate) fn get(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let series = if labels.is_empty() {
            name.to_owned()
        } else {
            let mut labels: Vec<String> =
                labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
            labels.sort_unstable();
            format!("{name}{{{}}}", labels.join(","))
        };
        *self
            .0
            .get(&series)
            .unwrap_or_else(|| panic!("no {series} among {:#?}", self.0.keys()))
    }

    fn requests(&self, address: &str) -> f64 {
        self.get("orchestra_guard_requests_total", &[("address", address)])
    }

    fn refused(&self, address: &str, tier: &str) -> f64 {
        self.get(
            "orchestra_guard_refused_total",
            &[("address", address), ("tier", tier)],
        )
    }

    fn would_refuse(&self, address: &str, tier: &str) -> f64 {
        self.get(
            "orchestra_guard_would_refuse_total",
            &[("address", address), ("tier", tier)],
        )
    }
}

pub(crate) async fn scrape(base: &str) -> Scrape {
    let response = reqwest::get(format!("{base}/metrics"))
        .await
        .expect("the metrics endpoint answers");
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"],
        "text/plain; version=0.0.4; charset=utf-8"
    );
    Scrape::parse(&response.text().await.expect("a body"))
}

/// Sends `n` GETs of one made-up link; returns how many were refused (429).
async fn doorway(app: &TestApp, client: &reqwest::Client, link: &str, n: usize) -> usize {
    let mut refused = 0;
    for _ in 0..n {
        let page = get(client, app, &format!("/interaction/{link}")).await;
        if page.status == 429 {
            refused += 1;
        }
    }
    refused
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_doorway_counters_equal_the_requests_sent() {
    let app = spawn(Flood::Memory).await;
    let metrics = serve_metrics(&app).await;
    let before = scrape(&metrics).await;
    for address in ["doorway", "notice", "login"] {
        assert_eq!(before.requests(address), 0.0, "{address}");
    }
    app.set(&[
        ("orchestra.request_limits.enabled", "true"),
        ("interaction.limits.per_link", "3"),
        ("interaction.limits.total", "10"),
    ])
    .await;
    let client = app.client();
    // Enforcing: two links past their 3 (4 refused per link, charged to neither tier), then
    // single links until the total of 10 is spent (1 refused in total).
    let mut refused = doorway(&app, &client, "l.metrics-a", 5).await;
    refused += doorway(&app, &client, "l.metrics-b", 5).await;
    for link in ["c", "d", "e", "f", "g"] {
        refused += doorway(&app, &client, &format!("l.metrics-{link}"), 1).await;
    }
    assert_eq!(refused, 5, "answered 429");
    let enforcing = scrape(&metrics).await;
    assert_eq!(enforcing.requests("doorway"), 15.0);
    assert_eq!(enforcing.refused("doorway", "per_link"), 4.0);
    assert_eq!(enforcing.refused("doorway", "total"), 1.0);
    assert_eq!(enforcing.would_refuse("doorway", "per_link"), 0.0);
    assert_eq!(enforcing.would_refuse("doorway", "total"), 0.0);

    // Report only: the same counts, everything answered, the would-be refusals tallied.
    app.set(&[("interaction.limits.report_only", "true")]).await;
    let mut refused = doorway(&app, &client, "l.metrics-a", 2).await;
    refused += doorway(&app, &client, "l.metrics-h", 1).await;
    assert_eq!(refused, 0, "report-only mode refuses nothing");
    let reporting = scrape(&metrics).await;
    assert_eq!(reporting.requests("doorway"), 18.0);
    assert_eq!(reporting.refused("doorway", "per_link"), 4.0);
    assert_eq!(reporting.refused("doorway", "total"), 1.0);
    assert_eq!(reporting.would_refuse("doorway", "per_link"), 2.0);
    assert_eq!(reporting.would_refuse("doorway", "total"), 1.0);

    // Nothing else moved: the other addresses, and the store (memory: no sync, no fault).
    assert_eq!(reporting.requests("notice"), 0.0);
    assert_eq!(reporting.requests("login"), 0.0);
    assert_eq!(
        reporting.get("orchestra_guard_decisions_without_store_total", &[]),
        0.0
    );
    assert_eq!(reporting.get("orchestra_flood_store_failing", &[]), 0.0);

    // Limits off: nothing counts, so nothing is added.
    app.set(&[("orchestra.request_limits.enabled", "false")])
        .await;
    doorway(&app, &client, "l.metrics-a", 3).await;
    assert_eq!(scrape(&metrics).await.requests("doorway"), 18.0);
}

#[tokio::test]
async fn notices_and_sign_in_attempts_are_counted_under_their_own_addresses() {
    let app = spawn(Flood::Memory).await;
    let metrics = serve_metrics(&app).await;
    app.set(&[
        ("orchestra.request_limits.enabled", "true"),
        ("notice.limits.per_payment", "1"),
        ("login.limits.per_address", "3"),
        ("login.limits.per_account", "2"),
    ])
    .await;
    let client = app.client();
    let mut limited = 0;
    for _ in 0..3 {
        let page = read(
            client
                .post(app.url("/notice/test-provider"))
                .body(r#"{"payment":"p-metrics"}"#),
        )
        .await;
        limited += usize::from(page.status == 429);
    }
    assert_eq!(limited, 2);
    // Sign-in attempts from one address on two real accounts (a name no account has is
    // counted per address only): two for "alice" (her 2 failures from this address spent), one
    // for "bob" (the address's 3 spent), then two more for bob, both refused by the address.
    for name in ["alice", "bob"] {
        let hash = orchestra::domain::password::hash("her own password").unwrap();
        orchestra::store::admins::create(&app.db, name, &hash)
            .await
            .unwrap();
    }
    let mut refused = 0;
    for name in ["alice", "alice", "bob", "bob", "bob"] {
        let csrf = get(&client, &app, "/admin/login").await.csrf();
        let page = read(client.post(app.url("/admin/login")).form(&[
            ("csrf", csrf.as_str()),
            ("name", name),
            ("password", "not the password"),
        ]))
        .await;
        refused += usize::from(page.status == 429);
    }
    assert_eq!(refused, 2);
    // Then the account's own limit, once the address has room again.
    app.set(&[("login.limits.per_address", "100")]).await;
    let csrf = get(&client, &app, "/admin/login").await.csrf();
    let page = read(client.post(app.url("/admin/login")).form(&[
        ("csrf", csrf.as_str()),
        ("name", "alice"),
        ("password", "not the password"),
    ]))
    .await;
    assert_eq!(page.status, 429, "alice's account is spent");

    let s = scrape(&metrics).await;
    assert_eq!(s.requests("notice"), 3.0);
    assert_eq!(s.refused("notice", "per_payment"), 2.0);
    assert_eq!(s.refused("notice", "total"), 0.0);
    assert_eq!(
        s.requests("login"),
        6.0,
        "one per attempt, not one per limit"
    );
    assert_eq!(s.refused("login", "per_address"), 2.0);
    assert_eq!(s.refused("login", "per_account"), 1.0);
    assert_eq!(s.refused("login", "total"), 0.0);
    assert_eq!(s.would_refuse("login", "per_account"), 0.0);
    assert_eq!(s.requests("doorway"), 0.0);
}

/// API requests with a wrong token are counted under their own address, `api_auth`, with
/// the sign-in's tier names: not under `login`, whose requests are sign-in attempts.
#[tokio::test]
async fn failed_api_authentications_are_counted_under_their_own_address() {
    let app = spawn(Flood::Memory).await;
    let metrics = serve_metrics(&app).await;
    app.set(&[("login.limits.per_address", "2")]).await;
    let client = app.client();
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let page = read(
            client
                .get(app.url("/api/v1/workflows"))
                .header("authorization", "Bearer orc_not_a_token"),
        )
        .await;
        statuses.push(page.status);
    }
    assert_eq!(statuses, [401, 401, 429]);
    let s = scrape(&metrics).await;
    assert_eq!(s.requests("api_auth"), 3.0);
    assert_eq!(s.refused("api_auth", "per_address"), 1.0);
    assert_eq!(s.refused("api_auth", "total"), 0.0);
    assert_eq!(s.requests("login"), 0.0);
}

#[tokio::test]
async fn the_endpoint_is_not_on_the_apps_address_and_carries_no_app_route() {
    let app = spawn(Flood::Memory).await;
    let metrics = serve_metrics(&app).await;
    let client = app.client();
    // The app's address: a themed page, not the figures.
    let page = get(&client, &app, "/metrics").await;
    assert_eq!(page.status, 404);
    assert!(
        page.header("content-type")
            .is_some_and(|t| t.starts_with("text/html")),
        "{:?}",
        page.header("content-type")
    );
    assert!(
        page.has("header.site") && page.has("p.error-message"),
        "a themed page: {}",
        page.body
    );
    assert!(!page.body.contains("orchestra_guard_"), "{}", page.body);
    // The metrics address: /metrics and nothing of the app.
    for path in [
        "/",
        "/admin/login",
        "/interaction/l.x",
        "/metrics/",
        "/healthz",
    ] {
        let response = client.get(format!("{metrics}{path}")).send().await.unwrap();
        assert_eq!(response.status(), 404, "{path} on the metrics address");
    }
    let response = client
        .post(format!("{metrics}/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 405);
}

#[tokio::test]
async fn the_decision_time_is_a_histogram_of_one_decision_in_the_sample() {
    let app = spawn(Flood::Memory).await;
    let metrics = serve_metrics(&app).await;
    let limits = Limits {
        enabled: true,
        per_caller: 1_000_000,
        total: 0,
        period: Duration::from_secs(3600),
    };
    let policy = Policy {
        mode: Mode::Enforce,
        on_fault: OnFault::Count,
    };
    // On this thread alone: its own count of untimed decisions.
    let n = DECISION_SAMPLE as usize * 3;
    std::thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..n {
                app.state.guard.check_as(
                    orchestra::limits::guard::Address::Notice,
                    "caller",
                    &limits,
                    policy,
                );
            }
        });
    });
    let s = scrape(&metrics).await;
    assert_eq!(s.requests("notice"), n as f64);
    let count = s.get(
        "orchestra_guard_decision_seconds_count",
        &[("address", "notice")],
    );
    assert_eq!(count, 3.0, "one decision in {DECISION_SAMPLE} is timed");
    let inf = s.get(
        "orchestra_guard_decision_seconds_bucket",
        &[("address", "notice"), ("le", "+Inf")],
    );
    assert_eq!(inf, 3.0);
    let sum = s.get(
        "orchestra_guard_decision_seconds_sum",
        &[("address", "notice")],
    );
    assert!(sum > 0.0 && sum < 1.0, "{sum}");
}

#[tokio::test]
async fn store_syncs_and_faults_are_counted() {
    let app = spawn(Flood::Memory).await;
    let metrics = serve_metrics(&app).await;
    app.state
        .guard
        .sync()
        .await
        .expect("the memory store syncs");
    app.state
        .guard
        .sync()
        .await
        .expect("the memory store syncs");
    let s = scrape(&metrics).await;
    assert_eq!(
        s.get("orchestra_flood_store_syncs_total", &[("result", "ok")]),
        2.0
    );
    assert_eq!(
        s.get("orchestra_flood_store_syncs_total", &[("result", "failed")]),
        0.0
    );
    assert_eq!(s.get("orchestra_flood_store_faults_total", &[]), 0.0);
    assert_eq!(s.get("orchestra_flood_store_failing", &[]), 0.0);
    assert_eq!(s.get("orchestra_flood_store_failing_seconds", &[]), 0.0);
    assert_eq!(
        s.get(
            "orchestra_build_info",
            &[("version", env!("CARGO_PKG_VERSION"))]
        ),
        1.0
    );
}

// --- The real binary -------------------------------------------------------------------------

/// The TCP ports a process listens on, from /proc: its socket inodes matched with the
/// listening sockets of /proc/net/tcp and tcp6.
fn listening_ports(pid: u32) -> Vec<u16> {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("read the process's descriptors")
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter_map(|target| {
            let t = target.to_string_lossy();
            Some(t.strip_prefix("socket:[")?.strip_suffix(']')?.to_owned())
        })
        .collect();
    let mut ports = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // local_address, st (0A: LISTEN), inode.
            if f.len() > 9 && f[3] == "0A" && inodes.iter().any(|i| i == f[9]) {
                let port = f[1].rsplit_once(':').expect("an address and a port").1;
                ports.push(u16::from_str_radix(port, 16).expect("a hex port"));
            }
        }
    }
    ports.sort_unstable();
    ports
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

#[tokio::test]
async fn the_binary_serves_the_figures_on_its_metrics_address_only_when_asked() {
    let db = helpers::fresh_database().await;
    serve::configure(
        BIN,
        &db.url,
        &[
            ("orchestra.request_limits.enabled", "true"),
            ("interaction.limits.per_link", "2"),
            ("interaction.limits.total", "1000"),
        ],
    );

    // Without ORCHESTRA_METRICS_BIND: one listening socket, the app's.
    {
        let served = serve::serve(BIN, &db.url, &[("ORCHESTRA_FLOOD", "memory")]);
        assert_eq!(listening_ports(served.pid()), vec![served.addr.port()]);
    }

    let port = free_port();
    let bind = format!("127.0.0.1:{port}");
    let served = serve::serve(
        BIN,
        &db.url,
        &[
            ("ORCHESTRA_FLOOD", "memory"),
            ("ORCHESTRA_METRICS_BIND", bind.as_str()),
        ],
    );
    let mut ports = vec![served.addr.port(), port];
    ports.sort_unstable();
    assert_eq!(listening_ports(served.pid()), ports);

    let mut conn = http1::Conn::connect(served.addr).expect("connect to the app");
    let refused = (0..7)
        .filter(|_| conn.get("/interaction/l.binary").expect("a request") == 429)
        .count();
    assert_eq!(refused, 5);
    assert_eq!(
        conn.get("/metrics").expect("a request"),
        404,
        "the app's /metrics"
    );

    let s = scrape(&format!("http://{bind}")).await;
    assert_eq!(s.requests("doorway"), 7.0);
    assert_eq!(s.refused("doorway", "per_link"), 5.0);
    assert_eq!(s.refused("doorway", "total"), 0.0);
    // The process figures, from /proc/self of the server.
    assert!(s.get("process_resident_memory_bytes", &[]) > 1e6);
    assert!(s.get("process_virtual_memory_bytes", &[]) > 1e6);
    assert!(s.get("process_open_fds", &[]) >= 3.0);
    assert!(s.get("process_max_fds", &[]) >= s.get("process_open_fds", &[]));
    assert!(s.get("process_threads", &[]) >= 1.0);
    assert!(s.get("process_cpu_seconds_total", &[]) >= 0.0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let started = s.get("process_start_time_seconds", &[]);
    assert!(
        (now - 120.0..=now + 5.0).contains(&started),
        "started at {started}, now {now}"
    );
}

#[test]
fn a_metrics_address_that_does_not_parse_stops_the_start() {
    let out = std::process::Command::new(BIN)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env("ORCHESTRA_METRICS_BIND", "everywhere")
        .env(
            "ORCHESTRA_DATABASE_URL",
            "sqlite:/nonexistent/never-created.db",
        )
        .env("ORCHESTRA_LANG", "en")
        .output()
        .expect("run orchestra");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ORCHESTRA_METRICS_BIND"), "{stderr}");
    assert!(stderr.contains("\"everywhere\""), "{stderr}");
}
