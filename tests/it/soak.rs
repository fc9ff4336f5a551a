//! The soak test, sized for CI (about a minute): the real binary under mixed work, with one
//! database fault and one restart injected.
//!
//! - visitors answer seeded workflows through their capability links (issued through the API),
//!   a third of the answers submitted twice at once;
//! - a flood hammers one link with the request limits on;
//! - an administrator browses the admin pages and the status report;
//! - one database fault: on SQLite another process holds the file's write lock for a few
//!   seconds; on PostgreSQL (when `ORCHESTRA_TEST_POSTGRES_URL` is set) a throwaway cluster of
//!   the test's own is stopped and started;
//! - one restart: the server is killed (`kill -9`) and started again on the same port.
//!
//! At the end, every answer the site acknowledged (a redirect to its "Thank you" page) is in the instance's
//! history exactly once and nothing is in it twice, no instance is stuck (each ended, or waits
//! on a step someone can answer), and nothing answered 5xx outside the fault window (a 503
//! inside it is the fail-fast answer).
//!
//! A minute is long for a plain `cargo test`: it is `#[ignore]`d there, and `.ci/run` runs it
//! (`cargo test --test it -- --ignored`).

use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::helpers::{self, serve};

const BIN: &str = env!("CARGO_BIN_EXE_orchestra");
/// Contract reviews: `legal` and `finance` answer one step in parallel.
const REVIEWS: usize = 12;
/// Supplier onboardings: the `supplier`'s form, then the `reviewer`'s review.
const ONBOARDINGS: usize = 12;
const VISITORS: usize = 4;
/// Between two answers of one visitor: spreads the answers over the fault and the restart.
const PACE: Duration = Duration::from_millis(4000);
/// Every third answer is submitted twice at once.
const DOUBLE_EVERY: usize = 3;
const PER_LINK: u32 = 40;
const FAULT_AT: Duration = Duration::from_secs(12);
const FAULT_FOR: Duration = Duration::from_secs(5);
const RESTART_AT: Duration = Duration::from_secs(32);
/// After the fault ends, how long answers may still be the fault's (a PostgreSQL pool
/// reconnecting, a request that waited on the lock).
const GRACE: Duration = Duration::from_secs(5);
/// Whatever happens, the test ends by then.
const GIVE_UP: Duration = Duration::from_secs(110);

/// Every HTTP answer the site gave, by whom, and when.
struct Seen {
    what: &'static str,
    started: Instant,
    ended: Instant,
    status: u16,
}

/// What the orchestrator did, and when.
#[derive(Default)]
struct Timeline {
    fault: Option<(Instant, Option<Instant>)>,
    restarted: Option<Instant>,
}

struct Shared {
    t0: Instant,
    base: String,
    seen: Mutex<Vec<Seen>>,
    timeline: Mutex<Timeline>,
    stop: AtomicBool,
}

impl Shared {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn note(&self, what: &'static str, started: Instant, status: u16) {
        self.seen.lock().unwrap().push(Seen {
            what,
            started,
            ended: Instant::now(),
            status,
        });
    }

    fn past_deadline(&self) -> bool {
        self.t0.elapsed() > GIVE_UP
    }

    /// Whether a request that ran from `started` to `ended` overlapped the fault window.
    fn in_fault(&self, started: Instant, ended: Instant) -> bool {
        match self.timeline.lock().unwrap().fault {
            Some((from, to)) => {
                let to = to.map_or(ended, |t| t + GRACE);
                ended >= from && started <= to
            }
            None => false,
        }
    }
}

/// The database under test and the fault it can suffer.
enum Database {
    Sqlite {
        _dir: tempfile::TempDir,
        file: PathBuf,
    },
    Postgres(helpers::Cluster),
}

impl Database {
    fn url(&self) -> String {
        match self {
            Database::Sqlite { file, .. } => format!("sqlite:{}", file.display()),
            Database::Postgres(cluster) => cluster.url(),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Database::Sqlite { .. } => "SQLite",
            Database::Postgres(_) => "PostgreSQL",
        }
    }

    /// Injects the fault, waits `FAULT_FOR`, ends it; notes the window.
    fn fault(&self, shared: &Shared) {
        shared.timeline.lock().unwrap().fault = Some((Instant::now(), None));
        match self {
            Database::Sqlite { file, .. } => {
                let lock = helpers::Locker::hold(file);
                std::thread::sleep(FAULT_FOR);
                drop(lock);
            }
            Database::Postgres(cluster) => {
                cluster.down();
                std::thread::sleep(FAULT_FOR);
                cluster.up();
            }
        }
        if let Some((_, end)) = shared.timeline.lock().unwrap().fault.as_mut() {
            *end = Some(Instant::now());
        }
    }
}

/// `orchestra serve` on a fixed address, so a restart comes back where clients look.
struct Server {
    child: Child,
}

impl Server {
    fn start(url: &str, addr: SocketAddr) -> Self {
        let mut child = Command::new(BIN)
            .args(["serve", "--bind", &addr.to_string()])
            .env("ORCHESTRA_DATABASE_URL", url)
            .env("ORCHESTRA_LOG", "error")
            .env("ORCHESTRA_FLOOD_SYNC_MS", "500")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start orchestra serve");
        serve::wait_until_listening(addr, &mut child, "orchestra serve", Duration::from_secs(60));
        Self { child }
    }

    /// `kill -9`: nothing flushed, nothing closed.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One instance a visitor answers: its participants in order, each with its link's path.
struct Job {
    instance: i64,
    steps: Vec<(&'static str, String)>,
}

/// An answer the site acknowledged: (instance, step number, participant).
type Ack = (i64, i64, &'static str);

#[derive(Default)]
struct VisitorTally {
    acks: Vec<Ack>,
    doubles: usize,
    gave_up: Vec<(i64, &'static str)>,
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(15))
        .build()
        .unwrap()
}

/// Answers each job's steps in order, through whatever the site does meanwhile.
async fn visitor(shared: Arc<Shared>, jobs: Vec<Job>, n: usize) -> VisitorTally {
    let client = client();
    let mut tally = VisitorTally::default();
    let mut answers = n;
    for job in jobs {
        for (participant, link) in &job.steps {
            answers += 1;
            let double = answers % DOUBLE_EVERY == 0;
            match answer(&shared, &client, link, participant, job.instance, double).await {
                Some(outcome) => {
                    tally.acks.extend(outcome.0);
                    tally.doubles += usize::from(double && outcome.1);
                }
                None => tally.gave_up.push((job.instance, participant)),
            }
            tokio::time::sleep(PACE).await;
        }
    }
    tally
}

/// Opens the link until it shows its form, answers it (twice at once when `double`), and
/// returns the acknowledgement, if any, once the link has nothing left to answer; and whether
/// both posts of a double submit went out. `None` when the deadline passed first.
async fn answer(
    shared: &Shared,
    client: &reqwest::Client,
    link: &str,
    participant: &'static str,
    instance: i64,
    double: bool,
) -> Option<(Option<Ack>, bool)> {
    let mut acked = None;
    let mut doubled = false;
    loop {
        if shared.past_deadline() {
            return None;
        }
        let started = Instant::now();
        let Ok(page) = client.get(shared.url(link)).send().await else {
            tokio::time::sleep(Duration::from_millis(300)).await; // restarting
            continue;
        };
        let status = page.status().as_u16();
        shared.note("visitor GET", started, status);
        if status != 200 {
            tokio::time::sleep(Duration::from_millis(300)).await;
            continue;
        }
        let html = page.text().await.unwrap_or_default();
        let Some(step) = helpers::select_attr(&html, "input[name=_step]", "value") else {
            // Nothing to answer here any more: answered (by us, acknowledged or not).
            return Some((acked, doubled));
        };
        let marker = format!("soak {instance} {participant}");
        let mut form = vec![("_step", step.clone())];
        if participant == "supplier" {
            form.extend([
                ("company", marker.clone()),
                ("contact_email", "soak@example.org".to_owned()),
                ("yearly_volume", "100".to_owned()),
                ("notes", marker),
            ]);
        } else {
            form.extend([("decision", "approve".to_owned()), ("comment", marker)]);
        }
        let post = || async {
            let started = Instant::now();
            let response = client.post(shared.url(link)).form(&form).send().await;
            let Ok(response) = response else {
                return false;
            };
            let status = response.status().as_u16();
            shared.note("visitor POST", started, status);
            // A recorded answer redirects to the link's thank-you page (post/redirect/get); a
            // second post of the same answer is sent to the page as it is, without thanks.
            let thanks = response
                .headers()
                .get("location")
                .and_then(|l| l.to_str().ok())
                .is_some_and(|l| l.ends_with("?thanks"));
            status == 303 && thanks
        };
        let thanked = if double {
            let (a, b) = tokio::join!(post(), post());
            doubled = true;
            usize::from(a) + usize::from(b)
        } else {
            usize::from(post().await)
        };
        assert!(
            thanked <= 1,
            "instance {instance}: the same answer of {participant} was acknowledged twice"
        );
        if thanked == 1 {
            let step: i64 = step.parse().expect("a step number");
            assert!(acked.is_none(), "instance {instance}: acknowledged again");
            acked = Some((instance, step, participant));
            return Some((acked, doubled));
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

#[derive(Default)]
struct FloodTally {
    requests: usize,
    refused: usize,
    slowest_refusal: Duration,
    slowest_refusal_in_fault: Duration,
    answered_after_restart: usize,
}

/// Hammers one link, about 50 requests a second, until told to stop.
async fn flood(shared: Arc<Shared>, link: String) -> FloodTally {
    let client = client();
    let mut tally = FloodTally::default();
    while !shared.stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        if let Ok(response) = client.get(shared.url(&link)).send().await {
            let status = response.status().as_u16();
            let took = started.elapsed();
            shared.note("flood GET", started, status);
            tally.requests += 1;
            if status == 429 {
                tally.refused += 1;
                tally.slowest_refusal = tally.slowest_refusal.max(took);
                if shared.in_fault(started, Instant::now()) {
                    tally.slowest_refusal_in_fault = tally.slowest_refusal_in_fault.max(took);
                }
            } else if shared
                .timeline
                .lock()
                .unwrap()
                .restarted
                .is_some_and(|at| started > at)
            {
                tally.answered_after_restart += 1;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tally
}

#[derive(Default)]
struct AdminTally {
    pages: usize,
    fault_on_report: bool,
    signed_out: usize,
}

/// An administrator going round the admin pages, about four a second.
async fn admin(shared: Arc<Shared>, client: reqwest::Client, instance: i64) -> AdminTally {
    let pages = [
        "/admin".to_owned(),
        "/admin/instances".to_owned(),
        format!("/admin/instances/{instance}"),
        "/admin/workflows".to_owned(),
        "/admin/reports/status".to_owned(),
    ];
    let mut tally = AdminTally::default();
    for page in pages.iter().cycle() {
        if shared.stop.load(Ordering::Relaxed) {
            break;
        }
        let started = Instant::now();
        if let Ok(response) = client.get(shared.url(page)).send().await {
            let status = response.status().as_u16();
            shared.note("admin GET", started, status);
            tally.pages += 1;
            tally.signed_out += usize::from(status == 303);
            let html = response.text().await.unwrap_or_default();
            if page.ends_with("/status")
                && status == 200
                && helpers::select_attr(&html, "#check-database", "class").as_deref()
                    == Some("severity-error")
            {
                tally.fault_on_report = true;
            }
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    tally
}

/// The path of a link URL (`…/interaction/…`): the base URL is the setting's, not ours.
fn path_of(url: &str) -> String {
    url[url.find("/interaction/").expect("a doorway URL")..].to_owned()
}

async fn api(
    client: &reqwest::Client,
    shared: &Shared,
    token: &str,
    path: &str,
    body: Option<Value>,
) -> Value {
    let request = match body {
        Some(body) => client
            .post(shared.url(path))
            .header("content-type", "application/json")
            .body(body.to_string()),
        None => client.get(shared.url(path)),
    };
    let response = request.bearer_auth(token).send().await.expect("the API");
    let status = response.status();
    assert!(status.is_success(), "{path}: {status}");
    serde_json::from_str(&response.text().await.expect("a body")).expect("JSON")
}

async fn sign_in(shared: &Shared) -> reqwest::Client {
    let client = reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(15))
        .build()
        .unwrap();
    let page = client
        .get(shared.url("/admin/login"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let csrf = helpers::csrf_of(&page);
    let response = client
        .post(shared.url("/admin/login"))
        .form(&[
            ("csrf", csrf.as_str()),
            ("name", helpers::ADMIN),
            ("password", helpers::PASSWORD),
            ("destination", "/admin"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 303, "sign-in failed");
    // The first page after signing in saves the session once; later ones only read.
    assert_eq!(
        client
            .get(shared.url("/admin"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    client
}

fn database() -> Option<Database> {
    if helpers::on_postgres() {
        if !helpers::postgres_installed() {
            eprintln!(
                "soak on PostgreSQL skipped: no initdb under /usr/lib/postgresql to make a cluster this test may stop"
            );
            return None;
        }
        return Some(Database::Postgres(helpers::Cluster::start()));
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("orchestra.db");
    Some(Database::Sqlite { _dir: dir, file })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "slow: run by .ci/run"]
async fn a_minute_of_mixed_work_through_a_database_fault_and_a_restart_loses_no_answer() {
    let Some(database) = database() else { return };
    let url = database.url();
    serve::configure(
        BIN,
        &url,
        &[
            ("orchestra.request_limits.enabled", "true"),
            ("interaction.limits.per_link", &PER_LINK.to_string()),
            ("interaction.limits.total", "1000000"),
        ],
    );
    let out = Command::new(BIN)
        .args(["admin", "create", helpers::ADMIN])
        .env("ORCHESTRA_DATABASE_URL", &url)
        .env("ORCHESTRA_ADMIN_PASSWORD", helpers::PASSWORD)
        .output()
        .unwrap();
    assert!(out.status.success(), "admin create");
    let token = serve::cli(
        BIN,
        &url,
        &[
            "token", "create", "soak", "--rate", "100000", "--burst", "1000",
        ],
    );
    let addr: SocketAddr = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let mut server = Server::start(&url, addr);
    let shared = Arc::new(Shared {
        t0: Instant::now(),
        base: format!("http://{addr}"),
        seen: Mutex::default(),
        timeline: Mutex::default(),
        stop: AtomicBool::new(false),
    });

    // The work: instances started and links issued through the API.
    let setup = client();
    let mut jobs = Vec::new();
    for (workflow, count, participants) in [
        ("contract_review", REVIEWS, &["legal", "finance"][..]),
        (
            "supplier_onboarding",
            ONBOARDINGS,
            &["supplier", "reviewer"],
        ),
    ] {
        for i in 0..count {
            let started = api(
                &setup,
                &shared,
                &token,
                "/api/v1/instances",
                Some(json!({"workflow": workflow, "subject": {"title": format!("Soak {i}"), "body": "Soak."}})),
            )
            .await;
            let instance = started["id"].as_i64().expect("an id");
            let mut steps = Vec::new();
            for participant in participants {
                let link = api(
                    &setup,
                    &shared,
                    &token,
                    &format!("/api/v1/instances/{instance}/links"),
                    Some(json!({"participant": participant, "ttl_seconds": 3600})),
                )
                .await;
                steps.push((*participant, path_of(link["url"].as_str().unwrap())));
            }
            jobs.push(Job { instance, steps });
        }
    }
    // The flood's link: a review nobody answers, which stays waiting on its participants.
    let hammered = jobs.pop().expect("an instance");
    let (_, hammered_link) = hammered.steps[0].clone();
    let admin_client = sign_in(&shared).await;
    let instances: Vec<i64> = jobs.iter().map(|j| j.instance).collect();

    // The fault and the restart, on their own thread: both block.
    let orchestrator = {
        let shared = shared.clone();
        let url = url.clone();
        std::thread::spawn(move || {
            std::thread::sleep(FAULT_AT.saturating_sub(shared.t0.elapsed()));
            database.fault(&shared);
            std::thread::sleep(RESTART_AT.saturating_sub(shared.t0.elapsed()));
            server.kill();
            shared.timeline.lock().unwrap().restarted = Some(Instant::now());
            let server = Server::start(&url, addr);
            (database, server)
        })
    };

    let mut per_visitor: Vec<Vec<Job>> = (0..VISITORS).map(|_| Vec::new()).collect();
    for (i, job) in jobs.into_iter().enumerate() {
        per_visitor[i % VISITORS].push(job);
    }
    let visitors: Vec<_> = per_visitor
        .into_iter()
        .enumerate()
        .map(|(n, jobs)| tokio::spawn(visitor(shared.clone(), jobs, n)))
        .collect();
    let flood = tokio::spawn(flood(shared.clone(), hammered_link));
    let admin = tokio::spawn(admin(shared.clone(), admin_client, instances[0]));

    let mut acks: Vec<Ack> = Vec::new();
    let mut doubles = 0;
    let mut gave_up = Vec::new();
    for v in visitors {
        let tally = v.await.expect("a visitor panicked");
        acks.extend(tally.acks);
        doubles += tally.doubles;
        gave_up.extend(tally.gave_up);
    }
    // The orchestrator is done by then unless the visitors finished early.
    let (database, _server) = tokio::task::spawn_blocking(move || orchestrator.join())
        .await
        .unwrap()
        .expect("the fault or the restart failed");
    shared.stop.store(true, Ordering::Relaxed);
    let flood = flood.await.unwrap();
    let admin = admin.await.unwrap();
    let took = shared.t0.elapsed();

    // Reconciled with the history, as the site reports it through the API.
    let mut answered: HashMap<(i64, i64, String), usize> = HashMap::new();
    let mut stuck = Vec::new();
    let mut ended = 0;
    for &instance in instances.iter().chain([&hammered.instance]) {
        let view = api(
            &setup,
            &shared,
            &token,
            &format!("/api/v1/instances/{instance}"),
            None,
        )
        .await;
        for h in view["history"].as_array().unwrap() {
            if h["event"] == "answered" {
                let key = (
                    instance,
                    h["step"].as_i64().unwrap(),
                    h["participant"].as_str().unwrap().to_owned(),
                );
                *answered.entry(key).or_default() += 1;
            }
        }
        let left = view["participants_left"].as_array().unwrap();
        match view["state"].as_str().unwrap() {
            "active" if left.is_empty() => stuck.push(instance),
            "active" => {}
            _ => ended += 1,
        }
    }
    let missing: Vec<&Ack> = acks
        .iter()
        .filter(|(i, s, p)| !answered.contains_key(&(*i, *s, (*p).to_owned())))
        .collect();
    let twice: Vec<_> = answered.iter().filter(|(_, n)| **n > 1).collect();
    let mut unique = acks.clone();
    unique.sort();
    unique.dedup();

    let (window, restarted) = {
        let t = shared.timeline.lock().unwrap();
        (t.fault.expect("the fault happened"), t.restarted)
    };
    let seen = shared.seen.lock().unwrap();
    let in_window = seen
        .iter()
        .filter(|s| s.status == 503 && shared.in_fault(s.started, s.ended))
        .count();
    let wrong: Vec<String> = seen
        .iter()
        .filter(|s| s.status >= 500 && !(s.status == 503 && shared.in_fault(s.started, s.ended)))
        .map(|s| {
            format!(
                "{} answered {} at {:.1} s",
                s.what,
                s.status,
                (s.started - shared.t0).as_secs_f64()
            )
        })
        .collect();
    let unexpected: Vec<String> = seen
        .iter()
        .filter(|s| ![200, 303, 429, 503].contains(&s.status))
        .map(|s| format!("{} answered {}", s.what, s.status))
        .collect();

    println!(
        "soak ({}): {:.1} s; {} answers acknowledged, all reconciled with the history ({} double submits, \
         {} of {} instances ended); flood: {} requests, {} refused, slowest 429 {} ms ({} ms during the fault); \
         admin: {} pages; fault {:.1}–{:.1} s with {} 503s in its window; restart at {:.1} s",
        database.name(),
        took.as_secs_f64(),
        acks.len(),
        doubles,
        ended,
        instances.len() + 1,
        flood.requests,
        flood.refused,
        flood.slowest_refusal.as_millis(),
        flood.slowest_refusal_in_fault.as_millis(),
        admin.pages,
        (window.0 - shared.t0).as_secs_f64(),
        (window.1.unwrap() - shared.t0).as_secs_f64(),
        in_window,
        (restarted.unwrap() - shared.t0).as_secs_f64(),
    );

    assert!(gave_up.is_empty(), "visitors gave up on {gave_up:?}");
    assert_eq!(unique.len(), acks.len(), "an answer acknowledged twice");
    assert_eq!(
        acks.len(),
        2 * instances.len(),
        "every step was answered and acknowledged once"
    );
    assert!(
        missing.is_empty(),
        "acknowledged, not in the history: {missing:?}"
    );
    assert!(twice.is_empty(), "in the history twice: {twice:?}");
    assert!(stuck.is_empty(), "stuck instances: {stuck:?}");
    assert_eq!(ended, instances.len(), "every answered instance ended");
    assert!(
        wrong.is_empty(),
        "5xx other than a 503 in the fault window: {wrong:?}"
    );
    assert!(unexpected.is_empty(), "unexpected answers: {unexpected:?}");
    assert!(doubles > 0, "no double submit went out");
    assert!(flood.refused > 0, "the flood was never refused");
    assert_eq!(
        flood.answered_after_restart, 0,
        "the restart gave the hammered link a fresh allowance"
    );
    assert!(
        flood.slowest_refusal_in_fault < Duration::from_secs(1),
        "a refusal waited on the database"
    );
    assert_eq!(admin.signed_out, 0, "the administrator was signed out");
    assert!(
        admin.pages > 20,
        "the administrator saw {} pages",
        admin.pages
    );
    if matches!(database, Database::Sqlite { .. }) {
        assert!(
            admin.fault_on_report,
            "the status report never showed the locked database"
        );
    }
}
