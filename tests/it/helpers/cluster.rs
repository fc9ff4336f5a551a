//! Faults made for real, for the fault and soak tests: a throwaway PostgreSQL cluster that may
//! be stopped and started, and another process holding a SQLite file's write lock.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

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

/// Holds the write lock of a SQLite file from another process until dropped.
pub struct Locker(Child);

impl Locker {
    pub fn hold(file: &Path) -> Self {
        let mut child = Command::new("sqlite3")
            .arg(file)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the sqlite3 command-line shell");
        let stdin = child.stdin.as_mut().unwrap();
        writeln!(
            stdin,
            "PRAGMA busy_timeout = 5000;\nBEGIN EXCLUSIVE;\nSELECT 'locked';"
        )
        .unwrap();
        stdin.flush().unwrap();
        let mut out = BufReader::new(child.stdout.as_mut().unwrap());
        let mut line = String::new();
        while line.trim() != "locked" {
            line.clear();
            assert!(out.read_line(&mut line).unwrap() > 0, "sqlite3 ended early");
        }
        Self(child)
    }
}

impl Drop for Locker {
    fn drop(&mut self) {
        // Closing its input ends the shell, and its transaction with it.
        drop(self.0.stdin.take());
        let _ = self.0.wait();
    }
}
