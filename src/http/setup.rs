//! First run: the one-time setup URL `orchestra serve` prints creates the first administrator.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::middleware;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use serde::Deserialize;
use tower_sessions::Session;

use super::AppState;
use super::context::{ADMIN_KEY, PageContext, flash, html};
use super::csrf;
use super::error::{AppError, Result};
use super::extract::Path;
use super::form::Form;
use crate::i18n::Message;
use crate::store;

pub fn router(state: AppState) -> Router<AppState> {
    Router::new()
        .route("/setup/{token}", get(show).post(create))
        .route_layer(middleware::from_fn_with_state(state, csrf::check))
        .layer(middleware::map_response(super::doorway::credential_headers))
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

/// Checks a new administrator's name and password; the same rules as `orchestra admin create`.
pub fn check_new_admin(
    name: &str,
    password: &str,
    confirm: Option<&str>,
) -> Vec<(String, Message)> {
    let mut errors = Vec::new();
    let name_ok = !name.is_empty()
        && name.chars().count() <= 60
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || "._-@".contains(c));
    if !name_ok {
        errors.push(("name".into(), Message::new("admin-name-invalid")));
    }
    if password.chars().count() < 10 {
        errors.push((
            "password".into(),
            Message::new("admin-password-short").arg("min", "10"),
        ));
    } else if password.len() > 1024 {
        errors.push(("password".into(), Message::new("admin-password-long")));
    }
    if let Some(confirm) = confirm {
        if confirm != password {
            errors.push(("confirm".into(), Message::new("admin-password-mismatch")));
        }
    }
    errors
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
    let errors = check_new_admin(&name, &form.password, Some(&form.confirm));
    if !errors.is_empty() {
        let errors = errors.into_iter().map(|(f, m)| (f, ctx.msg(&m))).collect();
        let mut response = html(&SetupPage { ctx, name, errors });
        *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
        return Ok(response);
    }
    let password = form.password;
    let hash = state
        .passwords
        .run(move || crate::password::hash(&password))
        .await
        .map_err(super::admin::auth::pool_error)?
        .map_err(|e| AppError::internal("password hashing failed", e))?;
    let token_hash = state.site.get().await.keys.keyed_hash("setup", &token);
    let Some(id) = store::admins::create_first(&state.db, &token_hash, &name, &hash).await? else {
        return Err(AppError::NotFound);
    };
    session.cycle_id().await?;
    session.insert(ADMIN_KEY, id).await?;
    flash(&session, "setup-done").await?;
    tracing::info!(admin = id, "first administrator created");
    let mut response = Redirect::to("/admin").into_response();
    response.extensions_mut().insert(csrf::Rotate);
    Ok(response)
}
