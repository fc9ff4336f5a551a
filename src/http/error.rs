//! One error type for every handler. Internal errors are logged once, where they are made,
//! and every error reaches the visitor as a themed page in their language, with nothing of
//! SQL, paths or links in it.

use axum::extract::Request;
use axum::http::header::{CACHE_CONTROL, REFERRER_POLICY};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::context::PageContext;
use crate::i18n::Lang;

#[derive(Debug)]
pub enum AppError {
    NotFound,
    /// A form failed its CSRF check, or a cross-site post reached the doorway.
    Forbidden,
    BadRequest,
    Internal,
}

pub type Result<T, E = AppError> = std::result::Result<T, E>;

impl AppError {
    /// Logs an unexpected failure with its context and turns it into a generic error.
    pub fn internal(context: &'static str, error: impl std::fmt::Display) -> Self {
        tracing::error!(%error, "{context}");
        AppError::Internal
    }

    fn status(&self) -> StatusCode {
        match self {
            AppError::NotFound => StatusCode::NOT_FOUND,
            AppError::Forbidden => StatusCode::FORBIDDEN,
            AppError::BadRequest => StatusCode::BAD_REQUEST,
            AppError::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl From<sqlx::Error> for AppError {
    fn from(e: sqlx::Error) -> Self {
        AppError::internal("database error", e)
    }
}

impl From<crate::error::Error> for AppError {
    fn from(e: crate::error::Error) -> Self {
        AppError::internal("domain error", e)
    }
}

impl From<askama::Error> for AppError {
    fn from(e: askama::Error) -> Self {
        AppError::internal("template error", e)
    }
}

impl From<tower_sessions::session::Error> for AppError {
    fn from(e: tower_sessions::session::Error) -> Self {
        AppError::internal("session error", e)
    }
}

/// Marks a response whose body the error-page layer should render.
#[derive(Clone, Copy)]
struct ErrorMarker(StatusCode);

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = self.status();
        let mut response = status.into_response();
        response.extensions_mut().insert(ErrorMarker(status));
        response
    }
}

pub async fn not_found() -> AppError {
    AppError::NotFound
}

#[derive(askama::Template)]
#[template(path = "error.html")]
struct ErrorPage {
    ctx: PageContext,
    title: String,
    message: String,
}

/// Renders marked errors as a page in the visitor's language.
pub async fn render_error_pages(request: Request, next: Next) -> Response {
    let lang = request
        .extensions()
        .get::<Lang>()
        .copied()
        .unwrap_or_default();
    let credential = super::CREDENTIAL_PREFIXES
        .iter()
        .any(|p| request.uri().path().starts_with(p));
    let response = next.run(request).await;
    let Some(ErrorMarker(status)) = response.extensions().get::<ErrorMarker>().copied() else {
        return response;
    };
    let (title, message) = match status {
        StatusCode::NOT_FOUND => ("error-not-found-title", "error-not-found"),
        StatusCode::FORBIDDEN => ("error-forbidden-title", "error-forbidden"),
        StatusCode::BAD_REQUEST => ("error-bad-request-title", "error-bad-request"),
        _ => ("error-internal-title", "error-internal"),
    };
    let ctx = PageContext::plain(lang);
    let page = ErrorPage {
        title: ctx.t(title),
        message: ctx.t(message),
        ctx,
    };
    let mut out = super::context::html(&page).into_response();
    *out.status_mut() = status;
    let headers = out.headers_mut();
    for (name, value) in response.headers() {
        if name != axum::http::header::CONTENT_TYPE && name != axum::http::header::CONTENT_LENGTH {
            headers.append(name.clone(), value.clone());
        }
    }
    if credential {
        headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    out
}
