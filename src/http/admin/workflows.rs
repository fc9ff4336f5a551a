//! Workflows: list, create from the interaction kinds, edit.

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
use crate::i18n::Message;
use crate::store;
use crate::workflow::Definition;

pub struct WorkflowLine {
    pub id: i64,
    pub name: String,
    pub label: String,
    pub steps: String,
}

#[derive(askama::Template)]
#[template(path = "admin/workflows.html")]
struct ListPage {
    ctx: PageContext,
    workflows: Vec<WorkflowLine>,
}

pub async fn list(State(state): State<AppState>, ctx: PageContext) -> Result<Response> {
    let workflows = store::workflows::list(&state.db)
        .await?
        .into_iter()
        .map(|w| {
            let steps = Definition::from_json(&w.definition)
                .map(|d| {
                    d.steps
                        .iter()
                        .map(|s| {
                            let kind = ctx.t(&format!("kind-{}", s.interaction.kind()));
                            if s.branches.is_empty() {
                                kind
                            } else {
                                format!("{kind} ({})", s.branches.join(", "))
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(" → ")
                })
                .unwrap_or_default();
            WorkflowLine {
                id: w.id,
                name: w.name,
                label: w.label,
                steps,
            }
        })
        .collect();
    Ok(html(&ListPage { ctx, workflows }))
}

#[derive(askama::Template)]
#[template(path = "admin/workflow_form.html")]
struct FormPage {
    ctx: PageContext,
    /// `None` when creating.
    id: Option<i64>,
    name: String,
    label: String,
    definition: String,
    errors: FieldErrors,
}

impl FormPage {
    fn error(&self, key: &str) -> Option<&str> {
        error_for(&self.errors, key)
    }
}

const STARTER: &str =
    "form: Your details | Name*, Email* (email), Notes (long)\nreview: Check the details\n";

pub async fn new_form(ctx: PageContext) -> Response {
    html(&FormPage {
        ctx,
        id: None,
        name: String::new(),
        label: String::new(),
        definition: STARTER.into(),
        errors: Vec::new(),
    })
}

pub async fn edit_form(
    State(state): State<AppState>,
    ctx: PageContext,
    Path(id): Path<i64>,
) -> Result<Response> {
    let w = store::workflows::by_id(&state.db, id)
        .await?
        .ok_or(AppError::NotFound)?;
    let definition = Definition::from_json(&w.definition)
        .map(|d| d.to_text())
        .unwrap_or_default();
    Ok(html(&FormPage {
        ctx,
        id: Some(id),
        name: w.name,
        label: w.label,
        definition,
        errors: Vec::new(),
    }))
}

#[derive(Deserialize)]
pub struct WorkflowForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    label: String,
    #[serde(default)]
    definition: String,
}

fn check(
    ctx: &PageContext,
    form: &WorkflowForm,
    creating: bool,
) -> (Option<Definition>, FieldErrors) {
    let mut errors = Vec::new();
    let name = form.name.trim();
    if creating
        && (name.is_empty()
            || name.len() > 64
            || !name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'))
    {
        errors.push((
            "name".into(),
            ctx.msg(&Message::new("workflow-name-invalid")),
        ));
    }
    let label = form.label.trim();
    if label.is_empty() || label.chars().count() > 100 {
        errors.push((
            "label".into(),
            ctx.msg(&Message::new("workflow-label-invalid")),
        ));
    }
    let definition = match Definition::parse(&form.definition) {
        Ok(d) => Some(d),
        Err(m) => {
            errors.push(("definition".into(), ctx.msg(&m)));
            None
        }
    };
    (definition, errors)
}

fn rejected(
    ctx: PageContext,
    id: Option<i64>,
    form: WorkflowForm,
    errors: FieldErrors,
) -> Response {
    let mut response = html(&FormPage {
        ctx,
        id,
        name: form.name,
        label: form.label,
        definition: form.definition,
        errors,
    });
    *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    response
}

pub async fn create(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    Form(form): Form<WorkflowForm>,
) -> Result<Response> {
    let (definition, mut errors) = check(&ctx, &form, true);
    if let (Some(definition), true) = (&definition, errors.is_empty()) {
        match store::workflows::create(
            &state.db,
            form.name.trim(),
            form.label.trim(),
            &definition.to_json(),
        )
        .await?
        {
            Some(id) => {
                flash(&session, "workflow-saved").await?;
                return Ok(Redirect::to(&format!("/admin/workflows/{id}")).into_response());
            }
            None => errors.push(("name".into(), ctx.t("workflow-name-taken"))),
        }
    }
    Ok(rejected(ctx, None, form, errors))
}

pub async fn save(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    Path(id): Path<i64>,
    Form(mut form): Form<WorkflowForm>,
) -> Result<Response> {
    let w = store::workflows::by_id(&state.db, id)
        .await?
        .ok_or(AppError::NotFound)?;
    form.name = w.name;
    let (definition, errors) = check(&ctx, &form, false);
    if let (Some(definition), true) = (definition, errors.is_empty()) {
        store::workflows::update(&state.db, id, form.label.trim(), &definition.to_json()).await?;
        flash(&session, "workflow-saved").await?;
        return Ok(Redirect::to(&format!("/admin/workflows/{id}")).into_response());
    }
    Ok(rejected(ctx, Some(id), form, errors))
}
