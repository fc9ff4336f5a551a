//! The doorway guard's rules, over real TCP, on both flood backends.
//!
//! Each rule has a test here that fails when its mechanism is taken out; docs/interaction.md
//! lists which change breaks which test.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use orchestra::limits::flood::{BoxFuture, FloodError, FloodStore, MemoryFlood, SqlFlood, Tier};

use crate::helpers::{self, Flood, TestApp, spawn};

/// A flood store that records every call before passing it on: the proof that a
/// configuration which counts nothing never touches the store, and of what reaches it.
struct Recording {
    inner: Arc<dyn FloodStore>,
    calls: Mutex<Vec<String>>,
}

impl Recording {
    fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap().clone()
    }

    fn note(&self, call: String) {
        self.calls.lock().unwrap().push(call);
    }
}

impl FloodStore for Recording {
    fn register(&self, event: &str, identifier: &str, window: Duration) {
        self.note(format!("register {event} {identifier}"));
        self.inner.register(event, identifier, window);
    }

    fn count(&self, event: &str, identifier: &str, window: Duration) -> u64 {
        self.note(format!("count {event} {identifier}"));
        self.inner.count(event, identifier, window)
    }

    fn try_register(&self, event: &str, tiers: &[Tier<'_>], window: Duration) -> Result<(), usize> {
        let ids: Vec<&str> = tiers.iter().map(|t| t.identifier).collect();
        self.note(format!("try_register {event} {}", ids.join(" ")));
        self.inner.try_register(event, tiers, window)
    }

    fn sync(&self) -> BoxFuture<'_, Result<(), FloodError>> {
        self.note("sync".into());
        self.inner.sync()
    }

    fn warm_up(&self) -> BoxFuture<'_, Result<usize, FloodError>> {
        self.note("warm_up".into());
        self.inner.warm_up()
    }

    fn collect_garbage(&self) -> BoxFuture<'_, Result<u64, FloodError>> {
        self.note("collect_garbage".into());
        self.inner.collect_garbage()
    }
}

#[derive(Clone, Copy, Debug)]
enum Backend {
    Memory,
    Sql,
}

const BACKENDS: [Backend; 2] = [Backend::Memory, Backend::Sql];

/// An app whose flood store (of the given backend) is wrapped in a recording.
async fn recorded(backend: Backend) -> (TestApp, Arc<Recording>) {
    recorded_on(helpers::fresh_database().await, backend).await
}

/// `recorded`, on a database that may hold settings already.
async fn recorded_on(database: helpers::TestDb, backend: Backend) -> (TestApp, Arc<Recording>) {
    let slot: Arc<Mutex<Option<Arc<Recording>>>> = Arc::new(Mutex::new(None));
    let put = slot.clone();
    let app = helpers::spawn_on(database, move |db, clock| {
        let inner: Arc<dyn FloodStore> = match backend {
            Backend::Memory => Arc::new(MemoryFlood::new(4096, clock)),
            Backend::Sql => Arc::new(SqlFlood::new(db.clone(), 4096, clock)),
        };
        let rec = Arc::new(Recording {
            inner,
            calls: Mutex::new(Vec::new()),
        });
        *put.lock().unwrap() = Some(rec.clone());
        rec
    })
    .await;
    let rec = slot.lock().unwrap().clone().unwrap();
    (app, rec)
}

/// Saves the Orchestra settings form as an administrator would, with the request limits
/// switched on or off; returns the form's CSRF token for further posts.
async fn save_request_limits(
    app: &TestApp,
    admin: &reqwest::Client,
    enabled: bool,
    period: &str,
) -> String {
    let page = admin
        .get(app.url("/admin/config/orchestra"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let csrf = helpers::csrf_of(&page);
    let mut form = vec![
        ("csrf", csrf.as_str()),
        ("site_name", "Orchestra"),
        ("base_url", "http://127.0.0.1:8080"),
        ("default_link_ttl", "604800"),
        ("period", period),
    ];
    if enabled {
        form.push(("enabled", "1"));
    }
    let r = admin
        .post(app.url("/admin/config/orchestra"))
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303, "the settings form was refused");
    csrf
}

async fn get(app: &TestApp, path: &str) -> reqwest::Response {
    app.client().get(app.url(path)).send().await.unwrap()
}

async fn status_of(app: &TestApp, path: &str) -> u16 {
    get(app, path).await.status().as_u16()
}

async fn limits(app: &TestApp, per_link: u64, total: u64, period: u64) {
    app.set(&[
        ("orchestra.request_limits.enabled", "true"),
        ("orchestra.request_limits.period", &period.to_string()),
        ("interaction.limits.per_link", &per_link.to_string()),
        ("interaction.limits.total", &total.to_string()),
    ])
    .await;
}

/// A well-formed link to an instance that does not exist.
fn made_up_link(n: u64) -> String {
    format!(
        "/interaction/l.{}..4000000000.{}",
        900_000 + n,
        "ab".repeat(32)
    )
}

#[tokio::test]
async fn what_ships_counts_nothing_and_never_touches_the_flood_store() {
    for backend in BACKENDS {
        let (app, rec) = recorded(backend).await;
        let id = app.start("contract_review", "Shipped").await;
        let good = app.link(id, Some("legal")).await;
        for _ in 0..20 {
            assert_eq!(status_of(&app, &good).await, 200);
            assert_eq!(status_of(&app, &made_up_link(1)).await, 404);
        }
        // Switched off with numbers kept, and switched on with both limits at 0: still nothing.
        app.set(&[
            ("interaction.limits.per_link", "2"),
            ("interaction.limits.total", "5"),
        ])
        .await;
        for _ in 0..10 {
            assert_eq!(
                status_of(&app, &good).await,
                200,
                "{backend:?}: switch off but refused"
            );
        }
        app.set(&[
            ("orchestra.request_limits.enabled", "true"),
            ("interaction.limits.per_link", "0"),
            ("interaction.limits.total", "0"),
        ])
        .await;
        for _ in 0..10 {
            assert_eq!(status_of(&app, &good).await, 200);
        }
        // The sign-in counts as shipped, so the store was read at start (the test below has
        // nothing counting at all); the doorway's requests touched nothing.
        let touched: Vec<_> = rec.calls().into_iter().filter(|c| c != "warm_up").collect();
        assert!(
            touched.is_empty(),
            "{backend:?}: the store was touched: {touched:?}"
        );
        // The doubles see calls once counting is on, so their silence above means something.
        limits(&app, 2, 0, 3600).await;
        get(&app, &good).await;
        assert!(
            !rec.calls().is_empty(),
            "{backend:?}: the recording records nothing"
        );
    }
}

/// Every limit at 0 and the switch off: nothing counts anywhere, the sign-in included (its
/// limits do not follow the switch).
const NOTHING_COUNTS: [(&str, &str); 4] = [
    ("orchestra.request_limits.enabled", "false"),
    ("login.limits.per_address", "0"),
    ("login.limits.per_account", "0"),
    ("login.limits.account_total", "0"),
];

/// What the recording saw, less cron's removal of expired rows (which may run whatever counts).
fn touched(rec: &Recording) -> Vec<String> {
    rec.calls()
        .into_iter()
        .filter(|c| c != "collect_garbage")
        .collect()
}

#[tokio::test]
async fn with_nothing_counting_the_store_is_neither_read_at_start_nor_synced_nor_pinged() {
    let database = helpers::fresh_database().await;
    let db = orchestra::open(&database.url).await.unwrap();
    orchestra::domain::settings::Settings::save(&db, &NOTHING_COUNTS)
        .await
        .expect("valid settings");
    drop(db);
    let (app, rec) = recorded_on(database, Backend::Sql).await;
    // The server's own timers, ticking every 10 ms (a sync each, which pings the database
    // when it has nothing to write).
    let timers = orchestra::spawn_background(
        app.state.clone(),
        Duration::from_millis(10),
        orchestra::domain::outbox::Stop::never(),
    );
    let id = app.start("contract_review", "Untouched").await;
    let good = app.link(id, Some("legal")).await;
    for _ in 0..5 {
        assert_eq!(status_of(&app, &good).await, 200);
        assert_eq!(status_of(&app, "/admin/login").await, 200);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(touched(&rec), Vec::<String>::new(), "the store was touched");

    // Something starts counting: at the next tick the stored counts are read, once, then the
    // store is synced at every tick.
    limits(&app, 2, 0, 3600).await;
    assert_eq!(status_of(&app, &good).await, 200);
    let upkeep = || -> Vec<String> {
        rec.calls()
            .into_iter()
            .filter(|c| c == "warm_up" || c == "sync")
            .collect()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while upkeep().len() < 4 {
        assert!(std::time::Instant::now() < deadline, "{:?}", rec.calls());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(upkeep()[..4], ["warm_up", "sync", "sync", "sync"]);

    // Nothing counts again: a last sync writes what was counted, then nothing at all.
    app.set(&NOTHING_COUNTS).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let settled = rec.calls().len();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(rec.calls()[settled..], [] as [String; 0], "touched again");
    let stored = orchestra::store::flood::identifiers(&app.db).await.unwrap();
    assert!(!stored.is_empty(), "what was counted was written");
    timers.abort();
}

#[tokio::test]
async fn one_link_is_refused_once_its_limit_is_reached_whether_good_or_not() {
    for backend in BACKENDS {
        let (app, _) = recorded(backend).await;
        limits(&app, 3, 0, 3600).await;
        let id = app.start("contract_review", "Hammered").await;
        let good = app.link(id, Some("legal")).await;
        let answered: Vec<u16> = futures_collect(&app, &good, 10).await;
        assert_eq!(
            answered,
            [200, 200, 200, 429, 429, 429, 429, 429, 429, 429],
            "{backend:?}"
        );
        let bad = made_up_link(7);
        let answered: Vec<u16> = futures_collect(&app, &bad, 5).await;
        assert_eq!(
            answered,
            [404, 404, 404, 429, 429],
            "{backend:?}: bad links count too"
        );
    }
}

async fn futures_collect(app: &TestApp, path: &str, n: usize) -> Vec<u16> {
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(status_of(app, path).await);
    }
    out
}

#[tokio::test]
async fn no_rolling_period_answers_more_than_the_limit() {
    for backend in BACKENDS {
        let (app, _) = recorded(backend).await;
        let (limit, period) = (5u64, 60u64);
        limits(&app, limit, 0, period).await;
        let link = made_up_link(11);
        let mut answered_at = Vec::new();
        // A request every 4 seconds for five periods.
        for _ in 0..(5 * period / 4) {
            if status_of(&app, &link).await != 429 {
                answered_at.push(app.clock.now_ms());
            }
            app.clock.advance(Duration::from_secs(4));
        }
        for (i, &start) in answered_at.iter().enumerate() {
            let inside = answered_at[i..]
                .iter()
                .take_while(|&&t| t < start + period as i64 * 1000)
                .count();
            assert!(
                inside as u64 <= limit,
                "{backend:?}: {inside} answered in one period"
            );
        }
        assert!(
            answered_at.len() as u64 >= 3 * limit,
            "{backend:?}: the period never rolled"
        );
    }
}

#[tokio::test]
async fn a_window_seam_never_lets_twice_the_limit_through() {
    for backend in BACKENDS {
        let (app, _) = recorded(backend).await;
        limits(&app, 4, 0, 60).await;
        let link = made_up_link(12);
        // Park the clock just before a minute boundary, burst, cross it, burst again.
        let now = app.clock.now_ms();
        app.clock.advance(Duration::from_millis(
            (60_000 - now.rem_euclid(60_000) - 100) as u64,
        ));
        let first = futures_collect(&app, &link, 6).await;
        app.clock.advance(Duration::from_millis(200));
        let second = futures_collect(&app, &link, 6).await;
        let answered = first.iter().chain(&second).filter(|&&s| s != 429).count();
        assert_eq!(answered, 4, "{backend:?}: {first:?} then {second:?}");
    }
}

#[tokio::test]
async fn another_link_keeps_working_and_a_hammered_link_does_not_spend_the_total() {
    for backend in BACKENDS {
        let (app, _) = recorded(backend).await;
        limits(&app, 3, 10, 3600).await;
        let id = app.start("contract_review", "Shared").await;
        let hammered = app.link(id, Some("legal")).await;
        let other = app.link(id, Some("finance")).await;
        let statuses = futures_collect(&app, &hammered, 200).await;
        assert_eq!(
            statuses.iter().filter(|&&s| s == 200).count(),
            3,
            "{backend:?}"
        );
        // 3 of the total's 10 are spent; the 197 refusals spent none of it.
        assert_eq!(
            futures_collect(&app, &other, 3).await,
            [200, 200, 200],
            "{backend:?}"
        );
        for n in 0..4 {
            assert_eq!(
                status_of(&app, &made_up_link(100 + n)).await,
                404,
                "{backend:?}: total spent by refusals"
            );
        }
        assert_eq!(
            status_of(&app, &made_up_link(200)).await,
            429,
            "{backend:?}: total not reached at 10"
        );
    }
}

#[tokio::test]
async fn many_different_links_are_caught_by_the_total() {
    for backend in BACKENDS {
        let (app, _) = recorded(backend).await;
        limits(&app, 5, 20, 3600).await;
        let statuses: Vec<u16> = {
            let mut v = Vec::new();
            for n in 0..30 {
                v.push(status_of(&app, &made_up_link(1000 + n)).await);
            }
            v
        };
        assert!(
            statuses[..20].iter().all(|&s| s == 404),
            "{backend:?}: {statuses:?}"
        );
        assert!(
            statuses[20..].iter().all(|&s| s == 429),
            "{backend:?}: {statuses:?}"
        );
        // A link for an instance that exists is refused as well once the total is spent.
        let id = app.start("contract_review", "Late").await;
        assert_eq!(
            status_of(&app, &app.link(id, Some("legal")).await).await,
            429
        );
    }
}

/// The parts of a response a refusal may not vary in.
async fn refusal_bytes(response: reqwest::Response) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let status = response.status().as_u16();
    let mut headers: Vec<(String, String)> = response
        .headers()
        .iter()
        .filter(|(k, _)| *k != "date")
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_owned()))
        .collect();
    headers.sort();
    (status, headers, response.bytes().await.unwrap().to_vec())
}

#[tokio::test]
async fn a_refusal_is_the_same_bytes_for_good_and_bad_links_and_either_tier() {
    for backend in BACKENDS {
        let (app, _) = recorded(backend).await;
        limits(&app, 2, 6, 3600).await;
        let id = app.start("contract_review", "Same bytes").await;
        let good = app.link(id, Some("legal")).await;
        let bad = made_up_link(3);
        futures_collect(&app, &good, 2).await;
        futures_collect(&app, &bad, 2).await;
        let good_per_link = refusal_bytes(get(&app, &good).await).await;
        let bad_per_link = refusal_bytes(get(&app, &bad).await).await;
        futures_collect(&app, &made_up_link(4), 2).await;
        // The total (6) is spent: a fresh bad link and a fresh good link meet the total tier.
        let bad_total = refusal_bytes(get(&app, &made_up_link(5)).await).await;
        let good_total = refusal_bytes(get(&app, &app.link(id, Some("finance")).await).await).await;
        assert_eq!(good_per_link.0, 429);
        assert_eq!(good_per_link, bad_per_link, "{backend:?}");
        assert_eq!(good_per_link, bad_total, "{backend:?}");
        assert_eq!(good_per_link, good_total, "{backend:?}");
        let headers = &good_per_link.1;
        let header = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(header("cache-control"), Some("no-store"));
        assert_eq!(header("referrer-policy"), Some("no-referrer"));
        assert_eq!(header("content-type"), Some("text/plain; charset=utf-8"));
        assert_eq!(header("retry-after"), None);
        let body = String::from_utf8(good_per_link.2.clone()).unwrap();
        assert_eq!(body.lines().count(), 1, "one sentence: {body:?}");
        assert!(!body.contains('<'), "a plain response, not a page");
        // In French, for a French visitor.
        let fr = app
            .client()
            .get(app.url(&bad))
            .header("accept-language", "fr")
            .send()
            .await
            .unwrap();
        let fr = refusal_bytes(fr).await;
        assert_eq!(fr.0, 429);
        assert_ne!(fr.2, good_per_link.2, "the refusal is not translated");
    }
}

#[tokio::test]
async fn the_link_never_reaches_the_flood_store_nor_the_logs() {
    for backend in BACKENDS {
        let (app, rec) = recorded(backend).await;
        limits(&app, 2, 1000, 3600).await;
        let id = app.start("contract_review", "Secret").await;
        let good = app.link(id, Some("legal")).await;
        let token = good.trim_start_matches("/interaction/").to_owned();
        let signature = token.rsplit('.').next().unwrap().to_owned();
        // Two links that differ in their last character only: a prefix would confuse them.
        let mut twin = token.clone();
        twin.pop();
        twin.push(if token.ends_with('0') { '1' } else { '0' });
        for link in [&token, &twin] {
            futures_collect(&app, &format!("/interaction/{link}"), 5).await;
        }
        app.flood.sync().await.unwrap();
        let calls = rec.calls().join("\n");
        assert!(
            !calls.contains(&signature),
            "{backend:?}: the link reached the store"
        );
        let ids: Vec<String> = rec
            .calls()
            .iter()
            .filter(|c| c.starts_with("try_register interaction "))
            .map(|c| c.split(' ').nth(2).unwrap().to_owned())
            .collect();
        let mut distinct = ids.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(
            distinct.len(),
            2,
            "{backend:?}: two links, two identifiers: {distinct:?}"
        );
        assert!(
            distinct
                .iter()
                .all(|i| i.len() == 64 && i.bytes().all(|b| b.is_ascii_hexdigit()))
        );
        if let Backend::Sql = backend {
            let stored = orchestra::store::flood::identifiers(&app.db).await.unwrap();
            assert!(!stored.is_empty(), "nothing was written to the flood table");
            for (_, identifier) in &stored {
                assert!(!token.contains(identifier.as_str()) && !identifier.contains(&signature));
            }
        }
        let logs = app.logs();
        assert!(
            !logs.contains(&signature),
            "{backend:?}: the link reached the logs"
        );
        assert!(
            logs.contains(&distinct[0]) || logs.contains(&distinct[1]),
            "{backend:?}: the refusal was not logged by its hash"
        );
    }
}

#[tokio::test]
async fn a_thousand_refusals_of_one_caller_log_once_per_period() {
    for backend in BACKENDS {
        let (app, rec) = recorded(backend).await;
        limits(&app, 1, 0, 60).await;
        let link = made_up_link(5000 + backend as u64);
        let client = app.client();
        for _ in 0..1001 {
            client.get(app.url(&link)).send().await.unwrap();
        }
        let caller = rec
            .calls()
            .iter()
            .find_map(|c| {
                c.strip_prefix("try_register interaction ")
                    .map(str::to_owned)
            })
            .unwrap();
        let lines = |logs: &str| {
            logs.lines()
                .filter(|l| l.contains(&caller) && l.contains("refused"))
                .count()
        };
        assert_eq!(lines(&app.logs()), 1, "{backend:?}");
        // The next period logs its first refusal again, once.
        app.clock.advance(Duration::from_secs(200));
        for _ in 0..50 {
            client.get(app.url(&link)).send().await.unwrap();
        }
        assert_eq!(lines(&app.logs()), 2, "{backend:?}");
        assert!(
            app.logs()
                .lines()
                .any(|l| l.contains(&caller) && l.contains("per_link"))
        );
    }
}

/// An app on a flood table of 16 cells a row: every key shares its cells with many others.
async fn on_sixteen_cells(backend: Backend) -> TestApp {
    helpers::spawn_with(move |db, clock| -> Arc<dyn FloodStore> {
        match backend {
            Backend::Memory => Arc::new(MemoryFlood::new(16, clock)),
            Backend::Sql => Arc::new(SqlFlood::new(db.clone(), 16, clock)),
        }
    })
    .await
}

/// The first refusal of each caller in a period is the guard's own record, not a second count
/// in the flood table's shared cells: on 16 cells, where the cells' over-count refuses most of
/// these links at their first request, each of 200 callers still gets its one line (by its
/// keyed hash), and its next refusal none.
#[tokio::test]
async fn each_of_200_refused_callers_is_logged_once_however_few_the_tables_cells() {
    for backend in BACKENDS {
        let app = on_sixteen_cells(backend).await;
        limits(&app, 1, 0, 3600).await;
        let snapshot = app.state.site.get().await;
        let links: Vec<String> = (0..200).map(|n| made_up_link(30_000 + n)).collect();
        let callers: Vec<String> = links
            .iter()
            .map(|l| {
                let credential = l.trim_start_matches("/interaction/");
                snapshot.caller_id(credential).as_str().to_owned()
            })
            .collect();
        let client = app.client();
        let refused = |link: &str| {
            let client = client.clone();
            let url = app.url(link);
            async move {
                // Answered once at most (its limit), then refused.
                for _ in 0..2 {
                    let r = client.get(&url).send().await.unwrap();
                    if r.status() == 429 {
                        return;
                    }
                }
                panic!("{url} was never refused");
            }
        };
        for link in &links {
            refused(link).await;
        }
        // Lines per caller, from one copy of the log (it holds every test's lines).
        let lines = || -> Vec<usize> {
            let logs = app.logs();
            let refused: Vec<&str> = logs
                .lines()
                .filter(|l| l.contains("doorway request refused"))
                .collect();
            callers
                .iter()
                .map(|c| refused.iter().filter(|l| l.contains(c.as_str())).count())
                .collect()
        };
        let logged = lines();
        assert_eq!(
            logged.iter().filter(|&&n| n == 1).count(),
            200,
            "{backend:?}: lines per caller {logged:?}"
        );
        // A second refusal of the same callers adds no line.
        for link in &links[..20] {
            assert_eq!(status_of(&app, link).await, 429);
        }
        assert!(
            lines().iter().all(|&n| n == 1),
            "{backend:?}: a second refusal was logged"
        );
        let logs = app.logs();
        assert!(
            links.iter().all(|l| !logs.contains(l.as_str())),
            "{backend:?}: a link reached the logs"
        );
    }
}

/// Past `LOGGED_CALLERS` callers in a period, refused callers are not logged one by one; one
/// line, when the period ends, says how many there were.
#[tokio::test]
async fn callers_refused_past_the_logs_bound_are_told_in_one_summary_line() {
    use orchestra::limits::guard::{Decision, LOGGED_CALLERS, Limits, Policy};
    let app = spawn(Flood::Memory).await;
    let limits = Limits {
        enabled: true,
        per_caller: 1,
        total: 0,
        period: Duration::from_secs(3600),
    };
    let guard = &app.state.guard;
    let mut first = 0;
    for i in 0..LOGGED_CALLERS + 5 {
        // Stands for a caller's keyed hash.
        let caller = format!("{i:064x}");
        let mut lines = 0;
        for _ in 0..3 {
            if let Decision::Refused {
                first_in_period: true,
                ..
            } = guard.check_as(
                orchestra::limits::guard::Address::Doorway,
                &caller,
                &limits,
                Policy::default(),
            ) {
                lines += 1;
            }
        }
        assert!(lines <= 1, "caller {i} logged {lines} times");
        first += lines;
    }
    assert_eq!(first, LOGGED_CALLERS);
    let summaries = || {
        app.logs()
            .lines()
            .filter(|l| l.contains("callers refused past the log's bound"))
            .filter(|l| l.contains("event=\"interaction\" callers=5 at_least=false"))
            .count()
    };
    let before = summaries();
    guard.tick();
    assert_eq!(summaries(), before, "summarized before the period ended");
    app.clock.advance(Duration::from_secs(3600));
    guard.tick();
    guard.tick();
    assert_eq!(
        summaries(),
        before + 1,
        "one summary line when the period ended"
    );
}

#[tokio::test]
async fn admin_pages_and_settings_forms_are_never_counted() {
    let (app, rec) = recorded(Backend::Memory).await;
    limits(&app, 1, 1, 3600).await;
    let admin = app.admin_client().await;
    for path in [
        "/admin",
        "/admin/config/orchestra",
        "/admin/config/orchestra/interaction",
        "/admin/reports/status",
    ] {
        for _ in 0..3 {
            assert_eq!(
                admin.get(app.url(path)).send().await.unwrap().status(),
                200,
                "{path}"
            );
        }
    }
    // Only the sign-in is counted, under its own events (issue 9), never the doorway's.
    assert!(
        rec.calls()
            .iter()
            .all(|c| !c.starts_with("try_register") || c.starts_with("try_register login.")),
        "{:?}",
        rec.calls()
    );
}

#[tokio::test]
async fn a_change_of_limits_takes_effect_without_a_restart() {
    let app = spawn(Flood::Memory).await;
    let link = made_up_link(77);
    assert_eq!(futures_collect(&app, &link, 3).await, [404, 404, 404]);
    // Through the admin form: the saving process sees it at once.
    let admin = app.admin_client().await;
    let csrf = save_request_limits(&app, &admin, true, "3600").await;
    let r = admin
        .post(app.url("/admin/config/orchestra/interaction"))
        .form(&[("csrf", csrf.as_str()), ("per_link", "2"), ("total", "0")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(futures_collect(&app, &link, 3).await, [404, 404, 429]);
    // From another process (`orchestra config set`): seen within the cache's lifetime.
    orchestra::domain::settings::Settings::save(
        &app.db,
        &[("orchestra.request_limits.enabled", "false")],
    )
    .await
    .unwrap();
    tokio::time::sleep(orchestra::domain::site::CACHE_TTL + Duration::from_millis(300)).await;
    // The first request after the expiry starts a read in the background and is decided on
    // the snapshot it has (no request waits on the database); the read lands at once.
    let _ = status_of(&app, &link).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    while status_of(&app, &link).await != 404 {
        assert!(
            std::time::Instant::now() < deadline,
            "the switch was not seen without a restart"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn the_status_report_warns_while_nothing_caps_the_doorway_in_both_languages() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let check = |html: &str| {
        (
            helpers::select_attr(html, "#check-doorway_limits", "class").unwrap_or_default(),
            helpers::select_text(html, "#check-doorway_limits .value").join(""),
            helpers::select_text(html, "#check-doorway_limits .description").join(""),
        )
    };
    let page = |lang: &'static str| {
        let admin = admin.clone();
        let url = app.url(&format!("/admin/reports/status?lang={lang}"));
        async move { admin.get(url).send().await.unwrap().text().await.unwrap() }
    };
    let (class, value, description) = check(&page("en").await);
    assert_eq!(class, "severity-warning");
    assert!(value.contains("switch is off"), "{value}");
    assert!(
        description.contains("orchestra config set orchestra.request_limits.enabled true"),
        "{description}"
    );
    let shown = page("en").await;
    assert_eq!(
        helpers::select_attr(&shown, "#check-doorway_limits .fix a", "href").as_deref(),
        Some("/admin/config/orchestra/interaction"),
        "the fix is a link to the form"
    );
    assert_eq!(
        helpers::select_text(&shown, "#status-summary").join(""),
        "0 errors, 2 warnings, 1 note"
    );
    let order: Vec<String> = helpers::select_text(&shown, "table.status td.severity");
    let rank = |s: &str| match s {
        "Error" => 0,
        "Warning" => 1,
        "Note" => 2,
        _ => 3,
    };
    assert!(
        order.windows(2).all(|w| rank(&w[0]) <= rank(&w[1])),
        "errors, then warnings, then notes, then OK: {order:?}"
    );
    let (class, value_fr, _) = check(&page("fr").await);
    assert_eq!(class, "severity-warning");
    assert!(value_fr.contains("interrupteur"), "{value_fr}");
    // Switched on with both limits at 0: still a warning, now saying why.
    app.set(&[("orchestra.request_limits.enabled", "true")])
        .await;
    let (class, value, _) = check(&page("en").await);
    assert_eq!(class, "severity-warning");
    assert!(value.contains("both limits are 0"), "{value}");
    // A per-link limit without a total is a note: a flood of fresh links is not capped.
    limits(&app, 30, 0, 3600).await;
    let (class, _, description) = check(&page("en").await);
    assert_eq!(class, "severity-note");
    assert!(
        description.contains("a flood of fresh links is not capped"),
        "{description}"
    );
    limits(&app, 30, 5000, 3600).await;
    let (class, value, _) = check(&page("en").await);
    assert_eq!(class, "severity-ok");
    assert!(
        value.contains("30 per link") && value.contains("5000 in total") && value.contains("3600"),
        "{value}"
    );
    let (class, value_fr, _) = check(&page("fr").await);
    assert_eq!(class, "severity-ok");
    assert!(value_fr.contains("30 par lien"), "{value_fr}");
}

#[tokio::test]
async fn the_limits_forms_refuse_bad_numbers_in_both_languages_and_save_nothing() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    limits(&app, 7, 70, 600).await;
    for (lang, expected) in [("en", "whole number"), ("fr", "nombre entier")] {
        let page = admin
            .get(app.url(&format!("/admin/config/orchestra/interaction?lang={lang}")))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let csrf = helpers::csrf_of(&page);
        for (per_link, total) in [
            ("ten", "70"),
            ("-1", "70"),
            ("7", "1000000001"),
            ("1.5", ""),
        ] {
            let r = admin
                .post(app.url("/admin/config/orchestra/interaction"))
                .form(&[
                    ("csrf", csrf.as_str()),
                    ("per_link", per_link),
                    ("total", total),
                ])
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 422, "{per_link}/{total}");
            let html = r.text().await.unwrap();
            assert_eq!(
                helpers::select_attr(&html, "input#per_link", "value").as_deref(),
                Some(per_link)
            );
            assert_eq!(
                helpers::select_attr(&html, "input#total", "value").as_deref(),
                Some(total)
            );
            let errors = helpers::select_text(&html, ".field-error").join(" ");
            assert!(errors.contains(expected), "{lang}: {errors}");
        }
    }
    let saved = orchestra::domain::settings::Settings::load(&app.db)
        .await
        .unwrap();
    assert_eq!(
        (saved.per_link, saved.total, saved.request_limits_period),
        (7, 70, 600)
    );
    // Switching off keeps the numbers, on the page and in the store.
    save_request_limits(&app, &admin, false, "600").await;
    let saved = orchestra::domain::settings::Settings::load(&app.db)
        .await
        .unwrap();
    assert!(!saved.request_limits_enabled);
    assert_eq!(
        (saved.per_link, saved.total, saved.request_limits_period),
        (7, 70, 600)
    );
    let page = admin
        .get(app.url("/admin/config/orchestra/interaction"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(
        helpers::select_attr(&page, "input#per_link", "value").as_deref(),
        Some("7")
    );
    assert_eq!(
        helpers::select_text(&page, ".limits-state.warning").len(),
        1,
        "no warning that nothing counts"
    );
    // The Request limits section gives the true reason: the switch, not the numbers.
    let page = admin
        .get(app.url("/admin/config/orchestra?lang=en"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let state = helpers::select_text(&page, "#limits-state").join("");
    assert!(state.contains("the switch is off"), "{state}");
    assert!(!state.contains("both limits are 0"), "{state}");
    assert_eq!(
        helpers::select_text(&page, "#limits-fix").join(""),
        "orchestra config set orchestra.request_limits.enabled true"
    );
    let help = helpers::select_text(&page, "#requests-per-visit").join("");
    assert!(
        help.contains("4 requests") && help.contains("12 per link"),
        "{help}"
    );
}

#[tokio::test]
async fn anything_under_the_doorway_prefix_is_counted_and_refused_plainly() {
    let app = spawn(Flood::Memory).await;
    limits(&app, 0, 3, 3600).await;
    let id = app.start("contract_review", "Pasted").await;
    let link = app.link(id, Some("legal")).await;
    let pasted = format!("{link}/");
    let first = get(&app, &pasted).await;
    assert_eq!(first.status(), 404);
    let refusal_page = first.text().await.unwrap();
    assert_eq!(
        helpers::select_text(&refusal_page, "p.refused").len(),
        1,
        "not the doorway's refusal"
    );
    assert_eq!(
        futures_collect(&app, &format!("{link}/more/segments"), 2).await,
        [404, 404]
    );
    assert_eq!(
        status_of(&app, &link).await,
        429,
        "the stray paths were not counted"
    );
}

/// The guard runs before routing: a method the doorway's route does not answer is counted
/// too (a flood of PUTs is a flood), and then gets the router's own answer.
#[tokio::test]
async fn any_method_under_the_doorway_prefix_is_counted_before_routing() {
    let app = spawn(Flood::Memory).await;
    limits(&app, 0, 3, 3600).await;
    let id = app.start("contract_review", "Methods").await;
    let link = app.link(id, Some("legal")).await;
    let client = app.client();
    for method in [
        reqwest::Method::PUT,
        reqwest::Method::DELETE,
        reqwest::Method::PATCH,
    ] {
        let r = client
            .request(method.clone(), app.url(&link))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 405, "{method}: not the doorway's");
        // What the attacker gets: the router's answer, with the site's headers, naming no link.
        assert!(
            r.headers().contains_key("content-security-policy"),
            "{method}"
        );
        assert_eq!(
            r.headers()
                .get("x-content-type-options")
                .and_then(|v| v.to_str().ok()),
            Some("nosniff")
        );
        let body = r.text().await.unwrap();
        assert!(
            !body.contains(link.trim_start_matches("/interaction/")),
            "{method}"
        );
    }
    assert_eq!(
        status_of(&app, &link).await,
        429,
        "the other methods were not counted"
    );
}

/// Whether the app has work in progress, once it says `want` or after 5 s.
async fn busy_within_5s(app: &TestApp, want: bool) -> bool {
    for _ in 0..500 {
        if app.state.work.busy() == want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    app.state.work.busy()
}

/// While the site is answering a request that passed the guard, a refusal waits (at most
/// `MAX_DEFER`): under a flood the worker then has nothing to run but that request, whose
/// database queries get the CPU at once. A request whose body is held back stays in progress.
#[tokio::test]
async fn a_refusal_lets_work_in_progress_go_first_for_a_bounded_time() {
    use orchestra::http::priority::MAX_DEFER;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    for backend in BACKENDS {
        let (app, _) = recorded(backend).await;
        limits(&app, 1, 0, 3600).await;
        let hammered = made_up_link(1);
        assert_eq!(status_of(&app, &hammered).await, 404, "{backend:?}");
        assert_eq!(status_of(&app, &hammered).await, 429, "{backend:?}");
        assert!(
            !app.state.work.busy(),
            "{backend:?}: answered requests are done"
        );

        let host = app.base.strip_prefix("http://").unwrap();
        let mut held = tokio::net::TcpStream::connect(host).await.unwrap();
        let head = format!(
            "POST {} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
             Content-Length: 3\r\nConnection: close\r\n\r\n",
            made_up_link(2)
        );
        held.write_all(head.as_bytes()).await.unwrap();
        assert!(
            busy_within_5s(&app, true).await,
            "{backend:?}: the held post is in progress"
        );

        let asked = std::time::Instant::now();
        let refused = tokio::time::timeout(Duration::from_secs(10), status_of(&app, &hammered))
            .await
            .expect("the refusal waited without a bound");
        assert_eq!(refused, 429, "{backend:?}");
        let waited = asked.elapsed();
        assert!(
            waited >= MAX_DEFER,
            "{backend:?}: refused after {waited:?}, without letting the work in progress go first"
        );
        assert!(
            app.state.work.busy(),
            "{backend:?}: the wait was bounded, not ended by the held post"
        );

        // The held post finishes like any other (a made-up link: the plain refusal page).
        held.write_all(b"a=1").await.unwrap();
        let mut answer = String::new();
        held.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 404"), "{backend:?}: {answer}");
        assert!(
            !busy_within_5s(&app, false).await,
            "{backend:?}: nothing left in progress"
        );
    }
}

/// The doorway's report-only switch, through the Interaction settings form as an administrator
/// would tick or untick it.
async fn save_report_only(app: &TestApp, admin: &reqwest::Client, per_link: &str, on: bool) {
    let page = admin
        .get(app.url("/admin/config/orchestra/interaction"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let csrf = helpers::csrf_of(&page);
    let mut form = vec![
        ("csrf", csrf.as_str()),
        ("per_link", per_link),
        ("total", "0"),
    ];
    if on {
        form.push(("report_only", "1"));
    }
    let r = admin
        .post(app.url("/admin/config/orchestra/interaction"))
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303, "the interaction form was refused");
}

#[tokio::test]
async fn report_only_answers_everyone_yet_records_what_it_would_refuse_and_enforcing_keeps_the_counts()
 {
    for backend in BACKENDS {
        let (app, _) = recorded(backend).await;
        let admin = app.admin_client().await;
        save_request_limits(&app, &admin, true, "3600").await;
        save_report_only(&app, &admin, "3", true).await;
        let page = admin
            .get(app.url("/admin/config/orchestra/interaction"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert_eq!(
            helpers::select_attr(&page, "#report_only", "checked").as_deref(),
            Some(""),
            "{backend:?}: the box shows what is saved"
        );
        assert_eq!(
            helpers::select_attr(&page, ".limits-state", "class").as_deref(),
            Some("limits-state warning")
        );
        let hammered = made_up_link(1);
        for n in 0..7 {
            assert_eq!(
                status_of(&app, &hammered).await,
                404,
                "{backend:?}: request {n} is answered in report-only mode"
            );
        }
        let period = Duration::from_secs(3600);
        let seen = app
            .state
            .guard
            .would_refuse(orchestra::limits::guard::Address::Doorway, period);
        assert_eq!(
            seen.current,
            [4, 0],
            "{backend:?}: 7 requests, a limit of 3"
        );
        assert_eq!(seen.recent, [4, 0]);

        // The status report: a warning, with what would have been refused, in both languages.
        for (lang, words) in [
            ("en", "per link: 4 this period"),
            ("fr", "par lien : 4 cette période"),
        ] {
            let html = admin
                .get(app.url(&format!("/admin/reports/status?lang={lang}")))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert_eq!(
                helpers::select_attr(&html, "#check-doorway_limits", "class").as_deref(),
                Some("severity-warning"),
                "{backend:?} {lang}"
            );
            let description =
                helpers::select_text(&html, "#check-doorway_limits .description").join("");
            assert!(
                description.contains(words),
                "{backend:?} {lang}: {description}"
            );
        }

        // Enforcing: the counts were kept, so the hammered link is refused at once, and the
        // tally stops (only report-only adds to it).
        save_report_only(&app, &admin, "3", false).await;
        assert_eq!(status_of(&app, &hammered).await, 429, "{backend:?}");
        assert_eq!(status_of(&app, &made_up_link(2)).await, 404, "{backend:?}");
        assert_eq!(
            app.state
                .guard
                .would_refuse(orchestra::limits::guard::Address::Doorway, period)
                .current,
            [4, 0]
        );
    }
}

#[tokio::test]
async fn report_only_notices_are_all_answered_and_tallied_per_tier() {
    let app = spawn(Flood::Memory).await;
    app.set(&[
        ("orchestra.request_limits.enabled", "true"),
        ("notice.limits.per_payment", "0"),
        ("notice.limits.total", "2"),
        ("notice.limits.report_only", "true"),
    ])
    .await;
    let client = app.client();
    for n in 0..5 {
        let r = client
            .post(app.url("/notice/test-provider"))
            .body("not a notice")
            .send()
            .await
            .unwrap();
        assert_eq!(
            r.status(),
            400,
            "notice {n}: refused as bad, never as too many"
        );
    }
    let seen = app.state.guard.would_refuse(
        orchestra::limits::guard::Address::Notice,
        Duration::from_secs(3600),
    );
    assert_eq!(seen.current, [0, 3]);
    app.set(&[("notice.limits.report_only", "false")]).await;
    let r = client
        .post(app.url("/notice/test-provider"))
        .body("not a notice")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
}
