//! Forms: our own `Form` extractor (its rejection is ours), and the CSRF check every admin and
//! setup POST goes through before its handler runs.

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Request};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use subtle::ConstantTimeEq;
use tower_sessions::Session;

use super::context::CSRF_KEY;
use super::error::AppError;

/// The largest form body accepted anywhere.
pub const MAX_FORM_BYTES: usize = 256 * 1024;

/// `axum::Form`, with a rejection that renders as our own error page.
pub struct Form<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Form<T> {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &S) -> Result<Self, AppError> {
        match axum::Form::<T>::from_request(req, state).await {
            Ok(axum::Form(value)) => Ok(Form(value)),
            Err(_) => Err(AppError::BadRequest),
        }
    }
}

/// Form pairs in the order they were sent, for forms whose fields are not known in advance.
pub fn pairs(body: &[u8]) -> Vec<(String, String)> {
    serde_urlencoded::from_bytes(body).unwrap_or_default()
}

/// Refuses any POST whose `csrf` field does not match the session's token. The body is read
/// once here and handed on untouched.
pub async fn check_csrf(session: Session, request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes: Bytes = match axum::body::to_bytes(body, MAX_FORM_BYTES).await {
        Ok(b) => b,
        Err(_) => return AppError::BadRequest.into_response(),
    };
    let sent = pairs(&bytes)
        .into_iter()
        .find(|(k, _)| k == "csrf")
        .map(|(_, v)| v);
    let expected = match session.get::<String>(CSRF_KEY).await {
        Ok(token) => token,
        Err(e) => return AppError::from(e).into_response(),
    };
    let ok = match (sent, expected) {
        (Some(sent), Some(expected)) => bool::from(sent.as_bytes().ct_eq(expected.as_bytes())),
        _ => false,
    };
    if !ok {
        tracing::info!("refused a form without a valid CSRF token");
        return AppError::Forbidden.into_response();
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}
