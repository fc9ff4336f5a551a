//! The interaction doorway: the one route answered without asking who is calling.
//!
//! Order of work for every request, cheapest first:
//! 1. the guard (`guard_layer`): a keyed hash of the link and an in-memory count, nothing else;
//! 2. `resolve`: parse, load the instance, verify the HMAC, read the workflow and step;
//! 3. the handler: render or record.
//!
//! Routing never loads anything, so a refused request costs no instance load, no token check,
//! no HMAC over the link, no subject, no interaction and no render.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, HOST, ORIGIN, REFERRER_POLICY};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::middleware;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use serde::Deserialize;
use tower::ServiceExt;

use super::AppState;
use super::context::{PageContext, html};
use super::error::AppError;
use super::form::{MAX_FORM_BYTES, pairs};
use super::priority;
use crate::capability::{self, Claims, Kind};
use crate::guard::{Decision, FloodGuard};
use crate::i18n::{Lang, Message, tr};
use crate::site::Snapshot;
use crate::store::instances::{Answer, InstanceRow, Recorded};
use crate::store::{self};
use crate::workflow::{Definition, Field, Interaction, Step, check_form, format_amount};

/// The event the doorway's requests are counted under.
pub const EVENT: &str = "interaction";
pub const PREFIX: &str = "/interaction/";
/// The hidden field naming the step a page showed (1-based). Field names are slugs, which
/// never start with `_`, so no form field can take this name.
pub const STEP_FIELD: &str = "_step";
/// How long a continuation handle for a payment return lives.
pub const HANDLE_TTL: i64 = 30 * 60;

/// The doorway's routes. The guard is added by `http::router`, outside every other layer.
pub fn router() -> Router<AppState> {
    Router::new()
        // Everything under the prefix is the doorway, so a link with a stray trailing slash or
        // segment is counted and refused like any other bad link.
        .route("/interaction/{*link}", get(show).post(answer))
        .layer(middleware::map_response(credential_headers))
}

/// Every doorway response: its URL is a credential, so it is neither sent on as a referrer
/// nor kept in any cache.
pub async fn credential_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The refusal, one sentence per language, made once. Identical for both tiers and for good
/// and bad links: it says nothing about either.
static REFUSALS: LazyLock<[Bytes; 2]> = LazyLock::new(|| {
    Lang::ALL.map(|l| Bytes::from(format!("{}\n", tr(l, "doorway-too-many-requests", &[]))))
});

pub fn refusal(lang: Lang) -> Response {
    let body = REFUSALS[lang as usize].clone();
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    // The security headers every response carries, static here: the refusal skips the
    // layer that adds them elsewhere (`http::headers`).
    headers.insert(
        axum::http::header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static(super::headers::NOSNIFF),
    );
    headers.insert(
        axum::http::header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(super::headers::CSP),
    );
    headers.insert(
        axum::http::header::X_FRAME_OPTIONS,
        HeaderValue::from_static(super::headers::DENY),
    );
    response
}

/// The link as it appears in the path: everything after the prefix.
fn link_of(path: &str) -> &str {
    path.strip_prefix(PREFIX).unwrap_or("")
}

/// What the guard decided for one request.
enum Verdict {
    Pass,
    Refuse(Response),
}

/// Counts the request and decides. Synchronous and cheap: a keyed hash of the link and an
/// in-memory count. It runs before the tracing span and the language middleware: a refusal
/// works out the visitor's language itself, and only when it refuses.
fn decide(state: &AppState, snapshot: &Snapshot, request: &Request) -> Verdict {
    let limits = snapshot.settings.interaction_limits();
    if !FloodGuard::is_counting(&limits) {
        return Verdict::Pass;
    }
    let caller = snapshot.caller_id(link_of(request.uri().path()));
    match state.guard.check(EVENT, caller.as_str(), &limits) {
        Decision::Allowed => Verdict::Pass,
        Decision::Refused {
            tier,
            first_in_period,
        } => {
            if first_in_period {
                tracing::warn!(
                    caller = %caller,
                    tier = tier.name(),
                    "doorway request refused; further refusals like it are not logged this period"
                );
            }
            Verdict::Refuse(refusal(
                super::lang::pick(request.uri(), request.headers()).0,
            ))
        }
    }
}

/// The guard as a route layer on the doorway's routes, outside every other layer.
///
/// A hand-written service rather than `middleware::from_fn`: while nothing else is in progress,
/// a refusal is answered from `call` itself, with no boxed future and no clone of the inner
/// service, so it costs about what a bare 429 costs. Only a request that passes pays for calling
/// the doorway, and only a refusal that waits for work in progress (`priority`) is boxed.
#[derive(Clone)]
pub struct GuardLayer {
    state: AppState,
}

impl GuardLayer {
    pub fn new(state: AppState) -> Self {
        Self { state }
    }
}

impl<S> tower::Layer<S> for GuardLayer {
    type Service = GuardService<S>;

    fn layer(&self, inner: S) -> GuardService<S> {
        GuardService(Arc::new(Guarded {
            inner,
            state: self.state.clone(),
        }))
    }
}

/// The guard over the doorway's service. axum clones a route's service for every request, so
/// everything sits behind one `Arc`: a refusal's clone is one count, and the doorway's own stack
/// of layers is cloned only for a request that passes.
pub struct GuardService<S>(Arc<Guarded<S>>);

/// What every clone of one `GuardService` shares.
struct Guarded<S> {
    inner: S,
    state: AppState,
}

impl<S> Clone for GuardService<S> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

type BoxedResponse = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

/// A refusal ready at once, a refusal that lets the site's work in progress go first, or the
/// doorway's own work.
pub enum GuardFuture {
    Refused(Option<Response>),
    Deferred(BoxedResponse),
    Passed(BoxedResponse),
}

impl Future for GuardFuture {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            GuardFuture::Refused(response) => {
                Poll::Ready(Ok(response.take().unwrap_or_else(|| refusal(Lang::En))))
            }
            GuardFuture::Deferred(future) | GuardFuture::Passed(future) => future.as_mut().poll(cx),
        }
    }
}

impl<S> tower::Service<Request> for GuardService<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = GuardFuture;

    /// Always ready: a request that passes readies its own clone of the doorway (`oneshot`).
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> GuardFuture {
        let Guarded { inner, state } = &*self.0;
        match state.site.fresh() {
            Some(snapshot) => match decide(state, &snapshot, &request) {
                // Work in progress goes first (`priority`): one atomic read when there is none.
                Verdict::Refuse(response) if state.work.busy() => {
                    let work = state.work.clone();
                    GuardFuture::Deferred(Box::pin(async move {
                        work.idle_within(priority::MAX_DEFER).await;
                        Ok(response)
                    }))
                }
                Verdict::Refuse(response) => GuardFuture::Refused(Some(response)),
                Verdict::Pass => GuardFuture::Passed(Box::pin(inner.clone().oneshot(request))),
            },
            // Once per cache lifetime: read the settings, then decide.
            None => {
                let state = state.clone();
                let inner = inner.clone();
                GuardFuture::Passed(Box::pin(async move {
                    let snapshot = state.site.get().await;
                    match decide(&state, &snapshot, &request) {
                        Verdict::Refuse(response) => {
                            state.work.idle_within(priority::MAX_DEFER).await;
                            Ok(response)
                        }
                        Verdict::Pass => inner.oneshot(request).await,
                    }
                }))
            }
        }
    }
}

/// A link that resolved: its instance, workflow and claims, checked.
struct Resolved {
    instance: InstanceRow,
    definition: Definition,
    claims: Claims,
    link: String,
}

impl Resolved {
    fn step(&self) -> Option<&Step> {
        if self.instance.state != "active" {
            return None;
        }
        self.definition.steps.get(self.instance.step_index as usize)
    }

    /// The branch this link answers at the current step, if it may answer it at all.
    fn branch_here(&self) -> Option<&str> {
        let step = self.step()?;
        match (&self.claims.branch, step.branches.is_empty()) {
            (None, true) => Some(""),
            (Some(b), false) if step.branches.contains(b) => Some(b.as_str()),
            _ => None,
        }
    }
}

/// Why a link was not resolved. The visitor sees one refusal for all of them.
enum Unresolved {
    Refused,
    Failed(AppError),
}

impl From<sqlx::Error> for Unresolved {
    fn from(e: sqlx::Error) -> Self {
        Unresolved::Failed(e.into())
    }
}

/// The doorway's resolution, in one place: parse, instance, HMAC and expiry, handle record,
/// workflow.
async fn resolve(
    state: &AppState,
    snapshot: &Snapshot,
    link: &str,
) -> Result<Resolved, Unresolved> {
    let parsed = capability::parse(link).ok_or(Unresolved::Refused)?;
    let instance = store::instances::by_id(&state.db, parsed.claims.instance)
        .await?
        .ok_or(Unresolved::Refused)?;
    let now = state.clock.now_secs();
    if !capability::verify(&snapshot.keys, &parsed, &instance.token, now) {
        return Err(Unresolved::Refused);
    }
    if parsed.claims.kind == Kind::Handle {
        let hash = snapshot.keys.keyed_hash("handle", link);
        if !store::instances::handle_usable(&state.db, &hash, now).await? {
            return Err(Unresolved::Refused);
        }
    }
    let row = store::workflows::by_id(&state.db, instance.workflow_id)
        .await?
        .ok_or(Unresolved::Refused)?;
    let definition = Definition::from_json(&row.definition).ok_or_else(|| {
        Unresolved::Failed(AppError::internal("stored workflow does not parse", row.id))
    })?;
    Ok(Resolved {
        instance,
        definition,
        claims: parsed.claims,
        link: link.to_owned(),
    })
}

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
    notice: Option<String>,
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
}

fn refused_page(lang: Lang) -> Response {
    let mut response = html(&RefusedPage {
        ctx: PageContext::plain(lang),
    });
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

/// A doorway page's context, from the snapshot the request already holds.
fn ctx_for(snapshot: &Snapshot, lang: Lang) -> PageContext {
    let mut ctx = PageContext::plain(lang);
    ctx.site_name = snapshot.settings.site_name.clone();
    ctx
}

fn done(ctx: PageContext, resolved: &Resolved, title: &str, message: &str) -> Response {
    html(&DonePage {
        title: ctx.t(title),
        message: ctx.t(message),
        subject_title: &resolved.instance.subject_title,
        ctx,
    })
}

#[derive(Deserialize)]
struct ShowQuery {
    outcome: Option<String>,
}

/// The link and query of a doorway request, read as they are. Not axum's `Path` and `Query`:
/// their rejections (bad percent-encoding, say) would answer differently from a bad link.
fn link_and_outcome(uri: &Uri) -> (String, Option<String>) {
    let outcome = uri.query().and_then(|q| {
        serde_urlencoded::from_str::<ShowQuery>(q)
            .ok()
            .and_then(|q| q.outcome)
    });
    (link_of(uri.path()).to_owned(), outcome)
}

async fn show(State(state): State<AppState>, lang: Lang, uri: Uri) -> Result<Response, AppError> {
    let (link, outcome) = link_and_outcome(&uri);
    let query = ShowQuery { outcome };
    let snapshot = state.site.get().await;
    let resolved = match resolve(&state, &snapshot, &link).await {
        Ok(r) => r,
        Err(Unresolved::Refused) => return Ok(refused_page(lang)),
        Err(Unresolved::Failed(e)) => return Err(e),
    };
    let ctx = ctx_for(&snapshot, lang);
    if resolved.claims.kind == Kind::Handle && query.outcome.is_some() {
        return payment_return(&state, &snapshot, ctx, &resolved, query.outcome.as_deref()).await;
    }
    // A branch that has answered is not offered the form again: its answer would not count.
    if let Some(branch) = resolved.branch_here() {
        let answered = store::instances::answered_branches(
            &state.db,
            resolved.instance.id,
            resolved.instance.step_index,
        )
        .await?;
        if answered.iter().any(|b| b == branch) {
            return Ok(done(
                ctx,
                &resolved,
                "doorway-nothing-title",
                "doorway-already-answered",
            ));
        }
    }
    let notice = None;
    Ok(render_step(
        ctx,
        &resolved,
        StepInput::default(),
        notice,
        StatusCode::OK,
    ))
}

#[derive(Default)]
struct StepInput {
    values: Vec<(String, String)>,
    field_errors: Vec<(String, Message)>,
    decision: String,
    comment: String,
    errors: Vec<Message>,
}

fn render_step(
    ctx: PageContext,
    resolved: &Resolved,
    input: StepInput,
    notice: Option<&str>,
    status: StatusCode,
) -> Response {
    let Some(step) = resolved.step() else {
        let (title, message) = match resolved.instance.state.as_str() {
            "rejected" => ("doorway-closed-title", "doorway-rejected"),
            _ => ("doorway-closed-title", "doorway-complete"),
        };
        return done(ctx, resolved, title, message);
    };
    let Some(branch) = resolved.branch_here() else {
        // A link for a branch of an earlier step, or a step this link does not open.
        return done(
            ctx,
            resolved,
            "doorway-nothing-title",
            "doorway-nothing-here",
        );
    };
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
        } => format!("{} {currency}", format_amount(*amount_cents)),
        _ => String::new(),
    };
    let page = StepPage {
        subject_title: &resolved.instance.subject_title,
        subject_body: &resolved.instance.subject_body,
        step_title: &step.title,
        step_number: resolved.instance.step_index as usize + 1,
        step_count: resolved.definition.steps.len(),
        branch,
        kind: step.interaction.kind(),
        fields,
        amount,
        decision: input.decision,
        comment: input.comment,
        errors: input.errors.iter().map(|m| ctx.msg(m)).collect(),
        notice: notice.map(|n| ctx.t(n)),
        ctx,
    };
    let mut response = html(&page);
    *response.status_mut() = status;
    response
}

fn field_view<'a>(ctx: &PageContext, field: &'a Field, input: &StepInput) -> FieldView<'a> {
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

/// Whether a POST may have come from another site. An anonymous form has no session to hold
/// a token, so the browser's own statements are the defence: `Sec-Fetch-Site` where sent,
/// else `Origin` against `Host`. Clients that send neither (scripts, old browsers) are let
/// through: they are not a victim's browser carrying someone else's intent.
fn cross_site(headers: &HeaderMap) -> bool {
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        return !matches!(site, "same-origin" | "none");
    }
    let Some(origin) = headers.get(ORIGIN).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let host = headers
        .get(HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let origin_host = origin.split_once("://").map_or("", |(_, h)| h);
    origin == "null" || !origin_host.eq_ignore_ascii_case(host)
}

async fn answer(
    State(state): State<AppState>,
    lang: Lang,
    request: Request,
) -> Result<Response, AppError> {
    let (link, _) = link_and_outcome(request.uri());
    if cross_site(request.headers()) {
        tracing::info!("refused a cross-site post to the doorway");
        return Err(AppError::Forbidden);
    }
    let body = axum::body::to_bytes(request.into_body(), MAX_FORM_BYTES)
        .await
        .map_err(|_| AppError::BadRequest)?;
    let submitted = pairs(&body);
    let snapshot = state.site.get().await;
    let resolved = match resolve(&state, &snapshot, &link).await {
        Ok(r) => r,
        Err(Unresolved::Refused) => return Ok(refused_page(lang)),
        Err(Unresolved::Failed(e)) => return Err(e),
    };
    // The page names the step it showed: a second click, or a post that lost a race to
    // another, must not answer whatever step came next. It is sent to the current page.
    let shown_step = submitted
        .iter()
        .find(|(k, _)| k == STEP_FIELD)
        .map(|(_, v)| v.as_str());
    if shown_step.is_some_and(|s| s != (resolved.instance.step_index + 1).to_string()) {
        return Ok(Redirect::to(&format!("{PREFIX}{}", resolved.link)).into_response());
    }
    let ctx = ctx_for(&snapshot, lang);
    let (Some(step), Some(branch)) = (resolved.step(), resolved.branch_here()) else {
        return Ok(render_step(
            ctx,
            &resolved,
            StepInput::default(),
            None,
            StatusCode::OK,
        ));
    };
    let get = |name: &str| {
        submitted
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.trim().to_owned())
            .unwrap_or_default()
    };
    let (answer_json, ends_as) = match &step.interaction {
        Interaction::Form { fields } => {
            let check = check_form(fields, &submitted);
            if !check.errors.is_empty() {
                let input = StepInput {
                    values: check.values,
                    field_errors: check.errors,
                    errors: vec![Message::new("doorway-form-has-errors")],
                    ..StepInput::default()
                };
                return Ok(render_step(
                    ctx,
                    &resolved,
                    input,
                    None,
                    StatusCode::UNPROCESSABLE_ENTITY,
                ));
            }
            let values: serde_json::Map<String, serde_json::Value> = check
                .values
                .into_iter()
                .map(|(k, v)| (k, v.into()))
                .collect();
            (serde_json::json!({ "fields": values }), None)
        }
        Interaction::Review => {
            let decision = get("decision");
            let comment = get("comment");
            let mut errors = Vec::new();
            if decision != "approve" && decision != "reject" {
                errors.push(Message::new("doorway-review-choose"));
            }
            if comment.chars().count() > 2000 {
                errors.push(Message::new("field-too-long").arg("max", "2000"));
            }
            if decision == "reject" && comment.is_empty() {
                errors.push(Message::new("doorway-review-reason"));
            }
            if !errors.is_empty() {
                let input = StepInput {
                    decision,
                    comment,
                    errors,
                    ..StepInput::default()
                };
                return Ok(render_step(
                    ctx,
                    &resolved,
                    input,
                    None,
                    StatusCode::UNPROCESSABLE_ENTITY,
                ));
            }
            let ends = (decision == "reject").then_some("rejected");
            (
                serde_json::json!({ "decision": decision, "comment": comment }),
                ends,
            )
        }
        Interaction::Payment {
            amount_cents,
            currency,
        } => {
            return start_payment(
                &state,
                &snapshot,
                &resolved,
                branch,
                *amount_cents,
                currency,
            )
            .await;
        }
    };
    record(
        &state,
        ctx,
        &resolved,
        branch,
        &answer_json.to_string(),
        ends_as,
    )
    .await
}

async fn record(
    state: &AppState,
    ctx: PageContext,
    resolved: &Resolved,
    branch: &str,
    answer_json: &str,
    ends_as: Option<&'static str>,
) -> Result<Response, AppError> {
    let step = resolved.step().ok_or(AppError::NotFound)?;
    let outcome = store::instances::record_answer(
        &state.db,
        &Answer {
            instance: resolved.instance.id,
            step: resolved.instance.step_index,
            branch,
            answer_json,
            branches: &if step.branches.is_empty() {
                vec![String::new()]
            } else {
                step.branches.clone()
            },
            last_step: resolved.instance.step_index as usize + 1 == resolved.definition.steps.len(),
            ends_as,
        },
    )
    .await?;
    tracing::info!(
        instance = resolved.instance.id,
        step = resolved.instance.step_index,
        branch,
        "step answered"
    );
    Ok(match outcome {
        Recorded::Advanced => {
            let next = resolved
                .definition
                .steps
                .get(resolved.instance.step_index as usize + 1);
            let same_link_answers_next = resolved.claims.kind == Kind::Link
                && next.is_some_and(|s| {
                    s.branches.is_empty() == resolved.claims.branch.is_none()
                        && resolved
                            .claims
                            .branch
                            .as_ref()
                            .is_none_or(|b| s.branches.contains(b))
                });
            if same_link_answers_next {
                Redirect::to(&format!("{PREFIX}{}", resolved.link)).into_response()
            } else {
                done(ctx, resolved, "doorway-thanks-title", "doorway-thanks-next")
            }
        }
        Recorded::Waiting => done(
            ctx,
            resolved,
            "doorway-thanks-title",
            "doorway-thanks-waiting",
        ),
        Recorded::Ended("rejected") => {
            done(ctx, resolved, "doorway-thanks-title", "doorway-rejected")
        }
        Recorded::Ended(_) => done(
            ctx,
            resolved,
            "doorway-thanks-title",
            "doorway-thanks-complete",
        ),
        Recorded::Stale => done(
            ctx,
            resolved,
            "doorway-nothing-title",
            "doorway-already-answered",
        ),
    })
}

/// Sends the payer to the provider with a continuation handle to come back on.
async fn start_payment(
    state: &AppState,
    snapshot: &Snapshot,
    resolved: &Resolved,
    branch: &str,
    amount_cents: i64,
    currency: &str,
) -> Result<Response, AppError> {
    let expires = state.clock.now_secs() + HANDLE_TTL;
    let claims = Claims {
        kind: Kind::Handle,
        instance: resolved.instance.id,
        branch: (!branch.is_empty()).then(|| branch.to_owned()),
        expires,
    };
    let handle = capability::sign(&snapshot.keys, &claims, &resolved.instance.token);
    store::instances::put_handle(
        &state.db,
        &snapshot.keys.keyed_hash("handle", &handle),
        resolved.instance.id,
        expires,
    )
    .await?;
    let query = serde_urlencoded::to_string([
        ("amount", format_amount(amount_cents)),
        ("currency", currency.to_owned()),
    ])
    .map_err(|e| AppError::internal("could not build the provider URL", e))?;
    Ok(Redirect::to(&format!("/test-provider/{handle}?{query}")).into_response())
}

/// The payer is back from the provider on a handle.
async fn payment_return(
    state: &AppState,
    snapshot: &Snapshot,
    ctx: PageContext,
    resolved: &Resolved,
    outcome: Option<&str>,
) -> Result<Response, AppError> {
    let (Some(step), Some(branch)) = (resolved.step(), resolved.branch_here()) else {
        return Ok(render_step(
            ctx,
            resolved,
            StepInput::default(),
            None,
            StatusCode::OK,
        ));
    };
    let Interaction::Payment {
        amount_cents,
        currency,
    } = &step.interaction
    else {
        return Ok(render_step(
            ctx,
            resolved,
            StepInput::default(),
            None,
            StatusCode::OK,
        ));
    };
    if outcome != Some("paid") {
        return Ok(render_step(
            ctx,
            resolved,
            StepInput::default(),
            Some("doorway-payment-cancelled"),
            StatusCode::OK,
        ));
    }
    let now = state.clock.now_secs();
    if !store::instances::spend_handle(
        &state.db,
        &snapshot.keys.keyed_hash("handle", &resolved.link),
        now,
    )
    .await?
    {
        return Ok(refused_page(ctx.lang));
    }
    let answer = serde_json::json!({
        "status": "paid",
        "amount": format_amount(*amount_cents),
        "currency": currency,
        "provider": "test",
    });
    record(state, ctx, resolved, branch, &answer.to_string(), None).await
}
