//! The cluster soak, about three and a half minutes: three `orchestra serve` processes on one
//! PostgreSQL database of a throwaway cluster, behind Debian's nginx (the documented proxy
//! block, its upstream three servers), a real SMTP server and a webhook receiver on loopback.
//!
//! Traffic through nginx: an instance of `contract_review` started through the API every
//! second, with a contact for both participants (an `Idempotency-Key` each, retried until
//! acknowledged); `legal` answers through the link it is emailed, `finance` through a link
//! issued through the API. Meanwhile, each at its time: one server killed (`kill -9`) and
//! started again; PostgreSQL stopped and started; the SMTP server down for 55 s (nothing
//! accepts on its port); the receiver answering 500 for a minute; one server stopped gracefully
//! (SIGTERM) and started again.
//!
//! Once the answers are in and the queues have drained, the ledger: every acknowledged start is
//! one instance, every acknowledged answer is in the history once (and nothing twice), every
//! link email recorded as sent reached the SMTP server exactly once (and no other did), and the
//! receiver got every outbox message, each under one `webhook-id` however often it was sent.
//!
//! Its own step in `.ci/run`, alone: it needs PostgreSQL's binaries (`ORCHESTRA_SOAK_REQUIRED=1`
//! makes their absence a failure) and nginx (`ORCHESTRA_NGINX_REQUIRED=1`, likewise).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::OpenOptions;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};
use tokio::task::JoinSet;

use crate::helpers::{self, Smtp, serve};

const BIN: &str = env!("CARGO_BIN_EXE_orchestra");
const NODES: usize = 3;

/// A start every `PACE` until `STARTS_UNTIL` (from the traffic's first second).
const PACE: Duration = Duration::from_millis(1000);
const STARTS_UNTIL: Duration = Duration::from_secs(130);
/// The faults, in this order (each starts when the one before has ended).
const KILL_AT: Duration = Duration::from_secs(15);
const POSTGRES_AT: Duration = Duration::from_secs(28);
const POSTGRES_FOR: Duration = Duration::from_secs(6);
/// The email sender's first retry is a minute later: an outage a little shorter than that
/// sends every email that failed in it at its first retry, so the drain fits in the test.
const SMTP_AT: Duration = Duration::from_secs(42);
const SMTP_FOR: Duration = Duration::from_secs(55);
const TERM_AT: Duration = Duration::from_secs(105);
/// On a timer of its own, overlapping the others.
const HOOKS_AT: Duration = Duration::from_secs(62);
const HOOKS_FOR: Duration = Duration::from_secs(60);
/// A start or an answer not acknowledged by then is given up (unacknowledged, not a failure).
const ANSWERS_UNTIL: Duration = Duration::from_secs(215);
/// Whatever happens, the drain is over by then.
const GIVE_UP: Duration = Duration::from_secs(280);

// --- The places ------------------------------------------------------------------------------

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// One `orchestra serve` on a fixed address, so a restart comes back where nginx looks.
struct Node {
    addr: SocketAddr,
    env: Vec<(&'static str, String)>,
    log: PathBuf,
    child: Option<Child>,
}

impl Node {
    fn start(&mut self) {
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .expect("the node's log");
        let mut child = Command::new(BIN)
            .args(["serve", "--bind", &self.addr.to_string()])
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start orchestra serve");
        serve::wait_until_listening(
            self.addr,
            &mut child,
            "orchestra serve",
            Duration::from_secs(60),
        );
        self.child = Some(child);
    }

    /// `kill -9`: nothing flushed, nothing handed back.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// SIGTERM, as systemd stops a service; how long it took to exit.
    fn terminate(&mut self) -> Duration {
        let mut child = self.child.take().expect("a running node");
        let asked = Instant::now();
        // SAFETY: kill only sends a signal to the child this value owns.
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
        }
        while child.try_wait().expect("the node's status").is_none() {
            assert!(
                asked.elapsed() < Duration::from_secs(90),
                "a node did not stop within 90 s of SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        asked.elapsed()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Debian's nginx (`apt-get install nginx`), or the one `ORCHESTRA_NGINX` names.
fn nginx_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ORCHESTRA_NGINX") {
        return Some(p.into());
    }
    ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

struct Nginx(Child);

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// nginx with the server block of docs/operations.md on `listen`, its `proxy_pass` to an
/// upstream of the three nodes (nginx's round robin; a node that refuses the connection is
/// passed over, a request already sent to one that dies is answered 502).
fn nginx(path: &Path, dir: &Path, listen: SocketAddr, nodes: &[SocketAddr]) -> Nginx {
    let doc = include_str!("../../docs/operations.md");
    let start = doc
        .find("```nginx\n")
        .expect("an nginx block in docs/operations.md")
        + 9;
    let block = &doc[start..start + doc[start..].find("```").unwrap()];
    assert!(block.contains("listen 443 ssl;") && block.contains("http://127.0.0.1:8080"));
    let block = block
        .replace("listen 443 ssl;", &format!("listen {listen};"))
        .replace("http://127.0.0.1:8080", "http://orchestra_nodes");
    let servers: String = nodes
        .iter()
        .map(|a| format!("        server {a};\n"))
        .collect();
    let d = dir.display();
    let conf = format!(
        "daemon off;\nmaster_process off;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n\
         events {{ worker_connections 1024; }}\n\
         http {{\n    access_log off;\n    client_body_temp_path {d}/body;\n    \
         proxy_temp_path {d}/proxy;\n    fastcgi_temp_path {d}/fastcgi;\n    \
         uwsgi_temp_path {d}/uwsgi;\n    scgi_temp_path {d}/scgi;\n    \
         upstream orchestra_nodes {{\n{servers}    }}\n{block}\n}}\n"
    );
    std::fs::write(dir.join("nginx.conf"), conf).unwrap();
    let mut child = Command::new(path)
        .arg("-p")
        .arg(dir)
        .arg("-e")
        .arg(dir.join("error.log"))
        .arg("-c")
        .arg(dir.join("nginx.conf"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start nginx");
    serve::wait_until_listening(listen, &mut child, "nginx", Duration::from_secs(20));
    Nginx(child)
}

/// The port the app's SMTP URL names: a relay to the real SMTP server that can go down (its
/// listener closed, so a connection is refused, and every relayed connection cut) and come back
/// on the same port.
struct SmtpGate {
    port: u16,
    upstream: SocketAddr,
    runtime: tokio::runtime::Handle,
    accepting: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl SmtpGate {
    fn open(&self) {
        let _entered = self.runtime.enter();
        let listener =
            std::net::TcpListener::bind(("127.0.0.1", self.port)).expect("the SMTP port");
        listener.set_nonblocking(true).unwrap();
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        let upstream = self.upstream;
        let task = self.runtime.spawn(async move {
            // Owned by this task: aborting it cuts every relayed connection too.
            let mut relays = JoinSet::new();
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    continue;
                };
                relays.spawn(async move {
                    if let Ok(mut server) = tokio::net::TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                while relays.try_join_next().is_some() {}
            }
        });
        *self.accepting.lock().unwrap() = Some(task);
    }

    fn close(&self) {
        if let Some(task) = self.accepting.lock().unwrap().take() {
            task.abort();
            let _ = self.runtime.block_on(task);
        }
    }

    fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }
}

/// A POST the receiver was given: its `webhook-id`, its body, and what it answered.
#[derive(Clone)]
struct Hook {
    id: String,
    body: String,
    answered: u16,
}

struct Receiver {
    url: String,
    status: Arc<AtomicU16>,
    got: Arc<Mutex<Vec<Hook>>>,
}

async fn receiver() -> Receiver {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let got: Arc<Mutex<Vec<Hook>>> = Arc::default();
    let status = Arc::new(AtomicU16::new(200));
    let (g, s) = (got.clone(), status.clone());
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: String| {
            let (g, s) = (g.clone(), s.clone());
            async move {
                let answered = s.load(Ordering::SeqCst);
                let id = headers
                    .get("webhook-id")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_owned();
                g.lock().unwrap().push(Hook { id, body, answered });
                StatusCode::from_u16(answered).unwrap()
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    Receiver { url, status, got }
}

/// Runs one `orchestra` command on the database, with `env`; its standard output, trimmed.
fn cli(url: &str, env: &[(&str, &str)], args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(args)
        .env("ORCHESTRA_DATABASE_URL", url)
        .envs(env.iter().copied())
        .output()
        .expect("run orchestra");
    assert!(
        out.status.success(),
        "orchestra {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

// --- The traffic -----------------------------------------------------------------------------

/// The address of a start's participant: its number is the start's, so a message finds its own.
fn address(participant: &str, n: u64) -> String {
    format!("{participant}-{n}@example.org")
}

fn number_of(address: &str, participant: &str) -> Option<u64> {
    address
        .strip_prefix(participant)?
        .strip_prefix('-')?
        .strip_suffix("@example.org")?
        .parse()
        .ok()
}

/// An answer the site acknowledged (its redirect to the thank-you page): the start's number,
/// the participant, the step.
type Ack = (u64, &'static str, i64);

#[derive(Default)]
struct Tally {
    /// Acknowledged starts: number and instance id.
    started: Vec<(u64, i64)>,
    tried: u64,
    answers: Vec<Ack>,
    /// Given up: what, for which start.
    gave_up: Vec<String>,
    /// Answers no status list expects (a 4xx of the API, say), with what was asked.
    unexpected: Vec<String>,
    /// Every status through nginx, by what was asked (0: no answer at all).
    statuses: BTreeMap<(&'static str, u16), usize>,
}

struct Traffic {
    t0: Instant,
    base: String,
    token: String,
    client: reqwest::Client,
    tally: Mutex<Tally>,
}

impl Traffic {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn note(&self, what: &'static str, status: u16) {
        *self
            .tally
            .lock()
            .unwrap()
            .statuses
            .entry((what, status))
            .or_default() += 1;
    }

    fn past(&self, limit: Duration) -> bool {
        self.t0.elapsed() > limit
    }

    /// An API POST with an `Idempotency-Key`, tried again (the same key, the same body) until
    /// it is answered `expected`: its body then. A 5xx (a node killed under the request, the
    /// database down), a 409 (the key's first request still at work, or dead with its node) and
    /// no answer are tried again; anything else is noted as unexpected and given up.
    async fn post_until(
        &self,
        what: &'static str,
        path: &str,
        key: &str,
        body: &Value,
        expected: u16,
    ) -> Option<Value> {
        loop {
            if self.past(ANSWERS_UNTIL) {
                self.tally
                    .lock()
                    .unwrap()
                    .gave_up
                    .push(format!("{what} {key}"));
                return None;
            }
            let sent = self
                .client
                .post(self.url(path))
                .bearer_auth(&self.token)
                .header("content-type", "application/json")
                .header("idempotency-key", key)
                .body(body.to_string())
                .send()
                .await;
            match sent {
                Err(_) => self.note(what, 0),
                Ok(response) => {
                    let status = response.status().as_u16();
                    self.note(what, status);
                    let text = response.text().await;
                    if status == expected {
                        // A body cut off with its node: the retry is answered the same again.
                        if let Some(v) = text.ok().and_then(|t| serde_json::from_str(&t).ok()) {
                            return Some(v);
                        }
                    } else if !(status == 409 || status >= 500) {
                        let text = text.unwrap_or_default();
                        self.tally.lock().unwrap().unexpected.push(format!(
                            "{what} {key}: {status} {}",
                            text.chars().take(200).collect::<String>()
                        ));
                        return None;
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Opens the link until it shows its form and answers it; the step's index when acknowledged.
    /// `None` when the link has nothing left to answer (answered by a post whose answer was
    /// lost), refuses itself, or the time is up.
    async fn answer(&self, link: &str, n: u64, participant: &'static str) -> Option<i64> {
        loop {
            if self.past(ANSWERS_UNTIL) {
                let mut tally = self.tally.lock().unwrap();
                tally.gave_up.push(format!("answer of {participant} {n}"));
                return None;
            }
            let Ok(page) = self.client.get(self.url(link)).send().await else {
                self.note("doorway GET", 0);
                tokio::time::sleep(Duration::from_millis(300)).await;
                continue;
            };
            let status = page.status().as_u16();
            self.note("doorway GET", status);
            if status == 404 || status == 410 {
                self.tally.lock().unwrap().unexpected.push(format!(
                    "the link of {participant} {n} refused itself: {status}"
                ));
                return None;
            }
            if status != 200 {
                tokio::time::sleep(Duration::from_millis(300)).await;
                continue;
            }
            let html = page.text().await.unwrap_or_default();
            if !html.contains("</html>") {
                continue; // cut off with its node
            }
            let step = helpers::select_attr(&html, "input[name=_step]", "value")?;
            let form = [
                ("_step", step.clone()),
                ("decision", "approve".to_owned()),
                ("comment", format!("soak {n} {participant}")),
            ];
            match self.client.post(self.url(link)).form(&form).send().await {
                Err(_) => self.note("doorway POST", 0),
                Ok(response) => {
                    let status = response.status().as_u16();
                    self.note("doorway POST", status);
                    // A recorded answer redirects to the link's thank-you page.
                    let thanked = response
                        .headers()
                        .get("location")
                        .and_then(|l| l.to_str().ok())
                        .is_some_and(|l| l.ends_with("?thanks"));
                    if status == 303 && thanked {
                        // The form names the step by its number, from 1; the history by its index.
                        let number: i64 = step.parse().expect("a step number");
                        return Some(number - 1);
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }
}

/// One start: the instance, with both participants' contacts; then `finance`'s link, issued
/// through the API, answered.
async fn start_and_answer_finance(traffic: Arc<Traffic>, n: u64) {
    let body = json!({
        "workflow": "contract_review",
        "subject": {"title": format!("Soak {n}"), "body": "The cluster soak."},
        "participants": {
            "legal": {"email": address("legal", n)},
            "finance": {"email": address("finance", n)},
        },
    });
    let key = format!("soak-start-{n}");
    let Some(started) = traffic
        .post_until("API start", "/api/v1/instances", &key, &body, 201)
        .await
    else {
        return;
    };
    let id = started["id"].as_i64().expect("an instance id");
    traffic.tally.lock().unwrap().started.push((n, id));
    let issued = traffic
        .post_until(
            "API link",
            &format!("/api/v1/instances/{id}/links"),
            &format!("soak-link-{n}"),
            &json!({"participant": "finance", "ttl_seconds": 3600}),
            201,
        )
        .await;
    let Some(url) = issued.as_ref().and_then(|v| v["url"].as_str()) else {
        return;
    };
    if let Some(step) = traffic.answer(&helpers::path_of(url), n, "finance").await {
        traffic
            .tally
            .lock()
            .unwrap()
            .answers
            .push((n, "finance", step));
    }
}

/// A start every `PACE` until `STARTS_UNTIL`, each on a task of its own (a start waiting out a
/// fault holds up no other); returns once every one has ended.
async fn starts(traffic: Arc<Traffic>) {
    let mut tasks = JoinSet::new();
    let mut n = 0;
    while !traffic.past(STARTS_UNTIL) {
        n += 1;
        traffic.tally.lock().unwrap().tried = n;
        tasks.spawn(start_and_answer_finance(traffic.clone(), n));
        tokio::time::sleep(PACE).await;
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("a start's task panicked");
    }
}

/// `legal` reads its mailbox: each new email to a `legal-N` address is answered through its
/// link (the first one: a second email would carry a second link to the same step). Ends when
/// the starts are over and every acknowledged start's `legal` has been answered, or at
/// `ANSWERS_UNTIL`.
async fn legal_mailbox(
    traffic: Arc<Traffic>,
    smtp: Arc<Smtp>,
    starts_over: Arc<tokio::sync::Notify>,
) {
    let mut read = 0;
    let mut answering: HashSet<u64> = HashSet::new();
    let mut done: HashSet<u64> = HashSet::new();
    let mut tasks: JoinSet<(u64, Option<i64>)> = JoinSet::new();
    let over = starts_over.notified();
    tokio::pin!(over);
    let mut starts_ended = false;
    loop {
        let got = smtp.received();
        for message in &got[read..] {
            for n in message.to.iter().filter_map(|to| number_of(to, "legal")) {
                if answering.insert(n) {
                    let (traffic, link) = (traffic.clone(), message.link_path());
                    tasks.spawn(async move { (n, traffic.answer(&link, n, "legal").await) });
                }
            }
        }
        read = got.len();
        while let Some(finished) = tasks.try_join_next() {
            let (n, step) = finished.expect("an answer's task panicked");
            done.insert(n);
            if let Some(step) = step {
                traffic
                    .tally
                    .lock()
                    .unwrap()
                    .answers
                    .push((n, "legal", step));
            }
        }
        if !starts_ended {
            starts_ended = tokio::time::timeout(Duration::from_millis(500), &mut over)
                .await
                .is_ok();
        } else {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        let all_answered = {
            let tally = traffic.tally.lock().unwrap();
            tally.started.iter().all(|(n, _)| done.contains(n))
        };
        if (starts_ended && all_answered && tasks.is_empty()) || traffic.past(ANSWERS_UNTIL) {
            break;
        }
    }
    while let Some(finished) = tasks.join_next().await {
        let (n, step) = finished.expect("an answer's task panicked");
        if let Some(step) = step {
            traffic
                .tally
                .lock()
                .unwrap()
                .answers
                .push((n, "legal", step));
        }
    }
}

// --- The faults ------------------------------------------------------------------------------

/// What was done and when (seconds from the traffic's start).
type Faults = Arc<Mutex<Vec<(String, f64, f64)>>>;

fn note_fault(faults: &Faults, t0: Instant, what: String, from: Instant) {
    let at = |i: Instant| (i - t0).as_secs_f64();
    faults
        .lock()
        .unwrap()
        .push((what, at(from), at(Instant::now())));
}

/// The faults but the receiver's, in order, on a thread of their own (each blocks).
fn inject(
    t0: Instant,
    mut nodes: Vec<Node>,
    cluster: helpers::Cluster,
    gate: Arc<SmtpGate>,
    faults: Faults,
) -> (Vec<Node>, helpers::Cluster) {
    let wait_for = |at: Duration| std::thread::sleep(at.saturating_sub(t0.elapsed()));

    wait_for(KILL_AT);
    let from = Instant::now();
    nodes[1].kill();
    std::thread::sleep(Duration::from_secs(2));
    nodes[1].start();
    note_fault(
        &faults,
        t0,
        "node 2 killed (kill -9), started again".into(),
        from,
    );

    wait_for(POSTGRES_AT);
    let from = Instant::now();
    cluster.down();
    std::thread::sleep(POSTGRES_FOR);
    cluster.up();
    note_fault(
        &faults,
        t0,
        "PostgreSQL stopped, started again".into(),
        from,
    );

    wait_for(SMTP_AT);
    let from = Instant::now();
    gate.close();
    wait_for(SMTP_AT + SMTP_FOR);
    gate.open();
    note_fault(
        &faults,
        t0,
        "SMTP server down (connections refused)".into(),
        from,
    );

    wait_for(TERM_AT);
    let from = Instant::now();
    let took = nodes[2].terminate();
    nodes[2].start();
    note_fault(
        &faults,
        t0,
        format!(
            "node 3 stopped (SIGTERM, exited in {:.1} s), started again",
            took.as_secs_f64()
        ),
        from,
    );
    (nodes, cluster)
}

// --- The ledger ------------------------------------------------------------------------------

async fn count(pool: &sqlx::PgPool, sql: &str) -> i64 {
    sqlx::query_scalar::<_, i64>(sql)
        .fetch_one(pool)
        .await
        .expect(sql)
}

/// Waits until no email and no webhook delivery waits (or `GIVE_UP`); how long it waited, and
/// what still waited then.
async fn drain(pool: &sqlx::PgPool, t0: Instant) -> (Duration, i64, i64) {
    let from = Instant::now();
    loop {
        let mails = count(pool, "SELECT count(*) FROM mails WHERE state = 'pending'").await;
        let hooks = count(
            pool,
            "SELECT count(*) FROM webhook_deliveries WHERE state IN ('pending', 'held')",
        )
        .await;
        if (mails == 0 && hooks == 0) || t0.elapsed() > GIVE_UP {
            return (from.elapsed(), mails, hooks);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// The lines of the nodes' logs at ERROR, and a few of them.
fn errors_in(logs: &[PathBuf]) -> (usize, Vec<String>) {
    let mut lines = Vec::new();
    for log in logs {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        lines.extend(
            text.lines()
                .filter(|l| l.contains("ERROR") || l.contains("panicked"))
                .map(str::to_owned),
        );
    }
    let few = lines.iter().take(8).cloned().collect();
    (lines.len(), few)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "slow: run by .ci/run, alone"]
async fn three_nodes_behind_nginx_through_kills_outages_and_a_database_restart_lose_and_repeat_nothing()
 {
    let required = |name| std::env::var(name).is_ok_and(|v| v == "1");
    if !helpers::postgres_installed() {
        assert!(
            !required("ORCHESTRA_SOAK_REQUIRED"),
            "ORCHESTRA_SOAK_REQUIRED is set but there is no initdb under /usr/lib/postgresql"
        );
        eprintln!(
            "cluster soak skipped: no initdb under /usr/lib/postgresql (apt-get install postgresql)"
        );
        return;
    }
    let Some(nginx_bin) = nginx_path() else {
        assert!(
            !required("ORCHESTRA_NGINX_REQUIRED"),
            "ORCHESTRA_NGINX_REQUIRED is set but no nginx was found"
        );
        eprintln!(
            "cluster soak skipped: no nginx found (apt-get install nginx, or set ORCHESTRA_NGINX)"
        );
        return;
    };
    let began = Instant::now();

    // The database: a cluster of the test's own (it is stopped mid-run), one database on it.
    let cluster = tokio::task::spawn_blocking(helpers::Cluster::start)
        .await
        .unwrap();
    let admin = sqlx::PgPool::connect(&cluster.url()).await.unwrap();
    sqlx::query("CREATE DATABASE orchestra_soak")
        .execute(&admin)
        .await
        .unwrap();
    admin.close().await;
    let url = format!(
        "{}/orchestra_soak",
        cluster
            .url()
            .strip_suffix("/postgres")
            .expect("the admin database's URL")
    );

    let dir = tempfile::tempdir().unwrap();
    let listen = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let base = format!("http://{listen}");
    let smtp = Arc::new(Smtp::start());
    let gate = Arc::new(SmtpGate {
        port: free_port(),
        upstream: smtp.addr,
        runtime: tokio::runtime::Handle::current(),
        accepting: Mutex::default(),
    });
    let hooks = receiver().await;

    // Initialised once, before any server: settings, the token, the administrator's endpoint.
    let private = [("ORCHESTRA_WEBHOOKS_ALLOW_PRIVATE", "1")];
    let token = {
        let (url, base, receiver) = (url.clone(), base.clone(), hooks.url.clone());
        tokio::task::spawn_blocking(move || {
            serve::configure(
                BIN,
                &url,
                &[
                    ("orchestra.base_url", base.as_str()),
                    ("api.caps.emails_per_token_per_hour", "100000"),
                ],
            );
            cli(&url, &private, &["webhook", "create", &receiver]);
            cli(
                &url,
                &[],
                &[
                    "token", "create", "soak", "--rate", "100000", "--burst", "10000",
                ],
            )
        })
        .await
        .unwrap()
    };

    let env = vec![
        ("ORCHESTRA_DATABASE_URL", url.clone()),
        ("ORCHESTRA_LOG", "warn".to_owned()),
        ("ORCHESTRA_SMTP_URL", gate.url()),
        (
            "ORCHESTRA_MAIL_FROM",
            "Orchestra <orchestra@example.org>".to_owned(),
        ),
        ("ORCHESTRA_WEBHOOKS_ALLOW_PRIVATE", "1".to_owned()),
        ("ORCHESTRA_TRUSTED_PROXIES", "127.0.0.1".to_owned()),
    ];
    let mut nodes: Vec<Node> = (0..NODES)
        .map(|i| Node {
            addr: SocketAddr::from(([127, 0, 0, 1], free_port())),
            env: env.clone(),
            log: dir.path().join(format!("node-{}.log", i + 1)),
            child: None,
        })
        .collect();
    let logs: Vec<PathBuf> = nodes.iter().map(|n| n.log.clone()).collect();
    let addrs: Vec<SocketAddr> = nodes.iter().map(|n| n.addr).collect();
    let (nodes, _nginx) = {
        let gate = gate.clone();
        let nginx_dir = dir.path().to_owned();
        tokio::task::spawn_blocking(move || {
            gate.open();
            for node in &mut nodes {
                node.start();
            }
            let nginx = nginx(&nginx_bin, &nginx_dir, listen, &addrs);
            (nodes, nginx)
        })
        .await
        .unwrap()
    };
    let set_up = began.elapsed();

    let traffic = Arc::new(Traffic {
        t0: Instant::now(),
        base,
        token,
        client: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(20))
            .build()
            .unwrap(),
        tally: Mutex::default(),
    });
    let t0 = traffic.t0;
    let faults: Faults = Arc::default();

    let injected = {
        let (gate, faults) = (gate.clone(), faults.clone());
        std::thread::spawn(move || inject(t0, nodes, cluster, gate, faults))
    };
    let receiver_down = {
        let (status, faults) = (hooks.status.clone(), faults.clone());
        tokio::spawn(async move {
            tokio::time::sleep(HOOKS_AT.saturating_sub(t0.elapsed())).await;
            let from = Instant::now();
            status.store(500, Ordering::SeqCst);
            tokio::time::sleep(HOOKS_FOR).await;
            status.store(200, Ordering::SeqCst);
            note_fault(&faults, t0, "webhook receiver answering 500".into(), from);
        })
    };
    let starts_over = Arc::new(tokio::sync::Notify::new());
    let mailbox = tokio::spawn(legal_mailbox(
        traffic.clone(),
        smtp.clone(),
        starts_over.clone(),
    ));
    starts(traffic.clone()).await;
    starts_over.notify_one();
    mailbox.await.expect("the mailbox's task panicked");
    let answered_by = t0.elapsed();
    receiver_down.await.unwrap();
    let (_nodes, cluster) = tokio::task::spawn_blocking(move || injected.join())
        .await
        .unwrap()
        .expect("a fault could not be injected");

    // The queues drain; then the ledger, read from the database and the two receivers.
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let (drained_in, mails_waiting, hooks_waiting) = drain(&pool, t0).await;
    let took = t0.elapsed();
    let tally = std::mem::take(&mut *traffic.tally.lock().unwrap());

    // Starts: each acknowledged one is one instance, the one it was answered; none is two.
    let titles: Vec<(i64, String)> = sqlx::query_as("SELECT id, subject_title FROM instances")
        .fetch_all(&pool)
        .await
        .unwrap();
    let mut by_title: HashMap<String, Vec<i64>> = HashMap::new();
    for (id, title) in titles {
        by_title.entry(title).or_default().push(id);
    }
    let wrong_starts: Vec<String> = tally
        .started
        .iter()
        .filter(|(n, id)| by_title.get(&format!("Soak {n}")).map(Vec::as_slice) != Some(&[*id][..]))
        .map(|(n, id)| {
            format!(
                "start {n} acknowledged as {id}, made {:?}",
                by_title.get(&format!("Soak {n}"))
            )
        })
        .collect();
    let made_twice: Vec<_> = by_title.iter().filter(|(_, ids)| ids.len() > 1).collect();
    let states: Vec<(i64, String)> = sqlx::query_as("SELECT id, state FROM instances")
        .fetch_all(&pool)
        .await
        .unwrap();
    let states: HashMap<i64, String> = states.into_iter().collect();
    let not_complete: Vec<_> = tally
        .started
        .iter()
        .filter(|(_, id)| states.get(id).map(String::as_str) != Some("complete"))
        .collect();

    // Answers: each acknowledged one in its instance's history once; nothing there twice.
    let contacts: Vec<(i64, String)> = sqlx::query_as("SELECT instance_id, email FROM contacts")
        .fetch_all(&pool)
        .await
        .unwrap();
    let mut instances_of: HashMap<String, Vec<i64>> = HashMap::new();
    for (id, email) in &contacts {
        instances_of.entry(email.clone()).or_default().push(*id);
    }
    let history: Vec<(i64, i64, String, i64)> = sqlx::query_as(
        "SELECT instance_id, step_index, participant, count(*) FROM history \
         WHERE event = 'answered' GROUP BY instance_id, step_index, participant",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let answered: HashMap<(i64, i64, String), i64> = history
        .into_iter()
        .map(|(i, s, p, c)| ((i, s, p), c))
        .collect();
    let answers_wrong: Vec<String> = tally
        .answers
        .iter()
        .filter_map(|&(n, participant, step)| {
            let ids = instances_of.get(&address(participant, n))?;
            let times: i64 = ids
                .iter()
                .map(|&i| {
                    answered
                        .get(&(i, step, participant.to_owned()))
                        .copied()
                        .unwrap_or(0)
                })
                .sum();
            (times != 1)
                .then(|| format!("{participant} {n} (step {step}): {times} times in the history"))
        })
        .collect();
    let answered_twice: Vec<_> = answered.iter().filter(|(_, c)| **c > 1).collect();
    let mut unique_acks = tally.answers.clone();
    unique_acks.sort();
    unique_acks.dedup();

    // Emails: per address (one instance's participant) and kind, the SMTP server's messages
    // against the emails recorded as sent: link emails (they carry a link), and the notices
    // without one (the outcome told to whoever filed the instance).
    let rows: Vec<(i64, String, String, String, String)> = sqlx::query_as(
        "SELECT m.instance_id, m.participant, m.state, c.email, m.kind FROM mails m \
         JOIN contacts c ON c.instance_id = m.instance_id AND c.participant = m.participant \
         WHERE m.kind IN ('link', 'outcome', 'closed')",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let received = smtp.received();
    let mut delivered: HashMap<(String, bool), usize> = HashMap::new();
    for message in &received {
        let linked = message.part("text/plain").contains("/interaction/");
        for to in &message.to {
            *delivered.entry((to.to_lowercase(), linked)).or_default() += 1;
        }
    }
    let mut mail_states: BTreeMap<String, usize> = BTreeMap::new();
    let mut mails_wrong = Vec::new();
    let mut recorded: HashSet<(String, bool)> = HashSet::new();
    let mut expected_of: HashMap<(String, bool), usize> = HashMap::new();
    for (_, _, state, email, kind) in &rows {
        *mail_states.entry(format!("{kind} {state}")).or_default() += 1;
        let key = (email.to_lowercase(), kind == "link");
        recorded.insert(key.clone());
        *expected_of.entry(key).or_default() += usize::from(state == "sent");
    }
    for (instance, participant, _, email, kind) in &rows {
        let key = (email.to_lowercase(), kind == "link");
        let got = delivered.get(&key).copied().unwrap_or(0);
        let expected = expected_of[&key];
        if got != expected {
            mails_wrong.push(format!(
                "instance {instance}, {participant} ({email}), {kind}: recorded sent {expected}, the SMTP server got {got}"
            ));
        }
    }
    for ((to, linked), got) in &delivered {
        if !recorded.contains(&(to.clone(), *linked)) {
            mails_wrong.push(format!(
                "{to}: {got} emails (link: {linked}) and none queued"
            ));
        }
    }
    let emailed_twice = delivered.values().filter(|n| **n > 1).count();

    // Webhooks: every outbox message reached the receiver (answered 200) under its own id.
    let endpoint = count(&pool, "SELECT min(id) FROM webhook_endpoints").await;
    let deliveries: Vec<(i64, String)> =
        sqlx::query_as("SELECT outbox_id, state FROM webhook_deliveries WHERE endpoint_id = $1")
            .bind(endpoint)
            .fetch_all(&pool)
            .await
            .unwrap();
    let messages = count(&pool, "SELECT count(*) FROM outbox").await;
    let hooks_got = hooks.got.lock().unwrap().clone();
    let mut by_id: HashMap<&str, Vec<&Hook>> = HashMap::new();
    for hook in &hooks_got {
        by_id.entry(hook.id.as_str()).or_default().push(hook);
    }
    let expected_ids: HashSet<String> =
        deliveries.iter().map(|(o, _)| format!("msg_{o}")).collect();
    let never_taken: Vec<&String> = expected_ids
        .iter()
        .filter(|id| {
            !by_id
                .get(id.as_str())
                .is_some_and(|h| h.iter().any(|h| h.answered == 200))
        })
        .collect();
    let unknown_ids: Vec<&&str> = by_id
        .keys()
        .filter(|id| !expected_ids.contains(**id))
        .collect();
    let changed_bodies: Vec<&&str> = by_id
        .iter()
        .filter(|(_, h)| h.iter().any(|x| x.body != h[0].body))
        .map(|(id, _)| id)
        .collect();
    let not_delivered: Vec<_> = deliveries
        .iter()
        .filter(|(_, s)| s != "delivered")
        .collect();
    let taken = hooks_got.iter().filter(|h| h.answered == 200).count();
    let repeats = hooks_got.len() - by_id.len();
    let taken_again = taken
        - by_id
            .values()
            .filter(|h| h.iter().any(|h| h.answered == 200))
            .count();

    let (errors, first_errors) = errors_in(&logs);
    println!(
        "cluster soak: {NODES} nodes on PostgreSQL behind nginx; set up in {:.1} s, traffic and answers {:.1} s, drained in {:.1} s, {:.1} s in all",
        set_up.as_secs_f64(),
        answered_by.as_secs_f64(),
        drained_in.as_secs_f64(),
        (set_up + took).as_secs_f64()
    );
    for (what, from, to) in faults.lock().unwrap().iter() {
        println!("  fault {from:6.1}–{to:6.1} s: {what}");
    }
    println!(
        "  ledger: starts {} acknowledged of {} tried ({} instances made); answers {} acknowledged ({} legal by email, {} finance by API link); \
         emails {} sent {:?}, the SMTP server got {} ({} addresses twice for one kind); \
         webhook messages {} in the outbox, {} deliveries, {} distinct ids received in {} POSTs ({} repeats, {} taken twice); \
         {} acknowledged starts not complete",
        tally.started.len(),
        tally.tried,
        states.len(),
        tally.answers.len(),
        tally.answers.iter().filter(|a| a.1 == "legal").count(),
        tally.answers.iter().filter(|a| a.1 == "finance").count(),
        rows.iter().filter(|r| r.2 == "sent").count(),
        mail_states,
        received.len(),
        emailed_twice,
        messages,
        deliveries.len(),
        by_id.len(),
        hooks_got.len(),
        repeats,
        taken_again,
        not_complete.len(),
    );
    println!("  statuses through nginx: {:?}", tally.statuses);
    println!("  nodes' log lines at ERROR: {errors}");
    for line in &first_errors {
        println!("    {line}");
    }
    if !tally.gave_up.is_empty() {
        println!("  given up: {:?}", tally.gave_up);
    }
    drop(cluster);

    assert!(
        tally.unexpected.is_empty(),
        "unexpected answers: {:?}",
        tally.unexpected
    );
    assert_eq!(
        (mails_waiting, hooks_waiting),
        (0, 0),
        "the queues did not drain (emails, webhook deliveries)"
    );
    assert!(
        wrong_starts.is_empty(),
        "acknowledged starts: {wrong_starts:?}"
    );
    assert!(
        made_twice.is_empty(),
        "a start made two instances: {made_twice:?}"
    );
    assert_eq!(
        unique_acks.len(),
        tally.answers.len(),
        "an answer acknowledged twice"
    );
    assert!(
        answers_wrong.is_empty(),
        "acknowledged answers: {answers_wrong:?}"
    );
    assert!(
        answered_twice.is_empty(),
        "in the history twice: {answered_twice:?}"
    );
    assert!(mails_wrong.is_empty(), "emails: {mails_wrong:?}");
    assert!(
        never_taken.is_empty(),
        "outbox messages the receiver never took: {never_taken:?}"
    );
    assert!(
        unknown_ids.is_empty(),
        "webhook-ids of no outbox message: {unknown_ids:?}"
    );
    assert!(
        changed_bodies.is_empty(),
        "a repeat with another body: {changed_bodies:?}"
    );
    assert_eq!(
        by_id.len() as i64,
        messages,
        "distinct webhook-ids against outbox messages"
    );
    assert_eq!(
        deliveries.len() as i64,
        messages,
        "a delivery to the endpoint for each message"
    );
    assert!(
        not_delivered.is_empty(),
        "deliveries not delivered: {not_delivered:?}"
    );
    assert!(
        tally.started.len() as u64 * 10 >= tally.tried * 9,
        "most starts were acknowledged"
    );
    assert!(
        not_complete.is_empty(),
        "acknowledged starts not complete: {not_complete:?}"
    );
    assert!(
        hooks_got.iter().any(|h| h.answered == 500),
        "the receiver's outage was never met"
    );
}
