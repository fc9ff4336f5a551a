//! The status report page.

use axum::extract::State;
use axum::response::Response;

use crate::http::AppState;
use crate::http::context::{PageContext, html};
use crate::status::{self, RenderedCheck};

#[derive(askama::Template)]
#[template(path = "admin/status.html")]
struct StatusPage {
    ctx: PageContext,
    checks: Vec<RenderedCheck>,
}

pub async fn show(State(state): State<AppState>, ctx: PageContext) -> Response {
    let report = status::build(&state.db, state.flood_backend.name()).await;
    html(&StatusPage {
        checks: report.render(ctx.lang),
        ctx,
    })
}
