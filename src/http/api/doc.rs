//! The OpenAPI description served at `/api/v1/openapi.json`: the routes' operations, each from
//! its handler's `#[utoipa::path]` (listed once, in `super::ROUTE_TABLE`), and the types they read
//! and send (`wire`).
//!
//! What every route behind `gate` shares is added here once rather than on each route: the
//! bearer scheme, the `401` of a token `gate` does not accept, the `429`s of the bucket and of an
//! address sending unknown tokens, and the RateLimit fields on every other answer. So a new route
//! behind `gate` is described with them without anyone remembering to.

use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::Operation;
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Type};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, RefOr};
use utoipa::{Modify, OpenApi};

use super::route::Route;
use super::wire;

/// The description of these routes.
pub fn openapi(routes: &[Route]) -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi();
    let mut schemas = Vec::new();
    for route in routes {
        let mut operation = route.operation();
        if route.guarded {
            guarded(&mut operation);
        }
        doc.paths
            .add_path_operation(route.path(), route.methods(), operation);
        route.schemas(&mut schemas);
    }
    doc.components
        .get_or_insert_with(Default::default)
        .schemas
        .extend(schemas);
    doc
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Orchestra integrator API",
        version = "1",
        description = "Every token has a scope: abilities (read, start, links), a reach (own: the instances it started; all: every instance) and optionally the workflows it may work with. A call needing an ability the token lacks is 403 forbidden_scope; an instance beyond its reach is 404 not_found, as a missing one is. With the API's request limit on, every answer past authentication carries the IETF RateLimit draft's fields. See docs/api.md."
    ),
    servers((url = "/")),
    components(schemas(wire::Error, wire::RateLimited)),
    modifiers(&Bearer),
    security(("bearer" = []))
)]
struct ApiDoc;

/// The bearer scheme every route behind `gate` names.
struct Bearer;

impl Modify for Bearer {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        doc.components
            .get_or_insert_with(Default::default)
            .add_security_scheme(
                "bearer",
                SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
            );
    }
}

/// Adds what every route behind `gate` shares (see the module's comment).
fn guarded(operation: &mut Operation) {
    let responses = &mut operation.responses.responses;
    for response in responses.values_mut() {
        if let RefOr::T(response) = response {
            with_rate_fields(response);
        }
    }
    responses.insert("401".into(), RefOr::T(unauthorized()));
    responses.insert("429".into(), RefOr::T(too_many()));
    // The refusals of a body not read whole (`super::error::body_refused`).
    if operation.request_body.is_some() {
        for (status, description) in BODY_REFUSALS {
            responses.insert(status.into(), RefOr::T(error(description)));
        }
        // `super::extract::Read`'s refusal of a body that is not declared JSON.
        responses.insert("415".into(), RefOr::T(error(UNSUPPORTED)));
    }
}

fn string_header(description: &str) -> utoipa::openapi::header::Header {
    HeaderBuilder::new()
        .schema(ObjectBuilder::new().schema_type(Type::String))
        .description(Some(description))
        .build()
}

fn with_rate_fields(response: &mut Response) {
    response.headers.insert(
        "RateLimit-Policy".into(),
        string_header(
            "IETF RateLimit draft: \"token\";q=<burst>;w=<seconds to refill the burst>; sent while the API's request limit is on",
        ),
    );
    response.headers.insert(
        "RateLimit".into(),
        string_header(
            "IETF RateLimit draft: \"token\";r=<remaining>;t=<seconds until full; on a 429, Retry-After's seconds>; sent while the API's request limit is on",
        ),
    );
}

fn json_of(schema: impl Into<RefOr<utoipa::openapi::schema::Schema>>) -> utoipa::openapi::Content {
    ContentBuilder::new().schema(Some(schema)).build()
}

/// Answered by `gate` before the bucket: no RateLimit fields.
fn unauthorized() -> Response {
    error("missing, bad or revoked token; or a bad signature (error: unauthorized, bad_signature)")
}

const UNSUPPORTED: &str = "a body whose Content-Type is not application/json (nor another +json type); an empty body needs none (error: unsupported_media_type)";

/// What `super::error::body_refused` answers, per status.
const BODY_REFUSALS: [(&str, &str); 4] = [
    (
        "400",
        "the body ended before its declared length (error: bad_request)",
    ),
    (
        "408",
        "the body did not arrive within the body deadline; the connection is closed (error: timeout)",
    ),
    (
        "413",
        "the body is longer than this route takes; the connection is closed (error: too_large)",
    ),
    (
        "503",
        "the server holds all the request bodies it may; try again in a moment (error: busy)",
    ),
];

fn error(description: &str) -> Response {
    ResponseBuilder::new()
        .description(description)
        .content("application/json", json_of(Ref::from_schema_name("Error")))
        .build()
}

fn too_many() -> Response {
    let mut response = ResponseBuilder::new()
        .description("the token's bucket is empty (rate_limited), or this address sent too many tokens this site does not know (error: too_many_failures)")
        .content(
            "application/json",
            json_of(
                OneOfBuilder::new()
                    .item(Ref::from_schema_name("RateLimited"))
                    .item(Ref::from_schema_name("Error")),
            ),
        )
        .header(
            "Retry-After",
            HeaderBuilder::new()
                .schema(
                    ObjectBuilder::new()
                        .schema_type(Type::Integer)
                        .minimum(Some(1)),
                )
                .description(Some("whole seconds, the same number as the body's"))
                .build(),
        )
        .build();
    with_rate_fields(&mut response);
    response
}
