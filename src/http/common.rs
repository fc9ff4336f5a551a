//! What every page the router answers goes through, as one service (`Common`), in this order:
//!
//! 1. counted as work in progress until its answer is made, which refusals let go first
//!    (`priority`);
//! 2. one span (method and route, never the URI: it may hold a link) around the rest;
//! 3. the visitor's language picked for everything below, errors included (`lang`);
//! 4. a write refused once the database file is gone (`Db::vanished`);
//! 5. then, on the way out: errors become themed pages in that language (`error::themed`), a
//!    language chosen with `?lang=` is remembered, a path that may hold a credential is kept
//!    out of referrers and caches, and every response gets the site's security headers
//!    (`headers`).
//!
//! `body::Limit` runs right inside it (`Common::layer_with`).
//!
//! One service, not a layer each: axum boxes every route's service again for each `Router::layer`,
//! and `from_fn` clones and boxes its inner service and boxes its future on every request. As seven
//! such layers, with the boxes around them, they made half of a doorway page's allocations and a
//! fifth of its CPU. Everything before the inner service runs in `call`, so the inner service is
//! called there and never cloned.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use axum::extract::{MatchedPath, Request};
use axum::http::header::{CACHE_CONTROL, REFERRER_POLICY};
use axum::http::{HeaderValue, Method};
use axum::response::{IntoResponse, Response};

use super::error::{self, AppError};
use super::headers::Security;
use super::priority::{InProgress, Working};
use super::{CREDENTIAL_PREFIXES, body, lang};
use crate::i18n::Lang;
use crate::store::Db;

/// The layer: see the module's documentation.
#[derive(Clone)]
pub struct Common(Arc<Parts>);

struct Parts {
    work: Arc<InProgress>,
    security: Security,
    db: Db,
}

impl Common {
    pub fn new(work: Arc<InProgress>, security: Security, db: Db) -> Self {
        Self(Arc::new(Parts { work, security, db }))
    }

    /// This layer with `body::Limit` inside it: what `http::with_common_layers` puts around
    /// each area's routes, in one `Router::layer`.
    pub fn layer_with(self, limit: body::Limit) -> tower::layer::util::Stack<body::Limit, Self> {
        tower::layer::util::Stack::new(limit, self)
    }
}

impl<S> tower::Layer<S> for Common {
    type Service = CommonService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        CommonService {
            inner,
            parts: self.0.clone(),
        }
    }
}

#[derive(Clone)]
pub struct CommonService<S> {
    inner: S,
    parts: Arc<Parts>,
}

impl<S> tower::Service<Request> for CommonService<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible>,
    S::Future: Unpin,
{
    type Response = Response;
    type Error = Infallible;
    type Future = CommonFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        let working = self.parts.work.enter();
        let parts = &self.parts;
        parts.security.note_forwarded(request.headers());
        let path = request.uri().path();
        let admin = path.starts_with("/admin");
        let credential = CREDENTIAL_PREFIXES.iter().any(|p| path.starts_with(p));
        let span = span(&request);
        let (lang, chosen) = lang::pick(request.uri(), request.headers());
        request.extensions_mut().insert(lang);
        let writes = !matches!(*request.method(), Method::GET | Method::HEAD);
        // One `stat`, a few microseconds, and only on writes: a write into a file nobody will
        // read would be answered as a success.
        let inner = if writes && parts.db.vanished() {
            Inner::Answered(Some(AppError::Unavailable.into_response()))
        } else {
            Inner::Called(self.inner.call(request))
        };
        CommonFuture {
            inner,
            span,
            after: After {
                lang,
                chosen,
                admin,
                credential,
            },
            working: Some(working),
            parts: self.parts.clone(),
        }
    }
}

/// What the way out needs to know of the request.
struct After {
    lang: Lang,
    chosen: Option<Lang>,
    admin: bool,
    credential: bool,
}

enum Inner<F> {
    Called(F),
    Answered(Option<Response>),
}

pub struct CommonFuture<F> {
    inner: Inner<F>,
    /// Entered on every poll, as `tracing::Instrument` would.
    span: tracing::Span,
    after: After,
    working: Option<Working>,
    parts: Arc<Parts>,
}

impl<F> Future for CommonFuture<F>
where
    F: Future<Output = Result<Response, Infallible>> + Unpin,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let _entered = this.span.enter();
        let response = match &mut this.inner {
            Inner::Called(future) => match ready!(Pin::new(future).poll(cx)) {
                Ok(response) => response,
            },
            Inner::Answered(response) => response
                .take()
                .unwrap_or_else(|| AppError::Internal.into_response()),
        };
        // The answer is made: the request is no longer work in progress.
        this.working = None;
        let After {
            lang,
            chosen,
            admin,
            credential,
        } = this.after;
        let mut response = error::themed(response, lang);
        let headers = response.headers_mut();
        lang::remember(headers, chosen);
        if credential {
            headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
            headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
        }
        this.parts.security.insert(headers, admin);
        tracing::debug!(status = response.status().as_u16(), "answered");
        Poll::Ready(Ok(response))
    }
}

/// The request's span. The path is not recorded as it is: a doorway path is a credential, and
/// so may be a path that only looks like one (`//interaction/…`, `/Interaction/…`,
/// `/%69nteraction/…`), which no route matches. So the span names the route that matched, and
/// a path no route matched is named by its first segment at most, and only when that segment
/// is one of the site's own areas.
fn span(request: &Request) -> tracing::Span {
    let route = match request.extensions().get::<MatchedPath>() {
        Some(matched) => public_route(matched.as_str()),
        None => unmatched(request.uri().path()),
    };
    tracing::info_span!("request", method = %request.method(), route = %route)
}

/// A matched route fit for a log line: its pattern, which holds no credential.
fn public_route(pattern: &str) -> &str {
    match pattern.char_indices().nth(200) {
        Some((end, _)) => &pattern[..end],
        None => pattern,
    }
}

/// A path no route matched: never logged as it is, since anything a visitor typed may be a
/// link spelled slightly wrong.
fn unmatched(path: &str) -> &'static str {
    const AREAS: [(&str, &str); 4] = [
        ("/admin/", "/admin/… (no route)"),
        ("/api/", "/api/… (no route)"),
        ("/static/", "/static/… (no route)"),
        ("/setup/", "/setup/… (no route)"),
    ];
    AREAS
        .iter()
        .find(|(area, _)| path.starts_with(area))
        .map_or("(no route)", |(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::{public_route, unmatched};

    /// Paths that look like a link but match no route say nothing of what follows.
    #[test]
    fn an_unmatched_path_is_never_logged_as_it_is() {
        for path in [
            "//interaction/1.legal.99.abc",
            "/Interaction/1.legal.99.abc",
            "/%69nteraction/1.legal.99.abc",
            "/interaction",
            "/admin/1.legal.99.abc",
        ] {
            assert!(!unmatched(path).contains("abc"), "{path}");
        }
        assert_eq!(unmatched("/admin/nowhere"), "/admin/… (no route)");
        assert_eq!(unmatched("/x"), "(no route)");
    }

    #[test]
    fn a_route_is_logged_up_to_200_characters() {
        let long = "é".repeat(300);
        assert_eq!(public_route(&long).chars().count(), 200);
        assert_eq!(public_route("/interaction/{*link}"), "/interaction/{*link}");
    }
}
