//! *Rotate keys*: a page of its own that asks first, reached from the status report, with the
//! choice to email every participant still asked a fresh link in the same action; and *Send
//! fresh links* alone, for a rotation made without them (`orchestra keys rotate` without
//! `--resend`).

use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use tower_sessions::Session;

use crate::domain::rotation;
use crate::http::AppState;
use crate::http::context::{PageContext, flash, html};
use crate::http::error::Result;
use crate::http::form::Form;
use crate::i18n::Message;

/// Where the page is.
pub const PATH: &str = "/admin/reports/status/keys";

#[derive(askama::Template)]
#[template(path = "admin/keys_rotate.html")]
struct RotatePage {
    ctx: PageContext,
    /// How many running instances a past rotation left with no working link, in words.
    without_link: String,
}

pub async fn show(State(state): State<AppState>, ctx: PageContext) -> Result<Response> {
    let count = rotation::without_working_link(&state.db, state.clock.now_secs()).await?;
    let message = Message::new("status-voided-links-value").arg("count", count.to_string());
    Ok(html(&RotatePage {
        without_link: ctx.msg(&message),
        ctx,
    }))
}

#[derive(Deserialize)]
pub struct RotateForm {
    /// "1" to email fresh links as well.
    #[serde(default)]
    resend: String,
}

/// Rotates the link keys (every administrator signs in again, this one too), then queues the
/// fresh links when asked.
pub async fn rotate(
    State(state): State<AppState>,
    ctx: PageContext,
    audit: crate::http::audit::Audit,
    Form(form): Form<RotateForm>,
) -> Result<Response> {
    rotation::rotate_keys(&state.db).await?;
    audit.record(crate::domain::audit::Event::KeysRotated).await;
    state.site.refresh().await;
    let by = ctx.admin.as_deref().unwrap_or("");
    tracing::warn!(by, "site keys rotated from the admin");
    if form.resend == "1" {
        let resent = rotation::resend(&state.db, &state.versions).await?;
        tracing::info!(
            emails = resent.emails,
            instances = resent.instances,
            "fresh links queued"
        );
    }
    Ok(Redirect::to("/admin/login").into_response())
}

/// Queues a fresh link email to every participant still asked, without rotating.
pub async fn resend(State(state): State<AppState>, session: Session) -> Result<Response> {
    let resent = rotation::resend(&state.db, &state.versions).await?;
    tracing::info!(
        emails = resent.emails,
        instances = resent.instances,
        "fresh links queued"
    );
    flash(&session, "keys-resent").await?;
    Ok(Redirect::to("/admin/reports/status").into_response())
}
