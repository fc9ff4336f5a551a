//! One's own account: the address emails go to (`/admin/account`, with links to the password,
//! the two-step sign-in and the sessions), and one's live sessions with *Sign out everywhere*
//! (`/admin/account/sessions`). A session is shown by when it was signed in, when it was last
//! seen and its browser's family; never by its id.

use axum::Extension;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use serde::Deserialize;
use tower_sessions::Session;

use super::{FieldErrors, error_for};
use crate::domain::admins;
use crate::http::AppState;
use crate::http::context::{ADMIN_KEY, EPOCH_KEY, PageContext, SignedIn, flash_to, html};
use crate::http::error::{AppError, Result};
use crate::http::form::Form;
use crate::http::session_store::{AGENT_KEY, key_of};
use crate::i18n::Message;
use crate::store;

const ACCOUNT: &str = "/admin/account";
const SESSIONS: &str = "/admin/account/sessions";

#[derive(askama::Template)]
#[template(path = "admin/account.html")]
struct AccountPage {
    ctx: PageContext,
    intro: String,
    email: String,
    errors: FieldErrors,
}

impl AccountPage {
    fn error(&self, key: &str) -> Option<&str> {
        error_for(&self.errors, key)
    }
}

async fn me(state: &AppState, id: i64) -> Result<store::admins::Admin> {
    store::admins::by_id(&state.db, id)
        .await?
        .ok_or(AppError::NotFound)
}

pub async fn show(
    State(state): State<AppState>,
    ctx: PageContext,
    Extension(signed): Extension<SignedIn>,
) -> Result<Response> {
    let admin = me(&state, signed.id).await?;
    let intro = ctx.msg(&Message::new("account-intro").arg("name", admin.name));
    Ok(html(&AccountPage {
        ctx,
        intro,
        email: admin.email.unwrap_or_default(),
        errors: Vec::new(),
    }))
}

#[derive(Deserialize)]
pub struct EmailForm {
    #[serde(default)]
    email: String,
}

/// Sets, changes or (blank) removes one's address; emails are then written in this page's
/// language. A bad or taken address is said beside the field, with what was typed.
pub async fn save(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    Extension(signed): Extension<SignedIn>,
    Form(form): Form<EmailForm>,
) -> Result<Response> {
    let refused = |ctx: PageContext, name: String, message: Message| {
        let errors = vec![("email".to_owned(), ctx.msg(&message))];
        let intro = ctx.msg(&Message::new("account-intro").arg("name", name));
        let mut response = html(&AccountPage {
            ctx,
            intro,
            email: form.email.clone(),
            errors,
        });
        *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
        response
    };
    let admin = me(&state, signed.id).await?;
    let email = match admins::email_of(&form.email) {
        Ok(e) => e,
        Err(m) => return Ok(refused(ctx, admin.name, m)),
    };
    let taken = match &email {
        Some(e) => {
            store::admin_mails::email_taken(&state.db, e, Some(admin.id), store::now()).await?
        }
        None => false,
    };
    let lang = ctx.lang.code();
    if taken
        || !store::admin_mails::set_email(&state.db, admin.id, email.as_deref(), Some(lang)).await?
    {
        return Ok(refused(ctx, admin.name, Message::new("admin-email-taken")));
    }
    tracing::info!(admin = admin.id, "administrator address changed");
    flash_to(&session, "account-email-saved", ACCOUNT).await
}

/// One session as the list shows it.
pub struct SessionLine {
    pub signed_in: String,
    pub seen: String,
    pub agent: String,
    pub this: bool,
}

#[derive(askama::Template)]
#[template(path = "admin/account_sessions.html")]
struct SessionsPage {
    ctx: PageContext,
    sessions: Vec<SessionLine>,
    /// Said when the list stopped at `store::sessions::LISTED`.
    capped: Option<String>,
}

pub async fn sessions(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    Extension(signed): Extension<SignedIn>,
    headers: HeaderMap,
) -> Result<Response> {
    let current = match session.id() {
        Some(id) => key_of(&state.site.get().await.keys, &id),
        None => String::new(),
    };
    let rows = store::sessions::of_admin(&state.db, signed.id, store::now()).await?;
    let unknown = ctx.t("account-sessions-unknown");
    let capped = (rows.len() as i64 >= store::sessions::LISTED).then(|| {
        ctx.msg(
            &Message::new("account-sessions-capped")
                .arg("listed", store::sessions::LISTED.to_string()),
        )
    });
    let sessions = rows
        .into_iter()
        .map(|r| SessionLine {
            signed_in: r
                .created_at
                .map_or_else(|| unknown.clone(), crate::time::format_utc),
            seen: r
                .seen_at
                .map_or_else(|| unknown.clone(), crate::time::format_utc),
            // This session's first page after signing in notes its browser as it is saved,
            // after this read: this request's is the same.
            agent: match (r.agent.is_empty(), r.id == current) {
                (false, _) => r.agent,
                (true, true) => agent_family(&headers),
                (true, false) => unknown.clone(),
            },
            this: r.id == current,
        })
        .collect();
    let mut response = html(&SessionsPage {
        ctx,
        sessions,
        capped,
    });
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    Ok(response)
}

/// Signs out every other session of this administrator and keeps this one: the account's
/// epoch moves on (every session under the old one stops, wherever it is), this session is
/// given the new epoch, and this browser a device cookie for it.
pub async fn end_others(
    State(state): State<AppState>,
    session: Session,
    Extension(signed): Extension<SignedIn>,
) -> Result<Response> {
    let keys = state.site.get().await.keys.clone();
    let current = session
        .id()
        .map(|id| key_of(&keys, &id))
        .unwrap_or_default();
    let epoch = store::sessions::end_others(&state.db, signed.id, &current)
        .await?
        .ok_or(AppError::NotFound)?;
    session.insert(EPOCH_KEY, epoch).await?;
    tracing::info!(
        admin = signed.id,
        "administrator signed out everywhere else"
    );
    let mut response = flash_to(&session, "account-sessions-ended", SESSIONS).await?;
    crate::http::device::issue(
        &mut response,
        &keys,
        state.secure_cookies,
        store::now(),
        signed.id,
        epoch,
    )?;
    Ok(response)
}

/// Notes the browser's family in a signed-in session that has none yet (the first page after
/// any way of signing in), so its row can say which browser it is: one save per session.
pub async fn mark_agent(session: Session, request: Request, next: Next) -> Response {
    let unmarked = matches!(session.get::<i64>(ADMIN_KEY).await, Ok(Some(_)))
        && matches!(session.get::<String>(AGENT_KEY).await, Ok(None));
    if unmarked {
        let family = agent_family(request.headers());
        if let Err(e) = session.insert(AGENT_KEY, family).await {
            tracing::warn!(error = %e, "the session's browser could not be noted");
        }
    }
    next.run(request).await
}

/// A browser's family and system from its User-Agent ("Firefox on Linux"), from a short list;
/// never the header itself, which could say more about the person than the list needs.
pub fn agent_family(headers: &HeaderMap) -> String {
    let ua = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let has = |s: &str| ua.contains(s);
    let browser = if has("Edg/") {
        "Edge"
    } else if has("OPR/") {
        "Opera"
    } else if has("Firefox/") {
        "Firefox"
    } else if has("Chrome/") || has("Chromium/") {
        "Chrome"
    } else if has("Safari/") {
        "Safari"
    } else if has("curl/") {
        "curl"
    } else if ua.is_empty() {
        "?"
    } else {
        "other"
    };
    let system = if has("Android") {
        Some("Android")
    } else if has("iPhone") || has("iPad") {
        Some("iOS")
    } else if has("Windows") {
        Some("Windows")
    } else if has("Mac OS X") || has("Macintosh") {
        Some("macOS")
    } else if has("Linux") {
        Some("Linux")
    } else {
        None
    };
    match system {
        Some(s) => format!("{browser} · {s}"),
        None => browser.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_browser_is_named_by_its_family_only() {
        let of = |ua: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::USER_AGENT, ua.parse().unwrap());
            agent_family(&h)
        };
        assert_eq!(
            of("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"),
            "Firefox · Linux"
        );
        assert_eq!(
            of(
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0"
            ),
            "Edge · Windows"
        );
        assert_eq!(of("curl/8.5.0"), "curl");
        assert_eq!(agent_family(&HeaderMap::new()), "?");
    }
}
