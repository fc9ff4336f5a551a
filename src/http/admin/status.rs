//! The status report page: a summary line, then errors, warnings, notes and OK, each problem
//! with a link to the form that fixes it and the `orchestra config` line that does the same.

use axum::extract::State;
use axum::response::Response;

use super::sizing::SizingView;
use crate::domain::status::{self, RenderedCheck, Report, Severity};
use crate::http::AppState;
use crate::http::context::{PageContext, html};
use crate::i18n::Message;
use crate::limits::guard::Address;

/// A check as the page shows it.
pub struct Line {
    pub check: RenderedCheck,
    /// The description up to the command it ends with, if any.
    pub text: String,
    /// The `orchestra config …` line the description ends with, or "".
    pub command: String,
    /// The form that fixes it, and the link's text; None when no form does.
    pub fix: Option<(&'static str, String)>,
}

#[derive(askama::Template)]
#[template(path = "admin/status.html")]
struct StatusPage {
    ctx: PageContext,
    summary: String,
    lines: Vec<Line>,
    /// Each counting address's requests per period against its limits (`admin/sizing.html`).
    sizings: Vec<SizingView>,
}

/// The form where a check's problem is fixed, by the check's id: (path, message naming it).
fn form_of(id: &str) -> Option<(&'static str, &'static str)> {
    match id {
        "doorway_limits" | "notice_limits" => Some((
            "/admin/config/orchestra/interaction",
            "status-form-interaction",
        )),
        "login_limits" => Some(("/admin/config/orchestra#login-limits", "status-form-login")),
        "voided_links" => Some((super::keys::PATH, "status-form-keys")),
        "payment_provider" => Some((
            "/admin/config/orchestra/interaction#payment-notices",
            "status-form-interaction",
        )),
        _ => None,
    }
}

/// The report's checks, worst first (a stable sort: equal severities keep the report's order).
pub fn lines(report: &Report, ctx: &PageContext) -> Vec<Line> {
    let mut checks = report.render(ctx.lang);
    checks.sort_by_key(|c| std::cmp::Reverse(c.severity));
    checks
        .into_iter()
        .map(|check| {
            let (text, command) = match check.description.find("orchestra config ") {
                Some(at) => (
                    check.description[..at].to_owned(),
                    check.description[at..].trim().to_owned(),
                ),
                None => (check.description.clone(), String::new()),
            };
            let fix = if check.severity == Severity::Ok {
                None
            } else {
                form_of(check.id).map(|(href, name)| {
                    let link = ctx.msg(&Message::new("status-fix-link").arg("form", ctx.t(name)));
                    (href, link)
                })
            };
            Line {
                check,
                text,
                command,
                fix,
            }
        })
        .collect()
}

/// "1 error, 2 warnings, 0 notes".
pub fn summary(report: &Report, ctx: &PageContext) -> String {
    let count = |s: Severity| report.checks.iter().filter(|c| c.severity == s).count();
    ctx.msg(
        &Message::new("status-summary")
            .arg("errors", count(Severity::Error).to_string())
            .arg("warnings", count(Severity::Warning).to_string())
            .arg("notes", count(Severity::Note).to_string()),
    )
}

pub async fn report(state: &AppState) -> Report {
    let env = status::Environment {
        proxies_named: state.proxies.len(),
        proxy_header: state.proxies.header().display(),
        forwarded_seen: state
            .forwarded_seen
            .load(std::sync::atomic::Ordering::Relaxed),
        would_refuse: Some(would_refuse(state).await),
        flood_store: Some(status::StoreView {
            failing_for: state.guard.health().failing_for(),
            decisions_without_store: state.guard.health().decisions_without_store(),
        }),
        mail: status::MailView {
            server: state.mailer.as_ref().map(|m| m.server.clone()),
            unreachable: state
                .mailer
                .as_ref()
                .is_some_and(|m| m.figures.unreachable()),
        },
    };
    status::build_with(&state.db, state.flood_backend.name(), env).await
}

pub async fn show(State(state): State<AppState>, ctx: PageContext) -> Response {
    let report = report(&state).await;
    let snapshot = state.site.get().await;
    html(&StatusPage {
        sizings: super::sizing::views(&state, &snapshot.settings, &Address::CHARTED, &ctx),
        summary: summary(&report, &ctx),
        lines: lines(&report, &ctx),
        ctx,
    })
}

/// This server's tally of what report-only addresses would have refused, read for the
/// periods the settings name now.
async fn would_refuse(state: &AppState) -> status::WouldRefuse {
    let snapshot = state.site.get().await;
    let settings = &snapshot.settings;
    let read = |address| {
        state
            .guard
            .would_refuse(address, settings.limits_of(address).period)
    };
    status::WouldRefuse {
        doorway: read(Address::Doorway),
        notice: read(Address::Notice),
        login_address: read(Address::SignInAddress),
        login_account: read(Address::SignInAccount),
    }
}
