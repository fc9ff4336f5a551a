//! `/api/v1/workflows`: the workflows a token may start, with their steps; and their
//! definitions, read as text, made and saved with the one check the CLI and the admin editor
//! use (`domain::workflow::edit`).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;

use super::error::{ApiError, ApiResult};
use super::extract::{Id, Read, Who, body, caller, needs, snapshot_of};
use super::idempotent::{self, made, once};
use super::wire;
use crate::domain::api::idempotency::Answer;
use crate::domain::api::scope::Ability;
use crate::domain::workflow::edit::{self, Draft, Refusal};
use crate::domain::workflow::{Definition, Participant, Step};
use crate::error::Refusable;
use crate::http::AppState;
use crate::i18n::{Lang, Message};
use crate::store::{self, api::TokenRow, workflows::WorkflowRow};

/// The workflows the token's scope covers.
#[utoipa::path(
    get,
    path = "/api/v1/workflows",
    operation_id = "listWorkflows",
    summary = "List workflows",
    description = "Needs no ability; lists only the workflows the token's scope covers.",
    responses((status = 200, description = "the workflows", body = wire::Workflows))
)]
pub async fn list(State(state): State<AppState>, who: Who) -> ApiResult {
    let token = caller(&who)?;
    let workflows = store::workflows::list(&state.db)
        .await?
        .into_iter()
        .filter(|w| token.scope.covers(&w.name))
        .map(|w| {
            let d = Definition::from_json(&w.definition).unwrap_or_default();
            wire::Workflow {
                participants: names(d.participants()),
                steps: steps_of(&d),
                name: w.name,
                label: w.label,
                version: w.version,
            }
        })
        .collect();
    Ok(Json(wire::Workflows { workflows }).into_response())
}

fn steps_of(definition: &Definition) -> Vec<wire::Step> {
    definition
        .steps
        .iter()
        .map(|s| wire::Step {
            title: s.title.clone(),
            kind: s.interaction.kind(),
            participants: names(s.participants()),
            shows: shown_numbers(s),
        })
        .collect()
}

/// The steps (from 1) whose answers a step shows.
pub fn shown_numbers(step: &Step) -> Vec<i64> {
    step.shows.iter().map(|&i| i as i64 + 1).collect()
}

pub fn names<'a>(participants: impl IntoIterator<Item = &'a Participant>) -> Vec<String> {
    participants
        .into_iter()
        .map(|p| p.as_str().to_owned())
        .collect()
}

/// A workflow's newest definition as the API shows it: the text `orchestra workflow show`
/// prints.
fn definition_of(row: WorkflowRow) -> Result<wire::WorkflowDefinition, ApiError> {
    let definition = Definition::from_json(&row.definition).ok_or(crate::error::Error::Corrupt(
        "a workflow version's definition",
    ))?;
    Ok(wire::WorkflowDefinition {
        definition: definition.to_text(),
        name: row.name,
        label: row.label,
        version: row.version,
    })
}

/// The workflow `name`, when it exists and the token's scope covers it; otherwise the very
/// answer a missing one gets.
async fn covered(
    state: &AppState,
    token: &TokenRow,
    name: &str,
    lang: Lang,
) -> Result<WorkflowRow, ApiError> {
    if !token.scope.covers(name) {
        return Err(ApiError::not_found(lang));
    }
    store::workflows::by_name(&state.db, name)
        .await?
        .ok_or_else(|| ApiError::not_found(lang))
}

/// Why a workflow was not made or saved, as the API answers it: every problem, each naming its
/// field and, for the definition, its line.
fn refused(lang: Lang, e: Refusable<Refusal>) -> ApiError {
    match e.refusal() {
        Ok(Refusal::Invalid(problems)) => ApiError::problems(lang, problems),
        Ok(Refusal::NameTaken) => ApiError::new(
            StatusCode::CONFLICT,
            "name_taken",
            Message::new("api-workflow-name-taken").render(lang),
        ),
        Ok(Refusal::NotFound) => ApiError::not_found(lang),
        Err(failure) => failure.into(),
    }
}

#[utoipa::path(
    get,
    path = "/api/v1/workflows/{name}",
    operation_id = "readWorkflow",
    summary = "Read a workflow's newest definition, as text",
    description = "Needs no ability, as the list does; a workflow beyond the token's workflows is 404, as a missing one is. `definition` is the line format exactly as `orchestra workflow show NAME` prints it: saved back unchanged, it makes no new version.",
    params(("name" = String, Path, description = "the workflow's machine name")),
    responses(
        (status = 200, description = "the newest definition", body = wire::WorkflowDefinition),
        (status = 404, description = "no such workflow, or one beyond the token's workflows (error: not_found)", body = wire::Error),
    )
)]
pub async fn read(
    State(state): State<AppState>,
    lang: Lang,
    who: Who,
    Id(name): Id<String>,
) -> ApiResult {
    let token = caller(&who)?;
    let row = covered(&state, &token, &name, lang).await?;
    Ok(Json(definition_of(row)?).into_response())
}

#[utoipa::path(
    post,
    path = "/api/v1/workflows",
    operation_id = "createWorkflow",
    summary = "Make a workflow from a definition",
    description = "Needs the workflows ability, and the name among the token's workflows when it has a list. The definition is checked as `orchestra workflow create` and the admin editor check it: every wrong line is named, and nothing is made. With an Idempotency-Key, a retry makes nothing new: it is answered the first answer again.",
    params(wire::IdempotencyKey),
    request_body = wire::CreateWorkflow,
    responses(
        (status = 201, description = "the workflow, version 1 (or, for a retried Idempotency-Key, the first answer again)", body = wire::WorkflowDefinition,
            headers(
                ("Location" = String, description = "the workflow's own path, /api/v1/workflows/{name}"),
                ("Idempotent-Replayed" = String, description = "`true` on an answer replayed for a retried Idempotency-Key; absent otherwise"),
            )),
        (status = 403, description = "the token's scope lacks workflows, or this name (error: forbidden_scope)", body = wire::Error),
        (status = 409, description = "a workflow has this name already (error: name_taken); or the first request with this Idempotency-Key is still at work (error: idempotency_key_in_progress)", body = wire::Error),
        (status = 422, description = "bad input, nothing made: `field` names the first thing wrong (`name`, `label`, `definition`) and `problems` lists every one, each wrong line of the definition with its `line` (error: invalid); or the Idempotency-Key was used for another request (error: idempotency_key_reused)", body = wire::Error),
    )
)]
pub async fn create(
    State(state): State<AppState>,
    lang: Lang,
    who: Who,
    headers: HeaderMap,
    read: Read,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Workflows, lang)?;
    let bytes = read.json(lang)?;
    let key = idempotent::key(lang, &headers)?;
    let input: wire::CreateWorkflow = body(lang, &bytes)?;
    let snapshot = snapshot_of(&who)?;
    let work = create_now(state.clone(), lang, token.clone(), input);
    let request = ("POST", "/api/v1/workflows".to_owned(), &bytes);
    once(&state, lang, &token, &snapshot, key, request, work).await
}

/// A create's work, once its request is read (and its key, when it has one, reserved).
async fn create_now(
    state: AppState,
    lang: Lang,
    token: Arc<TokenRow>,
    input: wire::CreateWorkflow,
) -> Result<Answer, ApiError> {
    let name = input.name.unwrap_or_default();
    let name = name.trim();
    // Before anything is checked: a name outside the scope gets one answer, taken or not.
    if !token.scope.covers(name) {
        return Err(ApiError::forbidden_scope(
            lang,
            Message::new("api-forbidden-workflow")
                .arg("workflow", name.chars().take(64).collect::<String>()),
        ));
    }
    let draft = Draft {
        name,
        label: input.label.as_deref().unwrap_or_default(),
        // Labels in other languages are the editor's and the CLI's; the API keeps them.
        labels: None,
        definition: input.definition.as_deref().unwrap_or_default(),
    };
    edit::create(&state.db, &draft)
        .await
        .map_err(|e| refused(lang, e))?;
    tracing::info!(workflow = name, token = %token.name, "a workflow was made through the API");
    let row = covered(&state, &token, name, lang).await?;
    made(
        StatusCode::CREATED,
        Some(format!("/api/v1/workflows/{name}")),
        &definition_of(row)?,
    )
}

#[utoipa::path(
    put,
    path = "/api/v1/workflows/{name}",
    operation_id = "saveWorkflow",
    summary = "Save a workflow's definition: a new version when it changed",
    description = "Needs the workflows ability; a workflow beyond the token's workflows is 404, as a missing one is. The definition is checked as `orchestra workflow save` and the admin editor check it: every wrong line is named, and nothing is saved. A definition equal to the newest version's makes no new version (the label, when given, is still saved); running instances keep the version they started on.",
    params(("name" = String, Path, description = "the workflow's machine name")),
    request_body = wire::SaveWorkflow,
    responses(
        (status = 200, description = "the workflow as saved, with its newest version's number", body = wire::WorkflowDefinition),
        (status = 403, description = "the token's scope lacks workflows (error: forbidden_scope)", body = wire::Error),
        (status = 404, description = "no such workflow, or one beyond the token's workflows (error: not_found)", body = wire::Error),
        (status = 422, description = "bad input, nothing saved: `field` names the first thing wrong (`label`, `definition`) and `problems` lists every one, each wrong line of the definition with its `line` (error: invalid)", body = wire::Error),
    )
)]
pub async fn save(
    State(state): State<AppState>,
    lang: Lang,
    who: Who,
    Id(name): Id<String>,
    read: Read,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Workflows, lang)?;
    let bytes = read.json(lang)?;
    let input: wire::SaveWorkflow = body(lang, &bytes)?;
    let row = covered(&state, &token, &name, lang).await?;
    let draft = Draft {
        name: &row.name,
        label: input.label.as_deref().unwrap_or(&row.label),
        labels: None,
        definition: input.definition.as_deref().unwrap_or_default(),
    };
    edit::save(&state.db, row.id, &draft)
        .await
        .map_err(|e| refused(lang, e))?;
    tracing::info!(workflow = %row.name, token = %token.name, "a workflow was saved through the API");
    let row = covered(&state, &token, &name, lang).await?;
    Ok(Json(definition_of(row)?).into_response())
}
