//! Workflows: list, create, a workflow's page with its versions, edit (a new version), and
//! delete (a workflow or a version) after a confirmation page.

use axum::extract::State;

use crate::http::extract::{Path, Query};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use tower_sessions::Session;

use super::preview::{self, Preview};
use super::{FieldErrors, error_for};
use crate::domain::workflow::drawing::Flow;
use crate::domain::workflow::edit::{self, Draft, Refusal};
use crate::domain::workflow::labels::{self, label_in};
use crate::domain::workflow::{Definition, Participant};
use crate::http::AppState;
use crate::http::context::{PageContext, flash, flash_to, html};
use crate::http::error::{AppError, Result};
use crate::http::form::Form;
use crate::i18n::{Lang, Message};
use crate::store::{self, workflows::Deleted};

pub struct WorkflowLine {
    pub id: i64,
    pub name: String,
    pub label: String,
    pub steps: String,
    pub version: i64,
    /// "Open Supplier onboarding": a link text that says what it opens.
    pub open_label: String,
}

#[derive(askama::Template)]
#[template(path = "admin/workflows.html")]
struct ListPage {
    ctx: PageContext,
    workflows: Vec<WorkflowLine>,
}

/// A definition's steps in one line: kinds and who answers them.
fn steps_line(ctx: &PageContext, definition: &Definition) -> String {
    definition
        .steps
        .iter()
        .map(|s| {
            let kind = ctx.t(s.interaction.message_id());
            let who: Vec<&str> = s.participants().iter().map(Participant::as_str).collect();
            format!("{kind} ({})", who.join(", "))
        })
        .collect::<Vec<_>>()
        .join(" → ")
}

pub async fn list(State(state): State<AppState>, ctx: PageContext) -> Result<Response> {
    let mut workflows = store::workflows::list(&state.db)
        .await?
        .into_iter()
        .map(|w| {
            let label = label_in(&w.label, &w.labels, ctx.lang);
            WorkflowLine {
                steps: Definition::from_json(&w.definition)
                    .map(|d| steps_line(&ctx, &d))
                    .unwrap_or_default(),
                open_label: ctx.msg(&Message::new("workflow-open").arg("label", label.clone())),
                id: w.id,
                name: w.name,
                label,
                version: w.version,
            }
        })
        .collect::<Vec<_>>();
    // By the label shown: `store::workflows::list` sorts by the default one.
    workflows.sort_by_cached_key(|w| (w.label.to_lowercase(), w.id));
    Ok(html(&ListPage { ctx, workflows }))
}

/// Every workflow's id and label in `lang`, by that label: a menu to choose one from.
pub(super) async fn options(state: &AppState, lang: Lang) -> Result<Vec<(i64, String)>> {
    let mut options: Vec<(i64, String)> = store::workflows::list(&state.db)
        .await?
        .into_iter()
        .map(|w| (w.id, label_in(&w.label, &w.labels, lang)))
        .collect();
    options.sort_by_cached_key(|(id, label)| (label.to_lowercase(), *id));
    Ok(options)
}

pub struct VersionView {
    pub number: i64,
    pub created: String,
    pub running: i64,
    pub ended: i64,
    pub delete_label: String,
}

#[derive(askama::Template)]
#[template(path = "admin/workflow.html")]
struct ShowPage {
    ctx: PageContext,
    id: i64,
    name: String,
    label: String,
    version: i64,
    participants: String,
    definition: String,
    /// The version whose definition is shown: the newest unless `?version=` asks for another.
    shown: i64,
    definition_heading: String,
    /// The shown version's flow, drawn (an inline SVG, its user text escaped).
    flow: String,
    /// How many requests a link of the newest version may make, against the per-link limit,
    /// and whether the limit is below it (a warning).
    requests: (String, bool),
    versions: Vec<VersionView>,
    edit_label: String,
    delete_label: String,
}

/// What a link of `definition` may ask of the doorway, each round counted, beside the site's
/// per-link limit: a warning when the limit would refuse a participant who answers every round.
fn requests_note(
    ctx: &PageContext,
    definition: &Definition,
    settings: &crate::domain::settings::Settings,
) -> (String, bool) {
    let needed = definition.requests_per_link();
    let limits = settings.interaction_limits();
    let capped = limits.enabled && limits.per_caller > 0;
    let short = capped && limits.per_caller < needed;
    let id = match (capped, short) {
        (_, true) => "workflow-requests-over",
        (true, false) => "workflow-requests-limit",
        (false, _) => "workflow-requests",
    };
    let message = Message::new(id)
        .arg("requests", needed.to_string())
        .arg("limit", limits.per_caller.to_string());
    (ctx.msg(&message), short)
}

#[derive(Deserialize)]
pub struct ShowQuery {
    version: Option<i64>,
}

pub async fn show(
    State(state): State<AppState>,
    ctx: PageContext,
    Path(id): Path<i64>,
    Query(q): Query<ShowQuery>,
) -> Result<Response> {
    let mut w = workflow_of(&state, id).await?;
    w.label = label_in(&w.label, &w.labels, ctx.lang);
    let newest = Definition::from_json(&w.definition).unwrap_or_default();
    // An older version's definition, shown in place of the newest's.
    let (shown, definition) = match q.version.filter(|&n| n != w.version) {
        Some(number) => {
            let v = store::workflows::version_numbered(&state.db, id, number)
                .await?
                .ok_or(AppError::NotFound)?;
            let d = Definition::from_json(&v.definition).unwrap_or_default();
            (number, d)
        }
        None => (w.version, newest.clone()),
    };
    let definition_heading = if shown == w.version {
        ctx.t("workflow-steps")
    } else {
        ctx.msg(&Message::new("workflow-definition-of").arg("number", shown.to_string()))
    };
    let versions = store::workflows::versions(&state.db, id)
        .await?
        .into_iter()
        .map(|v| VersionView {
            delete_label: ctx
                .msg(&Message::new("workflow-version-delete").arg("number", v.number.to_string())),
            number: v.number,
            created: crate::time::format_utc(v.created_at),
            running: v.running,
            ended: v.ended,
        })
        .collect();
    let flow = Flow {
        definition: &definition,
        lang: ctx.lang,
        name: &w.label,
        id: "flow",
        standing: None,
        edges: &crate::domain::workflow::drawing::route_edges(&definition, ctx.lang),
    }
    .svg();
    let requests = requests_note(&ctx, &newest, &state.site.get().await.settings);
    Ok(html(&ShowPage {
        flow,
        requests,
        participants: newest
            .participants()
            .iter()
            .map(|p| p.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        definition: definition.to_text(),
        shown,
        definition_heading,
        edit_label: ctx.msg(&Message::new("workflow-edit-named").arg("label", w.label.clone())),
        delete_label: ctx.msg(&Message::new("workflow-delete-named").arg("label", w.label.clone())),
        versions,
        id,
        name: w.name,
        label: w.label,
        version: w.version,
        ctx,
    }))
}

#[derive(askama::Template)]
#[template(path = "admin/workflow_form.html")]
struct FormPage {
    ctx: PageContext,
    /// `None` when creating.
    id: Option<i64>,
    name: String,
    label: String,
    /// The label in each other language, optional.
    others: Vec<OtherLabel>,
    definition: String,
    errors: FieldErrors,
    /// When editing: what saving will do to running instances.
    versions_note: Option<String>,
    /// The typed definition as its participants will see it, after *Preview*.
    preview: Option<Preview>,
}

/// A field of the label in another language.
pub struct OtherLabel {
    pub field: &'static str,
    pub heading: String,
    pub value: String,
}

/// "Label in French".
fn heading_id(lang: Lang) -> &'static str {
    match lang {
        Lang::En => "workflow-label-in-en",
        Lang::Fr => "workflow-label-in-fr",
    }
}

/// The fields of the labels in other languages, holding `values`.
fn others(ctx: &PageContext, values: &[(Lang, String)]) -> Vec<OtherLabel> {
    labels::others()
        .map(|lang| OtherLabel {
            field: labels::field(lang),
            heading: ctx.t(heading_id(lang)),
            value: (values.iter())
                .find(|(l, _)| *l == lang)
                .map(|(_, v)| v.clone())
                .unwrap_or_default(),
        })
        .collect()
}

impl FormPage {
    fn error(&self, key: &str) -> Option<&str> {
        error_for(&self.errors, key)
    }

    /// Every error of `key`, in order (the definition's, a line each).
    fn errors_of(&self, key: &str) -> Vec<&str> {
        self.errors
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, e)| e.as_str())
            .collect()
    }
}

const STARTER: &str = "form@requester: Your details | Name*, Email* (email), Notes (long)\n\
                       review@reviewer: Check the details\n";

pub async fn new_form(ctx: PageContext) -> Response {
    html(&FormPage {
        others: others(&ctx, &[]),
        ctx,
        id: None,
        name: String::new(),
        label: String::new(),
        definition: STARTER.into(),
        errors: Vec::new(),
        versions_note: None,
        preview: None,
    })
}

/// "Saving makes version 4; the 3 running instances stay on the version they have."
async fn versions_note(state: &AppState, ctx: &PageContext, id: i64) -> Result<Option<String>> {
    let Some(w) = store::workflows::by_id(&state.db, id).await? else {
        return Ok(None);
    };
    let running: i64 = store::workflows::versions(&state.db, id)
        .await?
        .iter()
        .map(|v| v.running)
        .sum();
    Ok(Some(
        ctx.msg(
            &Message::new("workflow-save-makes-version")
                .arg("version", w.version.to_string())
                .arg("running", running.to_string()),
        ),
    ))
}

pub async fn edit_form(
    State(state): State<AppState>,
    ctx: PageContext,
    Path(id): Path<i64>,
) -> Result<Response> {
    let w = workflow_of(&state, id).await?;
    let definition = Definition::from_json(&w.definition)
        .map(|d| d.to_text())
        .unwrap_or_default();
    let versions_note = versions_note(&state, &ctx, id).await?;
    Ok(html(&FormPage {
        others: others(&ctx, &labels::read(&w.labels)),
        ctx,
        id: Some(id),
        name: w.name,
        label: w.label,
        definition,
        errors: Vec::new(),
        versions_note,
        preview: None,
    }))
}

#[derive(Deserialize)]
pub struct WorkflowForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    label: String,
    /// The label in French (`labels::field`), optional.
    #[serde(default)]
    label_fr: String,
    #[serde(default)]
    definition: String,
    /// Set by the *Preview* button: show the definition, save nothing.
    #[serde(default)]
    preview: Option<String>,
}

/// A draft's problems as the form shows them, each under its field.
fn field_errors(ctx: &PageContext, problems: edit::Problems) -> FieldErrors {
    problems
        .into_iter()
        .map(|(field, m)| (field.to_owned(), ctx.msg(&m)))
        .collect()
}

impl WorkflowForm {
    /// The labels typed in other languages, every one of them (an empty one clears it).
    fn others(&self) -> Vec<(Lang, String)> {
        labels::others()
            .filter_map(|lang| match lang {
                Lang::Fr => Some((lang, self.label_fr.clone())),
                Lang::En => None,
            })
            .collect()
    }
}

fn draft<'a>(form: &'a WorkflowForm, others: &'a [(Lang, String)]) -> Draft<'a> {
    Draft {
        name: &form.name,
        label: &form.label,
        labels: Some(others),
        definition: &form.definition,
    }
}

/// The editor again, what was typed kept, with the typed definition previewed or its errors
/// shown: nothing is saved either way.
fn previewed(
    ctx: PageContext,
    id: Option<i64>,
    form: WorkflowForm,
    versions_note: Option<String>,
) -> Response {
    match Definition::parse_all(&form.definition) {
        Ok(definition) => html(&FormPage {
            preview: Some(preview::of(&ctx, &form.label, &definition)),
            others: others(&ctx, &form.others()),
            ctx,
            id,
            name: form.name,
            label: form.label,
            definition: form.definition,
            errors: Vec::new(),
            versions_note,
        }),
        Err(problems) => {
            let errors = problems
                .iter()
                .map(|m| ("definition".to_owned(), ctx.msg(m)))
                .collect();
            rejected(ctx, id, form, errors, versions_note)
        }
    }
}

fn rejected(
    ctx: PageContext,
    id: Option<i64>,
    form: WorkflowForm,
    errors: FieldErrors,
    versions_note: Option<String>,
) -> Response {
    let mut response = html(&FormPage {
        others: others(&ctx, &form.others()),
        ctx,
        id,
        name: form.name,
        label: form.label,
        definition: form.definition,
        errors,
        versions_note,
        preview: None,
    });
    *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    response
}

pub async fn create(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    Form(form): Form<WorkflowForm>,
) -> Result<Response> {
    if form.preview.is_some() {
        return Ok(previewed(ctx, None, form, None));
    }
    let typed = form.others();
    let errors = match edit::create(&state.db, &draft(&form, &typed)).await {
        Ok(id) => {
            flash(&session, "workflow-saved").await?;
            return Ok(Redirect::to(&format!("/admin/workflows/{id}")).into_response());
        }
        Err(e) => match e.refusal()? {
            Refusal::Invalid(problems) => field_errors(&ctx, problems),
            Refusal::NameTaken => vec![("name".into(), ctx.t("workflow-name-taken"))],
            Refusal::NotFound => return Err(AppError::NotFound),
        },
    };
    Ok(rejected(ctx, None, form, errors, None))
}

pub async fn save(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    Path(id): Path<i64>,
    Form(mut form): Form<WorkflowForm>,
) -> Result<Response> {
    let w = workflow_of(&state, id).await?;
    form.name = w.name;
    if form.preview.is_some() {
        let note = versions_note(&state, &ctx, id).await?;
        return Ok(previewed(ctx, Some(id), form, note));
    }
    let typed = form.others();
    let errors = match edit::save(&state.db, id, &draft(&form, &typed)).await {
        Ok(_) => {
            return flash_to(
                &session,
                "workflow-saved",
                &format!("/admin/workflows/{id}"),
            )
            .await;
        }
        Err(e) => match e.refusal()? {
            Refusal::Invalid(problems) => field_errors(&ctx, problems),
            Refusal::NameTaken | Refusal::NotFound => return Err(AppError::NotFound),
        },
    };
    let note = versions_note(&state, &ctx, id).await?;
    Ok(rejected(ctx, Some(id), form, errors, note))
}

// The confirmation page lived here first; the instance pages still name it by this path.
use super::confirm::ConfirmPage;

/// The workflow `id`, or not found.
async fn workflow_of(state: &AppState, id: i64) -> Result<store::workflows::WorkflowRow> {
    store::workflows::by_id(&state.db, id)
        .await?
        .ok_or(AppError::NotFound)
}

fn delete_page(ctx: PageContext, w: &store::workflows::WorkflowRow, id: i64) -> ConfirmPage {
    let label = label_in(&w.label, &w.labels, ctx.lang);
    ConfirmPage::new(
        ctx,
        Message::new("workflow-delete-named").arg("label", label),
        Message::new("workflow-delete-explain"),
        Message::new("workflow-delete-confirm"),
        format!("/admin/workflows/{id}"),
    )
}

pub async fn delete_form(
    State(state): State<AppState>,
    ctx: PageContext,
    Path(id): Path<i64>,
) -> Result<Response> {
    let w = workflow_of(&state, id).await?;
    Ok(html(&delete_page(ctx, &w, id)))
}

pub async fn delete(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    Path(id): Path<i64>,
) -> Result<Response> {
    let w = workflow_of(&state, id).await?;
    match store::workflows::delete(&state.db, id).await? {
        Deleted::Done => {
            tracing::info!(workflow = id, "workflow deleted");
            flash_to(&session, "workflow-deleted", "/admin/workflows").await
        }
        Deleted::Running(n) => {
            let why =
                ctx.msg(&Message::new("workflow-delete-running").arg("running", n.to_string()));
            Ok(delete_page(ctx, &w, id).refused(why))
        }
        Deleted::LastVersion | Deleted::NotFound => Err(AppError::NotFound),
    }
}

fn delete_version_page(
    ctx: PageContext,
    w: &store::workflows::WorkflowRow,
    id: i64,
    number: i64,
) -> ConfirmPage {
    let label = label_in(&w.label, &w.labels, ctx.lang);
    ConfirmPage::new(
        ctx,
        Message::new("workflow-version-delete-title")
            .arg("number", number.to_string())
            .arg("label", label),
        Message::new("workflow-version-delete-explain"),
        Message::new("workflow-version-delete").arg("number", number.to_string()),
        format!("/admin/workflows/{id}"),
    )
}

pub async fn delete_version_form(
    State(state): State<AppState>,
    ctx: PageContext,
    Path((id, number)): Path<(i64, i64)>,
) -> Result<Response> {
    let w = workflow_of(&state, id).await?;
    let known = store::workflows::versions(&state.db, id)
        .await?
        .iter()
        .any(|v| v.number == number);
    if !known {
        return Err(AppError::NotFound);
    }
    Ok(html(&delete_version_page(ctx, &w, id, number)))
}

pub async fn delete_version(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    Path((id, number)): Path<(i64, i64)>,
) -> Result<Response> {
    let w = workflow_of(&state, id).await?;
    let page = delete_version_page(ctx, &w, id, number);
    match store::workflows::delete_version(&state.db, id, number).await? {
        Deleted::Done => {
            tracing::info!(workflow = id, version = number, "workflow version deleted");
            flash(&session, "workflow-version-deleted").await?;
            Ok(Redirect::to(&format!("/admin/workflows/{id}")).into_response())
        }
        Deleted::Running(n) => {
            let why = page.ctx.msg(
                &Message::new("workflow-version-delete-running").arg("running", n.to_string()),
            );
            Ok(page.refused(why))
        }
        Deleted::LastVersion => {
            let why = page.ctx.t("workflow-version-delete-last");
            Ok(page.refused(why))
        }
        Deleted::NotFound => Err(AppError::NotFound),
    }
}
