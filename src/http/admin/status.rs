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
    let env = status::Environment {
        proxies_named: state.proxies.len(),
        forwarded_seen: state
            .forwarded_seen
            .load(std::sync::atomic::Ordering::Relaxed),
    };
    let report = status::build_with(&state.db, state.flood_backend.name(), env).await;
    html(&StatusPage {
        checks: report.render(ctx.lang),
        ctx,
    })
}
