//! The integrator API, `/api/v1/`: JSON in and out, every error JSON with a stable `error`
//! code. Callers present `Authorization: Bearer <token>`; each token has a token bucket of its
//! own (`crate::limits::bucket`), announced on every reply in the IETF RateLimit draft's fields, and a
//! request signed by a trusted integrator gets a bigger bucket (`crate::domain::api`).
//!
//! Every request but the description's passes `gate` (the rules in `crate::domain::api::gate`):
//! the token, then the bucket, then the signature when one is sent, and only then the handler,
//! which checks the call against the token's scope (`crate::domain::api::scope`). The doorway's
//! guard does not count the API, and the API's bucket does not count the doorway.
//!
//! A route is declared once, in [`ROUTE_TABLE`]: the router, the OpenAPI description and the
//! body caps are made from it. Its method and path are its handler's `#[utoipa::path]`.

use std::sync::LazyLock;

use axum::Router;
use axum::http::header::CONTENT_TYPE;
use axum::middleware::{from_fn, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, on};

use self::error::ApiError;
use self::route::Route;
use super::AppState;
use super::body::{API_JSON, DEFINITION, REASON, SMALL};
use crate::i18n::Lang;

mod doc;
mod error;
mod evidence;
pub(crate) mod extract;
mod fields;
mod files;
mod gate;
mod idempotent;
mod instances;
mod links;
pub mod refusal;
mod route;
mod webhooks;
mod wire;
mod workflows;

pub use self::doc::NO_NUL;
pub(crate) use self::error::body_refused;

/// Every API route is under it (a test checks the table); the fast refusal runs before routing
/// on every path under it (`http::front`).
pub const PREFIX: &str = "/api/v1/";

/// Every route of the API: its `#[utoipa::path]` (method, path, operation), its handler and the
/// most its body may hold.
static ROUTE_TABLE: &[Route] = &[
    Route::public::<__path_openapi>(|m| on(m, openapi), SMALL),
    Route::guarded::<workflows::__path_list>(|m| on(m, workflows::list), SMALL),
    Route::guarded::<workflows::__path_create>(|m| on(m, workflows::create), DEFINITION),
    Route::guarded::<workflows::__path_read>(|m| on(m, workflows::read), SMALL),
    Route::guarded::<workflows::__path_save>(|m| on(m, workflows::save), DEFINITION),
    Route::guarded::<instances::__path_start>(|m| on(m, instances::start), API_JSON),
    Route::guarded::<instances::__path_list>(|m| on(m, instances::list), SMALL),
    Route::guarded::<instances::__path_read>(|m| on(m, instances::read), SMALL),
    Route::guarded::<instances::__path_cancel>(|m| on(m, instances::cancel), REASON),
    Route::guarded::<instances::__path_reassign>(|m| on(m, instances::reassign), SMALL),
    Route::guarded::<files::__path_download>(|m| on(m, files::download), SMALL),
    Route::guarded::<evidence::__path_read>(|m| on(m, evidence::read), SMALL),
    Route::guarded::<links::__path_issue>(|m| on(m, links::issue), SMALL),
    Route::guarded::<links::__path_list>(|m| on(m, links::list), SMALL),
    Route::guarded::<links::__path_revoke>(|m| on(m, links::revoke), SMALL),
    Route::guarded::<webhooks::__path_create>(|m| on(m, webhooks::create), SMALL),
    Route::guarded::<webhooks::__path_list>(|m| on(m, webhooks::list), SMALL),
    Route::guarded::<webhooks::__path_delete>(|m| on(m, webhooks::delete), SMALL),
];

/// Every route's method and path, as [`ROUTE_TABLE`] declares them, in its order.
pub static ROUTES: LazyLock<Vec<(&'static str, String)>> = LazyLock::new(|| {
    ROUTE_TABLE
        .iter()
        .map(|r| (r.method().0, r.path()))
        .collect()
});

pub fn router(state: AppState) -> Router<AppState> {
    let mut public = Router::new();
    let mut guarded = Router::new();
    for (route, (_, path)) in ROUTE_TABLE.iter().zip(ROUTES.iter()) {
        let handler = (route.handler)(route.method().1);
        // Two routes on one path (a GET and a POST) are merged by axum into one.
        if route.guarded {
            guarded = guarded.route(path, handler);
        } else {
            public = public.route(path, handler);
        }
    }
    public
        .merge(guarded.route_layer(from_fn_with_state(state, gate::gate)))
        // Every other path under the prefix is the API's JSON 404, not the site's page; no
        // token needed to learn that nothing is there, and nothing is read.
        .route("/api/v1/{*rest}", any(unknown_path))
        .layer(from_fn(error::json_errors))
}

/// The most a body may hold on an API route, as the router matched it (`http::body`): the
/// largest of its methods' caps.
pub fn cap(route: &str) -> usize {
    ROUTE_TABLE
        .iter()
        .zip(ROUTES.iter())
        .filter(|(_, (_, path))| path == route)
        .map(|(r, _)| r.cap)
        .max()
        .unwrap_or(SMALL)
}

async fn unknown_path(lang: Lang) -> ApiError {
    ApiError::not_found(lang)
}

/// This description (`doc`): public, as a token is not needed to learn how to use one.
#[utoipa::path(
    get,
    path = "/api/v1/openapi.json",
    operation_id = "openapi",
    summary = "This description",
    security(()),
    responses((status = 200, description = "OpenAPI 3.1", content_type = "application/json"))
)]
async fn openapi() -> Response {
    ([(CONTENT_TYPE, "application/json")], description()).into_response()
}

/// The OpenAPI description as served (the tests hold every answer to it): made once, on the
/// first request for it.
pub fn description() -> &'static str {
    static JSON: LazyLock<String> = LazyLock::new(|| doc::served(ROUTE_TABLE).to_string());
    &JSON
}

#[cfg(test)]
mod tests {
    use super::{PREFIX, ROUTE_TABLE, ROUTES};

    /// The fast refusal runs before routing on every path under `PREFIX`: every route of the
    /// API must be under it, or a caller over its bucket would reach that route unrefused.
    #[test]
    fn every_route_is_under_the_prefix() {
        for (_, path) in ROUTES.iter() {
            assert!(path.starts_with(PREFIX), "{path}");
        }
    }

    /// A route is one method on one path, and no two routes are the same.
    #[test]
    fn every_route_is_one_method_and_none_is_declared_twice() {
        for route in ROUTE_TABLE {
            assert_eq!(route.methods().len(), 1, "{}", route.path());
        }
        let mut seen = ROUTES.clone();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), ROUTES.len());
    }

    #[test]
    fn every_cap_is_within_the_largest() {
        for (_, path) in ROUTES.iter() {
            assert!(super::cap(path) <= crate::http::body::LARGEST, "{path}");
        }
        assert_eq!(super::cap("/api/v1/instances"), crate::http::body::API_JSON);
        assert_eq!(super::cap("/api/v1/nothing"), crate::http::body::SMALL);
    }
}
