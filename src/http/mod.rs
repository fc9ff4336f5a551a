//! The only place with axum and sessions, and the one that renders the pages' templates (the
//! emails' are rendered in `domain::mail::compose`). One router per area, grouped by what guards
//! them; see `router` for the order of the layers.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use axum::Router;
use axum::extract::FromRef;
use axum::response::{IntoResponse, Response};
use tower_sessions::{Expiry, SessionManagerLayer};

use crate::domain::site::Site;
use crate::i18n::Lang;
use crate::limits::flood::{self, Clock};
use crate::limits::guard::FloodGuard;
use crate::store::Db;

pub mod admin;
pub mod api;
pub mod audit;
pub mod body;
pub mod client;
pub mod common;
pub mod context;
pub mod csrf;
pub mod device;
pub mod doorway;
pub mod error;
pub mod extract;
pub mod files;
pub mod form;
pub mod front;
pub mod headers;
pub mod jwks;
pub mod lang;
pub mod metrics;
pub mod notice;
pub mod once;
pub mod page;
pub mod priority;
pub mod provider;
pub mod server;
pub mod session_store;
pub mod setup;
pub mod statics;

/// What handlers and layers share: one `Arc`, so cheap to clone. Every layer and handler
/// takes a clone per request; as a struct of fifteen `Arc`s (and the database's connection
/// options, copied) its clones and drops were 3 % of a doorway page's CPU.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl std::ops::Deref for AppState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

impl AppState {
    pub fn new(shared: Shared) -> Self {
        Self(Arc::new(shared))
    }

    /// For the builders below, before the state is shared (a copy if it already is).
    fn shared_mut(&mut self) -> &mut Shared {
        Arc::make_mut(&mut self.0)
    }
}

/// What `AppState` holds.
#[derive(Clone)]
pub struct Shared {
    pub db: Db,
    pub site: Arc<Site>,
    pub guard: Arc<FloodGuard>,
    pub clock: Clock,
    pub flood_backend: flood::Backend,
    /// Requests being answered; refusals wait for them (`priority`).
    pub work: Arc<priority::InProgress>,
    /// Parsed workflow versions: they never change, so the doorway reads them once.
    pub versions: Arc<crate::domain::workflow::versions::Cache>,
    /// The API's token buckets, by token id.
    pub api_buckets: Arc<crate::limits::bucket::Buckets>,
    /// Tokens authenticated by this process, for the API's fast refusal.
    pub api_seen: Arc<crate::domain::api::Seen>,
    /// Where argon2 runs: bounded, so sign-in attempts cannot spend the server's memory.
    pub passwords: Arc<crate::domain::password::Pool>,
    /// `ORCHESTRA_TRUSTED_PROXIES`: whose forwarded headers say who the client is.
    pub proxies: Arc<crate::proxy::TrustedProxies>,
    /// Set when forwarded headers arrived while no proxy is named (the status report warns).
    pub forwarded_seen: Arc<AtomicBool>,
    /// The request bodies' budget and deadline (`body`).
    pub bodies: Arc<body::Bodies>,
    /// Whether the cookies handlers set themselves are `Secure` (`once`): set by `app` from
    /// what it is given, like the session and CSRF cookies.
    pub secure_cookies: bool,
    /// `ORCHESTRA_WEBHOOKS_ALLOW_PRIVATE=1`, read at start: whether an endpoint may be http or
    /// inside the server's network. Shared so that a test may allow it for its own app only.
    pub webhooks_allow_private: Arc<AtomicBool>,
    /// The SMTP server participants' emails go through (`ORCHESTRA_SMTP_URL`); `None`: no
    /// email is sent, and the status report says so once a participant has an address.
    pub mailer: Option<Arc<crate::domain::mail::Mailer>>,
    /// What this server's webhook sender did, for the metrics.
    pub webhook_figures: Arc<crate::domain::delivery::send::Figures>,
    /// How long answered steps waited, for the metrics.
    pub step_waits: Arc<metrics::StepWaits>,
    /// How receipts went (downloaded, refused; the mailer counts those it emails), for the
    /// metrics.
    pub receipts: Arc<crate::domain::receipts::Figures>,
    /// The OpenID Provider administrators may sign in through (`ORCHESTRA_OIDC_*`); `None`: the
    /// sign-in page offers only the password.
    pub oidc: Option<Arc<crate::domain::oidc::Oidc>>,
}

impl AppState {
    /// Whether webhook endpoints may be http or private addresses (see the field).
    pub fn webhooks_private_allowed(&self) -> bool {
        self.webhooks_allow_private
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    pub fn with_mailer(mut self, mailer: Option<crate::domain::mail::Mailer>) -> Self {
        self.shared_mut().mailer = mailer.map(Arc::new);
        self
    }

    pub fn with_oidc(mut self, oidc: Option<crate::domain::oidc::OidcConfig>) -> Self {
        self.shared_mut().oidc = oidc.map(|c| Arc::new(crate::domain::oidc::Oidc::new(c)));
        self
    }

    pub fn with_trusted_proxies(mut self, proxies: crate::proxy::TrustedProxies) -> Self {
        self.shared_mut().proxies = Arc::new(proxies);
        self
    }

    /// The bodies' budget and deadline from the start-up configuration.
    pub fn with_body_limits(mut self, limits: &crate::config::Connections) -> Self {
        self.shared_mut().bodies = Arc::new(body::Bodies::from_config(limits));
        self
    }
}

impl FromRef<AppState> for Db {
    fn from_ref(state: &AppState) -> Db {
        state.db.clone()
    }
}

/// The whole application, as served.
///
/// Layer order, outermost first:
/// 1. before routing (`front`), on paths under the doorway's prefix the guard, and on paths
///    under the API's its fast refusal: a refusal is answered before anything else runs,
///    routing included, so it costs about what a bare 429 costs; a doorway refusal waits while
///    a request that passed is being answered;
/// 2. `common`, one service: counts the request as work in progress, which refusals let go
///    first (`priority`); one span per request (method and route, never the URI: it may hold
///    a link); picks the visitor's language for everything below, errors included (`lang`);
///    refuses writes once the database file is gone; and on the way out makes errors themed
///    pages in that language, keeps credential paths out of referrers and caches, and adds
///    the security headers (nosniff, CSP, framing, HSTS, admin no-store) to every page, error
///    pages included (the doorway's refusal has them built in);
/// 3. `body::Limit`: a body over its route's cap is refused by its declared length, unread; the
///    rest are capped, given the body deadline and counted against the bodies' budget;
/// 4. per area: for the admin and setup pages, the CSRF nonce cookie (outside the sessions, so
///    it needs none), the sessions, the sign-in check and the CSRF check.
pub fn app(state: AppState, secure_cookies: bool) -> App {
    let mut state = state;
    state.shared_mut().secure_cookies = secure_cookies;
    front::Front::new(router(state.clone(), secure_cookies), state, secure_cookies)
}

/// The app as served (`app`): a tower service, not a `Router`, since its first layer runs
/// before routing. Serve it with `axum::ServiceExt::into_make_service_with_connect_info`.
pub type App = front::Front<Router>;

/// The router behind the refusals (layers 2 and on).
fn router(state: AppState, secure_cookies: bool) -> Router {
    let sessions = SessionManagerLayer::new(session_store::DbSessionStore::new(
        state.db.clone(),
        state.site.clone(),
    ))
    .with_name("orchestra_session")
    .with_secure(secure_cookies)
    .with_http_only(true)
    .with_same_site(tower_sessions::cookie::SameSite::Lax)
    .with_expiry(Expiry::OnInactivity(
        tower_sessions::cookie::time::Duration::hours(12),
    ));

    let nonce = axum::middleware::from_fn_with_state(csrf::Secure(secure_cookies), csrf::nonce);
    let site = Router::new()
        .merge(provider::router())
        .merge(notice::router())
        .merge(
            admin::router(state.clone())
                .layer(sessions.clone())
                .layer(nonce.clone()),
        )
        .merge(setup::router(state.clone()).layer(sessions).layer(nonce))
        .merge(statics::router())
        .merge(jwks::router())
        .fallback(error::not_found);
    let security = headers::Security {
        https: secure_cookies,
        trust_forwarded: !state.proxies.is_empty(),
        forwarded_seen: state.forwarded_seen.clone(),
    };
    let site = with_common_layers(site, &state, &security, body::cap, body::never_streamed);
    let doorway = with_common_layers(
        doorway::router(),
        &state,
        &security,
        body::cap,
        doorway::streams,
    );
    let api = with_common_layers(
        api::router(state.clone()),
        &state,
        &security,
        api::cap,
        body::never_streamed,
    );
    doorway.merge(api).merge(site).with_state(state)
}

/// The layers every page shares (2 and 3 above): `common::Common`, one service, with
/// `body::Limit` inside it, capping bodies by the router's own `caps`.
fn with_common_layers(
    router: Router<AppState>,
    state: &AppState,
    security: &headers::Security,
    caps: body::Caps,
    streams: body::Streams,
) -> Router<AppState> {
    let common = common::Common::new(state.work.clone(), security.clone(), state.db.clone());
    router.layer(common.layer_with(body::Limit {
        bodies: state.bodies.clone(),
        answer: refused_body,
        caps,
        streams,
    }))
}

/// Paths whose URL may hold a credential (a link, a handle, a setup token): they are never
/// logged as they are, and every answer on them, error pages included, is kept out of
/// referrers and caches (`common`).
pub const CREDENTIAL_PREFIXES: [&str; 3] = ["/interaction/", "/test-provider/", "/setup/"];

/// A refusal of `body::Limit` as the caller sees it: the themed page, the API's JSON error, or
/// for a provider's notice too large its one plain refusal (`notice::Received::Refused`),
/// which says nothing of why; a full budget stays a 503, which the provider retries.
fn refused_body(refused: body::Refused, lang: Lang, path: &str) -> Response {
    if path.starts_with(api::PREFIX) {
        api::body_refused(lang, refused)
    } else if path == notice::ROUTE && refused != body::Refused::Busy {
        notice::Received::Refused.into_response()
    } else {
        error::AppError::from(refused).into_response()
    }
}
