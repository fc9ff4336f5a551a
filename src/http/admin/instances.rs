//! Instances: start one for a subject, see its history, issue links for its participants and
//! revoke them (all of them after a confirmation page). The list is `instance_list.rs`.

use axum::extract::State;

use crate::http::extract::{Path, Query};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use tower_sessions::Session;

use super::confirm::ConfirmPage;
use super::{FieldErrors, error_for};
use crate::domain::instance::{self, Actor};
use crate::domain::lists;
use crate::domain::mail::ContactInput;
use crate::domain::workflow::history;
use crate::http::AppState;
use crate::http::context::{FlashKind, PageContext, flash, flash_as, html};
use crate::http::error::{AppError, Result};
use crate::http::form::Form;
use crate::http::once::{Once, Slot};
use crate::i18n::Message;
use crate::store::{self, instances::InstanceRow};

#[derive(askama::Template)]
#[template(path = "admin/instance_new.html")]
struct NewPage {
    ctx: PageContext,
    workflows: Vec<(i64, String)>,
    workflow: i64,
    title: String,
    body: String,
    /// A row per participant of the chosen workflow, with what was typed.
    contacts: Vec<ContactField>,
    errors: FieldErrors,
}

/// One participant's row of the start form: `email.<participant>`, `name.<…>`, `lang.<…>`.
pub struct ContactField {
    pub participant: String,
    pub email: String,
    pub name: String,
    pub lang: String,
}

impl NewPage {
    fn error(&self, key: &str) -> Option<&str> {
        error_for(&self.errors, key)
    }

    /// A contact field's error, by its part and participant (`email.legal`).
    fn contact_error(&self, part: &str, participant: &str) -> Option<&str> {
        error_for(&self.errors, &format!("{part}.{participant}"))
    }
}

/// The contact rows of a workflow's newest version, each with what `typed` holds for it (a
/// language the reader's own when none was typed).
async fn contact_fields(
    state: &AppState,
    workflow: i64,
    typed: &[ContactInput],
    lang: &str,
) -> Result<Vec<ContactField>> {
    let Some(row) = store::workflows::by_id(&state.db, workflow).await? else {
        return Ok(Vec::new());
    };
    let Some(definition) = crate::domain::workflow::Definition::from_json(&row.definition) else {
        return Ok(Vec::new());
    };
    Ok(definition
        .participants()
        .into_iter()
        .map(|p| {
            let given = typed.iter().find(|c| c.participant == p.as_str());
            ContactField {
                participant: p.as_str().to_owned(),
                email: given.map(|c| c.email.clone()).unwrap_or_default(),
                name: given.map(|c| c.name.clone()).unwrap_or_default(),
                lang: given
                    .map(|c| c.lang.clone())
                    .filter(|l| !l.is_empty())
                    .unwrap_or_else(|| lang.to_owned()),
            }
        })
        .collect())
}

/// `?workflow=ID`: the workflow chosen beforehand (its page's *Start an instance*).
#[derive(Deserialize)]
pub struct Preselect {
    workflow: Option<String>,
}

pub async fn new_form(
    State(state): State<AppState>,
    ctx: PageContext,
    Query(preselect): Query<Preselect>,
) -> Result<Response> {
    let workflows = super::workflows::options(&state, ctx.lang).await?;
    // One that is not (or no longer) offered is no choice: the first one then.
    let chosen = preselect
        .workflow
        .and_then(|id| id.parse::<i64>().ok())
        .filter(|id| workflows.iter().any(|w| w.0 == *id));
    let workflow = chosen.unwrap_or_else(|| workflows.first().map_or(0, |w| w.0));
    let contacts = contact_fields(&state, workflow, &[], ctx.lang.code()).await?;
    Ok(html(&NewPage {
        workflow,
        workflows,
        title: String::new(),
        body: String::new(),
        contacts,
        errors: Vec::new(),
        ctx,
    }))
}

/// The start form as posted: its fixed fields, and a contact per participant named in an
/// `email.<participant>`, `name.<…>` or `lang.<…>` field.
struct NewInstance {
    workflow: String,
    title: String,
    body: String,
    contacts: Vec<ContactInput>,
    /// *Show its participants*: the form again for the chosen workflow, nothing started.
    choose: bool,
}

/// The most contact rows a posted form is read for (a workflow has a few participants).
const MAX_CONTACT_ROWS: usize = 50;

impl NewInstance {
    fn read(pairs: Vec<(String, String)>) -> Self {
        let mut form = NewInstance {
            workflow: String::new(),
            title: String::new(),
            body: String::new(),
            contacts: Vec::new(),
            choose: false,
        };
        for (key, value) in pairs {
            match key.as_str() {
                "workflow" => form.workflow = value,
                "title" => form.title = value,
                "body" => form.body = value,
                "choose" => form.choose = true,
                _ => {
                    let Some((part, who)) = key.split_once('.') else {
                        continue;
                    };
                    if !matches!(part, "email" | "name" | "lang") {
                        continue;
                    }
                    let at = match form.contacts.iter().position(|c| c.participant == who) {
                        Some(i) => i,
                        None if form.contacts.len() < MAX_CONTACT_ROWS => {
                            form.contacts.push(ContactInput {
                                participant: who.to_owned(),
                                ..ContactInput::default()
                            });
                            form.contacts.len() - 1
                        }
                        None => continue,
                    };
                    let c = &mut form.contacts[at];
                    match part {
                        "email" => c.email = value,
                        "name" => c.name = value,
                        _ => c.lang = value,
                    }
                }
            }
        }
        form
    }
}

pub async fn start(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response> {
    let form = NewInstance::read(pairs);
    let workflow = form.workflow.parse::<i64>().unwrap_or(0);
    let outcome = if form.choose {
        Err(Vec::new())
    } else {
        let by = actor(&ctx);
        let order = instance::Start {
            body: &form.body,
            contacts: &form.contacts,
            ..instance::Start::new(workflow, &form.title, &by)
        };
        match instance::start(&state.db, &order).await {
            Ok(id) => Ok(id),
            Err(e) => Err(e.refusals()?),
        }
    };
    match outcome {
        Ok(id) => {
            let emailed = form.contacts.iter().any(|c| !c.email.trim().is_empty());
            let unverifiable =
                !crate::domain::interaction::code::without_address(&state.db, &state.versions, id)
                    .await?
                    .is_empty();
            let message = if unverifiable {
                "instance-started-unverifiable"
            } else if emailed && state.mailer.is_none() {
                "instance-started-unsent"
            } else if emailed {
                "instance-started-emailed"
            } else {
                "instance-started"
            };
            if unverifiable {
                flash_as(&session, FlashKind::Warning, message).await?;
            } else {
                flash(&session, message).await?;
            }
            Ok(Redirect::to(&format!("/admin/instances/{id}")).into_response())
        }
        Err(errors) => {
            let refused = !errors.is_empty();
            let errors = errors
                .into_iter()
                .map(|r| {
                    let field = match r.contact_of() {
                        Some(who) if r.field() != "contacts" => format!("{}.{who}", r.field()),
                        _ => r.field().to_owned(),
                    };
                    (field, ctx.msg(&r.message()))
                })
                .collect();
            let contacts =
                contact_fields(&state, workflow, &form.contacts, ctx.lang.code()).await?;
            let mut response = html(&NewPage {
                workflows: super::workflows::options(&state, ctx.lang).await?,
                workflow,
                title: form.title,
                body: form.body,
                contacts,
                errors,
                ctx,
            });
            if refused {
                *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
            }
            Ok(response)
        }
    }
}

pub struct HistoryLine {
    pub at: String,
    pub step: String,
    pub participant: String,
    pub event: String,
    pub actor: String,
    pub answer: Vec<(String, crate::domain::workflow::Shown)>,
}

pub struct LinkLine {
    pub id: i64,
    pub participant: String,
    pub issued: String,
    pub expires: String,
    pub state: String,
    pub state_class: &'static str,
    pub revocable: bool,
    pub revoke_label: String,
}

#[derive(askama::Template)]
#[template(path = "admin/instance.html")]
pub(super) struct ShowPage {
    pub(super) ctx: PageContext,
    instance: InstanceRow,
    workflow: String,
    version: i64,
    state_label: String,
    /// "Erased on …" once retention or an erasure took its answers, files and contacts.
    erased: Option<String>,
    current_step: String,
    /// Its version's flow, drawn with where it stands (an inline SVG, its user text escaped).
    flow: String,
    /// Participants a link may be issued for: those with something left to answer.
    participants: Vec<String>,
    links: Vec<LinkLine>,
    history: Vec<HistoryLine>,
    files: Vec<super::instance_files::FileLine>,
    ttl: String,
    participant: String,
    issued_url: Option<String>,
    link_error: Option<String>,
    /// "n links", "n history lines": how many in all, beside the page shown.
    links_total: String,
    history_total: String,
    links_older: Option<String>,
    history_older: Option<String>,
    /// Back to the newest links / history (shown on an older page).
    links_newest: Option<String>,
    history_newest: Option<String>,
    /// The participants' contacts given at the start (personal data: this page is an
    /// administrator's), and the newest emails.
    contacts: Vec<store::mails::ContactRow>,
    emails: Vec<EmailLine>,
    emails_more: Option<String>,
    /// The hand-over form refused, as it was posted (`handover`).
    pub(super) handover: Typed,
}

pub struct EmailLine {
    pub participant: String,
    pub kind: String,
    pub state: String,
    pub state_class: &'static str,
    pub when: String,
    pub tries: String,
    pub error: String,
}

/// How many of an instance's emails its page shows, newest first.
const EMAILS_SHOWN: i64 = 20;

/// `?links_before=ID&history_before=ID`: an older page of each, apart. Anything but a positive
/// number is the newest page.
#[derive(Deserialize, Default)]
pub struct ShowQuery {
    links_before: Option<String>,
    history_before: Option<String>,
}

impl ShowQuery {
    fn read(v: &Option<String>) -> Option<i64> {
        v.as_deref()
            .and_then(|v| v.trim().parse::<i64>().ok())
            .filter(|id| *id > 0)
    }
}

/// The instance page's URL with these two cursors.
fn show_url(id: i64, links: Option<i64>, history: Option<i64>) -> String {
    let mut pairs: Vec<(&str, String)> = Vec::new();
    if let Some(l) = links {
        pairs.push(("links_before", l.to_string()));
    }
    if let Some(h) = history {
        pairs.push(("history_before", h.to_string()));
    }
    let query = serde_urlencoded::to_string(&pairs).unwrap_or_default();
    if query.is_empty() {
        format!("/admin/instances/{id}")
    } else {
        format!("/admin/instances/{id}?{query}")
    }
}

pub(super) async fn show_page(
    state: &AppState,
    ctx: PageContext,
    id: i64,
    paging: &ShowQuery,
) -> Result<ShowPage> {
    let links_before = ShowQuery::read(&paging.links_before);
    let history_before = ShowQuery::read(&paging.history_before);
    let options = instance::ViewOptions {
        history_before,
        history_limit: lists::PAGE,
        contacts: true,
    };
    let view = instance::View::read(&state.db, &state.versions, id, options)
        .await?
        .ok_or(AppError::NotFound)?;
    let current_step = view.current_step().map_or_else(String::new, |(i, s)| {
        format!(
            "{} / {} — {}",
            i + 1,
            view.definition.steps.len(),
            s.title_in(ctx.lang)
        )
    });
    let flow = view.flow(ctx.lang);
    let participants = view
        .participants_left
        .iter()
        .map(|p| p.as_str().to_owned())
        .collect();
    let workflow = view.workflow_label_in(ctx.lang).unwrap_or_default();
    let instance::View {
        instance,
        definition,
        version,
        history: history_page,
        contacts,
        ..
    } = view;
    let contacts = contacts.unwrap_or_default();
    let now = state.clock.now_secs();
    let link_page = instance::list(
        &state.db,
        &instance,
        &definition,
        now,
        links_before,
        lists::PAGE,
    )
    .await?;
    let links = link_page
        .links
        .into_iter()
        .map(|(l, s)| LinkLine {
            revoke_label: ctx.msg(
                &Message::new("instance-link-revoke").arg("participant", l.participant.clone()),
            ),
            id: l.id,
            issued: format!(
                "{} · {}",
                crate::time::format_utc(l.issued_at),
                actor_name(&ctx, &l.issued_by)
            ),
            expires: crate::time::format_utc(l.expires),
            state: ctx.t(s.message_id()),
            state_class: s.message_id(),
            // An ended instance's links open nothing: no button to revoke them either.
            revocable: l.revoked_at.is_none()
                && l.expires > now
                && s != instance::LinkState::Void
                && !instance.state.is_over(),
            participant: l.participant,
        })
        .collect();
    let files = super::instance_files::lines(state, &ctx, id, &definition).await?;
    let history = history_page
        .lines
        .into_iter()
        .map(|h| HistoryLine {
            at: crate::time::format_utc(h.at),
            // The step as recorded, in the reader's language when the instance's version (which
            // never changes) has its words: the recorded title is that step's own.
            step: definition
                .steps
                .get(h.step_index as usize)
                .filter(|s| s.title == h.step_title)
                .map_or(h.step_title, |s| s.title_in(ctx.lang).to_owned()),
            event: ctx.t(h.event.message_id()),
            actor: if h.actor.is_empty() {
                String::new()
            } else {
                actor_name(&ctx, &h.actor)
            },
            answer: history::answer_items(
                ctx.lang,
                &h.answer,
                definition.steps.get(h.step_index as usize),
            )
            .into_iter()
            .map(|(label, mut shown)| {
                // A file's line downloads it, as the Files section does.
                if let Some(file) = shown.file {
                    shown.link = Some(format!("/admin/instances/{id}/files/{file}"));
                }
                (label, shown)
            })
            .collect(),
            participant: h.participant,
        })
        .collect();
    let ttl = crate::time::format_duration(state.site.get().await.settings.default_link_ttl);
    let mut mails = if contacts.is_empty() {
        Vec::new()
    } else {
        store::mails::of_instance(&state.db, id, EMAILS_SHOWN + 1).await?
    };
    let emails_more = (mails.len() > EMAILS_SHOWN as usize).then(|| {
        mails.truncate(EMAILS_SHOWN as usize);
        ctx.msg(&Message::new("instance-emails-more").arg("count", EMAILS_SHOWN.to_string()))
    });
    let emails = mails
        .into_iter()
        .map(|m| EmailLine {
            kind: ctx.t(match m.kind.as_str() {
                "reminder" => "mail-kind-reminder",
                "closed" => "mail-kind-closed",
                "outcome" => "mail-kind-outcome",
                "code" => "mail-kind-code",
                _ => "mail-kind-link",
            }),
            state: ctx.t(match m.state.as_str() {
                "sent" => "mail-state-sent",
                "failed" => "mail-state-failed",
                "skipped" => "mail-state-skipped",
                _ => "mail-state-pending",
            }),
            state_class: match m.state.as_str() {
                "sent" => "ok",
                "failed" => "err",
                _ => "",
            },
            when: match (m.state.as_str(), m.sent_at) {
                (_, Some(at)) => crate::time::format_utc(at),
                ("pending", None) => {
                    ctx.msg(&Message::new("mail-due").arg("at", crate::time::format_utc(m.next_at)))
                }
                _ => crate::time::format_utc(m.next_at),
            },
            tries: ctx.msg(&Message::new("mail-tries").arg("count", m.attempts.to_string())),
            error: m.error.unwrap_or_default(),
            participant: m.participant,
        })
        .collect();
    Ok(ShowPage {
        contacts,
        emails,
        emails_more,
        handover: Typed::default(),
        state_label: ctx.t(instance.state.message_id()),
        erased: instance.erased_at.map(|at| {
            ctx.msg(&Message::new("instance-erased").arg("at", crate::time::format_utc(at)))
        }),
        workflow,
        version,
        current_step,
        flow,
        participants,
        links,
        history,
        files,
        ttl,
        participant: String::new(),
        issued_url: None,
        link_error: None,
        links_total: ctx
            .msg(&Message::new("instance-links-count").arg("count", link_page.total.to_string())),
        history_total: ctx.msg(
            &Message::new("instance-history-count").arg("count", history_page.total.to_string()),
        ),
        links_older: link_page
            .older
            .map(|l| show_url(id, Some(l), history_before)),
        history_older: history_page
            .older
            .map(|h| show_url(id, links_before, Some(h))),
        links_newest: links_before.map(|_| show_url(id, None, history_before)),
        history_newest: history_before.map(|_| show_url(id, links_before, None)),
        instance,
        ctx,
    })
}

fn actor_name(ctx: &PageContext, stored: &str) -> String {
    match Actor::from_stored(stored) {
        Some(Actor::Admin(name)) => name,
        Some(Actor::CommandLine) => ctx.t("actor-cli"),
        Some(Actor::Mail) => ctx.t("actor-mail"),
        Some(Actor::Deadline) => ctx.t("actor-deadline"),
        Some(Actor::Forward(who)) => {
            ctx.msg(&Message::new("actor-forward").arg("participant", who))
        }
        Some(Actor::Api(name)) => ctx.msg(&Message::new("actor-api").arg("token", name)),
        None => stored.to_owned(),
    }
}

/// The link just issued, kept in a one-time cookie (`once`) between the issuing POST and the
/// page it redirects to, and taken out on that page's first view.
#[derive(Deserialize, serde::Serialize)]
struct Issued {
    instance: i64,
    url: String,
    participant: String,
}

pub async fn show(
    State(state): State<AppState>,
    ctx: PageContext,
    once: Once,
    Path(id): Path<i64>,
    Query(paging): Query<ShowQuery>,
) -> Result<Response> {
    let mut page = show_page(&state, ctx, id, &paging).await?;
    let slot = Slot::IssuedLink(id);
    let issued = once.take::<Issued>(slot).filter(|i| i.instance == id);
    let live = issued.is_some();
    if let Some(issued) = issued {
        page.issued_url = Some(issued.url);
        page.participant = issued.participant;
    }
    let mut response = html(&page);
    if live {
        // The page holds a live link: keep it out of caches.
        response.headers_mut().insert(
            axum::http::header::CACHE_CONTROL,
            axum::http::HeaderValue::from_static("no-store"),
        );
    }
    once.forget(&mut response, slot)?;
    Ok(response)
}

#[derive(Deserialize)]
pub struct IssueForm {
    #[serde(default)]
    participant: String,
    #[serde(default)]
    ttl: String,
    /// *Send by email* rather than *Issue a link*.
    #[serde(default)]
    send: Option<String>,
}

pub(super) fn actor(ctx: &PageContext) -> Actor {
    Actor::Admin(ctx.admin.clone().unwrap_or_default())
}

/// Issues a link and redirects to the instance page, which shows it once: the URL is a
/// credential, so it travels in an encrypted one-time cookie (`once`) until that page takes
/// it out, never in a URL nor in the database. A reload of that page shows nothing and issues
/// nothing.
pub async fn issue_link(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    once: Once,
    Path(id): Path<i64>,
    Form(form): Form<IssueForm>,
) -> Result<Response> {
    let snapshot = state.site.get().await;
    let ttl = crate::time::parse_duration(&form.ttl);
    let by = actor(&ctx);
    if form.send.is_some() {
        return match instance::send(&state.db, &state.versions, id, &form.participant, None).await {
            Ok(()) => {
                flash(&session, "link-sent").await?;
                Ok(Redirect::to(&format!("/admin/instances/{id}")).into_response())
            }
            Err(e) => link_refused(&state, ctx, id, form, &e.refusal()?).await,
        };
    }
    let result = match ttl {
        Some(ttl) => {
            let order = instance::Order {
                participant: &form.participant,
                ttl,
                now: state.clock.now_secs(),
                by: &by,
                daily_cap: None,
            };
            instance::issue(
                &state.db,
                &state.versions,
                &snapshot.keys,
                &snapshot.settings.base_url,
                id,
                &order,
            )
            .await
        }
        None => Err(instance::Refusal::TtlInvalid.into()),
    };
    let url = match result {
        Ok(issued) => issued.url,
        Err(e) => return link_refused(&state, ctx, id, form, &e.refusal()?).await,
    };
    let issued = Issued {
        instance: id,
        url,
        participant: form.participant,
    };
    flash(&session, "instance-link-issued-flash").await?;
    let mut response = Redirect::to(&format!("/admin/instances/{id}")).into_response();
    once.keep(&mut response, Slot::IssuedLink(id), issued)?;
    Ok(response)
}

/// The instance page again with the link form as it was posted and why it was refused (422).
async fn link_refused(
    state: &AppState,
    ctx: PageContext,
    id: i64,
    form: IssueForm,
    refusal: &instance::Refusal,
) -> Result<Response> {
    let mut page = show_page(state, ctx, id, &ShowQuery::default()).await?;
    page.ttl = form.ttl;
    page.participant = form.participant;
    page.link_error = Some(page.ctx.msg(&refusal.message()));
    let mut response = html(&page);
    *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    Ok(response)
}

fn revoke_page(ctx: PageContext, instance: &InstanceRow) -> ConfirmPage {
    ConfirmPage::new(
        ctx,
        Message::new("instance-revoke-title")
            .arg("id", instance.id.to_string())
            .arg("title", instance.subject_title.clone()),
        Message::new("instance-revoke-explain"),
        Message::new("instance-revoke"),
        format!("/admin/instances/{}", instance.id),
    )
}

/// *Revoke all links* asks first, on a page of its own.
pub async fn revoke_form(
    State(state): State<AppState>,
    ctx: PageContext,
    Path(id): Path<i64>,
) -> Result<Response> {
    let instance = instance_row(&state, id).await?;
    Ok(html(&revoke_page(ctx, &instance)))
}

pub async fn revoke(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    Path(id): Path<i64>,
) -> Result<Response> {
    if !instance::revoke(&state.db, id, &actor(&ctx)).await? {
        return Err(AppError::NotFound);
    }
    flash_as(&session, FlashKind::Warning, "instance-revoked").await?;
    Ok(Redirect::to(&format!("/admin/instances/{id}")).into_response())
}

pub async fn revoke_link(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    Path((id, link)): Path<(i64, i64)>,
) -> Result<Response> {
    if !instance::revoke_one(&state.db, id, link, &actor(&ctx)).await? {
        return Err(AppError::NotFound);
    }
    flash(&session, "instance-link-revoked").await?;
    Ok(Redirect::to(&format!("/admin/instances/{id}")).into_response())
}

/// The instance a page is about, or the themed 404.
pub(super) async fn instance_row(state: &AppState, id: i64) -> Result<InstanceRow> {
    store::instances::by_id(&state.db, id)
        .await?
        .ok_or(AppError::NotFound)
}

/// The hand-over form as posted, for the page drawn again after a refusal; empty otherwise.
#[derive(Deserialize, Default)]
pub struct Typed {
    #[serde(default)]
    pub participant: String,
    #[serde(default)]
    pub email: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub lang: String,
    /// `email`, `name`, `lang` or `participant`, and why.
    #[serde(skip)]
    pub errors: FieldErrors,
}

impl Typed {
    /// What was typed in `participant`'s form for field `field` (nothing when another
    /// participant's form was posted).
    pub fn value(&self, participant: &str, field: &str) -> &str {
        if self.participant != participant {
            return "";
        }
        match field {
            "email" => &self.email,
            "name" => &self.name,
            _ => &self.lang,
        }
    }

    /// The language chosen in `participant`'s form: what was typed, else `default`.
    pub fn lang_or<'a>(&'a self, participant: &str, default: &'a str) -> &'a str {
        match self.value(participant, "lang") {
            "" => default,
            typed => typed,
        }
    }

    /// The error beside `field` of `participant`'s form.
    pub fn error(&self, participant: &str, field: &str) -> Option<&str> {
        if self.participant != participant {
            return None;
        }
        error_for(&self.errors, field)
    }
}
