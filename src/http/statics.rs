//! The stylesheet and the one script, compiled in and served before any limiter. No page has
//! inline script or style: the Content-Security-Policy forbids it.

use axum::Router;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::IntoResponse;
use axum::routing::get;

use super::AppState;

const STYLE: &str = include_str!("../../static/style.css");
const SCRIPT: &str = include_str!("../../static/orchestra.js");
const FAVICON: &str = include_str!("../../static/favicon.svg");

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/static/style.css", get(style))
        .route("/static/orchestra.js", get(script))
        // Browsers ask for /favicon.ico whatever the page says; both names get the one SVG.
        .route("/favicon.svg", get(favicon))
        .route("/favicon.ico", get(favicon))
}

async fn style() -> impl IntoResponse {
    (
        [
            (CONTENT_TYPE, "text/css; charset=utf-8"),
            (CACHE_CONTROL, "public, max-age=3600"),
        ],
        STYLE,
    )
}

async fn script() -> impl IntoResponse {
    (
        [
            (CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (CACHE_CONTROL, "public, max-age=3600"),
        ],
        SCRIPT,
    )
}

async fn favicon() -> impl IntoResponse {
    (
        [
            (CONTENT_TYPE, "image/svg+xml"),
            (CACHE_CONTROL, "public, max-age=86400"),
        ],
        FAVICON,
    )
}
