//! The one context every page carries: language, CSRF token, flash message, who is signed in.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::response::{Html, IntoResponse, Response};
use tower_sessions::Session;

use super::AppState;
use super::error::AppError;
use crate::i18n::{Lang, Message, tr};

pub const FLASH_KEY: &str = "flash";
/// When a page last saved the session, in Unix seconds.
const SEEN_KEY: &str = "seen";
/// How often browsing saves the session, so it expires 12 hours after the last page seen
/// (give or take this), without a write on every page.
const SESSION_REFRESH: i64 = 600;
pub const ADMIN_KEY: &str = "admin_id";

#[derive(Clone, Debug, Default)]
pub struct PageContext {
    pub lang: Lang,
    pub site_name: String,
    pub csrf: String,
    pub flash: Option<String>,
    /// How the flash message is styled: `success`, `warning` or `error`.
    pub flash_kind: FlashKind,
    /// The signed-in administrator's name, on admin pages.
    pub admin: Option<String>,
    /// The current path, for links that come back here (never set on doorway pages).
    pub path: String,
    /// The current query without `lang=`, so the language switch keeps the rest of it.
    pub query: String,
}

/// The kind of a flash message, which styles it and its role.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlashKind {
    #[default]
    Success,
    Warning,
    Error,
}

impl FlashKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

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

    /// The link to this page in another language: the query kept, `lang=` replaced.
    pub fn lang_href(&self, code: &str) -> String {
        if self.query.is_empty() {
            format!("?lang={code}")
        } else {
            format!("?{}&lang={code}", self.query)
        }
    }

    /// Whether a top navigation item is the current page or one of its children.
    pub fn in_section(&self, prefix: &str) -> bool {
        if prefix == "/admin" {
            return self.path == "/admin";
        }
        self.path == prefix || self.path.starts_with(&format!("{prefix}/"))
    }

    /// A success is announced politely; a warning or an error at once.
    pub fn flash_role(&self) -> &'static str {
        match self.flash_kind {
            FlashKind::Success => "status",
            FlashKind::Warning | FlashKind::Error => "alert",
        }
    }

    /// The breadcrumbs above the current page, read from its path: (href, label). The page
    /// itself is the last crumb, which its template names.
    pub fn crumbs(&self) -> Vec<(String, String)> {
        let parts: Vec<&str> = self.path.trim_matches('/').split('/').collect();
        let mut out = Vec::new();
        if parts.first() != Some(&"admin") || parts.len() < 2 {
            return out;
        }
        out.push(("/admin".to_owned(), self.t("nav-dashboard")));
        match parts[1] {
            "workflows" | "instances" => {
                let (section, list, one) = if parts[1] == "workflows" {
                    ("/admin/workflows", "nav-workflows", "crumb-workflow")
                } else {
                    ("/admin/instances", "nav-instances", "crumb-instance")
                };
                if parts.len() >= 3 {
                    out.push((section.to_owned(), self.t(list)));
                }
                if parts.len() >= 4
                    && let Some(id) = parts
                        .get(2)
                        .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
                {
                    let label = self.msg(&Message::new(one).arg("id", (*id).to_owned()));
                    out.push((format!("{section}/{id}"), label));
                }
            }
            "config" if parts.len() >= 4 => {
                out.push(("/admin/config/orchestra".to_owned(), self.t("nav-settings")));
            }
            _ => {}
        }
        out
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
            path,
            query,
            ..PageContext::default()
        };
        if let Some(nonce) = parts.extensions.get::<super::csrf::Nonce>() {
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

/// Renders a template as an HTML response.
pub fn html(template: &impl askama::Template) -> Response {
    match template.render() {
        Ok(body) => Html(body).into_response(),
        Err(e) => AppError::internal("template error", e).into_response(),
    }
}
