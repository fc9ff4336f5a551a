//! `/.well-known/jwks.json`: the public keys receipts are signed under (RFC 7517), the current
//! one and every older one, so a receipt verifies with any JOSE library long after a rotation.

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::header::CACHE_CONTROL;
use axum::response::IntoResponse;
use axum::routing::get;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::AppState;
use super::error::AppError;
use crate::domain::receipts::{self, Signer};

pub const PATH: &str = "/.well-known/jwks.json";

pub fn router() -> Router<AppState> {
    Router::new().route(PATH, get(show))
}

/// How long a process answers the key set it last read: anyone may ask for it, so a flood of
/// requests reads the database once in this time, not once each. A rotation changes the current
/// key, which the cache is keyed by, so a new key is never answered late.
const FRESH: Duration = Duration::from_secs(5);

/// The key sets last read, by their current key's id (one per site this process serves: one,
/// or a few in tests).
static CACHE: Mutex<Vec<(String, Instant, Value)>> = Mutex::new(Vec::new());

fn cached(kid: &str) -> Option<Value> {
    let cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    cache
        .iter()
        .find(|(k, at, _)| k == kid && at.elapsed() < FRESH)
        .map(|(_, _, set)| set.clone())
}

fn keep(kid: String, set: Value) {
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    cache.retain(|(k, at, _)| *k != kid && at.elapsed() < FRESH);
    cache.truncate(7);
    cache.push((kid, Instant::now(), set));
}

async fn show(State(state): State<AppState>) -> Result<impl IntoResponse, AppError> {
    let snapshot = state.site.get().await;
    let current = Signer::of(&snapshot.keys);
    let set = match cached(&current.kid) {
        Some(set) => set,
        None => {
            let mut keys = crate::store::receipts::public_keys(&state.db).await?;
            // The current key is published at start and by `keys rotate`; a site whose keys
            // changed some other way publishes it here, once.
            if !keys.iter().any(|k| k.kid == current.kid) {
                current.publish(&state.db).await?;
                keys = crate::store::receipts::public_keys(&state.db).await?;
            }
            let set = receipts::jwks(&keys);
            keep(current.kid.clone(), set.clone());
            set
        }
    };
    Ok(([(CACHE_CONTROL, "public, max-age=300")], Json(set)))
}
