//! Signing in through the OpenID Provider (`domain::oidc`): the sign-in page's button starts
//! the flow here, and the provider sends the browser back to the callback. Every refusal is
//! the sign-in page again with one plain message; the code and the tokens are never logged.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use tower_sessions::Session;

use super::auth::{Destination, finish, login_page, safe_destination};
use crate::domain::audit::{Actor, Event};
use crate::domain::login;
use crate::domain::oidc::{CALLBACK_PATH, Callback, Pending, Refusal};
use crate::http::AppState;
use crate::http::client::ClientAddr;
use crate::http::context::PageContext;
use crate::http::error::{AppError, Result};
use crate::http::extract::Query;

/// The session's key for the sign-in started and not yet finished.
const PENDING_KEY: &str = "oidc_pending";

/// The redirect URI registered at the provider: the site's base URL and the callback's path.
fn redirect_uri(base_url: &str) -> String {
    format!("{}{CALLBACK_PATH}", base_url.trim_end_matches('/'))
}

/// Sends the browser to the provider, keeping the state, nonce and PKCE verifier in its
/// session for the callback. A start writes a session row for a visitor nobody knows yet, so
/// it is counted per client address as a sign-in attempt is: the rows one address can make
/// are bounded by the sign-in limit.
pub async fn start(
    State(state): State<AppState>,
    ctx: PageContext,
    ClientAddr(client): ClientAddr,
    session: Session,
    Query(q): Query<Destination>,
) -> Result<Response> {
    let Some(oidc) = state.oidc.clone() else {
        return Err(AppError::NotFound);
    };
    let snapshot = state.site.get().await;
    let address = login::address_key(&snapshot.keys, client);
    let _admitted = login::admit(&state.guard, &snapshot.settings, &address, None)
        .map_err(|_| AppError::TooManyAttempts)?;
    let destination = safe_destination(q.destination()).to_owned();
    let base = snapshot.settings.base_url.clone();
    let now = state.clock.now_secs();
    match oidc
        .start(&redirect_uri(&base), destination.clone(), now)
        .await
    {
        Ok((url, pending)) => {
            session.insert(PENDING_KEY, pending).await?;
            Ok(Redirect::to(&url).into_response())
        }
        Err(refusal) => Ok(refused(&state, ctx, destination, refusal)),
    }
}

/// The provider's answer: counted per client address by the sign-in limits before anything
/// is checked; the flow is taken out of the session first, so a callback is answered once.
pub async fn callback(
    State(state): State<AppState>,
    ctx: PageContext,
    ClientAddr(client): ClientAddr,
    session: Session,
    audit: crate::http::audit::Audit,
    Query(answer): Query<Callback>,
) -> Result<Response> {
    let Some(oidc) = state.oidc.clone() else {
        return Err(AppError::NotFound);
    };
    let snapshot = state.site.get().await;
    let address = login::address_key(&snapshot.keys, client);
    let _admitted = login::admit(&state.guard, &snapshot.settings, &address, None)
        .map_err(|_| AppError::TooManyAttempts)?;
    let pending = session.remove::<Pending>(PENDING_KEY).await?;
    let destination = pending
        .as_ref()
        .map_or_else(|| "/admin".to_owned(), |p| p.destination.clone());
    let now = state.clock.now_secs();
    let redirect = redirect_uri(&snapshot.settings.base_url);
    match oidc
        .finish(&state.db, pending, answer, &redirect, now)
        .await?
    {
        Ok(admin) => {
            let actor = Actor::Admin {
                id: admin.id,
                name: admin.name.clone(),
            };
            audit.record_as(&actor, Event::SignedInOidc).await;
            finish(&state, &session, &admin, &destination, now).await
        }
        Err(refusal) => {
            // Who it was is not known (or not to be believed) when the provider's answer fails.
            audit.record_as(&Actor::Visitor, Event::SignInFailed).await;
            Ok(refused(&state, ctx, destination, refusal))
        }
    }
}

/// The sign-in page with the refusal's message: 503 when the provider could not be reached,
/// 401 otherwise.
fn refused(state: &AppState, ctx: PageContext, destination: String, refusal: Refusal) -> Response {
    tracing::info!(?refusal, "refused sign-in through the OpenID Provider");
    let name = state
        .oidc
        .as_ref()
        .map(|o| o.config.name.clone())
        .unwrap_or_default();
    let error = ctx.msg(&crate::i18n::Message::new(refusal.message_id()).arg("provider", name));
    let mut response = login_page(state, ctx, String::new(), destination, Some(error));
    *response.status_mut() = match refusal {
        Refusal::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::UNAUTHORIZED,
    };
    response
}
