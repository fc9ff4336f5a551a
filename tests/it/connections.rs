//! Connections and bodies bounded, on the real `orchestra serve` process (issue 18): idle and
//! slow connections closed by their deadlines while honest clients are answered, a low
//! descriptor limit that idle connections cannot fill, a cap per client address, bodies over
//! their route's cap refused before they are sent, and held bodies that leave memory bounded.
//!
//! Every client is on loopback (`helpers::raw`). The flooding clients come from 127.0.1.x and
//! above (Linux answers all of 127.0.0.0/8), so that the cap per address is met only where a test means it
//! to be; the honest clients come from 127.0.0.1. The tests run one at a time (`SERIAL`): each
//! holds thousands of sockets and measures time or memory.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::task::JoinSet;

use crate::helpers::raw::{
    Answer, NONCE, connect_from, get, honest, honest_visitors, read_one, read_to_close,
    send_reading_the_head, source,
};
use crate::helpers::serve;

const BIN: &str = env!("CARGO_BIN_EXE_orchestra");
const MIB: u64 = 1024;

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The test's own descriptors: up to a few thousand client sockets.
fn raise_own_descriptor_limit(needed: u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only touch the struct they are given.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        limit.rlim_cur = limit.rlim_max;
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
    }
    assert!(
        limit.rlim_cur >= needed,
        "this test needs {needed} descriptors; the hard limit is {}",
        limit.rlim_cur
    );
}

/// What every test begins with: its turn, the descriptors it needs, and a database of its own.
pub(crate) async fn setup(
    descriptors: u64,
) -> (
    tokio::sync::MutexGuard<'static, ()>,
    tempfile::TempDir,
    String,
) {
    let turn = SERIAL.lock().await;
    raise_own_descriptor_limit(descriptors);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let url = format!("sqlite:{}", dir.path().join("orchestra.db").display());
    (turn, dir, url)
}

/// The descriptors a process has open.
fn descriptors_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// Waits until the server has closed what it opened since it had `baseline` descriptors
/// (20 s at most), then a second more.
async fn all_closed(pid: u32, baseline: usize) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while descriptors_of(pid) > baseline + 4 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
}

fn status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

/// How a flooding connection behaves until the server closes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Connects and sends nothing.
    Silent,
    /// Asked for one page, read it, and keeps the connection.
    KeptAlive,
    /// Sends a head one byte a second.
    SlowHead,
    /// Sends a whole head, then its body one byte a second.
    SlowBody,
}

/// Opens a flooding connection of `kind`, then waits for the server to close it (`limit` at
/// most). Returns its kind, the time from the moment its deadline started to the close, and
/// what the server sent.
async fn flood(
    server: SocketAddr,
    from: Ipv4Addr,
    kind: Kind,
    i: usize,
) -> (Kind, Duration, Vec<u8>) {
    let mut stream = connect_from(server, from).await;
    let mut since = Instant::now();
    let head = match kind {
        Kind::Silent => String::new(),
        Kind::KeptAlive => {
            stream
                .write_all(get("/static/style.css").as_bytes())
                .await
                .expect("ask for a page");
            let answer = read_one(&mut stream).await.expect("the page");
            assert_eq!(answer.status, 200);
            since = Instant::now();
            String::new()
        }
        Kind::SlowHead => "GET /admin/login HTTP/1.1\r\nHost: orchestra.test\r\nX-Slow: ".into(),
        Kind::SlowBody if i % 2 == 0 => format!(
            "POST /interaction/l.1..1900000000.slow-{i} HTTP/1.1\r\nHost: orchestra.test\r\n\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nanswer="
        ),
        Kind::SlowBody => format!(
            "POST /admin/login HTTP/1.1\r\nHost: orchestra.test\r\nCookie: {NONCE}\r\n\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nname="
        ),
    };
    if !head.is_empty() {
        stream
            .write_all(head.as_bytes())
            .await
            .expect("send a head");
    }
    let trickle = matches!(kind, Kind::SlowHead | Kind::SlowBody);
    let mut got = Vec::new();
    let mut buf = vec![0; 4096];
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let limit = since + Duration::from_secs(30);
    loop {
        tokio::select! {
            read = stream.read(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            },
            _ = tick.tick(), if trickle => {
                let _ = stream.write_all(b"a").await;
            }
            () = tokio::time::sleep_until(limit.into()) => break,
        }
    }
    (kind, since.elapsed(), got)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_slow_connections_leave_honest_clients_answered_and_are_closed_by_their_deadlines()
{
    let (_turn, _dir, url) = setup(3000).await;
    let header = Duration::from_secs(8);
    let idle = Duration::from_secs(10);
    let body = Duration::from_secs(10);
    let server = serve::serve(
        BIN,
        &url,
        &[
            ("ORCHESTRA_HEADER_TIMEOUT_MS", "8000"),
            ("ORCHESTRA_IDLE_TIMEOUT_MS", "10000"),
            ("ORCHESTRA_BODY_TIMEOUT_MS", "10000"),
        ],
    );
    let addr = server.addr;
    let started = Instant::now();
    let mut floods = JoinSet::new();
    let plan = [
        (Kind::Silent, 1000),
        (Kind::KeptAlive, 1000),
        (Kind::SlowHead, 100),
        (Kind::SlowBody, 100),
    ];
    let mut i = 0;
    for (kind, count) in plan {
        for _ in 0..count {
            // 100 a client address, under the cap per address.
            floods.spawn(flood(addr, source(i / 100), kind, i));
            i += 1;
            // A hundred at a time, so the listen queue never overflows: a connection the
            // kernel dropped from it would be accepted seconds later, its deadline with it.
            if i % 100 == 0 {
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        }
    }
    // Honest visitors while all 2,200 are held: every kept-alive one has had its page by now.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let worst = honest_visitors(addr, 20).await;
    let held_for = started.elapsed();
    eprintln!("20 honest visitors among 2,200 idle and slow connections: slowest {worst:?}");
    assert!(
        worst < Duration::from_secs(1),
        "an honest visitor waited {worst:?}"
    );
    assert!(
        held_for < header,
        "the honest visitors came too late to meet the flood ({held_for:?})"
    );

    let mut closes: Vec<(Kind, Duration, Vec<u8>)> = Vec::new();
    while let Some(done) = floods.join_next().await {
        closes.push(done.expect("a flooding connection"));
    }
    for kind in [
        Kind::Silent,
        Kind::KeptAlive,
        Kind::SlowHead,
        Kind::SlowBody,
    ] {
        let due = match kind {
            Kind::Silent | Kind::SlowHead => header,
            Kind::KeptAlive => idle,
            Kind::SlowBody => body,
        };
        let times: Vec<Duration> = closes
            .iter()
            .filter(|(k, ..)| *k == kind)
            .map(|(_, t, _)| *t)
            .collect();
        let (first, last) = (
            times.iter().min().copied().unwrap_or_default(),
            times.iter().max().copied().unwrap_or_default(),
        );
        eprintln!(
            "{kind:?}: {} closed from {first:?} to {last:?} (due at {due:?})",
            times.len()
        );
        // Never before its deadline (the client starts its clock a little late: its task waits
        // its turn among 2,200); after it by no more than a busy machine's delay.
        assert!(
            first + Duration::from_millis(300) >= due,
            "{kind:?} closed at {first:?}"
        );
        assert!(
            last <= due + Duration::from_secs(3),
            "{kind:?} still open at {last:?}"
        );
    }
    // A body that did not arrive in time is answered 408, themed, before the connection closes.
    for (_, _, got) in closes.iter().filter(|(k, ..)| *k == Kind::SlowBody) {
        let answer = Answer::parse(got).expect("an answer to a slow body");
        assert_eq!(answer.status, 408, "{}", answer.head);
        answer.assert_ours("a 408");
        assert_eq!(answer.header("connection"), Some("close"));
    }
    // A head never finished gets no answer: there is no request to answer.
    assert!(
        closes
            .iter()
            .filter(|(k, ..)| matches!(k, Kind::Silent | Kind::SlowHead | Kind::KeptAlive))
            .all(|(_, _, got)| got.is_empty()),
        "a connection closed at its deadline was sent something"
    );
    assert_eq!(
        honest(addr).await.0,
        200,
        "the server is answering after the flood"
    );
}

/// Serves with `RLIMIT_NOFILE` set to `soft` and `hard` and `env`, stderr into a file.
pub(crate) fn serve_with_descriptors(
    dir: &std::path::Path,
    url: &str,
    soft: u64,
    hard: u64,
    env: &[(&str, &str)],
) -> (serve::Served, std::path::PathBuf) {
    use std::os::unix::process::CommandExt;
    let log = dir.join("serve.log");
    let file = std::fs::File::create(&log).expect("a log file");
    let served = serve::serve_with(BIN, url, env, |command| {
        command.stderr(file);
        // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            command.pre_exec(move || {
                let limit = libc::rlimit {
                    rlim_cur: soft,
                    rlim_max: hard,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    });
    (served, log)
}

/// Nothing closes an idle connection by its deadline within a test: only shedding does.
const HEADS_NEVER_DUE: &[(&str, &str)] = &[("ORCHESTRA_HEADER_TIMEOUT_MS", "600000")];

/// Opens `n` connections that send nothing, 100 a client address; one the server's listen
/// queue has no room for (the kernel drops its handshake until `accept` makes room) is given
/// up after a few seconds.
async fn silent_connections(server: SocketAddr, n: usize) -> Vec<TcpStream> {
    let mut held = Vec::with_capacity(n);
    for i in 0..n {
        let connect = connect_from(server, source(i / 100));
        if let Ok(stream) = tokio::time::timeout(Duration::from_secs(3), connect).await {
            held.push(stream);
        }
    }
    held
}

/// `n` silent connections, all made, then 8 honest visitors each answered within a second;
/// returns the connections and the slowest visitor.
async fn silent_flood_then_honest(server: SocketAddr, n: usize) -> (Vec<TcpStream>, Duration) {
    let held = silent_connections(server, n).await;
    assert_eq!(held.len(), n, "every connection was made");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let worst = honest_visitors(server, 8).await;
    assert!(
        worst < Duration::from_secs(1),
        "an honest visitor waited {worst:?}"
    );
    (held, worst)
}

/// How many of `held` the server has closed: a peek that finds the end, or a reset.
fn closed(held: &[TcpStream]) -> usize {
    use std::os::fd::AsRawFd;
    held.iter()
        .filter(|stream| {
            let mut byte = 0u8;
            // SAFETY: recv peeks at most one byte into `byte`, without waiting.
            let n = unsafe {
                libc::recv(
                    stream.as_raw_fd(),
                    (&raw mut byte).cast(),
                    1,
                    libc::MSG_PEEK | libc::MSG_DONTWAIT,
                )
            };
            n == 0
                || (n < 0
                    && std::io::Error::last_os_error().kind() != std::io::ErrorKind::WouldBlock)
        })
        .count()
}

/// The server's log once it holds `line`, 10 s at most.
pub(crate) async fn log_with(log: &std::path::Path, line: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let said = std::fs::read_to_string(log).unwrap_or_default();
        if said.contains(line) || Instant::now() > deadline {
            return said;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_ulimit_1024_a_thousand_idle_connections_do_not_lock_honest_clients_out() {
    let (_turn, dir, url) = setup(2000).await;
    let (server, log) = serve_with_descriptors(dir.path(), &url, 1024, 1024, HEADS_NEVER_DUE);
    // It says what it has: the cap fits 1,024 descriptors with 128 kept.
    let said = log_with(&log, "Connections:").await;
    assert!(
        said.contains("at most 896 at once") && said.contains("1024 file descriptors"),
        "{said}"
    );
    assert!(
        said.contains("fewer than ORCHESTRA_MAX_CONNECTIONS (4096)"),
        "{said}"
    );

    let (held, worst) = silent_flood_then_honest(server.addr, 1100).await;
    eprintln!(
        "8 honest visitors beside 1,100 idle connections under ulimit -n 1024: slowest {worst:?}"
    );
    // The longest-open idle ones made room, and hardly more than were needed (an honest
    // visitor's place is free again once it is answered).
    let shed = closed(&held);
    assert!(
        (1100 - 896..=1100 - 896 + 16).contains(&shed),
        "{shed} idle connections were closed"
    );
    assert_eq!(
        closed(&held[..1100 - 896]),
        1100 - 896,
        "the longest-open ones went first"
    );
    let said = std::fs::read_to_string(&log).expect("the log");
    assert!(
        !said.contains("accept failed") && !said.contains("no file descriptor left"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_descriptors_run_out_idle_connections_are_shed_and_accept_does_not_spin() {
    let (_turn, dir, url) = setup(2000).await;
    // Started as systemd starts a service (soft 1,024, hard 4,096 here), it raises its soft
    // limit to the hard one and fits its cap to that.
    let (server, log) = serve_with_descriptors(dir.path(), &url, 1024, 4096, HEADS_NEVER_DUE);
    let said = log_with(&log, "Connections:").await;
    assert!(
        said.contains("at most 3968 at once")
            && said.contains("4096 file descriptors (hard limit 4096)"),
        "{said}"
    );
    // Then the limit is lowered under the running server, so `accept` itself runs out (what
    // another program sharing the limit would cause) while the cap still has room.
    let lowered = libc::rlimit {
        rlim_cur: 600,
        rlim_max: 4096,
    };
    // SAFETY: prlimit only sets the limits of the process named; the old ones are not read.
    let set = unsafe {
        libc::prlimit(
            server.pid() as libc::pid_t,
            libc::RLIMIT_NOFILE,
            &lowered,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(set, 0, "prlimit: {}", std::io::Error::last_os_error());
    let started = Instant::now();
    let (held, worst) = silent_flood_then_honest(server.addr, 800).await;
    eprintln!(
        "8 honest visitors with the descriptors exhausted by 800 idle connections: slowest {worst:?}"
    );
    assert!(closed(&held) >= 200, "idle connections were not shed");
    let said = std::fs::read_to_string(&log).expect("the log");
    let warnings = said.matches("no file descriptor left").count();
    let seconds = started.elapsed().as_secs() + 1;
    assert!(
        (1..=seconds as usize).contains(&warnings),
        "{warnings} warnings in {seconds} s"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_cannot_hold_every_connection() {
    let (_turn, _dir, url) = setup(1024).await;
    let server = serve::serve(BIN, &url, &[("ORCHESTRA_MAX_CONNECTIONS_PER_ADDRESS", "8")]);
    let addr = server.addr;
    let greedy = source(0);
    // Eight requests being answered (their heads whole, their bodies arriving): none of them
    // is waiting for a head or idle, so none can be shed.
    let mut busy = Vec::new();
    for i in 0..8 {
        let mut stream = connect_from(addr, greedy).await;
        let post = format!(
            "POST /interaction/l.1..1900000000.busy-{i} HTTP/1.1\r\nHost: orchestra.test\r\n\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nanswer="
        );
        stream.write_all(post.as_bytes()).await.unwrap();
        busy.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut ninth = connect_from(addr, greedy).await;
    ninth
        .write_all(
            b"GET /admin/login HTTP/1.1\r\nHost: orchestra.test\r\nAccept-Language: fr\r\n\r\n",
        )
        .await
        .unwrap();
    let refused = Answer::parse(&read_to_close(&mut ninth, Duration::from_secs(3)).await)
        .expect("the ninth connection is answered");
    assert_eq!(refused.status, 503);
    refused.assert_ours("the refusal of a ninth connection");
    assert_eq!(refused.lang(), Some("fr"));
    assert!(refused.body.contains("Occupé"), "{}", refused.body);
    assert_eq!(refused.header("retry-after"), Some("1"));
    // The API's address gets the API's JSON.
    let mut api = connect_from(addr, greedy).await;
    api.write_all(get("/api/v1/workflows").as_bytes())
        .await
        .unwrap();
    let refused = Answer::parse(&read_to_close(&mut api, Duration::from_secs(3)).await).unwrap();
    assert_eq!(refused.status, 503);
    assert!(
        refused.body.starts_with("{\"error\":\"busy\""),
        "{}",
        refused.body
    );
    // Everyone else is answered.
    assert_eq!(honest(addr).await.0, 200);
    assert!(honest_visitors(addr, 3).await < Duration::from_secs(1));

    // Idle connections of an address at its cap make room for its next one, oldest first.
    let neighbour = source(1);
    let mut idle = Vec::new();
    for _ in 0..8 {
        let mut stream = connect_from(addr, neighbour).await;
        stream
            .write_all(get("/static/style.css").as_bytes())
            .await
            .unwrap();
        assert_eq!(read_one(&mut stream).await.unwrap().status, 200);
        idle.push(stream);
    }
    let mut next = connect_from(addr, neighbour).await;
    next.write_all(get("/admin/login").as_bytes())
        .await
        .unwrap();
    assert_eq!(read_one(&mut next).await.unwrap().status, 200);
    assert!(
        read_to_close(&mut idle[0], Duration::from_secs(2))
            .await
            .is_empty(),
        "the oldest idle connection is closed, unanswered"
    );
    assert_eq!(closed(&idle[1..]), 0, "only one made room");
    drop(busy);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_its_cap_is_refused_before_any_of_it_is_sent() {
    let (_turn, _dir, url) = setup(1024).await;
    let server = serve::serve(BIN, &url, &[]);
    let addr = server.addr;
    for (path, lang, extra) in [
        ("/admin/login", "en", ""),
        ("/admin/login", "fr", "Expect: 100-continue\r\n"),
        ("/setup/0123", "en", ""),
        ("/interaction/l.1..1900000000.x", "fr", ""),
        ("/admin/workflows/new", "en", ""),
        ("/api/v1/instances", "en", "Authorization: Bearer nope\r\n"),
    ] {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: orchestra.test\r\nAccept-Language: {lang}\r\n\
             Cookie: {NONCE}\r\nContent-Type: application/x-www-form-urlencoded\r\n{extra}\
             Content-Length: 10000000000\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        // Not a byte of the body is sent: the answer comes all the same, and the connection
        // is closed after it.
        let got = read_to_close(&mut stream, Duration::from_secs(3)).await;
        let answer = Answer::parse(&got).unwrap_or_else(|| panic!("{path}: no answer"));
        assert_eq!(answer.status, 413, "{path}: {}", answer.head);
        assert!(
            !answer.head.contains("100 continue"),
            "{path}: asked for the body"
        );
        answer.assert_ours(path);
        assert_eq!(answer.header("connection"), Some("close"), "{path}");
        if path.starts_with("/api/") {
            assert!(
                answer.body.starts_with("{\"error\":\"too_large\""),
                "{}",
                answer.body
            );
        } else {
            assert_eq!(answer.lang(), Some(lang), "{path}");
        }
    }
    // A client that sends its whole body before it reads (as many libraries do) still reads
    // the 413, not a reset: the server drains what it refused before it closes. A small send
    // buffer keeps the body from vanishing into loopback's buffers before the answer.
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_send_buffer_size(4096).unwrap();
    let mut stream = socket.connect(addr).await.unwrap();
    let mut post = format!(
        "POST /admin/login HTTP/1.1\r\nHost: orchestra.test\r\nCookie: {NONCE}\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n",
        200 << 10
    )
    .into_bytes();
    post.resize(post.len() + (200 << 10), b'a');
    stream
        .write_all(&post)
        .await
        .expect("the whole body is taken");
    let answer = Answer::parse(&read_to_close(&mut stream, Duration::from_secs(3)).await)
        .expect("the answer, after the body");
    assert_eq!(answer.status, 413);

    // A form post without the CSRF cookie cannot pass: refused before its body is read.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = "POST /admin/login HTTP/1.1\r\nHost: orchestra.test\r\n\
                Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 4000\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    let answer = read_one(&mut stream)
        .await
        .expect("an answer without the body");
    assert_eq!(answer.status, 403);
    answer.assert_ours("a post without the CSRF cookie");

    // A chunked body, which declares no length, is cut at the same cap: 20 KiB to the sign-in.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut request = format!(
        "POST /admin/login HTTP/1.1\r\nHost: orchestra.test\r\nCookie: {NONCE}\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    .into_bytes();
    for _ in 0..20 {
        request.extend_from_slice(b"400\r\n");
        request.extend_from_slice(&[b'a'; 1024]);
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(b"0\r\n\r\n");
    stream.write_all(&request).await.unwrap();
    let answer = Answer::parse(&read_to_close(&mut stream, Duration::from_secs(3)).await).unwrap();
    assert_eq!(answer.status, 413);
    answer.assert_ours("a chunked body over its cap");

    // A sign-in under its cap is read and answered as before: a wrong password, 401.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(get("/admin/login").as_bytes())
        .await
        .unwrap();
    let page = read_one(&mut stream).await.unwrap();
    let cookie = page
        .header("set-cookie")
        .and_then(|c| c.split(';').next())
        .unwrap()
        .to_owned();
    let token = page
        .body
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .to_owned();
    let form = format!("csrf={token}&name=ada&password={}", "p".repeat(7000));
    let post = format!(
        "POST /admin/login HTTP/1.1\r\nHost: orchestra.test\r\nCookie: {cookie}\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{form}",
        form.len()
    );
    stream.write_all(post.as_bytes()).await.unwrap();
    assert_eq!(read_one(&mut stream).await.unwrap().status, 401);
}

/// What `held_posts` saw.
struct Held {
    statuses: Vec<u16>,
    /// The server's largest resident memory while the posts were sent, KiB.
    peak: u64,
    /// The posts' connections, held open until this is dropped.
    _open: Vec<TcpStream>,
    /// Honest visitors answered meanwhile, and the slowest of them.
    honest: usize,
    slowest: Duration,
}

/// Sends `count` posts of a `length`-byte body to `path`, all but the last byte, 100 a client
/// address, and holds each open; returns the statuses answered (0 for none) while the server's
/// resident memory is sampled and honest visitors come one after another.
async fn held_posts(server: &serve::Served, path: &str, count: usize, length: usize) -> Held {
    let addr = server.addr;
    let pid = server.pid();
    let done = Arc::new(AtomicUsize::new(0));
    let mut posts = JoinSet::new();
    for i in 0..count {
        let done = done.clone();
        let head = format!(
            "POST {path}-{i} HTTP/1.1\r\nHost: orchestra.test\r\nCookie: {NONCE}\r\n\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {length}\r\n\r\n"
        );
        posts.spawn(async move {
            let mut stream = connect_from(addr, source(i / 100)).await;
            let mut body = head.into_bytes();
            body.resize(body.len() + length - 1, b'a');
            // The head of the answer, whenever it comes (the body is never finished).
            let got = send_reading_the_head(&mut stream, &body, Duration::from_secs(30)).await;
            done.fetch_add(1, Ordering::Relaxed);
            (Answer::parse(&got).map_or(0, |a| a.status), stream)
        });
    }
    let visitors = {
        let done = done.clone();
        tokio::spawn(async move {
            let (mut answered, mut slowest) = (0, Duration::ZERO);
            while done.load(Ordering::Relaxed) < count {
                let (status, took) = honest(addr).await;
                assert_eq!(status, 200, "an honest visitor was not answered ({took:?})");
                answered += 1;
                slowest = slowest.max(took);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            (answered, slowest)
        })
    };
    let mut peak = 0;
    while done.load(Ordering::Relaxed) < count {
        peak = peak.max(status_kib(pid, "VmRSS"));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    peak = peak.max(status_kib(pid, "VmRSS"));
    let mut statuses = Vec::new();
    let mut streams = Vec::new();
    while let Some(post) = posts.join_next().await {
        let (status, stream) = post.expect("a post");
        statuses.push(status);
        streams.push(stream);
    }
    let (honest, slowest) = visitors.await.expect("the honest visitors");
    Held {
        statuses,
        peak,
        _open: streams,
        honest,
        slowest,
    }
}

/// Some requests of every kind, so that the runtime, the allocator's arenas and the caches
/// have their working size before memory is measured.
async fn warm_up(server: &serve::Served, path: &str) {
    let held = held_posts(server, path, 200, 64 << 10).await;
    assert!(held.statuses.iter().all(|s| *s != 0));
    drop(held);
    honest_visitors(server.addr, 20).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_thousand_held_sign_in_posts_of_256_kib_leave_memory_within_100_mib() {
    let (_turn, _dir, url) = setup(4000).await;
    let server = serve::serve(BIN, &url, &[]);
    // `?n=` tells the posts apart; the route is `/admin/login`'s.
    warm_up(&server, "/admin/login?n=").await;
    let before = server.rss_kib();
    let baseline = descriptors_of(server.pid());
    let held = held_posts(&server, "/admin/login?n=", 3000, 256 << 10).await;
    let (peak, honest, slowest) = (held.peak, held.honest, held.slowest);
    assert!(
        held.statuses.iter().all(|s| *s == 413),
        "{:?}",
        &held.statuses[..10]
    );
    drop(held);
    all_closed(server.pid(), baseline).await;
    let after = server.rss_kib();
    eprintln!(
        "3,000 held sign-in posts of 256 KiB: VmRSS {before} KiB before, {peak} KiB at most \
         while they were sent, {after} KiB once they had closed; {honest} honest visitors \
         meanwhile, the slowest answered in {slowest:?}"
    );
    assert!(peak <= before + 100 * MIB, "grew {} KiB", peak - before);
    // "Near the start": within 16 MiB of it once the connections are closed.
    assert!(
        after <= before + 16 * MIB,
        "kept {} KiB",
        after.saturating_sub(before)
    );
    assert!(
        slowest < Duration::from_secs(1),
        "an honest visitor waited {slowest:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn held_doorway_answers_hold_no_more_than_the_bodies_budget() {
    let (_turn, _dir, url) = setup(2000).await;
    let budget = 8 << 20;
    let server = serve::serve(
        BIN,
        &url,
        &[
            ("ORCHESTRA_MAX_BODY_BYTES_IN_FLIGHT", &budget.to_string()),
            ("ORCHESTRA_BODY_TIMEOUT_MS", "4000"),
        ],
    );
    let path = "/interaction/l.1..1900000000.held";
    warm_up(&server, path).await;
    let before = server.rss_kib();
    let length = 200 << 10;
    let held = held_posts(&server, path, 1000, length).await;
    let admitted = held.statuses.iter().filter(|s| **s == 408).count();
    let refused = held.statuses.iter().filter(|s| **s == 503).count();
    eprintln!(
        "1,000 held doorway posts of 200 KiB with an 8 MiB budget: {admitted} read until their \
         deadline (408), {refused} refused at once (503); VmRSS {before} KiB before, {} KiB \
         at most; {} honest visitors meanwhile, the slowest answered in {:?}",
        held.peak, held.honest, held.slowest
    );
    assert_eq!(admitted + refused, 1000, "{:?}", held.statuses);
    assert!(
        admitted <= budget / length,
        "{admitted} bodies held at once"
    );
    // The budget, and the connections' own memory (about 20 KiB each).
    assert!(
        held.peak <= before + 8 * MIB + 40 * MIB,
        "grew {} KiB",
        held.peak - before
    );
    assert!(
        held.slowest < Duration::from_secs(1),
        "an honest visitor waited {:?}",
        held.slowest
    );
    drop(held);
    assert_eq!(honest(server.addr).await.0, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_lets_the_request_in_progress_finish_and_keeps_the_counts() {
    let (_turn, _dir, url) = setup(1024).await;
    serve::configure(
        BIN,
        &url,
        &[
            ("orchestra.request_limits.enabled", "true"),
            ("interaction.limits.per_link", "3"),
        ],
    );
    // No periodic sync within the test: only the one at the stop writes the counts.
    let env = [
        ("ORCHESTRA_FLOOD", "sql"),
        ("ORCHESTRA_FLOOD_SYNC_MS", "60000"),
    ];
    let mut server = serve::serve(BIN, &url, &env);
    let link = "/interaction/l.1..1900000000.counted";
    let mut statuses = Vec::new();
    for _ in 0..4 {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        stream.write_all(get(link).as_bytes()).await.unwrap();
        statuses.push(read_one(&mut stream).await.unwrap().status);
    }
    assert_eq!(statuses[3], 429, "{statuses:?}");
    let refused = Instant::now();

    // A post whose body is half sent when the stop comes.
    let mut post = TcpStream::connect(server.addr).await.unwrap();
    post.write_all(
        b"POST /interaction/l.1..1900000000.posted HTTP/1.1\r\nHost: orchestra.test\r\n\
          Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 10\r\n\r\nanswe",
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Stopped within a second of the refusal, long before any periodic sync (issue 19).
    assert!(refused.elapsed() < Duration::from_secs(1));
    server.terminate();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        TcpStream::connect(server.addr).await.is_err(),
        "a stopping server accepts no new connection"
    );
    post.write_all(b"r=yes").await.unwrap();
    let answer = read_one(&mut post)
        .await
        .expect("the request in progress is answered");
    assert!((200..500).contains(&answer.status), "{}", answer.head);
    let status = server
        .exited_within(Duration::from_secs(15))
        .expect("the server stopped");
    assert!(status.success(), "{status}");

    let server = serve::serve(BIN, &url, &env);
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream.write_all(get(link).as_bytes()).await.unwrap();
    assert_eq!(
        read_one(&mut stream).await.unwrap().status,
        429,
        "the counts were written at the stop"
    );
}
