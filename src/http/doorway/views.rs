//! The doorway's pages: a step to answer, a plain end page, the one refusal, and the wait for a
//! provider's confirmation.

use axum::http::StatusCode;
use axum::response::Response;

use crate::domain::interaction::{Invalid, Now, Resolved};
use crate::domain::site::Snapshot;
use crate::domain::workflow::{Field, InstanceState, Interaction, Step};
use crate::http::context::{PageContext, html};
use crate::i18n::{Lang, Message};

#[derive(askama::Template)]
#[template(path = "doorway/refused.html")]
struct RefusedPage {
    ctx: PageContext,
}

#[derive(askama::Template)]
#[template(path = "doorway/step.html")]
struct StepPage<'a> {
    ctx: PageContext,
    subject_title: &'a str,
    subject_body: &'a str,
    step_title: &'a str,
    step_number: usize,
    step_count: usize,
    branch: &'a str,
    kind: &'static str,
    fields: Vec<FieldView<'a>>,
    amount: String,
    /// Review: what was picked and typed, kept on an error.
    decision: String,
    comment: String,
    errors: Vec<String>,
    /// A note above the step, and whether it is a warning rather than news.
    notice: Option<(String, bool)>,
}

struct FieldView<'a> {
    name: &'a str,
    label: &'a str,
    kind: &'static str,
    required: bool,
    value: String,
    error: Option<String>,
}

#[derive(askama::Template)]
#[template(path = "doorway/done.html")]
struct DonePage<'a> {
    ctx: PageContext,
    subject_title: &'a str,
    title: String,
    message: String,
    /// Seconds after which the page asks again (waiting for a provider's notice).
    refresh: Option<u32>,
}

/// The one refusal every bad, expired, revoked or unknown link gets.
pub fn refused(lang: Lang) -> Response {
    let mut response = html(&RefusedPage {
        ctx: PageContext::plain(lang),
    });
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

/// A doorway page's context, from the snapshot the request already holds.
pub fn ctx_for(snapshot: &Snapshot, lang: Lang) -> PageContext {
    let mut ctx = PageContext::plain(lang);
    ctx.site_name = snapshot.settings.site_name.clone();
    ctx
}

pub fn done(ctx: PageContext, resolved: &Resolved, title: &str, message: &str) -> Response {
    html(&DonePage {
        title: ctx.t(title),
        message: ctx.t(message),
        subject_title: &resolved.instance.subject_title,
        refresh: None,
        ctx,
    })
}

/// The page of a payment waiting for the provider's notice: it asks again by itself, without
/// script.
pub fn waiting(ctx: PageContext, resolved: &Resolved) -> Response {
    html(&DonePage {
        title: ctx.t("doorway-payment-waiting-title"),
        message: ctx.t("doorway-payment-waiting"),
        subject_title: &resolved.instance.subject_title,
        refresh: Some(3),
        ctx,
    })
}

/// The page for a link with nothing to answer now, or whose instance is over.
pub fn nothing(ctx: PageContext, resolved: &Resolved) -> Response {
    match resolved.instance.state {
        InstanceState::Rejected => done(ctx, resolved, "doorway-closed-title", "doorway-rejected"),
        InstanceState::Complete => done(ctx, resolved, "doorway-closed-title", "doorway-complete"),
        InstanceState::Cancelled => {
            done(ctx, resolved, "doorway-closed-title", "doorway-cancelled")
        }
        InstanceState::Active => done(
            ctx,
            resolved,
            "doorway-nothing-title",
            "doorway-nothing-here",
        ),
    }
}

/// A note shown above a step.
pub enum Notice {
    PaymentFailed,
}

/// The current step as this link may answer it, or the page saying it may not.
pub fn step(
    ctx: PageContext,
    resolved: &Resolved,
    input: Invalid,
    notice: Option<Notice>,
    status: StatusCode,
) -> Response {
    let (step, branch) = match resolved.now() {
        Now::Answer { step, branch } => (step, branch),
        Now::NothingHere | Now::Over(_) => return nothing(ctx, resolved),
    };
    step_page(ctx, resolved, step, branch, input, notice, status)
}

fn step_page(
    ctx: PageContext,
    resolved: &Resolved,
    step: &Step,
    branch: &str,
    input: Invalid,
    notice: Option<Notice>,
    status: StatusCode,
) -> Response {
    let fields = match &step.interaction {
        Interaction::Form { fields } => {
            fields.iter().map(|f| field_view(&ctx, f, &input)).collect()
        }
        _ => Vec::new(),
    };
    let amount = match &step.interaction {
        Interaction::Payment {
            amount_cents,
            currency,
        } => crate::domain::workflow::format_amount_for(ctx.lang, *amount_cents, currency),
        _ => String::new(),
    };
    let notice = notice.map(|n| match n {
        Notice::PaymentFailed => (ctx.t("doorway-payment-cancelled"), true),
    });
    let page = StepPage {
        subject_title: &resolved.instance.subject_title,
        subject_body: &resolved.instance.subject_body,
        step_title: &step.title,
        step_number: resolved.step_number(),
        step_count: resolved.definition.steps.len(),
        branch,
        kind: step.interaction.kind(),
        fields,
        amount,
        decision: input.decision,
        comment: input.comment,
        errors: input.errors.iter().map(|m: &Message| ctx.msg(m)).collect(),
        notice,
        ctx,
    };
    let mut response = html(&page);
    *response.status_mut() = status;
    response
}

fn field_view<'a>(ctx: &PageContext, field: &'a Field, input: &Invalid) -> FieldView<'a> {
    FieldView {
        name: &field.name,
        label: &field.label,
        kind: field.kind.name(),
        required: field.required,
        value: input
            .values
            .iter()
            .find(|(k, _)| *k == field.name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default(),
        error: input
            .field_errors
            .iter()
            .find(|(k, _)| *k == field.name)
            .map(|(_, m)| ctx.msg(m)),
    }
}
