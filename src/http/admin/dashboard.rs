//! The dashboard: what needs attention, and the way to everything else. Until a first instance
//! has started, a site's warnings are the set-up any new site has ahead of it, so the first box
//! lists those steps in order instead, unless a check reports an error.

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
    /// The first steps, while no instance has started and nothing is in error; else empty.
    steps: Vec<Step>,
}

/// One of a new site's first steps: where it is done, its words, and whether it is done.
pub struct Step {
    pub href: &'static str,
    pub title: String,
    pub help: String,
    pub done: bool,
}

/// A new site's first steps, in the order they are best taken.
async fn first_steps(state: &AppState, ctx: &PageContext) -> Result<Vec<Step>> {
    let snapshot = state.site.get().await;
    let settings = &snapshot.settings;
    let shipped = crate::domain::settings::Settings::default();
    let addressed = settings.base_url != shipped.base_url;
    let steps = [
        ("/admin/config/orchestra", "first-step-site", addressed),
        (
            "/admin/config/orchestra",
            "first-step-mail",
            state.mailer.is_some(),
        ),
        (
            "/admin/workflows",
            "first-step-workflow",
            store::workflows::any_edited(&state.db).await?,
        ),
        ("/admin/instances/new", "first-step-instance", false),
        (
            "/admin/admins",
            "first-step-admin",
            store::admins::count(&state.db).await? > 1,
        ),
    ];
    Ok(steps
        .into_iter()
        .map(|(href, id, done)| Step {
            href,
            title: ctx.t(id),
            help: ctx.t(&format!("{id}-help")),
            done,
        })
        .collect())
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
        .collect::<Vec<_>>();
    let steps = if recent.is_empty() && report.worst() < Severity::Error {
        first_steps(&state, &ctx).await?
    } else {
        Vec::new()
    };
    Ok(html(&Dashboard {
        steps,
        workflows: store::workflows::count(&state.db).await?,
        recent,
        summary,
        attention,
        ctx,
    }))
}
