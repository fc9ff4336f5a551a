//! Instances: start one for a subject, see its history, issue and revoke links.

use axum::extract::State;

use crate::http::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use tower_sessions::Session;

use super::{FieldErrors, error_for};
use crate::http::AppState;
use crate::http::context::{PageContext, flash, html};
use crate::http::error::{AppError, Result};
use crate::http::form::Form;
use crate::links;
use crate::store::{self, instances::InstanceRow};
use crate::workflow::Definition;

pub struct InstanceLine {
    pub id: i64,
    pub title: String,
    pub workflow: String,
    pub state: String,
    pub updated: String,
}

#[derive(askama::Template)]
#[template(path = "admin/instances.html")]
struct ListPage {
    ctx: PageContext,
    instances: Vec<InstanceLine>,
}

pub async fn list(State(state): State<AppState>, ctx: PageContext) -> Result<Response> {
    let workflows = store::workflows::list(&state.db).await?;
    let instances = store::instances::recent(&state.db, 200)
        .await?
        .into_iter()
        .map(|i| InstanceLine {
            id: i.id,
            workflow: workflows
                .iter()
                .find(|w| w.id == i.workflow_id)
                .map(|w| w.label.clone())
                .unwrap_or_default(),
            state: ctx.t(&format!("state-{}", i.state)),
            updated: crate::time::format_utc(i.updated_at),
            title: i.subject_title,
        })
        .collect();
    Ok(html(&ListPage { ctx, instances }))
}

#[derive(askama::Template)]
#[template(path = "admin/instance_new.html")]
struct NewPage {
    ctx: PageContext,
    workflows: Vec<(i64, String)>,
    workflow: i64,
    title: String,
    body: String,
    errors: FieldErrors,
}

impl NewPage {
    fn error(&self, key: &str) -> Option<&str> {
        error_for(&self.errors, key)
    }
}

async fn workflow_options(state: &AppState) -> Result<Vec<(i64, String)>> {
    Ok(store::workflows::list(&state.db)
        .await?
        .into_iter()
        .map(|w| (w.id, w.label))
        .collect())
}

pub async fn new_form(State(state): State<AppState>, ctx: PageContext) -> Result<Response> {
    let workflows = workflow_options(&state).await?;
    Ok(html(&NewPage {
        workflow: workflows.first().map_or(0, |w| w.0),
        workflows,
        title: String::new(),
        body: String::new(),
        errors: Vec::new(),
        ctx,
    }))
}

#[derive(Deserialize)]
pub struct NewInstance {
    #[serde(default)]
    workflow: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    body: String,
}

pub async fn start(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    Form(form): Form<NewInstance>,
) -> Result<Response> {
    let workflow = form.workflow.parse::<i64>().unwrap_or(0);
    match links::start(&state.db, workflow, &form.title, &form.body).await? {
        Ok(id) => {
            flash(&session, "instance-started").await?;
            Ok(Redirect::to(&format!("/admin/instances/{id}")).into_response())
        }
        Err(errors) => {
            let errors = errors
                .into_iter()
                .map(|(k, m)| (k.to_owned(), ctx.msg(&m)))
                .collect();
            let mut response = html(&NewPage {
                workflows: workflow_options(&state).await?,
                workflow,
                title: form.title,
                body: form.body,
                errors,
                ctx,
            });
            *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
            Ok(response)
        }
    }
}

pub struct HistoryLine {
    pub at: String,
    pub step: String,
    pub branch: String,
    pub event: String,
    pub answer: Vec<(String, String)>,
}

#[derive(askama::Template)]
#[template(path = "admin/instance.html")]
struct ShowPage {
    ctx: PageContext,
    instance: InstanceRow,
    workflow: String,
    state_label: String,
    current_step: String,
    /// Branches a link may be issued for (all branches of the workflow).
    branches: Vec<String>,
    history: Vec<HistoryLine>,
    ttl: String,
    branch: String,
    issued_url: Option<String>,
    link_error: Option<String>,
}

async fn show_page(state: &AppState, ctx: PageContext, id: i64) -> Result<ShowPage> {
    let instance = store::instances::by_id(&state.db, id)
        .await?
        .ok_or(AppError::NotFound)?;
    let row = store::workflows::by_id(&state.db, instance.workflow_id)
        .await?
        .ok_or(AppError::NotFound)?;
    let definition =
        Definition::from_json(&row.definition).unwrap_or(Definition { steps: Vec::new() });
    let mut branches: Vec<String> = definition
        .steps
        .iter()
        .flat_map(|s| s.branches.clone())
        .collect();
    branches.dedup();
    let step_title = |i: i64| {
        definition
            .steps
            .get(i as usize)
            .map(|s| s.title.clone())
            .unwrap_or_default()
    };
    let current_step = if instance.state == "active" {
        format!(
            "{} / {} — {}",
            instance.step_index + 1,
            definition.steps.len(),
            step_title(instance.step_index)
        )
    } else {
        String::new()
    };
    let history = store::instances::history(&state.db, id)
        .await?
        .into_iter()
        .map(|h| HistoryLine {
            at: crate::time::format_utc(h.at),
            step: step_title(h.step_index),
            branch: h.branch,
            event: ctx.t(&format!("event-{}", h.event.replace('_', "-"))),
            answer: flatten_answer(&h.answer),
        })
        .collect();
    let ttl = state.site.get().await.settings.default_link_ttl.to_string();
    Ok(ShowPage {
        state_label: ctx.t(&format!("state-{}", instance.state)),
        workflow: row.label,
        current_step,
        branches,
        history,
        ttl,
        branch: String::new(),
        issued_url: None,
        link_error: None,
        instance,
        ctx,
    })
}

/// An answer's JSON as label/value lines for the history table.
fn flatten_answer(json: &str) -> Vec<(String, String)> {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(json) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in map {
        match v {
            serde_json::Value::Object(inner) => {
                for (ik, iv) in inner {
                    out.push((
                        ik,
                        iv.as_str().map_or_else(|| iv.to_string(), str::to_owned),
                    ));
                }
            }
            other => out.push((
                k,
                other
                    .as_str()
                    .map_or_else(|| other.to_string(), str::to_owned),
            )),
        }
    }
    out
}

pub async fn show(
    State(state): State<AppState>,
    ctx: PageContext,
    Path(id): Path<i64>,
) -> Result<Response> {
    Ok(html(&show_page(&state, ctx, id).await?))
}

#[derive(Deserialize)]
pub struct IssueForm {
    branch: Option<String>,
    #[serde(default)]
    ttl: String,
}

/// Issues a link and shows it once, on this response only: the URL is a credential, so it is
/// not kept in the session or anywhere else.
pub async fn issue_link(
    State(state): State<AppState>,
    ctx: PageContext,
    Path(id): Path<i64>,
    Form(form): Form<IssueForm>,
) -> Result<Response> {
    let snapshot = state.site.get().await;
    let ttl = crate::time::parse_duration(&form.ttl);
    let result = match ttl {
        Some(ttl) => {
            links::issue(
                &state.db,
                &snapshot.keys,
                &snapshot.settings.base_url,
                id,
                form.branch.as_deref(),
                ttl,
                state.clock.now_secs(),
            )
            .await?
        }
        None => Err(crate::i18n::Message::new("link-ttl-invalid")
            .arg("min", crate::settings::MIN_TTL.to_string())
            .arg("max", crate::settings::MAX_TTL.to_string())),
    };
    let mut page = show_page(&state, ctx, id).await?;
    page.ttl = form.ttl;
    page.branch = form.branch.unwrap_or_default();
    let status = match result {
        Ok(url) => {
            page.issued_url = Some(url);
            StatusCode::OK
        }
        Err(m) => {
            page.link_error = Some(page.ctx.msg(&m));
            StatusCode::UNPROCESSABLE_ENTITY
        }
    };
    let mut response = html(&page);
    *response.status_mut() = status;
    // The page holds a live link: keep it out of caches.
    response.headers_mut().insert(
        axum::http::header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
    Ok(response)
}

pub async fn revoke(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
) -> Result<Response> {
    if !links::revoke(&state.db, id).await? {
        return Err(AppError::NotFound);
    }
    flash(&session, "instance-revoked").await?;
    Ok(Redirect::to(&format!("/admin/instances/{id}")).into_response())
}
