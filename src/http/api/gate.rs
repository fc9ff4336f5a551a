//! The gate before every API route but the description: reads the token, the client's address
//! and a signature's headers, asks the domain's gate (`domain::api::gate`, which holds the
//! rules and their order), and answers its refusals; a request let in carries its [`Caller`] on,
//! and its answer the RateLimit fields.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::{ApiError, body_refused};
use super::extract::Caller;
use super::fields::rate_headers;
use super::refusal::{self, KEY_ID_HEADER, NamedToken};
use crate::domain::api::gate::{Admitted, Gate, Knock, Refusal};
use crate::domain::api::{self, Signed};
use crate::http::AppState;
use crate::http::body;
use crate::http::client::ClientAddr;
use crate::i18n::Lang;

/// Authenticates, checks a signature when one is sent, and takes one request from the token's
/// bucket; the handler runs only when all three pass.
pub async fn gate(
    State(state): State<AppState>,
    lang: Lang,
    ClientAddr(client): ClientAddr,
    request: Request,
    next: Next,
) -> Response {
    let snapshot = state.site.get().await;
    let gate = Gate {
        db: &state.db,
        guard: &state.guard,
        seen: &state.api_seen,
        buckets: &state.api_buckets,
        snapshot: &snapshot,
        clock: &state.clock,
    };
    let knock = Knock {
        bearer: header(request.headers(), header::AUTHORIZATION.as_str())
            .and_then(api::bearer_credentials)
            .unwrap_or(""),
        // Named by the fast refusal, by the very hash it computed, when it did.
        named: request.extensions().get::<NamedToken>().map(|n| n.0),
        client,
        signed: request.headers().contains_key(KEY_ID_HEADER),
    };
    let mut admitted = match gate.admit(&knock).await {
        Ok(admitted) => admitted,
        Err(refusal) => return refused(lang, refusal),
    };
    let mut request = if knock.signed {
        match signed(&state, &gate, &mut admitted, lang, request).await {
            Ok(request) => request,
            Err(response) => return response,
        }
    } else {
        request
    };
    let writes = request.method() != axum::http::Method::GET;
    if let Err(refusal) = gate.let_in(&admitted, writes).await {
        return refused(lang, refusal);
    }
    let Admitted { token, limited, .. } = admitted;
    request.extensions_mut().insert(Caller(token, snapshot));
    let mut response = next.run(request).await;
    if let Some((policy, verdict)) = limited {
        rate_headers(response.headers_mut(), policy, verdict);
    }
    response
}

/// A signature covers the body, so a signed request's body is read here (bounded), and the
/// request is made again with it.
async fn signed(
    state: &AppState,
    gate: &Gate<'_>,
    admitted: &mut Admitted,
    lang: Lang,
    request: Request,
) -> Result<Request, Response> {
    let (parts, body) = request.into_parts();
    let body = body::read(body)
        .await
        .map_err(|refused| body_refused(lang, refused))?;
    let signed = Signed {
        key_id: header(&parts.headers, KEY_ID_HEADER.as_str()).unwrap_or(""),
        timestamp: header(&parts.headers, "orchestra-timestamp").unwrap_or(""),
        signature: header(&parts.headers, "orchestra-signature").unwrap_or(""),
        method: parts.method.as_str(),
        path: parts.uri.path(),
        body: &body,
    };
    gate.check_signature(admitted, &signed, state.clock.now_secs())
        .await
        .map_err(|refusal| refused(lang, refusal))?;
    Ok(Request::from_parts(parts, Body::from(body)))
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// A refusal of the gate as the API answers it.
fn refused(lang: Lang, refusal: Refusal) -> Response {
    let unauthorized = |code, id| ApiError::said(lang, StatusCode::UNAUTHORIZED, code, id);
    match refusal {
        Refusal::TooManyFailures(period) => too_many_failures(lang, period),
        Refusal::Unauthorized => unauthorized("unauthorized", "api-unauthorized").into_response(),
        // Inside the security headers' layer, which adds HSTS itself where it is due.
        Refusal::RateLimited(policy, verdict) => refusal::rate_limited(policy, verdict, false),
        Refusal::BadSignature => unauthorized("bad_signature", "api-bad-signature").into_response(),
        Refusal::Failed(e) => ApiError::from(e).into_response(),
    }
}

/// Too many failed authentications from one client address: `429`, its own `error` code, and a
/// `Retry-After` of the limit's whole period (the count is rolling, so that is when it surely has
/// room; it may have room sooner).
fn too_many_failures(lang: Lang, period: std::time::Duration) -> Response {
    let seconds = period.as_secs().max(1);
    let mut response = ApiError::said(
        lang,
        StatusCode::TOO_MANY_REQUESTS,
        "too_many_failures",
        "api-too-many-failures",
    )
    .into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, seconds.into());
    response
}
