//! Forms: our own `Form` extractor (its rejection is ours). The CSRF check is in `csrf`.
//!
//! No form value may hold a NUL character: PostgreSQL cannot store one in text, SQLite would
//! store it and the other backend would refuse it later, and no person types one. A body or
//! query that carries one is bad input, refused before anything reads it (`holds_nul`).

use axum::extract::{FromRequest, Request};
use serde::de::DeserializeOwned;

use super::error::AppError;

/// `axum::Form`, with a rejection that renders as our own error page.
pub struct Form<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Form<T> {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &S) -> Result<Self, AppError> {
        let post = req.method() == axum::http::Method::POST;
        let urlencoded = req
            .headers()
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
        if !post {
            if req.uri().query().is_some_and(|q| holds_nul(q.as_bytes())) {
                return Err(AppError::BadRequest);
            }
            return match axum::Form::<T>::from_request(req, state).await {
                Ok(axum::Form(value)) => Ok(Form(value)),
                Err(_) => Err(AppError::BadRequest),
            };
        }
        if !urlencoded {
            return Err(AppError::BadRequest);
        }
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|_| AppError::BadRequest)?;
        if holds_nul(&bytes) {
            return Err(AppError::BadRequest);
        }
        serde_urlencoded::from_bytes(&bytes)
            .map(Form)
            .map_err(|_| AppError::BadRequest)
    }
}

/// Whether a form body or query string, as sent, decodes to text holding a NUL: a raw zero
/// byte, or `%00` (percent escapes are hex digits, so it has no other spelling).
pub fn holds_nul(encoded: &[u8]) -> bool {
    encoded.contains(&0) || encoded.windows(3).any(|w| w == b"%00")
}

/// Form pairs in the order they were sent, for forms whose fields are not known in advance.
pub fn pairs(body: &[u8]) -> Vec<(String, String)> {
    serde_urlencoded::from_bytes(body).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::holds_nul;

    #[test]
    fn a_nul_is_seen_in_every_spelling_and_nothing_else_is() {
        assert!(holds_nul(b"name=%00"));
        assert!(holds_nul(b"name=a%00b&x=1"));
        assert!(holds_nul(b"name=a\0b"));
        assert!(!holds_nul(b"name=%2500"));
        assert!(!holds_nul(b"name=100%25&n=%0A"));
        assert!(!holds_nul(b""));
    }
}
