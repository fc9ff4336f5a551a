//! What declares one API route (`super::ROUTE_TABLE` lists them): its handler, its
//! `#[utoipa::path]` (method, path and OpenAPI operation, written once on the handler), its body
//! cap and whether `gate` stands before it. The router, the OpenAPI description and the body
//! caps are all made from these.

use axum::routing::{MethodFilter, MethodRouter};
use utoipa::openapi::RefOr;
use utoipa::openapi::path::{HttpMethod, Operation};
use utoipa::openapi::schema::Schema;

use crate::http::AppState;

/// The schemas an operation names, as utoipa collects them.
type Schemas = Vec<(String, RefOr<Schema>)>;

/// One route.
pub struct Route {
    /// The handler, routed for the method its operation names.
    pub handler: fn(MethodFilter) -> MethodRouter<AppState>,
    path: fn() -> String,
    methods: fn() -> Vec<HttpMethod>,
    operation: fn() -> Operation,
    schemas: fn(&mut Schemas),
    /// The most its body may hold (`http::body`).
    pub cap: usize,
    /// Whether `gate` stands before it (every route but the description).
    pub guarded: bool,
}

impl Route {
    /// A route behind `gate`: `D` is the handler's `#[utoipa::path]` (its `__path_` type).
    pub const fn guarded<D>(handler: fn(MethodFilter) -> MethodRouter<AppState>, cap: usize) -> Self
    where
        D: utoipa::Path + utoipa::__dev::SchemaReferences,
    {
        Self {
            handler,
            path: D::path,
            methods: D::methods,
            operation: D::operation,
            schemas: D::schemas,
            cap,
            guarded: true,
        }
    }

    /// A route anyone may call.
    pub const fn public<D>(handler: fn(MethodFilter) -> MethodRouter<AppState>, cap: usize) -> Self
    where
        D: utoipa::Path + utoipa::__dev::SchemaReferences,
    {
        Self {
            guarded: false,
            ..Self::guarded::<D>(handler, cap)
        }
    }

    /// The path, as the router and the description spell it.
    pub fn path(&self) -> String {
        (self.path)()
    }

    pub fn operation(&self) -> Operation {
        (self.operation)()
    }

    /// Adds the schemas its operation names to `into`.
    pub fn schemas(&self, into: &mut Schemas) {
        (self.schemas)(into)
    }

    /// Its method as HTTP spells it, and as the router names it.
    pub fn method(&self) -> (&'static str, MethodFilter) {
        let first = (self.methods)().into_iter().next();
        match first.unwrap_or(HttpMethod::Get) {
            HttpMethod::Get => ("GET", MethodFilter::GET),
            HttpMethod::Post => ("POST", MethodFilter::POST),
            HttpMethod::Put => ("PUT", MethodFilter::PUT),
            HttpMethod::Delete => ("DELETE", MethodFilter::DELETE),
            HttpMethod::Options => ("OPTIONS", MethodFilter::OPTIONS),
            HttpMethod::Head => ("HEAD", MethodFilter::HEAD),
            HttpMethod::Patch => ("PATCH", MethodFilter::PATCH),
            HttpMethod::Trace => ("TRACE", MethodFilter::TRACE),
        }
    }

    /// The methods its `#[utoipa::path]` names, as the description holds them.
    pub fn methods(&self) -> Vec<HttpMethod> {
        (self.methods)()
    }
}
