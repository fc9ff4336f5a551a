//! The page context of a request (`PageContext`, filled from the request's language, session
//! and CSRF nonce), the flash messages, and who is signed in.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use tower_sessions::Session;

use super::AppState;
use super::error::AppError;
pub use super::error::html;
pub use super::page::{FlashKind, PageContext};
use crate::i18n::{Lang, tr};

pub const FLASH_KEY: &str = "flash";
/// When a page last saved the session, in Unix seconds.
const SEEN_KEY: &str = "seen";
/// How often browsing saves the session, so it expires 12 hours after the last page seen
/// (give or take this), without a write on every page.
const SESSION_REFRESH: i64 = 600;
pub const ADMIN_KEY: &str = "admin_id";
/// The administrator's `auth_epoch` the session signed in under; a session without one signed
/// in before epochs existed, under epoch 0.
pub const EPOCH_KEY: &str = "admin_epoch";

#[derive(serde::Serialize, serde::Deserialize)]
struct Flash {
    id: String,
    kind: FlashKind,
}

/// The signed-in administrator, put in the request by the admin area's sign-in check.
#[derive(Clone, Debug)]
pub struct SignedIn {
    pub id: i64,
    pub name: String,
    /// What they may do (`http::admin::roles`), as their row said at this request.
    pub role: crate::domain::roles::Role,
}

impl FromRequestParts<AppState> for PageContext {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, AppError> {
        let lang = parts.extensions.get::<Lang>().copied().unwrap_or_default();
        let snapshot = state.site.get().await;
        let site_name = snapshot.settings.site_name.clone();
        let admin = parts.extensions.get::<SignedIn>().map(|a| a.name.clone());
        let role = parts.extensions.get::<SignedIn>().map(|a| a.role);
        let path = parts.uri.path().to_owned();
        let query = parts
            .uri
            .query()
            .unwrap_or("")
            .split('&')
            .filter(|kv| !kv.is_empty() && !kv.starts_with("lang="))
            .collect::<Vec<_>>()
            .join("&");
        let mut ctx = PageContext {
            lang,
            site_name,
            admin,
            role,
            path,
            query,
            ..PageContext::default()
        };
        if let Some(checked) = parts.extensions.get::<super::csrf::Checked>() {
            ctx.csrf = checked.0.clone();
        } else if let Some(nonce) = parts.extensions.get::<super::csrf::Nonce>() {
            ctx.csrf = super::csrf::token(&snapshot.keys, nonce);
        }
        if let Ok(session) = Session::from_request_parts(parts, state).await {
            // A page that only reads saves no session (tower-sessions saves any session
            // touched, a `remove` of nothing included), so it keeps answering while the
            // database refuses writes. The session is saved when a flash is consumed, and at
            // most every `SESSION_REFRESH` seconds to push its 12 hours of inactivity back.
            if session.get::<Flash>(FLASH_KEY).await?.is_some()
                && let Some(flash) = session.remove::<Flash>(FLASH_KEY).await?
            {
                ctx.flash = Some(tr(lang, &flash.id, &[]));
                ctx.flash_kind = flash.kind;
            }
            if ctx.admin.is_some() {
                let now = crate::store::now();
                let seen = session.get::<i64>(SEEN_KEY).await?.unwrap_or(0);
                if now - seen >= SESSION_REFRESH {
                    session.insert(SEEN_KEY, now).await?;
                }
            }
        }
        Ok(ctx)
    }
}

/// Leaves a success message for the next page the administrator sees.
pub async fn flash(session: &Session, message_id: &str) -> Result<(), AppError> {
    flash_as(session, FlashKind::Success, message_id).await
}

/// Leaves a message for the next page and goes there: how a form that did its work answers.
pub async fn flash_to(
    session: &Session,
    message_id: &str,
    to: &str,
) -> Result<axum::response::Response, AppError> {
    use axum::response::IntoResponse;
    flash(session, message_id).await?;
    Ok(axum::response::Redirect::to(to).into_response())
}

/// Leaves a message of a given kind for the next page the administrator sees.
pub async fn flash_as(
    session: &Session,
    kind: FlashKind,
    message_id: &str,
) -> Result<(), AppError> {
    let flash = Flash {
        id: message_id.to_owned(),
        kind,
    };
    session.insert(FLASH_KEY, flash).await?;
    Ok(())
}
