//! The dashboard: what needs attention, and the way to everything else.

use axum::extract::State;
use axum::response::Response;

use crate::http::AppState;
use crate::http::context::{PageContext, html};
use crate::http::error::Result;
use crate::status::{self, Severity};
use crate::store;

pub struct InstanceLine {
    pub id: i64,
    pub title: String,
    pub state: String,
}

#[derive(askama::Template)]
#[template(path = "admin/dashboard.html")]
struct Dashboard {
    ctx: PageContext,
    workflows: i64,
    recent: Vec<InstanceLine>,
    warnings: Vec<String>,
}

pub async fn show(State(state): State<AppState>, ctx: PageContext) -> Result<Response> {
    let report = status::build(&state.db, state.flood_backend.name()).await;
    let warnings = report
        .render(ctx.lang)
        .into_iter()
        .filter(|c| c.severity != Severity::Ok)
        .map(|c| format!("{}: {}", c.title, c.value))
        .collect();
    let recent = store::instances::recent(&state.db, 5)
        .await?
        .into_iter()
        .map(|i| InstanceLine {
            id: i.id,
            title: i.subject_title,
            state: ctx.t(&format!("state-{}", i.state)),
        })
        .collect();
    Ok(html(&Dashboard {
        workflows: store::workflows::count(&state.db).await?,
        recent,
        warnings,
        ctx,
    }))
}
