//! The stylesheet and the one script, compiled in and served before any limiter. No page has
//! inline script or style: the Content-Security-Policy forbids it.

use axum::Router;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::IntoResponse;
use axum::routing::get;

use super::AppState;

const STYLE: &str = include_str!("../../static/style.css");
const SCRIPT: &str = include_str!("../../static/orchestra.js");

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/static/style.css", get(style))
        .route("/static/orchestra.js", get(script))
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
