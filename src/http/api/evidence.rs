//! `/api/v1/instances/{id}/evidence`: an instance's whole record and the SHA-256 of its
//! canonical form (`domain::instance::evidence`), for a token that reaches the instance.

use axum::Json;
use axum::extract::State;
use axum::response::IntoResponse;

use super::error::{ApiError, ApiResult};
use super::extract::{Id, Who, caller, needs, reached};
use super::wire;
use crate::domain::api::scope::Ability;
use crate::domain::instance::evidence;
use crate::http::AppState;
use crate::i18n::Lang;

#[utoipa::path(
    get,
    path = "/api/v1/instances/{id}/evidence",
    operation_id = "readInstanceEvidence",
    summary = "Read an instance's evidence record",
    description = "Needs the read ability; an instance beyond the token's reach is 404, as a missing one is. The record lists every step, every line of history with each answer's SHA-256, the link record it came through and the client as a keyed hash, every link, email, contact and file. `sha256` is the SHA-256 of the record's canonical form: keys sorted, no spaces, UTF-8 (docs/api.md shows how to check it).",
    params(("id" = i64, Path, description = "the instance")),
    responses(
        (status = 200, description = "the record and its hash", body = wire::Evidence),
        (status = 403, description = "the token's scope lacks read (error: forbidden_scope)", body = wire::Error),
        (status = 404, description = "no such instance, or beyond the token's reach (error: not_found)", body = wire::Error),
    )
)]
pub async fn read(
    State(state): State<AppState>,
    lang: Lang,
    who: Who,
    Id(id): Id<i64>,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Read, lang)?;
    reached(&state, &token, id, lang).await?;
    let site = state.site.get().await.settings.base_url.clone();
    let now = state.clock.now_secs();
    let record = evidence::read(&state.db, &state.versions, &site, id, now)
        .await?
        .ok_or_else(|| ApiError::not_found(lang))?;
    Ok(Json(wire::Evidence {
        record: record.json,
        sha256: record.sha256,
        generated_at: record.generated_at,
    })
    .into_response())
}
