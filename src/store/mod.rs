//! The only place with SQL. One `Db` over SQLite or PostgreSQL through sqlx's `Any` driver;
//! queries are written once in the SQL both understand (`$n` parameters, `ON CONFLICT`,
//! `RETURNING`), and every one runs in the test suites of both backends.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Executor};

pub mod admin_mails;
pub mod admins;
pub mod api;
pub mod audit;
pub mod email_codes;
pub mod expired;
mod file;
pub mod files;
pub mod flood;
pub mod history;
pub mod idempotency;
pub mod instances;
pub mod keys;
pub mod links;
pub mod lists;
pub mod mails;
pub mod outbox;
pub mod payments;
pub mod queue;
pub mod receipts;
pub mod retention;
pub mod sessions;
pub mod settings;
pub mod two_step;
pub mod webhooks;
pub mod workflows;

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("migrations/postgres");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "PostgreSQL",
        }
    }
}

#[derive(Clone)]
pub struct Db {
    pub(crate) pool: AnyPool,
    /// What reads use. On SQLite, connections of their own (`query_only`): a writer waiting
    /// for a lock another process holds keeps its pooled connection meanwhile, and reads must
    /// not queue behind it for one. On PostgreSQL, the same pool.
    reader: AnyPool,
    /// A fresh connection's options, for the status report's write probe (shared: a `Db` is
    /// cloned for every request, and the options hold the URL's strings).
    probe: Arc<AnyConnectOptions>,
    pub backend: Backend,
    /// The SQLite file this process opened, watched for deletion and for losing write access.
    file: Option<Arc<file::Watch>>,
    /// `ORCHESTRA_FILES_DIR`: where uploaded files' bytes go instead of the database
    /// (`files`), when set.
    files_dir: Option<Arc<std::path::PathBuf>>,
}

/// By hand: the probe's options hold the database URL, password included.
impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("backend", &self.backend)
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

/// How long connecting may take before it is given up, with its cause.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long the status report's write probe waits for SQLite's write lock: a write lock held
/// longer than this counts as "locked for writes", a write of the server's own does not.
const LOCK_PROBE: Duration = Duration::from_millis(500);

/// How long a request waits for a pooled connection before the database counts as unavailable
/// (a themed 503): `ORCHESTRA_DB_ACQUIRE_TIMEOUT_MS`, 2000 unless set (100 to 60000). Read
/// here rather than in `Config` because every program opens the database through the store.
pub fn acquire_timeout() -> Duration {
    const DEFAULT_MS: u64 = 2000;
    let ms = std::env::var("ORCHESTRA_DB_ACQUIRE_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|ms| (100..=60_000).contains(ms))
        .unwrap_or(DEFAULT_MS);
    Duration::from_millis(ms)
}

/// Whether an error means "no database right now" (down, unreachable, or no connection
/// free in time) rather than a bug: the web layer answers these with a 503.
pub fn is_unavailable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) | sqlx::Error::PoolClosed => true,
        // Another process holds the write lock past the busy timeout; or PostgreSQL is
        // shutting down, starting up, or lost the connection (classes 57P and 08).
        sqlx::Error::Database(d) => {
            is_busy(e)
                || d.code().is_some_and(|c| {
                    matches!(&*c, "57P01" | "57P02" | "57P03") || c.starts_with("08")
                })
        }
        _ => false,
    }
}

/// Text the database cannot store: PostgreSQL refuses a NUL character (22021) or one its
/// encoding lacks (22P05). The web layer refuses NULs before any query; this is the net under
/// it, so such input is a bad request wherever it came from, never a 500.
pub fn is_bad_text(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(d) => d.code().is_some_and(|c| matches!(&*c, "22021" | "22P05")),
        _ => false,
    }
}

/// SQLITE_BUSY and its extended codes: another connection holds the write lock.
pub(crate) fn is_busy(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if matches!(d.code().as_deref(), Some("5" | "261" | "517")))
}

/// The database as the status report names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Health {
    Ok,
    /// No answer: down, refused, or no connection free in time (the cause, for the log).
    Unreachable(String),
    /// SQLite: another connection holds the write lock past the probe's wait.
    Locked,
    /// The file cannot be written, or PostgreSQL is a standby or read-only.
    ReadOnly,
    /// The SQLite file was deleted or replaced under the running server.
    Vanished,
}

/// The pool writes go through. A pooled connection is pinged when it is taken (sqlx's default),
/// a round trip to the connection's worker thread before each statement. A SQLite connection is
/// a file in this process: there is no server to have lost it, and a file deleted or made
/// read-only is what `before_acquire` watches. So SQLite skips the ping, which was a large share
/// of a step page's CPU beside the doorway's single read. PostgreSQL keeps it: a connection the
/// server closed (a restart) is found then, not by a visitor's failed query. `pragmas` are
/// SQLite's, run on each new connection after the house's own.
fn writer_pool(
    sqlite: bool,
    file: Option<Arc<file::Watch>>,
    max: u32,
    pragmas: &str,
) -> AnyPoolOptions {
    let on_connect = file.clone();
    let on_acquire = file;
    let busy = acquire_timeout().as_millis();
    let pragmas = pragmas.to_owned();
    AnyPoolOptions::new()
        .max_connections(max)
        .acquire_timeout(acquire_timeout())
        .test_before_acquire(!sqlite)
        .after_connect(move |conn, _| {
            let watch = on_connect.clone();
            let pragmas = pragmas.clone();
            Box::pin(async move {
                if sqlite {
                    // WAL lets readers and the one writer work at once. The busy timeout
                    // makes a second process wait for the write lock instead of failing,
                    // but no longer than a request waits for a connection: a lock held
                    // by another process fails a write fast (a 503), it does not hang.
                    // After each checkpoint the WAL is cut back to 4 MiB, so a burst of
                    // writes does not leave a file that never shrinks. `secure_delete`: what
                    // a delete or an update frees is overwritten with zeros, so erased answers,
                    // files and addresses are not left in free pages or free space of a page
                    // (docs/operations.md, retention and erasure).
                    conn.execute(&*format!(
                        "PRAGMA journal_mode = WAL; PRAGMA busy_timeout = {busy}; \
                         PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL; \
                         PRAGMA journal_size_limit = 4194304; PRAGMA secure_delete = ON;{pragmas}"
                    ))
                    .await?;
                }
                if let Some(watch) = watch {
                    // A connection opened while the file cannot be written is read-only
                    // for good: noted, so it is dropped once the file can be written again.
                    watch.check();
                }
                Ok(())
            })
        })
        .before_acquire(move |_, meta| {
            let keep = on_acquire.as_ref().is_none_or(|w| w.keep(meta.age));
            Box::pin(async move { Ok(keep) })
        })
}

/// A pool of connections that only read: `query_only` on SQLite, so a write through it is an
/// error rather than a wait for the write lock.
async fn read_pool(
    options: &AnyConnectOptions,
    max: u32,
    acquire: Duration,
) -> Result<AnyPool, sqlx::Error> {
    let sqlite = options.database_url.scheme() == "sqlite";
    let busy = acquire.as_millis();
    Ok(AnyPoolOptions::new()
        .max_connections(max)
        .acquire_timeout(acquire)
        .test_before_acquire(!sqlite)
        .after_connect(move |conn, _| {
            Box::pin(async move {
                if sqlite {
                    conn.execute(&*format!(
                        "PRAGMA busy_timeout = {busy}; PRAGMA query_only = ON;"
                    ))
                    .await?;
                } else {
                    conn.execute("SET default_transaction_read_only = on")
                        .await?;
                }
                Ok(())
            })
        })
        .connect_lazy_with(options.clone()))
}

/// The URL schemes `ORCHESTRA_DATABASE_URL` takes (besides a bare SQLite path).
pub const SCHEMES: &str = "sqlite:, postgres://, postgresql://";

/// An operator's database setting, understood: a postgres URL as it is, a `sqlite:` URL or a
/// bare path as a SQLite file. Anything else with a scheme (`mysql://x`) is refused rather than
/// taken for a file name.
#[derive(Clone, PartialEq, Eq)]
pub enum DatabaseUrl {
    Postgres(String),
    Sqlite { path: String, query: String },
}

impl DatabaseUrl {
    pub fn parse(url: &str) -> Result<Self, UrlRefused> {
        let refused = || UrlRefused {
            value: redact_url(url),
        };
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(Self::Postgres(url.to_owned()));
        }
        let path = match url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
        {
            Some(path) => path,
            None if has_scheme(url) => return Err(refused()),
            None => url,
        };
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        if path.is_empty() {
            return Err(refused());
        }
        Ok(Self::Sqlite {
            path: path.to_owned(),
            query: query.to_owned(),
        })
    }

    pub fn backend(&self) -> Backend {
        match self {
            Self::Postgres(_) => Backend::Postgres,
            Self::Sqlite { .. } => Backend::Sqlite,
        }
    }

    /// The URL sqlx takes. SQLite opens `mode=rw` (never creating) unless `create`.
    fn sqlx_url(&self, create: bool) -> String {
        match self {
            Self::Postgres(url) => url.clone(),
            Self::Sqlite { path, query } => {
                let mode = if create { "mode=rwc" } else { "mode=rw" };
                let query = if query.is_empty() {
                    mode.to_owned()
                } else if query.contains("mode=") {
                    query.clone()
                } else {
                    format!("{query}&{mode}")
                };
                format!("sqlite://{path}?{query}")
            }
        }
    }
}

/// `scheme://`, as a URL has; a Windows drive (`C:\`) or a file name with a colon is not one.
fn has_scheme(url: &str) -> bool {
    match url.split_once("://") {
        Some((scheme, _)) => {
            scheme
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        }
        None => false,
    }
}

/// A database URL fit to print: the password, if any, replaced by `***`.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// Turns an operator's database setting into a URL sqlx takes, creating a SQLite file when
/// missing. Refuses an unknown scheme.
pub fn normalize_url(url: &str) -> Result<(Backend, String), UrlRefused> {
    let parsed = DatabaseUrl::parse(url)?;
    Ok((parsed.backend(), parsed.sqlx_url(true)))
}

/// A database setting with a scheme Orchestra does not speak (worded in `crate::error`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlRefused {
    /// The setting as given, its password hidden.
    pub value: String,
}

/// Whether opening a database may create it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Create {
    /// First start (`serve` on the default file) and `orchestra init`.
    IfMissing,
    /// Everything else: a missing database is an error, never a new empty one with new keys.
    Never,
}

/// Why a database could not be opened, named for the operator.
#[derive(Debug)]
pub enum ConnectError {
    Url(UrlRefused),
    /// No SQLite file there, and this program does not create one.
    Missing(String),
    Refused,
    UnknownHost,
    Authentication,
    NoSuchDatabase,
    NotADatabase,
    TimedOut,
    /// Opened without migrating (`orchestra status`), and the tables are not all there.
    NotMigrated,
    Other(sqlx::Error),
}

impl ConnectError {
    fn classify(e: sqlx::Error) -> Self {
        match &e {
            sqlx::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
                Self::Refused
            }
            sqlx::Error::Io(io)
                if ["lookup", "not known", "resolve", "nodename"]
                    .iter()
                    .any(|w| io.to_string().contains(w)) =>
            {
                Self::UnknownHost
            }
            sqlx::Error::Database(db) => match db.code().as_deref() {
                Some("28P01" | "28000") => Self::Authentication,
                Some("3D000") => Self::NoSuchDatabase,
                // SQLITE_NOTADB
                Some("26") => Self::NotADatabase,
                _ => Self::Other(e),
            },
            sqlx::Error::PoolTimedOut => Self::TimedOut,
            // Something answered that does not speak PostgreSQL.
            sqlx::Error::Protocol(_) => Self::NotADatabase,
            _ => Self::Other(e),
        }
    }
}

impl std::error::Error for ConnectError {}

impl From<sqlx::Error> for ConnectError {
    fn from(e: sqlx::Error) -> Self {
        Self::classify(e)
    }
}

impl Db {
    /// Connects, creating a SQLite file when missing, and applies the embedded migrations.
    pub async fn connect(url: &str) -> Result<Self, sqlx::Error> {
        Self::open(url, Create::IfMissing)
            .await
            .map_err(|e| match e {
                ConnectError::Other(e) => e,
                other => sqlx::Error::Configuration(other.to_string().into()),
            })
    }

    /// Connects and applies the embedded migrations. The first connection is made alone, within
    /// `CONNECT_TIMEOUT`, so a failure says why rather than "pool timed out".
    pub async fn open(url: &str, create: Create) -> Result<Self, ConnectError> {
        sqlx::any::install_default_drivers();
        let parsed = DatabaseUrl::parse(url).map_err(ConnectError::Url)?;
        let backend = parsed.backend();
        if let (DatabaseUrl::Sqlite { path, .. }, Create::Never) = (&parsed, create) {
            if !std::path::Path::new(path).exists() && !path.starts_with(':') {
                return Err(ConnectError::Missing(path.clone()));
            }
        }
        let options = AnyConnectOptions::from_str(&parsed.sqlx_url(create == Create::IfMissing))?;
        {
            use sqlx::Connection;
            let probe = async {
                let mut conn = sqlx::AnyConnection::connect_with(&options).await?;
                // SQLite reads the file only when a query needs it: "not a database" shows
                // here, not as retries until the pool gives up.
                let probe = match backend {
                    Backend::Sqlite => "SELECT COUNT(*) FROM sqlite_master",
                    Backend::Postgres => "SELECT 1",
                };
                sqlx::query(probe).execute(&mut conn).await?;
                conn.close().await
            };
            tokio::time::timeout(CONNECT_TIMEOUT, probe)
                .await
                .map_err(|_| ConnectError::TimedOut)??;
        }
        let file = match &parsed {
            DatabaseUrl::Sqlite { path, .. } => file::Watch::new(path).map(Arc::new),
            DatabaseUrl::Postgres(_) => None,
        };
        let sqlite = backend == Backend::Sqlite;
        let pool = writer_pool(sqlite, file.clone(), if sqlite { 4 } else { 8 }, "")
            .connect_with(options.clone())
            .await?;
        let migrator = if sqlite {
            &SQLITE_MIGRATIONS
        } else {
            &POSTGRES_MIGRATIONS
        };
        migrator.run(&pool).await.map_err(sqlx::Error::from)?;
        // `:memory:` is one database per connection: there, reads share the writers' pool.
        let in_memory =
            matches!(&parsed, DatabaseUrl::Sqlite { path, .. } if path.starts_with(':'));
        let reader = if sqlite && !in_memory {
            read_pool(&options, 4, acquire_timeout()).await?
        } else {
            pool.clone()
        };
        let db = Self {
            pool,
            reader,
            probe: Arc::new(options),
            backend,
            file,
            files_dir: None,
        };
        db.watch_file();
        Ok(db)
    }

    /// Opens a database to look at it, writing nothing: no file created, no migration applied,
    /// no key made. SQLite is opened `mode=ro`; PostgreSQL sessions are read-only. For
    /// `orchestra status`, which must not change what it reports on.
    pub async fn open_read_only(url: &str, timeout: Duration) -> Result<Self, ConnectError> {
        sqlx::any::install_default_drivers();
        let parsed = DatabaseUrl::parse(url).map_err(ConnectError::Url)?;
        let backend = parsed.backend();
        if let DatabaseUrl::Sqlite { path, .. } = &parsed
            && !std::path::Path::new(path).exists()
        {
            return Err(ConnectError::Missing(path.clone()));
        }
        // The write probe opens `mode=rw` (never creating): it takes the write lock and
        // gives it back, writing nothing.
        let probe = AnyConnectOptions::from_str(&parsed.sqlx_url(false))?;
        let options = match &parsed {
            DatabaseUrl::Sqlite { path, query } => {
                let query: Vec<&str> = query
                    .split('&')
                    .filter(|q| !q.is_empty() && !q.starts_with("mode="))
                    .chain(["mode=ro"])
                    .collect();
                AnyConnectOptions::from_str(&format!("sqlite://{path}?{}", query.join("&")))?
            }
            DatabaseUrl::Postgres(_) => probe.clone(),
        };
        // One connection alone first, as `open` does, so a failure says why (refused, not a
        // database) rather than "timed out" after the pool's retries.
        let reader = tokio::time::timeout(timeout, async {
            use sqlx::Connection;
            let mut conn = sqlx::AnyConnection::connect_with(&options).await?;
            let probe = match backend {
                Backend::Sqlite => "SELECT COUNT(*) FROM sqlite_master",
                Backend::Postgres => "SELECT 1",
            };
            sqlx::query(probe).execute(&mut conn).await?;
            conn.close().await?;
            read_pool(&options, 2, timeout).await
        })
        .await
        .map_err(|_| ConnectError::TimedOut)??;
        let file = match &parsed {
            DatabaseUrl::Sqlite { path, .. } => file::Watch::new(path).map(Arc::new),
            DatabaseUrl::Postgres(_) => None,
        };
        Ok(Self {
            pool: reader.clone(),
            reader,
            probe: Arc::new(probe),
            backend,
            file,
            files_dir: None,
        })
    }

    /// Whether every migration this program embeds has been applied. A database that has none
    /// (no migrations table) has not been set up.
    pub async fn migrated(&self) -> Result<bool, sqlx::Error> {
        let migrator = match self.backend {
            Backend::Sqlite => &SQLITE_MIGRATIONS,
            Backend::Postgres => &POSTGRES_MIGRATIONS,
        };
        let applied: Vec<i64> =
            match sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success = TRUE")
                .fetch_all(&self.reader)
                .await
            {
                Ok(v) => v,
                Err(sqlx::Error::Database(_)) => return Ok(false),
                Err(e) => return Err(e),
            };
        Ok(migrator
            .iter()
            .filter(|m| m.migration_type.is_up_migration())
            .all(|m| applied.contains(&m.version)))
    }

    /// What reads run on (see `reader`).
    pub(crate) fn reader(&self) -> &AnyPool {
        &self.reader
    }

    /// The database as the status report names it: reachable and writable, or why not.
    /// Bounded: a read on the read pool (its acquire timeout), then a write probe that takes
    /// the write lock and gives it back, writing nothing.
    pub async fn health(&self) -> Health {
        if self.vanished() {
            return Health::Vanished;
        }
        if let Err(e) = self.ping().await {
            return Health::Unreachable(e.to_string());
        }
        match self.backend {
            Backend::Sqlite => {
                if self.file.as_ref().is_some_and(|w| !w.writable_now()) {
                    return Health::ReadOnly;
                }
                match self.sqlite_write_probe().await {
                    Ok(()) => Health::Ok,
                    Err(e) if is_busy(&e) => Health::Locked,
                    Err(sqlx::Error::Database(d)) if d.code().as_deref() == Some("8") => {
                        Health::ReadOnly
                    }
                    Err(e) => Health::Unreachable(e.to_string()),
                }
            }
            Backend::Postgres => match self.postgres_probe().await {
                Ok((true, _)) => Health::ReadOnly,
                Ok((false, setting)) if setting == "on" => Health::ReadOnly,
                Ok(_) => Health::Ok,
                Err(e) => Health::Unreachable(e.to_string()),
            },
        }
    }

    /// A standby, or a database whose sessions are read-only by default, asked on a pooled
    /// connection: a fresh one cost each status view and dashboard a new PostgreSQL session's
    /// start. The read pool's sessions are read-only by our own `SET`, so the default is read as
    /// `RESET` would restore it (the server's, the database's and the role's settings).
    async fn postgres_probe(&self) -> Result<(bool, String), sqlx::Error> {
        let probe = sqlx::query_as(
            "SELECT pg_is_in_recovery(), \
             (SELECT reset_val FROM pg_settings WHERE name = 'default_transaction_read_only')",
        )
        .fetch_one(&self.reader);
        tokio::time::timeout(LOCK_PROBE * 4, probe)
            .await
            .unwrap_or(Err(sqlx::Error::PoolTimedOut))
    }

    /// `BEGIN IMMEDIATE; ROLLBACK` on a connection of its own, waiting at most `LOCK_PROBE` for
    /// the lock. Nothing is written; a read pool connection stays open meanwhile, so closing
    /// the probe is never the last close of the file (which would checkpoint the WAL into it).
    async fn sqlite_write_probe(&self) -> Result<(), sqlx::Error> {
        use sqlx::Connection;
        let _held = self.reader.acquire().await?;
        let probe = async {
            let mut conn = sqlx::AnyConnection::connect_with(&self.probe).await?;
            let taken = conn
                .execute(&*format!(
                    "PRAGMA busy_timeout = {}; BEGIN IMMEDIATE; ROLLBACK;",
                    LOCK_PROBE.as_millis()
                ))
                .await;
            conn.close().await?;
            taken.map(|_| ())
        };
        tokio::time::timeout(LOCK_PROBE * 4, probe)
            .await
            .unwrap_or(Err(sqlx::Error::PoolTimedOut))
    }

    /// Checks the SQLite file every second while this database is open. The task holds the
    /// watch weakly: when the last `Db` and its pool go, it ends.
    fn watch_file(&self) {
        let (Some(watch), Ok(runtime)) =
            (self.file.as_ref(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let weak = Arc::downgrade(watch);
        runtime.spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tick.tick().await;
                match weak.upgrade() {
                    Some(watch) => watch.check(),
                    None => return,
                }
            }
        });
    }

    /// A write transaction. On SQLite it takes the write lock at once (`BEGIN IMMEDIATE`), so
    /// that it waits its turn through the busy timeout: a deferred transaction that reads first
    /// holds a snapshot, and SQLite fails its first write at once (no busy handler) when
    /// another process holds the lock or wrote meanwhile.
    pub async fn write(&self) -> Result<sqlx::Transaction<'static, sqlx::Any>, sqlx::Error> {
        match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await,
            Backend::Postgres => self.pool.begin().await,
        }
    }

    /// One SQLite connection of its own, for a chore that reads and writes one table over and
    /// over (the flood store's sync): its pages then sit in one page cache of at most
    /// `cache_kib`, not in each of the pools' eight. The same `Db` on PostgreSQL, whose
    /// caches are the server's, and on `:memory:`, where a new connection is a new database.
    pub fn own_connection(&self, cache_kib: u64) -> Db {
        // Only a SQLite file is watched: `:memory:` has none.
        if self.backend != Backend::Sqlite || self.file.is_none() {
            return self.clone();
        }
        let pool = writer_pool(
            true,
            self.file.clone(),
            1,
            &format!(" PRAGMA cache_size = -{};", cache_kib.max(64)),
        )
        .connect_lazy_with((*self.probe).clone());
        Db {
            reader: pool.clone(),
            pool,
            probe: self.probe.clone(),
            backend: self.backend,
            file: self.file.clone(),
            files_dir: self.files_dir.clone(),
        }
    }

    /// Uploaded files' bytes go to `dir` rather than the database (`ORCHESTRA_FILES_DIR`).
    pub fn with_files_dir(mut self, dir: Option<std::path::PathBuf>) -> Self {
        self.files_dir = dir.map(Arc::new);
        self
    }

    /// Where uploaded files' bytes go, when not the database.
    pub(crate) fn files_dir(&self) -> Option<&std::path::Path> {
        self.files_dir.as_deref().map(std::path::PathBuf::as_path)
    }

    /// Moves what the WAL holds into the database file (cron does this); with
    /// `journal_size_limit`, the WAL then shrinks back to its limit at the next write.
    pub async fn checkpoint(&self) -> Result<(), sqlx::Error> {
        if self.backend == Backend::Sqlite {
            sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
                .execute(&self.pool)
                .await?;
        }
        Ok(())
    }

    /// After an erasure: the WAL's pages go to the file and the WAL is cut to nothing, so the
    /// frames that held the erased rows' old pages are gone from disk too (a passive checkpoint
    /// leaves them in the file until later frames overwrite them). Waits, as long as the busy
    /// timeout, for readers of an older snapshot; if they outlast it, the next erasure's cut does it.
    pub async fn truncate_wal(&self) -> Result<(), sqlx::Error> {
        if self.backend == Backend::Sqlite {
            sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
                .execute(&self.pool)
                .await?;
        }
        Ok(())
    }

    /// SQLite: rewrites the file with only what is live, then cuts the WAL. B-tree rebalancing
    /// leaves copies of moved rows in the unused space of live pages, which `secure_delete`
    /// never reaches; only a rewrite takes them away. Holds the write lock for as long as it
    /// takes (about a second per 100 MB), so erasures call it at most daily. Nothing on
    /// PostgreSQL, whose dumps and readers see only live rows.
    pub async fn vacuum(&self) -> Result<(), sqlx::Error> {
        if self.backend == Backend::Sqlite {
            sqlx::query("VACUUM").execute(&self.pool).await?;
            self.truncate_wal().await?;
        }
        Ok(())
    }

    /// Refreshes the query planner's statistics (cron and the stop run it), so that, say, the
    /// flood sync's statement keeps its index once the table has grown. SQLite: `PRAGMA
    /// optimize`, bounded by `analysis_limit` so it reads a sample of each table, not all of it,
    /// and usually has nothing to do. PostgreSQL: `ANALYZE` of the tables cron empties, which
    /// reads a fixed sample (300 × the statistics target) whatever their size and blocks no
    /// reader or writer; autovacuum does it too, but only once enough rows changed, and a plan
    /// made before that (from a freshly filled table) scanned every live flood row.
    pub async fn optimize(&self) -> Result<(), sqlx::Error> {
        let sql = match self.backend {
            // One call, so both run on one connection (`analysis_limit` is per connection).
            // 0x10002: every table whose size changed enough, not only those this connection
            // has read (plain `PRAGMA optimize` looks only at those, and cron's connection had
            // read none: statistics taken while `flood` held 2 rows stayed, and the sync's
            // statement scanned a million live rows, 0.34 s each; benches/scale.rs).
            Backend::Sqlite => "PRAGMA analysis_limit = 400; PRAGMA optimize = 0x10002;",
            Backend::Postgres => {
                "ANALYZE flood, sessions, handles, api_signatures, api_idempotency"
            }
        };
        self.pool.execute(sql).await.map(|_| ())
    }

    /// Whether the database file this process opened is gone or was replaced. Such a process
    /// must write nothing more: it would write into a deleted file.
    pub fn vanished(&self) -> bool {
        self.file.as_ref().is_some_and(|w| {
            w.check();
            w.vanished()
        })
    }

    /// Whether the database answers a trivial query.
    pub async fn ping(&self) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT 1")
            .execute(&self.reader)
            .await
            .map(|_| ())
    }

    /// Closes every connection (the file watcher stops with them).
    pub async fn close(&self) {
        self.pool.close().await;
        self.reader.close().await;
    }
}

/// Unix seconds now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Numbered placeholders for `rows` rows of `columns` values each, from `$first` on:
/// `($1, $2), ($3, $4)`, or `$3, $4, $5` for one column. Statements of many rows are the one
/// place SQL text is generated; every value is still bound. Not `sqlx::QueryBuilder`: over the
/// `Any` driver it writes `?` placeholders (`AnyArguments::format_placeholder`), which
/// PostgreSQL refuses and the driver does not rewrite.
pub(crate) fn placeholders(first: usize, rows: usize, columns: usize) -> String {
    use std::fmt::Write;
    let mut sql = String::with_capacity(rows * columns * 6);
    for row in 0..rows {
        if row > 0 {
            sql.push_str(", ");
        }
        if columns > 1 {
            sql.push('(');
        }
        for column in 0..columns {
            if column > 0 {
                sql.push_str(", ");
            }
            let _ = write!(sql, "${}", first + row * columns + column);
        }
        if columns > 1 {
            sql.push(')');
        }
    }
    sql
}

/// Rows an instance has many of (history lines, links), read a page at a time by id along
/// their `(instance_id, id)` index.
pub trait OfInstance: for<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> + Send + Unpin {
    /// The table, a constant.
    const TABLE: &'static str;
    /// The columns read, a constant.
    const COLUMNS: &'static str;
    fn id(&self) -> i64;
}

/// Declares a row type [`OfInstance`]: its table, its columns and its `id` field.
macro_rules! of_instance {
    ($row:ty, $table:literal, $columns:literal) => {
        impl $crate::store::OfInstance for $row {
            const TABLE: &'static str = $table;
            const COLUMNS: &'static str = $columns;
            fn id(&self) -> i64 {
                self.id
            }
        }
    };
}
pub(crate) use of_instance;

/// A page of an instance's rows, newest first: the id to read older ones from (`None` on the
/// last page), and how many there are in all.
#[derive(Debug)]
pub struct InstancePage<T> {
    pub rows: Vec<T>,
    pub older: Option<i64>,
    pub total: i64,
}

/// Up to `limit` rows of an instance older than `before` (from the newest when `None`): one
/// range of its index, and a range count unless the first page is the whole of them.
pub async fn page_of_instance<T: OfInstance>(
    db: &Db,
    instance: i64,
    before: Option<i64>,
    limit: i64,
) -> Result<InstancePage<T>, sqlx::Error> {
    let mut rows: Vec<T> = sqlx::query_as(&format!(
        "SELECT {} FROM {} WHERE instance_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3",
        T::COLUMNS,
        T::TABLE
    ))
    .bind(instance)
    .bind(before.unwrap_or(i64::MAX))
    .bind(limit + 1)
    .fetch_all(db.reader())
    .await?;
    let mut older = None;
    if rows.len() > usize::try_from(limit).unwrap_or(0) {
        rows.truncate(usize::try_from(limit).unwrap_or(0));
        older = rows.last().map(T::id);
    }
    let total = if before.is_none() && older.is_none() {
        i64::try_from(rows.len()).unwrap_or(i64::MAX)
    } else {
        sqlx::query_scalar(&format!(
            "SELECT COUNT(*) FROM {} WHERE instance_id = $1",
            T::TABLE
        ))
        .bind(instance)
        .fetch_one(db.reader())
        .await?
    };
    Ok(InstancePage { rows, older, total })
}

#[cfg(test)]
mod tests {
    #[test]
    fn placeholders_are_numbered_across_rows() {
        assert_eq!(super::placeholders(1, 2, 2), "($1, $2), ($3, $4)");
        assert_eq!(super::placeholders(3, 3, 1), "$3, $4, $5");
        assert_eq!(super::placeholders(1, 0, 6), "");
    }
}
