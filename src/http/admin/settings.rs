//! Orchestra settings (with its Request limits section) and Interaction settings.
//!
//! Both pages save through `Settings::save`, the same validation `orchestra config set` uses;
//! a rejected form keeps what was typed and saves nothing.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use tower_sessions::Session;

use super::sizing::{self, SizingView};
use super::{FieldErrors, error_for};
use crate::domain::settings::{FieldError, Settings};
use crate::http::AppState;
use crate::http::context::{PageContext, flash, html};
use crate::http::error::Result;
use crate::http::form::Form;
use crate::i18n::Message;
use crate::limits::guard::{Address, FloodGuard, LimitsState, Mode};

/// The charts each settings page draws: those of the limits it sets.
const LOGIN_CHARTS: [Address; 2] = [Address::SignInAddress, Address::SignInAccount];
const INTERACTION_CHARTS: [Address; 2] = [Address::Doorway, Address::Notice];

#[derive(askama::Template)]
#[template(path = "admin/settings.html")]
struct SettingsPage {
    ctx: PageContext,
    site_name: String,
    base_url: String,
    default_link_ttl: String,
    enabled: bool,
    period: String,
    /// What the doorway's limits do under the saved settings, and why.
    limits_state: LimitsState,
    /// The one `orchestra config` line that makes the doorway count with both tiers.
    fix: String,
    /// How many requests a visit takes, and the per-link limit the examples suggest.
    requests_help: String,
    on_store_fault: String,
    login: LoginFields,
    /// The API's default bucket (docs/api.md).
    api_rate: String,
    api_burst: String,
    errors: FieldErrors,
    /// The sign-in's attempts per period against its two limits (`admin/sizing.html`).
    sizings: Vec<SizingView>,
}

/// The sign-in limits, as shown (and as typed, on a refused form).
#[derive(Default)]
pub struct LoginFields {
    login_per_address: String,
    login_address_period: String,
    login_per_account: String,
    login_account_total: String,
    login_account_period: String,
    login_report_only: bool,
}

/// The sign-in limits as posted; a field left out of the form keeps its saved value.
#[derive(Deserialize, Default)]
pub struct LoginForm {
    login_per_address: Option<String>,
    login_address_period: Option<String>,
    login_per_account: Option<String>,
    login_account_total: Option<String>,
    login_account_period: Option<String>,
    /// Sent by the sign-in fieldset, so that its unticked checkbox means "enforce"; a post
    /// without it leaves report-only alone.
    login_limits: Option<String>,
    login_report_only: Option<String>,
}

impl LoginForm {
    fn values(&self) -> Vec<(&'static str, &str)> {
        [
            ("login.limits.per_address", &self.login_per_address),
            ("login.limits.address_period", &self.login_address_period),
            ("login.limits.per_account", &self.login_per_account),
            ("login.limits.account_total", &self.login_account_total),
            ("login.limits.account_period", &self.login_account_period),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_deref().map(|v| (k, v)))
        .chain(
            self.login_limits
                .is_some()
                .then(|| ("login.limits.report_only", switch(&self.login_report_only))),
        )
        .collect()
    }

    /// What the refused form shows again: what was typed, else what is saved.
    fn shown(self, saved: &Settings) -> LoginFields {
        let saved = LoginFields::of(saved);
        LoginFields {
            login_per_address: self.login_per_address.unwrap_or(saved.login_per_address),
            login_address_period: self
                .login_address_period
                .unwrap_or(saved.login_address_period),
            login_per_account: self.login_per_account.unwrap_or(saved.login_per_account),
            login_account_total: self
                .login_account_total
                .unwrap_or(saved.login_account_total),
            login_account_period: self
                .login_account_period
                .unwrap_or(saved.login_account_period),
            login_report_only: if self.login_limits.is_some() {
                self.login_report_only.is_some()
            } else {
                saved.login_report_only
            },
        }
    }
}

impl LoginFields {
    fn of(s: &Settings) -> Self {
        Self {
            login_per_address: s.login_per_address.to_string(),
            login_address_period: s.login_address_period.to_string(),
            login_per_account: s.login_per_account.to_string(),
            login_account_total: s.login_account_total.to_string(),
            login_account_period: s.login_account_period.to_string(),
            login_report_only: s.login_report_only,
        }
    }
}

impl SettingsPage {
    fn error(&self, key: &str) -> Option<&str> {
        error_for(&self.errors, key)
    }
}

fn requests_help(ctx: &PageContext) -> String {
    ctx.msg(&Message::new("limits-requests-help").arg(
        "suggested",
        crate::domain::workflow::suggested_per_link().to_string(),
    ))
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
        limits_state: LimitsState::of(&s.interaction_limits()),
        fix: crate::domain::status::doorway_fix(&s),
        requests_help: requests_help(&ctx),
        on_store_fault: s.on_store_fault.name().to_owned(),
        login: LoginFields::of(&s),
        sizings: sizing::views(&state, &s, &LOGIN_CHARTS, &ctx),
        api_rate: s.api_rate_per_minute.to_string(),
        api_burst: s.api_burst.to_string(),
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
    /// Left out of a post, the saved choice stays.
    on_store_fault: Option<String>,
    #[serde(flatten)]
    login: LoginForm,
    /// Left out of a post, the saved values stay.
    api_rate: Option<String>,
    api_burst: Option<String>,
}

pub async fn save(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    Form(form): Form<SettingsForm>,
) -> Result<Response> {
    let enabled = switch(&form.enabled);
    let mut values = vec![
        ("orchestra.site_name", form.site_name.as_str()),
        ("orchestra.base_url", form.base_url.as_str()),
        ("orchestra.default_link_ttl", form.default_link_ttl.as_str()),
        ("orchestra.request_limits.enabled", enabled),
        ("orchestra.request_limits.period", form.period.as_str()),
    ];
    if let Some(on_fault) = &form.on_store_fault {
        values.push(("orchestra.request_limits.on_store_fault", on_fault.as_str()));
    }
    values.extend(form.login.values());
    if let Some(rate) = &form.api_rate {
        values.push(("api.limits.rate_per_minute", rate.as_str()));
    }
    if let Some(burst) = &form.api_burst {
        values.push(("api.limits.burst", burst.as_str()));
    }
    match Settings::save(&state.db, &values).await {
        Ok(saved) => {
            state.site.saved(saved);
            flash(&session, "settings-saved").await?;
            Ok(Redirect::to("/admin/config/orchestra").into_response())
        }
        Err(e) => {
            let errors = e.refusal()?;
            // What this server holds (no read back): the fields the form did not send.
            let saved = state.site.get().await.settings.clone();
            let mut response = html(&SettingsPage {
                errors: field_errors(&ctx, errors),
                site_name: form.site_name,
                base_url: form.base_url,
                default_link_ttl: form.default_link_ttl,
                enabled: form.enabled.is_some(),
                period: form.period,
                limits_state: LimitsState::of(&saved.interaction_limits()),
                fix: crate::domain::status::doorway_fix(&saved),
                requests_help: requests_help(&ctx),
                on_store_fault: form
                    .on_store_fault
                    .clone()
                    .unwrap_or_else(|| saved.on_store_fault.name().to_owned()),
                login: form.login.shown(&saved),
                sizings: sizing::views(&state, &saved, &LOGIN_CHARTS, &ctx),
                api_rate: form
                    .api_rate
                    .clone()
                    .unwrap_or_else(|| saved.api_rate_per_minute.to_string()),
                api_burst: form
                    .api_burst
                    .clone()
                    .unwrap_or_else(|| saved.api_burst.to_string()),
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
    /// Counting and refusing: not in report-only mode.
    refusing: bool,
    notices_refusing: bool,
    /// The notices box's own words for its state (`notices_state`), never the doorway's.
    notices_state: &'static str,
    report_only: bool,
    notice_report_only: bool,
    errors: FieldErrors,
    /// The doorway's and the notices' requests per period against their limits
    /// (`admin/sizing.html`).
    sizings: Vec<SizingView>,
}

/// What the notices' limits do, in the notices' own words: the doorway's state sentences name
/// the doorway, and the switch's state as the doorway sees it.
fn notices_state(s: &Settings) -> &'static str {
    let limits = s.notice_limits();
    if FloodGuard::is_counting(&limits) && s.notice_mode() == Mode::ReportOnly {
        return "notices-state-report-only";
    }
    match LimitsState::of(&limits) {
        LimitsState::SwitchOff => "notices-state-switch-off",
        LimitsState::PeriodZero => "notices-state-period-zero",
        LimitsState::BothZero => "notices-state-not-counting",
        LimitsState::PerCallerOnly => "notices-state-per-payment-only",
        LimitsState::TotalOnly => "notices-state-total-only",
        LimitsState::Both => "notices-state-counting",
    }
}

impl InteractionPage {
    fn error(&self, key: &str) -> Option<&str> {
        error_for(&self.errors, key)
    }
}

pub async fn interaction_show(State(state): State<AppState>, ctx: PageContext) -> Result<Response> {
    let s = Settings::load(&state.db).await?;
    Ok(html(&InteractionPage {
        sizings: sizing::views(&state, &s, &INTERACTION_CHARTS, &ctx),
        per_link: s.per_link.to_string(),
        total: s.total.to_string(),
        notice_per_payment: s.notice_per_payment.to_string(),
        notice_total: s.notice_total.to_string(),
        test_provider: s.test_provider,
        enabled: s.request_limits_enabled,
        period: s.request_limits_period,
        counting: FloodGuard::is_counting(&s.interaction_limits()),
        refusing: FloodGuard::is_refusing(&s.interaction_limits(), s.interaction_mode()),
        notices_refusing: FloodGuard::is_refusing(&s.notice_limits(), s.notice_mode()),
        notices_state: notices_state(&s),
        report_only: s.interaction_mode() == Mode::ReportOnly,
        notice_report_only: s.notice_mode() == Mode::ReportOnly,
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
    /// Sent by the page's notices section; a post without it leaves those settings alone.
    notices: Option<String>,
    #[serde(default)]
    notice_per_payment: String,
    #[serde(default)]
    notice_total: String,
    test_provider: Option<String>,
    report_only: Option<String>,
    notice_report_only: Option<String>,
}

pub async fn interaction_save(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    Form(form): Form<InteractionForm>,
) -> Result<Response> {
    let test_provider = switch(&form.test_provider);
    let flag = switch;
    let mut values = vec![
        ("interaction.limits.per_link", form.per_link.as_str()),
        ("interaction.limits.total", form.total.as_str()),
        ("interaction.limits.report_only", flag(&form.report_only)),
    ];
    if form.notices.is_some() {
        values.extend([
            (
                "notice.limits.per_payment",
                form.notice_per_payment.as_str(),
            ),
            ("notice.limits.total", form.notice_total.as_str()),
            ("orchestra.test_provider", test_provider),
            ("notice.limits.report_only", flag(&form.notice_report_only)),
        ]);
    }
    match Settings::save(&state.db, &values).await {
        Ok(saved) => {
            state.site.saved(saved);
            flash(&session, "settings-saved").await?;
            Ok(Redirect::to("/admin/config/orchestra/interaction").into_response())
        }
        Err(e) => {
            let errors = e.refusal()?;
            let s = state.site.get().await.settings.clone();
            let mut response = html(&InteractionPage {
                sizings: sizing::views(&state, &s, &INTERACTION_CHARTS, &ctx),
                errors: field_errors(&ctx, errors),
                per_link: form.per_link,
                total: form.total,
                notice_per_payment: if form.notices.is_some() {
                    form.notice_per_payment
                } else {
                    s.notice_per_payment.to_string()
                },
                notice_total: if form.notices.is_some() {
                    form.notice_total
                } else {
                    s.notice_total.to_string()
                },
                test_provider: if form.notices.is_some() {
                    form.test_provider.is_some()
                } else {
                    s.test_provider
                },
                enabled: s.request_limits_enabled,
                period: s.request_limits_period,
                counting: FloodGuard::is_counting(&s.interaction_limits()),
                refusing: FloodGuard::is_refusing(&s.interaction_limits(), s.interaction_mode()),
                notices_refusing: FloodGuard::is_refusing(&s.notice_limits(), s.notice_mode()),
                notices_state: notices_state(&s),
                report_only: form.report_only.is_some(),
                notice_report_only: if form.notices.is_some() {
                    form.notice_report_only.is_some()
                } else {
                    s.notice_report_only
                },
                ctx,
            });
            *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
            Ok(response)
        }
    }
}

/// A checkbox as a setting's text: ticked (sent) is `true`, left out is `false`.
fn switch(on: &Option<String>) -> &'static str {
    if on.is_some() { "true" } else { "false" }
}
