//! The doorway's side of a payment: sending the payer to the provider, and showing where the
//! payment stands when they come back. Only the provider's notice (`http::notice`) pays.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};

use super::views::{self, Notice};
use crate::domain::interaction::payment::{self, PaymentState};
use crate::domain::interaction::{Invalid, Resolved};
use crate::domain::site::Snapshot;
use crate::domain::workflow::Step;
use crate::http::AppState;
use crate::http::context::PageContext;
use crate::http::error::AppError;

/// Starts (or joins) the step's payment and sends the payer to the provider.
pub async fn start(
    state: &AppState,
    snapshot: &Snapshot,
    ctx: PageContext,
    resolved: &Resolved,
    step: &Step,
    branch: &str,
) -> Result<Response, AppError> {
    if !snapshot.settings.test_provider {
        // No provider to pay through: the step stays as it is.
        return Ok(views::step(
            ctx,
            views::At {
                now: state.clock.now_secs(),
                // A payment step has no file field.
                max_file_bytes: 0,
            },
            resolved,
            Invalid {
                errors: vec![crate::i18n::Message::new("doorway-payment-unavailable")],
                ..Invalid::default()
            },
            None,
            &[],
            StatusCode::SERVICE_UNAVAILABLE,
        ));
    }
    let handle = payment::start(
        &state.db,
        &snapshot.keys,
        resolved,
        step,
        branch,
        state.clock.now_secs(),
    )
    .await?;
    Ok(Redirect::to(&format!("/test-provider/{handle}")).into_response())
}

/// The payer is back from the provider on a handle: show where the payment stands. Paying
/// happened, or will, through the provider's notice.
pub fn returned(ctx: PageContext, now: i64, resolved: &Resolved) -> Result<Response, AppError> {
    let state = resolved
        .payment
        .as_ref()
        .map(|p| p.state)
        .ok_or(AppError::NotFound)?;
    Ok(match state {
        PaymentState::Paid => views::done(
            ctx,
            resolved,
            "doorway-payment-confirmed-title",
            "doorway-payment-confirmed",
        ),
        PaymentState::Pending => views::waiting(ctx, resolved),
        // Its instance was cancelled, which voids its handles too: not reached through one.
        PaymentState::Cancelled => {
            views::done(ctx, resolved, "doorway-closed-title", "doorway-cancelled")
        }
        PaymentState::Failed => views::step(
            ctx,
            views::At {
                now,
                // A payment step has no file field.
                max_file_bytes: 0,
            },
            resolved,
            Invalid::default(),
            Some(Notice::PaymentFailed),
            &[],
            StatusCode::OK,
        ),
    })
}
