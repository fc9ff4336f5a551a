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
    let password = form.password;
    let hash = state
        .passwords
        .run(move || crate::domain::password::hash(&password))
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
