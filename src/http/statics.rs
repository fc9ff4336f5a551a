//! The stylesheet, compiled in and served before any limiter.

use axum::Router;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::IntoResponse;
use axum::routing::get;

use super::AppState;

const STYLE: &str = include_str!("../../static/style.css");

pub fn router() -> Router<AppState> {
    Router::new().route("/static/style.css", get(style))
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
