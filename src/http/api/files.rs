//! `/api/v1/instances/{id}/files/{file}`: a kept file of an instance the token reaches, as the
//! one download answer (`http::files::serve`); and the files an instance view lists.

use axum::extract::State;

use super::error::{ApiError, ApiResult};
use super::extract::{Id, Who, caller, needs, reached};
use super::wire;
use crate::domain::api::scope::Ability;
use crate::http::AppState;
use crate::i18n::Lang;
use crate::store;

#[utoipa::path(
    get,
    path = "/api/v1/instances/{id}/files/{file}",
    operation_id = "downloadInstanceFile",
    summary = "Download a file an answer of the instance brought",
    description = "Needs the read ability; an instance beyond the token's reach is 404, as a missing one is, and so is a file the instance does not keep. The instance view's `files` lists each with this path as `download`. Always an attachment, typed by its content.",
    params(
        ("id" = i64, Path, description = "the instance"),
        ("file" = i64, Path, description = "the file, as the instance view's `files` names it"),
    ),
    responses(
        (status = 200, description = "the file's bytes", content_type = "*/*", body = Vec<u8>,
            headers(
                ("Content-Disposition" = String, description = "attachment, with the name the file was kept as (RFC 6266, RFC 8187)"),
                ("X-Content-Type-Options" = String, description = "nosniff"),
            )),
        (status = 403, description = "the token's scope lacks read (error: forbidden_scope)", body = wire::Error),
        (status = 404, description = "no such file of this instance, or the instance is beyond the token's reach (error: not_found)", body = wire::Error),
    )
)]
pub async fn download(
    State(state): State<AppState>,
    lang: Lang,
    who: Who,
    Id((id, file)): Id<(i64, i64)>,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Read, lang)?;
    reached(&state, &token, id, lang).await?;
    let row = store::files::kept(&state.db, id, file)
        .await?
        .ok_or_else(|| ApiError::not_found(lang))?;
    Ok(crate::http::files::serve(&state.db, row))
}

/// An instance's kept files as its view lists them, each with its download path.
pub async fn of_instance(state: &AppState, id: i64) -> Result<Vec<wire::InstanceFile>, ApiError> {
    Ok(store::files::of_instance(&state.db, id)
        .await?
        .into_iter()
        .map(|f| wire::InstanceFile {
            download: format!("/api/v1/instances/{id}/files/{}", f.id),
            id: f.id,
            step: f.step_index + 1,
            field: f.field,
            name: f.name,
            size: f.size,
            media_type: f.media_type,
            sha256: f.sha256,
        })
        .collect())
}
