//! Request bodies: each route's cap, a body refused by its declared length before any byte of
//! it is read, the rest read within the cap and the body deadline, and every body counted
//! against one budget of bytes held at once (`ORCHESTRA_MAX_BODY_BYTES_IN_FLIGHT`), of which one
//! client address holds at most its share, so no caller, signed in or not, makes the server hold
//! more request bodies than that, nor keeps other addresses' bodies out.
//!
//! A body takes its place in the budget as its bytes arrive, never by the length it declares: a
//! connection that declares much and sends nothing holds nothing. A body that finds the budget
//! (or its address's share) spent is answered 503 at once.
//!
//! The layer (`Limit`) runs after routing, since the cap is the route's, and inside the error
//! pages, so its refusals are themed pages (JSON under the API); but before every area's own
//! layers: the CSRF check, the sessions and the sign-in check never see a body over its cap. A
//! request without a body (every GET) passes with no allocation and no lock.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{MatchedPath, Request};
use axum::response::{IntoResponse, Response};
use hyper::body::{Body as _, Frame, SizeHint};

use super::error::AppError;
use super::server::conns::{Counted, Group};
use crate::i18n::Lang;

/// A form that carries its CSRF token and little else: every form not named in `cap`.
pub const SMALL: usize = 4 << 10;
/// The sign-in and password forms: a name and a password or two (three, to change one's own).
pub const SIGN_IN: usize = 8 << 10;
/// The settings forms: a few dozen short fields.
pub const SETTINGS: usize = 16 << 10;
/// A new instance: a title of 200 characters and a body of 10,000 (`links::MAX_TITLE`,
/// `links::MAX_BODY`), each character up to 12 bytes percent-encoded.
pub const SUBJECT: usize = 128 << 10;
/// A workflow definition of 20,000 characters (`workflow::MAX_DEFINITION_CHARS`), encoded so.
pub const DEFINITION: usize = 256 << 10;
/// A cancel's reason of 500 characters (`links::MAX_REASON`), encoded at its worst: 12 bytes
/// a character percent-encoded in a form, the same as a surrogate pair escaped in JSON.
pub const REASON: usize = 8 << 10;
/// A doorway answer: up to 30 fields of 5,000 characters; the form cap it always had.
pub const ANSWER: usize = 256 << 10;
/// The test provider's buttons: one field.
pub const PROVIDER: usize = 1 << 10;
/// An API call's JSON: a subject at most (`/api/v1/instances`).
pub const API_JSON: usize = 64 << 10;
/// The largest cap of any route.
pub const LARGEST: usize = 256 << 10;
// The smallest budget holds a few of the largest bodies: no route is refused by it alone.
const _: () = assert!(LARGEST * 4 <= crate::config::MIN_BODY_BYTES_IN_FLIGHT);

/// The most a route's body may hold, by the route as the router matched it, for the site's and
/// the doorway's routes (the API declares its own: `http::api::cap`). A route left out gets
/// `SMALL`: a new form that needs more fails its own test, never anyone's memory.
pub fn cap(route: &str) -> usize {
    match route {
        "/admin/login" | "/setup/{token}" | "/setup/{kind}/{token}" | "/admin/admins/password" => {
            SIGN_IN
        }
        "/admin/config/orchestra" | "/admin/config/orchestra/interaction" => SETTINGS,
        "/admin/instances/new" => SUBJECT,
        "/admin/workflows/new" | "/admin/workflows/{id}/edit" => DEFINITION,
        "/interaction/{*link}" => ANSWER,
        "/test-provider/{handle}" => PROVIDER,
        super::notice::ROUTE => crate::domain::interaction::payment::MAX_NOTICE_BYTES,
        "/admin/instances/{id}/cancel" => REASON,
        _ => SMALL,
    }
}

/// Why a body was not read whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Longer than its route takes: declared so, or found so as it arrived.
    TooLarge,
    /// Not all there by the body deadline.
    TimedOut,
    /// The bodies being read already hold the whole budget.
    Busy,
    /// The client broke off, or sent something that is not a body.
    Broken,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refused::TooLarge => "request body over its route's cap",
            Refused::TimedOut => "request body not received by its deadline",
            Refused::Busy => "request bodies hold the whole budget, or the client's share of it",
            Refused::Broken => "request body broken off",
        })
    }
}

impl std::error::Error for Refused {}

impl From<Refused> for AppError {
    fn from(refused: Refused) -> Self {
        match refused {
            Refused::TooLarge => AppError::TooLarge,
            Refused::TimedOut => AppError::TimedOut,
            Refused::Busy => AppError::Crowded,
            Refused::Broken => AppError::BadRequest,
        }
    }
}

/// Reads a body whole. The layer has capped it and set its deadline; `LARGEST` backs the cap
/// up where a body did not pass through the layer.
pub async fn read(mut body: Body) -> Result<Bytes, Refused> {
    let mut first: Option<Bytes> = None;
    let mut joined: Vec<u8> = Vec::new();
    let mut total = 0;
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|e| why(&e))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        total += data.len();
        if total > LARGEST {
            return Err(Refused::TooLarge);
        }
        // Most bodies arrive in one frame: kept as it is, not copied.
        match &first {
            None => first = Some(data),
            Some(head) => {
                if joined.is_empty() {
                    joined.extend_from_slice(head);
                }
                joined.extend_from_slice(&data);
            }
        }
    }
    Ok(if joined.is_empty() {
        first.unwrap_or_default()
    } else {
        Bytes::from(joined)
    })
}

/// Which refusal an error from reading a body carries somewhere in its sources.
pub(crate) fn why(error: &(dyn std::error::Error + 'static)) -> Refused {
    let mut next = Some(error);
    while let Some(e) = next {
        if let Some(refused) = e.downcast_ref::<Refused>() {
            return *refused;
        }
        next = e.source();
    }
    Refused::Broken
}

/// What the layer shares: the budget, each address's share of it, and the deadline.
pub struct Bodies {
    /// In KiB: what the bodies being read hold, in all and by client address.
    ledger: Mutex<Ledger>,
    /// In KiB, all bodies together.
    budget: usize,
    /// In KiB, the bodies of one client address together (`share`).
    share: usize,
    timeout: Duration,
    /// Bytes a second a body keeps arriving at to earn time past `timeout`.
    min_rate: u64,
    /// The second of the last warning that the budget was full: one a second at most.
    warned: AtomicU64,
}

#[derive(Default)]
struct Ledger {
    held: usize,
    /// Only addresses that hold something: an entry goes when its last body lets go.
    by_address: HashMap<Group, usize>,
}

/// One client address's share of the budget: the same part of it as its share of the
/// connections (the cap per address over the cap in all), and never less than the largest body
/// one route takes, so that any one form can be sent from anywhere.
pub fn share(c: &crate::config::Connections) -> usize {
    let part = c.max_body_bytes_in_flight as u128 * c.max_per_address as u128
        / c.max_connections.max(1) as u128;
    usize::try_from(part)
        .unwrap_or(usize::MAX)
        .max(LARGEST)
        .min(c.max_body_bytes_in_flight)
}

impl Bodies {
    pub fn new(max_bytes_in_flight: usize, share: usize, timeout: Duration) -> Self {
        Self {
            ledger: Mutex::default(),
            budget: kib(max_bytes_in_flight),
            share: kib(share),
            timeout,
            min_rate: crate::config::DEFAULT_BODY_MIN_RATE,
            warned: AtomicU64::new(0),
        }
    }

    pub fn from_config(c: &crate::config::Connections) -> Self {
        Self {
            min_rate: c.body_min_rate,
            ..Self::new(c.max_body_bytes_in_flight, share(c), c.body_timeout)
        }
    }

    fn lock(&self) -> MutexGuard<'_, Ledger> {
        self.ledger
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes `more` KiB for a body of `address`: within the budget and the address's share, or
    /// not at all.
    fn take(&self, address: Option<Group>, more: usize) -> bool {
        let mut ledger = self.lock();
        if ledger.held + more > self.budget {
            return false;
        }
        if let Some(address) = address {
            let mine = ledger.by_address.get(&address).copied().unwrap_or(0);
            if mine + more > self.share {
                return false;
            }
            ledger.by_address.insert(address, mine + more);
        }
        ledger.held += more;
        true
    }

    fn give_back(&self, address: Option<Group>, kib: usize) {
        if kib == 0 {
            return;
        }
        let mut ledger = self.lock();
        ledger.held -= kib;
        if let Some(address) = address
            && let Some(mine) = ledger.by_address.get_mut(&address)
        {
            *mine -= kib;
            if *mine == 0 {
                ledger.by_address.remove(&address);
            }
        }
    }

    fn warn_full(&self) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if self.warned.swap(now, Ordering::Relaxed) != now {
            tracing::warn!(
                "request bodies hold the whole budget, or their client's share of it; answered 503 (further ones are not logged this second)"
            );
        }
    }

    /// What the budget has left, in KiB (for tests).
    pub fn available_kib(&self) -> usize {
        self.budget - self.lock().held
    }
}

impl Default for Bodies {
    fn default() -> Self {
        Self::from_config(&crate::config::Connections::default())
    }
}

/// What one body holds of the budget: it grows as the body's bytes arrive, and is given back
/// whole once the body and the answer made from it have both let go (what was read stays in
/// memory until the answer is made).
struct Hold {
    bodies: Arc<Bodies>,
    address: Option<Group>,
    /// In KiB; grown only by the body's own reads.
    kib: AtomicUsize,
}

impl Hold {
    /// Covers `bytes` read in all: takes what more they need, or refuses.
    fn cover(&self, bytes: usize) -> bool {
        let have = self.kib.load(Ordering::Relaxed);
        let want = kib(bytes);
        if want <= have {
            return true;
        }
        if !self.bodies.take(self.address, want - have) {
            return false;
        }
        self.kib.store(want, Ordering::Relaxed);
        true
    }

    /// Covers exactly `bytes`, giving back what the last frame held: a streamed body holds one
    /// frame at a time, since its reader stores each before it asks for the next.
    fn cover_only(&self, bytes: usize) -> bool {
        let have = self.kib.load(Ordering::Relaxed);
        let want = kib(bytes);
        if want < have {
            self.bodies.give_back(self.address, have - want);
            self.kib.store(want, Ordering::Relaxed);
            return true;
        }
        self.cover(bytes)
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.bodies.give_back(self.address, *self.kib.get_mut());
    }
}

fn kib(bytes: usize) -> usize {
    bytes.div_ceil(1024)
}

/// How a refusal of this layer is answered, by the request's language and path: the router
/// that places the layer knows which routes answer in which shape (`crate::http::refused_body`),
/// so this layer needs to know none of them.
pub type Answer = fn(Refused, Lang, &str) -> Response;

/// The cap of a route, by the route as the router matched it: `cap` for the site's routes; the
/// router that places the layer names its own.
pub type Caps = fn(&str) -> usize;

/// The cap of a request whose body its handler streams to storage as it arrives (an upload),
/// by its route and headers; `None` for a body read whole, which `Caps` caps.
pub type Streams = fn(&str, &axum::http::HeaderMap) -> Option<usize>;

/// No route of this router streams its body.
pub fn never_streamed(_: &str, _: &axum::http::HeaderMap) -> Option<usize> {
    None
}

/// The layer: see the module's documentation.
#[derive(Clone)]
pub struct Limit {
    pub bodies: Arc<Bodies>,
    pub answer: Answer,
    pub caps: Caps,
    pub streams: Streams,
}

impl<S> tower::Layer<S> for Limit {
    type Service = LimitService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        LimitService {
            inner,
            bodies: self.bodies.clone(),
            answer: self.answer,
            caps: self.caps,
            streams: self.streams,
        }
    }
}

#[derive(Clone)]
pub struct LimitService<S> {
    inner: S,
    bodies: Arc<Bodies>,
    answer: Answer,
    caps: Caps,
    streams: Streams,
}

type Boxed = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

/// A request without a body as it was; a refusal at once; or a request whose body holds its
/// place in the budget until its answer is made.
pub enum LimitFuture<F> {
    Passed(F),
    Refused(Option<Response>),
    Held(Boxed),
}

impl<F> Future for LimitFuture<F>
where
    F: Future<Output = Result<Response, Infallible>> + Unpin,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            LimitFuture::Passed(future) => Pin::new(future).poll(cx),
            LimitFuture::Refused(response) => Poll::Ready(Ok(response
                .take()
                .unwrap_or_else(|| AppError::Internal.into_response()))),
            LimitFuture::Held(future) => future.as_mut().poll(cx),
        }
    }
}

impl<S> tower::Service<Request> for LimitService<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible>,
    S::Future: Send + Unpin + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = LimitFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // No body (no Content-Length, or zero, and not chunked): nothing to bound.
        if request.body().is_end_stream() {
            return LimitFuture::Passed(self.inner.call(request));
        }
        let route = request.extensions().get::<MatchedPath>();
        let streamed = route.and_then(|r| (self.streams)(r.as_str(), request.headers()));
        let cap = streamed.unwrap_or_else(|| route.map_or(SMALL, |r| (self.caps)(r.as_str())));
        let declared = request.body().size_hint().exact();
        let refuse = |refused: Refused| {
            let lang = request
                .extensions()
                .get::<Lang>()
                .copied()
                .unwrap_or_default();
            LimitFuture::Refused(Some((self.answer)(refused, lang, request.uri().path())))
        };
        // The cheapest check of all, before a byte of the body is read.
        if declared.is_some_and(|n| n > cap as u64) {
            return refuse(Refused::TooLarge);
        }
        // The client's address as its connection is counted; a request served without our
        // server (a test's router) is counted in all only.
        let address = request.extensions().get::<Counted>().and_then(|c| c.0);
        let hold = Arc::new(Hold {
            bodies: self.bodies.clone(),
            address,
            kib: AtomicUsize::new(0),
        });
        let pace = Pace::new(self.bodies.timeout, self.bodies.min_rate);
        let request = request.map(|body| {
            Body::new(Capped {
                inner: body,
                left: cap,
                read: 0,
                hold: Some(hold.clone()),
                streamed: streamed.is_some(),
                pace,
            })
        });
        let future = self.inner.call(request);
        LimitFuture::Held(Box::pin(async move {
            // What was read stays in memory until the answer is made, so its place does too.
            let answer = future.await;
            drop(hold);
            answer
        }))
    }
}

/// A body's deadline, which follows its progress as mod_reqtimeout's `MinRate` does: the body
/// has `timeout`, and one more second for every `min_rate` bytes that arrived, so a slow line
/// that keeps sending finishes; and it is cut when nothing arrives for `timeout` (nginx's
/// `client_body_timeout`), so one that stalls is not kept on what it sent before.
struct Pace {
    started: tokio::time::Instant,
    timeout: Duration,
    min_rate: u64,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl Pace {
    fn new(timeout: Duration, min_rate: u64) -> Self {
        Self {
            started: tokio::time::Instant::now(),
            timeout,
            min_rate: min_rate.max(1),
            deadline: Box::pin(tokio::time::sleep(timeout)),
        }
    }

    /// Moves the deadline on for `read` bytes arrived in all, the last just now.
    fn arrived(&mut self, read: usize) {
        let earned = Duration::from_secs_f64(read as f64 / self.min_rate as f64);
        let by_rate = self.started + self.timeout + earned;
        let by_stall = tokio::time::Instant::now() + self.timeout;
        self.deadline.as_mut().reset(by_rate.min(by_stall));
    }
}

/// A body that ends in an error past its cap or its deadline, or when the budget has no room
/// for the bytes that arrived.
struct Capped {
    inner: Body,
    left: usize,
    /// Bytes arrived so far, each covered by `hold` (a streamed body's last frame only).
    read: usize,
    /// `None` in the unit tests, which read a body without the layer.
    hold: Option<Arc<Hold>>,
    streamed: bool,
    pace: Pace,
}

impl hyper::body::Body for Capped {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                let len = frame.data_ref().map_or(0, Bytes::len);
                if len > this.left {
                    return Poll::Ready(Some(Err(axum::Error::new(Refused::TooLarge))));
                }
                this.left -= len;
                this.read += len;
                if let Some(hold) = &this.hold {
                    let covered = if this.streamed {
                        hold.cover_only(len)
                    } else {
                        hold.cover(this.read)
                    };
                    if !covered {
                        hold.bodies.warn_full();
                        return Poll::Ready(Some(Err(axum::Error::new(Refused::Busy))));
                    }
                }
                if len > 0 {
                    this.pace.arrived(this.read);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Pending => match this.pace.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(axum::Error::new(Refused::TimedOut)))),
                Poll::Pending => Poll::Pending,
            },
            other => other,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cap_fits_the_smallest_budget_and_the_largest_is_largest() {
        for route in [
            "/admin/login",
            "/setup/{token}",
            "/admin/config/orchestra",
            "/admin/instances/new",
            "/admin/workflows/{id}/edit",
            "/interaction/{*link}",
            "/test-provider/{handle}",
            "/notice/test-provider",
            "/admin/logout",
        ] {
            assert!(cap(route) <= LARGEST, "{route}");
        }
        assert_eq!(cap("/admin/logout"), SMALL);
    }

    #[test]
    fn the_largest_subject_and_definition_fit_their_caps_percent_encoded() {
        // Four-byte characters, each `%XX` three times over: the worst a browser sends.
        let worst = |chars: usize| chars * 12;
        assert!(
            worst(crate::domain::instance::MAX_TITLE + crate::domain::instance::MAX_BODY) + 1024
                <= SUBJECT
        );
        assert!(worst(crate::domain::workflow::MAX_DEFINITION_CHARS) + 4096 <= DEFINITION);
        assert!(worst(crate::domain::instance::MAX_REASON) + 1024 <= REASON);
    }

    #[test]
    fn a_refusal_is_found_wherever_the_reader_wrapped_it() {
        let inner = axum::Error::new(Refused::TimedOut);
        let outer = axum::Error::new(inner);
        assert_eq!(why(&outer), Refused::TimedOut);
        assert_eq!(why(&std::io::Error::other("reset")), Refused::Broken);
    }

    /// A body that yields its chunks one poll at a time, then waits forever: a client that
    /// sent this much and stopped.
    struct Trickle(std::collections::VecDeque<Bytes>);

    impl hyper::body::Body for Trickle {
        type Data = Bytes;
        type Error = std::io::Error;

        fn poll_frame(
            self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
            match self.get_mut().0.pop_front() {
                Some(chunk) => Poll::Ready(Some(Ok(Frame::data(chunk)))),
                None => Poll::Pending,
            }
        }
    }

    fn capped(chunks: &[&'static [u8]], cap: usize, timeout: Duration) -> Body {
        Body::new(Capped {
            inner: Body::new(Trickle(
                chunks.iter().map(|c| Bytes::from_static(c)).collect(),
            )),
            left: cap,
            read: 0,
            hold: None,
            streamed: false,
            pace: Pace::new(timeout, 1 << 30),
        })
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_stops_arriving_ends_at_its_deadline() {
        let body = capped(&[b"name=a", b"da"], 100, Duration::from_secs(30));
        let started = tokio::time::Instant::now();
        assert_eq!(read(body).await, Err(Refused::TimedOut));
        assert_eq!(started.elapsed(), Duration::from_secs(30));
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_without_a_length_is_cut_at_its_cap() {
        let body = capped(&[b"0123456789", b"0123456789"], 15, Duration::from_secs(30));
        assert_eq!(read(body).await, Err(Refused::TooLarge));
    }

    fn hold(bodies: &Arc<Bodies>, last: u8) -> Hold {
        Hold {
            bodies: bodies.clone(),
            address: Some(Group::of(std::net::IpAddr::from([192, 0, 2, last]))),
            kib: AtomicUsize::new(0),
        }
    }

    #[test]
    fn the_budget_is_taken_as_bytes_arrive_within_each_addresss_share_and_given_back() {
        let bodies = Arc::new(Bodies::new(1 << 20, 600 << 10, Duration::from_secs(1)));
        let first = hold(&bodies, 1);
        assert_eq!(
            bodies.available_kib(),
            1024,
            "nothing arrived, nothing held"
        );
        assert!(first.cover(1000));
        assert!(first.cover(400 * 1024 + 1));
        assert_eq!(bodies.available_kib(), 1024 - 401);
        let second = hold(&bodies, 1);
        assert!(!second.cover(200 * 1024), "past the address's share");
        assert!(second.cover(199 * 1024));
        let other = hold(&bodies, 2);
        assert!(other.cover(424 * 1024), "another address has its own share");
        assert!(!other.cover(425 * 1024), "past the budget");
        drop(first);
        assert_eq!(bodies.available_kib(), 401);
        assert!(hold(&bodies, 1).cover(401 * 1024));
        drop((second, other));
        assert_eq!(bodies.available_kib(), 1024);
        assert!(bodies.lock().by_address.is_empty());
    }

    #[test]
    fn an_addresss_share_is_its_part_of_the_connections_and_fits_the_largest_body() {
        let defaults = crate::config::Connections::default();
        assert_eq!(share(&defaults), 1 << 20);
        let small = crate::config::Connections {
            max_body_bytes_in_flight: crate::config::MIN_BODY_BYTES_IN_FLIGHT,
            ..defaults
        };
        assert_eq!(share(&small), LARGEST);
        let alone = crate::config::Connections {
            max_per_address: defaults.max_connections * 2,
            ..defaults
        };
        assert_eq!(share(&alone), alone.max_body_bytes_in_flight);
    }
}
