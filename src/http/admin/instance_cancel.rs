//! *Cancel this instance*: a page of its own that asks first, with an optional reason.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use tower_sessions::Session;

use super::instances::{actor, instance_row};
use crate::domain::instance;
use crate::http::AppState;
use crate::http::context::{FlashKind, PageContext, flash_as, html};
use crate::http::error::{AppError, Result};
use crate::http::extract::Path;
use crate::http::form::Form;
use crate::i18n::Message;
use crate::store::instances::InstanceRow;

#[derive(askama::Template)]
#[template(path = "admin/instance_cancel.html")]
struct CancelPage {
    ctx: PageContext,
    id: i64,
    title: String,
    reason: String,
    max_reason: usize,
    reason_error: Option<String>,
    /// Set when it cannot be cancelled (it has ended): why, and no form.
    refusal: Option<String>,
}

impl CancelPage {
    fn new(ctx: PageContext, instance: &InstanceRow) -> Self {
        let title = ctx.msg(
            &Message::new("instance-cancel-title")
                .arg("id", instance.id.to_string())
                .arg("title", instance.subject_title.clone()),
        );
        let refusal = instance
            .state
            .is_over()
            .then(|| ctx.msg(&instance::Refusal::Ended(instance.state).message()));
        Self {
            ctx,
            id: instance.id,
            title,
            reason: String::new(),
            max_reason: instance::MAX_REASON,
            reason_error: None,
            refusal,
        }
    }
}

pub async fn cancel_form(
    State(state): State<AppState>,
    ctx: PageContext,
    Path(id): Path<i64>,
) -> Result<Response> {
    let instance = instance_row(&state, id).await?;
    Ok(html(&CancelPage::new(ctx, &instance)))
}

#[derive(Deserialize)]
pub struct CancelForm {
    #[serde(default)]
    reason: String,
}

/// Cancels the instance (`instance::cancel`) and goes back to its page; a reason too long, or an
/// instance that ended meanwhile, draws this page again with what was typed and changes nothing.
pub async fn cancel(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    Path(id): Path<i64>,
    Form(form): Form<CancelForm>,
) -> Result<Response> {
    let refusal = match instance::cancel(&state.db, id, &actor(&ctx), &form.reason).await {
        Ok(()) => {
            flash_as(&session, FlashKind::Warning, "instance-cancelled").await?;
            return Ok(Redirect::to(&format!("/admin/instances/{id}")).into_response());
        }
        Err(e) => e.refusal()?,
    };
    if let instance::Refusal::InstanceUnknown(_) = refusal {
        return Err(AppError::NotFound);
    }
    let instance = instance_row(&state, id).await?;
    let mut page = CancelPage::new(ctx, &instance);
    page.reason = form.reason;
    if refusal == instance::Refusal::ReasonTooLong {
        page.reason_error = Some(page.ctx.msg(&refusal.message()));
    }
    let mut response = html(&page);
    *response.status_mut() = match refusal {
        instance::Refusal::ReasonTooLong => StatusCode::UNPROCESSABLE_ENTITY,
        _ => StatusCode::CONFLICT,
    };
    Ok(response)
}
