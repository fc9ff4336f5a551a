//! *Hand over* on an instance's page: a participant who still has something to answer is given
//! to a new contact (`instance::reassign`): their old links stop working and the new contact
//! is emailed. A refusal draws the instance page again with what was typed, the error beside
//! its field, and nothing saved.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use tower_sessions::Session;

use super::instances::{ShowQuery, Typed, show_page};
use crate::domain::instance::{self, Actor, Refusal};
use crate::domain::mail::{ContactInput, Part};
use crate::http::AppState;
use crate::http::context::{PageContext, flash, html};
use crate::http::error::{AppError, Result};
use crate::http::extract::Path;
use crate::http::form::Form;

/// The form field a refusal is about.
fn field_of(refusal: &Refusal) -> &'static str {
    match refusal {
        Refusal::Contact(c) => match c.part {
            Part::Email => "email",
            Part::Name => "name",
            Part::Lang => "lang",
            Part::Participant => "participant",
        },
        Refusal::NoAddress(_) => "email",
        _ => "participant",
    }
}

pub async fn hand_over(
    State(state): State<AppState>,
    ctx: PageContext,
    session: Session,
    Path(id): Path<i64>,
    Form(typed): Form<Typed>,
) -> Result<Response> {
    let contact = ContactInput {
        participant: typed.participant.clone(),
        email: typed.email.clone(),
        name: typed.name.clone(),
        lang: typed.lang.clone(),
    };
    let by = Actor::Admin(ctx.admin.clone().unwrap_or_default());
    let refusal = match instance::reassign(&state.db, &state.versions, id, &contact, &by).await {
        Ok(()) => {
            flash(&session, "instance-handed-over").await?;
            return Ok(Redirect::to(&format!("/admin/instances/{id}")).into_response());
        }
        Err(e) => e.refusal()?,
    };
    if let Refusal::InstanceUnknown(_) = refusal {
        return Err(AppError::NotFound);
    }
    let mut page = show_page(&state, ctx, id, &ShowQuery::default()).await?;
    let message = page.ctx.msg(&refusal.message());
    page.handover = Typed {
        errors: vec![(field_of(&refusal).to_owned(), message)],
        ..typed
    };
    let mut response = html(&page);
    *response.status_mut() = match refusal {
        Refusal::InstanceOver => StatusCode::CONFLICT,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    };
    Ok(response)
}
