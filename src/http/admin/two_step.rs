//! Two-step sign-in in the admin area: one's own account page to turn it on (a QR code and the
//! secret as text, confirmed with a first code, then ten recovery codes shown once) and off
//! (with a current code or the password); and the sign-in's second step, the code page a
//! correct password leads to when the account has it on.
//!
//! Between the password and the code the session holds only a pending sign-in: the account,
//! its password epoch, where to go, and until when (five minutes). It signs nobody in; only a
//! right code for that account finishes the sign-in (`auth::finish`). Wrong codes are counted
//! by the sign-in limits as wrong passwords are, on the same keys.

use axum::Extension;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use tower_sessions::Session;

pub use super::two_step_gate::{CODE_PATH, PATH};
use super::two_step_gate::{PENDING_KEY, Pending, pending_of};
use crate::domain::audit::{Actor, Event, Kind};
use crate::domain::login;
use crate::domain::two_step::{self, Setup};
use crate::http::AppState;
use crate::http::client::ClientAddr;
use crate::http::context::{FlashKind, PageContext, SignedIn, html};
use crate::http::error::{AppError, Result};
use crate::http::form::Form;
use crate::store;

#[derive(askama::Template)]
#[template(path = "admin/login_code.html")]
struct CodePage {
    ctx: PageContext,
    error: Option<String>,
}

/// Back to the password: no sign-in is waiting for a code (none, or it expired).
async fn start_again(session: &Session) -> Result<Response> {
    crate::http::context::flash_as(session, FlashKind::Warning, "two-step-expired").await?;
    Ok(Redirect::to("/admin/login").into_response())
}

pub async fn code_form(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
) -> Result<Response> {
    if pending_of(&session, state.clock.now_secs())
        .await?
        .is_none()
    {
        return start_again(&session).await;
    }
    Ok(html(&CodePage { ctx, error: None }))
}

#[derive(Deserialize)]
pub struct CodeForm {
    #[serde(default)]
    code: String,
}

/// The second step: a right code (or an unused recovery code) for the pending account finishes
/// the sign-in; a wrong one is counted by the sign-in limits and asked again.
pub async fn code_check(
    State(state): State<AppState>,
    ctx: PageContext,
    ClientAddr(client): ClientAddr,
    session: Session,
    headers: HeaderMap,
    audit: crate::http::audit::Audit,
    Form(form): Form<CodeForm>,
) -> Result<Response> {
    let now = state.clock.now_secs();
    let Some(pending) = pending_of(&session, now).await? else {
        return start_again(&session).await;
    };
    // A password changed, a reset or a disable since the password was checked ends it too.
    let admin = store::admins::by_id(&state.db, pending.admin)
        .await?
        .filter(|a| a.disabled_at.is_none() && a.auth_epoch == pending.epoch);
    let Some(admin) = admin else {
        session.remove::<Pending>(PENDING_KEY).await?;
        return start_again(&session).await;
    };
    let snapshot = state.site.get().await;
    let settings = &snapshot.settings;
    let address = login::address_key(&snapshot.keys, client);
    let account = super::auth::counted_as(&snapshot.keys, &admin, client, &headers, now);
    let admitted = login::admit(&state.guard, settings, &address, Some(&account))
        .map_err(|_| AppError::TooManyAttempts)?;
    let actor = Actor::Admin {
        id: admin.id,
        name: admin.name.clone(),
    };
    if !two_step::check(&state.db, admin.id, &form.code, now).await? {
        login::failed(&state.guard, settings, &account, admitted);
        audit.record_as(&actor, Event::SignInFailed).await;
        tracing::info!("failed second step of a sign-in");
        let error = Some(ctx.t("two-step-code-wrong"));
        let mut response = html(&CodePage { ctx, error });
        *response.status_mut() = StatusCode::UNAUTHORIZED;
        return Ok(response);
    }
    session.remove::<Pending>(PENDING_KEY).await?;
    audit.record_as(&actor, Event::SignedIn).await;
    super::auth::finish(&state, &session, &admin, &pending.destination, now).await
}

#[derive(askama::Template)]
#[template(path = "admin/two_step.html")]
struct AccountPage {
    ctx: PageContext,
    on: bool,
    left: i64,
    setup: Option<Setup>,
    /// The recovery codes, shown once: on the answer that turned two-step sign-in on.
    codes: Vec<String>,
    required: bool,
    error: Option<String>,
}

async fn account_page(
    state: &AppState,
    ctx: PageContext,
    me: &SignedIn,
    codes: Vec<String>,
    error: Option<String>,
) -> Result<Response> {
    let snapshot = state.site.get().await;
    let on = two_step::is_on(&state.db, me.id).await?;
    let setup = if on {
        None
    } else {
        two_step::pending(&state.db, me.id, &snapshot.settings.site_name, &me.name).await?
    };
    let failed = error.is_some();
    let mut response = html(&AccountPage {
        ctx,
        on,
        left: two_step::recovery_left(&state.db, me.id).await?,
        setup,
        codes,
        required: snapshot.settings.two_step_required,
        error,
    });
    if failed {
        *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    }
    // The page may show a secret or recovery codes: never kept by a cache.
    response.headers_mut().insert(
        axum::http::header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
    Ok(response)
}

pub async fn account_show(
    State(state): State<AppState>,
    ctx: PageContext,
    Extension(me): Extension<SignedIn>,
) -> Result<Response> {
    account_page(&state, ctx, &me, Vec::new(), None).await
}

#[derive(Deserialize)]
pub struct AccountForm {
    #[serde(default)]
    action: String,
    #[serde(default)]
    code: String,
    #[serde(default)]
    password: String,
}

/// `begin` makes a secret to set up, `confirm` turns it on with its first code, `off` turns
/// two-step sign-in off with a current code or the password (checked under the sign-in limits,
/// so a session left open is no way to guess either).
#[allow(clippy::too_many_arguments)] // an axum handler: one argument per extractor
pub async fn account_save(
    State(state): State<AppState>,
    ctx: PageContext,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
    session: Session,
    Extension(me): Extension<SignedIn>,
    audit: crate::http::audit::Audit,
    Form(form): Form<AccountForm>,
) -> Result<Response> {
    let now = state.clock.now_secs();
    let recorded = |kind| audit.record(Event::Admin(kind, me.name.clone()));
    match form.action.as_str() {
        "begin" => {
            let site_name = state.site.get().await.settings.site_name.clone();
            two_step::begin(&state.db, me.id, &site_name, &me.name, now).await?;
            Ok(Redirect::to(PATH).into_response())
        }
        "confirm" => match two_step::confirm(&state.db, me.id, &form.code, now).await? {
            Some(codes) => {
                recorded(Kind::TwoStepOn).await;
                account_page(&state, ctx, &me, codes, None).await
            }
            None => {
                let error = Some(ctx.t("two-step-code-wrong"));
                account_page(&state, ctx, &me, Vec::new(), error).await
            }
        },
        "off" => {
            if !off_allowed(&state, &me, client, &headers, form, now).await? {
                let error = Some(ctx.t("two-step-off-refused"));
                return account_page(&state, ctx, &me, Vec::new(), error).await;
            }
            if two_step::turn_off(&state.db, me.id).await? {
                recorded(Kind::TwoStepOff).await;
            }
            crate::http::context::flash_to(&session, "two-step-turned-off", PATH).await
        }
        _ => Err(AppError::BadRequest),
    }
}

/// Whether a request to turn two-step sign-in off proves it is the administrator: a current
/// code (or an unused recovery code), else the password; either counted as a sign-in attempt.
async fn off_allowed(
    state: &AppState,
    me: &SignedIn,
    client: std::net::IpAddr,
    headers: &HeaderMap,
    form: AccountForm,
    now: i64,
) -> Result<bool> {
    let admin = store::admins::by_id(&state.db, me.id)
        .await?
        .ok_or(AppError::NotFound)?;
    let snapshot = state.site.get().await;
    let settings = &snapshot.settings;
    let address = login::address_key(&snapshot.keys, client);
    let account = super::auth::counted_as(&snapshot.keys, &admin, client, headers, now);
    let ok = if form.code.trim().is_empty() {
        let place = state.passwords.admit().map_err(super::auth::pool_error)?;
        let admitted = login::admit(&state.guard, settings, &address, Some(&account))
            .map_err(|_| AppError::TooManyAttempts)?;
        let (password, stored) = (form.password, admin.password_hash.clone());
        let ok = place
            .run(move || crate::domain::password::verify(&password, &stored))
            .await
            .map_err(super::auth::pool_error)?;
        (ok, admitted)
    } else {
        let admitted = login::admit(&state.guard, settings, &address, Some(&account))
            .map_err(|_| AppError::TooManyAttempts)?;
        (
            two_step::check(&state.db, admin.id, &form.code, now).await?,
            admitted,
        )
    };
    if !ok.0 {
        login::failed(&state.guard, settings, &account, ok.1);
    }
    Ok(ok.0)
}
