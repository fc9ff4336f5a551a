//! The only place with SQL. One `Db` over SQLite or PostgreSQL through sqlx's `Any` driver;
//! queries are written once in the SQL both understand (`$n` parameters, `ON CONFLICT`,
//! `RETURNING`), and every one runs in the test suites of both backends.

use std::str::FromStr;
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Executor};

pub mod admins;
pub mod flood;
pub mod instances;
pub mod keys;
pub mod links;
pub mod payments;
pub mod sessions;
pub mod settings;
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

#[derive(Clone, Debug)]
pub struct Db {
    pub(crate) pool: AnyPool,
    pub backend: Backend,
}

/// Turns an operator's database setting into a URL sqlx takes: a postgres URL as it is, a
/// `sqlite:` URL or a bare path as a SQLite file created when missing.
pub fn normalize_url(url: &str) -> (Backend, String) {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return (Backend::Postgres, url.to_owned());
    }
    let path = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
        .unwrap_or(url);
    let (path, query) = path.split_once('?').unwrap_or((path, ""));
    let query = if query.is_empty() {
        "mode=rwc".to_owned()
    } else if query.contains("mode=") {
        query.to_owned()
    } else {
        format!("{query}&mode=rwc")
    };
    (Backend::Sqlite, format!("sqlite://{path}?{query}"))
}

impl Db {
    /// Connects and applies the embedded migrations of the backend.
    pub async fn connect(url: &str) -> Result<Self, sqlx::Error> {
        sqlx::any::install_default_drivers();
        let (backend, url) = normalize_url(url);
        let options = AnyConnectOptions::from_str(&url)?;
        let sqlite = backend == Backend::Sqlite;
        let pool = AnyPoolOptions::new()
            .max_connections(if sqlite { 4 } else { 8 })
            .acquire_timeout(Duration::from_secs(10))
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    if sqlite {
                        // WAL lets readers and the one writer work at once; the busy timeout
                        // makes a second process wait for the write lock instead of failing.
                        conn.execute(
                            "PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 10000; \
                             PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;",
                        )
                        .await?;
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await?;
        let migrator = if sqlite {
            &SQLITE_MIGRATIONS
        } else {
            &POSTGRES_MIGRATIONS
        };
        migrator.run(&pool).await?;
        Ok(Self { pool, backend })
    }

    /// Whether the database answers a trivial query.
    pub async fn ping(&self) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT 1")
            .execute(&self.pool)
            .await
            .map(|_| ())
    }
}

/// Unix seconds now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}
