//! The payment provider's notices: `POST /notice/test-provider`, server to server. The second
//! public address behind the same `FloodGuard` as the doorway, with limits of its own (per
//! payment, and in total), under the site-wide switch and period.
//!
//! Order of work: read the body (at most `MAX_NOTICE_BYTES`, for at most `READ_TIMEOUT`), check
//! its signature, name the payment it claims, count it (signed and forged notices apart), and
//! only then apply it.

use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde::Serialize;

use super::AppState;
use super::error::AppError;
use crate::domain::interaction::payment::{self, Applied, MAX_NOTICE_BYTES, SIGNATURE_HEADER};
use crate::domain::site::Snapshot;
use crate::limits::guard::{Address, Decision, TOTAL};

/// A notice body that takes longer than this to arrive is dropped.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// Where the provider sends its notices.
pub const ROUTE: &str = "/notice/test-provider";

pub fn router() -> Router<AppState> {
    Router::new().route(ROUTE, post(receive))
}

#[derive(Serialize)]
struct Answer {
    /// Whether this notice made the change, or joined one already made.
    changed: bool,
    state: &'static str,
}

/// What a notice got.
pub enum Received {
    Applied(Applied),
    /// The one refusal of a bad notice: nothing says why.
    Refused,
    /// Counted past a limit.
    Limited,
}

impl IntoResponse for Received {
    fn into_response(self) -> Response {
        match self {
            Received::Applied(a) => Json(Answer {
                changed: a.changed,
                state: a.state.as_str(),
            })
            .into_response(),
            Received::Refused => (
                StatusCode::BAD_REQUEST,
                Json(serde_json::json!({"error": "refused"})),
            )
                .into_response(),
            Received::Limited => (
                StatusCode::TOO_MANY_REQUESTS,
                Json(serde_json::json!({"error": "too_many_requests"})),
            )
                .into_response(),
        }
    }
}

async fn receive(State(state): State<AppState>, request: Request) -> Result<Response, AppError> {
    let signature = request
        .headers()
        .get(SIGNATURE_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let body = match tokio::time::timeout(
        READ_TIMEOUT,
        axum::body::to_bytes(request.into_body(), MAX_NOTICE_BYTES),
    )
    .await
    {
        Ok(Ok(body)) => body,
        _ => return Ok(Received::Refused.into_response()),
    };
    let snapshot = state.site.get().await;
    Ok(deliver(&state, &snapshot, &body, &signature)
        .await?
        .into_response())
}

/// The total forged notices are counted under, apart from signed ones' [`TOTAL`].
const FORGED_TOTAL: &str = "forged";

/// Checks a notice's signature, counts it, then applies it. The notice route and the test
/// provider's own buttons both come through here, so both are counted and checked alike.
pub async fn deliver(
    state: &AppState,
    snapshot: &Snapshot,
    body: &Bytes,
    signature: &str,
) -> Result<Received, AppError> {
    let limits = snapshot.settings.limits_of(Address::Notice);
    // The signature first: one HMAC over at most 4 KiB, about what naming, hashing and
    // counting the notice cost together for a small body (docs/interaction.md, Provider
    // notices), and no database. Signed and forged notices are then
    // counted apart, per payment and in total, so no number of forged ones can spend what
    // the provider's own notices share.
    let signed = payment::verify(&snapshot.keys, body, signature);
    let (purpose, total) = match signed {
        Some(_) => ("notice-caller", TOTAL),
        None => ("notice-forged", FORGED_TOTAL),
    };
    // Per payment by a keyed hash of the reference the body claims (a body that names none
    // shares one identifier).
    let named = payment::payment_named(body).unwrap_or_default();
    let caller = snapshot.keys.keyed_hash(purpose, &named);
    let decision = state.guard.check_as_within(
        Address::Notice,
        &caller,
        total,
        &limits,
        snapshot.settings.policy_of(Address::Notice),
    );
    let decision = match signed {
        Some(_) => decision.logged(Address::Notice, &caller),
        None => decision.logged_as(Address::Notice, &caller, "forged provider notice"),
    };
    if let Decision::Refused { .. } = decision {
        return Ok(Received::Limited);
    }
    let Some(signed) = signed else {
        tracing::info!("refused a provider notice");
        return Ok(Received::Refused);
    };
    let received =
        payment::receive(&state.db, &state.versions, signed, state.clock.now_secs()).await?;
    Ok(match received {
        Some(applied) => {
            if let Some(asked) = &applied.asked {
                state.step_waits.observe(asked);
            }
            Received::Applied(applied)
        }
        None => {
            tracing::info!("refused a provider notice");
            Received::Refused
        }
    })
}
