//! An instance's evidence record for a signed-in administrator: the printable page in the
//! reader's language, and the JSON download with the record's hash.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderValue;
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION};
use axum::response::{IntoResponse, Response};

use crate::domain::instance::evidence::{self, Evidence};
use crate::domain::instance::evidence_page::Page;
use crate::http::AppState;
use crate::http::context::{PageContext, html};
use crate::http::error::{AppError, Result};
use crate::http::extract::Path;

#[derive(askama::Template)]
#[template(path = "admin/evidence.html")]
struct EvidencePage {
    ctx: PageContext,
    id: i64,
    page: Page,
}

async fn read(state: &AppState, id: i64) -> Result<Evidence> {
    let site = state.site.get().await.settings.base_url.clone();
    evidence::read(
        &state.db,
        &state.versions,
        &site,
        id,
        state.clock.now_secs(),
    )
    .await?
    .ok_or(AppError::NotFound)
}

pub async fn show(
    State(state): State<AppState>,
    ctx: PageContext,
    Path(id): Path<i64>,
) -> Result<Response> {
    let record = read(&state, id).await?;
    let page = Page::of(&record, ctx.lang);
    Ok(html(&EvidencePage { ctx, id, page }))
}

pub async fn download(
    State(state): State<AppState>,
    _ctx: PageContext,
    Path(id): Path<i64>,
) -> Result<Response> {
    let record = read(&state, id).await?;
    let mut response = Json(record.to_json()).into_response();
    let headers = response.headers_mut();
    let name = format!("attachment; filename=\"evidence-{id}.json\"");
    if let Ok(value) = HeaderValue::from_str(&name) {
        headers.insert(CONTENT_DISPOSITION, value);
    }
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("private, no-store"));
    Ok(response)
}
