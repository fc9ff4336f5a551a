//! What each administrator's role lets them send: the one check every admin form passes after
//! the sign-in check. Reading is open to every role (a page hides from a viewer what it must:
//! the forms it cannot use, a secret shown once); a POST needs the role its route is classed
//! under here. A route missing from the table needs an owner, so a form added later is closed
//! until someone decides who may use it (tests/it/roles.rs checks the table against the router).

use axum::extract::{MatchedPath, Request};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::domain::roles::Role;
use crate::http::context::SignedIn;
use crate::http::error::AppError;

/// Paths every signed-in administrator may post to, whatever their role: signing out, and
/// their own account (their password, their second factor, their sessions).
pub const OWN_ACCOUNT: &[&str] = &["/admin/account", "/admin/logout", "/admin/admins/password"];

/// The role each admin form needs, by its route's path as `mod.rs` declares it.
pub const POSTS: &[(&str, Role)] = &[
    ("/admin/workflows/new", Role::Editor),
    ("/admin/workflows/{id}/edit", Role::Editor),
    ("/admin/workflows/{id}/delete", Role::Editor),
    (
        "/admin/workflows/{id}/versions/{number}/delete",
        Role::Editor,
    ),
    ("/admin/instances/new", Role::Editor),
    ("/admin/instances/{id}/links", Role::Editor),
    ("/admin/instances/{id}/revoke", Role::Editor),
    ("/admin/instances/{id}/handover", Role::Editor),
    ("/admin/instances/{id}/cancel", Role::Editor),
    ("/admin/instances/{id}/links/{link}/revoke", Role::Editor),
    ("/admin/webhooks", Role::Editor),
    ("/admin/webhooks/{id}/delete", Role::Editor),
    ("/admin/webhooks/{id}/enable", Role::Editor),
    ("/admin/webhooks/{id}/disable", Role::Editor),
    ("/admin/webhooks/{id}/retry", Role::Editor),
    (
        "/admin/webhooks/{id}/deliveries/{delivery}/again",
        Role::Editor,
    ),
    ("/admin/config/orchestra", Role::Owner),
    ("/admin/config/orchestra/interaction", Role::Owner),
    (super::keys::PATH, Role::Owner),
    ("/admin/reports/status/keys/resend", Role::Owner),
    ("/admin/config/api", Role::Owner),
    ("/admin/config/api/{name}/revoke", Role::Owner),
    ("/admin/admins", Role::Owner),
    ("/admin/admins/{id}/reset", Role::Owner),
    ("/admin/admins/{id}/disable", Role::Owner),
    ("/admin/admins/{id}/enable", Role::Owner),
    ("/admin/admins/{id}/remove", Role::Owner),
    ("/admin/admins/{id}/unlock", Role::Owner),
    ("/admin/admins/{id}/role", Role::Owner),
];

/// Whether a route is one's own account's, open to every role.
pub fn is_own_account(route: &str) -> bool {
    OWN_ACCOUNT.iter().any(|p| {
        route
            .strip_prefix(p)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

/// The least role that may post to a route (its path as the router matched it).
pub fn needed(route: &str) -> Role {
    if is_own_account(route) {
        return Role::Viewer;
    }
    POSTS
        .iter()
        .find(|(path, _)| *path == route)
        .map_or(Role::Owner, |(_, role)| *role)
}

/// Whether a request only reads: it changes nothing, so every role may send it.
fn reads(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Refuses a post the signed-in administrator's role does not allow, with the themed 403,
/// before its handler runs (so nothing is changed, nor read from the form).
pub async fn enforce(request: Request, next: Next) -> Response {
    if reads(request.method()) {
        return next.run(request).await;
    }
    let route = request.extensions().get::<MatchedPath>().map_or_else(
        || request.uri().path().to_owned(),
        |m| m.as_str().to_owned(),
    );
    let role = request
        .extensions()
        .get::<SignedIn>()
        .map_or(Role::Viewer, |me| me.role);
    if role < needed(&route) {
        let id = request.extensions().get::<SignedIn>().map(|me| me.id);
        tracing::info!(admin = ?id, role = role.as_str(), route, "refused: the role does not allow it");
        return AppError::RoleForbidden.into_response();
    }
    next.run(request).await
}
