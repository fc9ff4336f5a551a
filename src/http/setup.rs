//! One-time links to a password: the setup URL `orchestra serve` prints on first run creates
//! the first administrator; an invitation creates the administrator another one named; a reset
//! link sets a new password (and signs that administrator's sessions out). Every bad, spent or
//! expired link gets the same plain 404 page.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::middleware;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use serde::Deserialize;
use tower_sessions::Session;

use super::AppState;
use super::context::{ADMIN_KEY, EPOCH_KEY, PageContext, flash, html};
use super::csrf;
use super::error::{AppError, Result};
use super::extract::Path;
use super::form::Form;
use crate::domain::admins::Link;
use crate::store;

pub fn router(state: AppState) -> Router<AppState> {
    Router::new()
        .route("/setup/{token}", get(show).post(create))
        .route("/setup/{kind}/{token}", get(link_show).post(link_spend))
        .route_layer(middleware::from_fn_with_state(state, csrf::check))
}

#[derive(askama::Template)]
#[template(path = "setup.html")]
struct SetupPage {
    ctx: PageContext,
    name: String,
    errors: Vec<(String, String)>,
}

impl SetupPage {
    fn error(&self, field: &str) -> Option<&str> {
        self.errors
            .iter()
            .find(|(f, _)| f == field)
            .map(|(_, m)| m.as_str())
    }
}

async fn token_ok(state: &AppState, token: &str) -> Result<bool> {
    let hash = state.site.get().await.keys.keyed_hash("setup", token);
    Ok(store::admins::count(&state.db).await? == 0
        && store::admins::setup_token_valid(&state.db, &hash, store::now()).await?)
}

async fn show(
    State(state): State<AppState>,
    ctx: PageContext,
    Path(token): Path<String>,
) -> Result<Response> {
    if !token_ok(&state, &token).await? {
        return Err(AppError::NotFound);
    }
    Ok(html(&SetupPage {
        ctx,
        name: String::new(),
        errors: Vec::new(),
    }))
}

#[derive(Deserialize)]
pub struct NewAdmin {
    #[serde(default)]
    name: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    confirm: String,
}

async fn create(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    Path(token): Path<String>,
    Form(form): Form<NewAdmin>,
) -> Result<Response> {
    if !token_ok(&state, &token).await? {
        return Err(AppError::NotFound);
    }
    let name = form.name.trim().to_owned();
    let errors = crate::domain::login::check_new_admin(&name, &form.password, Some(&form.confirm));
    if !errors.is_empty() {
        let errors = errors.into_iter().map(|(f, m)| (f, ctx.msg(&m))).collect();
        let mut response = html(&SetupPage { ctx, name, errors });
        *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
        return Ok(response);
    }
    let hash = super::admin::auth::hash_password(&state, form.password).await?;
    let token_hash = state.site.get().await.keys.keyed_hash("setup", &token);
    let id = store::admins::create_first(&state.db, &token_hash, &name, &hash)
        .await?
        .ok_or(AppError::NotFound)?;
    session.cycle_id().await?;
    session.insert(ADMIN_KEY, id).await?;
    flash(&session, "setup-done").await?;
    tracing::info!(admin = id, "first administrator created");
    let mut response = Redirect::to("/admin").into_response();
    response.extensions_mut().insert(csrf::Rotate);
    Ok(response)
}

#[derive(askama::Template)]
#[template(path = "setup_link.html")]
struct LinkPage {
    ctx: PageContext,
    /// The page's title and introduction, by what the link is for.
    title: String,
    intro: String,
    name: String,
    errors: Vec<(String, String)>,
}

impl LinkPage {
    fn new(ctx: PageContext, link: Link, name: String) -> Self {
        let (title, intro) = match link {
            Link::Invite => ("admins-invite-page-title", "admins-invite-page-intro"),
            Link::Reset => ("admins-reset-page-title", "admins-reset-page-intro"),
        };
        let named = |id| ctx.msg(&crate::i18n::Message::new(id).arg("name", name.clone()));
        Self {
            title: named(title),
            intro: named(intro),
            name,
            errors: Vec::new(),
            ctx,
        }
    }

    fn error(&self, field: &str) -> Option<&str> {
        self.errors
            .iter()
            .find(|(f, _)| f == field)
            .map(|(_, m)| m.as_str())
    }
}

/// The link an address names: `/setup/invite/…` or `/setup/reset/…`; anything else is the
/// same 404 as a bad link.
fn link_named(kind: &str) -> Result<Link> {
    match kind {
        "invite" => Ok(Link::Invite),
        "reset" => Ok(Link::Reset),
        _ => Err(AppError::NotFound),
    }
}

async fn link_show(
    State(state): State<AppState>,
    ctx: PageContext,
    Path((kind, token)): Path<(String, String)>,
) -> Result<Response> {
    let link = link_named(&kind)?;
    let token = token.as_str();
    let keys = state.site.get().await.keys.clone();
    let name = crate::domain::admins::opened(&state.db, &keys, link, token)
        .await?
        .ok_or(AppError::NotFound)?;
    Ok(html(&LinkPage::new(ctx, link, name)))
}

#[derive(Deserialize)]
pub struct NewPassword {
    #[serde(default)]
    password: String,
    #[serde(default)]
    confirm: String,
}

/// Spends the link with the password chosen, and signs its administrator in on this session.
async fn link_spend(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    Path((kind, token)): Path<(String, String)>,
    Form(form): Form<NewPassword>,
) -> Result<Response> {
    let link = link_named(&kind)?;
    let token = token.as_str();
    let session = &session;
    let keys = state.site.get().await.keys.clone();
    let name = crate::domain::admins::opened(&state.db, &keys, link, token)
        .await?
        .ok_or(AppError::NotFound)?;
    let errors = crate::domain::login::check_new_password(&form.password, Some(&form.confirm));
    if !errors.is_empty() {
        let mut page = LinkPage::new(ctx, link, name);
        page.errors = errors
            .into_iter()
            .map(|(f, m)| (f, page.ctx.msg(&m)))
            .collect();
        let mut response = html(&page);
        *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
        return Ok(response);
    }
    let hash = super::admin::auth::hash_password(&state, form.password).await?;
    let id = crate::domain::admins::spend(&state.db, &keys, link, token, &hash)
        .await?
        .ok_or(AppError::NotFound)?;
    let admin = store::admins::by_id(&state.db, id)
        .await?
        .ok_or(AppError::NotFound)?;
    // A reset link replaces the password, not the second factor: with two-step sign-in on,
    // the code still comes before the account opens.
    if crate::domain::two_step::is_on(&state.db, admin.id).await? {
        let now = state.clock.now_secs();
        return super::admin::two_step_gate::ask_code(session, &admin, "/admin", now).await;
    }
    session.cycle_id().await?;
    session.insert(ADMIN_KEY, admin.id).await?;
    session.insert(EPOCH_KEY, admin.auth_epoch).await?;
    store::admins::signed_in(&state.db, admin.id, store::now()).await?;
    flash(
        session,
        match link {
            Link::Invite => "admins-invite-done",
            Link::Reset => "admins-reset-done",
        },
    )
    .await?;
    let mut response = Redirect::to("/admin").into_response();
    response.extensions_mut().insert(csrf::Rotate);
    Ok(response)
}
