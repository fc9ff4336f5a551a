//! One error type for every handler. Internal errors are logged once, where they are made,
//! and every error reaches the visitor as a themed page in their language, with nothing of
//! SQL, paths or links in it.

use axum::http::{HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};

use super::page::PageContext;
use crate::i18n::Lang;

#[derive(Debug)]
pub enum AppError {
    NotFound,
    /// A form failed its CSRF check, or a cross-site post reached the doorway.
    Forbidden,
    BadRequest,
    Internal,
    /// Too many sign-in attempts from this address or for this account: the password was not
    /// checked.
    TooManyAttempts,
    /// Every password-check slot and the short queue behind them are taken.
    Busy,
    /// The database file was deleted or replaced under the running server: nothing is written.
    Unavailable,
    /// A body longer than its route takes (`http::body`).
    TooLarge,
    /// A body that did not arrive by the body deadline.
    TimedOut,
    /// The server holds all the request bodies or connections it may: refused at once.
    Crowded,
    /// The signed-in administrator's role does not allow this form (`http::admin::roles`).
    RoleForbidden,
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
            AppError::Forbidden | AppError::RoleForbidden => StatusCode::FORBIDDEN,
            AppError::BadRequest => StatusCode::BAD_REQUEST,
            AppError::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            AppError::TooManyAttempts => StatusCode::TOO_MANY_REQUESTS,
            AppError::Busy | AppError::Unavailable | AppError::Crowded => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            AppError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            AppError::TimedOut => StatusCode::REQUEST_TIMEOUT,
        }
    }
}

impl From<sqlx::Error> for AppError {
    fn from(e: sqlx::Error) -> Self {
        if crate::store::is_unavailable(&e) {
            // No connection within the acquire timeout: the database is down or locked. A
            // fast, themed 503 in the visitor's language, logged once.
            tracing::error!(error = %e, "database unavailable; answered 503");
            return AppError::Unavailable;
        }
        if crate::store::is_bad_text(&e) {
            tracing::info!("refused text the database cannot store");
            return AppError::BadRequest;
        }
        AppError::internal("database error", e)
    }
}

impl From<crate::error::Error> for AppError {
    fn from(e: crate::error::Error) -> Self {
        match e {
            crate::error::Error::Db(e) => e.into(),
            e => AppError::internal("domain error", e),
        }
    }
}

impl From<askama::Error> for AppError {
    fn from(e: askama::Error) -> Self {
        AppError::internal("template error", e)
    }
}

impl From<tower_sessions::session::Error> for AppError {
    fn from(e: tower_sessions::session::Error) -> Self {
        use tower_sessions::session::Error;
        use tower_sessions::session_store::Error as Store;
        match e {
            // The sessions live in the database: a store that cannot answer is a database
            // fault, answered like every other one.
            Error::Store(Store::Backend(e)) => {
                tracing::error!(error = %e, "session store unavailable; answered 503");
                AppError::Unavailable
            }
            e => AppError::internal("session error", e),
        }
    }
}

/// Marks a response whose body the error-page layer should render.
#[derive(Clone, Copy)]
struct ErrorMarker(StatusCode, &'static str, &'static str);

impl AppError {
    /// The page's title and message ids.
    fn messages(&self) -> (&'static str, &'static str) {
        match self {
            AppError::TooManyAttempts => ("error-login-limited-title", "error-login-limited"),
            AppError::Busy => ("error-busy-title", "error-busy"),
            AppError::Unavailable => ("error-unavailable-title", "error-unavailable"),
            AppError::TooLarge => ("error-too-large-title", "error-too-large"),
            AppError::TimedOut => ("error-timed-out-title", "error-timed-out"),
            AppError::Crowded => ("error-crowded-title", "error-crowded"),
            AppError::RoleForbidden => ("error-role-title", "error-role"),
            other => messages_for(other.status()),
        }
    }
}

/// The generic page for a status: what a framework answer (a session that could not be saved,
/// a method not allowed) is shown as.
fn messages_for(status: StatusCode) -> (&'static str, &'static str) {
    match status {
        StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED => {
            ("error-not-found-title", "error-not-found")
        }
        StatusCode::FORBIDDEN => ("error-forbidden-title", "error-forbidden"),
        s if s.is_client_error() => ("error-bad-request-title", "error-bad-request"),
        _ => ("error-internal-title", "error-internal"),
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = self.status();
        let (title, message) = self.messages();
        let mut response = status.into_response();
        response
            .extensions_mut()
            .insert(ErrorMarker(status, title, message));
        if matches!(self, AppError::TooLarge | AppError::TimedOut) {
            // The body was left unread: the connection cannot carry another request.
            response.headers_mut().insert(
                axum::http::header::CONNECTION,
                HeaderValue::from_static("close"),
            );
        }
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

fn is_unthemed_error(response: &Response) -> bool {
    let status = response.status();
    // A page, or a machine's answer (the provider notices, the API): already in its own theme.
    let ours = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html") || v.starts_with("application/json"));
    (status.is_client_error() || status.is_server_error()) && !ours
}

/// The themed error page, for an answer made outside the router too (`http::server` refusing a
/// connection): status, title and message, in `lang`.
fn page(lang: Lang, status: StatusCode, title: &str, message: &str) -> Response {
    let ctx = PageContext::plain(lang);
    let page = ErrorPage {
        title: ctx.t(title),
        message: ctx.t(message),
        ctx,
    };
    let mut out = html(&page).into_response();
    *out.status_mut() = status;
    out
}

/// An error answer re-rendered as its themed page with a given page context (the admin pages'
/// navigation, for one); any other answer unchanged. The error-page layer then leaves it be.
pub fn with_context(ctx: PageContext, response: Response) -> Response {
    let Some(ErrorMarker(status, title, message)) =
        response.extensions().get::<ErrorMarker>().copied()
    else {
        return response;
    };
    let page = ErrorPage {
        title: ctx.t(title),
        message: ctx.t(message),
        ctx,
    };
    let mut out = html(&page).into_response();
    *out.status_mut() = status;
    let headers = out.headers_mut();
    for (name, value) in response.headers() {
        if name != axum::http::header::CONTENT_TYPE && name != axum::http::header::CONTENT_LENGTH {
            headers.append(name.clone(), value.clone());
        }
    }
    out
}

impl AppError {
    /// This error as its themed page in `lang`, without the error-page layer.
    pub fn page(&self, lang: Lang) -> Response {
        let (title, message) = self.messages();
        page(lang, self.status(), title, message)
    }
}

/// A response as the visitor sees it: an error (ours, marked, or any other error status that
/// is not a page already) becomes its themed page in `lang`, keeping the answer's headers; any
/// other response is left as it is. Run on every response by `http::common`.
pub fn themed(response: Response, lang: Lang) -> Response {
    let (status, title, message) = match response.extensions().get::<ErrorMarker>().copied() {
        Some(ErrorMarker(status, title, message)) => (status, title, message),
        // An error answered by a framework layer rather than by us (tower-sessions' empty 500
        // when a session cannot be saved, axum's plain-text rejections): themed all the same.
        None if is_unthemed_error(&response) => {
            let status = response.status();
            let (title, message) = messages_for(status);
            (status, title, message)
        }
        None => return response,
    };
    let mut out = page(lang, status, title, message);
    let headers = out.headers_mut();
    for (name, value) in response.headers() {
        if name != axum::http::header::CONTENT_TYPE && name != axum::http::header::CONTENT_LENGTH {
            headers.append(name.clone(), value.clone());
        }
    }
    out
}

/// Renders a template as an HTML response.
pub fn html(template: &impl askama::Template) -> Response {
    match template.render() {
        Ok(body) => Html(body).into_response(),
        Err(e) => AppError::internal("template error", e).into_response(),
    }
}
