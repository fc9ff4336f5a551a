//! The test harness: the real app over real TCP on port 0, on a real database, with the log
//! lines it wrote.
//!
//! SQLite by default (a fresh file per test). When `ORCHESTRA_TEST_POSTGRES_URL` names a
//! PostgreSQL server (`.ci/run` starts one), every test gets a fresh database on it instead,
//! dropped when the test is done with it.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};

use orchestra::http::AppState;
use orchestra::limits::flood::{self, Clock, FloodStore, MemoryFlood, SqlFlood};
use orchestra::store::Db;
use tracing::field::{Field, Visit};
use tracing::{Event, Instrument, Subscriber, span};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::fmt::format::{Format, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;

pub const ADMIN: &str = "ada";
pub const PASSWORD: &str = "correct horse battery";

pub struct TestDb {
    pub url: String,
    _dir: Option<tempfile::TempDir>,
    /// The server's admin URL and the name of the database made on it, dropped with this.
    made_on: Option<(String, String)>,
}

/// A fresh, empty database URL (SQLite file, or a new PostgreSQL database).
pub async fn fresh_database() -> TestDb {
    if let Ok(admin_url) = std::env::var("ORCHESTRA_TEST_POSTGRES_URL") {
        use sqlx::Connection;
        sqlx::any::install_default_drivers();
        let name = format!(
            "orchestra_test_{}",
            &orchestra::domain::keys::random_token()[..16]
        );
        let mut conn = sqlx::AnyConnection::connect(&admin_url)
            .await
            .expect("connect to the test PostgreSQL server");
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut conn)
            .await
            .expect("create a test database");
        let base = admin_url
            .rsplit_once('/')
            .map_or(admin_url.as_str(), |(b, _)| b)
            .to_owned();
        return TestDb {
            url: format!("{base}/{name}"),
            _dir: None,
            made_on: Some((admin_url, name)),
        };
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite:{}", dir.path().join("orchestra.db").display());
    TestDb {
        url,
        _dir: Some(dir),
        made_on: None,
    }
}

impl TestDb {
    /// A database someone else made (a test's own PostgreSQL cluster, say): not dropped here.
    pub fn at(url: String) -> Self {
        Self {
            url,
            _dir: None,
            made_on: None,
        }
    }
}

impl Drop for TestDb {
    /// Drops the PostgreSQL database this made, whoever is still connected to it (an app's
    /// pool, a served process). `Drop` cannot wait on a future, and usually runs on a test's
    /// runtime, which cannot be blocked on from inside: a thread with a runtime of its own does
    /// it. A failure is said, not panicked on, since this may run while a test unwinds.
    fn drop(&mut self) {
        let Some((admin_url, name)) = self.made_on.take() else {
            return;
        };
        let dropped = std::thread::spawn(move || -> Result<(), String> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            runtime
                .block_on(async {
                    use sqlx::Connection;
                    let mut conn = sqlx::AnyConnection::connect(&admin_url).await?;
                    sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .execute(&mut conn)
                        .await?;
                    conn.close().await
                })
                .map_err(|e| e.to_string())
        })
        .join();
        match dropped {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("the test database {} was not dropped: {e}", self.url),
            Err(_) => eprintln!("dropping the test database {} panicked", self.url),
        }
    }
}

pub fn on_postgres() -> bool {
    std::env::var("ORCHESTRA_TEST_POSTGRES_URL").is_ok()
}

/// A database with the schema as it was before migration `version`: every earlier migration
/// applied, none from it on. An upgrade test writes what the old code wrote, closes the pool and
/// opens the database with `spawn_on`, which applies the rest.
pub async fn schema_before(url: &str, version: i64) -> sqlx::AnyPool {
    sqlx::any::install_default_drivers();
    let (_, url) = orchestra::store::normalize_url(url).unwrap();
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    let dir = if on_postgres() {
        "migrations/postgres"
    } else {
        "migrations/sqlite"
    };
    let mut migrator = sqlx::migrate::Migrator::new(std::path::Path::new(dir))
        .await
        .unwrap();
    let before: Vec<_> = migrator
        .migrations
        .iter()
        .filter(|m| m.version < version)
        .cloned()
        .collect();
    assert!(!before.is_empty(), "no migration before {version}");
    migrator.migrations = std::borrow::Cow::Owned(before);
    migrator.run(&pool).await.unwrap();
    pool
}

/// Which flood store the app runs on.
pub enum Flood {
    Memory,
    Sql,
}

pub struct TestApp {
    pub base: String,
    pub state: AppState,
    pub db: Db,
    pub clock: Clock,
    pub flood: Arc<dyn FloodStore>,
    pub database: TestDb,
    server: tokio::task::JoinHandle<()>,
    number: u64,
    logs: Arc<Mutex<String>>,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.server.abort();
        APP_LOGS.lock().unwrap().remove(&self.number);
    }
}

/// Starts the whole app on 127.0.0.1:0 with a manual clock.
pub async fn spawn(flood: Flood) -> TestApp {
    spawn_with(move |db, clock| flood.store(db, clock)).await
}

impl Flood {
    pub fn store(self, db: &Db, clock: Clock) -> Arc<dyn FloodStore> {
        match self {
            Flood::Memory => Arc::new(MemoryFlood::new(4096, clock)),
            Flood::Sql => Arc::new(SqlFlood::new(db.clone(), 4096, clock)),
        }
    }
}

impl TestApp {
    /// Every line this app logged, at DEBUG and above: its requests' (on its own span), and
    /// those written on the test's thread since it started (its background tasks, the test's
    /// own calls to the store, the test's client).
    pub fn logs(&self) -> String {
        self.logs.lock().unwrap().clone()
    }

    /// A client with its own cookie jar that does not follow redirects.
    pub fn client(&self) -> reqwest::Client {
        reqwest::Client::builder()
            .cookie_store(true)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Creates the test administrator directly in the store.
    pub async fn create_admin(&self) {
        let hash = orchestra::domain::password::hash(PASSWORD).unwrap();
        orchestra::store::admins::create(&self.db, ADMIN, &hash)
            .await
            .unwrap();
    }

    /// A client signed in as the test administrator.
    pub async fn admin_client(&self) -> reqwest::Client {
        self.create_admin().await;
        let client = self.client();
        let page = client
            .get(self.url("/admin/login"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let csrf = csrf_of(&page);
        let response = client
            .post(self.url("/admin/login"))
            .form(&[
                ("csrf", csrf.as_str()),
                ("name", ADMIN),
                ("password", PASSWORD),
                ("destination", "/admin"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 303, "sign-in failed");
        client
    }

    /// Saves settings as `orchestra config set` would, and makes the app see them now.
    pub async fn set(&self, values: &[(&'static str, &str)]) {
        orchestra::domain::settings::Settings::save(&self.db, values)
            .await
            .expect("valid settings");
        self.state.site.refresh().await;
    }

    /// Starts an instance of a seeded example workflow; returns its id.
    pub async fn start(&self, workflow: &str, title: &str) -> i64 {
        let w = orchestra::store::workflows::by_name(&self.db, workflow)
            .await
            .unwrap()
            .expect("seeded workflow");
        orchestra::domain::instance::start(
            &self.db,
            &orchestra::domain::instance::Start {
                body: "The body of the subject.",
                ..orchestra::domain::instance::Start::new(
                    w.id,
                    title,
                    &orchestra::domain::instance::Actor::Admin("ada".into()),
                )
            },
        )
        .await
        .unwrap()
    }

    /// Issues a link and returns its path (`/interaction/...`): for a participant, or with
    /// `None` for whoever answers the instance's current step.
    pub async fn link(&self, instance: i64, participant: Option<&str>) -> String {
        let who = match participant {
            Some(p) => p.to_owned(),
            None => self.current_participant(instance).await,
        };
        self.link_for(instance, &who, 3600).await
    }

    /// A link for a participant of an instance, living `ttl` seconds from the app's clock.
    pub async fn link_for(&self, instance: i64, who: &str, ttl: u64) -> String {
        let keys = orchestra::store::keys::load_or_create(&self.db)
            .await
            .unwrap();
        let order = orchestra::domain::instance::Order {
            participant: who,
            ttl,
            now: self.clock.now_secs(),
            by: &orchestra::domain::instance::Actor::CommandLine,
            daily_cap: None,
        };
        orchestra::domain::instance::issue(
            &self.db,
            &self.state.versions,
            &keys,
            "",
            instance,
            &order,
        )
        .await
        .unwrap()
        .url
    }

    /// The first participant with something left to answer in an instance.
    pub async fn current_participant(&self, instance: i64) -> String {
        let row = orchestra::store::instances::by_id(&self.db, instance)
            .await
            .unwrap()
            .expect("the instance exists");
        let definition = self
            .state
            .versions
            .get(&self.db, row.version_id)
            .await
            .unwrap();
        orchestra::domain::instance::participants_left(&self.db, &row, &definition)
            .await
            .unwrap()
            .first()
            .map(|p| p.as_str().to_owned())
            .expect("someone has something left to answer")
    }
}

/// The CSRF token of the first form on a page.
pub fn csrf_of(html: &str) -> String {
    select_attr(html, "input[name=csrf]", "value").expect("a csrf field")
}

pub fn select_attr(html: &str, selector: &str, attr: &str) -> Option<String> {
    let doc = scraper::Html::parse_document(html);
    let sel = scraper::Selector::parse(selector).unwrap();
    doc.select(&sel)
        .next()
        .and_then(|e| e.value().attr(attr))
        .map(str::to_owned)
}

pub fn select_text(html: &str, selector: &str) -> Vec<String> {
    let doc = scraper::Html::parse_document(html);
    let sel = scraper::Selector::parse(selector).unwrap();
    doc.select(&sel)
        .map(|e| e.text().collect::<String>().trim().to_owned())
        .collect()
}

/// Each live app's log lines, by its number. One process runs every test side by side, so a
/// line is filed under the app it was written for, and an app reads only its own.
static APP_LOGS: Mutex<BTreeMap<u64, Arc<Mutex<String>>>> = Mutex::new(BTreeMap::new());
static NEXT_APP: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The app whose lines a thread writes where no `test_app` span is carried: the last app
    /// started on it. A test's runtime runs on its own thread, so this files its direct calls
    /// and its app's background tasks, which are spawned without the span.
    static WRITING_FOR: Cell<Option<u64>> = const { Cell::new(None) };
}

/// An app's number, kept on its `test_app{app=N}` span for the formatter to find.
struct AppNumber(u64);

/// Marks each `test_app` span with its app's number.
struct MarkApps;

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for MarkApps {
    fn on_new_span(&self, attrs: &span::Attributes<'_>, id: &span::Id, ctx: Context<'_, S>) {
        struct Number(Option<u64>);
        impl Visit for Number {
            fn record_u64(&mut self, field: &Field, value: u64) {
                if field.name() == "app" {
                    self.0 = Some(value);
                }
            }
            fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
        }
        if attrs.metadata().name() != "test_app" {
            return;
        }
        let mut number = Number(None);
        attrs.record(&mut number);
        if let (Some(n), Some(span)) = (number.0, ctx.span(id)) {
            span.extensions_mut().insert(AppNumber(n));
        }
    }
}

/// The default line format, each line appended to the buffer of the app it was written for:
/// the innermost `test_app` span in the event's scope (sqlx's SQLite worker thread enters the
/// span of the task that sent it a statement), else the thread's `WRITING_FOR`. A line for no
/// app is dropped.
struct FileByApp(Format);

impl<S, N> FormatEvent<S, N> for FileByApp
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        _: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let number = ctx
            .event_scope()
            .and_then(|scope| {
                scope
                    .into_iter()
                    .find_map(|span| span.extensions().get::<AppNumber>().map(|n| n.0))
            })
            .or_else(|| WRITING_FOR.get());
        let Some(buffer) = number.and_then(|n| APP_LOGS.lock().unwrap().get(&n).cloned()) else {
            return Ok(());
        };
        let mut line = String::new();
        self.0.format_event(ctx, Writer::new(&mut line), event)?;
        buffer.lock().unwrap().push_str(&line);
        Ok(())
    }
}

/// Installs the log router once per process, at DEBUG (TRACE grew the buffers to gigabytes):
/// `log` records too (reqwest, html5ever), through `tracing-log`.
fn route_logs() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let lines = tracing_subscriber::fmt::layer()
            .event_format(FileByApp(tracing_subscriber::fmt::format()))
            .with_ansi(false)
            .with_writer(std::io::sink);
        let _ = tracing_subscriber::registry()
            .with(LevelFilter::DEBUG)
            .with(MarkApps)
            .with(lines)
            .try_init();
    });
}

/// Starts the app with a flood store built over its database and clock (tests wrap the real
/// backends in recordings this way).
pub async fn spawn_with(make: impl FnOnce(&Db, Clock) -> Arc<dyn FloodStore>) -> TestApp {
    spawn_on(fresh_database().await, make).await
}

/// Starts the app on a database that already exists (an upgrade test makes one by hand).
pub async fn spawn_on(
    database: TestDb,
    make: impl FnOnce(&Db, Clock) -> Arc<dyn FloodStore>,
) -> TestApp {
    serve(database, make, Default::default()).await
}

/// Starts the app behind proxies it trusts (`ORCHESTRA_TRUSTED_PROXIES`, with the header of
/// `ORCHESTRA_CLIENT_IP_HEADER`): its tests name each client's address in that header.
pub async fn spawn_behind(
    flood: Flood,
    proxies: &str,
    header: orchestra::proxy::ClientIpHeader,
) -> TestApp {
    let proxies = orchestra::proxy::TrustedProxies::parse(proxies)
        .expect("proxies")
        .with_header(header);
    serve(
        fresh_database().await,
        move |db, clock| flood.store(db, clock),
        proxies,
    )
    .await
}

async fn serve(
    database: TestDb,
    make: impl FnOnce(&Db, Clock) -> Arc<dyn FloodStore>,
    proxies: orchestra::proxy::TrustedProxies,
) -> TestApp {
    serve_from(database, make, proxies, 1_900_000_000_000, |s| s).await
}

/// Starts the app with request bodies read under `limits` (a body deadline, a budget of its own).
pub async fn spawn_with_bodies(flood: Flood, limits: orchestra::config::Connections) -> TestApp {
    serve_from(
        fresh_database().await,
        move |db, clock| flood.store(db, clock),
        Default::default(),
        1_900_000_000_000,
        move |state| state.with_body_limits(&limits),
    )
    .await
}

/// Starts the whole app with its manual clock at the system's time now: for the tests of work
/// the store times by the system's clock (the email sender's due rows) and the doorway then
/// checks by the app's (the links it signed).
pub async fn spawn_now(flood: Flood) -> TestApp {
    spawn_now_as(flood, |s| s).await
}

/// `spawn_now`, with the app sending through `mailer` (as `serve` with ORCHESTRA_SMTP_URL set).
pub async fn spawn_now_mailing(flood: Flood, mailer: orchestra::domain::mail::Mailer) -> TestApp {
    spawn_now_as(flood, move |s| s.with_mailer(Some(mailer))).await
}

/// `spawn_now`, with the state adjusted as `serve` adjusts it from its configuration (an
/// OpenID Provider, say).
pub async fn spawn_now_with(flood: Flood, adjust: impl FnOnce(AppState) -> AppState) -> TestApp {
    spawn_now_as(flood, adjust).await
}

async fn spawn_now_as(flood: Flood, adjust: impl FnOnce(AppState) -> AppState) -> TestApp {
    let now_ms = orchestra::store::now() * 1000;
    serve_from(
        fresh_database().await,
        move |db, clock| flood.store(db, clock),
        Default::default(),
        now_ms,
        adjust,
    )
    .await
}

async fn serve_from(
    database: TestDb,
    make: impl FnOnce(&Db, Clock) -> Arc<dyn FloodStore>,
    proxies: orchestra::proxy::TrustedProxies,
    start_ms: i64,
    adjust: impl FnOnce(AppState) -> AppState,
) -> TestApp {
    route_logs();
    let number = NEXT_APP.fetch_add(1, Ordering::Relaxed);
    let logs = Arc::new(Mutex::new(String::new()));
    APP_LOGS.lock().unwrap().insert(number, logs.clone());
    WRITING_FOR.set(Some(number));
    let span = tracing::info_span!("test_app", app = number);
    let (db, clock, store, state) = async {
        let db = orchestra::open(&database.url)
            .await
            .expect("open the database");
        let clock = Clock::manual(start_ms);
        let store = make(&db, clock.clone());
        let state = orchestra::build_state(
            db.clone(),
            store.clone(),
            flood::Backend::Sql,
            clock.clone(),
        )
        .await
        .expect("build the state")
        .with_trusted_proxies(proxies);
        let state = adjust(state);
        (db, clock, store, state)
    }
    .instrument(span.clone())
    .await;
    // Each request is served on the app's span, so its lines are filed under this app.
    let app = tower::ServiceExt::map_future(orchestra::http::app(state.clone(), false), {
        move |answer| answer.instrument(span.clone())
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        // As `orchestra serve` does: the peer address is what sign-in attempts count by.
        let app = axum::ServiceExt::<axum::extract::Request>::into_make_service_with_connect_info::<
            std::net::SocketAddr,
        >(app);
        axum::serve(listener, app).await.expect("serve");
    });
    TestApp {
        base,
        state,
        db,
        clock,
        flood: store,
        database,
        server,
        number,
        logs,
    }
}

/// Two apps side by side on one thread each read back their own requests' lines, and none of
/// the other's: what lets the tests that read logs run beside any others.
#[tokio::test]
async fn each_app_reads_back_only_its_own_log_lines() {
    let first = spawn(Flood::Memory).await;
    let second = spawn(Flood::Memory).await;
    for (app, path) in [(&first, "/admin/login"), (&second, "/api/v1/workflows")] {
        app.client().get(app.url(path)).send().await.unwrap();
    }
    let (first_logs, second_logs) = (first.logs(), second.logs());
    assert!(first_logs.contains("route=/admin/login"), "{first_logs}");
    assert!(
        second_logs.contains("route=/api/v1/workflows"),
        "{second_logs}"
    );
    assert!(
        !first_logs.contains("route=/api/v1/workflows"),
        "{first_logs}"
    );
    assert!(!second_logs.contains("route=/admin/login"), "{second_logs}");
    let span_of = |app: &TestApp| format!("test_app{{app={}}}", app.number);
    assert!(!first_logs.contains(&span_of(&second)), "{first_logs}");
    assert!(!second_logs.contains(&span_of(&first)), "{second_logs}");
}

/// A pool on the database at `url` and its tables' names, read from its catalogue. By the URL,
/// not the test pass: a real server of these tests runs on its own SQLite file whichever
/// database the pass is on.
pub async fn tables_at(url: &str) -> (sqlx::AnyPool, Vec<String>) {
    use sqlx::Row;
    sqlx::any::install_default_drivers();
    let url = orchestra::store::normalize_url(url).unwrap().1;
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    let catalogue = if url.starts_with("postgres") {
        "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public'"
    } else {
        "SELECT name FROM sqlite_master WHERE type = 'table'"
    };
    let tables = sqlx::query(catalogue)
        .fetch_all(&pool)
        .await
        .unwrap()
        .iter()
        .map(|r| r.get::<String, _>(0))
        .collect();
    (pool, tables)
}
