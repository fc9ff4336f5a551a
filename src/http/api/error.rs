//! The API's errors: a status, a stable `error` code and a message in the caller's language,
//! always JSON. An error made where that language was not at hand (`Late`) is said again in it
//! by the router's layer ([`json_errors`]), which also makes the router's own `405` ours.

use std::borrow::Cow;

use axum::Json;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::wire;
use crate::domain::instance::Refusal;
use crate::domain::mail::Part;
use crate::http::body::Refused;
use crate::i18n::{Lang, Message};

/// An error whose message was made without the caller's language (in a `From` conversion: a
/// failure of ours, text the database cannot store): its code and message id, on the response,
/// for the router's layer to say it again in the caller's language.
#[derive(Clone, Copy)]
struct Late(&'static str, &'static str);

/// An API error: a status, a stable code and a message (plus the field for bad input).
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
    /// The input that is wrong: a field's name, a nested one's dotted path, or `body`.
    field: Option<Cow<'static, str>>,
    /// The message's id when it was made in English for want of the caller's language.
    late: Option<&'static str>,
    /// Every thing wrong, when the call checked them all.
    problems: Option<Vec<wire::Problem>>,
}

pub type ApiResult = Result<Response, ApiError>;

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            field: None,
            late: None,
            problems: None,
        }
    }

    /// An error whose message is the one of `id`, in the caller's language.
    pub fn said(lang: Lang, status: StatusCode, code: &'static str, id: &'static str) -> Self {
        Self::new(status, code, Message::new(id).render(lang))
    }

    /// An error made where the caller's language is not known: English here, said again in the
    /// caller's language by the router's layer (`Late`).
    fn late(status: StatusCode, code: &'static str, id: &'static str) -> Self {
        Self {
            late: Some(id),
            ..Self::said(Lang::En, status, code, id)
        }
    }

    pub fn invalid(lang: Lang, field: impl Into<Cow<'static, str>>, message: &Message) -> Self {
        Self {
            field: Some(field.into()),
            ..Self::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid",
                message.render(lang),
            )
        }
    }

    /// Bad input with every thing wrong with it (each a field and why): `field` and `message`
    /// say the first; `problems` lists them all, each with the definition's line it names.
    pub fn problems(lang: Lang, all: Vec<(&'static str, Message)>) -> Self {
        let problems: Vec<wire::Problem> = all
            .into_iter()
            .map(|(field, m)| wire::Problem {
                field,
                line: m
                    .args
                    .iter()
                    .find(|(name, _)| *name == "line")
                    .and_then(|(_, n)| n.parse().ok()),
                message: m.render(lang),
            })
            .collect();
        let Some((field, message)) = problems.first().map(|p| (p.field, p.message.clone())) else {
            return Self::invalid(lang, "body", &Message::new("api-bad-json"));
        };
        Self {
            field: Some(field.into()),
            problems: Some(problems),
            ..Self::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid", message)
        }
    }

    pub fn not_found(lang: Lang) -> Self {
        Self::said(lang, StatusCode::NOT_FOUND, "not_found", "api-not-found")
    }

    /// A failure of ours, logged where it happened.
    pub fn internal() -> Self {
        Self::late(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "api-internal",
        )
    }

    pub fn forbidden_scope(lang: Lang, message: Message) -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "forbidden_scope",
            message.render(lang),
        )
    }

    /// A refusal of the domain as the API answers it: a hard cap is a 403 with its own code,
    /// the rest a 422 naming the request's field.
    /// What an operation on an instance came to when it did not happen: its (first) refusal,
    /// or a failure of ours.
    pub fn instance(lang: Lang, e: crate::domain::instance::InstanceError) -> Self {
        match e.refusal() {
            Ok(refusal) => Self::refused(lang, &refusal),
            Err(failure) => failure.into(),
        }
    }

    pub fn refused(lang: Lang, refusal: &Refusal) -> Self {
        let code = match refusal {
            // The instance went between its read and the change (a cancel racing another).
            Refusal::InstanceUnknown(_) => return Self::not_found(lang),
            Refusal::Ended(_) => {
                return Self::new(
                    StatusCode::CONFLICT,
                    "ended",
                    refusal.message().render(lang),
                );
            }
            Refusal::EmailRate(_) => {
                return Self::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "email_rate",
                    refusal.message().render(lang),
                );
            }
            Refusal::RunningCap(_) => "running_instance_cap",
            Refusal::LinkCap(_) => "link_cap",
            Refusal::Contact(c) => {
                let field = match c.part {
                    Part::Participant => format!("participants.{}", c.participant),
                    part => format!("participants.{}.{}", c.participant, part.as_str()),
                };
                return Self::invalid(lang, field, &refusal.message());
            }
            _ => {
                let field = match refusal.field() {
                    "title" => "subject.title",
                    "body" => "subject.body",
                    "ttl" => "ttl_seconds",
                    other => other,
                };
                return Self::invalid(lang, field, &refusal.message());
            }
        };
        Self::new(StatusCode::FORBIDDEN, code, refusal.message().render(lang))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = wire::Error {
            error: self.code,
            message: self.message,
            field: self.field,
            problems: self.problems,
        };
        let mut response = (self.status, Json(body)).into_response();
        if let Some(id) = self.late {
            response.extensions_mut().insert(Late(self.code, id));
        }
        response
    }
}

impl From<crate::error::Error> for ApiError {
    fn from(e: crate::error::Error) -> Self {
        if let crate::error::Error::Db(d) = &e
            && crate::store::is_bad_text(d)
        {
            // The net under `body`'s own check: bad input, wherever it came from.
            tracing::info!("refused text the database cannot store");
            return Self::late(StatusCode::UNPROCESSABLE_ENTITY, "invalid", "api-bad-text");
        }
        if let crate::error::Error::Db(d) = &e
            && crate::store::is_unavailable(d)
        {
            // The write lock held past the acquire timeout by another process, or a database
            // that cannot answer: the caller may try again, as the pages' themed 503 says.
            tracing::warn!(error = %e, "API request met an unavailable database");
            return Self::late(StatusCode::SERVICE_UNAVAILABLE, "busy", "api-busy");
        }
        tracing::error!(error = %e, "API request failed");
        Self::internal()
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(e: sqlx::Error) -> Self {
        crate::error::Error::from(e).into()
    }
}

/// The router's layer: an error made where the caller's language was not at hand (`Late`), in
/// that language; and the router's `405` for a method a route does not take, as the API's JSON,
/// with its `Allow`.
pub async fn json_errors(lang: Lang, request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    if let Some(Late(code, id)) = response.extensions().get::<Late>().copied() {
        return ApiError::said(lang, response.status(), code, id).into_response();
    }
    if response.status() != StatusCode::METHOD_NOT_ALLOWED {
        return response;
    }
    let allow = response.headers().get(header::ALLOW).cloned();
    let mut answer = ApiError::said(
        lang,
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "api-method-not-allowed",
    )
    .into_response();
    if let Some(allow) = allow {
        answer.headers_mut().insert(header::ALLOW, allow);
    }
    answer
}

/// A body the API did not read whole (`http::body`): its cap, its deadline or the budget.
pub(crate) fn body_refused(lang: Lang, refused: Refused) -> Response {
    let (status, code, message) = match refused {
        Refused::TooLarge => (
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            "api-body-too-large",
        ),
        Refused::TimedOut => (StatusCode::REQUEST_TIMEOUT, "timeout", "api-body-timed-out"),
        Refused::Busy => (StatusCode::SERVICE_UNAVAILABLE, "busy", "api-busy"),
        Refused::Broken => (StatusCode::BAD_REQUEST, "bad_request", "api-bad-json"),
    };
    let mut response = ApiError::said(lang, status, code, message).into_response();
    if matches!(refused, Refused::TooLarge | Refused::TimedOut) {
        // The body was left unread: the connection cannot carry another request.
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}
