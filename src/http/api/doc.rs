//! The OpenAPI description served at `/api/v1/openapi.json`: the routes' operations, each from
//! its handler's `#[utoipa::path]` (listed once, in `super::ROUTE_TABLE`), and the types they read
//! and send (`wire`).
//!
//! What every route behind `gate` shares is added here once rather than on each route: the
//! bearer scheme, the `401` of a token `gate` does not accept, the `429`s of the bucket and of an
//! address sending unknown tokens, and the RateLimit fields on every other answer. So a new route
//! behind `gate` is described with them without anyone remembering to.
//!
//! So is what the handlers' readers do alike for every call: an empty query field is the one
//! left out (`extract::last`), and no text a body carries may hold a NUL (`extract::body`).
//! schemathesis (`.ci/schemathesis`) holds the server to all of it.

use serde_json::Value;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{Operation, ParameterIn};
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
        may_be_empty(&mut operation);
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

/// A link: the operation and status it starts from, the operation it leads to, and each of that
/// one's path parameters with the runtime expression that fills it.
type Link = (
    &'static str,
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

/// What an answer leads to (OpenAPI links): from an operation's answer of a status, the
/// operations it names, each with its path's parameters taken from the call and its answer.
/// Clients and schemathesis's stateful phase follow them.
const LINKS: &[Link] = &[
    (
        "startInstance",
        "201",
        "readInstance",
        &[("id", "$response.body#/id")],
    ),
    (
        "startInstance",
        "201",
        "cancelInstance",
        &[("id", "$response.body#/id")],
    ),
    (
        "startInstance",
        "201",
        "issueLink",
        &[("id", "$response.body#/id")],
    ),
    (
        "startInstance",
        "201",
        "reassignParticipant",
        &[("id", "$response.body#/id")],
    ),
    (
        "createWorkflow",
        "201",
        "readWorkflow",
        &[("name", "$response.body#/name")],
    ),
    (
        "createWorkflow",
        "201",
        "saveWorkflow",
        &[("name", "$response.body#/name")],
    ),
    (
        "listInstances",
        "200",
        "readInstance",
        &[("id", "$response.body#/instances/0/id")],
    ),
    (
        "issueLink",
        "201",
        "revokeLink",
        &[("id", "$request.path.id"), ("link", "$response.body#/id")],
    ),
    (
        "createWebhook",
        "201",
        "deleteWebhook",
        &[("id", "$response.body#/id")],
    ),
];

/// Adds [`LINKS`] to the answers they start from. Written as JSON: utoipa's `Link` spells its
/// fields in snake case (`operation_id`), which OpenAPI does not read.
fn linked(doc: &mut Value) {
    let operations = doc["paths"]
        .as_object_mut()
        .into_iter()
        .flat_map(|p| p.values_mut())
        .filter_map(Value::as_object_mut)
        .flat_map(|item| item.values_mut());
    for operation in operations {
        let from = operation["operationId"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        for (_, status, to, parameters) in LINKS.iter().filter(|l| l.0 == from) {
            let Some(response) = operation
                .get_mut("responses")
                .and_then(|r| r.get_mut(*status))
                .and_then(Value::as_object_mut)
            else {
                continue;
            };
            let parameters: serde_json::Map<String, Value> = parameters
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).into()))
                .collect();
            let links = response
                .entry("links")
                .or_insert_with(|| serde_json::json!({}));
            links[*to] = serde_json::json!({ "operationId": to, "parameters": parameters });
        }
    }
}

/// The description as served: [`openapi`], and what JSON Schema says that utoipa cannot.
pub fn served(routes: &[Route]) -> Value {
    let mut json = serde_json::to_value(openapi(routes)).expect("the description serializes");
    texts_hold_no_nul(&mut json);
    linked(&mut json);
    json
}

/// What a text a request body carries matches: anything but a NUL, which PostgreSQL cannot
/// store (`extract::body` refuses it in any text it reads, a map's keys included).
pub const NO_NUL: &str = "^[^\\x00]*$";

/// `extract::last`: an empty query field is the one left out (`?state=` lists every state), which
/// OpenAPI says with `allowEmptyValue`.
fn may_be_empty(operation: &mut Operation) {
    let query = operation.parameters.iter_mut().flatten();
    for parameter in query.filter(|p| p.parameter_in == ParameterIn::Query) {
        parameter
            .extensions
            .get_or_insert_with(Default::default)
            .insert("allowEmptyValue".into(), true.into());
    }
}

/// Adds [`NO_NUL`] to every text of every request body: each string without a pattern or a list
/// of its own (those already leave NUL out), and each map's keys; in the body's own schema and in
/// every schema it names, however deep.
fn texts_hold_no_nul(doc: &mut Value) {
    let mut bodies = Vec::new();
    for item in doc["paths"]
        .as_object_mut()
        .into_iter()
        .flat_map(|p| p.values_mut())
    {
        for operation in item
            .as_object_mut()
            .into_iter()
            .flat_map(|o| o.values_mut())
        {
            // `get_mut`, not indexing, which would add what is missing as null.
            let content = operation
                .get_mut("requestBody")
                .and_then(|b| b.get_mut("content"))
                .and_then(Value::as_object_mut);
            let media = content.into_iter().flat_map(|c| c.values_mut());
            bodies.extend(media.filter_map(|m| m.get_mut("schema")));
        }
    }
    let mut named = std::collections::BTreeSet::new();
    for body in bodies {
        no_nul_in(body, &mut named);
    }
    // The schemas bodies name, and those they name in turn, until none is new.
    let mut done = std::collections::BTreeSet::new();
    while let Some(name) = named.iter().find(|n| !done.contains(*n)).cloned() {
        done.insert(name.clone());
        let schema = doc
            .get_mut("components")
            .and_then(|c| c.get_mut("schemas"))
            .and_then(|s| s.get_mut(name.as_str()));
        if let Some(schema) = schema {
            no_nul_in(schema, &mut named);
        }
    }
}

/// [`texts_hold_no_nul`] on one schema, noting the schemas it names in `named`.
fn no_nul_in(schema: &mut Value, named: &mut std::collections::BTreeSet<String>) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    if let Some(name) = object.get("$ref").and_then(Value::as_str) {
        named.insert(name.trim_start_matches("#/components/schemas/").to_owned());
    }
    let is_text = match object.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
        _ => false,
    };
    if is_text && !object.contains_key("pattern") && !object.contains_key("enum") {
        object.insert("pattern".into(), NO_NUL.into());
    }
    if object
        .get("additionalProperties")
        .is_some_and(Value::is_object)
    {
        object.insert(
            "propertyNames".into(),
            serde_json::json!({ "pattern": NO_NUL }),
        );
    }
    let properties = object.get_mut("properties").and_then(Value::as_object_mut);
    for inner in properties.into_iter().flat_map(|p| p.values_mut()) {
        no_nul_in(inner, named);
    }
    for key in ["items", "additionalProperties", "propertyNames"] {
        if let Some(inner) = object.get_mut(key) {
            no_nul_in(inner, named);
        }
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        for inner in object
            .get_mut(key)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            no_nul_in(inner, named);
        }
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Orchestra integrator API",
        version = "1",
        description = "Every token has a scope: abilities (read, start, links, workflows), a reach (own: the instances it started; all: every instance) and optionally the workflows it may work with. A call needing an ability the token lacks is 403 forbidden_scope; an instance beyond its reach is 404 not_found, as a missing one is. With the API's request limit on, every answer past authentication carries the IETF RateLimit draft's fields. See docs/api.md."
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
        .description("the token's bucket is empty (rate_limited), or this address sent too many tokens this site does not know (error: too_many_failures), or a call that emails a link met an hourly email quota (error: email_rate)")
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

#[cfg(test)]
mod tests {
    use serde_json::Value;

    /// Every link names an operation the description has, and gives it each parameter of its
    /// path and no other, from an answer the linking operation lists.
    #[test]
    fn every_link_leads_to_an_operation_with_its_path_filled() {
        let doc: Value = serde_json::from_str(super::super::description()).unwrap();
        let operations: Vec<(&String, &Value)> = doc["paths"]
            .as_object()
            .unwrap()
            .iter()
            .flat_map(|(path, item)| item.as_object().unwrap().values().map(move |o| (path, o)))
            .collect();
        let by_id = |id: &str| {
            operations
                .iter()
                .find(|(_, o)| o["operationId"] == id)
                .unwrap_or_else(|| panic!("no operation {id}"))
        };
        let mut links = 0;
        for (from, status, to, _) in super::LINKS {
            let (_, operation) = by_id(from);
            let described = &operation["responses"][status]["links"][to];
            assert_eq!(described["operationId"], *to, "{from} {status} -> {to}");
            let (path, _) = by_id(to);
            let mut wanted: Vec<&str> = path
                .split('/')
                .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
                .collect();
            let mut given: Vec<&str> = described["parameters"]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            wanted.sort();
            given.sort();
            assert_eq!(given, wanted, "{from} -> {to}");
            links += 1;
        }
        assert_eq!(links, super::LINKS.len());
    }
}
