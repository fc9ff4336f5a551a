//! CSRF protection without a stored session: a signed double-submit token.
//!
//! Each browser gets a random nonce in a cookie (`orchestra_csrf`, HttpOnly, SameSite=Strict);
//! every form carries a keyed hash of that nonce with the site keys. A POST passes when the form's
//! token is the hash of the cookie's nonce. Nothing is written to the database, so the login and
//! setup forms cost an anonymous visitor no session row. The nonce is replaced at sign-in and
//! sign-out, so the token changes with them.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use super::AppState;
use super::error::AppError;
use super::form::holds_nul;
use crate::domain::keys::SiteKeys;

pub const COOKIE_NAME: &str = "orchestra_csrf";

/// This request's nonce; `fresh` when the browser sent none (then no POST can pass).
#[derive(Clone, Debug)]
pub struct Nonce {
    value: String,
    fresh: bool,
}

/// Put in a response's extensions by sign-in and sign-out: the browser gets a new nonce.
#[derive(Clone, Copy, Debug)]
pub struct Rotate;

/// The token a form carries for this nonce.
pub fn token(keys: &SiteKeys, nonce: &Nonce) -> String {
    keys.keyed_hash("csrf", &nonce.value)
}

/// The token [`check`] computed and found in the form, handed on in the request's extensions:
/// a page drawn in answer to the POST (a rejected form, shown again) carries it without
/// computing it twice.
#[derive(Clone, Debug)]
pub struct Checked(pub String);

/// The raw value of the body's `csrf` field: a scan for it, not a decoding of the body, which
/// the handler's `Form` does once. A token is hex, so its value needs no decoding; a field
/// spelled any other way (percent escapes in it or its name) is not a browser's and fails.
fn sent_token(body: &[u8]) -> Option<&[u8]> {
    body.split(|&b| b == b'&')
        .find_map(|pair| pair.strip_prefix(b"csrf="))
}

fn from_cookie(headers: &HeaderMap) -> Option<String> {
    super::headers::cookie(headers, COOKIE_NAME)
        .filter(|v| v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(str::to_owned)
}

/// Whether the nonce cookie is `Secure` (the site is served over https, read at start).
#[derive(Clone, Copy)]
pub struct Secure(pub bool);

/// Gives every request of the area its nonce, and the browser a cookie when it had none or
/// when the answer asks for a new one.
pub async fn nonce(State(secure): State<Secure>, mut request: Request, next: Next) -> Response {
    let nonce = match from_cookie(request.headers()) {
        Some(value) => Nonce {
            value,
            fresh: false,
        },
        None => Nonce {
            value: crate::domain::keys::random_token(),
            fresh: true,
        },
    };
    request.extensions_mut().insert(nonce.clone());
    let mut response = next.run(request).await;
    let value = if response.extensions().get::<Rotate>().is_some() {
        crate::domain::keys::random_token()
    } else if nonce.fresh {
        nonce.value
    } else {
        return response;
    };
    let secure = if secure.0 { "; Secure" } else { "" };
    let cookie = format!("{COOKIE_NAME}={value}; Path=/; HttpOnly; SameSite=Strict{secure}");
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().append(SET_COOKIE, value);
    }
    response
}

/// Refuses any POST whose `csrf` field is not the token of the browser's nonce. The body is
/// read once here and handed on untouched.
///
/// Cheapest first: the route's cap on the declared length was checked before this layer
/// (`http::body`); a browser that sent no nonce cookie cannot pass, so its body is never read;
/// only then is the body read, within its cap and the body deadline.
pub async fn check(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let Some(nonce) = request
        .extensions()
        .get::<Nonce>()
        .filter(|n| !n.fresh)
        .cloned()
    else {
        tracing::info!("refused a form without a CSRF cookie; its body was not read");
        return AppError::Forbidden.into_response();
    };
    let (parts, body) = request.into_parts();
    let bytes = match super::body::read(body).await {
        Ok(b) => b,
        Err(refused) => return AppError::from(refused).into_response(),
    };
    // A NUL is bad input whatever the form (`form::holds_nul`); refused before it is looked at.
    if holds_nul(&bytes) {
        return AppError::BadRequest.into_response();
    }
    let checked = match sent_token(&bytes) {
        Some(sent) => {
            let expected = token(&state.site.get().await.keys, &nonce);
            bool::from(sent.ct_eq(expected.as_bytes())).then_some(expected)
        }
        None => None,
    };
    let Some(expected) = checked else {
        tracing::info!("refused a form without a valid CSRF token");
        return AppError::Forbidden.into_response();
    };
    let mut parts = parts;
    parts.extensions.insert(Checked(expected));
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

#[cfg(test)]
mod tests {
    use super::sent_token;

    #[test]
    fn the_token_is_found_by_its_field_alone() {
        assert_eq!(sent_token(b"name=a&csrf=ab12&x=1"), Some(&b"ab12"[..]));
        assert_eq!(sent_token(b"csrf=ab12"), Some(&b"ab12"[..]));
        assert_eq!(sent_token(b"xcsrf=ab12&csrf2=cd"), None);
        assert_eq!(sent_token(b"name=csrf%3Dab12"), None);
        assert_eq!(sent_token(b""), None);
    }
}
