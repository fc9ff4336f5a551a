//! The integrator API, `/api/v1/`: JSON in and out, every error JSON with a stable `error`
//! code. Callers present `Authorization: Bearer <token>`; each token has a token bucket of its
//! own (`crate::limits::bucket`), announced on every reply in the IETF RateLimit draft's fields, and a
//! request signed by a trusted integrator gets a bigger bucket (`crate::domain::api`).
//!
//! Order of work for every request (`gate`): the token (one keyed hash and an indexed read),
//! then the bucket, then the signature when one is sent (so a bad signature has spent its
//! request before its key is looked up), and only then the handler, which checks the call
//! against the token's scope (`crate::domain::api::scope`). The doorway's guard does not count the API,
//! and the API's bucket does not count the doorway.

use std::borrow::Cow;
use std::net::IpAddr;
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{RawQuery, Request, State};
use axum::http::{HeaderMap, HeaderName, StatusCode};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, delete, get, post};
use serde::Deserialize;
use serde_json::Value;

use super::AppState;
use super::client::ClientAddr;
use crate::domain::api::idempotency::{self, Answer, Begun};
use crate::domain::api::scope::Ability;
use crate::domain::api::{self, Signature, Signed};
use crate::domain::links::{self, Actor, Refusal};
use crate::domain::lists;
use crate::domain::login;
use crate::domain::site::Snapshot;
use crate::domain::workflow::{Definition, Participant};
use crate::i18n::{Lang, Message};
use crate::limits::bucket::{Policy, Verdict};
use crate::limits::guard::{Address, Decision, FloodGuard, TOTAL};
use crate::store::{self, api::Reached, api::TokenRow, instances::InstanceRow};

mod doc;
mod fields;
pub mod refusal;
mod wire;

/// Every API route is under it (a test checks `ROUTES`); the fast refusal runs before routing
/// on every path under it (`http::front`).
pub const PREFIX: &str = "/api/v1/";

/// The header naming a signed request's integrator key.
const KEY_ID: &str = "orchestra-key-id";
/// The same, as a header name made once.
const KEY_ID_HEADER: HeaderName = HeaderName::from_static(KEY_ID);
/// The RateLimit draft's two fields.
const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// Every route, as the OpenAPI description lists them (a test compares the two). The first is
/// public; the rest stand behind `gate`.
pub const ROUTES: &[(&str, &str)] = &[
    ("GET", "/api/v1/openapi.json"),
    ("GET", "/api/v1/workflows"),
    ("POST", "/api/v1/instances"),
    ("GET", "/api/v1/instances"),
    ("GET", "/api/v1/instances/{id}"),
    ("POST", "/api/v1/instances/{id}/links"),
    ("DELETE", "/api/v1/instances/{id}/links/{link}"),
    ("POST", "/api/v1/instances/{id}/cancel"),
    ("POST", "/api/v1/webhooks"),
    ("GET", "/api/v1/webhooks"),
    ("DELETE", "/api/v1/webhooks/{id}"),
];

pub fn router(state: AppState) -> Router<AppState> {
    let mut guarded = Router::new();
    for (method, path) in &ROUTES[1..] {
        let route = match (*method, *path) {
            ("GET", "/api/v1/workflows") => get(workflows),
            ("POST", "/api/v1/instances") => post(start),
            // Merged by axum into one route with the POST above.
            ("GET", "/api/v1/instances") => get(list),
            ("GET", "/api/v1/instances/{id}") => get(instance),
            ("POST", "/api/v1/instances/{id}/links") => post(issue),
            ("DELETE", "/api/v1/instances/{id}/links/{link}") => delete(revoke),
            ("POST", "/api/v1/instances/{id}/cancel") => post(cancel),
            ("POST", "/api/v1/webhooks") => post(create_webhook),
            // Merged by axum into one route with the POST above.
            ("GET", "/api/v1/webhooks") => get(webhooks),
            ("DELETE", "/api/v1/webhooks/{id}") => delete(delete_webhook),
            // A route listed without a handler is a programming error, caught by every test.
            _ => panic!("no handler for {method} {path}"),
        };
        guarded = guarded.route(path, route);
    }
    Router::new()
        .route(ROUTES[0].1, get(openapi))
        .merge(guarded.route_layer(from_fn_with_state(state, gate)))
        // Every other path under the prefix is the API's JSON 404, not the site's page; no
        // token needed to learn that nothing is there, and nothing is read.
        .route("/api/v1/{*rest}", any(unknown_path))
        .layer(axum::middleware::from_fn(json_method_not_allowed))
}

async fn unknown_path(lang: Lang) -> ApiError {
    ApiError::not_found(lang)
}

/// The router's `405` for a method a route does not take, as the API's JSON, with its `Allow`;
/// and an error made where the caller's language was not at hand (`Late`), in that language.
async fn json_method_not_allowed(lang: Lang, request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    if let Some(Late(code, id)) = response.extensions().get::<Late>().copied() {
        return ApiError::new(response.status(), code, Message::new(id).render(lang))
            .into_response();
    }
    if response.status() != StatusCode::METHOD_NOT_ALLOWED {
        return response;
    }
    let allow = response.headers().get(axum::http::header::ALLOW).cloned();
    let mut answer = ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        Message::new("api-method-not-allowed").render(lang),
    )
    .into_response();
    if let Some(allow) = allow {
        answer
            .headers_mut()
            .insert(axum::http::header::ALLOW, allow);
    }
    answer
}

/// An error whose message was made without the caller's language (in a `From` conversion: a
/// failure of ours, text the database cannot store): its code and message id, on the response,
/// for the router's layer to say it again in the caller's language.
#[derive(Clone, Copy)]
struct Late(&'static str, &'static str);

/// An API error: a status, a stable code and a message (plus the field for bad input).
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
    /// The input that is wrong: a field's name, a nested one's dotted path, or `body`.
    field: Option<Cow<'static, str>>,
    /// The message's id when it was made in English for want of the caller's language.
    late: Option<&'static str>,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            field: None,
            late: None,
        }
    }

    /// An error made where the caller's language is not known: English here, said again in the
    /// caller's language by the router's layer (`Late`).
    fn late(status: StatusCode, code: &'static str, id: &'static str) -> Self {
        Self {
            late: Some(id),
            ..Self::new(status, code, Message::new(id).render(Lang::En))
        }
    }

    fn invalid(lang: Lang, field: impl Into<Cow<'static, str>>, message: &Message) -> Self {
        Self {
            field: Some(field.into()),
            ..Self::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid",
                message.render(lang),
            )
        }
    }

    fn not_found(lang: Lang) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "not_found",
            Message::new("api-not-found").render(lang),
        )
    }

    /// A failure of ours, logged where it happened.
    fn internal() -> Self {
        Self::late(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "api-internal",
        )
    }

    fn forbidden_scope(lang: Lang, message: Message) -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "forbidden_scope",
            message.render(lang),
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = wire::Error {
            error: self.code,
            message: self.message,
            field: self.field,
        };
        let mut response = (self.status, Json(body)).into_response();
        if let Some(id) = self.late {
            response.extensions_mut().insert(Late(self.code, id));
        }
        response
    }
}

impl From<crate::error::Error> for ApiError {
    fn from(e: crate::error::Error) -> Self {
        if let crate::error::Error::Db(d) = &e
            && crate::store::is_bad_text(d)
        {
            // The net under `body`'s own check: bad input, wherever it came from.
            tracing::info!("refused text the database cannot store");
            return Self::late(StatusCode::UNPROCESSABLE_ENTITY, "invalid", "api-bad-text");
        }
        if let crate::error::Error::Db(d) = &e
            && crate::store::is_unavailable(d)
        {
            // The write lock held past the acquire timeout by another process, or a database
            // that cannot answer: the caller may try again, as the pages' themed 503 says.
            tracing::warn!(error = %e, "API request met an unavailable database");
            return Self::late(StatusCode::SERVICE_UNAVAILABLE, "busy", "api-busy");
        }
        tracing::error!(error = %e, "API request failed");
        Self::internal()
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(e: sqlx::Error) -> Self {
        crate::error::Error::from(e).into()
    }
}

type ApiResult = Result<Response, ApiError>;

/// Who is calling, and the settings and keys `gate` decided under: put in the request by
/// `gate`, so a handler reads the snapshot `gate` read rather than a second one.
#[derive(Clone)]
struct Caller(Arc<TokenRow>, Arc<Snapshot>);

/// Too many failed authentications from one client address: `429`, its own `error` code, and a
/// `Retry-After` of the limit's whole period (the count is rolling, so that is when it surely has
/// room; it may have room sooner).
fn too_many_failures(lang: Lang, period: std::time::Duration) -> Response {
    let seconds = period.as_secs().max(1);
    let mut response = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "too_many_failures",
        Message::new("api-too-many-failures").render(lang),
    )
    .into_response();
    response
        .headers_mut()
        .insert(axum::http::header::RETRY_AFTER, seconds.into());
    response
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The RateLimit draft's fields: the policy (`q` requests, `w` the seconds to refill a burst)
/// and what remains (`r`) with the seconds until the bucket is full (`t`).
fn rate_headers(headers: &mut HeaderMap, policy: Policy, verdict: Verdict) {
    if let Some(v) = fields::ratelimit_policy(policy) {
        headers.insert(RATELIMIT_POLICY, v);
    }
    if let Some(v) = fields::ratelimit(verdict.remaining, verdict.reset_secs) {
        headers.insert(RATELIMIT, v);
    }
}

/// Authenticates, checks a signature when one is sent, and takes one request from the token's
/// bucket; the handler runs only when all three pass.
async fn gate(
    State(state): State<AppState>,
    lang: Lang,
    ClientAddr(client): ClientAddr,
    request: Request,
    next: Next,
) -> Response {
    match admit(&state, lang, client, request).await {
        Ok((request, policy)) => {
            let mut response = next.run(request).await;
            if let Some((policy, verdict)) = policy {
                rate_headers(response.headers_mut(), policy, verdict);
            }
            response
        }
        Err(response) => response,
    }
}

async fn admit(
    state: &AppState,
    lang: Lang,
    client: IpAddr,
    request: Request,
) -> Result<(Request, Option<(Policy, Verdict)>), Response> {
    let unauthorized = || {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            Message::new("api-unauthorized").render(lang),
        )
        .into_response()
    };
    let snapshot = state.site.get().await;
    let bearer = header(request.headers(), "authorization")
        .and_then(api::bearer_credentials)
        .unwrap_or("");
    // A token this site does not know costs a keyed hash and an indexed read. Failures are
    // counted per client address under the sign-in's per-address limit, and past it a caller is
    // refused before the read, unless its token is one this process already let in (so a
    // neighbour's failures behind one address do not lock out a working integrator).
    // Counted by the guard like the sign-in's failures (`FloodGuard::allows_as` before the
    // read, `failed` once a token is found wrong): so report-only, store faults, the metrics
    // and the sizing chart apply to them as to every other guarded address.
    let limits = snapshot.settings.limits_of(Address::ApiAuthFailure);
    let policy = snapshot.settings.policy_of(Address::ApiAuthFailure);
    let counting = FloodGuard::is_counting(&limits);
    let address_of = || login::address_key(&snapshot.keys, client);
    // Named as the fast refusal names it (`refusal::refuse`), so `api_seen` holds what it
    // seeks; by the very hash it computed, when it did.
    let key = match request.extensions().get::<refusal::NamedToken>() {
        Some(named) => Some(named.0),
        None => snapshot.token_key(bearer),
    };
    let known = key.is_some_and(|key| state.api_seen.read(&key, |_| ()).is_some());
    // A token this process let in costs no address hash and no count.
    let address = (counting && !known).then(address_of);
    if let Some(address) = &address {
        let decision =
            state
                .guard
                .allows_as(Address::ApiAuthFailure, address, TOTAL, &limits, policy);
        if let Decision::Refused { .. } = decision {
            return Err(too_many_failures(lang, limits.period));
        }
    }
    let failed = |refusal: Response| {
        if counting {
            let address = address.clone().unwrap_or_else(address_of);
            state
                .guard
                .failed(Address::ApiAuthFailure, &address, TOTAL, &limits);
        }
        refusal
    };
    let Some(key) = key else {
        return Err(failed(unauthorized()));
    };
    let token = match api::authenticate_hash(&state.db, &api::stored_hash(&key)).await {
        Ok(Some(t)) => Arc::new(t),
        Ok(None) => {
            state.api_seen.forget(&key);
            return Err(failed(unauthorized()));
        }
        Err(e) => return Err(ApiError::from(e).into_response()),
    };
    state.api_seen.put(key, token.clone());
    // The bucket is taken before a signature's key is looked up, at the signed tier (the most
    // this token can have): a signature that turns out bad has spent its request, so bad
    // signatures cost at most a bucket's worth of reads, and past it the fast refusal answers
    // them from memory.
    let signed = request.headers().contains_key(KEY_ID_HEADER);
    let settings = &snapshot.settings;
    let limited = if settings.request_limits_enabled {
        let policy = api::policy(&token, settings, signed);
        let verdict = state.api_buckets.take(token.id, policy);
        if !verdict.allowed {
            // Inside the security headers' layer, which adds HSTS itself where it is due.
            return Err(refusal::rate_limited(policy, verdict, false));
        }
        Some((policy, verdict))
    } else {
        None
    };
    // A signature covers the body, so a signed request's body is read here (bounded).
    let request = if signed {
        let (parts, body) = request.into_parts();
        let body = super::body::read(body)
            .await
            .map_err(|refused| body_refused(lang, refused))?;
        let check = api::check_signature(
            &state.db,
            &Signed {
                key_id: header(&parts.headers, KEY_ID).unwrap_or(""),
                timestamp: header(&parts.headers, "orchestra-timestamp").unwrap_or(""),
                signature: header(&parts.headers, "orchestra-signature").unwrap_or(""),
                method: parts.method.as_str(),
                path: parts.uri.path(),
                body: &body,
            },
            state.clock.now_secs(),
        )
        .await
        .map_err(|e| ApiError::from(e).into_response())?;
        if check == Signature::Refused {
            // Counted as a bad token is: an address sending bad signatures is refused before
            // the database once its tokens are ones this process does not know.
            return Err(failed(
                ApiError::new(
                    StatusCode::UNAUTHORIZED,
                    "bad_signature",
                    Message::new("api-bad-signature").render(lang),
                )
                .into_response(),
            ));
        }
        Request::from_parts(parts, Body::from(body))
    } else {
        request
    };
    if let Err(e) = store::api::touch_token(&state.db, token.id, store::now()).await {
        // A write that met the database unable to write (another process's write lock past
        // the acquire timeout) would meet it again: answered now, within that timeout, not
        // after a second wait. A read goes on: reads do not need the lock.
        if request.method() != axum::http::Method::GET && store::is_unavailable(&e) {
            return Err(ApiError::from(e).into_response());
        }
        tracing::warn!(error = %e, "could not note an API token's use");
    }
    let mut request = request;
    request.extensions_mut().insert(Caller(token, snapshot));
    Ok((request, limited))
}

/// The ids in the path. One that is not a number names nothing: the API's JSON 404, as a
/// missing instance gets, where the site's `Path` answers its 404 page.
struct Id<T>(T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned + Send> axum::extract::FromRequestParts<S>
    for Id<T>
{
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, ApiError> {
        match super::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(super::extract::Path(value)) => Ok(Id(value)),
            Err(_) => {
                let lang = parts.extensions.get::<Lang>().copied().unwrap_or_default();
                Err(ApiError::not_found(lang))
            }
        }
    }
}

fn caller(request_caller: &Option<axum::Extension<Caller>>) -> Result<Arc<TokenRow>, ApiError> {
    request_caller
        .as_ref()
        .map(|c| c.0.0.clone())
        .ok_or_else(|| ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", ""))
}

/// The snapshot `gate` decided under (see [`Caller`]).
fn snapshot_of(
    request_caller: &Option<axum::Extension<Caller>>,
) -> Result<Arc<Snapshot>, ApiError> {
    request_caller
        .as_ref()
        .map(|c| c.0.1.clone())
        .ok_or_else(|| ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", ""))
}

/// A body the API did not read whole (`http::body`): its cap, its deadline or the budget.
pub(crate) fn body_refused(lang: Lang, refused: super::body::Refused) -> Response {
    use super::body::Refused;
    let (status, code, message) = match refused {
        Refused::TooLarge => (
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            "api-body-too-large",
        ),
        Refused::TimedOut => (StatusCode::REQUEST_TIMEOUT, "timeout", "api-body-timed-out"),
        Refused::Busy => (StatusCode::SERVICE_UNAVAILABLE, "busy", "api-busy"),
        Refused::Broken => (StatusCode::BAD_REQUEST, "bad_request", "api-bad-json"),
    };
    let mut response =
        ApiError::new(status, code, Message::new(message).render(lang)).into_response();
    if matches!(refused, Refused::TooLarge | Refused::TimedOut) {
        // The body was left unread: the connection cannot carry another request.
        response.headers_mut().insert(
            axum::http::header::CONNECTION,
            axum::http::HeaderValue::from_static("close"),
        );
    }
    response
}

/// A call's body, read within its route's cap and the body deadline (`http::body`); a body
/// refused there is the API's JSON error, never a framework's message. Whether it was declared
/// JSON is kept for [`Read::json`], which a handler calls once the token's scope let it on.
struct Read {
    bytes: Bytes,
    declared_json: bool,
}

impl axum::extract::FromRequest<AppState> for Read {
    type Rejection = Response;

    async fn from_request(request: Request, _: &AppState) -> Result<Self, Response> {
        let lang = request
            .extensions()
            .get::<Lang>()
            .copied()
            .unwrap_or_default();
        let declared_json = request
            .headers()
            .get(axum::http::header::CONTENT_TYPE)
            .is_some_and(|v| is_json(v.as_bytes()));
        // Read whatever its type: the connection stays good for the next request.
        let bytes = super::body::read(request.into_body())
            .await
            .map_err(|refused| body_refused(lang, refused))?;
        Ok(Read {
            bytes,
            declared_json,
        })
    }
}

impl Read {
    /// The body, when it is declared JSON or is empty (a cancel's may be); otherwise `415
    /// unsupported_media_type`. After the scope's check, which says nothing of the body.
    fn json(self, lang: Lang) -> Result<Bytes, ApiError> {
        if self.declared_json || self.bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(self.bytes);
        }
        Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            Message::new("api-unsupported-media-type").render(lang),
        ))
    }
}

/// Whether a `Content-Type` is JSON: `application/json` or a `+json` type, any parameters
/// (`; charset=utf-8`) and any case.
fn is_json(value: &[u8]) -> bool {
    let essence = value.split(|&b| b == b';').next().unwrap_or_default();
    let essence = essence.trim_ascii().to_ascii_lowercase();
    essence == b"application/json"
        || (essence.starts_with(b"application/") && essence.ends_with(b"+json"))
}

/// `403 forbidden_scope` unless the token's scope has `ability`. Decided from the token alone,
/// before anything is read, so the answer says nothing about any instance.
fn needs(token: &TokenRow, ability: Ability, lang: Lang) -> Result<(), ApiError> {
    if token.scope.may(ability) {
        return Ok(());
    }
    Err(ApiError::forbidden_scope(
        lang,
        Message::new("api-forbidden-scope").arg("ability", ability.as_str()),
    ))
}

/// The instance, when it is within the token's reach; otherwise the very answer a missing
/// instance gets (`404 not_found`), so a token cannot learn which instances exist beyond it.
async fn reached(
    state: &AppState,
    token: &TokenRow,
    id: i64,
    lang: Lang,
) -> Result<Reached, ApiError> {
    match store::api::reached(&state.db, id).await? {
        Some(r)
            if token
                .scope
                .reaches(token.id, r.api_token_id, &r.workflow_name) =>
        {
            Ok(r)
        }
        _ => Err(ApiError::not_found(lang)),
    }
}

/// A JSON body read as ours: malformed JSON is a 422, never a framework's message, and so is
/// text holding a NUL, which PostgreSQL cannot store (see `http::form`).
fn body<T: for<'de> Deserialize<'de>>(lang: Lang, bytes: &Bytes) -> Result<T, ApiError> {
    if json_holds_nul(bytes) {
        return Err(ApiError::invalid(lang, "body", &Message::new("api-nul")));
    }
    // serde's own error says where, not which field, and in English: the path is read as it
    // goes (serde_path_to_error, already in the tree through axum's Json), the words are ours.
    let reader = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(reader).map_err(|e| {
        let path = e.path().to_string();
        match e.inner().classify() {
            // A path from an array (`[0]`) is a body that is not an object at all.
            serde_json::error::Category::Data if path != "." && !path.starts_with('[') => {
                ApiError::invalid(lang, path, &Message::new("api-field-type"))
            }
            _ => ApiError::invalid(lang, "body", &Message::new("api-bad-json")),
        }
    })
}

/// Whether a JSON text holds a NUL in a string: JSON has no raw control characters in
/// strings, so only the escape `\u0000` spells one, when an odd number of backslashes stands
/// before the `u` (an even number is escaped backslashes and then the letter).
fn json_holds_nul(json: &[u8]) -> bool {
    json.windows(5).enumerate().any(|(i, w)| {
        w.eq_ignore_ascii_case(b"u0000")
            && json[..i].iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1
    })
}

fn steps_of(definition: &Definition) -> Vec<wire::Step> {
    definition
        .steps
        .iter()
        .map(|s| wire::Step {
            title: s.title.clone(),
            kind: s.interaction.kind(),
            participants: names(s.participants()),
            shows: shown_numbers(s),
        })
        .collect()
}

/// The steps (from 1) whose answers a step shows.
fn shown_numbers(step: &crate::domain::workflow::Step) -> Vec<i64> {
    step.shows.iter().map(|&i| i as i64 + 1).collect()
}

fn names<'a>(participants: impl IntoIterator<Item = &'a Participant>) -> Vec<String> {
    participants
        .into_iter()
        .map(|p| p.as_str().to_owned())
        .collect()
}

/// The workflows the token's scope covers.
#[utoipa::path(
    get,
    path = "/api/v1/workflows",
    operation_id = "listWorkflows",
    summary = "List workflows",
    description = "Needs no ability; lists only the workflows the token's scope covers.",
    responses((status = 200, description = "the workflows", body = wire::Workflows))
)]
async fn workflows(
    State(state): State<AppState>,
    who: Option<axum::Extension<Caller>>,
) -> ApiResult {
    let token = caller(&who)?;
    let workflows = store::workflows::list(&state.db)
        .await?
        .into_iter()
        .filter(|w| token.scope.covers(&w.name))
        .map(|w| {
            let d = Definition::from_json(&w.definition).unwrap_or(Definition { steps: vec![] });
            wire::Workflow {
                participants: names(d.participants()),
                steps: steps_of(&d),
                name: w.name,
                label: w.label,
                version: w.version,
            }
        })
        .collect();
    Ok(Json(wire::Workflows { workflows }).into_response())
}

#[utoipa::path(
    post,
    path = "/api/v1/instances",
    operation_id = "startInstance",
    summary = "Start an instance of a workflow about a subject",
    description = "Needs the start ability, and the workflow among the token's workflows. With an Idempotency-Key, a retry makes no second instance: it is answered the first answer again.",
    params(wire::IdempotencyKey),
    request_body = wire::StartInstance,
    responses(
        (status = 201, description = "the instance (or, for a retried Idempotency-Key, the first answer again)", body = wire::Instance,
            headers(
                ("Location" = String, description = "the instance's own path, /api/v1/instances/{id}"),
                ("Idempotent-Replayed" = String, description = "`true` on an answer replayed for a retried Idempotency-Key; absent otherwise"),
            )),
        (status = 403, description = "the token's scope lacks start or this workflow (error: forbidden_scope), or its cap of running instances is reached (error: running_instance_cap)", body = wire::Error),
        (status = 409, description = "the first request with this Idempotency-Key is still at work (error: idempotency_key_in_progress)", body = wire::Error),
        (status = 422, description = "bad input; `field` names it, `Idempotency-Key` for a bad key (error: invalid); or the Idempotency-Key was used for another request (error: idempotency_key_reused)", body = wire::Error),
    )
)]
async fn start(
    State(state): State<AppState>,
    lang: Lang,
    who: Option<axum::Extension<Caller>>,
    headers: HeaderMap,
    read: Read,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Start, lang)?;
    let bytes = read.json(lang)?;
    let key = idempotency_key(lang, &headers)?;
    let input: wire::StartInstance = body(lang, &bytes)?;
    let snapshot = snapshot_of(&who)?;
    let work = start_now(state.clone(), lang, token.clone(), snapshot.clone(), input);
    let request = ("POST", "/api/v1/instances".to_owned(), &bytes);
    once(&state, lang, &token, &snapshot, key, request, work).await
}

/// A start's work, once its request is read (and its key, when it has one, reserved).
async fn start_now(
    state: AppState,
    lang: Lang,
    token: Arc<TokenRow>,
    snapshot: Arc<Snapshot>,
    input: wire::StartInstance,
) -> Result<Answer, ApiError> {
    let Some(name) = input.workflow.filter(|w| !w.is_empty()) else {
        return Err(ApiError::invalid(
            lang,
            "workflow",
            &Message::new("api-workflow-missing"),
        ));
    };
    // Before the lookup: a name outside the scope gets one answer whether it exists or not.
    if !token.scope.covers(&name) {
        return Err(ApiError::forbidden_scope(
            lang,
            Message::new("api-forbidden-workflow").arg("workflow", name),
        ));
    }
    let Some(workflow) = store::workflows::by_name(&state.db, &name).await? else {
        return Err(ApiError::invalid(
            lang,
            "workflow",
            &Message::new("instance-workflow-unknown"),
        ));
    };
    let subject = input.subject.unwrap_or(wire::Subject {
        title: None,
        body: None,
    });
    let quota = links::Quota {
        token: token.id,
        running_cap: snapshot.settings.api_max_running_instances,
    };
    let title = subject.title.unwrap_or_default();
    let contacts: Vec<crate::domain::mail::ContactInput> = input
        .participants
        .unwrap_or_default()
        .into_iter()
        .map(|(participant, c)| crate::domain::mail::ContactInput {
            participant,
            email: c.email.unwrap_or_default(),
            name: c.name.unwrap_or_default(),
            lang: c.lang.unwrap_or_default(),
        })
        .collect();
    // An entry without an address is refused here (the forms' blank rows are skipped, a
    // body's are not: it named the participant).
    if let Some(c) = contacts.iter().find(|c| c.email.trim().is_empty()) {
        return Err(ApiError::invalid(
            lang,
            format!(
                "participants.{}.email",
                c.participant.chars().take(40).collect::<String>()
            ),
            &Message::new("contact-email-invalid")
                .arg("max", crate::domain::mail::MAX_EMAIL.to_string()),
        ));
    }
    let id = match links::start(
        &state.db,
        workflow.id,
        &title,
        &subject.body.unwrap_or_default(),
        &Actor::Api(token.name.clone()),
        Some(quota),
        &contacts,
        Some(&api_mail(&token, &snapshot)),
    )
    .await?
    {
        Ok(id) => id,
        Err(refusals) => {
            let refusal = refusals.into_iter().next().unwrap_or(Refusal::TitleInvalid);
            return Err(refused(lang, &refusal));
        }
    };
    let row = store::instances::by_id(&state.db, id)
        .await?
        .ok_or_else(|| ApiError::not_found(lang))?;
    made(
        StatusCode::CREATED,
        Some(format!("/api/v1/instances/{id}")),
        &instance_of(&state, row, None, true).await?,
    )
}

/// How many history lines an instance's view holds; older ones are read with its
/// `history_cursor`.
const HISTORY_PAGE: i64 = 100;

async fn instance_of(
    state: &AppState,
    row: InstanceRow,
    history_before: Option<i64>,
    with_contacts: bool,
) -> Result<wire::Instance, ApiError> {
    let id = row.id;
    let participants = if with_contacts {
        let contacts = store::mails::contacts_of(&state.db, id).await?;
        Some(
            contacts
                .into_iter()
                .map(|c| {
                    (
                        c.participant,
                        wire::Contact {
                            email: Some(c.email),
                            name: Some(c.name),
                            lang: Some(c.lang),
                        },
                    )
                })
                .collect(),
        )
    } else {
        None
    };
    let definition = state.versions.get(&state.db, row.version_id).await?;
    let version = store::workflows::version(&state.db, row.version_id)
        .await?
        .map_or(0, |v| v.number);
    let (workflow_name, workflow) =
        match store::workflows::name_and_label(&state.db, row.workflow_id).await? {
            Some((name, label)) => (Some(name), Some(label)),
            None => (None, None),
        };
    let current_step = if row.state.is_over() {
        None
    } else {
        definition
            .steps
            .get(row.step_index as usize)
            .map(|s| wire::CurrentStep {
                number: row.step_index + 1,
                title: s.title.clone(),
                kind: s.interaction.kind(),
                participants: names(s.participants()),
                shows: shown_numbers(s),
            })
    };
    let participants_left = names(&links::participants_left(&state.db, &row, &definition).await?);
    let page = lists::history(&state.db, id, history_before, HISTORY_PAGE).await?;
    let history = page
        .lines
        .into_iter()
        .map(|h| wire::HistoryEntry {
            at: h.at,
            event: h.event.as_str(),
            step: h.step_index + 1,
            step_title: h.step_title,
            participant: h.participant,
            answer: serde_json::from_str::<Value>(&h.answer).unwrap_or(Value::Null),
        })
        .collect();
    Ok(wire::Instance {
        participants,
        id: row.id,
        workflow,
        workflow_name,
        version,
        state: row.state.as_str(),
        subject: wire::ShownSubject {
            title: row.subject_title,
            body: row.subject_body,
        },
        current_step,
        steps: definition.steps.len(),
        participants_left,
        history,
        history_total: page.total,
        history_cursor: page.older.map(lists::cursor),
    })
}

#[utoipa::path(
    get,
    path = "/api/v1/instances/{id}",
    operation_id = "readInstance",
    summary = "Read an instance: state, current step, participants, history",
    description = "Needs the read ability; an instance beyond the token's reach is 404, as a missing one is.",
    params(("id" = i64, Path, description = "the instance"), wire::HistoryCursor),
    responses(
        (status = 200, description = "the instance, with its newest 100 history lines (oldest first) and the cursor to older ones", body = wire::Instance),
        (status = 403, description = "the token's scope lacks read (error: forbidden_scope)", body = wire::Error),
        (status = 404, description = "no such instance, or one beyond the token's reach (error: not_found)", body = wire::Error),
        (status = 422, description = "a history_cursor this API did not give (error: invalid, field: history_cursor)", body = wire::Error),
    )
)]
async fn instance(
    State(state): State<AppState>,
    lang: Lang,
    who: Option<axum::Extension<Caller>>,
    Id(id): Id<i64>,
    RawQuery(query): RawQuery,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Read, lang)?;
    let pairs = query_pairs(query.as_deref());
    let before = match last(&pairs, "history_cursor") {
        None => None,
        Some(text) => Some(lists::parse_cursor(text).ok_or_else(|| {
            ApiError::invalid(lang, "history_cursor", &Message::new("api-bad-cursor"))
        })?),
    };
    let reached = reached(&state, &token, id, lang).await?;
    let own = reached.api_token_id == Some(token.id);
    Ok(Json(instance_of(&state, reached.instance, before, own).await?).into_response())
}

/// A query string's pairs; one that does not decode is no pairs (each field then is absent).
fn query_pairs(query: Option<&str>) -> Vec<(String, String)> {
    serde_urlencoded::from_str(query.unwrap_or_default()).unwrap_or_default()
}

/// A query field's last value; an empty one is absent.
fn last<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .filter(|v| !v.is_empty())
}

/// The instances the token reaches, newest first, a page at a time.
#[utoipa::path(
    get,
    path = "/api/v1/instances",
    operation_id = "listInstances",
    summary = "List the instances the token reaches, newest first, a page at a time",
    description = "Needs the read ability; lists only the instances the token's scope reaches (its own unless it reaches all, and only its workflows). Pass `next_cursor` back as `cursor` for the next page; it is null on the last page. With `q`, a page looks through at most 10,000 instances, so a page may hold fewer than `limit` (even none) while `next_cursor` is still set.",
    params(wire::ListInstances),
    responses(
        (status = 200, description = "a page of instances", body = wire::InstanceList),
        (status = 403, description = "the token's scope lacks read (error: forbidden_scope)", body = wire::Error),
        (status = 422, description = "a bad limit, cursor or state; `field` names it (error: invalid)", body = wire::Error),
    )
)]
async fn list(
    State(state): State<AppState>,
    lang: Lang,
    who: Option<axum::Extension<Caller>>,
    RawQuery(query): RawQuery,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Read, lang)?;
    let pairs = query_pairs(query.as_deref());
    let limit = match last(&pairs, "limit") {
        None => lists::PAGE,
        Some(text) => text
            .parse::<i64>()
            .ok()
            .filter(|n| (1..=lists::MAX_PAGE).contains(n))
            .ok_or_else(|| {
                ApiError::invalid(
                    lang,
                    "limit",
                    &Message::new("api-bad-limit").arg("max", lists::MAX_PAGE.to_string()),
                )
            })?,
    };
    let from =
        match last(&pairs, "cursor") {
            None => lists::From::Newest,
            Some(text) => lists::From::Before(lists::parse_cursor(text).ok_or_else(|| {
                ApiError::invalid(lang, "cursor", &Message::new("api-bad-cursor"))
            })?),
        };
    let state_filter = match last(&pairs, "state") {
        None => None,
        Some(word) => Some(
            lists::parse_state(word)
                .ok_or_else(|| ApiError::invalid(lang, "state", &Message::new("api-bad-state")))?,
        ),
    };
    let mut filter = lists::filter(None, state_filter, None, last(&pairs, "q"));
    if let Some(name) = last(&pairs, "workflow") {
        // An unknown name, like one outside the scope, lists nothing: no answer tells them apart.
        filter.workflows = Some(lists::workflow_ids(&state.db, name).await?);
    }
    let filter = lists::within_scope(&state.db, &token.scope, token.id, filter).await?;
    let listed = lists::page(&state.db, &filter, from, limit).await?;
    let instances = listed
        .rows
        .into_iter()
        .map(|r| wire::InstanceSummary {
            id: r.id,
            workflow: r.workflow_label,
            workflow_name: r.workflow_name,
            state: r.state.as_str(),
            title: r.subject_title,
            started_by: r.started_by,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
        .collect();
    Ok(Json(wire::InstanceList {
        instances,
        next_cursor: listed.more.map(lists::cursor),
    })
    .into_response())
}

#[utoipa::path(
    post,
    path = "/api/v1/instances/{id}/links",
    operation_id = "issueLink",
    summary = "Issue a link for a participant; the URL is returned once",
    description = "Needs the links ability; an instance beyond the token's reach is 404, as a missing one is. With an Idempotency-Key, a retry issues no second link: it is answered the first link again.",
    params(("id" = i64, Path, description = "the instance"), wire::IdempotencyKey),
    request_body = wire::IssueLink,
    responses(
        (status = 202, description = "with \"send\": true, the link's email is queued (the sender signs the link when it sends)", body = wire::Queued),
        (status = 201, description = "the link (or, for a retried Idempotency-Key, the first answer again)", body = wire::Link,
            headers(
                ("Location" = String, description = "the link's own path, where it is revoked: /api/v1/instances/{id}/links/{link}"),
                ("Idempotent-Replayed" = String, description = "`true` on an answer replayed for a retried Idempotency-Key; absent otherwise"),
            )),
        (status = 403, description = "the token's scope lacks links (error: forbidden_scope), or the instance's daily cap of links is reached (error: link_cap)", body = wire::Error),
        (status = 404, description = "no such instance, or one beyond the token's reach (error: not_found)", body = wire::Error),
        (status = 409, description = "the first request with this Idempotency-Key is still at work (error: idempotency_key_in_progress)", body = wire::Error),
        (status = 422, description = "bad input; `field` names it, `Idempotency-Key` for a bad key (error: invalid); or the Idempotency-Key was used for another request (error: idempotency_key_reused)", body = wire::Error),
    )
)]
async fn issue(
    State(state): State<AppState>,
    lang: Lang,
    who: Option<axum::Extension<Caller>>,
    Id(id): Id<i64>,
    headers: HeaderMap,
    read: Read,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Links, lang)?;
    let bytes = read.json(lang)?;
    let key = idempotency_key(lang, &headers)?;
    let input: wire::IssueLink = body(lang, &bytes)?;
    let snapshot = snapshot_of(&who)?;
    let work = issue_now(
        state.clone(),
        lang,
        token.clone(),
        snapshot.clone(),
        id,
        input,
    );
    let request = ("POST", format!("/api/v1/instances/{id}/links"), &bytes);
    once(&state, lang, &token, &snapshot, key, request, work).await
}

/// A link issue's work, once its request is read (and its key, when it has one, reserved).
async fn issue_now(
    state: AppState,
    lang: Lang,
    token: Arc<TokenRow>,
    snapshot: Arc<Snapshot>,
    id: i64,
    input: wire::IssueLink,
) -> Result<Answer, ApiError> {
    let reached = reached(&state, &token, id, lang).await?;
    if input.send == Some(true) {
        if input.ttl_seconds.is_some() {
            return Err(ApiError::invalid(
                lang,
                "ttl_seconds",
                &Message::new("api-send-ttl"),
            ));
        }
        let participant = input.participant.as_deref().unwrap_or("");
        return match links::send(
            &state.db,
            &state.versions,
            id,
            participant,
            Some(&api_mail(&token, &snapshot)),
        )
        .await?
        {
            Ok(()) => made(
                StatusCode::ACCEPTED,
                None,
                &wire::Queued {
                    participant: participant.trim().to_owned(),
                    queued: true,
                },
            ),
            Err(refusal) => Err(refused(lang, &refusal)),
        };
    }
    let definition = state
        .versions
        .get(&state.db, reached.instance.version_id)
        .await?;
    let by = Actor::Api(token.name.clone());
    let order = links::Order {
        participant: input.participant.as_deref().unwrap_or(""),
        ttl: input
            .ttl_seconds
            .unwrap_or(snapshot.settings.default_link_ttl),
        now: state.clock.now_secs(),
        by: &by,
        daily_cap: Some(snapshot.settings.api_max_links_per_instance_per_day),
    };
    let result = links::issue_on(
        &state.db,
        &snapshot.keys,
        &snapshot.settings.base_url,
        &reached.instance,
        &definition,
        &order,
    )
    .await?;
    match result {
        Ok(issued) => made(
            StatusCode::CREATED,
            // Where it is revoked: a link's URL is shown once, its resource is not the URL.
            Some(format!("/api/v1/instances/{id}/links/{}", issued.id)),
            &wire::Link {
                id: issued.id,
                url: issued.url,
                expires: issued.expires,
            },
        ),
        Err(refusal) => Err(refused(lang, &refusal)),
    }
}

/// What a POST that makes something answers, kept whole (status, `Location`, the JSON's very
/// bytes) so that a retry with its `Idempotency-Key` is sent the same.
fn made(
    status: StatusCode,
    location: Option<String>,
    value: &impl serde::Serialize,
) -> Result<Answer, ApiError> {
    let body = serde_json::to_string(value).map_err(|e| {
        tracing::error!(error = %e, "an API answer did not serialize");
        ApiError::internal()
    })?;
    Ok(Answer {
        status: status.as_u16(),
        location,
        body,
    })
}

/// The header a replayed answer carries, as Stripe's does.
const REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

fn answered(answer: Answer, replayed: bool) -> Response {
    let mut response = Response::new(Body::from(answer.body));
    *response.status_mut() =
        StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    headers.insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    if let Some(location) = answer
        .location
        .and_then(|l| axum::http::HeaderValue::try_from(l).ok())
    {
        headers.insert(axum::http::header::LOCATION, location);
    }
    if replayed {
        headers.insert(REPLAYED, axum::http::HeaderValue::from_static("true"));
    }
    response
}

/// The request's `Idempotency-Key`, when it sends one; a key that is not 1 to 255 visible ASCII
/// characters is bad input naming the header.
fn idempotency_key(lang: Lang, headers: &HeaderMap) -> Result<Option<idempotency::Key>, ApiError> {
    let mut sent = headers.get_all(idempotency::HEADER).iter();
    let Some(value) = sent.next() else {
        return Ok(None);
    };
    let key = match sent.next() {
        // Two keys name no one request.
        Some(_) => None,
        None => idempotency::Key::parse(value.as_bytes()),
    };
    key.map(Some).ok_or_else(|| {
        ApiError::invalid(
            lang,
            "Idempotency-Key",
            &Message::new("api-idempotency-key-invalid"),
        )
    })
}

/// Runs a POST's `work` once per `Idempotency-Key` (`domain::api::idempotency`): without a key
/// it simply runs; with one, the key is reserved first, and a retry gets the first answer again,
/// a reuse for another request (`request`: method, path, body) is refused, and a request while
/// the first is at work is told so.
async fn once(
    state: &AppState,
    lang: Lang,
    token: &TokenRow,
    snapshot: &Snapshot,
    key: Option<idempotency::Key>,
    request: (&str, String, &Bytes),
    work: impl Future<Output = Result<Answer, ApiError>> + Send + 'static,
) -> ApiResult {
    let Some(key) = key else {
        return work.await.map(|answer| answered(answer, false));
    };
    let (method, path, bytes) = request;
    // The body as its JSON value, written again: the same request with other spacing or
    // another order of its fields is the same request.
    let canonical = serde_json::from_slice::<Value>(bytes)
        .and_then(|v| serde_json::to_vec(&v))
        .unwrap_or_else(|_| bytes.to_vec());
    let fingerprint = idempotency::fingerprint(&snapshot.keys, method, &path, &canonical);
    let now = state.clock.now_secs();
    match idempotency::begin(&state.db, &snapshot.keys, token.id, &key, &fingerprint, now).await? {
        Begun::Replay(answer) => Ok(answered(answer, true)),
        Begun::Reused => Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "idempotency_key_reused",
            Message::new("api-idempotency-key-reused").render(lang),
        )),
        Begun::InProgress => Err(ApiError::new(
            StatusCode::CONFLICT,
            "idempotency_key_in_progress",
            Message::new("api-idempotency-key-in-progress").render(lang),
        )),
        Begun::Fresh(reservation) => {
            let db = state.db.clone();
            // A task of its own: it runs to its end even if the client leaves mid-way (which
            // drops this handler), so a reservation is always either answered or given up.
            let done = tokio::spawn(async move {
                let result = work.await;
                let kept = match &result {
                    Ok(answer) => reservation.complete(&db, answer).await,
                    Err(_) => reservation.release(&db).await,
                };
                if let Err(e) = kept {
                    tracing::error!(error = %e, "an idempotency record was not kept");
                }
                result
            })
            .await;
            match done {
                Ok(result) => result.map(|answer| answered(answer, false)),
                Err(e) => {
                    tracing::error!(error = %e, "an idempotent request's work failed");
                    Err(ApiError::internal())
                }
            }
        }
    }
}

/// A refusal of the domain as the API answers it: a hard cap is a 403 with its own code, the
/// rest a 422 naming the request's field.
/// What a token's requests that email links are held to.
fn api_mail<'a>(token: &TokenRow, snapshot: &'a Snapshot) -> crate::domain::mail::ApiMail<'a> {
    let settings = &snapshot.settings;
    crate::domain::mail::ApiMail {
        keys: &snapshot.keys,
        token: token.id,
        daily_cap: settings.api_max_links_per_instance_per_day,
        per_address: settings.api_max_emails_per_address_per_hour,
        per_token: settings.api_max_emails_per_token_per_hour,
    }
}

fn refused(lang: Lang, refusal: &Refusal) -> ApiError {
    let code = match refusal {
        Refusal::EmailRate(_) => {
            return ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "email_rate",
                refusal.message().render(lang),
            );
        }
        Refusal::RunningCap(_) => "running_instance_cap",
        Refusal::LinkCap(_) => "link_cap",
        Refusal::Contact(c) => {
            let field = match c.part {
                crate::domain::mail::Part::Participant => format!("participants.{}", c.participant),
                part => format!("participants.{}.{}", c.participant, part.as_str()),
            };
            return ApiError::invalid(lang, field, &refusal.message());
        }
        _ => {
            let field = match refusal.field() {
                "title" => "subject.title",
                "body" => "subject.body",
                "ttl" => "ttl_seconds",
                other => other,
            };
            return ApiError::invalid(lang, field, &refusal.message());
        }
    };
    ApiError::new(StatusCode::FORBIDDEN, code, refusal.message().render(lang))
}

#[utoipa::path(
    delete,
    path = "/api/v1/instances/{id}/links/{link}",
    operation_id = "revokeLink",
    summary = "Revoke one link",
    description = "Needs the links ability; a link of an instance beyond the token's reach is 404, as a missing one is.",
    params(
        ("id" = i64, Path, description = "the instance"),
        ("link" = i64, Path, description = "the link, as its issue answered"),
    ),
    responses(
        (status = 204, description = "revoked"),
        (status = 403, description = "the token's scope lacks links (error: forbidden_scope)", body = wire::Error),
        (status = 404, description = "no such live link, or its instance is beyond the token's reach (error: not_found)", body = wire::Error),
    )
)]
async fn revoke(
    State(state): State<AppState>,
    lang: Lang,
    who: Option<axum::Extension<Caller>>,
    Id((id, link)): Id<(i64, i64)>,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Links, lang)?;
    reached(&state, &token, id, lang).await?;
    if !links::revoke_one(&state.db, id, link, &Actor::Api(token.name.clone())).await? {
        return Err(ApiError::not_found(lang));
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[utoipa::path(
    post,
    path = "/api/v1/instances/{id}/cancel",
    operation_id = "cancelInstance",
    summary = "Cancel a running instance",
    description = "Needs the start ability; an instance beyond the token's reach is 404, as a missing one is. The instance ends as cancelled: every link and payment return of it stops working, a payment under way is closed, its place under the token's running-instance cap is freed, and its history says which token cancelled it and why. The body may be empty.",
    params(("id" = i64, Path, description = "the instance")),
    request_body(content = wire::CancelInstance, description = "optional"),
    responses(
        (status = 200, description = "the instance, now cancelled", body = wire::Instance),
        (status = 403, description = "the token's scope lacks start (error: forbidden_scope)", body = wire::Error),
        (status = 404, description = "no such instance, or one beyond the token's reach (error: not_found)", body = wire::Error),
        (status = 409, description = "the instance has ended already; nothing changed (error: ended)", body = wire::Error),
        (status = 422, description = "the reason is too long; `field` is reason (error: invalid)", body = wire::Error),
    )
)]
async fn cancel(
    State(state): State<AppState>,
    lang: Lang,
    who: Option<axum::Extension<Caller>>,
    Id(id): Id<i64>,
    read: Read,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Start, lang)?;
    let bytes = read.json(lang)?;
    let input: wire::CancelInstance = if bytes.iter().all(u8::is_ascii_whitespace) {
        wire::CancelInstance { reason: None }
    } else {
        body(lang, &bytes)?
    };
    let own = reached(&state, &token, id, lang).await?.api_token_id == Some(token.id);
    let by = Actor::Api(token.name.clone());
    let reason = input.reason.unwrap_or_default();
    match links::cancel(&state.db, id, &by, &reason).await? {
        Ok(()) => {}
        Err(links::CancelRefusal::Missing(_)) => return Err(ApiError::not_found(lang)),
        Err(refusal @ links::CancelRefusal::ReasonTooLong) => {
            return Err(ApiError::invalid(lang, "reason", &refusal.message()));
        }
        Err(refusal @ links::CancelRefusal::Ended(_)) => {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "ended",
                refusal.message().render(lang),
            ));
        }
    }
    let row = store::instances::by_id(&state.db, id)
        .await?
        .ok_or_else(|| ApiError::not_found(lang))?;
    Ok(Json(instance_of(&state, row, None, own).await?).into_response())
}

#[utoipa::path(
    post,
    path = "/api/v1/webhooks",
    operation_id = "createWebhook",
    summary = "Register a webhook endpoint for the instances this token starts",
    description = "Needs the start ability. The endpoint is sent a signed message (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature) for each event it takes of the instances this token started, and of no other; it stops receiving when the token is revoked. The answer holds its signing secret, shown this once. The URL is checked as the administrators' are: https, to a public address. See docs/delivery.md.",
    request_body = wire::CreateWebhook,
    responses(
        (status = 201, description = "the endpoint, with its signing secret (shown this once)", body = wire::CreatedWebhook),
        (status = 403, description = "the token's scope lacks start (error: forbidden_scope)", body = wire::Error),
        (status = 422, description = "a URL that is not https to a public address, or an unknown event; `field` is url or events (error: invalid)", body = wire::Error),
    )
)]
async fn create_webhook(
    State(state): State<AppState>,
    lang: Lang,
    who: Option<axum::Extension<Caller>>,
    read: Read,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Start, lang)?;
    let bytes = read.json(lang)?;
    let input: wire::CreateWebhook = body(lang, &bytes)?;
    let Some(url) = input.url.filter(|u| !u.trim().is_empty()) else {
        return Err(ApiError::invalid(
            lang,
            "url",
            &Message::new("webhook-url-invalid"),
        ));
    };
    let events = input.events.unwrap_or_default().join(",");
    let keys = snapshot_of(&who)?.keys.clone();
    let made = crate::domain::delivery::endpoints::create_for(
        &state.db,
        &keys,
        &url,
        Some(events.as_str()),
        Some((
            token.id,
            snapshot_of(&who)?.settings.api_max_endpoints_per_token,
        )),
        state.webhooks_private_allowed(),
    )
    .await?;
    let created = match made {
        Ok(created) => created,
        Err(refusal @ crate::domain::delivery::endpoints::Refusal::TooMany(_)) => {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "endpoint_cap",
                refusal.message().render(lang),
            ));
        }
        Err(refusal) => {
            let field = match refusal {
                crate::domain::delivery::endpoints::Refusal::UnknownEvent(_) => "events",
                _ => "url",
            };
            return Err(ApiError::invalid(lang, field, &refusal.message()));
        }
    };
    let row = store::webhooks::by_id(&state.db, created.id)
        .await?
        .ok_or_else(|| ApiError::not_found(lang))?;
    let shown = wire::Webhook::of(&row);
    let answer = wire::CreatedWebhook {
        id: shown.id,
        url: shown.url,
        events: shown.events,
        enabled: shown.enabled,
        failures: shown.failures,
        created_at: shown.created_at,
        secret: created.secret.reveal(),
    };
    Ok((StatusCode::CREATED, Json(answer)).into_response())
}

#[utoipa::path(
    get,
    path = "/api/v1/webhooks",
    operation_id = "listWebhooks",
    summary = "List this token's webhook endpoints",
    description = "Needs the start ability. Only the endpoints this token registered; never their secrets.",
    responses(
        (status = 200, description = "the token's endpoints, oldest first", body = wire::Webhooks),
        (status = 403, description = "the token's scope lacks start (error: forbidden_scope)", body = wire::Error),
    )
)]
async fn webhooks(
    State(state): State<AppState>,
    lang: Lang,
    who: Option<axum::Extension<Caller>>,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Start, lang)?;
    let webhooks = store::webhooks::of_token(&state.db, token.id)
        .await?
        .iter()
        .map(wire::Webhook::of)
        .collect();
    Ok(Json(wire::Webhooks { webhooks }).into_response())
}

#[utoipa::path(
    delete,
    path = "/api/v1/webhooks/{id}",
    operation_id = "deleteWebhook",
    summary = "Delete one of this token's webhook endpoints",
    description = "Needs the start ability. Another token's endpoint, or an administrator's, is 404, as a missing one is. Its queued deliveries and delivery log go with it.",
    params(("id" = i64, Path, description = "the endpoint")),
    responses(
        (status = 204, description = "deleted"),
        (status = 403, description = "the token's scope lacks start (error: forbidden_scope)", body = wire::Error),
        (status = 404, description = "no such endpoint of this token's (error: not_found)", body = wire::Error),
    )
)]
async fn delete_webhook(
    State(state): State<AppState>,
    lang: Lang,
    who: Option<axum::Extension<Caller>>,
    Id(id): Id<i64>,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Start, lang)?;
    if !store::webhooks::delete_of_token(&state.db, token.id, id).await? {
        return Err(ApiError::not_found(lang));
    }
    tracing::info!(endpoint = id, "webhook endpoint deleted through the API");
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// This description (`doc`): public, as a token is not needed to learn how to use one.
#[utoipa::path(
    get,
    path = "/api/v1/openapi.json",
    operation_id = "openapi",
    summary = "This description",
    security(()),
    responses((status = 200, description = "OpenAPI 3.1", content_type = "application/json"))
)]
async fn openapi() -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        doc::document(),
    )
        .into_response()
}

/// The OpenAPI description as served (the tests hold every answer to it).
pub fn description() -> &'static str {
    doc::document()
}

#[cfg(test)]
mod tests {
    /// The fast refusal runs before routing on every path under `PREFIX`: every route of the
    /// API must be under it, or a caller over its bucket would reach that route unrefused.
    #[test]
    fn every_route_is_under_the_prefix() {
        for (_, path) in super::ROUTES {
            assert!(path.starts_with(super::PREFIX), "{path}");
        }
    }
}
