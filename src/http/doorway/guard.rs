//! The doorway's guard: counts every request under the doorway's prefix before anything else
//! runs, routing included (`http::front`), and answers a refusal for about what a bare 429
//! costs.

use std::sync::LazyLock;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, REFERRER_POLICY};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;

use crate::domain::site::Snapshot;
use crate::http::AppState;
use crate::http::priority::Refusal;
use crate::i18n::{Lang, tr};
use crate::limits::guard::{Address, Decision, FloodGuard};

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
fn decide(state: &AppState, snapshot: &Snapshot, request: &Request, credential: &str) -> Verdict {
    let limits = snapshot.settings.limits_of(Address::Doorway);
    if !FloodGuard::is_counting(&limits) {
        return Verdict::Pass;
    }
    let caller = snapshot.caller_id(credential);
    // The sizing chart's figures are kept by `check_as`, on the answered path.
    match state
        .guard
        .check_as(
            Address::Doorway,
            caller.as_str(),
            &limits,
            snapshot.settings.policy_of(Address::Doorway),
        )
        .logged(Address::Doorway, caller.as_str())
    {
        // Report only: counted and tallied by the guard, answered as if nothing caught it.
        Decision::Allowed | Decision::WouldRefuse { .. } => Verdict::Pass,
        Decision::Refused { .. } => Verdict::Refuse(refusal(
            crate::http::lang::pick(request.uri(), request.headers()).0,
        )),
    }
}

/// The guard, before routing (`http::front`): counts a request carrying `credential` (a link
/// or handle, as the path gives it) and returns the refusal when there is one, with
/// `Strict-Transport-Security` on an https site. A doorway refusal lets work in progress go
/// first (`priority`).
pub fn guard(
    state: &AppState,
    https: bool,
    request: &Request,
    credential: &str,
) -> Option<Refusal> {
    let verdict = state
        .site
        .with_snapshot(|snapshot| decide(state, snapshot, request, credential));
    match verdict {
        Verdict::Pass => None,
        Verdict::Refuse(mut response) => {
            if https {
                response.headers_mut().insert(
                    axum::http::header::STRICT_TRANSPORT_SECURITY,
                    HeaderValue::from_static(crate::http::headers::HSTS),
                );
            }
            Some(Refusal {
                response,
                defer: true,
            })
        }
    }
}
