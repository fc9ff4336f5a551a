//! API tokens: list, create (the token is shown once, on the page redirected to), revoke after
//! a confirmation page.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use tower_sessions::Session;

use super::workflows::ConfirmPage;
use super::{FieldErrors, error_for};
use crate::http::AppState;
use crate::http::context::{PageContext, flash, html};
use crate::http::error::{AppError, Result};
use crate::http::extract::Path;
use crate::http::form::Form;
use crate::i18n::Message;
use crate::store;

/// Where a new token waits, in the session, for the one page that shows it.
const NEW_TOKEN_KEY: &str = "new_api_token";

pub struct TokenLine {
    pub name: String,
    pub rate: String,
    pub burst: String,
    pub last_used: String,
    pub state: String,
    pub revocable: bool,
    pub revoke_label: String,
}

#[derive(askama::Template)]
#[template(path = "admin/tokens.html")]
struct TokensPage {
    ctx: PageContext,
    tokens: Vec<TokenLine>,
    created: Option<String>,
    name: String,
    rate: String,
    burst: String,
    errors: FieldErrors,
}

impl TokensPage {
    fn error(&self, key: &str) -> Option<&str> {
        error_for(&self.errors, key)
    }
}

async fn page(state: &AppState, ctx: PageContext) -> Result<TokensPage> {
    let settings = state.site.get().await.settings.clone();
    let tokens = store::api::tokens(&state.db)
        .await?
        .into_iter()
        .map(|t| TokenLine {
            rate: t.rate_per_minute.map_or_else(
                || format!("{} *", settings.api_rate_per_minute),
                |r| r.to_string(),
            ),
            burst: t
                .burst
                .map_or_else(|| format!("{} *", settings.api_burst), |b| b.to_string()),
            last_used: t
                .last_used_at
                .map_or_else(|| ctx.t("token-never-used"), crate::time::format_utc),
            state: ctx.t(if t.revoked_at.is_some() {
                "token-revoked"
            } else {
                "token-active"
            }),
            revocable: t.revoked_at.is_none(),
            revoke_label: ctx.msg(&Message::new("token-revoke").arg("name", t.name.clone())),
            name: t.name,
        })
        .collect();
    Ok(TokensPage {
        ctx,
        tokens,
        created: None,
        name: String::new(),
        rate: String::new(),
        burst: String::new(),
        errors: Vec::new(),
    })
}

pub async fn list(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
) -> Result<Response> {
    let mut page = page(&state, ctx).await?;
    // Shown once: taken out of the session as it is shown.
    page.created = session.remove::<String>(NEW_TOKEN_KEY).await?;
    let mut response = html(&page);
    response.headers_mut().insert(
        axum::http::header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
    Ok(response)
}

#[derive(Deserialize)]
pub struct NewToken {
    #[serde(default)]
    name: String,
    #[serde(default)]
    rate: String,
    #[serde(default)]
    burst: String,
}

/// A token's name: what the CLI and the list call it.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

/// An optional number in a range: empty means the site's default.
fn optional(raw: &str, max: u32) -> std::result::Result<Option<u32>, ()> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(None);
    }
    match raw.parse::<u32>() {
        Ok(n) if (1..=max).contains(&n) => Ok(Some(n)),
        _ => Err(()),
    }
}

pub async fn create(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    Form(form): Form<NewToken>,
) -> Result<Response> {
    let mut errors: FieldErrors = Vec::new();
    let name = form.name.trim();
    if !valid_name(name) {
        errors.push(("name".into(), ctx.t("token-name-invalid")));
    }
    let range = |field: &str| {
        (
            field.to_owned(),
            ctx.msg(
                &Message::new("setting-out-of-range")
                    .arg("min", "1")
                    .arg("max", "1000000"),
            ),
        )
    };
    let rate = optional(&form.rate, 1_000_000).map_err(|_| range("rate"));
    let burst = optional(&form.burst, 1_000_000).map_err(|_| range("burst"));
    errors.extend(rate.clone().err());
    errors.extend(burst.clone().err());
    if errors.is_empty() {
        let keys = state.site.get().await.keys.clone();
        match crate::api::create_token(
            &state.db,
            &keys,
            name,
            rate.ok().flatten(),
            burst.ok().flatten(),
        )
        .await?
        {
            Some(text) => {
                session.insert(NEW_TOKEN_KEY, text).await?;
                flash(&session, "token-created").await?;
                tracing::info!(token = name, "API token created");
                return Ok(Redirect::to("/admin/config/api").into_response());
            }
            None => errors.push(("name".into(), ctx.t("token-name-taken"))),
        }
    }
    let mut page = page(&state, ctx).await?;
    page.name = form.name;
    page.rate = form.rate;
    page.burst = form.burst;
    page.errors = errors;
    let mut response = html(&page);
    *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    Ok(response)
}

fn revoke_page(ctx: PageContext, name: &str) -> ConfirmPage {
    ConfirmPage {
        title: ctx.msg(&Message::new("token-revoke").arg("name", name.to_owned())),
        message: ctx.t("token-revoke-explain"),
        confirm: ctx.msg(&Message::new("token-revoke").arg("name", name.to_owned())),
        cancel_url: "/admin/config/api".into(),
        refusal: None,
        ctx,
    }
}

pub async fn revoke_form(
    State(state): State<AppState>,
    ctx: PageContext,
    Path(name): Path<String>,
) -> Result<Response> {
    let known = store::api::tokens(&state.db)
        .await?
        .iter()
        .any(|t| t.name == name && t.revoked_at.is_none());
    if !known {
        return Err(AppError::NotFound);
    }
    Ok(html(&revoke_page(ctx, &name)))
}

pub async fn revoke(
    State(state): State<AppState>,
    session: Session,
    Path(name): Path<String>,
) -> Result<Response> {
    let Some(id) = store::api::revoke_token(&state.db, &name).await? else {
        return Err(AppError::NotFound);
    };
    state.api_buckets.forget(id);
    state.api_seen.forget_id(id);
    flash(&session, "token-revoked-flash").await?;
    Ok(Redirect::to("/admin/config/api").into_response())
}
