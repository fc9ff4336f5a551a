//! The administrators: the list (with who is disabled and who the sign-in limits hold), an
//! invitation for a new one, one's own password, and for another a reset link, disable (after
//! a confirmation page), enable, remove (after one) and unlock. A link made here is shown once,
//! on the list the POST redirects to, and never stored in clear.

use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use tower_sessions::Session;

use super::confirm::ConfirmPage;
use super::{FieldErrors, error_for};
use crate::domain::admins::{self, Refusal};
use crate::domain::audit::{Event, Kind};
use crate::domain::login;
use crate::domain::roles::Role;
use crate::http::AppState;
use crate::http::audit::Audit;
use crate::http::client::ClientAddr;
use crate::http::context::{
    EPOCH_KEY, FlashKind, PageContext, SignedIn, flash, flash_as, flash_to, html,
};
use crate::http::error::{AppError, Result};
use crate::http::extract::Path;
use crate::http::form::Form;
use crate::http::once::{Once, Slot};
use crate::i18n::Message;
use crate::store;
use crate::store::admins::Admin;

const LIST: &str = "/admin/admins";

pub struct AdminLine {
    pub id: i64,
    pub name: String,
    /// Their address, or "" when they have none.
    pub email: String,
    pub created: String,
    pub last_sign_in: String,
    pub active: bool,
    pub state: String,
    pub locked: bool,
    pub lock: String,
    pub me: bool,
    /// The only active administrator, or the only active owner: no Disable or Remove to offer.
    pub last_active: bool,
    /// `owner`, `editor` or `viewer`, and as the page says it.
    pub role: &'static str,
    pub role_label: String,
}

/// A link just made, as the list shows it once: what it is for, and the URL.
#[derive(serde::Serialize, serde::Deserialize)]
struct Made {
    label: String,
    url: String,
}

#[derive(askama::Template)]
#[template(path = "admin/admins.html")]
struct AdminsPage {
    ctx: PageContext,
    admins: Vec<AdminLine>,
    made: Option<(String, String)>,
    name: String,
    /// The role the invitation form has chosen.
    role: &'static str,
    /// The invitation's address, as typed.
    email: String,
    errors: FieldErrors,
}

impl AdminsPage {
    /// Every role, with its words, for the role choices.
    fn roles(&self) -> Vec<(&'static str, String)> {
        Role::ALL
            .into_iter()
            .map(|r| (r.as_str(), self.ctx.t(role_label(r))))
            .collect()
    }

    fn error(&self, key: &str) -> Option<&str> {
        error_for(&self.errors, key)
    }
}

async fn page(state: &AppState, ctx: PageContext, me: i64) -> Result<AdminsPage> {
    let snapshot = state.site.get().await;
    let never = ctx.t("admins-never");
    let rows = store::admins::list(&state.db).await?;
    let active = rows.iter().filter(|a| a.disabled_at.is_none()).count();
    let owners = rows
        .iter()
        .filter(|a| a.disabled_at.is_none() && Role::of(&a.role) == Role::Owner)
        .count();
    let admins = rows
        .into_iter()
        .map(|a| {
            let (failures, locked) = login::account_lock(
                &state.guard,
                &snapshot.settings,
                &snapshot.keys,
                a.id,
                a.login_epoch,
            );
            AdminLine {
                created: crate::time::format_utc(a.created_at),
                last_sign_in: a
                    .last_sign_in_at
                    .map_or_else(|| never.clone(), crate::time::format_utc),
                active: a.disabled_at.is_none(),
                state: ctx.t(if a.disabled_at.is_none() {
                    "admins-active"
                } else {
                    "admins-disabled"
                }),
                locked,
                lock: if locked {
                    ctx.msg(&Message::new("admins-locked").arg("failures", failures.to_string()))
                } else {
                    ctx.t("admins-not-locked")
                },
                me: a.id == me,
                last_active: a.disabled_at.is_none()
                    && (active == 1 || (owners == 1 && Role::of(&a.role) == Role::Owner)),
                role: Role::of(&a.role).as_str(),
                role_label: ctx.t(role_label(Role::of(&a.role))),
                id: a.id,
                name: a.name,
                email: a.email.unwrap_or_default(),
            }
        })
        .collect();
    Ok(AdminsPage {
        ctx,
        admins,
        made: None,
        name: String::new(),
        role: Role::Owner.as_str(),
        email: String::new(),
        errors: Vec::new(),
    })
}

fn no_store(response: &mut Response) {
    response.headers_mut().insert(
        axum::http::header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
}

pub async fn list(
    State(state): State<AppState>,
    ctx: PageContext,
    Extension(me): Extension<SignedIn>,
    once: Once,
) -> Result<Response> {
    let mut page = page(&state, ctx, me.id).await?;
    page.made = once.take::<Made>(Slot::AdminLink).map(|m| (m.label, m.url));
    let mut response = html(&page);
    no_store(&mut response);
    once.forget(&mut response, Slot::AdminLink)?;
    Ok(response)
}

/// A role's name as the pages say it.
pub fn role_label(role: Role) -> &'static str {
    match role {
        Role::Owner => "role-owner",
        Role::Editor => "role-editor",
        Role::Viewer => "role-viewer",
    }
}

#[derive(Deserialize)]
pub struct InviteForm {
    #[serde(default)]
    name: String,
    /// The role the invitation gives; an owner when the form has none.
    role: Option<String>,
    #[serde(default)]
    email: String,
}

/// A role a form sent: none is `default`, anything else a role's name or a bad request.
fn role_of(sent: Option<&str>, default: Role) -> Result<Role> {
    match sent {
        None => Ok(default),
        Some(r) => Role::parse(r.trim()).ok_or(AppError::BadRequest),
    }
}

/// Invites a new administrator by name, and address when one is given: with an SMTP server
/// set the link is emailed to it (and said so); without one it is shown once, on the list.
pub async fn invite(
    State(state): State<AppState>,
    audit: Audit,
    ctx: PageContext,
    session: Session,
    Extension(me): Extension<SignedIn>,
    once: Once,
    Form(form): Form<InviteForm>,
) -> Result<Response> {
    let name = form.name.trim().to_owned();
    let role = role_of(form.role.as_deref(), Role::Owner)?;
    let snapshot = state.site.get().await;
    let invitation = admins::Invitation {
        name: &name,
        email: &form.email,
        lang: ctx.lang,
        emailing: state.mailer.is_some(),
        role,
    };
    let made = admins::invite_with(
        &state.db,
        &snapshot.keys,
        &snapshot.settings.base_url,
        Some(me.id),
        &invitation,
    )
    .await;
    match made {
        Ok(made) if made.emailed => {
            audit
                .record(Event::Admin(Kind::AdminInvited, name.clone()))
                .await;
            flash_to(&session, "admins-invite-emailed", LIST).await
        }
        Ok(made) => {
            audit
                .record(Event::Admin(Kind::AdminInvited, name.clone()))
                .await;
            let label = ctx.msg(&Message::new("admins-invite-made").arg("name", name));
            let mut response = Redirect::to(LIST).into_response();
            let url = made.url;
            once.keep(&mut response, Slot::AdminLink, Made { label, url })?;
            Ok(response)
        }
        Err(e) => {
            let errors = e.refusal()?;
            let mut page = page(&state, ctx, me.id).await?;
            page.errors = errors
                .into_iter()
                .map(|(f, m)| (f, page.ctx.msg(&m)))
                .collect();
            page.name = form.name;
            page.role = role.as_str();
            page.email = form.email;
            let mut response = html(&page);
            *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
            Ok(response)
        }
    }
}

async fn admin_of(state: &AppState, id: i64) -> Result<Admin> {
    store::admins::by_id(&state.db, id)
        .await?
        .ok_or(AppError::NotFound)
}

/// A refusal, said on the list as an error.
async fn refused(session: &Session, refusal: &Refusal) -> Result<Response> {
    let id = match refusal {
        Refusal::Unknown(_) => return Err(AppError::NotFound),
        Refusal::LastActive(_) => "admins-last-active-flash",
        Refusal::LastOwner(_) => "admins-last-owner-flash",
        Refusal::Disabled(_) => "admins-is-disabled-flash",
    };
    flash_as(session, FlashKind::Error, id).await?;
    Ok(Redirect::to(LIST).into_response())
}

/// Makes a reset link for another administrator, shown once on the list.
pub async fn reset(
    State(state): State<AppState>,
    audit: Audit,
    ctx: PageContext,
    session: Session,
    Extension(me): Extension<SignedIn>,
    once: Once,
    Path(id): Path<i64>,
) -> Result<Response> {
    let admin = admin_of(&state, id).await?;
    let snapshot = state.site.get().await;
    let made = admins::reset_link_with(
        &state.db,
        &snapshot.keys,
        &snapshot.settings.base_url,
        Some(me.id),
        &admin,
        state.mailer.is_some(),
    )
    .await;
    match made {
        Ok(made) if made.emailed => {
            audit
                .record(Event::Admin(Kind::AdminReset, admin.name.clone()))
                .await;
            flash_to(&session, "admins-reset-emailed", LIST).await
        }
        Ok(made) => {
            audit
                .record(Event::Admin(Kind::AdminReset, admin.name.clone()))
                .await;
            let url = made.url;
            let label = ctx.msg(&Message::new("admins-reset-made").arg("name", admin.name));
            let mut response = Redirect::to(LIST).into_response();
            once.keep(&mut response, Slot::AdminLink, Made { label, url })?;
            Ok(response)
        }
        Err(e) => refused(&session, &e.refusal()?).await,
    }
}

/// Which of the two confirmed actions a confirmation page is for.
#[derive(Clone, Copy)]
enum Confirmed {
    Disable,
    Remove,
}

fn confirm_page(ctx: PageContext, action: Confirmed, admin: &Admin) -> ConfirmPage {
    let (title, explain, confirm) = match action {
        Confirmed::Disable => (
            "admins-disable-title",
            "admins-disable-explain",
            "admins-disable",
        ),
        Confirmed::Remove => (
            "admins-remove-title",
            "admins-remove-explain",
            "admins-remove",
        ),
    };
    let named = |id: &'static str| Message::new(id).arg("name", admin.name.clone());
    ConfirmPage::new(ctx, named(title), named(explain), named(confirm), LIST)
}

/// The confirmation page, or the refusal on it when the action cannot be done: the last
/// active administrator is never disabled nor removed.
async fn confirm_form(
    state: &AppState,
    ctx: PageContext,
    action: Confirmed,
    id: i64,
) -> Result<Response> {
    let admin = admin_of(state, id).await?;
    let others = store::admins::list(&state.db).await?;
    let others = others
        .iter()
        .filter(|a| a.id != id && a.disabled_at.is_none());
    let others_active = others.clone().next().is_some();
    let other_owner = others.clone().any(|a| Role::of(&a.role) == Role::Owner);
    let page = confirm_page(ctx, action, &admin);
    let refusal = if admin.disabled_at.is_some() {
        None
    } else if !others_active {
        Some(Refusal::LastActive(admin.name.clone()))
    } else if Role::of(&admin.role) == Role::Owner && !other_owner {
        Some(Refusal::LastOwner(admin.name.clone()))
    } else {
        None
    };
    if let Some(refusal) = refusal {
        let why = page.ctx.msg(&refusal.message());
        return Ok(page.refused(why));
    }
    Ok(html(&page))
}

pub async fn disable_form(
    State(state): State<AppState>,
    ctx: PageContext,
    Path(id): Path<i64>,
) -> Result<Response> {
    confirm_form(&state, ctx, Confirmed::Disable, id).await
}

pub async fn remove_form(
    State(state): State<AppState>,
    ctx: PageContext,
    Path(id): Path<i64>,
) -> Result<Response> {
    confirm_form(&state, ctx, Confirmed::Remove, id).await
}

async fn confirmed(
    state: &AppState,
    ctx: PageContext,
    session: &Session,
    action: Confirmed,
    id: i64,
    audit: Audit,
) -> Result<Response> {
    let admin = admin_of(state, id).await?;
    let done = match action {
        Confirmed::Disable => admins::disable(&state.db, &admin).await,
        Confirmed::Remove => admins::remove(&state.db, &admin).await,
    };
    match done {
        Ok(()) => {
            let flash_id = match action {
                Confirmed::Disable => "admins-disabled-flash",
                Confirmed::Remove => "admins-removed-flash",
            };
            let kind = match action {
                Confirmed::Disable => Kind::AdminDisabled,
                Confirmed::Remove => Kind::AdminRemoved,
            };
            audit.record(Event::Admin(kind, admin.name.clone())).await;
            flash_to(session, flash_id, LIST).await
        }
        // Refused meanwhile (another administrator was disabled since the page was drawn):
        // the page again, saying why, and nothing changed.
        Err(e) => {
            let refusal = e.refusal()?;
            let page = confirm_page(ctx, action, &admin);
            let why = page.ctx.msg(&refusal.message());
            Ok(page.refused(why))
        }
    }
}

pub async fn disable(
    State(state): State<AppState>,
    audit: Audit,
    ctx: PageContext,
    session: Session,
    Path(id): Path<i64>,
) -> Result<Response> {
    confirmed(&state, ctx, &session, Confirmed::Disable, id, audit).await
}

pub async fn remove(
    State(state): State<AppState>,
    audit: Audit,
    ctx: PageContext,
    session: Session,
    Path(id): Path<i64>,
) -> Result<Response> {
    confirmed(&state, ctx, &session, Confirmed::Remove, id, audit).await
}

pub async fn enable(
    State(state): State<AppState>,
    audit: Audit,
    session: Session,
    Path(id): Path<i64>,
) -> Result<Response> {
    let admin = admin_of(&state, id).await?;
    match admins::enable(&state.db, &admin).await {
        Ok(()) => {
            audit
                .record(Event::Admin(Kind::AdminEnabled, admin.name))
                .await;
            flash_to(&session, "admins-enabled-flash", LIST).await
        }
        Err(e) => refused(&session, &e.refusal()?).await,
    }
}

#[derive(Deserialize)]
pub struct RoleForm {
    role: Option<String>,
}

/// Gives another administrator (or oneself) a role; never takes away the last active owner.
pub async fn change_role(
    State(state): State<AppState>,
    audit: Audit,
    session: Session,
    Path(id): Path<i64>,
    Form(form): Form<RoleForm>,
) -> Result<Response> {
    let admin = admin_of(&state, id).await?;
    let role = form
        .role
        .as_deref()
        .and_then(|r| Role::parse(r.trim()))
        .ok_or(AppError::BadRequest)?;
    match admins::set_role(&state.db, &admin, role).await {
        Ok(()) => {
            audit.record(Event::role_changed(&admin, role)).await;
            flash_to(&session, "admins-role-changed-flash", LIST).await
        }
        Err(e) => refused(&session, &e.refusal()?).await,
    }
}

pub async fn unlock(
    State(state): State<AppState>,
    audit: Audit,
    session: Session,
    Path(id): Path<i64>,
) -> Result<Response> {
    let admin = admin_of(&state, id).await?;
    let keys = state.site.get().await.keys.clone();
    if !admins::unlock(&state.db, &keys, admin.id).await? {
        return Err(AppError::NotFound);
    }
    audit
        .record(Event::Admin(Kind::AdminUnlocked, admin.name))
        .await;
    flash_to(&session, "admins-unlocked-flash", LIST).await
}

#[derive(askama::Template)]
#[template(path = "admin/admin_password.html")]
struct PasswordPage {
    ctx: PageContext,
    errors: FieldErrors,
}

impl PasswordPage {
    fn error(&self, key: &str) -> Option<&str> {
        error_for(&self.errors, key)
    }
}

pub async fn password_form(ctx: PageContext) -> Response {
    html(&PasswordPage {
        ctx,
        errors: Vec::new(),
    })
}

#[derive(Deserialize)]
pub struct PasswordForm {
    #[serde(default)]
    current: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    confirm: String,
}

/// Changes one's own password: the current one first, checked as a sign-in is (under the same
/// limits, so a session left open is no way to guess it), then the new one twice. Every other
/// session of this administrator is signed out; this one goes on under a new id.
pub async fn change_password(
    State(state): State<AppState>,
    audit: Audit,
    ctx: PageContext,
    session: Session,
    ClientAddr(client): ClientAddr,
    Extension(me): Extension<SignedIn>,
    Form(form): Form<PasswordForm>,
) -> Result<Response> {
    let admin = admin_of(&state, me.id).await?;
    let mut errors: Vec<(String, Message)> =
        login::check_new_password(&form.password, Some(&form.confirm));
    let snapshot = state.site.get().await;
    let settings = &snapshot.settings;
    let address = login::address_key(&snapshot.keys, client);
    let account = login::account_keys(&snapshot.keys, admin.id, admin.login_epoch, client);
    let place = state.passwords.admit().map_err(super::auth::pool_error)?;
    let admitted = login::admit(&state.guard, settings, &address, Some(&account))
        .map_err(|_| AppError::TooManyAttempts)?;
    let (current, stored) = (form.current, admin.password_hash.clone());
    let ok = place
        .run(move || crate::domain::password::verify(&current, &stored))
        .await
        .map_err(super::auth::pool_error)?;
    if !ok {
        login::failed(&state.guard, settings, &account, admitted);
        errors.insert(0, ("current".into(), Message::new("admins-current-wrong")));
    }
    if !errors.is_empty() {
        let errors = errors.into_iter().map(|(f, m)| (f, ctx.msg(&m))).collect();
        let mut response = html(&PasswordPage { ctx, errors });
        *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
        return Ok(response);
    }
    let hash = super::auth::hash_password(&state, form.password).await?;
    let epoch = admins::set_password(&state.db, admin.id, &hash)
        .await?
        .ok_or(AppError::NotFound)?;
    session.cycle_id().await?;
    session.insert(EPOCH_KEY, epoch).await?;
    audit
        .record(Event::Admin(Kind::AdminPassword, admin.name))
        .await;
    flash(&session, "admins-password-changed").await?;
    let mut response = Redirect::to(LIST).into_response();
    response.extensions_mut().insert(crate::http::csrf::Rotate);
    Ok(response)
}
