//! The scale harness: `cargo bench --bench scale` (docs/performance.md, "A year of data").
//!
//! Builds two databases with the app's own row shapes, one of 10,000 instances and one of N
//! (a year of a busy site: per instance 5.7 history lines, 1.8 links, a third of a payment and
//! of a continuation handle; three workflows of three versions each; a fifth started by three
//! API tokens; most ended, the newest running; `workflow_versions.running/ended` and
//! `api_tokens.running` made to agree with the rows), plus on each one instance with 10,000
//! links. Both are built in bulk (`INSERT … SELECT` over a recursive CTE on SQLite,
//! `generate_series` on PostgreSQL, the secondary indexes dropped and made again afterwards) and
//! kept: a later run with the same N and backend reuses them. It then starts the real
//! `orchestra serve` on each and asks both the same pages and calls in alternated turns, and
//! prints one table: what | 10k | N | ratio | the threshold (issue 21's "Done when").
//! Then the chores: start-up after a flood of expired rows, `orchestra cron` over a backlog while
//! a visitor starts, answers and signs in, and the flood store's sync with a million live keys.
//!
//! Environment:
//! - `ORCHESTRA_SCALE_N` (default 1000000): instances in the large database;
//! - `ORCHESTRA_SCALE_DB` (`sqlite`, the default, or `postgres`);
//! - `ORCHESTRA_SCALE_PG_URL`, else `ORCHESTRA_BENCH_POSTGRES_URL`, else
//!   `ORCHESTRA_TEST_POSTGRES_URL`: an admin URL of a PostgreSQL server that may create databases
//!   (`orchestra_scale_10000`, `orchestra_scale_N`, kept for the next run);
//! - `ORCHESTRA_SCALE_DIR` (default `target/tmp/scale`): where the SQLite files are kept;
//! - `ORCHESTRA_SCALE_REBUILD=1`: build the databases again even if they exist;
//! - `ORCHESTRA_SCALE_TURNS` (default 9), `ORCHESTRA_SCALE_REQUESTS` (default 5): alternated
//!   turns, and requests a row makes of each server in a turn;
//! - `ORCHESTRA_SCALE_FLOOD` (default 3000000), `ORCHESTRA_SCALE_HANDLES` (default 300000):
//!   the expired flood rows and continuation handles of the start-up and cron rows;
//! - `ORCHESTRA_SCALE_CRON_SECS` (default 60; 0: until it ends): stop `orchestra cron` after
//!   this long (the rows it deleted by then, and its rate, are printed: the whole backlog takes
//!   it about ten minutes on the 2-core machine of docs/performance.md);
//! - `ORCHESTRA_SCALE_LIVE_KEYS` (default 1000000): live flood keys of the sync row;
//! - `ORCHESTRA_SCALE_PARTS` (default `pages,chores,sync`): which parts run.

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sqlx::any::AnyPoolOptions;
use sqlx::{AnyPool, Row as _};

#[path = "../tests/it/helpers/serve.rs"]
mod serve;

const ORCHESTRA: &str = env!("CARGO_BIN_EXE_orchestra");
const SMALL: u64 = 10_000;
const ADMIN: &str = "scale_admin";
const PASSWORD: &str = "scale-bench-password-7";
/// A word in one title in 997: what the title search looks for.
const SEARCH: &str = "nordwind";
/// Links (and link-issued history lines) on the one large instance.
const BIG_LINKS: i64 = 10_000;
const BIG_TITLE: &str = "Scale: an instance with 10,000 links";
const LISTEN_WAIT: Duration = Duration::from_secs(120);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    sqlx::any::install_default_drivers();
    let opts = Options::from_env();
    println!("{}", machine());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(run(opts));
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().replace('_', "").parse().ok())
        .unwrap_or(default)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Backend {
    Sqlite,
    Postgres,
}

struct Options {
    n: u64,
    backend: Backend,
    pg_url: Option<String>,
    dir: PathBuf,
    rebuild: bool,
    turns: usize,
    per_turn: usize,
    flood_rows: u64,
    expired_handles: u64,
    cron_secs: u64,
    live_keys: u64,
    parts: String,
}

impl Options {
    fn from_env() -> Self {
        let backend = match std::env::var("ORCHESTRA_SCALE_DB").as_deref() {
            Ok("postgres") | Ok("postgresql") | Ok("pg") => Backend::Postgres,
            Ok("sqlite") | Ok("") | Err(_) => Backend::Sqlite,
            Ok(other) => panic!("ORCHESTRA_SCALE_DB is sqlite or postgres, not {other}"),
        };
        let pg_url = [
            "ORCHESTRA_SCALE_PG_URL",
            "ORCHESTRA_BENCH_POSTGRES_URL",
            "ORCHESTRA_TEST_POSTGRES_URL",
        ]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()));
        if backend == Backend::Postgres && pg_url.is_none() {
            eprintln!(
                "ORCHESTRA_SCALE_DB=postgres needs ORCHESTRA_SCALE_PG_URL: an admin URL that may \
                 create databases, e.g. postgres://postgres@127.0.0.1:5432/postgres"
            );
            std::process::exit(1);
        }
        let dir = std::env::var("ORCHESTRA_SCALE_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|_| PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("scale"));
        Self {
            n: env_number("ORCHESTRA_SCALE_N", 1_000_000).max(SMALL),
            backend,
            pg_url,
            dir,
            rebuild: std::env::var("ORCHESTRA_SCALE_REBUILD").is_ok_and(|v| v == "1"),
            turns: env_number("ORCHESTRA_SCALE_TURNS", 9).max(1) as usize,
            per_turn: env_number("ORCHESTRA_SCALE_REQUESTS", 5).max(1) as usize,
            flood_rows: env_number("ORCHESTRA_SCALE_FLOOD", 3_000_000),
            expired_handles: env_number("ORCHESTRA_SCALE_HANDLES", 300_000),
            cron_secs: env_number("ORCHESTRA_SCALE_CRON_SECS", 60),
            live_keys: env_number("ORCHESTRA_SCALE_LIVE_KEYS", 1_000_000),
            parts: std::env::var("ORCHESTRA_SCALE_PARTS")
                .unwrap_or_else(|_| "pages,chores,sync".into()),
        }
    }

    fn wants(&self, part: &str) -> bool {
        self.parts.split(',').any(|p| p.trim() == part)
    }
}

/// The machine, named: CPU model, cores, kernel, load.
fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name")?.split_once(':'))
        .map_or("unknown CPU", |(_, m)| m.trim())
        .to_owned();
    let cores = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    format!(
        "Machine: {model}, {cores} cores (nproc), Linux {}; load average {} before the run",
        kernel.trim(),
        load.join(" ")
    )
}

async fn run(opts: Options) {
    let backend = match opts.backend {
        Backend::Sqlite => "SQLite",
        Backend::Postgres => "PostgreSQL",
    };
    println!(
        "Backend {backend}; N = {}; {} turns of {} requests a row and server",
        opts.n, opts.turns, opts.per_turn
    );
    let small = ensure(&opts, SMALL).await;
    let large = ensure(&opts, opts.n).await;
    let mut table = Vec::new();
    let mut notes = Vec::new();

    let mut servers = Vec::new();
    for db in [&small, &large] {
        prepare(db).await;
        servers.push(Site::start(db).await);
    }
    if opts.wants("pages") {
        table.extend(pages(&opts, &servers).await);
    }
    if opts.wants("chores") {
        let (rows, said) = chores(&opts, &servers, &small, &large).await;
        table.extend(rows);
        notes.extend(said);
    }
    drop(servers);
    if opts.wants("sync") {
        table.push(sync(&opts, &small, &large).await);
    }
    println!();
    print_table(&opts, &table);
    for note in notes {
        println!("{note}");
    }
}

// ---------------------------------------------------------------------------------------------
// The databases

/// A built database: its URL and the ids a run needs.
struct Built {
    url: String,
    n: u64,
    backend: Backend,
}

fn sqlite_path(opts: &Options, n: u64) -> PathBuf {
    opts.dir.join(format!("orchestra-{n}.db"))
}

fn pg_urls(opts: &Options, n: u64) -> (String, String) {
    let admin = opts.pg_url.clone().expect("a PostgreSQL URL");
    let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
    let name = format!("orchestra_scale_{n}");
    (format!("{base}/{name}"), name)
}

/// The database of `n` instances: reused when a complete one is there, else built.
async fn ensure(opts: &Options, n: u64) -> Built {
    let url = match opts.backend {
        Backend::Sqlite => format!("sqlite:{}", sqlite_path(opts, n).display()),
        Backend::Postgres => pg_urls(opts, n).0,
    };
    let built = Built {
        url,
        n,
        backend: opts.backend,
    };
    if !opts.rebuild
        && let Some(secs) = built_marker(&built).await
    {
        println!(
            "reusing the database of {n} instances (built in {secs} s): {}",
            built.url
        );
        return built;
    }
    let started = Instant::now();
    match opts.backend {
        Backend::Sqlite => {
            std::fs::create_dir_all(&opts.dir).expect("the scale directory");
            let path = sqlite_path(opts, n);
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
            }
        }
        Backend::Postgres => {
            let (_, name) = pg_urls(opts, n);
            let admin = AnyPoolOptions::new()
                .max_connections(1)
                .connect(opts.pg_url.as_deref().expect("a URL"))
                .await
                .expect("connect to PostgreSQL");
            sqlx::raw_sql(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                .execute(&admin)
                .await
                .expect("drop the old database");
            sqlx::raw_sql(&format!("CREATE DATABASE {name}"))
                .execute(&admin)
                .await
                .expect("create the database");
            admin.close().await;
        }
    }
    serve::cli(ORCHESTRA, &built.url, &["init"]);
    build(&built).await;
    let secs = started.elapsed().as_secs();
    let pool = connect(&built).await;
    exec(
        &pool,
        "CREATE TABLE scale_bench (n BIGINT NOT NULL, seconds BIGINT NOT NULL)",
    )
    .await;
    exec(
        &pool,
        &format!("INSERT INTO scale_bench (n, seconds) VALUES ({n}, {secs})"),
    )
    .await;
    pool.close().await;
    println!("built the database of {n} instances in {secs} s");
    built
}

/// How long the complete database took to build, when there is one.
async fn built_marker(built: &Built) -> Option<i64> {
    if built.backend == Backend::Sqlite {
        let path = built.url.strip_prefix("sqlite:")?;
        if !std::path::Path::new(path).exists() {
            return None;
        }
    }
    let pool = AnyPoolOptions::new()
        .max_connections(1)
        .connect(&built.url)
        .await
        .ok()?;
    let secs = sqlx::query("SELECT seconds FROM scale_bench WHERE n = $1")
        .bind(built.n as i64)
        .fetch_optional(&pool)
        .await
        .ok()
        .flatten()
        .and_then(|r| r.try_get::<i64, _>(0).ok());
    pool.close().await;
    secs
}

/// One connection: the SQLite build's pragmas hold for it. On SQLite a large page cache, so
/// that the bulk writes into random-keyed indexes (hashes) do not thrash a 2 MB one.
async fn connect(built: &Built) -> AnyPool {
    let pool = AnyPoolOptions::new()
        .max_connections(1)
        .acquire_timeout(Duration::from_secs(600))
        .connect(&built.url)
        .await
        .expect("connect to the scale database");
    if built.backend == Backend::Sqlite {
        exec(
            &pool,
            "PRAGMA foreign_keys = OFF; PRAGMA cache_size = -500000; PRAGMA busy_timeout = 60000",
        )
        .await;
    }
    pool
}

/// SQLite: the bench's own bulk writes moved out of the WAL, as a site's would have been by
/// the checkpoints along the way, so the app does not meet a WAL of a gigabyte; then the file
/// flushed to the disk. The bulk writes run with `synchronous = OFF`: without the flush, the
/// app's first checkpoint `fsync`s gigabytes of the bench's dirty pages on a visitor's time.
async fn checkpoint(pool: &AnyPool, built: &Built) {
    if built.backend == Backend::Sqlite {
        exec(pool, "PRAGMA wal_checkpoint(TRUNCATE)").await;
        let started = Instant::now();
        if let Some(path) = built.url.strip_prefix("sqlite:") {
            std::fs::File::open(path)
                .and_then(|f| f.sync_all())
                .expect("flush the database file");
        }
        eprintln!(
            "  the database file flushed in {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
}

async fn exec(pool: &AnyPool, sql: &str) -> u64 {
    match sqlx::raw_sql(sql).execute(pool).await {
        Ok(done) => done.rows_affected(),
        Err(e) => panic!("{e}\nin: {sql}"),
    }
}

async fn ints(pool: &AnyPool, sql: &str) -> Vec<(i64, String)> {
    sqlx::query(sql)
        .fetch_all(pool)
        .await
        .unwrap_or_else(|e| panic!("{e}\nin: {sql}"))
        .into_iter()
        .map(|r| (r.get::<i64, _>(0), r.get::<String, _>(1)))
        .collect()
}

/// The SQL of one backend for what the two spell differently.
struct Dialect(Backend);

impl Dialect {
    /// Rows `i` from `from` to `to`, as a table `s(i)`.
    fn series(&self, from: i64, to: i64) -> String {
        match self.0 {
            Backend::Sqlite => format!(
                "(WITH RECURSIVE q(i) AS (SELECT {from} UNION ALL SELECT i + 1 FROM q \
                 WHERE i < {to}) SELECT i FROM q) s"
            ),
            Backend::Postgres => format!("generate_series({from}::bigint, {to}::bigint) AS s(i)"),
        }
    }

    /// 64 random hex digits: what a keyed hash looks like.
    fn hex64(&self) -> &'static str {
        match self.0 {
            Backend::Sqlite => "lower(hex(randomblob(32)))",
            Backend::Postgres => "(md5(random()::text) || md5(random()::text))",
        }
    }

    fn hex32(&self) -> &'static str {
        match self.0 {
            Backend::Sqlite => "lower(hex(randomblob(16)))",
            Backend::Postgres => "md5(random()::text)",
        }
    }
}

const TABLES: [&str; 5] = ["instances", "history", "links", "payments", "handles"];

/// Fills a freshly initialised database with `built.n` instances and what hangs off them.
async fn build(built: &Built) {
    let d = Dialect(built.backend);
    let pool = connect(built).await;
    let n = built.n as i64;
    let step = |what: &str, started: Instant| {
        eprintln!("  [{n}] {what}: {:.1} s", started.elapsed().as_secs_f64());
    };
    match built.backend {
        Backend::Sqlite => {
            exec(
                &pool,
                "PRAGMA foreign_keys = OFF; PRAGMA synchronous = OFF; \
                 PRAGMA cache_size = -500000; PRAGMA temp_store = MEMORY",
            )
            .await;
        }
        Backend::Postgres => {
            // No foreign-key triggers while loading (the rows are made consistent by
            // construction); big sorts for the index builds.
            exec(
                &pool,
                "SET session_replication_role = replica; SET maintenance_work_mem = '512MB'; \
                 SET synchronous_commit = off",
            )
            .await;
        }
    }
    // Three workflows (the seeded examples), three versions each.
    let workflows = ints(&pool, "SELECT id, name FROM workflows ORDER BY id").await;
    assert_eq!(workflows.len(), 3, "init seeds three example workflows");
    for number in [2, 3] {
        exec(
            &pool,
            &format!(
                "INSERT INTO workflow_versions (workflow_id, number, definition, created_at) \
                 SELECT workflow_id, {number}, definition, created_at FROM workflow_versions \
                 WHERE number = 1"
            ),
        )
        .await;
    }
    let versions: Vec<(i64, i64, i64)> =
        sqlx::query("SELECT id, workflow_id, number FROM workflow_versions")
            .fetch_all(&pool)
            .await
            .expect("versions")
            .into_iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect();
    let now = orchestra::store::now();
    for t in 0..3 {
        exec(
            &pool,
            &format!(
                "INSERT INTO api_tokens (name, hash, created_at) VALUES ('partner_{t}', {}, {})",
                d.hex64(),
                now - 400 * 86400
            ),
        )
        .await;
    }
    let tokens = ints(
        &pool,
        "SELECT id, name FROM api_tokens WHERE name LIKE 'partner_%' ORDER BY name",
    )
    .await;

    // The secondary indexes go while rows go in, and are made again after: one sort each.
    let index_sql = match built.backend {
        Backend::Sqlite => format!(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL \
             AND tbl_name IN ({})",
            quoted(&TABLES)
        ),
        Backend::Postgres => format!(
            "SELECT indexname::text, indexdef::text FROM pg_indexes WHERE schemaname = 'public' \
             AND tablename IN ({}) AND indexname NOT IN (SELECT conname FROM pg_constraint)",
            quoted(&TABLES)
        ),
    };
    let indexes: Vec<(String, String)> = sqlx::query(&index_sql)
        .fetch_all(&pool)
        .await
        .expect("the indexes")
        .into_iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    for (name, _) in &indexes {
        exec(&pool, &format!("DROP INDEX {name}")).await;
    }

    // w: which workflow (0 supplier onboarding, 1 contract review, 2 order payment, as seeded);
    // h: a spread-out number 0..99 choosing the state; b: the same choosing who started it.
    let wf = |w: usize| workflows[w].0;
    let steps = "CASE w WHEN 1 THEN 1 ELSE 2 END";
    let version = {
        let mut case = String::from("CASE w * 10 + (1 + ((i - 1) * 3) / $N)");
        for (id, workflow, number) in &versions {
            let w = workflows
                .iter()
                .position(|x| x.0 == *workflow)
                .expect("its workflow");
            case.push_str(&format!(" WHEN {} THEN {id}", w * 10 + *number as usize));
        }
        case.push_str(" END");
        case.replace("$N", &n.to_string())
    };
    let started = Instant::now();
    let active_from = n - n / 20;
    let inserted = exec(
        &pool,
        &format!(
            "INSERT INTO instances (id, workflow_id, version_id, subject_title, subject_body, token, \
             step_index, state, created_at, updated_at, api_token_id, started_by) \
             SELECT i, CASE w WHEN 0 THEN {w0} WHEN 1 THEN {w1} ELSE {w2} END, {version}, \
             CASE w WHEN 0 THEN 'Supplier ' WHEN 1 THEN 'Contract ' ELSE 'Order ' END || i || ' · ' || \
             CASE i % 7 WHEN 0 THEN 'Acme GmbH' WHEN 1 THEN 'Blue Harbour Ltd' WHEN 2 THEN 'Cobalt & Sons' \
             WHEN 3 THEN 'Delta Foods SA' WHEN 4 THEN 'Evergreen Logistics' WHEN 5 THEN 'Fjord Textiles' \
             ELSE 'Granite Works' END || CASE WHEN i % 997 = 0 THEN ' Nordwind' ELSE '' END, \
             'Received through the partner portal; the questionnaire and the references are attached.', \
             {hex32}, \
             CASE st WHEN 'active' THEN CASE WHEN h % 2 = 1 AND {steps} > 1 THEN 1 ELSE 0 END \
             WHEN 'complete' THEN {steps} WHEN 'rejected' THEN {steps} - 1 ELSE 0 END, \
             st, {t0} + i * {span} / {n}, {t0} + i * {span} / {n} + (h % 48) * 3600, \
             CASE WHEN b < 20 THEN CASE i % 3 WHEN 0 THEN {t_0} WHEN 1 THEN {t_1} ELSE {t_2} END END, \
             CASE WHEN b < 20 THEN 'api' WHEN b < 60 THEN 'admin' ELSE 'cli' END \
             FROM (SELECT i, w, h, b, CASE WHEN i > {active_from} OR h < 2 THEN 'active' \
             WHEN h < 82 THEN 'complete' WHEN h < 91 THEN 'rejected' ELSE 'cancelled' END AS st \
             FROM (SELECT i, i % 3 AS w, (i * 2654435761) % 100 AS h, (i * 40503) % 100 AS b \
             FROM {series}) a) x",
            w0 = wf(0),
            w1 = wf(1),
            w2 = wf(2),
            hex32 = d.hex32(),
            t0 = now - 365 * 86400,
            span = 365 * 86400,
            t_0 = tokens[0].0,
            t_1 = tokens[1].0,
            t_2 = tokens[2].0,
            series = d.series(1, n),
        ),
    )
    .await;
    step(&format!("{inserted} instances"), started);

    // Who started it, as history and links name them.
    let per_instance = "SELECT id, workflow_id, state, step_index, created_at, updated_at, \
         CASE WHEN id % 5 = 0 THEN 1 ELSE 2 END AS l, \
         CASE state WHEN 'complete' THEN 3 WHEN 'rejected' THEN 3 WHEN 'cancelled' THEN 2 \
         ELSE step_index END AS e, \
         CASE started_by WHEN 'api' THEN 'api:partner_' || (id % 3) WHEN 'admin' THEN \
         'admin:operations' ELSE 'cli' END AS actor FROM instances";
    let started = Instant::now();
    let inserted = exec(
        &pool,
        &format!(
            "INSERT INTO history (instance_id, step_index, branch, event, answer, at, step_title, \
             kind, participant, actor) \
             SELECT x.id, \
             CASE WHEN s.i = 0 THEN 0 WHEN s.i <= x.l THEN s.i - 1 \
             WHEN s.i = x.l + x.e AND x.state <> 'active' THEN x.step_index ELSE s.i - x.l - 1 END, \
             '', \
             CASE WHEN s.i = 0 THEN 'started' WHEN s.i <= x.l THEN 'link_issued' \
             WHEN s.i = x.l + x.e AND x.state <> 'active' THEN x.state ELSE 'answered' END, \
             CASE WHEN s.i > x.l AND NOT (s.i = x.l + x.e AND x.state <> 'active') THEN \
             '{{\"company\":\"Acme GmbH\",\"contact_email\":\"buyer@example.com\",\
             \"yearly_volume\":\"12000\",\"notes\":\"Ships from Rotterdam, pallets only.\"}}' \
             ELSE '{{}}' END, \
             x.created_at + s.i * 600, \
             CASE WHEN s.i = 0 OR (s.i = x.l + x.e AND x.state <> 'active') THEN '' \
             WHEN (s.i <= x.l AND s.i = 1) OR (s.i > x.l AND s.i = x.l + 1) THEN 'Supplier details' \
             ELSE 'Check the supplier' END, \
             CASE WHEN s.i = 0 OR (s.i = x.l + x.e AND x.state <> 'active') THEN '' \
             WHEN (s.i <= x.l AND s.i = 1) OR (s.i > x.l AND s.i = x.l + 1) THEN 'form' \
             ELSE 'review' END, \
             CASE WHEN s.i = 0 OR (s.i = x.l + x.e AND x.state <> 'active') THEN '' \
             WHEN (s.i <= x.l AND s.i = 1) OR (s.i > x.l AND s.i = x.l + 1) THEN 'supplier' \
             ELSE 'reviewer' END, \
             CASE WHEN s.i <= x.l OR x.state = 'cancelled' AND s.i = x.l + x.e THEN x.actor \
             ELSE '' END \
             FROM ({per_instance}) x JOIN {series} ON s.i < 1 + x.l + x.e \
             ORDER BY x.id, s.i",
            series = d.series(0, 9),
        ),
    )
    .await;
    step(&format!("{inserted} history lines"), started);

    let started = Instant::now();
    let inserted = exec(
        &pool,
        &format!(
            "INSERT INTO links (instance_id, hash, participant, expires, issued_by, issued_at, \
             revoked_at, revoked_by) \
             SELECT x.id, {hex64}, CASE s.i WHEN 0 THEN 'supplier' ELSE 'reviewer' END, \
             x.created_at + 604800, x.actor, x.created_at + (s.i + 1) * 600, \
             CASE WHEN x.state = 'cancelled' THEN x.updated_at END, \
             CASE WHEN x.state = 'cancelled' THEN x.actor END \
             FROM ({per_instance}) x JOIN {series} ON s.i < x.l ORDER BY x.id, s.i",
            hex64 = d.hex64(),
            series = d.series(0, 9),
        ),
    )
    .await;
    step(&format!("{inserted} links"), started);

    // Every order has its payment; a running one's is under way (its `open_key` set).
    let started = Instant::now();
    let inserted = exec(
        &pool,
        &format!(
            "INSERT INTO payments (id, reference, instance_id, step_index, branch, participant, \
             amount_cents, currency, state, open_key, created_at, updated_at) \
             SELECT id, 'pay_' || id, id, 1, '', 'payer', 4990, 'EUR', \
             CASE state WHEN 'complete' THEN 'paid' WHEN 'active' THEN 'pending' ELSE 'cancelled' END, \
             CASE WHEN state = 'active' THEN id || ':1:payer' END, created_at + 1800, updated_at \
             FROM instances WHERE workflow_id = {w2}",
            w2 = wf(2),
        ),
    )
    .await;
    step(&format!("{inserted} payments"), started);
    // One continuation handle a payment. They expire in a year: the cron rows bring their own
    // expired ones, so cron leaves these alone and the database can be reused.
    let started = Instant::now();
    let inserted = exec(
        &pool,
        &format!(
            "INSERT INTO handles (hash, instance_id, expires, used, payment_id) \
             SELECT {hex64}, instance_id, {future} + id, CASE WHEN state = 'pending' THEN 0 ELSE 1 END, id \
             FROM payments",
            hex64 = d.hex64(),
            future = now + 365 * 86400,
        ),
    )
    .await;
    step(&format!("{inserted} handles"), started);

    // The one instance with 10,000 links, the newest but for what runs add.
    let big = n + 1;
    let supplier_v3 = versions
        .iter()
        .find(|(_, w, number)| *w == wf(0) && *number == 3)
        .expect("version 3")
        .0;
    exec(
        &pool,
        &format!(
            "INSERT INTO instances (id, workflow_id, version_id, subject_title, subject_body, token, \
             step_index, state, created_at, updated_at, api_token_id, started_by) \
             VALUES ({big}, {w0}, {supplier_v3}, '{BIG_TITLE}', '', {hex32}, 0, 'active', {t}, {t}, \
             NULL, 'cli')",
            w0 = wf(0),
            hex32 = d.hex32(),
            t = now - 86400,
        ),
    )
    .await;
    exec(
        &pool,
        &format!(
            "INSERT INTO history (instance_id, step_index, branch, event, answer, at, step_title, \
             kind, participant, actor) \
             SELECT {big}, 0, '', CASE WHEN s.i = 0 THEN 'started' ELSE 'link_issued' END, '{{}}', \
             {t} + s.i, CASE WHEN s.i = 0 THEN '' ELSE 'Supplier details' END, \
             CASE WHEN s.i = 0 THEN '' ELSE 'form' END, CASE WHEN s.i = 0 THEN '' ELSE 'supplier' END, \
             'cli' FROM {series}",
            t = now - 86400,
            series = d.series(0, BIG_LINKS),
        ),
    )
    .await;
    exec(
        &pool,
        &format!(
            "INSERT INTO links (instance_id, hash, participant, expires, issued_by, issued_at) \
             SELECT {big}, {hex64}, 'supplier', {t} + 604800, 'cli', {t} + s.i FROM {series}",
            hex64 = d.hex64(),
            t = now - 86400,
            series = d.series(1, BIG_LINKS),
        ),
    )
    .await;

    let started = Instant::now();
    for (name, sql) in &indexes {
        let one = Instant::now();
        exec(&pool, sql).await;
        step(&format!("index {name}"), one);
    }
    step("every index", started);

    // The maintained figures, as the app would have kept them.
    let started = Instant::now();
    exec(
        &pool,
        "UPDATE workflow_versions SET \
         running = (SELECT COUNT(*) FROM instances i WHERE i.version_id = workflow_versions.id \
         AND i.state = 'active'), \
         ended = (SELECT COUNT(*) FROM instances i WHERE i.version_id = workflow_versions.id \
         AND i.state <> 'active')",
    )
    .await;
    exec(
        &pool,
        "UPDATE api_tokens SET running = (SELECT COUNT(*) FROM instances i \
         WHERE i.api_token_id = api_tokens.id AND i.state = 'active')",
    )
    .await;
    step("the kept counts", started);
    let started = Instant::now();
    match built.backend {
        Backend::Sqlite => {
            exec(&pool, "ANALYZE").await;
            checkpoint(&pool, built).await;
        }
        Backend::Postgres => {
            for table in ["instances", "payments"] {
                exec(
                    &pool,
                    &format!(
                        "SELECT setval(pg_get_serial_sequence('{table}', 'id'), \
                         (SELECT MAX(id) FROM {table}))"
                    ),
                )
                .await;
            }
            exec(&pool, "VACUUM ANALYZE").await;
        }
    }
    step("statistics", started);
    pool.close().await;
}

fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a run needs on a database, every run: the administrator, a running-instance cap that
/// the starts never reach, the sign-in limits in report-only mode.
async fn prepare(built: &Built) {
    let db = orchestra::store::Db::connect(&built.url)
        .await
        .expect("open the database");
    let hash = orchestra::domain::password::hash(PASSWORD).expect("a password hash");
    orchestra::store::admins::create(&db, ADMIN, &hash)
        .await
        .expect("the administrator");
    db.close().await;
    // PostgreSQL: the visibility map set, as autovacuum has long done on a year-old table. The
    // build's own VACUUM may not have: on a shared cluster another database's open transaction
    // holds the horizon back, and every capped total then fetched 10,000 heap rows (13 ms).
    if built.backend == Backend::Postgres {
        let pool = connect(built).await;
        exec(&pool, "VACUUM (ANALYZE) instances").await;
        pool.close().await;
    }
    // The visitor of the cron row signs in about once a second from one address: the sign-in
    // limits count it (report only) rather than refuse it.
    for (key, value) in [
        ("api.caps.running_instances_per_token", "10000000"),
        ("login.limits.report_only", "true"),
    ] {
        serve::cli(ORCHESTRA, &built.url, &["config", "set", key, value]);
    }
}

// ---------------------------------------------------------------------------------------------
// The servers and their clients

struct Site {
    child: Child,
    addr: SocketAddr,
    /// From the process's start until it listened.
    started_in: Duration,
    client: reqwest::Client,
    token: String,
    /// A token of reach `own` that started nothing.
    own_token: String,
    workflow_id: i64,
    big_id: i64,
    oldest_cursor: i64,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port on 127.0.0.1")
}

/// `orchestra serve` on `db_url`; how long it took to listen.
fn spawn_server(db_url: &str) -> (Child, SocketAddr, Duration) {
    let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let started = Instant::now();
    let mut child = Command::new(ORCHESTRA)
        .args(["serve", "--bind", &addr.to_string()])
        .env("ORCHESTRA_DATABASE_URL", db_url)
        .env("ORCHESTRA_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start orchestra serve");
    serve::wait_until_listening(addr, &mut child, "orchestra serve", LISTEN_WAIT);
    (child, addr, started.elapsed())
}

/// Stops a server as an operator does (SIGTERM), and waits for it.
fn terminate(mut child: Child) {
    // SAFETY: kill only sends a signal to the child this function owns.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let _ = child.wait();
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client")
}

/// The value of the first `name="csrf"` field of a page.
fn csrf_of(html: &str) -> String {
    let at = html.find("name=\"csrf\"").expect("a csrf field");
    let tag_start = html[..at].rfind('<').expect("its tag");
    let tag_end = at + html[at..].find('>').expect("its end");
    let tag = &html[tag_start..tag_end];
    let value = tag.find("value=\"").expect("a value") + 7;
    let end = value + tag[value..].find('"').expect("its end");
    tag[value..end].to_owned()
}

async fn sign_in(client: &reqwest::Client, base: &str) -> reqwest::StatusCode {
    let form = client
        .get(format!("{base}/admin/login"))
        .send()
        .await
        .expect("the sign-in form")
        .text()
        .await
        .expect("its text");
    client
        .post(format!("{base}/admin/login"))
        .form(&[
            ("csrf", csrf_of(&form).as_str()),
            ("name", ADMIN),
            ("password", PASSWORD),
            ("destination", "/admin"),
        ])
        .send()
        .await
        .expect("sign in")
        .status()
}

impl Site {
    async fn start(built: &Built) -> Self {
        let name = format!("scale_{}_{}", std::process::id(), orchestra::store::now());
        let token = serve::cli(
            ORCHESTRA,
            &built.url,
            &[
                "token", "create", &name, "--reach", "all", "--rate", "1000000", "--burst",
                "100000",
            ],
        );
        let token = token
            .split_whitespace()
            .find(|w| w.len() > 20)
            .unwrap_or(&token)
            .to_owned();
        // A token that reaches only what it started, and started nothing: its list is the
        // filter on `api_token_id` at its emptiest.
        let own = serve::cli(
            ORCHESTRA,
            &built.url,
            &["token", "create", &format!("{name}_own"), "--reach", "own"],
        );
        let own_token = own
            .split_whitespace()
            .find(|w| w.len() > 20)
            .unwrap_or(&own)
            .to_owned();
        let pool = connect(built).await;
        let workflow_id = ints(
            &pool,
            "SELECT id, name FROM workflows WHERE name = 'supplier_onboarding'",
        )
        .await[0]
            .0;
        let big_id = ints(
            &pool,
            &format!("SELECT id, subject_title FROM instances WHERE subject_title = '{BIG_TITLE}'"),
        )
        .await[0]
            .0;
        pool.close().await;
        let (child, addr, started_in) = spawn_server(&built.url);
        let client = client();
        let site = Self {
            child,
            addr,
            started_in,
            client,
            token,
            own_token,
            workflow_id,
            big_id,
            // Near the oldest instance: a keyset page costs the same anywhere, this shows it.
            oldest_cursor: 120,
        };
        let status = sign_in(&site.client, &site.url("")).await;
        assert_eq!(status, 303, "the administrator could not sign in");
        site
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------------------------
// Rows

/// What a row's figure is held to.
#[derive(Clone, Copy)]
enum Bound {
    /// A median within 2× of the 10k one and under this many milliseconds.
    Flat(f64),
    /// At least this many a second at N.
    AtLeast(f64),
    /// At most this many milliseconds at N.
    AtMost(f64),
}

struct Measured {
    what: String,
    unit: &'static str,
    /// Per database (10k, N): every sample, and each turn's median.
    samples: [Vec<f64>; 2],
    turns: [Vec<f64>; 2],
    bound: Bound,
    note: String,
}

impl Measured {
    fn new(what: impl Into<String>, unit: &'static str, bound: Bound) -> Self {
        Self {
            what: what.into(),
            unit,
            samples: [Vec::new(), Vec::new()],
            turns: [Vec::new(), Vec::new()],
            bound,
            note: String::new(),
        }
    }

    fn one(
        what: impl Into<String>,
        unit: &'static str,
        bound: Bound,
        small: f64,
        large: f64,
    ) -> Self {
        let mut m = Self::new(what, unit, bound);
        m.samples = [vec![small], vec![large]];
        m.turns = [vec![small], vec![large]];
        m
    }
}

#[derive(Clone)]
enum Ask {
    Page(String),
    Api(String),
    /// With the token of reach `own`.
    ApiOwn(String),
    ApiStart,
}

fn start_body(title: &str) -> String {
    format!("{{\"workflow\":\"supplier_onboarding\",\"subject\":{{\"title\":\"{title}\"}}}}")
}

/// One request; its time in milliseconds and whether it was answered as it should be.
async fn ask(site: &Site, what: &Ask) -> (f64, bool, usize) {
    let request = match what {
        Ask::Page(path) => site.client.get(site.url(path)),
        Ask::Api(path) => site.client.get(site.url(path)).bearer_auth(&site.token),
        Ask::ApiOwn(path) => site.client.get(site.url(path)).bearer_auth(&site.own_token),
        Ask::ApiStart => site
            .client
            .post(site.url("/api/v1/instances"))
            .bearer_auth(&site.token)
            .header("content-type", "application/json")
            .body(start_body("Scale start")),
    };
    let started = Instant::now();
    let response = request.send().await.expect("a response");
    let status = response.status();
    let body = response.bytes().await.expect("a body");
    let ms = started.elapsed().as_secs_f64() * 1e3;
    let ok = match what {
        Ask::ApiStart => status == 201,
        _ => status == 200,
    };
    if !ok {
        eprintln!(
            "  {:?} answered {status}: {}",
            match what {
                Ask::Page(p) | Ask::Api(p) | Ask::ApiOwn(p) => p.as_str(),
                Ask::ApiStart => "POST /api/v1/instances",
            },
            String::from_utf8_lossy(&body[..body.len().min(300)])
        );
    }
    (ms, ok, body.len())
}

/// What a row asks of a site (its ids differ between the two databases).
type PathOf = Box<dyn Fn(&Site) -> Ask>;

async fn pages(opts: &Options, sites: &[Site]) -> Vec<Measured> {
    let rows: Vec<(&str, PathOf)> = vec![
        ("dashboard", Box::new(|_| Ask::Page("/admin".into()))),
        (
            "workflow page",
            Box::new(|s| Ask::Page(format!("/admin/workflows/{}", s.workflow_id))),
        ),
        (
            "workflow edit form",
            Box::new(|s| Ask::Page(format!("/admin/workflows/{}/edit", s.workflow_id))),
        ),
        (
            "instance list, first page",
            Box::new(|_| Ask::Page("/admin/instances".into())),
        ),
        (
            "instance list, a page near the oldest",
            Box::new(|s| Ask::Page(format!("/admin/instances?before={}", s.oldest_cursor))),
        ),
        (
            "instance list, title search",
            Box::new(|_| Ask::Page(format!("/admin/instances?q={SEARCH}"))),
        ),
        (
            "instance list, state filter (rejected)",
            Box::new(|_| Ask::Page("/admin/instances?state=rejected".into())),
        ),
        (
            "instance page, 10,000 links",
            Box::new(|s| Ask::Page(format!("/admin/instances/{}", s.big_id))),
        ),
        (
            "status report",
            Box::new(|_| Ask::Page("/admin/reports/status".into())),
        ),
        (
            "API instance view (10,000 links)",
            Box::new(|s| Ask::Api(format!("/api/v1/instances/{}", s.big_id))),
        ),
        (
            "API list, first page",
            Box::new(|_| Ask::Api("/api/v1/instances".into())),
        ),
        (
            "API list, state filter (complete)",
            Box::new(|_| Ask::Api("/api/v1/instances?state=complete".into())),
        ),
        (
            "API list, a reach-own token's (none started)",
            Box::new(|_| Ask::ApiOwn("/api/v1/instances".into())),
        ),
        (
            "API list, title search",
            Box::new(|_| Ask::Api(format!("/api/v1/instances?q={SEARCH}"))),
        ),
        ("API instance start, 1 client", Box::new(|_| Ask::ApiStart)),
    ];
    let mut out: Vec<Measured> = rows
        .iter()
        .map(|(name, _)| Measured::new(*name, "ms", Bound::Flat(20.0)))
        .collect();
    let mut bytes = vec![[0usize; 2]; rows.len()];
    // Warm-up: every row once on each server.
    for (_, asked) in &rows {
        for site in sites {
            ask(site, &asked(site)).await;
        }
    }
    let mut starts = Measured::new("API starts, 4 clients", "/s", Bound::AtLeast(200.0));
    for turn in 0..opts.turns {
        eprintln!("pages: turn {} of {}", turn + 1, opts.turns);
        for (r, (_, asked)) in rows.iter().enumerate() {
            let order = if (turn + r) % 2 == 0 { [0, 1] } else { [1, 0] };
            for s in order {
                let mut times = Vec::new();
                for _ in 0..opts.per_turn {
                    let (ms, ok, len) = ask(&sites[s], &asked(&sites[s])).await;
                    if !ok {
                        out[r].note = "some answers were wrong!".into();
                    }
                    bytes[r][s] = len;
                    times.push(ms);
                }
                out[r].turns[s].push(median(&times));
                out[r].samples[s].extend(times);
            }
        }
        let order = if turn % 2 == 0 { [0, 1] } else { [1, 0] };
        for s in order {
            let rate = concurrent_starts(&sites[s], 4, Duration::from_secs(2)).await;
            starts.turns[s].push(rate);
            starts.samples[s].push(rate);
        }
    }
    for (r, m) in out.iter_mut().enumerate() {
        if bytes[r][1] > 100_000 {
            let size = format!("{:.1} MB at N", bytes[r][1] as f64 / 1e6);
            m.note = format!("{size} {}", m.note).trim().to_owned();
        }
    }
    out.push(starts);
    out
}

/// Starts a second from `clients` clients each starting one instance after another.
async fn concurrent_starts(site: &Site, clients: usize, dur: Duration) -> f64 {
    let until = Instant::now() + dur;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let client = site.client.clone();
        let url = site.url("/api/v1/instances");
        let token = site.token.clone();
        tasks.push(tokio::spawn(async move {
            let mut done = 0u64;
            while Instant::now() < until {
                let status = client
                    .post(&url)
                    .bearer_auth(&token)
                    .header("content-type", "application/json")
                    .body(start_body("Scale start, concurrent"))
                    .send()
                    .await
                    .map(|r| r.status());
                match status {
                    Ok(s) if s == 201 => done += 1,
                    other => eprintln!("  a concurrent start answered {other:?}"),
                }
            }
            done
        }));
    }
    let mut total = 0;
    for t in tasks {
        total += t.await.expect("a client");
    }
    total as f64 / started.elapsed().as_secs_f64()
}

// ---------------------------------------------------------------------------------------------
// Chores: start-up after a flood, cron over a backlog while a visitor works

/// Writes an expired backlog into the database: `handles` continuation handles and `flood`
/// flood rows, as a flood and a month without cron would leave them.
async fn backlog(built: &Built, handles: u64, flood: u64) {
    let d = Dialect(built.backend);
    let pool = connect(built).await;
    let now = orchestra::store::now();
    let started = Instant::now();
    exec(
        &pool,
        &format!(
            "INSERT INTO handles (hash, instance_id, expires, used, payment_id) \
             SELECT {hex64}, 1 + s.i % 1000, {past} - s.i % 86400, 0, NULL FROM {series}",
            hex64 = d.hex64(),
            past = now - 3600,
            series = d.series(1, handles as i64),
        ),
    )
    .await;
    // Flood rows as the doorway's counting writes them: a key per link, per process, per
    // minute's bucket, in milliseconds.
    let ms = now * 1000;
    exec(
        &pool,
        &format!(
            "INSERT INTO flood (event, identifier, node, bucket_start, expiration, count) \
             SELECT 'interaction', {hex64}, 'scale-flood', {ms} - 7200000 - (s.i % 3600) * 1000, \
             {ms} - 3600000 - (s.i % 3600) * 1000, 1 + s.i % 5 FROM {series}",
            hex64 = d.hex64(),
            series = d.series(1, flood as i64),
        ),
    )
    .await;
    checkpoint(&pool, built).await;
    eprintln!(
        "  backlog written ({handles} expired handles, {flood} expired flood rows) in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    pool.close().await;
}

async fn count_backlog(built: &Built) -> (i64, i64) {
    let pool = connect(built).await;
    let now = orchestra::store::now();
    let get = |sql: String| {
        let pool = pool.clone();
        async move {
            sqlx::query(&sql)
                .fetch_one(&pool)
                .await
                .expect("a count")
                .get::<i64, _>(0)
        }
    };
    let handles = get(format!(
        "SELECT COUNT(*) FROM handles WHERE expires <= {now}"
    ))
    .await;
    let flood = get(format!(
        "SELECT COUNT(*) FROM flood WHERE expiration <= {}",
        now * 1000
    ))
    .await;
    pool.close().await;
    (handles, flood)
}

/// What a visitor saw: each request's wait, and the answers that were errors.
#[derive(Default)]
struct Visit {
    waits: Vec<f64>,
    server_errors: u64,
    refused: u64,
    iterations: u64,
}

/// One request of the visitor's: its wait counted, a 5xx or 4xx said.
async fn timed(v: &mut Visit, request: reqwest::RequestBuilder) -> Option<(u16, String)> {
    let t = Instant::now();
    let r = match request.send().await {
        Ok(r) => r,
        Err(_) => {
            v.server_errors += 1;
            return None;
        }
    };
    let status = r.status().as_u16();
    let body = r.text().await.unwrap_or_default();
    v.waits.push(t.elapsed().as_secs_f64() * 1e3);
    if status >= 500 {
        v.server_errors += 1;
        eprintln!("  visitor: {status}");
    } else if status >= 400 {
        v.refused += 1;
        eprintln!("  visitor: {status} {}", &body[..body.len().min(200)]);
    }
    Some((status, body))
}

/// A visitor until `stop`: starts an instance and issues its link through the API, opens the
/// link and answers its form step (the doorway), and every fifth time signs in and opens the
/// dashboard; a round every 50 ms.
async fn visitor(site: &Site, stop: impl Fn() -> bool) -> Visit {
    let mut v = Visit::default();
    let base = site.url("");
    let mut round = 0u64;
    while !stop() {
        let began = Instant::now();
        round += 1;
        let started = timed(
            &mut v,
            site.client
                .post(format!("{base}/api/v1/instances"))
                .bearer_auth(&site.token)
                .header("content-type", "application/json")
                .body(start_body("Visitor during cron")),
        )
        .await;
        let id = started
            .and_then(|(_, b)| serde_json::from_str::<serde_json::Value>(&b).ok())
            .and_then(|j| j["id"].as_i64());
        if let Some(id) = id {
            let link = timed(
                &mut v,
                site.client
                    .post(format!("{base}/api/v1/instances/{id}/links"))
                    .bearer_auth(&site.token)
                    .header("content-type", "application/json")
                    .body("{\"participant\":\"supplier\"}"),
            )
            .await
            .and_then(|(_, b)| serde_json::from_str::<serde_json::Value>(&b).ok())
            .and_then(|j| j["url"].as_str().map(str::to_owned));
            if let Some(url) = link {
                let path = url
                    .find("/interaction/")
                    .map_or(url.as_str(), |i| &url[i..]);
                let doorway = client();
                timed(&mut v, doorway.get(format!("{base}{path}"))).await;
                timed(
                    &mut v,
                    doorway.post(format!("{base}{path}")).form(&[
                        ("_step", "1"),
                        ("company", "Nordwind AG"),
                        ("contact_email", "buyer@example.com"),
                        ("yearly_volume", "1200"),
                        ("notes", "Answered while cron ran."),
                    ]),
                )
                .await;
            }
        }
        if round % 5 == 0 {
            let admin = client();
            let t = Instant::now();
            let status = sign_in(&admin, &base).await;
            v.waits.push(t.elapsed().as_secs_f64() * 1e3 / 2.0);
            if status.is_server_error() {
                v.server_errors += 1;
            }
            timed(&mut v, admin.get(format!("{base}/admin"))).await;
        }
        v.iterations += 1;
        let spent = began.elapsed();
        if spent < Duration::from_millis(50) {
            tokio::time::sleep(Duration::from_millis(50) - spent).await;
        }
    }
    v
}

async fn chores(
    opts: &Options,
    sites: &[Site],
    small: &Built,
    large: &Built,
) -> (Vec<Measured>, Vec<String>) {
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    // The backlog left by an earlier run that was stopped is cleared first.
    for built in [small, large] {
        let pool = connect(built).await;
        exec(&pool, "DELETE FROM flood WHERE node = 'scale-flood'").await;
        exec(&pool, "DELETE FROM handles WHERE payment_id IS NULL").await;
        checkpoint(&pool, built).await;
        pool.close().await;
    }
    eprintln!(
        "chores: writing the backlog into the database of {}",
        large.n
    );
    backlog(large, opts.expired_handles, opts.flood_rows).await;
    let (handles, flood) = count_backlog(large).await;

    // Start-up: a server started on the flooded database, against one on the 10k one.
    let (child, _, flooded_start) = spawn_server(&large.url);
    terminate(child);
    let (child, _, small_start) = spawn_server(&small.url);
    terminate(child);
    let mut m = Measured::one(
        format!("start-up (N: after {flood} expired flood rows)"),
        "ms",
        Bound::AtMost(1000.0),
        small_start.as_secs_f64() * 1e3,
        flooded_start.as_secs_f64() * 1e3,
    );
    m.note = format!(
        "first start of the runs: {:.0} ms (10k), {:.0} ms (N, no backlog)",
        sites[0].started_in.as_secs_f64() * 1e3,
        sites[1].started_in.as_secs_f64() * 1e3
    );
    rows.push(m);

    // The visitor alone on the 10k site: what its waits are without a chore.
    let until = Instant::now() + Duration::from_secs(10);
    let alone = visitor(&sites[0], || Instant::now() >= until).await;

    // `orchestra cron` on the large database while the visitor works on its server.
    eprintln!("chores: orchestra cron over {handles} handles and {flood} flood rows …");
    let started = Instant::now();
    let mut cron = Command::new(ORCHESTRA)
        .arg("cron")
        .env("ORCHESTRA_DATABASE_URL", &large.url)
        .env("ORCHESTRA_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start orchestra cron");
    let limit = (opts.cron_secs > 0).then(|| Duration::from_secs(opts.cron_secs));
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let done = done.clone();
        std::thread::spawn(move || {
            let status = loop {
                if let Ok(Some(status)) = cron.try_wait() {
                    break Some(status);
                }
                if limit.is_some_and(|l| started.elapsed() >= l) {
                    let _ = cron.kill();
                    let _ = cron.wait();
                    break None;
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            done.store(true, std::sync::atomic::Ordering::SeqCst);
            (status, started.elapsed())
        })
    };
    let during = visitor(&sites[1], || done.load(std::sync::atomic::Ordering::SeqCst)).await;
    let (status, took) = watcher.join().expect("the cron watcher");
    let (handles_left, flood_left) = count_backlog(large).await;
    let max = |v: &Visit| v.waits.iter().copied().fold(0.0, f64::max);
    let p99 = |v: &Visit| percentile(&v.waits, 0.99);
    let mut m = Measured::one(
        "cron: a visitor's longest wait",
        "ms",
        Bound::AtMost(200.0),
        max(&alone),
        max(&during),
    );
    m.note = format!(
        "p99 {:.1} / {:.1} ms; 5xx {} / {}; 4xx {} / {}; {} / {} rounds",
        p99(&alone),
        p99(&during),
        alone.server_errors,
        during.server_errors,
        alone.refused,
        during.refused,
        alone.iterations,
        during.iterations
    );
    rows.push(m);
    let deleted = (handles - handles_left) + (flood - flood_left);
    notes.push(format!(
        "cron (N): {} in {:.1} s ({:.0} rows a second); deleted {} of {handles} expired handles \
         and {} of {flood} expired flood rows (10k column: the same visitor for 10 s on the 10k \
         site, no cron)",
        match status {
            Some(s) if s.success() => "ended".to_owned(),
            Some(s) => format!("FAILED ({s})"),
            None => "stopped at ORCHESTRA_SCALE_CRON_SECS".to_owned(),
        },
        took.as_secs_f64(),
        deleted as f64 / took.as_secs_f64(),
        handles - handles_left,
        flood - flood_left,
    ));
    // What is left goes now, so the next run starts clean.
    let pool = connect(large).await;
    exec(&pool, "DELETE FROM flood WHERE node = 'scale-flood'").await;
    exec(&pool, "DELETE FROM handles WHERE payment_id IS NULL").await;
    checkpoint(&pool, large).await;
    pool.close().await;
    (rows, notes)
}

// ---------------------------------------------------------------------------------------------
// The flood store's sync

async fn sync(opts: &Options, small: &Built, large: &Built) -> Measured {
    let mut m = Measured::new(
        "flood sync, a statement of 500 keys",
        "ms",
        Bound::AtMost(10.0),
    );
    let live = [SMALL.min(opts.live_keys), opts.live_keys];
    let mut keys: Vec<Vec<String>> = Vec::new();
    let mut plans = Vec::new();
    let mut dbs = Vec::new();
    let now_ms = orchestra::store::now() * 1000;
    for (built, live) in [small, large].into_iter().zip(live) {
        let d = Dialect(built.backend);
        let pool = connect(built).await;
        exec(&pool, "DELETE FROM flood WHERE node = 'scale-other'").await;
        let started = Instant::now();
        exec(
            &pool,
            &format!(
                "INSERT INTO flood (event, identifier, node, bucket_start, expiration, count) \
                 SELECT 'interaction', {hex64}, 'scale-other', {now_ms} - (s.i % 60) * 60000, \
                 {now_ms} + 3600000 - (s.i % 60) * 60000, 1 + s.i % 5 FROM {series}",
                hex64 = d.hex64(),
                series = d.series(1, live as i64),
            ),
        )
        .await;
        eprintln!(
            "sync: {live} live keys written in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        checkpoint(&pool, built).await;
        // Half the keys asked are live ones (spread over the table), half are not stored.
        let sample = ints(
            &pool,
            &format!(
                "SELECT bucket_start, identifier FROM flood WHERE node = 'scale-other' \
                 ORDER BY identifier LIMIT 250 OFFSET {}",
                live / 3
            ),
        )
        .await;
        let mut asked: Vec<String> = sample.into_iter().map(|(_, id)| id).collect();
        asked.extend((0..250).map(|i| format!("{i:064x}")));
        let db = orchestra::store::Db::connect(&built.url)
            .await
            .expect("open the database");
        // The planner's statistics as the server's cron leaves them (every 10 minutes).
        db.optimize().await.expect("refresh the statistics");
        dbs.push(db);
        // A connection reads the statistics when it opens: the plan is a new connection's.
        pool.close().await;
        let pool = connect(built).await;
        plans.push(sync_plan(&pool, built.backend, &asked, now_ms).await);
        keys.push(asked);
        pool.close().await;
    }
    for turn in 0..opts.turns * 2 {
        let order = if turn % 2 == 0 { [0, 1] } else { [1, 0] };
        for s in order {
            let asked: Vec<(&str, &str)> = keys[s]
                .iter()
                .map(|k| ("interaction", k.as_str()))
                .collect();
            let mut times = Vec::new();
            for _ in 0..opts.per_turn {
                let started = Instant::now();
                let rows =
                    orchestra::store::flood::others_counts(&dbs[s], "scale-me", now_ms, &asked)
                        .await
                        .expect("the sync's read");
                times.push(started.elapsed().as_secs_f64() * 1e3);
                assert!(!rows.is_empty(), "the sync found none of the live keys");
            }
            m.turns[s].push(median(&times));
            m.samples[s].extend(times);
        }
    }
    m.note = format!(
        "{} and {} live keys; plan at 10k: {}; at N: {}",
        live[0], live[1], plans[0], plans[1]
    );
    for (db, built) in dbs.into_iter().zip([small, large]) {
        db.close().await;
        let pool = connect(built).await;
        exec(&pool, "DELETE FROM flood WHERE node = 'scale-other'").await;
        checkpoint(&pool, built).await;
        pool.close().await;
    }
    m
}

/// The plan of the sync's statement for these keys, its lines joined: SQLite's `EXPLAIN QUERY
/// PLAN` detail, PostgreSQL's `EXPLAIN` (the nodes only).
async fn sync_plan(pool: &AnyPool, backend: Backend, keys: &[String], now_ms: i64) -> String {
    let sql = orchestra::store::flood::others_counts_statement(keys.len());
    let (explain, column) = match backend {
        Backend::Sqlite => (format!("EXPLAIN QUERY PLAN {sql}"), 3),
        Backend::Postgres => (format!("EXPLAIN {sql}"), 0),
    };
    let mut query = sqlx::query(&explain).bind("scale-me").bind(now_ms);
    for k in keys {
        query = query.bind(k);
    }
    let rows = query.fetch_all(pool).await.expect("the sync's plan");
    rows.iter()
        .filter_map(|r| r.try_get::<String, _>(column).ok())
        .map(|l| l.split("  (cost").next().unwrap_or("").trim().to_owned())
        .filter(|l| {
            !l.is_empty()
                && !l.contains("Cond:")
                && !l.starts_with("Filter")
                && !l.starts_with("Recheck")
        })
        .collect::<Vec<_>>()
        .join(" / ")
}

// ---------------------------------------------------------------------------------------------
// The table

fn median(values: &[f64]) -> f64 {
    percentile(values, 0.5)
}

fn percentile(values: &[f64], q: f64) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if q == 0.5 && n % 2 == 0 {
        return (v[n / 2 - 1] + v[n / 2]) / 2.0;
    }
    v[((n as f64 * q) as usize).min(n - 1)]
}

fn figure(m: &Measured, s: usize) -> String {
    let med = median(&m.samples[s]);
    let digits = if med >= 100.0 { 0 } else { 1 };
    if m.turns[s].len() > 1 {
        let lo = m.turns[s].iter().copied().fold(f64::INFINITY, f64::min);
        let hi = m.turns[s].iter().copied().fold(0.0, f64::max);
        format!("{med:.digits$} ({lo:.digits$}–{hi:.digits$})")
    } else {
        format!("{med:.digits$}")
    }
}

fn print_table(opts: &Options, rows: &[Measured]) {
    let backend = match opts.backend {
        Backend::Sqlite => "SQLite",
        Backend::Postgres => "PostgreSQL",
    };
    println!("{}", machine());
    println!(
        "{backend}, 10k against N = {}; medians of every request, (min–max) of the turns' medians",
        opts.n
    );
    println!(
        "| {:<46} | {:>22} | {:>22} | {:>6} | {:<22} | {:<6} | note",
        "what", "10k", "N", "ratio", "threshold", ""
    );
    println!(
        "|{:-<48}|{:->24}|{:->24}|{:->8}|{:-<24}|{:-<8}|------",
        "", "", "", "", "", ""
    );
    for m in rows {
        let small = median(&m.samples[0]);
        let large = median(&m.samples[1]);
        let ratio = large / small;
        let (threshold, met) = match m.bound {
            Bound::Flat(ms) => (
                format!("≤ 2× and < {ms} {}", m.unit),
                ratio <= 2.0 && large < ms,
            ),
            Bound::AtLeast(x) => (format!("≥ {x} {} at N", m.unit), large >= x),
            Bound::AtMost(x) => (format!("≤ {x} {} at N", m.unit), large <= x),
        };
        println!(
            "| {:<46} | {:>22} | {:>22} | {:>6.2} | {:<22} | {:<6} | {}",
            format!("{} ({})", m.what, m.unit),
            figure(m, 0),
            figure(m, 1),
            ratio,
            threshold,
            if met { "met" } else { "MISSED" },
            m.note
        );
    }
}
