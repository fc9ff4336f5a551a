//! A POST that makes something, run once per `Idempotency-Key` (`domain::api::idempotency` owns
//! the rules): its answer is kept whole, so that a retry is sent the same bytes.

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::Value;

use super::error::{ApiError, ApiResult};
use crate::domain::api::idempotency::{self, Answer, Begun};
use crate::domain::site::Snapshot;
use crate::http::AppState;
use crate::i18n::{Lang, Message};
use crate::store::api::TokenRow;

/// The header a replayed answer carries, as Stripe's does.
const REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// What a POST that makes something answers, kept whole (status, `Location`, the JSON's very
/// bytes) so that a retry with its `Idempotency-Key` is sent the same.
pub fn made(
    status: StatusCode,
    location: Option<String>,
    value: &impl serde::Serialize,
) -> Result<Answer, ApiError> {
    let body = serde_json::to_string(value).map_err(|e| {
        tracing::error!(error = %e, "an API answer did not serialize");
        ApiError::internal()
    })?;
    Ok(Answer {
        status: status.as_u16(),
        location,
        body,
    })
}

fn answered(answer: Answer, replayed: bool) -> Response {
    let mut response = Response::new(Body::from(answer.body));
    *response.status_mut() =
        StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Some(location) = answer.location.and_then(|l| HeaderValue::try_from(l).ok()) {
        headers.insert(header::LOCATION, location);
    }
    if replayed {
        headers.insert(REPLAYED, HeaderValue::from_static("true"));
    }
    response
}

/// The request's `Idempotency-Key`, when it sends one; a key that is not 1 to 255 visible ASCII
/// characters is bad input naming the header.
pub fn key(lang: Lang, headers: &HeaderMap) -> Result<Option<idempotency::Key>, ApiError> {
    let mut sent = headers.get_all(idempotency::HEADER).iter();
    let Some(value) = sent.next() else {
        return Ok(None);
    };
    let key = match sent.next() {
        // Two keys name no one request.
        Some(_) => None,
        None => idempotency::Key::parse(value.as_bytes()),
    };
    key.map(Some).ok_or_else(|| {
        ApiError::invalid(
            lang,
            "Idempotency-Key",
            &Message::new("api-idempotency-key-invalid"),
        )
    })
}

/// Runs a POST's `work` once per `Idempotency-Key`: without a key it simply runs; with one,
/// the key is reserved first, and a retry gets the first answer again, a reuse for another
/// request (`request`: method, path, body) is refused, and a request while the first is at
/// work is told so.
pub async fn once(
    state: &AppState,
    lang: Lang,
    token: &TokenRow,
    snapshot: &Snapshot,
    key: Option<idempotency::Key>,
    request: (&str, String, &Bytes),
    work: impl Future<Output = Result<Answer, ApiError>> + Send + 'static,
) -> ApiResult {
    let Some(key) = key else {
        return work.await.map(|answer| answered(answer, false));
    };
    let (method, path, bytes) = request;
    // The body as its JSON value, written again: the same request with other spacing or
    // another order of its fields is the same request.
    let canonical = serde_json::from_slice::<Value>(bytes)
        .and_then(|v| serde_json::to_vec(&v))
        .unwrap_or_else(|_| bytes.to_vec());
    let fingerprint = idempotency::fingerprint(&snapshot.keys, method, &path, &canonical);
    let now = state.clock.now_secs();
    match idempotency::begin(&state.db, &snapshot.keys, token.id, &key, &fingerprint, now).await? {
        Begun::Replay(answer) => Ok(answered(answer, true)),
        Begun::Reused => Err(ApiError::said(
            lang,
            StatusCode::UNPROCESSABLE_ENTITY,
            "idempotency_key_reused",
            "api-idempotency-key-reused",
        )),
        Begun::InProgress => Err(ApiError::said(
            lang,
            StatusCode::CONFLICT,
            "idempotency_key_in_progress",
            "api-idempotency-key-in-progress",
        )),
        Begun::Fresh(reservation) => {
            let db = state.db.clone();
            // A task of its own: it runs to its end even if the client leaves mid-way (which
            // drops this handler), so a reservation is always either answered or given up.
            let done = tokio::spawn(async move {
                let result = work.await;
                let kept = match &result {
                    Ok(answer) => reservation.complete(&db, answer).await,
                    Err(_) => release(db, reservation).await,
                };
                if let Err(e) = kept {
                    tracing::error!(error = %e, "an idempotency record was not kept");
                }
                result
            })
            .await;
            match done {
                Ok(result) => result.map(|answer| answered(answer, false)),
                Err(e) => {
                    tracing::error!(error = %e, "an idempotent request's work failed");
                    Err(ApiError::internal())
                }
            }
        }
    }
}

/// Gives a failed request's key back, so that its retry runs the work again. When the database
/// cannot take even that (the failure was likely its own: a restart, a connection lost), it is
/// tried again in the background for a minute rather than leaving the key held as "in
/// progress" until the reservation expires, which only a crash should do.
async fn release(
    db: crate::store::Db,
    reservation: idempotency::Reservation,
) -> Result<(), crate::error::Error> {
    let Err(first) = reservation.release(&db).await else {
        return Ok(());
    };
    tokio::spawn(async move {
        for _ in 0..30 {
            tokio::time::sleep(std::time::Duration::from_secs(2)).await;
            if reservation.release(&db).await.is_ok() {
                return;
            }
        }
        tracing::warn!("an idempotency key stays held until its reservation expires");
    });
    Err(first)
}
