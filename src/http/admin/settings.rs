//! Orchestra settings (with its Request limits section) and Interaction settings.
//!
//! Both pages save through `Settings::save`, the same validation `orchestra config set` uses;
//! a rejected form keeps what was typed and saves nothing.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use tower_sessions::Session;

use super::{FieldErrors, error_for};
use crate::guard::FloodGuard;
use crate::http::AppState;
use crate::http::context::{PageContext, flash, html};
use crate::http::error::Result;
use crate::http::form::Form;
use crate::settings::{FieldError, Settings};

#[derive(askama::Template)]
#[template(path = "admin/settings.html")]
struct SettingsPage {
    ctx: PageContext,
    site_name: String,
    base_url: String,
    default_link_ttl: String,
    enabled: bool,
    period: String,
    /// Whether the doorway is counting under the saved settings.
    counting: bool,
    errors: FieldErrors,
}

impl SettingsPage {
    fn error(&self, key: &str) -> Option<&str> {
        error_for(&self.errors, key)
    }
}

fn field_errors(ctx: &PageContext, errors: Vec<FieldError>) -> FieldErrors {
    errors
        .into_iter()
        .map(|e| (e.key.to_owned(), ctx.msg(&e.message)))
        .collect()
}

pub async fn show(State(state): State<AppState>, ctx: PageContext) -> Result<Response> {
    let s = Settings::load(&state.db).await?;
    Ok(html(&SettingsPage {
        site_name: s.site_name.clone(),
        base_url: s.base_url.clone(),
        default_link_ttl: s.default_link_ttl.to_string(),
        enabled: s.request_limits_enabled,
        period: s.request_limits_period.to_string(),
        counting: FloodGuard::is_counting(&s.interaction_limits()),
        errors: Vec::new(),
        ctx,
    }))
}

#[derive(Deserialize)]
pub struct SettingsForm {
    #[serde(default)]
    site_name: String,
    #[serde(default)]
    base_url: String,
    #[serde(default)]
    default_link_ttl: String,
    enabled: Option<String>,
    #[serde(default)]
    period: String,
}

pub async fn save(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    Form(form): Form<SettingsForm>,
) -> Result<Response> {
    let enabled = if form.enabled.is_some() {
        "true"
    } else {
        "false"
    };
    let values = [
        ("orchestra.site_name", form.site_name.as_str()),
        ("orchestra.base_url", form.base_url.as_str()),
        ("orchestra.default_link_ttl", form.default_link_ttl.as_str()),
        ("orchestra.request_limits.enabled", enabled),
        ("orchestra.request_limits.period", form.period.as_str()),
    ];
    match Settings::save(&state.db, &values).await? {
        Ok(_) => {
            state.site.refresh().await;
            flash(&session, "settings-saved").await?;
            Ok(Redirect::to("/admin/config/orchestra").into_response())
        }
        Err(errors) => {
            let saved = Settings::load(&state.db).await?;
            let mut response = html(&SettingsPage {
                errors: field_errors(&ctx, errors),
                site_name: form.site_name,
                base_url: form.base_url,
                default_link_ttl: form.default_link_ttl,
                enabled: form.enabled.is_some(),
                period: form.period,
                counting: FloodGuard::is_counting(&saved.interaction_limits()),
                ctx,
            });
            *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
            Ok(response)
        }
    }
}

#[derive(askama::Template)]
#[template(path = "admin/interaction.html")]
struct InteractionPage {
    ctx: PageContext,
    per_link: String,
    total: String,
    notice_per_payment: String,
    notice_total: String,
    test_provider: bool,
    enabled: bool,
    period: u64,
    counting: bool,
    notices_counting: bool,
    errors: FieldErrors,
}

impl InteractionPage {
    fn error(&self, key: &str) -> Option<&str> {
        error_for(&self.errors, key)
    }
}

pub async fn interaction_show(State(state): State<AppState>, ctx: PageContext) -> Result<Response> {
    let s = Settings::load(&state.db).await?;
    Ok(html(&InteractionPage {
        per_link: s.per_link.to_string(),
        total: s.total.to_string(),
        notice_per_payment: s.notice_per_payment.to_string(),
        notice_total: s.notice_total.to_string(),
        test_provider: s.test_provider,
        enabled: s.request_limits_enabled,
        period: s.request_limits_period,
        counting: FloodGuard::is_counting(&s.interaction_limits()),
        notices_counting: FloodGuard::is_counting(&s.notice_limits()),
        errors: Vec::new(),
        ctx,
    }))
}

#[derive(Deserialize)]
pub struct InteractionForm {
    #[serde(default)]
    per_link: String,
    #[serde(default)]
    total: String,
    #[serde(default)]
    notice_per_payment: String,
    #[serde(default)]
    notice_total: String,
    test_provider: Option<String>,
}

pub async fn interaction_save(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    Form(form): Form<InteractionForm>,
) -> Result<Response> {
    let test_provider = if form.test_provider.is_some() {
        "true"
    } else {
        "false"
    };
    let values = [
        ("interaction.limits.per_link", form.per_link.as_str()),
        ("interaction.limits.total", form.total.as_str()),
        (
            "notice.limits.per_payment",
            form.notice_per_payment.as_str(),
        ),
        ("notice.limits.total", form.notice_total.as_str()),
        ("orchestra.test_provider", test_provider),
    ];
    match Settings::save(&state.db, &values).await? {
        Ok(_) => {
            state.site.refresh().await;
            flash(&session, "settings-saved").await?;
            Ok(Redirect::to("/admin/config/orchestra/interaction").into_response())
        }
        Err(errors) => {
            let s = Settings::load(&state.db).await?;
            let mut response = html(&InteractionPage {
                errors: field_errors(&ctx, errors),
                per_link: form.per_link,
                total: form.total,
                notice_per_payment: form.notice_per_payment,
                notice_total: form.notice_total,
                test_provider: form.test_provider.is_some(),
                enabled: s.request_limits_enabled,
                period: s.request_limits_period,
                counting: FloodGuard::is_counting(&s.interaction_limits()),
                notices_counting: FloodGuard::is_counting(&s.notice_limits()),
                ctx,
            });
            *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
            Ok(response)
        }
    }
}
