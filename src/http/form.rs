//! Forms: our own `Form` extractor (its rejection is ours). The CSRF check is in `csrf`.

use axum::extract::{FromRequest, Request};
use serde::de::DeserializeOwned;

use super::error::AppError;

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
