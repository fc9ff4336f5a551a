//! What a handler reads from a request, each refusal the API's JSON: the caller `gate` let in
//! ([`Caller`]), the ids in the path ([`Id`]), the body ([`Read`], [`body`]), the query's
//! fields; and the two checks every handler makes first, the token's scope ([`needs`]) and its
//! reach ([`reached`]).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::Response;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::error::ApiError;
use crate::domain::api::scope::Ability;
use crate::domain::site::Snapshot;
use crate::http::AppState;
use crate::http::body;
use crate::i18n::{Lang, Message};
use crate::store::{self, api::Reached, api::TokenRow};

/// Who is calling, and the settings and keys `gate` decided under: put in the request by
/// `gate`, so a handler reads the snapshot `gate` read rather than a second one.
#[derive(Clone)]
pub struct Caller(pub Arc<TokenRow>, pub Arc<Snapshot>);

/// The caller as a handler takes it: absent only on a route `gate` does not stand before.
pub type Who = Option<axum::Extension<Caller>>;

fn of<T>(who: &Who, part: impl FnOnce(&Caller) -> T) -> Result<T, ApiError> {
    who.as_ref()
        .map(|c| part(&c.0))
        .ok_or_else(|| ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", ""))
}

/// The token `gate` let in.
pub fn caller(who: &Who) -> Result<Arc<TokenRow>, ApiError> {
    of(who, |c| c.0.clone())
}

/// The snapshot `gate` decided under (see [`Caller`]).
pub fn snapshot_of(who: &Who) -> Result<Arc<Snapshot>, ApiError> {
    of(who, |c| c.1.clone())
}

/// The ids in the path. One that is not a number names nothing: the API's JSON 404, as a
/// missing instance gets, where the site's `Path` answers its 404 page.
pub struct Id<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for Id<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match crate::http::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(crate::http::extract::Path(value)) => Ok(Id(value)),
            Err(_) => {
                let lang = parts.extensions.get::<Lang>().copied().unwrap_or_default();
                Err(ApiError::not_found(lang))
            }
        }
    }
}

/// A call's body, read within its route's cap and the body deadline (`http::body`); a body
/// refused there is the API's JSON error, never a framework's message. Whether it was declared
/// JSON is kept for [`Read::json`], which a handler calls once the token's scope let it on.
pub struct Read {
    bytes: Bytes,
    declared_json: bool,
}

impl FromRequest<AppState> for Read {
    type Rejection = Response;

    async fn from_request(request: Request, _: &AppState) -> Result<Self, Response> {
        let lang = request
            .extensions()
            .get::<Lang>()
            .copied()
            .unwrap_or_default();
        let declared_json = request
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| is_json(v.as_bytes()));
        // Read whatever its type: the connection stays good for the next request.
        let bytes = body::read(request.into_body())
            .await
            .map_err(|refused| super::error::body_refused(lang, refused))?;
        Ok(Read {
            bytes,
            declared_json,
        })
    }
}

impl Read {
    /// The body, when it is declared JSON or is empty (a cancel's may be); otherwise `415
    /// unsupported_media_type`. After the scope's check, which says nothing of the body.
    pub fn json(self, lang: Lang) -> Result<Bytes, ApiError> {
        if self.declared_json || is_blank(&self.bytes) {
            return Ok(self.bytes);
        }
        Err(ApiError::said(
            lang,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "api-unsupported-media-type",
        ))
    }
}

/// Whether a body is empty or only whitespace.
pub fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(u8::is_ascii_whitespace)
}

/// Whether a `Content-Type` is JSON: `application/json` or a `+json` type, any parameters
/// (`; charset=utf-8`) and any case.
fn is_json(value: &[u8]) -> bool {
    let essence = value.split(|&b| b == b';').next().unwrap_or_default();
    let essence = essence.trim_ascii().to_ascii_lowercase();
    essence == b"application/json"
        || (essence.starts_with(b"application/") && essence.ends_with(b"+json"))
}

/// `403 forbidden_scope` unless the token's scope has `ability`. Decided from the token alone,
/// before anything is read, so the answer says nothing about any instance.
pub fn needs(token: &TokenRow, ability: Ability, lang: Lang) -> Result<(), ApiError> {
    if token.scope.may(ability) {
        return Ok(());
    }
    Err(ApiError::forbidden_scope(
        lang,
        Message::new("api-forbidden-scope").arg("ability", ability.as_str()),
    ))
}

/// The instance, when it is within the token's reach; otherwise the very answer a missing
/// instance gets (`404 not_found`), so a token cannot learn which instances exist beyond it.
pub async fn reached(
    state: &AppState,
    token: &TokenRow,
    id: i64,
    lang: Lang,
) -> Result<Reached, ApiError> {
    match store::api::reached(&state.db, id).await? {
        Some(r)
            if token
                .scope
                .reaches(token.id, r.api_token_id, r.workflow_name()) =>
        {
            Ok(r)
        }
        _ => Err(ApiError::not_found(lang)),
    }
}

/// A JSON body read as ours: malformed JSON is a 422, never a framework's message, and so is
/// text holding a NUL, which PostgreSQL cannot store (see `http::form`). Only the text the call
/// reads is held to that: the description says every text it takes holds no NUL, and says
/// nothing of fields it ignores, which a NUL in is no text of ours.
pub fn body<T>(lang: Lang, bytes: &Bytes) -> Result<T, ApiError>
where
    T: for<'de> Deserialize<'de> + Serialize,
{
    // Every body the API takes is an object: serde would read a struct from an array too
    // (`[null]` as `{"reason": null}`), which the description does not take.
    if bytes.trim_ascii_start().first() != Some(&b'{') {
        return Err(ApiError::invalid(
            lang,
            "body",
            &Message::new("api-bad-json"),
        ));
    }
    // serde's own error says where, not which field, and in English: the path is read as it
    // goes (serde_path_to_error, already in the tree through axum's Json), the words are ours.
    let reader = &mut serde_json::Deserializer::from_slice(bytes);
    let read: T = serde_path_to_error::deserialize(reader).map_err(|e| {
        let path = e.path().to_string();
        match e.inner().classify() {
            // A path from an array (`[0]`) is a body that is not an object at all.
            serde_json::error::Category::Data if path != "." && !path.starts_with('[') => {
                ApiError::invalid(lang, path, &Message::new("api-field-type"))
            }
            _ => ApiError::invalid(lang, "body", &Message::new("api-bad-json")),
        }
    })?;
    // What was read, written again: its texts (and map keys) only, each NUL escaped as JSON
    // writes it.
    let kept = serde_json::to_vec(&read).map_err(|e| {
        tracing::error!(error = %e, "a body read could not be written again");
        ApiError::internal()
    })?;
    if json_holds_nul(&kept) {
        return Err(ApiError::invalid(lang, "body", &Message::new("api-nul")));
    }
    Ok(read)
}

/// Whether a JSON text holds a NUL in a string: JSON has no raw control characters in
/// strings, so only the escape `\u0000` spells one, when an odd number of backslashes stands
/// before the `u` (an even number is escaped backslashes and then the letter).
fn json_holds_nul(json: &[u8]) -> bool {
    json.windows(5).enumerate().any(|(i, w)| {
        w.eq_ignore_ascii_case(b"u0000")
            && json[..i].iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1
    })
}

/// A query string's pairs; one that does not decode is no pairs (each field then is absent).
pub fn query_pairs(query: Option<&str>) -> Vec<(String, String)> {
    serde_urlencoded::from_str(query.unwrap_or_default()).unwrap_or_default()
}

/// A query field's last value; an empty one is absent.
pub fn last<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .filter(|v| !v.is_empty())
}

/// What a token's requests that email links are held to: the links-per-instance daily cap and
/// the hourly quotas of link emails per address and per token.
pub(super) fn api_mail<'a>(
    token: &TokenRow,
    snapshot: &'a Snapshot,
) -> crate::domain::mail::ApiMail<'a> {
    let settings = &snapshot.settings;
    crate::domain::mail::ApiMail {
        keys: &snapshot.keys,
        token: token.id,
        daily_cap: settings.api_max_links_per_instance_per_day,
        per_address: settings.api_max_emails_per_address_per_hour,
        per_token: settings.api_max_emails_per_token_per_hour,
    }
}
