//! The API's fast refusal, before routing like the doorway's guard (`http::front`).
//!
//! A caller whose bucket is empty is refused here, before the tracing span, the language, the
//! error pages and the database: its token is found among those this process already
//! authenticated (`api::Seen`, one keyed hash and a map lookup) and its bucket is read without
//! taking from it. The answer is made of ready bytes (`fields`): no allocation but the
//! response's own. A signed request is weighed at the signed tier, the most its token can have,
//! before its signature is checked: `gate` takes from that bucket before it looks up the key
//! too. Everything else (an unknown token, a bucket with room) goes on to `gate`, which
//! authenticates (from the database, or from `Seen` within `api::FRESH` of its last read) and
//! takes from the bucket, so the fast path can only refuse what `gate` would refuse too.

use axum::body::Body;
use axum::extract::Request;
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::Response;

use super::fields::{self, rate_headers};
use crate::domain::api;
use crate::http::AppState;
use crate::http::priority::Refusal;
use crate::limits::bucket::{Policy, Verdict};

/// The header naming a signed request's integrator key.
pub const KEY_ID_HEADER: HeaderName = HeaderName::from_static("orchestra-key-id");

/// The one `429` of the API, from this layer and from `gate` alike: `Retry-After` in whole
/// seconds (never below 1), the same number in the JSON body and as the `RateLimit` field's
/// `t`, and the RateLimit fields.
pub fn rate_limited(policy: Policy, verdict: Verdict, https: bool) -> Response {
    let seconds = fields::retry_after_secs(verdict);
    let (body, retry_after) = fields::refusal(seconds);
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
    // Room for every header below, HSTS included, so the map is not grown on the way.
    *response.headers_mut() = HeaderMap::with_capacity(8);
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(RETRY_AFTER, retry_after);
    rate_headers(headers, policy, verdict);
    // This answer skips the layer that adds them elsewhere.
    crate::http::headers::insert_static(headers, https);
    response
}

/// The keyed hash of the request's token as [`refuse`] computed it, handed on in the request's
/// extensions: `gate` names the token by it without hashing it again.
#[derive(Clone, Copy)]
pub struct NamedToken(pub crate::domain::api::TokenKey);

/// The refusal, when the caller is a token this process knows and its bucket is empty. Before
/// routing, on every path under `api::PREFIX` (`http::front`). A request it lets through
/// carries the token's keyed hash on ([`NamedToken`]).
pub fn refuse(state: &AppState, https: bool, request: &mut Request) -> Option<Refusal> {
    let mut named = None;
    let refusal = state.site.with_snapshot(|snapshot| {
        let settings = &snapshot.settings;
        if !settings.request_limits_enabled {
            return None;
        }
        let headers = request.headers();
        let bearer = api::bearer_credentials(headers.get(AUTHORIZATION)?.to_str().ok()?)?;
        let key = snapshot.token_key(bearer)?;
        named = Some(key);
        // Whatever its signature turns out to be (`gate` takes this bucket before it looks).
        let signed = headers.contains_key(KEY_ID_HEADER);
        let (id, policy) = state.api_seen.read(&key, |token| {
            (token.id, api::policy(token, settings, signed))
        })?;
        let verdict = state.api_buckets.refused(id, policy)?;
        Some(Refusal {
            response: rate_limited(policy, verdict, https),
            // An API client obeys `Retry-After`; only the doorway's people are let go first.
            defer: false,
        })
    });
    if refusal.is_none()
        && let Some(key) = named
    {
        request.extensions_mut().insert(NamedToken(key));
    }
    refusal
}
