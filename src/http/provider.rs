//! The built-in test payment provider: a page of its own, clearly labelled as a test. Its
//! buttons do what a real provider's server does: send a signed notice (through the same
//! counting and checks as `POST /notice/test-provider`), then send the payer back to the
//! doorway on the continuation handle, where the page shows where the payment stands.
//! Switched off with `orchestra.test_provider`: its pages are then not found.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

use super::AppState;
use super::context::{PageContext, html};
use super::doorway::cross_site;
use super::error::AppError;
use super::form::pairs;
use super::notice::{self, Received};
use crate::domain::capability::Kind;
use crate::domain::interaction::payment::{self, Notice, Outcome, PaymentState};
use crate::domain::interaction::{self, Resolved};
use crate::domain::site::Snapshot;
use crate::i18n::Lang;
use crate::store;

/// Everything under it is the provider's one route, counted by the doorway's guard (which
/// owns the prefix: it counts before routing, as the handle the path carries).
pub use super::doorway::PROVIDER_PREFIX as PREFIX;
const ROUTE: &str = "/test-provider/{handle}";

pub fn router() -> Router<AppState> {
    Router::new().route(ROUTE, get(checkout).post(settle))
}

#[derive(askama::Template)]
#[template(path = "provider.html")]
struct CheckoutPage {
    ctx: PageContext,
    amount: String,
    /// Whether the payment is still to be made here.
    pending: bool,
    return_url: String,
}

/// The handle in the path, resolved, when the test provider is on.
async fn handle_of(
    state: &AppState,
    snapshot: &Snapshot,
    uri: &Uri,
) -> Result<Option<(Resolved, store::payments::PaymentRow)>, AppError> {
    if !snapshot.settings.test_provider {
        return Ok(None);
    }
    let handle = uri.path().strip_prefix(PREFIX).unwrap_or("");
    let Some(resolved) = interaction::resolve(
        &state.db,
        &state.versions,
        &snapshot.keys,
        handle,
        state.clock.now_secs(),
    )
    .await?
    .filter(|r| r.claims.kind == Kind::Handle) else {
        return Ok(None);
    };
    let Some(id) = resolved.payment.map(|p| p.id) else {
        return Ok(None);
    };
    Ok(store::payments::by_id(&state.db, id)
        .await?
        .map(|p| (resolved, p)))
}

async fn checkout(
    State(state): State<AppState>,
    lang: Lang,
    uri: Uri,
) -> Result<Response, AppError> {
    let snapshot = state.site.get().await;
    let Some((resolved, payment)) = handle_of(&state, &snapshot, &uri).await? else {
        return Err(AppError::NotFound);
    };
    let page = CheckoutPage {
        ctx: PageContext::plain(lang),
        amount: crate::domain::workflow::format_amount_for(
            lang,
            payment.amount_cents,
            &payment.currency,
        ),
        pending: PaymentState::parse(&payment.state) == Some(PaymentState::Pending),
        return_url: format!("/interaction/{}", resolved.link),
    };
    Ok((StatusCode::OK, html(&page)).into_response())
}

/// The payer pressed *Pay* or *Cancel*: the provider sends its notice, then the payer back.
async fn settle(State(state): State<AppState>, request: Request) -> Result<Response, AppError> {
    let snapshot = state.site.get().await;
    if cross_site(
        request.headers(),
        snapshot.settings.base_url.starts_with("https://"),
    ) {
        return Err(AppError::Forbidden);
    }
    let uri = request.uri().clone();
    let body = axum::body::to_bytes(request.into_body(), 1024)
        .await
        .map_err(|_| AppError::BadRequest)?;
    let outcome = match pairs(&body)
        .iter()
        .find(|(k, _)| k == "outcome")
        .map(|(_, v)| v.as_str())
    {
        Some("paid") => Outcome::Paid,
        Some("failed") => Outcome::Failed,
        _ => return Err(AppError::BadRequest),
    };
    let Some((resolved, payment)) = handle_of(&state, &snapshot, &uri).await? else {
        return Err(AppError::NotFound);
    };
    let notice = serde_json::to_vec(&Notice {
        payment: payment.reference,
        outcome,
        timestamp: state.clock.now_secs(),
    })
    .map_err(|e| AppError::internal("could not write a test notice", e))?;
    let signature = payment::sign(&snapshot.keys, &notice);
    match notice::deliver(&state, &snapshot, &Bytes::from(notice), &signature).await? {
        Received::Applied(_) => {}
        Received::Limited => return Ok(super::doorway::refusal(Lang::En)),
        Received::Refused => return Err(AppError::NotFound),
    }
    Ok(Redirect::to(&format!("/interaction/{}", resolved.link)).into_response())
}

#[cfg(test)]
mod tests {
    /// The doorway's guard counts every path under `PREFIX` before routing, as the handle
    /// after it: the route must be that handle, nothing else.
    #[test]
    fn the_route_is_the_handle_under_the_prefix() {
        assert_eq!(super::ROUTE, format!("{}{{handle}}", super::PREFIX));
    }
}
