//! The one context every page carries: language, CSRF token, flash message, who is signed in.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::response::{Html, IntoResponse, Response};
use tower_sessions::Session;

use super::AppState;
use super::error::AppError;
use crate::i18n::{Lang, Message, tr};

pub const FLASH_KEY: &str = "flash";
pub const ADMIN_KEY: &str = "admin_id";

#[derive(Clone, Debug, Default)]
pub struct PageContext {
    pub lang: Lang,
    pub site_name: String,
    pub csrf: String,
    pub flash: Option<String>,
    /// The signed-in administrator's name, on admin pages.
    pub admin: Option<String>,
    /// The current path, for links that come back here (never set on doorway pages).
    pub path: String,
}

/// The signed-in administrator, put in the request by the admin area's sign-in check.
#[derive(Clone, Debug)]
pub struct SignedIn {
    pub id: i64,
    pub name: String,
}

impl PageContext {
    /// A context without a session: doorway pages and error pages.
    pub fn plain(lang: Lang) -> Self {
        Self {
            lang,
            site_name: "Orchestra".into(),
            ..Self::default()
        }
    }

    pub fn t(&self, id: &str) -> String {
        tr(self.lang, id, &[])
    }

    pub fn msg(&self, message: &Message) -> String {
        message.render(self.lang)
    }

    pub fn lang_code(&self) -> &'static str {
        self.lang.code()
    }

    /// The other languages, for the switcher: (code, native name).
    pub fn languages(&self) -> Vec<(&'static str, &'static str, bool)> {
        Lang::ALL
            .iter()
            .map(|l| (l.code(), l.native_name(), *l == self.lang))
            .collect()
    }
}

impl FromRequestParts<AppState> for PageContext {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, AppError> {
        let lang = parts.extensions.get::<Lang>().copied().unwrap_or_default();
        let snapshot = state.site.get().await;
        let site_name = snapshot.settings.site_name.clone();
        let admin = parts.extensions.get::<SignedIn>().map(|a| a.name.clone());
        let path = parts.uri.path().to_owned();
        let mut ctx = PageContext {
            lang,
            site_name,
            admin,
            path,
            ..PageContext::default()
        };
        if let Some(nonce) = parts.extensions.get::<super::csrf::Nonce>() {
            ctx.csrf = super::csrf::token(&snapshot.keys, nonce);
        }
        if let Ok(session) = Session::from_request_parts(parts, state).await {
            ctx.flash = session
                .remove::<String>(FLASH_KEY)
                .await?
                .map(|id| tr(lang, &id, &[]));
        }
        Ok(ctx)
    }
}

/// Leaves a message for the next page the administrator sees.
pub async fn flash(session: &Session, message_id: &str) -> Result<(), AppError> {
    session.insert(FLASH_KEY, message_id).await?;
    Ok(())
}

/// Renders a template as an HTML response.
pub fn html(template: &impl askama::Template) -> Response {
    match template.render() {
        Ok(body) => Html(body).into_response(),
        Err(e) => AppError::internal("template error", e).into_response(),
    }
}
