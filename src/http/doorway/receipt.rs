//! Receipts under a link: `{link}/receipt/{line}`, the receipt of an answer given through that
//! link, counted by the guard as the link it is under (`guarded_credential`). Another link's
//! answer, or one whose words were erased, gets the one refusal.

use axum::http::HeaderValue;
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};

use super::{PREFIX, RECEIPT_SEGMENT, views};
use crate::domain::interaction::Resolved;
use crate::domain::receipts::{self, Outcome};
use crate::http::AppState;
use crate::http::context::PageContext;
use crate::http::error::AppError;
use crate::i18n::{Lang, Message};

/// The receipts the link's page offers: one per answer given through it, usually one.
pub(super) async fn offers(
    state: &AppState,
    resolved: &Resolved,
    ctx: &PageContext,
) -> Result<Vec<views::Offer>, AppError> {
    let Some(link_id) = resolved.link_id else {
        return Ok(Vec::new());
    };
    let lines =
        crate::store::receipts::lines_of_link(&state.db, resolved.instance.id, link_id).await?;
    let many = lines.len() > 1;
    Ok(lines
        .iter()
        .map(|line| views::Offer {
            href: format!("{PREFIX}{}/{RECEIPT_SEGMENT}{}", resolved.link, line.id),
            label: if many {
                ctx.msg(
                    &Message::new("doorway-receipt-download-step")
                        .arg("step", line.step_title.clone()),
                )
            } else {
                ctx.t("doorway-receipt-download")
            },
        })
        .collect())
}

/// The receipt of answer line `line` when the link `link` gave it, as a file to keep.
pub(super) async fn download(
    state: &AppState,
    lang: Lang,
    link: &str,
    line: &str,
    headers: &axum::http::HeaderMap,
) -> Result<Response, AppError> {
    let snapshot = state.site.get().await;
    let Ok(line) = line.parse::<i64>() else {
        return Ok(views::refused(lang));
    };
    let Some(resolved) = super::resolve(state, &snapshot, link).await? else {
        return Ok(views::refused(lang));
    };
    let refused = || {
        state.receipts.count(Outcome::Refused, 1);
        Ok(views::refused(lang))
    };
    let Some(link_id) = resolved.link_id else {
        return refused();
    };
    let line = crate::store::receipts::line(&state.db, resolved.instance.id, line).await?;
    let Some(line) = line.filter(|l| l.link_id == Some(link_id)) else {
        return refused();
    };
    // A `| verify email` step's answer is shown to no one before its code, its receipt neither.
    let step = usize::try_from(line.step_index)
        .ok()
        .and_then(|i| resolved.definition.steps.get(i));
    if step.is_some_and(|step| {
        super::code::asks(
            step,
            &resolved,
            headers,
            &snapshot.keys,
            state.clock.now_secs(),
        )
    }) {
        return refused();
    }
    let issued = receipts::issue(
        &state.db,
        &snapshot.keys,
        &snapshot.settings.base_url,
        &line,
    )
    .await?;
    let Some(receipt) = issued else {
        return refused();
    };
    state.receipts.count(Outcome::Downloaded, 1);
    let disposition = format!("attachment; filename=\"{}\"", receipt.file_name());
    let mut response = receipt.token.into_response();
    let headers = response.headers_mut();
    // RFC 7515's media type of a compact JWS.
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/jose"));
    if let Ok(value) = HeaderValue::from_str(&disposition) {
        headers.insert(CONTENT_DISPOSITION, value);
    }
    // It holds the answer: no shared cache keeps it.
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}
