//! API tokens: list (with their scopes), create with a scope (the token is shown once, on the
//! page redirected to), revoke after a confirmation page.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use tower_sessions::Session;

use super::confirm::ConfirmPage;
use super::{FieldErrors, error_for};
use crate::domain::api::scope::{Ability, Reach, Scope};
use crate::domain::audit::Event;
use crate::http::AppState;
use crate::http::audit::Audit;
use crate::http::context::{PageContext, flash, flash_to, html};
use crate::http::error::{AppError, Result};
use crate::http::extract::Path;
use crate::http::form::Form;
use crate::http::once::{Once, Slot};
use crate::i18n::Message;
use crate::store;

pub struct TokenLine {
    pub name: String,
    pub rate: String,
    pub burst: String,
    /// The scope's three parts, as the list shows them.
    pub abilities: String,
    pub reach: String,
    pub workflows: String,
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
    abilities: Vec<Choice>,
    reaches: Vec<Choice>,
    workflows: Vec<Choice>,
    errors: FieldErrors,
}

/// A box or a radio button of the scope's fieldsets, ticked as the form was sent.
pub struct Choice {
    pub value: String,
    pub label: String,
    pub checked: bool,
}

/// The scope as the form's fields say it: ability names, a reach, workflow names.
#[derive(Default)]
struct Ticked {
    abilities: Vec<String>,
    reach: String,
    workflows: Vec<String>,
}

impl Ticked {
    /// A scope as its boxes show it: a blank form shows the default scope.
    fn of(scope: &Scope) -> Self {
        Self {
            abilities: scope
                .abilities
                .iter()
                .map(|a| a.as_str().to_owned())
                .collect(),
            reach: scope.reach.as_str().to_owned(),
            workflows: scope.workflows.clone().unwrap_or_default(),
        }
    }
}

fn ability_label(ability: Ability) -> &'static str {
    match ability {
        Ability::Read => "token-ability-read",
        Ability::Start => "token-ability-start",
        Ability::Links => "token-ability-links",
        Ability::Workflows => "token-ability-workflows",
    }
}

fn reach_label(reach: Reach) -> &'static str {
    match reach {
        Reach::Own => "token-reach-own",
        Reach::All => "token-reach-all",
    }
}

impl TokensPage {
    fn error(&self, key: &str) -> Option<&str> {
        error_for(&self.errors, key)
    }
}

async fn page(state: &AppState, ctx: PageContext, ticked: &Ticked) -> Result<TokensPage> {
    let settings = state.site.get().await.settings.clone();
    let tokens = store::api::tokens(&state.db)
        .await?
        .into_iter()
        .map(|t| TokenLine {
            abilities: t.scope.abilities.join(", "),
            reach: ctx.t(match t.scope.reach {
                Reach::Own => "token-reach-own-short",
                Reach::All => "token-reach-all-short",
            }),
            workflows: t
                .scope
                .workflows
                .as_ref()
                .map_or_else(|| ctx.t("token-workflows-every"), |w| w.join(", ")),
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
    let abilities = Ability::ALL
        .into_iter()
        .map(|a| Choice {
            value: a.as_str().to_owned(),
            label: ctx.t(ability_label(a)),
            checked: ticked.abilities.iter().any(|t| t == a.as_str()),
        })
        .collect();
    let reaches = Reach::ALL
        .into_iter()
        .map(|r| Choice {
            value: r.as_str().to_owned(),
            label: ctx.t(reach_label(r)),
            checked: ticked.reach == r.as_str(),
        })
        .collect();
    let workflows = store::workflows::list(&state.db)
        .await?
        .into_iter()
        .map(|w| Choice {
            checked: ticked.workflows.contains(&w.name),
            label: format!(
                "{} ({})",
                crate::domain::workflow::labels::label_in(&w.label, &w.labels, ctx.lang),
                w.name
            ),
            value: w.name,
        })
        .collect();
    Ok(TokensPage {
        ctx,
        tokens,
        created: None,
        name: String::new(),
        rate: String::new(),
        burst: String::new(),
        abilities,
        reaches,
        workflows,
        errors: Vec::new(),
    })
}

pub async fn list(State(state): State<AppState>, ctx: PageContext, once: Once) -> Result<Response> {
    let mut page = page(&state, ctx, &Ticked::of(&Scope::default())).await?;
    // Shown once: the browser's cookie holding it is removed as it is shown.
    page.created = once.take::<String>(Slot::NewToken);
    let mut response = html(&page);
    response.headers_mut().insert(
        axum::http::header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
    once.forget(&mut response, Slot::NewToken)?;
    Ok(response)
}

/// The new-token form: its fields by name, the scope's boxes once per box ticked.
#[derive(Default)]
pub struct NewToken {
    name: String,
    rate: String,
    burst: String,
    ticked: Ticked,
}

impl NewToken {
    fn from_pairs(pairs: Vec<(String, String)>) -> Self {
        let mut form = NewToken::default();
        for (field, value) in pairs {
            match field.as_str() {
                "name" => form.name = value,
                "rate" => form.rate = value,
                "burst" => form.burst = value,
                "ability" => form.ticked.abilities.push(value),
                "reach" => form.ticked.reach = value,
                "workflow" => form.ticked.workflows.push(value),
                _ => {}
            }
        }
        form
    }

    /// The scope ticked; an error names its fieldset.
    fn scope(&self) -> std::result::Result<Scope, crate::domain::api::scope::ScopeError> {
        let t = &self.ticked;
        Scope::default().with_words(
            Some(t.abilities.iter().map(String::as_str)),
            (!t.reach.is_empty()).then_some(t.reach.as_str()),
            Some(t.workflows.iter().map(String::as_str)),
        )
    }
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
    audit: Audit,
    ctx: PageContext,
    session: Session,
    once: Once,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response> {
    let form = NewToken::from_pairs(pairs);
    let mut errors: FieldErrors = Vec::new();
    let name = form.name.trim();
    if !crate::domain::api::valid_name(name) {
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
    let scope = form
        .scope()
        .map_err(|e| errors.push((e.field.into(), ctx.msg(&e.message))))
        .ok();
    // Checked whatever else is wrong, so that every error shows at once.
    if error_for(&errors, "workflows").is_none()
        && let Some(name) =
            crate::domain::api::unknown_workflow(&state.db, &form.ticked.workflows).await?
    {
        let message = Message::new("token-workflow-unknown").arg("name", name);
        errors.push(("workflows".into(), ctx.msg(&message)));
    }
    if let (true, Some(scope)) = (errors.is_empty(), scope) {
        let keys = state.site.get().await.keys.clone();
        match crate::domain::api::create_scoped_token(
            &state.db,
            &keys,
            name,
            rate.ok().flatten(),
            burst.ok().flatten(),
            &scope,
        )
        .await?
        {
            Some(text) => {
                flash(&session, "token-created").await?;
                audit.record(Event::TokenCreated(name.to_owned())).await;
                tracing::info!(token = name, "API token created");
                let mut response = Redirect::to("/admin/config/api").into_response();
                once.keep(&mut response, Slot::NewToken, text)?;
                return Ok(response);
            }
            None => errors.push(("name".into(), ctx.t("token-name-taken"))),
        }
    }
    let mut page = page(&state, ctx, &form.ticked).await?;
    page.name = form.name;
    page.rate = form.rate;
    page.burst = form.burst;
    page.errors = errors;
    let mut response = html(&page);
    *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    Ok(response)
}

fn revoke_page(ctx: PageContext, name: &str) -> ConfirmPage {
    let revoke = Message::new("token-revoke").arg("name", name.to_owned());
    ConfirmPage::new(
        ctx,
        revoke.clone(),
        Message::new("token-revoke-explain"),
        revoke,
        "/admin/config/api",
    )
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
    audit: Audit,
    session: Session,
    Path(name): Path<String>,
) -> Result<Response> {
    let id = store::api::revoke_token(&state.db, &name)
        .await?
        .ok_or(AppError::NotFound)?;
    state.api_buckets.forget(id);
    audit.record(Event::TokenRevoked(name)).await;
    state.api_seen.forget_id(id);
    flash_to(&session, "token-revoked-flash", "/admin/config/api").await
}
