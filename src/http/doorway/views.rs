//! The doorway's pages: a step to answer, a plain end page, the one refusal, and the wait for a
//! provider's confirmation.

use axum::http::StatusCode;
use axum::response::Response;

use crate::domain::interaction::{Invalid, Now, Resolved, ShownStep};
use crate::domain::site::Snapshot;
use crate::domain::workflow::{Field, FieldKind, InstanceState, Interaction, Step, shown_value};
use crate::http::context::{PageContext, html};
use crate::i18n::{Lang, Message};

#[derive(askama::Template)]
#[template(path = "doorway/refused.html")]
struct RefusedPage {
    ctx: PageContext,
    /// For a genuine link that expired or was voided by a key rotation: where its holder asks
    /// for a fresh one.
    fresh: Option<String>,
    /// The answer to that request: the same words whatever came of it.
    asked: bool,
}

#[derive(askama::Template)]
#[template(path = "doorway/step.html")]
struct StepPage<'a> {
    ctx: PageContext,
    subject_title: &'a str,
    subject_body: &'a str,
    step_title: &'a str,
    step_help: &'a str,
    step_number: usize,
    step_count: usize,
    branch: &'a str,
    kind: &'static str,
    fields: Vec<FieldView<'a>>,
    /// Whether a field is a file: the form is then sent as `multipart/form-data`.
    multipart: bool,
    amount: String,
    /// Review: what was picked and typed, kept on an error.
    decision: String,
    comment: String,
    /// The comment box's error (a rejection without a reason, a comment too long).
    comment_error: Option<String>,
    errors: Vec<String>,
    /// A note above the step, and whether it is a warning rather than news.
    notice: Option<(String, bool)>,
    /// Earlier steps' answers the definition has this step show.
    shown: &'a [ShownStep],
    /// When the link stops working: as UTC text, for a `<time>` a script shows in the
    /// visitor's zone, and a warning when that is close.
    /// A handle's own expiry (30 minutes) is not the link's: its pages show none.
    expires: Option<(String, String)>,
    expires_soon: Option<String>,
    /// `| forward`: the form handing the step to a colleague, with what was typed in it.
    forward: Option<ForwardView>,
}

struct ForwardView {
    email: String,
    name: String,
    lang: String,
    email_error: Option<String>,
    name_error: Option<String>,
    lang_error: Option<String>,
    /// Open when it was the form posted.
    open: bool,
    langs: Vec<(&'static str, String)>,
}

#[derive(askama::Template)]
#[template(path = "doorway/expired.html")]
struct ExpiredPage<'a> {
    ctx: PageContext,
    subject_title: &'a str,
    step_title: &'a str,
    message: String,
    typed: Vec<(String, String)>,
}

/// Within this many seconds of its expiry, the step page warns that the link expires soon.
pub const EXPIRES_SOON_SECS: i64 = 24 * 3600;

struct FieldView<'a> {
    name: &'a str,
    label: &'a str,
    kind: &'static str,
    required: bool,
    value: String,
    error: Option<String>,
    /// A choice's options: the value each posts, and its words in the visitor's language.
    options: Vec<(String, String)>,
    /// A file's: what the browser's picker offers, and the size and kinds it takes, in words.
    accept: String,
    hint: String,
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
    /// The receipts of the link's answers, offered for download.
    receipts: Vec<Offer>,
}

/// A receipt offered on a link's page: where it is downloaded, and what it is of.
pub struct Offer {
    pub href: String,
    pub label: String,
}

/// The one refusal every bad, expired, revoked or unknown link gets.
pub fn refused(lang: Lang) -> Response {
    let mut response = html(&RefusedPage {
        ctx: PageContext::plain(lang),
        fresh: None,
        asked: false,
    });
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

/// The refusal of a genuine link that expired or was voided by a key rotation: the same words,
/// and a form its holder sends to ask for a fresh link.
pub fn refused_with_fresh(lang: Lang, link: &str) -> Response {
    let mut response = html(&RefusedPage {
        ctx: PageContext::plain(lang),
        fresh: Some(format!("{}{link}/{}", super::PREFIX, super::FRESH_SEGMENT)),
        asked: false,
    });
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

/// What the holder of a genuine link sees once they asked for a fresh one, whatever came of it.
pub fn fresh_asked(lang: Lang) -> Response {
    html(&RefusedPage {
        ctx: PageContext::plain(lang),
        fresh: None,
        asked: true,
    })
}

/// A doorway page's context, from the snapshot the request already holds.
pub fn ctx_for(snapshot: &Snapshot, lang: Lang) -> PageContext {
    let mut ctx = PageContext::plain(lang);
    ctx.site_name = snapshot.settings.site_name.clone();
    ctx
}

pub fn done(ctx: PageContext, resolved: &Resolved, title: &str, message: &str) -> Response {
    done_with(ctx, resolved, title, message, Vec::new())
}

/// `done`, offering the receipts of the link's answers.
pub fn done_with(
    ctx: PageContext,
    resolved: &Resolved,
    title: &str,
    message: &str,
    receipts: Vec<Offer>,
) -> Response {
    html(&DonePage {
        title: ctx.t(title),
        message: ctx.t(message),
        subject_title: &resolved.instance.subject_title,
        refresh: None,
        receipts,
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
        receipts: Vec::new(),
        ctx,
    })
}

/// The page for a link with nothing to answer now, or whose instance is over.
pub fn nothing(ctx: PageContext, resolved: &Resolved) -> Response {
    nothing_offering(ctx, resolved, Vec::new())
}

/// `nothing`, offering the receipts of what the link answered.
pub fn nothing_offering(ctx: PageContext, resolved: &Resolved, receipts: Vec<Offer>) -> Response {
    let (title, message) = match resolved.instance.state {
        InstanceState::Rejected => ("doorway-closed-title", "doorway-rejected"),
        InstanceState::Complete => ("doorway-closed-title", "doorway-complete"),
        InstanceState::Cancelled => ("doorway-closed-title", "doorway-cancelled"),
        InstanceState::Expired => ("doorway-closed-title", "doorway-expired"),
        InstanceState::Active => ("doorway-nothing-title", "doorway-nothing-here"),
    };
    done_with(ctx, resolved, title, message, receipts)
}

/// A note shown above a step.
pub enum Notice {
    PaymentFailed,
    /// The step was sent back for changes: by which participant, with their comment.
    SentBack(String, String),
}

/// When a step page is made, and the site's largest file then.
#[derive(Clone, Copy)]
pub struct At {
    pub now: i64,
    pub max_file_bytes: u64,
}

/// The current step as this link may answer it, or the page saying it may not.
pub fn step(
    ctx: PageContext,
    at: At,
    resolved: &Resolved,
    input: Invalid,
    notice: Option<Notice>,
    shown: &[ShownStep],
    status: StatusCode,
) -> Response {
    let (step, branch) = match resolved.now() {
        Now::Answer { step, branch } => (step, branch),
        Now::NothingHere | Now::Over(_) => return nothing(ctx, resolved),
    };
    let fields = match &step.interaction {
        Interaction::Form { fields } => fields
            .iter()
            .enumerate()
            .map(|(i, f)| field_view(&ctx, step, i, f, &input, at.max_file_bytes))
            .collect(),
        _ => Vec::new(),
    };
    let amount = match &step.interaction {
        Interaction::Payment {
            amount_cents,
            currency,
        } => crate::domain::workflow::format_amount_for(ctx.lang, *amount_cents, currency),
        _ => String::new(),
    };
    let expires_at = resolved.claims.expires;
    let left = expires_at - at.now;
    let is_link = resolved.claims.kind == crate::domain::capability::Kind::Link;
    let expires_soon = (is_link && left < EXPIRES_SOON_SECS).then(|| {
        let message = if left < 3600 {
            Message::new("doorway-expires-soon-minutes")
                .arg("minutes", (left / 60).max(1).to_string())
        } else {
            Message::new("doorway-expires-soon-hours").arg("hours", (left / 3600).to_string())
        };
        ctx.msg(&message)
    });
    let notice = notice.map(|n| match n {
        Notice::PaymentFailed => (ctx.t("doorway-payment-cancelled"), true),
        Notice::SentBack(who, comment) => (
            ctx.msg(
                &Message::new("doorway-sent-back")
                    .arg("who", who)
                    .arg("comment", comment),
            ),
            true,
        ),
    });
    let forward = crate::domain::interaction::forward::offered(resolved, step).then(|| {
        use crate::domain::interaction::forward::{EMAIL, LANG, NAME};
        let typed = |k: &str| {
            input
                .values
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        let error = |k: &str| {
            input
                .field_errors
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, m)| ctx.msg(m))
        };
        ForwardView {
            open: input.values.iter().any(|(k, _)| k == EMAIL),
            email: typed(EMAIL),
            name: typed(NAME),
            lang: typed(LANG),
            email_error: error(EMAIL),
            name_error: error(NAME),
            lang_error: error(LANG),
            langs: Lang::ALL
                .into_iter()
                .map(|l| (l.code(), l.native_name().to_owned()))
                .collect(),
        }
    });
    let page = StepPage {
        forward,
        subject_title: &resolved.instance.subject_title,
        subject_body: &resolved.instance.subject_body,
        step_title: step.title_in(ctx.lang),
        step_help: step.help_in(ctx.lang),
        step_number: resolved.step_number(),
        step_count: resolved.definition.steps.len(),
        branch,
        kind: step.interaction.kind(),
        multipart: fields.iter().any(|f: &FieldView| f.kind == "file"),
        fields,
        amount,
        comment_error: input
            .field_errors
            .iter()
            .find(|(k, _)| k == crate::domain::interaction::COMMENT)
            .map(|(_, m)| ctx.msg(m)),
        decision: input.decision,
        comment: input.comment,
        errors: input.errors.iter().map(|m: &Message| ctx.msg(m)).collect(),
        notice,
        shown,
        expires: is_link.then(|| {
            (
                crate::time::format_utc(expires_at),
                crate::time::format_iso(expires_at),
            )
        }),
        expires_soon,
        ctx,
    };
    let mut response = html(&page);
    *response.status_mut() = status;
    response
}

fn field_view<'a>(
    ctx: &PageContext,
    step: &'a Step,
    index: usize,
    field: &'a Field,
    input: &Invalid,
    site_max: u64,
) -> FieldView<'a> {
    FieldView {
        name: &field.name,
        label: step.label_in(ctx.lang, index).unwrap_or(&field.label),
        options: field
            .options
            .iter()
            .zip(step.options_in(ctx.lang, index))
            .map(|(own, shown)| (Field::option_value(own), shown.clone()))
            .collect(),
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
        accept: field.file.as_ref().map_or_else(String::new, |rule| {
            let kinds: Vec<&str> = rule.kinds.iter().map(|k| k.accept()).collect();
            kinds.join(",")
        }),
        hint: field.file.as_ref().map_or_else(String::new, |rule| {
            let kinds: Vec<&str> = rule.kinds.iter().map(|k| k.name()).collect();
            ctx.msg(
                &crate::domain::files::size_args(
                    Message::new("field-file-hint"),
                    rule.max_bytes.min(site_max),
                )
                .arg("kinds", kinds.join(", ")),
            )
        }),
    }
}

/// An answer posted on a link that expired moments ago: nothing is recorded, and the page
/// gives back what was typed (escaped, like any page) and says what happened.
pub fn expired(
    ctx: PageContext,
    resolved: &Resolved,
    step: &Step,
    submitted: &[(String, String)],
) -> Response {
    let value = |name: &str| {
        submitted
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.trim().to_owned())
            .unwrap_or_default()
    };
    let typed = match &step.interaction {
        // A file is not given back: nothing of it was kept.
        Interaction::Form { fields } => fields
            .iter()
            .enumerate()
            .filter(|(_, f)| f.kind != FieldKind::File)
            .map(|(i, f)| {
                let label = step.label_in(ctx.lang, i).unwrap_or(&f.label).to_owned();
                let mut typed = value(&f.name);
                if f.kind == FieldKind::Checkbox {
                    typed = shown_value(Some(f.kind), &typed, ctx.lang).text;
                }
                // A choice posts its option's slug: give back the option's words.
                let shown = f
                    .options
                    .iter()
                    .position(|o| Field::option_value(o) == typed)
                    .and_then(|at| step.options_in(ctx.lang, i).get(at))
                    .cloned()
                    .unwrap_or(typed);
                (label, shown)
            })
            .collect(),
        Interaction::Review => {
            let decision = match value("decision").as_str() {
                "approve" => ctx.t("doorway-approve"),
                "reject" => ctx.t("doorway-reject"),
                _ => String::new(),
            };
            vec![
                (ctx.t("doorway-review-decision"), decision),
                (ctx.t("doorway-comment"), value("comment")),
            ]
        }
        Interaction::Payment { .. } => Vec::new(),
    };
    let message = ctx.msg(
        &Message::new("doorway-expired-kept")
            .arg("expired", crate::time::format_utc(resolved.claims.expires)),
    );
    let mut response = html(&ExpiredPage {
        subject_title: &resolved.instance.subject_title,
        step_title: step.title_in(ctx.lang),
        message,
        typed,
        ctx,
    });
    *response.status_mut() = StatusCode::GONE;
    response
}

/// The page after a forward: the link no longer works, the colleague was emailed.
pub fn forwarded(ctx: PageContext, resolved: &Resolved, to: &str) -> Response {
    html(&DonePage {
        title: ctx.t("doorway-forwarded-title"),
        message: ctx.msg(&Message::new("doorway-forwarded").arg("to", to)),
        subject_title: &resolved.instance.subject_title,
        refresh: None,
        receipts: Vec::new(),
        ctx,
    })
}

/// The page a successful answer redirects to (`?thanks`), once it says there is nothing more
/// for this link now: the thanks, and what happens next.
pub fn thanked(
    ctx: PageContext,
    resolved: &Resolved,
    waiting: bool,
    receipts: Vec<Offer>,
) -> Response {
    let message = match resolved.instance.state {
        InstanceState::Rejected => "doorway-rejected",
        InstanceState::Complete => "doorway-thanks-complete",
        InstanceState::Cancelled => "doorway-cancelled",
        InstanceState::Expired => "doorway-expired",
        InstanceState::Active if waiting => "doorway-thanks-waiting",
        InstanceState::Active => "doorway-thanks-next",
    };
    done_with(ctx, resolved, "doorway-thanks-title", message, receipts)
}
