//! `/.well-known/jwks.json`: the public keys receipts are signed under (RFC 7517), the current
//! one and every older one, so a receipt verifies with any JOSE library long after a rotation.

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::header::CACHE_CONTROL;
use axum::response::IntoResponse;
use axum::routing::get;

use super::AppState;
use super::error::AppError;
use crate::domain::receipts::{self, Signer};

pub const PATH: &str = "/.well-known/jwks.json";

pub fn router() -> Router<AppState> {
    Router::new().route(PATH, get(show))
}

async fn show(State(state): State<AppState>) -> Result<impl IntoResponse, AppError> {
    let snapshot = state.site.get().await;
    let mut keys = crate::store::receipts::public_keys(&state.db).await?;
    // The current key is published at start and by `keys rotate`; a site whose keys changed
    // some other way publishes it here, once.
    let current = Signer::of(&snapshot.keys);
    if !keys.iter().any(|k| k.kid == current.kid) {
        current.publish(&state.db).await?;
        keys = crate::store::receipts::public_keys(&state.db).await?;
    }
    Ok((
        [(CACHE_CONTROL, "public, max-age=300")],
        Json(receipts::jwks(&keys)),
    ))
}
