//! `/api/v1/workflows`: the workflows a token may start, with their steps.

use axum::Json;
use axum::extract::State;
use axum::response::IntoResponse;

use super::error::ApiResult;
use super::extract::{Who, caller};
use super::wire;
use crate::domain::workflow::{Definition, Participant, Step};
use crate::http::AppState;
use crate::store;

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
