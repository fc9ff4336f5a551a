//! The real `orchestra` binary as an operator runs it: `config set` on its database, then
//! `serve` on a free loopback port. Shared by the process-level tests and the load harness
//! (benches/load.rs takes this file by `#[path]`).
// Each of the two crates that build this file uses only part of it.
#![allow(dead_code)]

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Served {
    child: Child,
    pub addr: SocketAddr,
}

/// Runs one `orchestra` command on `database_url`; returns its standard output, trimmed.
pub fn cli(bin: &str, database_url: &str, args: &[&str]) -> String {
    let out = Command::new(bin)
        .args(args)
        .env("ORCHESTRA_DATABASE_URL", database_url)
        .output()
        .expect("run orchestra");
    assert!(
        out.status.success(),
        "orchestra {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// `orchestra init`, then `orchestra config set` for each pair.
pub fn configure(bin: &str, database_url: &str, settings: &[(&str, &str)]) {
    cli(bin, database_url, &["init"]);
    for (key, value) in settings {
        cli(bin, database_url, &["config", "set", key, value]);
    }
}

/// Starts `orchestra serve` with `env` on top of the database URL, and waits until it listens.
pub fn serve(bin: &str, database_url: &str, env: &[(&str, &str)]) -> Served {
    serve_with(bin, database_url, env, |_| {})
}

/// `serve`, with the command adjusted first (its standard error, its limits).
pub fn serve_with(
    bin: &str,
    database_url: &str,
    env: &[(&str, &str)],
    adjust: impl FnOnce(&mut Command),
) -> Served {
    // Only `init` (or a first start on the default file) creates a database.
    cli(bin, database_url, &["init"]);
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut command = Command::new(bin);
    command
        .args(["serve", "--bind", &addr.to_string()])
        .env("ORCHESTRA_DATABASE_URL", database_url)
        .env("ORCHESTRA_LOG", "warn")
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    adjust(&mut command);
    let mut child = command.spawn().expect("start orchestra serve");
    wait_until_listening(addr, &mut child, "orchestra serve", Duration::from_secs(60));
    Served { child, addr }
}

/// Waits until something listens on `addr`; panics if `child` exits first or `limit` passes.
pub fn wait_until_listening(addr: SocketAddr, child: &mut Child, what: &str, limit: Duration) {
    let deadline = Instant::now() + limit;
    while TcpStream::connect(addr).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} exited before listening: {status}");
        }
        assert!(
            Instant::now() < deadline,
            "{what} did not listen on {addr} in {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Served {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Resident memory in KiB, from /proc/PID/status.
    pub fn rss_kib(&self) -> u64 {
        self.status_kib("VmRSS")
    }

    /// A KiB line of /proc/PID/status: `VmRSS`, `RssAnon`, `RssFile`, `RssShmem`.
    pub fn status_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("read /proc/PID/status");
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .expect("a VmRSS line")
    }
}

impl Served {
    /// Sends SIGTERM, as systemd stops a service.
    pub fn terminate(&self) {
        // SAFETY: kill only sends a signal to the child this value owns.
        unsafe {
            libc::kill(self.pid() as libc::pid_t, libc::SIGTERM);
        }
    }

    /// The exit status once the process has ended, waiting `limit` at most.
    pub fn exited_within(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
