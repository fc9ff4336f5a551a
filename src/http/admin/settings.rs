//! Orchestra settings (with its Request limits section) and Interaction settings.
//!
//! Both pages are read from the settings registry: a page lists its sections' keys, and each
//! field is named by its setting's `form` name. Both save through `Settings::save`, the same
//! validation `orchestra config set` uses; a rejected form keeps what was typed and saves
//! nothing.

use std::collections::HashMap;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use tower_sessions::Session;

use super::sizing::{self, SizingView};
use super::{FieldErrors, error_for};
use crate::domain::settings::{self as registry, FieldError, Settings};
use crate::http::AppState;
use crate::http::audit::Audit;
use crate::http::context::{PageContext, flash_to, html};
use crate::http::error::Result;
use crate::http::form::Form;
use crate::i18n::Message;
use crate::limits::guard::{Address, FloodGuard, LimitsState, Mode};

/// The charts each settings page draws: those of the limits it sets.
const LOGIN_CHARTS: [Address; 2] = [Address::SignInAddress, Address::SignInAccount];
const INTERACTION_CHARTS: [Address; 2] = [Address::Doorway, Address::Notice];

/// Part of a settings page: the settings its fields set. A text field left out of a post keeps
/// its saved value; a checkbox left out means off, but only when its section was posted, which
/// `sent_by` (a hidden field) says, or always when it is `None`.
struct Section {
    sent_by: Option<&'static str>,
    keys: &'static [&'static str],
}

const SETTINGS_PAGE: &[Section] = &[
    Section {
        sent_by: None,
        keys: &[
            "orchestra.site_name",
            "orchestra.base_url",
            "orchestra.default_link_ttl",
            "records.retention_days",
            "orchestra.request_limits.enabled",
            "orchestra.request_limits.period",
            "orchestra.request_limits.on_store_fault",
            "api.limits.rate_per_minute",
            "api.limits.burst",
            "login.two_step_required",
        ],
    },
    Section {
        sent_by: Some("login_limits"),
        keys: &[
            "login.limits.per_address",
            "login.limits.address_period",
            "login.limits.per_account",
            "login.limits.account_total",
            "login.limits.account_period",
            "login.limits.report_only",
        ],
    },
];

const INTERACTION_PAGE: &[Section] = &[
    Section {
        sent_by: None,
        keys: &[
            "interaction.limits.per_link",
            "interaction.limits.total",
            "interaction.limits.report_only",
            "interaction.files.max_mb",
        ],
    },
    Section {
        sent_by: Some("notices"),
        keys: &[
            "notice.limits.per_payment",
            "notice.limits.total",
            "orchestra.test_provider",
            "notice.limits.report_only",
        ],
    },
];

/// The settings everyone sets, above each page's *Advanced* part (the limits).
const SETTINGS_BASICS: &[&str] = &[
    "orchestra.site_name",
    "orchestra.base_url",
    "orchestra.default_link_ttl",
    "records.retention_days",
    "login.two_step_required",
];
const INTERACTION_BASICS: &[&str] = &["interaction.files.max_mb"];

/// Whether a refused value lies in the *Advanced* part, outside `basics`.
fn errors_beyond(errors: &[FieldError], basics: &[&str]) -> bool {
    errors.iter().any(|e| !basics.contains(&e.key))
}

/// What a settings page posted, by field name.
type Posted = Form<Vec<(String, String)>>;

/// A settings page's fields as shown, by form name: what was typed on a refused form, else
/// what is saved. A switch is `"true"` or `"false"`.
pub struct Fields(HashMap<&'static str, String>);

impl Fields {
    /// The page's settings as saved.
    fn saved(page: &[Section], saved: &Settings) -> Self {
        Self(settings_of(page).map(|s| (s.form, s.get(saved))).collect())
    }

    /// A text field's value.
    pub fn text(&self, form: &str) -> &str {
        self.0.get(form).map_or("", String::as_str)
    }

    /// Whether a checkbox is ticked.
    pub fn on(&self, form: &str) -> bool {
        self.text(form) == "true"
    }
}

fn settings_of(page: &[Section]) -> impl Iterator<Item = &'static registry::Setting> + '_ {
    page.iter()
        .flat_map(|section| section.keys)
        .map(|key| registry::setting(key).expect("a settings page names registered keys"))
}

/// What a post sets: `(key, text)` of each setting it changes, read by the rule of [`Section`].
fn posted_values(page: &[Section], posted: &[(String, String)]) -> Vec<(&'static str, String)> {
    let sent = |name: &str| posted.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v);
    let mut values = Vec::new();
    for section in page {
        let section_sent = section.sent_by.is_none_or(|marker| sent(marker).is_some());
        for key in section.keys {
            let setting = registry::setting(key).expect("a settings page names registered keys");
            let value = sent(setting.form);
            if setting.is_switch() {
                if section_sent {
                    values.push((setting.key, value.is_some().to_string()));
                }
            } else if let Some(value) = value {
                values.push((setting.key, value.clone()));
            }
        }
    }
    values
}

/// Saves what a settings page posted and goes back to it; a refused post is answered by
/// `refused` (the page again, with what was typed and each field's error) with 422.
async fn save_posted(
    state: &AppState,
    session: &Session,
    page: &'static [Section],
    posted: Vec<(String, String)>,
    back: &'static str,
    audit: &Audit,
    refused: impl FnOnce(Fields, Vec<FieldError>, &Settings) -> Response,
) -> Result<Response> {
    let values = posted_values(page, &posted);
    let pairs: Vec<(&'static str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (actor, address) = (&audit.actor, audit.address.as_deref());
    match crate::domain::audit::save_settings(&state.db, actor, address, &pairs).await {
        Ok(saved) => {
            state.site.saved(saved);
            flash_to(session, "settings-saved", back).await
        }
        Err(e) => {
            let errors = e.refusal()?;
            // What this server holds (no read back): the fields the form did not send.
            let saved = state.site.get().await.settings.clone();
            let mut fields = Fields::saved(page, &saved);
            for (key, value) in values {
                let form = registry::setting(key).map_or("", |s| s.form);
                fields.0.insert(form, value);
            }
            let mut response = refused(fields, errors, &saved);
            *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
            Ok(response)
        }
    }
}

#[derive(askama::Template)]
#[template(path = "admin/settings.html")]
struct SettingsPage {
    ctx: PageContext,
    fields: Fields,
    /// What the doorway's limits do under the saved settings, and why.
    limits_state: LimitsState,
    /// The one `orchestra config` line that makes the doorway count with both tiers.
    fix: String,
    /// How many requests a visit takes, and the per-link limit the examples suggest.
    requests_help: String,
    errors: FieldErrors,
    /// The sign-in's attempts per period against its two limits (`admin/sizing.html`).
    sizings: Vec<SizingView>,
    /// The *Advanced* part opens by itself when it needs a look: a refused value in it, or a
    /// doorway nothing caps fully.
    advanced_open: bool,
}

impl SettingsPage {
    fn new(
        state: &AppState,
        ctx: PageContext,
        fields: Fields,
        errors: Vec<FieldError>,
        saved: &Settings,
    ) -> Self {
        let limits_state = LimitsState::of(&saved.interaction_limits());
        let advanced_open =
            limits_state != LimitsState::Both || errors_beyond(&errors, SETTINGS_BASICS);
        Self {
            fields,
            limits_state,
            advanced_open,
            fix: crate::domain::status::doorway_fix(saved),
            requests_help: ctx.msg(&Message::new("limits-requests-help").arg(
                "suggested",
                crate::domain::workflow::suggested_per_link().to_string(),
            )),
            errors: field_errors(&ctx, errors),
            sizings: sizing::views(state, saved, &LOGIN_CHARTS, &ctx),
            ctx,
        }
    }

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
    let fields = Fields::saved(SETTINGS_PAGE, &s);
    Ok(html(&SettingsPage::new(
        &state,
        ctx,
        fields,
        Vec::new(),
        &s,
    )))
}

pub async fn save(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    audit: Audit,
    Form(posted): Posted,
) -> Result<Response> {
    let back = "/admin/config/orchestra";
    save_posted(
        &state,
        &session,
        SETTINGS_PAGE,
        posted,
        back,
        &audit,
        |fields, errors, saved| html(&SettingsPage::new(&state, ctx, fields, errors, saved)),
    )
    .await
}

#[derive(askama::Template)]
#[template(path = "admin/interaction.html")]
struct InteractionPage {
    ctx: PageContext,
    fields: Fields,
    enabled: bool,
    period: u64,
    counting: bool,
    /// Counting and refusing: not in report-only mode.
    refusing: bool,
    notices_refusing: bool,
    /// The notices box's own words for its state (`notices_state`), never the doorway's.
    notices_state: &'static str,
    errors: FieldErrors,
    /// The doorway's and the notices' requests per period against their limits
    /// (`admin/sizing.html`).
    sizings: Vec<SizingView>,
    /// As on the settings page: open when a limit was refused or the doorway is not fully
    /// capped.
    advanced_open: bool,
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
    fn new(
        state: &AppState,
        ctx: PageContext,
        fields: Fields,
        errors: Vec<FieldError>,
        s: &Settings,
    ) -> Self {
        let refusing = FloodGuard::is_refusing(&s.interaction_limits(), s.interaction_mode());
        Self {
            advanced_open: !refusing || errors_beyond(&errors, INTERACTION_BASICS),
            sizings: sizing::views(state, s, &INTERACTION_CHARTS, &ctx),
            fields,
            enabled: s.request_limits_enabled,
            period: s.request_limits_period,
            counting: FloodGuard::is_counting(&s.interaction_limits()),
            refusing,
            notices_refusing: FloodGuard::is_refusing(&s.notice_limits(), s.notice_mode()),
            notices_state: notices_state(s),
            errors: field_errors(&ctx, errors),
            ctx,
        }
    }

    fn error(&self, key: &str) -> Option<&str> {
        error_for(&self.errors, key)
    }
}

pub async fn interaction_show(State(state): State<AppState>, ctx: PageContext) -> Result<Response> {
    let s = Settings::load(&state.db).await?;
    let fields = Fields::saved(INTERACTION_PAGE, &s);
    Ok(html(&InteractionPage::new(
        &state,
        ctx,
        fields,
        Vec::new(),
        &s,
    )))
}

pub async fn interaction_save(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    audit: Audit,
    Form(posted): Posted,
) -> Result<Response> {
    let back = "/admin/config/orchestra/interaction";
    save_posted(
        &state,
        &session,
        INTERACTION_PAGE,
        posted,
        back,
        &audit,
        |fields, errors, saved| html(&InteractionPage::new(&state, ctx, fields, errors, saved)),
    )
    .await
}
