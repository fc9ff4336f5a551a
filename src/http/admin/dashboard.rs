//! The dashboard: what needs attention, and the way to everything else.

use axum::extract::State;
use axum::response::Response;

use crate::domain::status::Severity;
use crate::http::AppState;
use crate::http::context::{PageContext, html};
use crate::http::error::Result;
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
    /// "n errors, n warnings, n notes", as the status report says it.
    summary: String,
    /// Each check that is not OK, worst first: (anchor in the report, title, value, link text).
    attention: Vec<(String, String, String, String)>,
}

pub async fn show(State(state): State<AppState>, ctx: PageContext) -> Result<Response> {
    let report = super::status::report(&state).await;
    let summary = super::status::summary(&report, &ctx);
    let attention = super::status::lines(&report, &ctx)
        .into_iter()
        .filter(|l| l.check.severity != Severity::Ok)
        .map(|l| {
            let link = ctx.msg(
                &crate::i18n::Message::new("dashboard-see-check")
                    .arg("title", l.check.title.clone()),
            );
            (
                format!("/admin/reports/status#check-{}", l.check.id),
                l.check.title,
                l.check.value,
                link,
            )
        })
        .collect();
    let recent = store::instances::recent(&state.db, 5)
        .await?
        .into_iter()
        .map(|i| InstanceLine {
            id: i.id,
            title: i.subject_title,
            state: ctx.t(i.state.message_id()),
        })
        .collect();
    Ok(html(&Dashboard {
        workflows: store::workflows::count(&state.db).await?,
        recent,
        summary,
        attention,
        ctx,
    }))
}
