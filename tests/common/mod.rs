//! The test harness: the real app over real TCP on port 0, on a real database.
//!
//! SQLite by default (a fresh file per test). When `ORCHESTRA_TEST_POSTGRES_URL` names a
//! PostgreSQL server (`.ci/run` starts one), every test gets a fresh database on it instead.
#![allow(dead_code)]

use std::sync::{Arc, Mutex, OnceLock};

use orchestra::http::AppState;
use orchestra::limits::flood::{self, Clock, FloodStore, MemoryFlood, SqlFlood};
use orchestra::store::Db;

pub const ADMIN: &str = "ada";
pub const PASSWORD: &str = "correct horse battery";

pub struct TestDb {
    pub url: String,
    _dir: Option<tempfile::TempDir>,
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
        };
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite:{}", dir.path().join("orchestra.db").display());
    TestDb {
        url,
        _dir: Some(dir),
    }
}

impl TestDb {
    /// A database someone else made (a test's own PostgreSQL cluster, say).
    pub fn at(url: String) -> Self {
        Self { url, _dir: None }
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
    Custom(Arc<dyn FloodStore>),
}

pub struct TestApp {
    pub base: String,
    pub state: AppState,
    pub db: Db,
    pub clock: Clock,
    pub flood: Arc<dyn FloodStore>,
    pub database: TestDb,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// Starts the whole app on 127.0.0.1:0 with a manual clock.
pub async fn spawn(flood: Flood) -> TestApp {
    spawn_with(move |db, clock| flood.store(db, clock)).await
}

impl Flood {
    fn store(self, db: &Db, clock: Clock) -> Arc<dyn FloodStore> {
        match self {
            Flood::Memory => Arc::new(MemoryFlood::new(4096, clock)),
            Flood::Sql => Arc::new(SqlFlood::new(db.clone(), 4096, clock)),
            Flood::Custom(s) => s,
        }
    }
}

impl TestApp {
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
            .unwrap()
            .expect("valid settings");
        self.state.site.refresh().await;
    }

    /// Starts an instance of a seeded example workflow; returns its id.
    pub async fn start(&self, workflow: &str, title: &str) -> i64 {
        let w = orchestra::store::workflows::by_name(&self.db, workflow)
            .await
            .unwrap()
            .expect("seeded workflow");
        orchestra::domain::links::start(&self.db, w.id, title, "The body of the subject.", None)
            .await
            .unwrap()
            .unwrap()
    }

    /// Issues a link and returns its path (`/interaction/...`): for a participant, or with
    /// `None` for whoever answers the instance's current step.
    pub async fn link(&self, instance: i64, participant: Option<&str>) -> String {
        let keys = orchestra::store::keys::load_or_create(&self.db)
            .await
            .unwrap();
        let who = match participant {
            Some(p) => p.to_owned(),
            None => self.current_participant(instance).await,
        };
        let order = orchestra::domain::links::Order {
            participant: &who,
            ttl: 3600,
            now: self.clock.now_secs(),
            by: &orchestra::domain::links::Actor::CommandLine,
            daily_cap: None,
        };
        orchestra::domain::links::issue(&self.db, &self.state.versions, &keys, "", instance, &order)
            .await
            .unwrap()
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
        orchestra::domain::links::participants_left(&self.db, &row, &definition)
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

/// Everything the app logged in this test process (all tests share it; filter by what is
/// unique to yours).
pub fn logs() -> String {
    String::from_utf8_lossy(&LOGS.get().expect("capture_logs ran").lock().unwrap()).into_owned()
}

static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();

#[derive(Clone)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Sends every log line of every level to a buffer the tests can read.
pub fn capture_logs() {
    LOGS.get_or_init(|| {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let writer = Capture(buffer.clone());
        let _ = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .try_init();
        buffer
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
    capture_logs();
    let db = orchestra::open(&database.url)
        .await
        .expect("open the database");
    let clock = Clock::manual(1_900_000_000_000);
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
    let app = orchestra::http::app(state.clone(), false);
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
    }
}
