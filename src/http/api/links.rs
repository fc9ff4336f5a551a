//! `/api/v1/instances/{id}/links`: list an instance's links with their states, issue a
//! participant's link (or send it by email), revoke one.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;

use super::error::{ApiError, ApiResult};
use super::extract::{Id, Read, Who, api_mail, body, caller, needs, reached, snapshot_of};
use super::idempotent::{self, made, once};
use super::wire;
use crate::domain::api::idempotency::Answer;
use crate::domain::api::scope::Ability;
use crate::domain::instance::{self, Actor};
use crate::domain::site::Snapshot;
use crate::http::AppState;
use crate::i18n::{Lang, Message};
use crate::store::api::TokenRow;

#[utoipa::path(
    post,
    path = "/api/v1/instances/{id}/links",
    operation_id = "issueLink",
    summary = "Issue a link for a participant; the URL is returned once",
    description = "Needs the links ability; an instance beyond the token's reach is 404, as a missing one is. With an Idempotency-Key, a retry issues no second link: it is answered the first link again.",
    params(("id" = i64, Path, description = "the instance"), wire::IdempotencyKey),
    request_body = wire::IssueLink,
    responses(
        (status = 202, description = "with \"send\": true, the link's email is queued (the sender signs the link when it sends)", body = wire::Queued),
        (status = 201, description = "the link (or, for a retried Idempotency-Key, the first answer again)", body = wire::Link,
            headers(
                ("Location" = String, description = "the link's own path, where it is revoked: /api/v1/instances/{id}/links/{link}"),
                ("Idempotent-Replayed" = String, description = "`true` on an answer replayed for a retried Idempotency-Key; absent otherwise"),
            )),
        (status = 403, description = "the token's scope lacks links (error: forbidden_scope), or the instance's daily cap of links is reached (error: link_cap)", body = wire::Error),
        (status = 404, description = "no such instance, or one beyond the token's reach (error: not_found)", body = wire::Error),
        (status = 409, description = "the first request with this Idempotency-Key is still at work (error: idempotency_key_in_progress)", body = wire::Error),
        (status = 422, description = "bad input; `field` names it, `Idempotency-Key` for a bad key (error: invalid); or the Idempotency-Key was used for another request (error: idempotency_key_reused)", body = wire::Error),
    )
)]
pub async fn issue(
    State(state): State<AppState>,
    lang: Lang,
    who: Who,
    Id(id): Id<i64>,
    headers: HeaderMap,
    read: Read,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Links, lang)?;
    let bytes = read.json(lang)?;
    let key = idempotent::key(lang, &headers)?;
    let input: wire::IssueLink = body(lang, &bytes)?;
    let snapshot = snapshot_of(&who)?;
    let work = issue_now(
        state.clone(),
        lang,
        token.clone(),
        snapshot.clone(),
        id,
        input,
    );
    let request = ("POST", format!("/api/v1/instances/{id}/links"), &bytes);
    once(&state, lang, &token, &snapshot, key, request, work).await
}

/// A link issue's work, once its request is read (and its key, when it has one, reserved).
async fn issue_now(
    state: AppState,
    lang: Lang,
    token: Arc<TokenRow>,
    snapshot: Arc<Snapshot>,
    id: i64,
    input: wire::IssueLink,
) -> Result<Answer, ApiError> {
    let reached = reached(&state, &token, id, lang).await?;
    if input.send == Some(true) {
        if input.ttl_seconds.is_some() {
            return Err(ApiError::invalid(
                lang,
                "ttl_seconds",
                &Message::new("api-send-ttl"),
            ));
        }
        let participant = input.participant.as_deref().unwrap_or("");
        return match instance::send(
            &state.db,
            &state.versions,
            id,
            participant,
            Some(&api_mail(&token, &snapshot)),
        )
        .await
        {
            Ok(()) => made(
                StatusCode::ACCEPTED,
                None,
                &wire::Queued {
                    participant: participant.trim().to_owned(),
                    queued: true,
                },
            ),
            Err(e) => Err(ApiError::instance(lang, e)),
        };
    }
    let definition = state
        .versions
        .get(&state.db, reached.instance.version_id)
        .await?;
    let by = Actor::Api(token.name.clone());
    let order = instance::Order {
        participant: input.participant.as_deref().unwrap_or(""),
        ttl: input
            .ttl_seconds
            .unwrap_or(snapshot.settings.default_link_ttl),
        now: state.clock.now_secs(),
        by: &by,
        daily_cap: Some(snapshot.settings.api_max_links_per_instance_per_day),
    };
    let result = instance::issue_on(
        &state.db,
        &snapshot.keys,
        &snapshot.settings.base_url,
        &reached.instance,
        &definition,
        &order,
    )
    .await;
    match result {
        Ok(issued) => made(
            StatusCode::CREATED,
            // Where it is revoked: a link's URL is shown once, its resource is not the URL.
            Some(format!("/api/v1/instances/{id}/links/{}", issued.id)),
            &wire::Link {
                id: issued.id,
                url: issued.url,
                expires: issued.expires,
            },
        ),
        Err(e) => Err(ApiError::instance(lang, e)),
    }
}

#[utoipa::path(
    delete,
    path = "/api/v1/instances/{id}/links/{link}",
    operation_id = "revokeLink",
    summary = "Revoke one link",
    description = "Needs the links ability; a link of an instance beyond the token's reach is 404, as a missing one is.",
    params(
        ("id" = i64, Path, description = "the instance"),
        ("link" = i64, Path, description = "the link, as its issue answered"),
    ),
    responses(
        (status = 204, description = "revoked"),
        (status = 403, description = "the token's scope lacks links (error: forbidden_scope)", body = wire::Error),
        (status = 404, description = "no such live link, or its instance is beyond the token's reach (error: not_found)", body = wire::Error),
    )
)]
pub async fn revoke(
    State(state): State<AppState>,
    lang: Lang,
    who: Who,
    Id((id, link)): Id<(i64, i64)>,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Links, lang)?;
    reached(&state, &token, id, lang).await?;
    if !instance::revoke_one(&state.db, id, link, &Actor::Api(token.name.clone())).await? {
        return Err(ApiError::not_found(lang));
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[utoipa::path(
    get,
    path = "/api/v1/instances/{id}/links",
    operation_id = "listLinks",
    summary = "An instance's links, newest first, each with its state now (never its URL)",
    description = "Needs the read ability; an instance beyond the token's reach is 404, as a missing one is. A link's state is active, expired, revoked, used_up (its participant has nothing left to answer) or void (signed under site keys a rotation has since replaced).",
    params(("id" = i64, Path, description = "the instance")),
    responses(
        (status = 200, description = "the newest 100 links at most", body = wire::Links),
        (status = 403, description = "the token's scope lacks read (error: forbidden_scope)", body = wire::Error),
        (status = 404, description = "no such instance, or one beyond the token's reach (error: not_found)", body = wire::Error),
    )
)]
pub async fn list(
    State(state): State<AppState>,
    lang: Lang,
    who: Who,
    Id(id): Id<i64>,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Read, lang)?;
    let reached = reached(&state, &token, id, lang).await?;
    let definition = state
        .versions
        .get(&state.db, reached.instance.version_id)
        .await?;
    let now = state.clock.now_secs();
    let page = instance::list(&state.db, &reached.instance, &definition, now, None, 100).await?;
    let links = page
        .links
        .into_iter()
        .map(|(l, s)| wire::IssuedLink {
            id: l.id,
            participant: l.participant,
            issued_at: l.issued_at,
            expires: l.expires,
            state: s.as_str(),
        })
        .collect();
    Ok(axum::Json(wire::Links {
        links,
        total: page.total,
    })
    .into_response())
}
