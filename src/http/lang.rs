//! The visitor's language: `?lang=` (remembered in a cookie), else the cookie, else
//! `Accept-Language`, else English. Runs before everything, the doorway's guard included, so
//! a refusal is in the visitor's language too; it costs a few string comparisons.

use axum::extract::FromRequestParts;
use axum::http::header::{ACCEPT_LANGUAGE, SET_COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderValue, Uri, header};

use crate::i18n::Lang;

pub const COOKIE_NAME: &str = "orchestra_lang";

/// Remembers a language the visitor chose with `?lang=` (`pick`'s second value) in a cookie on
/// the response. Run on every response by `http::common`.
pub fn remember(headers: &mut header::HeaderMap, chosen: Option<Lang>) {
    if let Some(lang) = chosen {
        let cookie = format!(
            "{COOKIE_NAME}={}; Path=/; Max-Age=31536000; SameSite=Lax",
            lang.code()
        );
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            headers.append(SET_COOKIE, value);
        }
    }
}

/// The visitor's language, and whether they chose it with `?lang=` on this request. Pure and
/// cheap, so the doorway's guard can call it on a refusal without the middleware.
pub fn pick(uri: &Uri, headers: &header::HeaderMap) -> (Lang, Option<Lang>) {
    let chosen = uri
        .query()
        .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("lang=")))
        .and_then(Lang::from_code);
    let lang = chosen
        .or_else(|| from_cookie(headers))
        .or_else(|| {
            headers
                .get(ACCEPT_LANGUAGE)
                .and_then(|v| v.to_str().ok())
                .and_then(Lang::from_accept_language)
        })
        .unwrap_or_default();
    (lang, chosen)
}

fn from_cookie(headers: &header::HeaderMap) -> Option<Lang> {
    super::headers::cookie(headers, COOKIE_NAME).and_then(Lang::from_code)
}

impl<S: Send + Sync> FromRequestParts<S> for Lang {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(parts.extensions.get::<Lang>().copied().unwrap_or_default())
    }
}
