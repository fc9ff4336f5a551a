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
        would_refuse: Some(would_refuse(&state).await),
        flood_store: Some(status::StoreView {
            failing_for: state.guard.health().failing_for(),
            decisions_without_store: state.guard.health().decisions_without_store(),
        }),
    };
    let report = status::build_with(&state.db, state.flood_backend.name(), env).await;
    html(&StatusPage {
        checks: report.render(ctx.lang),
        ctx,
    })
}

/// This server's tally of what report-only addresses would have refused, read for the
/// periods the settings name now.
async fn would_refuse(state: &AppState) -> status::WouldRefuse {
    let snapshot = state.site.get().await;
    let settings = &snapshot.settings;
    let tally = state.guard.would_refuse();
    let (address, account) = settings.login_limits();
    status::WouldRefuse {
        doorway: tally.read(
            crate::http::doorway::EVENT,
            settings.interaction_limits().period,
        ),
        notice: tally.read(crate::http::notice::EVENT, settings.notice_limits().period),
        login_address: tally.read(crate::login::ADDRESS_EVENT, address.period),
        login_account: tally.read(crate::login::ACCOUNT_EVENT, account.period),
    }
}
