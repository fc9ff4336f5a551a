//! An instance's kept files on its page, and their download for a signed-in administrator: the
//! one download answer (`http::files::serve`), only for a file the instance keeps, so another
//! instance's file id or a made-up one is the themed 404.

use axum::extract::State;
use axum::response::Response;

use crate::domain::workflow::Definition;
use crate::http::AppState;
use crate::http::context::PageContext;
use crate::http::error::{AppError, Result};
use crate::http::extract::Path;
use crate::store;

/// A kept file as the instance page lists it.
pub struct FileLine {
    pub href: String,
    pub name: String,
    pub step: String,
    pub size: String,
    pub kind: String,
}

/// The instance's kept files, in the order they came.
pub(super) async fn lines(
    state: &AppState,
    ctx: &PageContext,
    id: i64,
    definition: &Definition,
) -> Result<Vec<FileLine>> {
    let rows = store::files::of_instance(&state.db, id).await?;
    Ok(rows
        .into_iter()
        .map(|f| FileLine {
            href: format!("/admin/instances/{id}/files/{}", f.id),
            step: definition.steps.get(f.step_index as usize).map_or_else(
                || (f.step_index + 1).to_string(),
                |s| s.title_in(ctx.lang).to_owned(),
            ),
            size: crate::domain::files::size_in(ctx.lang, f.size.max(0) as u64),
            kind: f.media_type,
            name: f.name,
        })
        .collect())
}

/// `GET /admin/instances/{id}/files/{file}`.
pub async fn download(
    State(state): State<AppState>,
    Path((id, file)): Path<(i64, i64)>,
) -> Result<Response> {
    let row = store::files::kept(&state.db, id, file)
        .await?
        .ok_or(AppError::NotFound)?;
    Ok(crate::http::files::serve(&state.db, row))
}
