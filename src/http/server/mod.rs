//! The HTTP/1 server: accepts connections, admits each under the caps on connections (in all,
//! and per client address), serves it with its deadlines, sheds the connections getting nowhere
//! when a cap or the descriptors run out (those waiting longest for a head first, then idle
//! ones: `conns`), closes heads waited for too long while the table is nearly full, gives memory
//! back as connections close, and stops gracefully.
//!
//! The deadlines are ours (`io::Deadline`) rather than hyper's `header_read_timeout`: hyper
//! starts that timer the moment a connection is idle (`State::idle` asks for a read, and
//! `poll_read_head` arms it), so it bounds the idle wait and the head together, and would close
//! every kept-alive connection at the header timeout. The body deadline is the body's own
//! (`http::body`).
//!
//! Per request this does what `axum::serve` did (the body boxed, the connection info inserted,
//! the app cloned) and marks the connection busy, then idle: two atomic stores; a request with
//! a body also carries the group its connection is counted in (`conns::Counted`), for its share
//! of the bodies' budget. Everything else is per connection. The doorway's refusal (`front`) is untouched.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::HeaderValue;
use axum::http::header::{CACHE_CONTROL, CONNECTION, REFERRER_POLICY, RETRY_AFTER};
use axum::response::Response;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};

use super::App;
use super::error::AppError;
use crate::config::Connections;
use crate::proxy::TrustedProxies;

pub mod conns;
mod io;

use conns::{Busy, Conn, Group, Phase, Registered, Registry};
use io::{Deadline, Watched};

/// Descriptors kept for everything but clients' connections: the database pool, the listeners,
/// the log, the runtime's own, and the connections being answered a refusal.
pub const RESERVED_DESCRIPTORS: u64 = 128;
/// Connections over a cap answered a refusal at once (within the reserve); past this many, one
/// is closed unanswered.
const REFUSING: usize = 32;
/// How long a connection being refused may take to send its head.
const REFUSAL_WAIT: Duration = Duration::from_secs(2);
/// How long requests in progress may go on after the stop signal.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// After a connection's last answer, how long, and how much, unread input is drained before the
/// socket closes, so that a client still sending (a body refused unread) reads the answer
/// rather than a reset: nginx's lingering close.
const LINGER: Duration = Duration::from_secs(1);
const LINGER_BYTES: usize = 256 << 10;
/// Idle connections shed at once when `accept` finds no descriptor left.
const SHED_ON_EXHAUSTION: usize = 16;
/// Shed connections not yet closed, past which `accept` waits for them: until its task closes
/// it, a shed connection still holds its descriptor (all within `RESERVED_DESCRIPTORS`).
const MAX_LEAVING: usize = 32;

/// How often, under pressure, the heads waited for too long are looked for.
const SWEEP: Duration = Duration::from_millis(250);

/// Connections the kernel may hold for `accept` (std's and mio's default is 128): a burst, or a
/// moment with no descriptor, waits there rather than having its handshake dropped.
const BACKLOG: u32 = 1024;

/// A listener on `addr` with room for `BACKLOG` connections waiting to be accepted.
pub fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

/// What `serve` needs besides the app.
pub struct Options {
    pub limits: Connections,
    /// The site is on https: a refusal carries `Strict-Transport-Security` too.
    pub https: bool,
    /// Their own connections are not capped per address: every client behind them shares it.
    pub proxies: Arc<TrustedProxies>,
}

/// The descriptors this process has, and the connections that fit in them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacity {
    pub descriptors: u64,
    pub hard_limit: u64,
    pub connections: usize,
}

impl Capacity {
    /// Raises the soft descriptor limit to the hard one (once a process), and fits the cap on
    /// connections below it with `RESERVED_DESCRIPTORS` kept.
    pub fn for_this_process(limits: &Connections) -> Self {
        let (descriptors, hard_limit) = *DESCRIPTORS.get_or_init(raise_descriptor_limit);
        Self::within(limits, descriptors, hard_limit)
    }

    fn within(limits: &Connections, descriptors: u64, hard_limit: u64) -> Self {
        let room = descriptors.saturating_sub(RESERVED_DESCRIPTORS).max(16);
        Self {
            descriptors,
            hard_limit,
            connections: limits
                .max_connections
                .min(usize::try_from(room).unwrap_or(usize::MAX)),
        }
    }
}

static DESCRIPTORS: OnceLock<(u64, u64)> = OnceLock::new();

/// The soft and hard `RLIMIT_NOFILE`, the soft one raised to the hard one where it can be.
fn raise_descriptor_limit() -> (u64, u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return (1024, 1024);
    }
    // An unlimited hard limit still stops at the kernel's `fs.nr_open`.
    let target = if limit.rlim_max == libc::RLIM_INFINITY {
        std::fs::read_to_string("/proc/sys/fs/nr_open")
            .ok()
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(1 << 20)
    } else {
        limit.rlim_max
    };
    if limit.rlim_cur < target {
        let raised = libc::rlimit {
            rlim_cur: target,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: setrlimit only reads the struct; a soft limit up to the hard one is allowed.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit.rlim_cur = target;
        }
    }
    (limit.rlim_cur, limit.rlim_max)
}

/// Gives the memory freed by closed connections back to the system: glibc keeps the freed pages
/// of its arenas otherwise (measured: 25 to 29 MiB kept after 3,000 connections closed, none
/// with this; `password::return_large_allocations_to_the_system` does the same for argon2's).
fn give_memory_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of the allocator's own heaps.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// A warning said at most once a second, however often its cause recurs.
#[derive(Default)]
struct OncePerSecond(Option<Instant>);

impl OncePerSecond {
    fn due(&mut self) -> bool {
        let now = Instant::now();
        if self
            .0
            .is_some_and(|last| now.duration_since(last) < Duration::from_secs(1))
        {
            return false;
        }
        self.0 = Some(now);
        true
    }
}

struct Shared {
    app: App,
    limits: Connections,
    https: bool,
    proxies: Arc<TrustedProxies>,
    http: http1::Builder,
    refusals: http1::Builder,
    registry: Registry,
    refusing: AtomicUsize,
}

/// Serves `app` on `listener` until `shutdown` resolves, then lets the requests in progress end
/// (for `SHUTDOWN_GRACE` at most) and returns.
pub async fn serve(
    listener: TcpListener,
    app: App,
    options: Options,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let limits = options.limits;
    let capacity = Capacity::for_this_process(&limits);
    tracing::info!(
        descriptors = capacity.descriptors,
        connections = capacity.connections,
        per_address = limits.max_per_address,
        "serving"
    );
    let builder = |keep_alive: bool| {
        let mut http = http1::Builder::new();
        http.keep_alive(keep_alive)
            // The head's bytes are held in this buffer: it is the cap on a head's size.
            .max_buf_size(limits.max_header_bytes.max(8 << 10))
            // Ours instead (see the module's documentation).
            .header_read_timeout(None);
        http
    };
    let shared = Arc::new(Shared {
        app,
        limits,
        https: options.https,
        proxies: options.proxies,
        http: builder(true),
        refusals: builder(false),
        registry: Registry::new(capacity.connections, limits.max_per_address),
        refusing: AtomicUsize::new(0),
    });
    let mut shutdown = std::pin::pin!(shutdown);
    let mut trim = tokio::time::interval(Duration::from_secs(1));
    trim.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut sweep = tokio::time::interval(SWEEP);
    sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let pressed_header = conns::pressed_header_timeout(limits.header_timeout);
    let mut exhausted = OncePerSecond::default();
    let mut refused = OncePerSecond::default();
    let mut pressure = OncePerSecond::default();
    loop {
        // A burst of newcomers at a full cap sheds as fast as it is accepted: the descriptors
        // of the shed are let go first, so the cap bounds descriptors too.
        for _ in 0..100 {
            if shared.registry.leaving() < MAX_LEAVING {
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => shared.admit(stream, peer, &mut refused),
                Err(e) => shared.accept_failed(e, &mut exhausted).await,
            },
            _ = trim.tick() => {
                if shared.registry.take_closed() {
                    tokio::task::spawn_blocking(give_memory_back);
                }
            }
            _ = sweep.tick() => {
                if shared.registry.pressed() {
                    let shed = shared.registry.shed_slow(pressed_header);
                    if shed > 0 && pressure.due() {
                        tracing::warn!(
                            shed,
                            open = shared.registry.open(),
                            "connections nearly at their cap: heads not whole within the shortened header deadline closed (see \"Connections and bodies\" in docs/operations.md)"
                        );
                    }
                }
            }
        }
    }
    // Stop accepting, then let every connection finish the request it is on.
    drop(listener);
    shared.registry.close_all();
    let until = tokio::time::Instant::now() + SHUTDOWN_GRACE;
    while shared.registry.open() > 0 && tokio::time::Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let left = shared.registry.open();
    if left > 0 {
        tracing::warn!(
            connections = left,
            "connections still at work after the grace period are dropped"
        );
    }
    Ok(())
}

impl Shared {
    fn admit(self: &Arc<Self>, stream: TcpStream, peer: SocketAddr, refused: &mut OncePerSecond) {
        let group = (!self.proxies.trusts(peer.ip())).then(|| Group::of(peer.ip()));
        match self.registry.admit(group) {
            Some(conn) => {
                tokio::spawn(connection(self.clone(), stream, peer, conn));
            }
            None => {
                if refused.due() {
                    tracing::warn!(
                        "a connection over the connection caps was refused; further ones are not logged this second"
                    );
                }
                self.refuse(stream);
            }
        }
    }

    /// `accept` failed. Out of descriptors, the longest-open idle connections are shed to make
    /// room; either way the loop waits a moment rather than spinning on the error.
    async fn accept_failed(&self, error: std::io::Error, exhausted: &mut OncePerSecond) {
        let pause = match error.raw_os_error() {
            Some(libc::EMFILE | libc::ENFILE) => {
                let shed = self.registry.shed(SHED_ON_EXHAUSTION);
                if exhausted.due() {
                    tracing::warn!(
                        shed,
                        open = self.registry.open(),
                        "no file descriptor left to accept a connection: idle connections shed (see \"Connections and bodies\" in docs/operations.md)"
                    );
                }
                if shed > 0 {
                    Duration::from_millis(5)
                } else {
                    Duration::from_millis(50)
                }
            }
            // The client went away before it was accepted.
            Some(libc::ECONNABORTED | libc::ECONNRESET | libc::EPROTO) => return,
            _ => {
                if exhausted.due() {
                    tracing::warn!(%error, "accept failed");
                }
                Duration::from_millis(50)
            }
        };
        tokio::time::sleep(pause).await;
    }

    /// Answers a connection over a cap with the themed 503 and closes it, while fewer than
    /// `REFUSING` are being answered; closes it unanswered past that.
    fn refuse(self: &Arc<Self>, stream: TcpStream) {
        if self.refusing.fetch_add(1, Ordering::Relaxed) >= REFUSING {
            self.refusing.fetch_sub(1, Ordering::Relaxed);
            return;
        }
        let shared = self.clone();
        tokio::spawn(async move {
            let wait = REFUSAL_WAIT.min(shared.limits.header_timeout);
            let conn = Arc::new(Conn::detached());
            let io = TokioIo::new(Watched::new(stream, conn.clone()));
            let https = shared.https;
            let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                std::future::ready(Ok::<_, Infallible>(crowded(&request, https)))
            });
            // Nothing marks it busy: the whole exchange is due within `wait` of the opening.
            tokio::select! {
                biased;
                ended = shared.refusals.serve_connection(io, service) => {
                    if let Err(e) = ended {
                        tracing::debug!(error = %e, "a refused connection ended");
                    }
                }
                _ = Deadline::new(conn, wait, wait) => {}
            }
            shared.refusing.fetch_sub(1, Ordering::Relaxed);
        });
    }
}

/// The refusal of a connection over a cap, in the visitor's language, with the site's headers.
fn crowded<B>(request: &hyper::Request<B>, https: bool) -> Response {
    let lang = super::lang::pick(request.uri(), request.headers()).0;
    let path = request.uri().path();
    let mut response = if path.starts_with(super::api::PREFIX) {
        super::api::body_refused(lang, super::body::Refused::Busy)
    } else {
        AppError::Crowded.page(lang)
    };
    let headers = response.headers_mut();
    super::headers::insert_static(headers, https);
    headers.insert(RETRY_AFTER, HeaderValue::from_static("1"));
    headers.insert(CONNECTION, HeaderValue::from_static("close"));
    if super::CREDENTIAL_PREFIXES
        .iter()
        .any(|p| path.starts_with(p))
    {
        headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

/// Serves one admitted connection until it ends: closed by the client, by a deadline, shed, or
/// at the stop.
async fn connection(shared: Arc<Shared>, stream: TcpStream, peer: SocketAddr, conn: Arc<Conn>) {
    let _registered = Registered {
        registry: &shared.registry,
        conn: conn.clone(),
    };
    let limits = &shared.limits;
    let io = TokioIo::new(Watched::new(stream, conn.clone()));
    let service = Tracked {
        app: shared.app.clone(),
        peer,
        conn: conn.clone(),
    };
    let mut http = shared.http.serve_connection(io, service);
    let mut deadline = std::pin::pin!(Deadline::new(
        conn.clone(),
        limits.header_timeout,
        limits.idle_timeout
    ));
    let mut closing = false;
    let ended = loop {
        tokio::select! {
            // hyper first: the deadline then sees the phase hyper's work left the connection in.
            biased;
            ended = std::future::poll_fn(|cx| http.poll_without_shutdown(cx)) => break Some(ended),
            phase = &mut deadline => {
                tracing::debug!(?phase, "connection closed at its deadline");
                break None;
            }
            // Shed, or the stop: a connection still waiting for its first head closes now, with
            // nothing written to finish; any other once its last answer is written (hyper may
            // read a later head while it writes), a busy one after its answer.
            () = conn.shed.notified(), if !closing => {
                if conn.answered() == 0 && matches!(conn.phase(), Phase::Fresh | Phase::Head) {
                    break None;
                }
                closing = true;
                Pin::new(&mut http).graceful_shutdown();
            }
        }
    };
    match ended {
        // A shed connection had nothing unread: its descriptor is wanted now.
        Some(Ok(())) if !conn.is_shed() => {
            linger(http.into_parts().io.into_inner().into_inner()).await
        }
        Some(Err(e)) => tracing::debug!(error = %e, "connection closed"),
        Some(Ok(())) | None => {}
    }
}

/// Closes our side, then reads and drops what the client still sends, for `LINGER` at most.
async fn linger(mut stream: TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    if stream.shutdown().await.is_err() {
        return;
    }
    let mut buf = vec![0; 4096];
    let mut left = LINGER_BYTES;
    let _ = tokio::time::timeout(LINGER, async {
        while left > 0 {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    })
    .await;
}

/// The app as hyper calls it on one connection: each request gets the peer's address, as
/// `into_make_service_with_connect_info` gave it (`http::client` reads it), and marks the
/// connection busy until its answer is made.
struct Tracked {
    app: App,
    peer: SocketAddr,
    conn: Arc<Conn>,
}

impl hyper::service::Service<hyper::Request<Incoming>> for Tracked {
    type Response = Response;
    type Error = Infallible;
    type Future = TrackedFuture;

    fn call(&self, request: hyper::Request<Incoming>) -> TrackedFuture {
        let busy = Busy::begin(&self.conn);
        let mut request = request.map(Body::new);
        request.extensions_mut().insert(ConnectInfo(self.peer));
        // What `http::body` counts an address's share of the budget by: only a body needs it.
        if !hyper::body::Body::is_end_stream(request.body()) {
            request.extensions_mut().insert(self.conn.counted());
        }
        // `Front` and the router behind it are always ready (`Router::poll_ready` is `Ready`),
        // so the app is called as `TowerToHyperService` would, without waiting on readiness.
        let mut app = self.app.clone();
        TrackedFuture {
            answer: tower::Service::call(&mut app, request),
            _busy: busy,
        }
    }
}

struct TrackedFuture {
    answer: <App as tower::Service<axum::extract::Request>>::Future,
    _busy: Busy,
}

impl Future for TrackedFuture {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.get_mut().answer).poll(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_on_connections_keeps_descriptors_in_reserve() {
        let limits = Connections::default();
        let low = Capacity::within(&limits, 1024, 1024);
        assert_eq!(low.connections, 1024 - RESERVED_DESCRIPTORS as usize);
        let high = Capacity::within(&limits, 1 << 20, 1 << 20);
        assert_eq!(high.connections, limits.max_connections);
        assert!(Capacity::within(&limits, 20, 20).connections >= 16);
    }

    #[test]
    fn the_soft_descriptor_limit_is_raised_to_the_hard_one() {
        let capacity = Capacity::for_this_process(&Connections::default());
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: as in `raise_descriptor_limit`.
        assert_eq!(
            unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) },
            0
        );
        assert_eq!(limit.rlim_cur, capacity.descriptors);
        if limit.rlim_max != libc::RLIM_INFINITY {
            assert_eq!(capacity.descriptors, capacity.hard_limit);
        }
    }

    #[test]
    fn a_warning_is_due_once_a_second() {
        let mut once = OncePerSecond::default();
        assert!(once.due());
        assert!(!once.due());
    }
}
