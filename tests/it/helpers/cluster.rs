//! Faults made for real, for the fault and soak tests: a throwaway PostgreSQL cluster that may
//! be stopped and started, and a connection holding a SQLite file's write lock.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A throwaway PostgreSQL cluster this test may stop and start: never the shared one.
pub struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
}

impl Cluster {
    fn pg(&self, args: &[&str]) -> std::process::ExitStatus {
        as_postgres(&self.bin.join("pg_ctl"), args, self.dir.path())
    }

    pub fn start() -> Self {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .expect("PostgreSQL is installed under /usr/lib/postgresql (as .ci/run installs it)")
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .filter(|p| p.join("initdb").exists())
            .max()
            .expect("an initdb");
        let dir = tempfile::tempdir().unwrap();
        if is_root() {
            assert!(
                Command::new("chown")
                    .args(["-R", "postgres"])
                    .arg(dir.path())
                    .status()
                    .unwrap()
                    .success()
            );
        }
        let data = dir.path().join("data");
        let status = as_postgres(
            &bin.join("initdb"),
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
            ],
            dir.path(),
        );
        assert!(status.success(), "initdb");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let cluster = Self { dir, bin, port };
        cluster.up();
        cluster
    }

    fn options(&self) -> String {
        format!(
            "-p {} -c fsync=off -c listen_addresses=127.0.0.1 -k {}",
            self.port,
            self.dir.path().display()
        )
    }

    pub fn up(&self) {
        let data = self.dir.path().join("data");
        let log = self.dir.path().join("log");
        let status = self.pg(&[
            "-D",
            data.to_str().unwrap(),
            "-l",
            log.to_str().unwrap(),
            "-w",
            "-o",
            &self.options(),
            "start",
        ]);
        assert!(status.success(), "pg_ctl start");
    }

    pub fn down(&self) {
        let data = self.dir.path().join("data");
        let status = self.pg(&["-D", data.to_str().unwrap(), "-m", "fast", "-w", "stop"]);
        assert!(status.success(), "pg_ctl stop");
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.dir.path().join("data");
        self.pg(&["-D", data.to_str().unwrap(), "-m", "immediate", "stop"]);
    }
}

pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.starts_with(b"0\n"))
        .unwrap_or(false)
}

/// PostgreSQL refuses to run as root: as root, run its tools as the `postgres` user.
fn as_postgres(program: &Path, args: &[&str], dir: &Path) -> std::process::ExitStatus {
    let mut command = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    };
    command
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap()
}

/// Where PostgreSQL's tools are, if installed (Debian's layout), to skip honestly without.
pub fn postgres_installed() -> bool {
    std::fs::read_dir("/usr/lib/postgresql").is_ok_and(|dirs| {
        dirs.filter_map(|e| e.ok())
            .any(|e| e.path().join("bin/initdb").exists())
    })
}

/// Holds the write lock of a SQLite file until dropped, on a connection of its own, as another
/// process would: SQLite's locks hold between connections of one process as between processes.
/// It was a `sqlite3` shell, which twice ended in CI before it said it held the lock, with
/// nothing to say why; here a failure says which error, and a busy file is tried again.
pub struct Locker {
    release: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Locker {
    pub fn hold(file: &Path) -> Self {
        let file = file.to_owned();
        let (locked, held) = std::sync::mpsc::channel::<Result<(), String>>();
        let (release, released) = std::sync::mpsc::channel::<()>();
        // A thread and a runtime of its own: callers hold it from async tests and plain
        // threads alike, and its connection must outlive neither.
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let connection = runtime.block_on(exclusive(&file));
            let connection = match connection {
                Ok(c) => {
                    let _ = locked.send(Ok(()));
                    c
                }
                Err(e) => {
                    let _ = locked.send(Err(e));
                    return;
                }
            };
            // Until dropped (or the test ends): then the transaction goes with the connection.
            let _ = released.recv();
            runtime.block_on(async move {
                use sqlx::Connection;
                let mut connection = connection;
                let _ = sqlx::Executor::execute(&mut connection, "ROLLBACK").await;
                let _ = connection.close().await;
            });
        });
        match held.recv() {
            Ok(Ok(())) => Self {
                release: Some(release),
                thread: Some(thread),
            },
            Ok(Err(e)) => panic!("could not take the SQLite file's write lock: {e}"),
            Err(_) => panic!("the thread holding the SQLite file's write lock ended early"),
        }
    }
}

/// A connection to `file` inside `BEGIN EXCLUSIVE`; a busy file (the app writing) is tried
/// again for up to 30 s.
async fn exclusive(file: &Path) -> Result<sqlx::SqliteConnection, String> {
    use sqlx::ConnectOptions;
    let options = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(file)
        .create_if_missing(false)
        .busy_timeout(std::time::Duration::from_secs(5));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let attempt = async {
            let mut connection = options.connect().await?;
            sqlx::Executor::execute(&mut connection, "BEGIN EXCLUSIVE").await?;
            Ok::<_, sqlx::Error>(connection)
        };
        match attempt.await {
            Ok(connection) => return Ok(connection),
            Err(e) if std::time::Instant::now() < deadline => {
                eprintln!("the SQLite file's write lock, tried again after: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

impl Drop for Locker {
    fn drop(&mut self) {
        drop(self.release.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A fault of the flood table made for real on either backend: on SQLite another connection
/// holds the file's write lock; on PostgreSQL the table is renamed away, so every statement
/// on it fails until `end` puts it back.
pub enum FloodFault {
    Locked(Locker),
    Renamed(sqlx::AnyPool),
}

impl FloodFault {
    pub async fn start(database: &super::TestDb) -> Self {
        if let Some(file) = database.url.strip_prefix("sqlite:") {
            let file = file.split('?').next().unwrap_or(file).to_owned();
            return FloodFault::Locked(Locker::hold(Path::new(&file)));
        }
        sqlx::any::install_default_drivers();
        let url = orchestra::store::normalize_url(&database.url).unwrap().1;
        let pool = sqlx::AnyPool::connect(&url).await.unwrap();
        sqlx::query("ALTER TABLE flood RENAME TO flood_away")
            .execute(&pool)
            .await
            .unwrap();
        FloodFault::Renamed(pool)
    }

    pub async fn end(self) {
        match self {
            FloodFault::Locked(lock) => drop(lock),
            FloodFault::Renamed(pool) => {
                sqlx::query("ALTER TABLE flood_away RENAME TO flood")
                    .execute(&pool)
                    .await
                    .unwrap();
                pool.close().await;
            }
        }
    }
}
