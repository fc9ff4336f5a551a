//! Signing in and out, and the check every other admin page passes.

use axum::extract::{FromRequestParts, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use tower_sessions::Session;

use crate::domain::audit::{Actor, Event};
use crate::domain::login;
use crate::http::AppState;
use crate::http::audit::Audit;
use crate::http::client::ClientAddr;
use crate::http::context::{ADMIN_KEY, EPOCH_KEY, PageContext, SignedIn, html};
use crate::http::csrf;
use crate::http::error::{AppError, Result};
use crate::http::extract::Query;
use crate::http::form::Form;
use crate::store;

/// Lets signed-in administrators through; sends everyone else to the login page, remembering
/// where they were going.
pub async fn require_admin(
    State(state): State<AppState>,
    session: Session,
    mut request: Request,
    next: Next,
) -> Response {
    // A session or an administrator that cannot be read is a database fault, answered as
    // one (the themed 503), not taken for a signed-out visitor sent to the login page.
    let admin = match session.get::<i64>(ADMIN_KEY).await {
        Ok(Some(id)) => match store::admins::by_id(&state.db, id).await {
            Ok(admin) => admin,
            Err(e) => return AppError::from(e).into_response(),
        },
        Ok(None) => None,
        Err(e) => return AppError::from(e).into_response(),
    };
    // A disabled administrator, or a session from before a password change, a reset or a
    // disable (another epoch), is signed out like a session that never was.
    let epoch = match session.get::<i64>(EPOCH_KEY).await {
        Ok(epoch) => epoch.unwrap_or(0),
        Err(e) => return AppError::from(e).into_response(),
    };
    let admin = admin.filter(|a| a.disabled_at.is_none() && a.auth_epoch == epoch);
    match admin {
        // Where the site requires two-step sign-in, an administrator without it sets it up
        // before anything else.
        Some(admin)
            if super::two_step_gate::must_set_up(&state, admin.id, request.uri().path()).await =>
        {
            Redirect::to(super::two_step_gate::PATH).into_response()
        }
        Some(admin) => {
            request.extensions_mut().insert(SignedIn {
                id: admin.id,
                role: crate::domain::roles::Role::of(&admin.role),
                name: admin.name,
            });
            next.run(request).await
        }
        // A page that is not there is a plain 404 to a stranger: sending them to sign in would
        // carry whatever they typed (a mistyped link, say) into the login page's address.
        None if request
            .extensions()
            .get::<axum::extract::MatchedPath>()
            .is_some_and(|m| m.as_str() == super::UNKNOWN_PAGE) =>
        {
            AppError::NotFound.into_response()
        }
        None => {
            let path = request.uri().path();
            let to = serde_urlencoded::to_string([("destination", path)]).unwrap_or_default();
            Redirect::to(&format!("/admin/login?{to}")).into_response()
        }
    }
}

#[derive(Deserialize, Default)]
pub struct Destination {
    destination: Option<String>,
}

impl Destination {
    pub fn destination(&self) -> Option<&str> {
        self.destination.as_deref()
    }
}

/// Only paths inside the admin area: never another site, and nothing a header cannot carry
/// (a control character would make the redirect itself fail).
pub fn safe_destination(d: Option<&str>) -> &str {
    match d {
        Some(d)
            if d.starts_with("/admin")
                && !d.contains("//")
                && !d.contains('\\')
                && !d.chars().any(char::is_control) =>
        {
            d
        }
        _ => "/admin",
    }
}

#[derive(askama::Template)]
#[template(path = "admin/login.html")]
struct LoginPage {
    ctx: PageContext,
    name: String,
    destination: String,
    error: Option<String>,
    /// The OpenID Provider's button, when one is configured: where it goes and what it says.
    oidc: Option<(String, String)>,
}

/// The sign-in page: `error` above the form, the provider's button below it when configured.
pub(super) fn login_page(
    state: &AppState,
    ctx: PageContext,
    name: String,
    destination: String,
    error: Option<String>,
) -> Response {
    let oidc = state.oidc.as_ref().map(|oidc| {
        let to = serde_urlencoded::to_string([("destination", destination.as_str())])
            .unwrap_or_default();
        let label = ctx.msg(
            &crate::i18n::Message::new("login-oidc").arg("provider", oidc.config.name.clone()),
        );
        (format!("{}?{to}", crate::domain::oidc::START_PATH), label)
    });
    html(&LoginPage {
        ctx,
        name,
        destination,
        error,
        oidc,
    })
}

/// An error answered to a signed-in administrator is the themed page with the navigation and
/// the sign-out button: the context is built only when the answer is an error, after the
/// handler, so a page's flash is still its own.
pub async fn error_pages(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let uri = request.uri().clone();
    let extensions = request.extensions().clone();
    let response = next.run(request).await;
    if !(response.status().is_client_error() || response.status().is_server_error()) {
        return response;
    }
    let (mut parts, ()) = axum::http::Request::builder()
        .uri(uri)
        .body(())
        .unwrap_or_default()
        .into_parts();
    parts.extensions = extensions;
    match PageContext::from_request_parts(&mut parts, &state).await {
        Ok(ctx) => crate::http::error::with_context(ctx, response),
        Err(_) => response,
    }
}

pub async fn login_form(
    State(state): State<AppState>,
    ctx: PageContext,
    Query(q): Query<Destination>,
) -> Response {
    let destination = safe_destination(q.destination.as_deref()).to_owned();
    login_page(&state, ctx, String::new(), destination, None)
}

#[derive(Deserialize)]
pub struct Credentials {
    #[serde(default)]
    name: String,
    #[serde(default)]
    password: String,
    destination: Option<String>,
}

pub async fn login(
    State(state): State<AppState>,
    ctx: PageContext,
    ClientAddr(client): ClientAddr,
    session: Session,
    headers: axum::http::HeaderMap,
    audit: Audit,
    Form(form): Form<Credentials>,
) -> Result<Response> {
    let name = form.name.trim().to_owned();
    let destination = safe_destination(form.destination.as_deref()).to_owned();
    // A disabled administrator is answered as a name no account has: the same message, in the
    // same time, counted the same way, so the form tells nothing of who exists or is disabled.
    let admin = store::admins::by_name(&state.db, &name)
        .await?
        .filter(|a| a.disabled_at.is_none());
    let snapshot = state.site.get().await;
    let settings = &snapshot.settings;
    let address = login::address_key(&snapshot.keys, client);
    let Some(admin) = admin else {
        // No account to guess: counted per address only, and answered in the time a wrong
        // password takes (`login`'s module doc says what the limits still tell), without a
        // place in the pool, so made-up names cannot fill it. A full pool is a 503 here too,
        // as it would be for a real name.
        if state.passwords.is_full() {
            return Err(pool_error(crate::domain::password::PoolError::Busy));
        }
        // Nothing of an account to count once the password "fails".
        let _no_account = login::admit(&state.guard, settings, &address, None)
            .map_err(|_| AppError::TooManyAttempts)?;
        state.passwords.as_long_as_a_check().await;
        audit.record_as(&Actor::Visitor, Event::SignInFailed).await;
        return Ok(failed(&state, ctx, name, destination));
    };
    let now = state.clock.now_secs();
    let account = counted_as(&snapshot.keys, &admin, client, &headers, now);
    // A place in the pool before anything is counted: a full pool's 503 counts nowhere. Then
    // the limits; a refused attempt never checks the password.
    let place = state.passwords.admit().map_err(pool_error)?;
    let admitted = login::admit(&state.guard, settings, &address, Some(&account))
        .map_err(|_| AppError::TooManyAttempts)?;
    let stored = admin.password_hash.clone();
    let password = form.password;
    // argon2 is deliberately slow and takes 19 MiB: on the bounded pool, off the async workers.
    let ok = place
        .run(move || crate::domain::password::verify(&password, &stored))
        .await
        .map_err(pool_error)?;
    let actor = Actor::Admin {
        id: admin.id,
        name: admin.name.clone(),
    };
    if !ok {
        login::failed(&state.guard, settings, &account, admitted);
        audit.record_as(&actor, Event::SignInFailed).await;
        return Ok(failed(&state, ctx, name, destination));
    }
    // With two-step sign-in on, the password alone signs nobody in: the code comes next (its
    // page records the sign-in, or the failure).
    if crate::domain::two_step::is_on(&state.db, admin.id).await? {
        return super::two_step_gate::ask_code(&session, &admin, &destination, now).await;
    }
    audit.record_as(&actor, Event::SignedIn).await;
    finish(&state, &session, &admin, &destination, now).await
}

/// The sign-in limits' keys of an attempt on `admin`'s account (a password or a second-step
/// code): the account from this address, or, by its device cookie for this account, the
/// owner's browser, counted on its own.
pub(super) fn counted_as(
    keys: &crate::domain::keys::SiteKeys,
    admin: &store::admins::Admin,
    client: std::net::IpAddr,
    headers: &axum::http::HeaderMap,
    now: i64,
) -> login::AccountKeys {
    let account = login::account_keys(keys, admin.id, admin.login_epoch, client);
    match crate::http::device::sent(headers, keys, now).and_then(|device| {
        device
            .nonce_for(admin.id, admin.auth_epoch)
            .map(str::to_owned)
    }) {
        Some(nonce) => {
            account.through_device(login::device_key(keys, admin.id, admin.login_epoch, &nonce))
        }
        None => account,
    }
}

/// Signs `admin` in once every check has passed (the password, and whatever else a way of
/// signing in asks): a new session, the sign-in recorded, the device cookie, on to
/// `destination` (already made safe).
pub async fn finish(
    state: &AppState,
    session: &Session,
    admin: &store::admins::Admin,
    destination: &str,
    now: i64,
) -> Result<Response> {
    // A new session id at sign-in: an id planted before it is worth nothing after.
    session.cycle_id().await?;
    session.insert(ADMIN_KEY, admin.id).await?;
    session.insert(EPOCH_KEY, admin.auth_epoch).await?;
    store::admins::signed_in(&state.db, admin.id, store::now()).await?;
    tracing::info!(admin = admin.id, "administrator signed in");
    let mut response = Redirect::to(destination).into_response();
    response.extensions_mut().insert(csrf::Rotate);
    let keys = &state.site.get().await.keys;
    crate::http::device::issue(
        &mut response,
        keys,
        state.secure_cookies,
        now,
        admin.id,
        admin.auth_epoch,
    )?;
    Ok(response)
}

/// The sign-in page again, with what was typed as the name and one message for any failure.
fn failed(state: &AppState, ctx: PageContext, name: String, destination: String) -> Response {
    tracing::info!("failed sign-in");
    let error = Some(ctx.t("login-failed"));
    let mut response = login_page(state, ctx, name, destination, error);
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    response
}

/// A new password's hash, made on the bounded pool (argon2 is slow and takes 19 MiB).
pub async fn hash_password(state: &AppState, password: String) -> Result<String> {
    state
        .passwords
        .run(move || crate::domain::password::hash(&password))
        .await
        .map_err(pool_error)?
        .map_err(|e| AppError::internal("password hashing failed", e))
}

/// The password pool's refusal: a 503 page at once when it is full.
pub fn pool_error(e: crate::domain::password::PoolError) -> AppError {
    match e {
        crate::domain::password::PoolError::Busy => {
            tracing::warn!("password check refused: every worker and the queue are busy");
            AppError::Busy
        }
        crate::domain::password::PoolError::Failed => {
            AppError::internal("password check failed", "panic")
        }
    }
}

pub async fn logout(session: Session) -> Result<Response> {
    session.flush().await?;
    // A fresh, anonymous session carries the one message the sign-in page shows.
    crate::http::context::flash(&session, "signed-out").await?;
    let mut response = Redirect::to("/admin/login").into_response();
    response.extensions_mut().insert(csrf::Rotate);
    Ok(response)
}
