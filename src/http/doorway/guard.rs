//! The doorway's guard: a route layer that counts every request before anything else runs,
//! and answers a refusal for about what a bare 429 costs.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, REFERRER_POLICY};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use tower::ServiceExt;

use super::{EVENT, link_of};
use crate::guard::{Decision, FloodGuard};
use crate::http::{AppState, priority};
use crate::i18n::{Lang, tr};
use crate::site::Snapshot;

/// The refusal, one sentence per language, made once. Identical for both tiers and for good
/// and bad links: it says nothing about either.
static REFUSALS: LazyLock<[Bytes; 2]> = LazyLock::new(|| {
    Lang::ALL.map(|l| Bytes::from(format!("{}\n", tr(l, "doorway-too-many-requests", &[]))))
});

pub fn refusal(lang: Lang) -> Response {
    let body = REFUSALS[lang as usize].clone();
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    // The security headers every response carries, static here: the refusal skips the
    // layer that adds them elsewhere (`http::headers`).
    headers.insert(
        axum::http::header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static(crate::http::headers::NOSNIFF),
    );
    headers.insert(
        axum::http::header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(crate::http::headers::CSP),
    );
    headers.insert(
        axum::http::header::X_FRAME_OPTIONS,
        HeaderValue::from_static(crate::http::headers::DENY),
    );
    response
}

/// What the guard decided for one request.
enum Verdict {
    Pass,
    Refuse(Response),
}

/// Counts the request and decides. Synchronous and cheap: a keyed hash of the link and an
/// in-memory count. It runs before the tracing span and the language middleware: a refusal
/// works out the visitor's language itself, and only when it refuses.
fn decide(state: &AppState, snapshot: &Snapshot, request: &Request) -> Verdict {
    let limits = snapshot.settings.interaction_limits();
    if !FloodGuard::is_counting(&limits) {
        return Verdict::Pass;
    }
    let caller = snapshot.caller_id(link_of(request.uri().path()));
    // The sizing chart's figures are kept by `check_as`, on the answered path.
    match state.guard.check_as(
        EVENT,
        caller.as_str(),
        &limits,
        snapshot.settings.interaction_policy(),
    ) {
        Decision::Allowed => Verdict::Pass,
        // Report only: counted and tallied by the guard, answered as if nothing caught it.
        Decision::WouldRefuse {
            tier,
            first_in_period,
        } => {
            if first_in_period {
                tracing::warn!(
                    caller = %caller,
                    tier = tier.name(),
                    "doorway request would have been refused (report only); further ones like it are not logged this period"
                );
            }
            Verdict::Pass
        }
        Decision::Refused {
            tier,
            first_in_period,
        } => {
            if first_in_period {
                tracing::warn!(
                    caller = %caller,
                    tier = tier.name(),
                    "doorway request refused; further refusals like it are not logged this period"
                );
            }
            Verdict::Refuse(refusal(
                crate::http::lang::pick(request.uri(), request.headers()).0,
            ))
        }
    }
}

/// The guard as a route layer on the doorway's routes, outside every other layer.
///
/// A hand-written service rather than `middleware::from_fn`: while nothing else is in progress,
/// a refusal is answered from `call` itself, with no boxed future and no clone of the inner
/// service, so it costs about what a bare 429 costs. Only a request that passes pays for calling
/// the doorway, and only a refusal that waits for work in progress (`priority`) is boxed.
#[derive(Clone)]
pub struct GuardLayer {
    state: AppState,
    /// The site is on https: the refusal carries `Strict-Transport-Security` too.
    https: bool,
}

impl GuardLayer {
    pub fn new(state: AppState, https: bool) -> Self {
        Self { state, https }
    }
}

impl<S> tower::Layer<S> for GuardLayer {
    type Service = GuardService<S>;

    fn layer(&self, inner: S) -> GuardService<S> {
        GuardService(Arc::new(Guarded {
            inner,
            state: self.state.clone(),
            https: self.https,
        }))
    }
}

/// The guard over the doorway's service. axum clones a route's service for every request, so
/// everything sits behind one `Arc`: a refusal's clone is one count, and the doorway's own stack
/// of layers is cloned only for a request that passes.
pub struct GuardService<S>(Arc<Guarded<S>>);

/// What every clone of one `GuardService` shares.
struct Guarded<S> {
    inner: S,
    state: AppState,
    https: bool,
}

impl<S> Clone for GuardService<S> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

type BoxedResponse = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

/// A refusal ready at once, a refusal that lets the site's work in progress go first, or the
/// doorway's own work.
pub enum GuardFuture {
    Refused(Option<Response>),
    Deferred(BoxedResponse),
    Passed(BoxedResponse),
}

impl Future for GuardFuture {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            GuardFuture::Refused(response) => {
                Poll::Ready(Ok(response.take().unwrap_or_else(|| refusal(Lang::En))))
            }
            GuardFuture::Deferred(future) | GuardFuture::Passed(future) => future.as_mut().poll(cx),
        }
    }
}

impl<S> tower::Service<Request> for GuardService<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = GuardFuture;

    /// Always ready: a request that passes readies its own clone of the doorway (`oneshot`).
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> GuardFuture {
        let Guarded {
            inner,
            state,
            https,
        } = &*self.0;
        let mut verdict = state
            .site
            .with_snapshot(|snapshot| decide(state, snapshot, &request));
        if let (Verdict::Refuse(response), true) = (&mut verdict, *https) {
            response.headers_mut().insert(
                axum::http::header::STRICT_TRANSPORT_SECURITY,
                HeaderValue::from_static(crate::http::headers::HSTS),
            );
        }
        match verdict {
            // Work in progress goes first (`priority`): one atomic read when there is none.
            Verdict::Refuse(response) if state.work.busy() => {
                let work = state.work.clone();
                GuardFuture::Deferred(Box::pin(async move {
                    work.idle_within(priority::MAX_DEFER).await;
                    Ok(response)
                }))
            }
            Verdict::Refuse(response) => GuardFuture::Refused(Some(response)),
            Verdict::Pass => GuardFuture::Passed(Box::pin(inner.clone().oneshot(request))),
        }
    }
}
