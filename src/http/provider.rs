//! The built-in test payment provider: a page of its own, clearly labelled as a test, that
//! sends the payer back to the doorway on the continuation handle it was given. No money
//! moves; a real provider would sign its return, which this one does not need to.

use axum::Router;
use axum::http::StatusCode;
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;

use super::AppState;
use super::context::{PageContext, html};
use super::doorway::credential_headers;
use super::extract::{Path, Query};
use crate::i18n::Lang;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/test-provider/{handle}", get(checkout))
        .layer(middleware::map_response(credential_headers))
}

#[derive(Deserialize)]
struct Checkout {
    amount: Option<String>,
    currency: Option<String>,
}

#[derive(askama::Template)]
#[template(path = "provider.html")]
struct CheckoutPage {
    ctx: PageContext,
    amount: String,
    paid_url: String,
    cancel_url: String,
}

async fn checkout(lang: Lang, Path(handle): Path<String>, Query(q): Query<Checkout>) -> Response {
    // Only the shape is checked: the doorway verifies the handle when the payer comes back.
    if crate::capability::parse(&handle).is_none() {
        return super::error::AppError::NotFound.into_response();
    }
    let amount = format!(
        "{} {}",
        q.amount
            .filter(|a| a.len() <= 16 && a.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
            .unwrap_or_default(),
        q.currency
            .filter(|c| c.len() == 3 && c.bytes().all(|b| b.is_ascii_uppercase()))
            .unwrap_or_default()
    );
    let page = CheckoutPage {
        ctx: PageContext::plain(lang),
        amount,
        paid_url: format!("/interaction/{handle}?outcome=paid"),
        cancel_url: format!("/interaction/{handle}?outcome=cancelled"),
    };
    (StatusCode::OK, html(&page)).into_response()
}
