//! `/api/v1/webhooks`: a token's own webhook endpoints, made, listed and deleted.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;

use super::error::{ApiError, ApiResult};
use super::extract::{Id, Read, Who, body, caller, needs, snapshot_of};
use super::wire;
use crate::domain::api::scope::Ability;
use crate::domain::audit::Event;
use crate::domain::delivery::endpoints;
use crate::http::AppState;
use crate::http::audit::Audit;
use crate::i18n::{Lang, Message};
use crate::store;

#[utoipa::path(
    post,
    path = "/api/v1/webhooks",
    operation_id = "createWebhook",
    summary = "Register a webhook endpoint for the instances this token starts",
    description = "Needs the start ability. The endpoint is sent a signed message (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature) for each event it takes of the instances this token started, and of no other; it stops receiving when the token is revoked. The answer holds its signing secret, shown this once. The URL is checked as the administrators' are: https, to a public address. See docs/delivery.md.",
    request_body = wire::CreateWebhook,
    responses(
        (status = 201, description = "the endpoint, with its signing secret (shown this once)", body = wire::CreatedWebhook),
        (status = 403, description = "the token's scope lacks start (error: forbidden_scope), or it has as many endpoints as a token may (error: endpoint_cap)", body = wire::Error),
        (status = 422, description = "a URL that is not https to a public address, or an unknown event; `field` is url or events (error: invalid)", body = wire::Error),
    )
)]
pub async fn create(
    State(state): State<AppState>,
    lang: Lang,
    who: Who,
    audit: Audit,
    read: Read,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Start, lang)?;
    let bytes = read.json(lang)?;
    let input: wire::CreateWebhook = body(lang, &bytes)?;
    let Some(url) = input.url.filter(|u| !u.trim().is_empty()) else {
        return Err(ApiError::invalid(
            lang,
            "url",
            &Message::new("webhook-url-invalid"),
        ));
    };
    let events = input.events.unwrap_or_default().join(",");
    let keys = snapshot_of(&who)?.keys.clone();
    let made = endpoints::create_for(
        &state.db,
        &keys,
        &url,
        Some(events.as_str()),
        Some((
            token.id,
            snapshot_of(&who)?.settings.api_max_endpoints_per_token,
        )),
        state.webhooks_private_allowed(),
    )
    .await;
    let created = match made {
        Ok(created) => created,
        Err(e) => {
            let refusal = e.refusal()?;
            if let endpoints::Refusal::TooMany(_) = refusal {
                return Err(ApiError::new(
                    StatusCode::FORBIDDEN,
                    "endpoint_cap",
                    refusal.message().render(lang),
                ));
            }
            let field = match refusal {
                endpoints::Refusal::UnknownEvent(_) => "events",
                _ => "url",
            };
            return Err(ApiError::invalid(lang, field, &refusal.message()));
        }
    };
    audit.record(Event::WebhookCreated(created.id, url)).await;
    let row = store::webhooks::by_id(&state.db, created.id)
        .await?
        .ok_or_else(|| ApiError::not_found(lang))?;
    let shown = wire::Webhook::of(&row);
    let answer = wire::CreatedWebhook {
        id: shown.id,
        url: shown.url,
        events: shown.events,
        enabled: shown.enabled,
        failures: shown.failures,
        created_at: shown.created_at,
        secret: created.secret.reveal(),
    };
    Ok((StatusCode::CREATED, Json(answer)).into_response())
}

#[utoipa::path(
    get,
    path = "/api/v1/webhooks",
    operation_id = "listWebhooks",
    summary = "List this token's webhook endpoints",
    description = "Needs the start ability. Only the endpoints this token registered; never their secrets.",
    responses(
        (status = 200, description = "the token's endpoints, oldest first", body = wire::Webhooks),
        (status = 403, description = "the token's scope lacks start (error: forbidden_scope)", body = wire::Error),
    )
)]
pub async fn list(State(state): State<AppState>, lang: Lang, who: Who) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Start, lang)?;
    let webhooks = store::webhooks::of_token(&state.db, token.id)
        .await?
        .iter()
        .map(wire::Webhook::of)
        .collect();
    Ok(Json(wire::Webhooks { webhooks }).into_response())
}

#[utoipa::path(
    delete,
    path = "/api/v1/webhooks/{id}",
    operation_id = "deleteWebhook",
    summary = "Delete one of this token's webhook endpoints",
    description = "Needs the start ability. Another token's endpoint, or an administrator's, is 404, as a missing one is. Its queued deliveries and delivery log go with it.",
    params(("id" = i64, Path, description = "the endpoint")),
    responses(
        (status = 204, description = "deleted"),
        (status = 403, description = "the token's scope lacks start (error: forbidden_scope)", body = wire::Error),
        (status = 404, description = "no such endpoint of this token's (error: not_found)", body = wire::Error),
    )
)]
pub async fn delete(
    State(state): State<AppState>,
    lang: Lang,
    who: Who,
    audit: Audit,
    Id(id): Id<i64>,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Start, lang)?;
    if !store::webhooks::delete_of_token(&state.db, token.id, id).await? {
        return Err(ApiError::not_found(lang));
    }
    tracing::info!(endpoint = id, "webhook endpoint deleted through the API");
    audit.record(Event::WebhookRemoved(id)).await;
    Ok(StatusCode::NO_CONTENT.into_response())
}
