//! Our own `Path` and `Query`: axum's, with rejections that are our themed error pages.
//! `clippy.toml` bans the raw types, so no framework message reaches a visitor again.
//! Neither lets a NUL character through (see `form`): a path holding one is not found, a
//! query holding one is a bad request.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::error::AppError;
use super::form::holds_nul;

/// `axum::extract::Path`; a segment that does not parse (a bad id) is a 404 page.
pub struct Path<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for Path<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, AppError> {
        if holds_nul(parts.uri.path().as_bytes()) {
            return Err(AppError::NotFound);
        }
        #[allow(clippy::disallowed_types)]
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(value)) => Ok(Path(value)),
            Err(_) => Err(AppError::NotFound),
        }
    }
}

/// `axum::extract::Query`; a query string that does not parse is a 400 page.
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Query<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, AppError> {
        if parts.uri.query().is_some_and(|q| holds_nul(q.as_bytes())) {
            return Err(AppError::BadRequest);
        }
        #[allow(clippy::disallowed_types)]
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(Query(value)),
            Err(_) => Err(AppError::BadRequest),
        }
    }
}
