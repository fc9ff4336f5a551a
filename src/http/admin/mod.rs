//! The admin area: everything behind a password. Sessions wrap the whole area; every POST
//! passes the CSRF check; every page but the login form passes the sign-in check.

use axum::Router;
use axum::middleware::from_fn_with_state;
use axum::routing::{get, post};

use super::AppState;
use super::csrf;

pub mod account;
pub mod admins;
pub mod audit;
pub mod auth;
pub mod confirm;
pub mod dashboard;
pub mod evidence;
pub mod handover;
pub mod instance_cancel;
pub mod instance_export;
pub mod instance_files;
pub mod instance_list;
pub mod instances;
pub mod keys;
pub mod oidc;
pub mod preview;
pub mod roles;
pub mod settings;
pub mod sizing;
pub mod status;
pub mod tokens;
pub mod two_step;
pub mod two_step_gate;
pub mod webhooks;
pub mod workflows;

pub fn router(state: AppState) -> Router<AppState> {
    let signed_in = Router::new()
        .route("/admin", get(dashboard::show))
        .route("/admin/logout", post(auth::logout))
        .route("/admin/workflows", get(workflows::list))
        .route(
            "/admin/workflows/new",
            get(workflows::new_form).post(workflows::create),
        )
        .route("/admin/workflows/{id}", get(workflows::show))
        .route(
            "/admin/workflows/{id}/edit",
            get(workflows::edit_form).post(workflows::save),
        )
        .route(
            "/admin/workflows/{id}/delete",
            get(workflows::delete_form).post(workflows::delete),
        )
        .route(
            "/admin/workflows/{id}/versions/{number}/delete",
            get(workflows::delete_version_form).post(workflows::delete_version),
        )
        .route("/admin/instances", get(instance_list::list))
        .route("/admin/instances.csv", get(instance_export::download))
        .route(
            "/admin/instances/new",
            get(instances::new_form).post(instances::start),
        )
        .route("/admin/instances/{id}", get(instances::show))
        .route("/admin/instances/{id}/links", post(instances::issue_link))
        .route(
            "/admin/instances/{id}/revoke",
            get(instances::revoke_form).post(instances::revoke),
        )
        .route("/admin/instances/{id}/handover", post(handover::hand_over))
        .route("/admin/instances/{id}/evidence", get(evidence::show))
        .route(
            "/admin/instances/{id}/evidence.json",
            get(evidence::download),
        )
        .route(
            "/admin/instances/{id}/files/{file}",
            get(instance_files::download),
        )
        .route(
            "/admin/instances/{id}/cancel",
            get(instance_cancel::cancel_form).post(instance_cancel::cancel),
        )
        .route(
            "/admin/instances/{id}/links/{link}/revoke",
            post(instances::revoke_link),
        )
        .route(
            "/admin/config/orchestra",
            get(settings::show).post(settings::save),
        )
        .route(
            "/admin/config/orchestra/interaction",
            get(settings::interaction_show).post(settings::interaction_save),
        )
        .route("/admin/reports/status", get(status::show))
        .route(keys::PATH, get(keys::show).post(keys::rotate))
        .route("/admin/reports/status/keys/resend", post(keys::resend))
        .route("/admin/config/api", get(tokens::list).post(tokens::create))
        .route(
            "/admin/config/api/{name}/revoke",
            get(tokens::revoke_form).post(tokens::revoke),
        )
        .route("/admin/admins", get(admins::list).post(admins::invite))
        .route(
            "/admin/admins/password",
            get(admins::password_form).post(admins::change_password),
        )
        .route("/admin/admins/{id}/reset", post(admins::reset))
        .route(
            "/admin/admins/{id}/disable",
            get(admins::disable_form).post(admins::disable),
        )
        .route("/admin/admins/{id}/enable", post(admins::enable))
        .route(
            "/admin/admins/{id}/remove",
            get(admins::remove_form).post(admins::remove),
        )
        .route("/admin/admins/{id}/unlock", post(admins::unlock))
        .route("/admin/admins/{id}/role", post(admins::change_role))
        .route(
            "/admin/webhooks",
            get(webhooks::list).post(webhooks::create),
        )
        .route("/admin/webhooks/{id}", get(webhooks::log))
        .route(
            "/admin/webhooks/{id}/delete",
            get(webhooks::delete_form).post(webhooks::delete),
        )
        .route("/admin/webhooks/{id}/enable", post(webhooks::enable))
        .route("/admin/webhooks/{id}/disable", post(webhooks::disable))
        .route("/admin/webhooks/{id}/retry", post(webhooks::retry))
        .route(
            "/admin/webhooks/{id}/deliveries/{delivery}/again",
            post(webhooks::send_again),
        )
        .route("/admin/account", get(account::show).post(account::save))
        .route("/admin/account/sessions", get(account::sessions))
        .route("/admin/account/sessions/end", post(account::end_others))
        .route(
            two_step::PATH,
            get(two_step::account_show).post(two_step::account_save),
        )
        .route(audit::PATH, get(audit::show))
        // An unknown page under /admin, for a signed-in administrator: the 404 with navigation.
        .route(UNKNOWN_PAGE, get(crate::http::error::not_found))
        // Every post needs the role its route is classed under (`roles::POSTS`).
        .route_layer(axum::middleware::from_fn(roles::enforce))
        // Inside the sign-in check: a signed-in session notes its browser's family once.
        .route_layer(axum::middleware::from_fn(account::mark_agent))
        // Inside the sign-in check: error pages keep the navigation (`auth::error_pages`).
        .route_layer(from_fn_with_state(state.clone(), auth::error_pages))
        .route_layer(from_fn_with_state(state.clone(), auth::require_admin));
    Router::new()
        .route("/admin/login", get(auth::login_form).post(auth::login))
        .route(crate::domain::oidc::START_PATH, get(oidc::start))
        .route(crate::domain::oidc::CALLBACK_PATH, get(oidc::callback))
        .route(
            two_step::CODE_PATH,
            get(two_step::code_form).post(two_step::code_check),
        )
        .merge(signed_in)
        // Outside the sign-in check, so a signed-out visitor's forged post is refused too.
        .route_layer(from_fn_with_state(state, csrf::check))
}

/// Field errors as the templates show them beside each field.
/// Every other path under /admin: the 404, with the navigation for a signed-in administrator.
pub const UNKNOWN_PAGE: &str = "/admin/{*rest}";

pub type FieldErrors = Vec<(String, String)>;

pub fn error_for<'a>(errors: &'a FieldErrors, field: &str) -> Option<&'a str> {
    errors
        .iter()
        .find(|(f, _)| f == field)
        .map(|(_, m)| m.as_str())
}
