//! Webhook endpoints: the list (state, failures, last attempt), add one (its signing secret
//! shown once, on the list the POST redirects to), delete after a confirmation page, disable
//! one or enable it again, send at once what waits for one (*Retry now*), and each endpoint's
//! delivery log, newest first, a page at a
//! time, with *Send again* on a delivery. The rules are `domain::delivery::endpoints`'.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use tower_sessions::Session;

use super::confirm::ConfirmPage;
use super::tokens::Choice;
use super::{FieldErrors, error_for};
use crate::domain::audit::Event;
use crate::domain::delivery::endpoints::{self, Refusal};
use crate::domain::delivery::{Topic, topic};
use crate::http::AppState;
use crate::http::audit::Audit;
use crate::http::context::{FlashKind, PageContext, flash, flash_as, flash_to, html};
use crate::http::error::{AppError, Result};
use crate::http::extract::{Path, Query};
use crate::http::form::Form;
use crate::http::once::{Once, Slot};
use crate::i18n::Message;
use crate::store;
use crate::store::webhooks::{Again, EndpointRow, LogLine};

const LIST: &str = "/admin/webhooks";

/// Attempts a page of the delivery log shows.
pub const LOG_PAGE: i64 = 50;

/// An endpoint as the list and its log page show it.
pub struct EndpointLine {
    pub id: i64,
    pub url: String,
    pub events: String,
    /// Who registered it: the site's administrators, or an API token by name.
    pub owner: String,
    pub enabled: bool,
    /// Enabled, failing, or disabled.
    pub state: String,
    /// Since when it fails (its day and its hour), while it does.
    pub failing_since: Option<(String, String)>,
    pub failures: String,
    /// A time as the list shows it: its day and its hour, each kept on one line.
    pub created: (String, String),
    pub last_attempt: (String, String),
}

/// A time's day and the rest ("2026-12-04", "09:45 UTC"): a narrow column breaks between the
/// two, never inside the day.
fn day_and_hour(text: String) -> (String, String) {
    match text.split_once(' ') {
        Some((day, hour)) => (day.to_owned(), hour.to_owned()),
        None => (text, String::new()),
    }
}

fn line(
    ctx: &PageContext,
    e: &EndpointRow,
    token: Option<&str>,
    last: Option<i64>,
) -> EndpointLine {
    let events = if e.events.is_empty() {
        ctx.t("webhooks-every-event")
    } else {
        e.events.replace(',', ", ")
    };
    let owner = match (e.api_token_id, token) {
        (None, _) => ctx.t("webhooks-owner-site"),
        (Some(_), name) => ctx
            .msg(&Message::new("webhooks-owner-token").arg("name", name.unwrap_or("?").to_owned())),
    };
    EndpointLine {
        id: e.id,
        url: e.url.clone(),
        events,
        owner,
        enabled: e.enabled != 0,
        state: match (e.enabled != 0, e.failing_since) {
            (true, None) => ctx.t("webhooks-enabled"),
            (true, Some(_)) => ctx.t("webhooks-failing-since"),
            (false, _) => ctx.t("webhooks-disabled-why"),
        },
        failing_since: e
            .failing_since
            .filter(|_| e.enabled != 0)
            .map(|at| day_and_hour(crate::time::format_utc(at))),
        failures: e.failures.to_string(),
        created: day_and_hour(crate::time::format_utc(e.created_at)),
        last_attempt: day_and_hour(
            last.map_or_else(|| ctx.t("webhooks-never"), crate::time::format_utc),
        ),
    }
}

#[derive(askama::Template)]
#[template(path = "admin/webhooks.html")]
struct WebhooksPage {
    ctx: PageContext,
    endpoints: Vec<EndpointLine>,
    /// The signing secret of the endpoint just made, shown this once.
    created: Option<String>,
    url: String,
    events: Vec<Choice>,
    errors: FieldErrors,
}

impl WebhooksPage {
    fn error(&self, key: &str) -> Option<&str> {
        error_for(&self.errors, key)
    }
}

async fn page(state: &AppState, ctx: PageContext, ticked: &[String]) -> Result<WebhooksPage> {
    let endpoints = store::webhooks::listed(&state.db)
        .await?
        .iter()
        .map(|l| {
            line(
                &ctx,
                &l.endpoint,
                l.token_name.as_deref(),
                l.last_attempt_at,
            )
        })
        .collect();
    let events = Topic::ALL
        .into_iter()
        .map(|t| Choice {
            value: t.as_str().to_owned(),
            label: t.as_str().to_owned(),
            checked: ticked.iter().any(|v| v == t.as_str()),
        })
        .collect();
    Ok(WebhooksPage {
        ctx,
        endpoints,
        created: None,
        url: String::new(),
        events,
        errors: Vec::new(),
    })
}

fn no_store(response: &mut Response) {
    response.headers_mut().insert(
        axum::http::header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
}

pub async fn list(State(state): State<AppState>, ctx: PageContext, once: Once) -> Result<Response> {
    let mut page = page(&state, ctx, &[]).await?;
    // Shown once: the browser's cookie holding it is removed as it is shown.
    page.created = once.take::<String>(Slot::WebhookSecret);
    let mut response = html(&page);
    no_store(&mut response);
    once.forget(&mut response, Slot::WebhookSecret)?;
    Ok(response)
}

/// Adds an endpoint: the URL and events checked as `orchestra webhook create` checks them;
/// on a refusal the form again, what was typed kept, the error beside its field, nothing saved.
pub async fn create(
    State(state): State<AppState>,
    audit: Audit,
    ctx: PageContext,
    session: Session,
    once: Once,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response> {
    let mut url = String::new();
    let mut ticked = Vec::new();
    for (field, value) in pairs {
        match field.as_str() {
            "url" => url = value,
            "event" => ticked.push(value),
            _ => {}
        }
    }
    let keys = state.site.get().await.keys.clone();
    let events = ticked.join(",");
    let made = endpoints::create(
        &state.db,
        &keys,
        &url,
        Some(events.as_str()),
        state.webhooks_private_allowed(),
    )
    .await;
    let refusal = match made {
        Ok(created) => {
            audit.record(Event::WebhookCreated(created.id, url)).await;
            flash(&session, "webhooks-created-flash").await?;
            let mut response = Redirect::to(LIST).into_response();
            once.keep(&mut response, Slot::WebhookSecret, created.secret.reveal())?;
            return Ok(response);
        }
        Err(e) => e.refusal()?,
    };
    let field = match refusal {
        Refusal::UnknownEvent(_) => "events",
        _ => "url",
    };
    let mut page = page(&state, ctx, &ticked).await?;
    page.errors = vec![(field.to_owned(), page.ctx.msg(&refusal.message()))];
    page.url = url;
    let mut response = html(&page);
    *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    Ok(response)
}

async fn endpoint_of(state: &AppState, id: i64) -> Result<EndpointRow> {
    store::webhooks::by_id(&state.db, id)
        .await?
        .ok_or(AppError::NotFound)
}

fn delete_page(ctx: PageContext, e: &EndpointRow) -> ConfirmPage {
    ConfirmPage::new(
        ctx,
        Message::new("webhooks-delete-title").arg("url", e.url.clone()),
        Message::new("webhooks-delete-explain"),
        Message::new("webhooks-delete-confirm"),
        LIST,
    )
}

pub async fn delete_form(
    State(state): State<AppState>,
    ctx: PageContext,
    Path(id): Path<i64>,
) -> Result<Response> {
    let e = endpoint_of(&state, id).await?;
    Ok(html(&delete_page(ctx, &e)))
}

pub async fn delete(
    State(state): State<AppState>,
    audit: Audit,
    session: Session,
    Path(id): Path<i64>,
) -> Result<Response> {
    if !store::webhooks::delete(&state.db, id).await? {
        return Err(AppError::NotFound);
    }
    tracing::info!(endpoint = id, "webhook endpoint deleted");
    audit.record(Event::WebhookRemoved(id)).await;
    flash_to(&session, "webhooks-deleted-flash", LIST).await
}

/// Enables a disabled endpoint again, its run of failures forgotten: what waited for it is
/// due at once.
pub async fn enable(
    State(state): State<AppState>,
    audit: Audit,
    session: Session,
    Path(id): Path<i64>,
) -> Result<Response> {
    let due = store::webhooks::enable(&state.db, id, store::now())
        .await?
        .ok_or(AppError::NotFound)?;
    tracing::info!(endpoint = id, due, "webhook endpoint enabled again");
    audit.record(Event::WebhookEnabled(id)).await;
    flash_to(&session, "webhooks-enabled-flash", LIST).await
}

/// Disables an endpoint: nothing is sent to it, and its messages wait for it.
pub async fn disable(
    State(state): State<AppState>,
    audit: Audit,
    session: Session,
    Path(id): Path<i64>,
) -> Result<Response> {
    if !store::webhooks::disable(&state.db, id, store::now()).await? {
        return Err(AppError::NotFound);
    }
    tracing::info!(endpoint = id, "webhook endpoint disabled");
    audit.record(Event::WebhookDisabled(id)).await;
    flash_to(&session, "webhooks-disabled-flash", LIST).await
}

/// *Retry now*: what waits for the endpoint (due later, failed, set aside) is due at once.
pub async fn retry(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
) -> Result<Response> {
    let endpoint = endpoint_of(&state, id).await?;
    let due = store::webhooks::retry_now(&state.db, id, store::now())
        .await?
        .ok_or(AppError::NotFound)?;
    tracing::info!(endpoint = id, due, "webhook endpoint retried");
    if endpoint.enabled == 0 {
        flash_as(
            &session,
            FlashKind::Warning,
            "webhooks-retried-disabled-flash",
        )
        .await?;
    } else {
        flash(&session, "webhooks-retried-flash").await?;
    }
    Ok(Redirect::to(LIST).into_response())
}

/// One line of the delivery log as shown.
pub struct AttemptLine {
    pub delivery: i64,
    pub event: String,
    pub message_id: String,
    pub attempt: i64,
    /// The HTTP status, or the kind of error when no answer came.
    pub outcome: String,
    pub ok: bool,
    pub latency: String,
    pub at: String,
    /// Whether *Send again* is offered: the delivery is still there and not waiting already.
    pub again: bool,
}

#[derive(askama::Template)]
#[template(path = "admin/webhook_log.html")]
struct LogPage {
    ctx: PageContext,
    endpoint: EndpointLine,
    lines: Vec<AttemptLine>,
    older_url: Option<String>,
    newest_url: Option<String>,
}

/// `?before=ID`: the attempts older than that one. Anything but a positive number is the
/// newest page, never an error page.
#[derive(Deserialize, Default)]
pub struct LogQuery {
    before: Option<String>,
}

fn attempt_line(ctx: &PageContext, l: &LogLine) -> AttemptLine {
    let ok = l.status.is_some_and(|s| (200..300).contains(&s));
    let outcome = match (l.status, &l.error) {
        (Some(status), _) => format!("HTTP {status}"),
        (None, Some(error)) => error.clone(),
        (None, None) => "—".to_owned(),
    };
    AttemptLine {
        delivery: l.delivery_id,
        event: l
            .event
            .as_deref()
            .and_then(topic::Topic::parse)
            .map_or_else(|| "—".to_owned(), |t| t.as_str().to_owned()),
        message_id: l
            .outbox_id
            .map_or_else(|| "—".to_owned(), |id| format!("msg_{id}")),
        attempt: l.attempt,
        outcome,
        ok,
        latency: ctx.msg(&Message::new("webhooks-latency").arg("ms", l.latency_ms.to_string())),
        at: crate::time::format_utc(l.at),
        again: l.outbox_id.is_some() && l.delivery_state.as_deref() != Some("pending"),
    }
}

/// The delivery log, newest first, `LOG_PAGE` attempts at a time, keyset on the attempt's id.
pub async fn log(
    State(state): State<AppState>,
    ctx: PageContext,
    Path(id): Path<i64>,
    Query(query): Query<LogQuery>,
) -> Result<Response> {
    let listed = store::webhooks::listed_one(&state.db, id)
        .await?
        .ok_or(AppError::NotFound)?;
    let before = query
        .before
        .as_deref()
        .and_then(|b| b.trim().parse::<i64>().ok())
        .filter(|b| *b > 0);
    // One more than shown: whether there is an older page, without counting.
    let mut rows = store::webhooks::log(&state.db, id, before, LOG_PAGE + 1).await?;
    let more = rows.len() > LOG_PAGE as usize;
    rows.truncate(LOG_PAGE as usize);
    let older_url = more
        .then(|| rows.last().map(|r| format!("{LIST}/{id}?before={}", r.id)))
        .flatten();
    let lines = rows.iter().map(|l| attempt_line(&ctx, l)).collect();
    let endpoint = line(
        &ctx,
        &listed.endpoint,
        listed.token_name.as_deref(),
        listed.last_attempt_at,
    );
    let page = LogPage {
        endpoint,
        lines,
        older_url,
        newest_url: before.map(|_| format!("{LIST}/{id}")),
        ctx,
    };
    let mut response = html(&page);
    no_store(&mut response);
    Ok(response)
}

/// Queues a delivery again, due now: the same message, so the same `webhook-id`.
pub async fn send_again(
    State(state): State<AppState>,
    session: Session,
    Path((id, delivery)): Path<(i64, i64)>,
) -> Result<Response> {
    let endpoint = endpoint_of(&state, id).await?;
    let back = format!("{LIST}/{id}");
    if endpoint.enabled == 0 {
        flash_as(&session, FlashKind::Error, "webhooks-again-disabled").await?;
        return Ok(Redirect::to(&back).into_response());
    }
    match store::webhooks::send_again(&state.db, id, delivery, store::now()).await? {
        Again::Queued => {
            tracing::info!(endpoint = id, delivery, "webhook delivery queued again");
            flash(&session, "webhooks-again-flash").await?;
        }
        Again::Busy => flash_as(&session, FlashKind::Warning, "webhooks-again-busy").await?,
        Again::Missing => return Err(AppError::NotFound),
    }
    Ok(Redirect::to(&back).into_response())
}
