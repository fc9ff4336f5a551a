//! `/api/v1/instances`: start one, read one, list them, cancel one, hand a participant over.

use std::sync::Arc;

use axum::Json;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use serde_json::Value;

use super::error::{ApiError, ApiResult};
use super::extract::{
    Id, Read, Who, api_mail, body, caller, is_blank, last, needs, query_pairs, reached, snapshot_of,
};
use super::idempotent::{self, made, once};
use super::wire;
use super::workflows::{names, shown_numbers};
use crate::domain::api::idempotency::Answer;
use crate::domain::api::scope::Ability;
use crate::domain::instance::{self, Actor};
use crate::domain::lists;
use crate::domain::mail::{ContactInput, MAX_EMAIL, Part};
use crate::domain::site::Snapshot;
use crate::http::AppState;
use crate::i18n::{Lang, Message};
use crate::store::{self, api::TokenRow, instances::InstanceRow, workflows::Naming};

#[utoipa::path(
    post,
    path = "/api/v1/instances",
    operation_id = "startInstance",
    summary = "Start an instance of a workflow about a subject",
    description = "Needs the start ability, and the workflow among the token's workflows. With an Idempotency-Key, a retry makes no second instance: it is answered the first answer again.",
    params(wire::IdempotencyKey),
    request_body = wire::StartInstance,
    responses(
        (status = 201, description = "the instance (or, for a retried Idempotency-Key, the first answer again)", body = wire::Instance,
            headers(
                ("Location" = String, description = "the instance's own path, /api/v1/instances/{id}"),
                ("Idempotent-Replayed" = String, description = "`true` on an answer replayed for a retried Idempotency-Key; absent otherwise"),
            )),
        (status = 403, description = "the token's scope lacks start or this workflow (error: forbidden_scope), or its cap of running instances is reached (error: running_instance_cap)", body = wire::Error),
        (status = 409, description = "the first request with this Idempotency-Key is still at work (error: idempotency_key_in_progress)", body = wire::Error),
        (status = 422, description = "bad input; `field` names it, `Idempotency-Key` for a bad key (error: invalid); or the Idempotency-Key was used for another request (error: idempotency_key_reused)", body = wire::Error),
    )
)]
pub async fn start(
    State(state): State<AppState>,
    lang: Lang,
    who: Who,
    headers: HeaderMap,
    read: Read,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Start, lang)?;
    let bytes = read.json(lang)?;
    let key = idempotent::key(lang, &headers)?;
    let input: wire::StartInstance = body(lang, &bytes)?;
    let snapshot = snapshot_of(&who)?;
    let work = start_now(state.clone(), lang, token.clone(), snapshot.clone(), input);
    let request = ("POST", "/api/v1/instances".to_owned(), &bytes);
    once(&state, lang, &token, &snapshot, key, request, work).await
}

/// A start's work, once its request is read (and its key, when it has one, reserved).
async fn start_now(
    state: AppState,
    lang: Lang,
    token: Arc<TokenRow>,
    snapshot: Arc<Snapshot>,
    input: wire::StartInstance,
) -> Result<Answer, ApiError> {
    let Some(name) = input.workflow.filter(|w| !w.is_empty()) else {
        return Err(ApiError::invalid(
            lang,
            "workflow",
            &Message::new("api-workflow-missing"),
        ));
    };
    // Before the lookup: a name outside the scope gets one answer whether it exists or not.
    if !token.scope.covers(&name) {
        return Err(ApiError::forbidden_scope(
            lang,
            Message::new("api-forbidden-workflow").arg("workflow", name),
        ));
    }
    let Some(workflow) = store::workflows::by_name(&state.db, &name).await? else {
        return Err(ApiError::invalid(
            lang,
            "workflow",
            &Message::new("instance-workflow-unknown"),
        ));
    };
    let subject = input.subject.unwrap_or(wire::Subject {
        title: None,
        body: None,
    });
    let quota = instance::Quota {
        token: token.id,
        running_cap: snapshot.settings.api_max_running_instances,
    };
    let title = subject.title.unwrap_or_default();
    let contacts: Vec<ContactInput> = input
        .participants
        .unwrap_or_default()
        .into_iter()
        .map(|(participant, c)| ContactInput {
            participant,
            email: c.email.unwrap_or_default(),
            name: c.name.unwrap_or_default(),
            lang: c.lang.unwrap_or_default(),
        })
        .collect();
    // An entry without an address is refused here (the forms' blank rows are skipped, a
    // body's are not: it named the participant).
    if let Some(c) = contacts.iter().find(|c| c.email.trim().is_empty()) {
        return Err(ApiError::invalid(
            lang,
            format!(
                "participants.{}.email",
                c.participant.chars().take(40).collect::<String>()
            ),
            &Message::new("contact-email-invalid").arg("max", MAX_EMAIL.to_string()),
        ));
    }
    let by = Actor::Api(token.name.clone());
    let body = subject.body.unwrap_or_default();
    let mail = api_mail(&token, &snapshot);
    let order = instance::Start {
        body: &body,
        contacts: &contacts,
        api: Some((quota, &mail)),
        ..instance::Start::new(workflow.id, &title, &by)
    };
    let id = instance::start(&state.db, &order)
        .await
        .map_err(|e| ApiError::instance(lang, e))?;
    let shown = store::instances::shown(&state.db, id)
        .await?
        .ok_or_else(|| ApiError::not_found(lang))?;
    made(
        StatusCode::CREATED,
        Some(format!("/api/v1/instances/{id}")),
        &instance_of(&state, shown.instance, shown.naming, None, true).await?,
    )
}

/// How many history lines an instance's view holds; older ones are read with its
/// `history_cursor`.
const HISTORY_PAGE: i64 = 100;

async fn instance_of(
    state: &AppState,
    row: InstanceRow,
    naming: Naming,
    history_before: Option<i64>,
    with_contacts: bool,
) -> Result<wire::Instance, ApiError> {
    let options = instance::ViewOptions {
        history_before,
        history_limit: HISTORY_PAGE,
        contacts: with_contacts,
    };
    let view = instance::View::of(&state.db, &state.versions, row, naming, options).await?;
    let current_step = view.current_step().map(|(i, s)| wire::CurrentStep {
        number: i as i64 + 1,
        title: s.title.clone(),
        kind: s.interaction.kind(),
        participants: names(s.participants()),
        shows: shown_numbers(s),
    });
    let participants = view.contacts.map(|contacts| {
        contacts
            .into_iter()
            .map(|c| {
                (
                    c.participant,
                    wire::Contact {
                        email: Some(c.email),
                        name: Some(c.name),
                        lang: Some(c.lang),
                    },
                )
            })
            .collect()
    });
    let history = view
        .history
        .lines
        .into_iter()
        .map(|h| wire::HistoryEntry {
            at: h.at,
            event: h.event.as_str(),
            step: h.step_index + 1,
            step_title: h.step_title,
            participant: h.participant,
            answer: serde_json::from_str::<Value>(&h.answer).unwrap_or(Value::Null),
        })
        .collect();
    let row = view.instance;
    let files = super::files::of_instance(state, row.id).await?;
    Ok(wire::Instance {
        files,
        participants,
        id: row.id,
        workflow: view.workflow_label,
        workflow_name: view.workflow_name,
        version: view.version,
        state: row.state.as_str(),
        subject: wire::ShownSubject {
            title: row.subject_title,
            body: row.subject_body,
        },
        current_step,
        steps: view.definition.steps.len(),
        participants_left: names(&view.participants_left),
        history,
        history_total: view.history.total,
        history_cursor: view.history.older.map(lists::cursor),
        erased_at: row.erased_at,
    })
}

#[utoipa::path(
    get,
    path = "/api/v1/instances/{id}",
    operation_id = "readInstance",
    summary = "Read an instance: state, current step, participants, history",
    description = "Needs the read ability; an instance beyond the token's reach is 404, as a missing one is.",
    params(("id" = i64, Path, description = "the instance"), wire::HistoryCursor),
    responses(
        (status = 200, description = "the instance, with its newest 100 history lines (oldest first) and the cursor to older ones", body = wire::Instance),
        (status = 403, description = "the token's scope lacks read (error: forbidden_scope)", body = wire::Error),
        (status = 404, description = "no such instance, or one beyond the token's reach (error: not_found)", body = wire::Error),
        (status = 422, description = "a history_cursor this API did not give (error: invalid, field: history_cursor)", body = wire::Error),
    )
)]
pub async fn read(
    State(state): State<AppState>,
    lang: Lang,
    who: Who,
    Id(id): Id<i64>,
    RawQuery(query): RawQuery,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Read, lang)?;
    let pairs = query_pairs(query.as_deref());
    let before = match last(&pairs, "history_cursor") {
        None => None,
        Some(text) => Some(lists::parse_cursor(text).ok_or_else(|| {
            ApiError::invalid(lang, "history_cursor", &Message::new("api-bad-cursor"))
        })?),
    };
    let reached = reached(&state, &token, id, lang).await?;
    let own = reached.api_token_id == Some(token.id);
    Ok(
        Json(instance_of(&state, reached.instance, reached.naming, before, own).await?)
            .into_response(),
    )
}

/// The instances the token reaches, newest first, a page at a time.
#[utoipa::path(
    get,
    path = "/api/v1/instances",
    operation_id = "listInstances",
    summary = "List the instances the token reaches, newest first, a page at a time",
    description = "Needs the read ability; lists only the instances the token's scope reaches (its own unless it reaches all, and only its workflows). Pass `next_cursor` back as `cursor` for the next page; it is null on the last page. With `q`, a page looks through at most 10,000 instances, so a page may hold fewer than `limit` (even none) while `next_cursor` is still set.",
    params(wire::ListInstances),
    responses(
        (status = 200, description = "a page of instances", body = wire::InstanceList),
        (status = 403, description = "the token's scope lacks read (error: forbidden_scope)", body = wire::Error),
        (status = 422, description = "a bad limit, cursor or state; `field` names it (error: invalid)", body = wire::Error),
    )
)]
pub async fn list(
    State(state): State<AppState>,
    lang: Lang,
    who: Who,
    RawQuery(query): RawQuery,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Read, lang)?;
    let pairs = query_pairs(query.as_deref());
    let limit = match last(&pairs, "limit") {
        None => lists::PAGE,
        Some(text) => text
            .parse::<i64>()
            .ok()
            .filter(|n| (1..=lists::MAX_PAGE).contains(n))
            .ok_or_else(|| {
                ApiError::invalid(
                    lang,
                    "limit",
                    &Message::new("api-bad-limit").arg("max", lists::MAX_PAGE.to_string()),
                )
            })?,
    };
    let from =
        match last(&pairs, "cursor") {
            None => lists::From::Newest,
            Some(text) => lists::From::Before(lists::parse_cursor(text).ok_or_else(|| {
                ApiError::invalid(lang, "cursor", &Message::new("api-bad-cursor"))
            })?),
        };
    let state_filter = match last(&pairs, "state") {
        None => None,
        Some(word) => Some(
            lists::parse_state(word)
                .ok_or_else(|| ApiError::invalid(lang, "state", &Message::new("api-bad-state")))?,
        ),
    };
    // No title nor workflow name holds a NUL (none is stored), so a search (as far as it is
    // used) or a name with one lists nothing, on both databases alike: PostgreSQL cannot even be
    // asked.
    let search = last(&pairs, "q").and_then(lists::search_text);
    let named = last(&pairs, "workflow");
    if search.is_some_and(|t| t.contains('\0')) || named.is_some_and(|n| n.contains('\0')) {
        return Ok(Json(wire::InstanceList {
            instances: Vec::new(),
            next_cursor: None,
        })
        .into_response());
    }
    let mut filter = lists::filter(None, state_filter, None, last(&pairs, "q"));
    if let Some(name) = last(&pairs, "workflow") {
        // An unknown name, like one outside the scope, lists nothing: no answer tells them apart.
        filter.workflows = Some(lists::workflow_ids(&state.db, name).await?);
    }
    let filter = lists::within_scope(&state.db, &token.scope, token.id, filter).await?;
    let listed = lists::page(&state.db, &filter, from, limit).await?;
    let instances = listed
        .rows
        .into_iter()
        .map(|r| wire::InstanceSummary {
            id: r.id,
            workflow: r.workflow_label,
            workflow_name: r.workflow_name,
            state: r.state.as_str(),
            title: r.subject_title,
            started_by: r.started_by,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
        .collect();
    Ok(Json(wire::InstanceList {
        instances,
        next_cursor: listed.more.map(lists::cursor),
    })
    .into_response())
}

#[utoipa::path(
    post,
    path = "/api/v1/instances/{id}/cancel",
    operation_id = "cancelInstance",
    summary = "Cancel a running instance",
    description = "Needs the start ability; an instance beyond the token's reach is 404, as a missing one is. The instance ends as cancelled: every link and payment return of it stops working, a payment under way is closed, its place under the token's running-instance cap is freed, and its history says which token cancelled it and why. The body may be empty.",
    params(("id" = i64, Path, description = "the instance")),
    request_body(content = wire::CancelInstance, description = "optional"),
    responses(
        (status = 200, description = "the instance, now cancelled", body = wire::Instance),
        (status = 403, description = "the token's scope lacks start (error: forbidden_scope)", body = wire::Error),
        (status = 404, description = "no such instance, or one beyond the token's reach (error: not_found)", body = wire::Error),
        (status = 409, description = "the instance has ended already; nothing changed (error: ended)", body = wire::Error),
        (status = 422, description = "the reason is too long (`field`: reason), or the body is not a JSON object of these fields (`field`: body) (error: invalid)", body = wire::Error),
    )
)]
pub async fn cancel(
    State(state): State<AppState>,
    lang: Lang,
    who: Who,
    Id(id): Id<i64>,
    read: Read,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Start, lang)?;
    let bytes = read.json(lang)?;
    let input: wire::CancelInstance = if is_blank(&bytes) {
        wire::CancelInstance { reason: None }
    } else {
        body(lang, &bytes)?
    };
    let own = reached(&state, &token, id, lang).await?.api_token_id == Some(token.id);
    let by = Actor::Api(token.name.clone());
    let reason = input.reason.unwrap_or_default();
    instance::cancel(&state.db, id, &by, &reason)
        .await
        .map_err(|e| ApiError::instance(lang, e))?;
    let shown = store::instances::shown(&state.db, id)
        .await?
        .ok_or_else(|| ApiError::not_found(lang))?;
    let view = instance_of(&state, shown.instance, shown.naming, None, own).await?;
    Ok(Json(view).into_response())
}

#[utoipa::path(
    post,
    path = "/api/v1/instances/{id}/reassign",
    operation_id = "reassignParticipant",
    summary = "Hand a participant of a running instance to a new contact",
    description = "Needs the start ability; an instance beyond the token's reach is 404, as a missing one is. In one change, every link issued to the participant stops working, their contact becomes the new one, and the new contact is emailed their link when the step is theirs (else when it comes); the history says which token did it. The email counts toward the token's hourly quotas of link emails. With an Idempotency-Key, a retry hands over and emails nothing again: it is answered the first answer again.",
    params(("id" = i64, Path, description = "the instance"), wire::IdempotencyKey),
    request_body = wire::Reassign,
    responses(
        (status = 200, description = "the instance, its participant handed over (or, for a retried Idempotency-Key, the first answer again)", body = wire::Instance,
            headers(
                ("Idempotent-Replayed" = String, description = "`true` on an answer replayed for a retried Idempotency-Key; absent otherwise"),
            )),
        (status = 403, description = "the token's scope lacks start (error: forbidden_scope)", body = wire::Error),
        (status = 404, description = "no such instance, or one beyond the token's reach (error: not_found)", body = wire::Error),
        (status = 409, description = "the instance has ended; nothing changed (error: ended); or the first request with this Idempotency-Key is still at work (error: idempotency_key_in_progress)", body = wire::Error),
        (status = 422, description = "bad input, nothing changed; `field` names it: `participant` (not one of the workflow's, or nothing left to answer), `email`, `name`, `lang`, or `Idempotency-Key` for a bad key (error: invalid); or the Idempotency-Key was used for another request (error: idempotency_key_reused)", body = wire::Error),
        (status = 429, description = "the token's hourly quota of link emails (to this address, or in all) is spent; nothing changed (error: email_rate)", body = wire::Error),
    )
)]
pub async fn reassign(
    State(state): State<AppState>,
    lang: Lang,
    who: Who,
    Id(id): Id<i64>,
    headers: HeaderMap,
    read: Read,
) -> ApiResult {
    let token = caller(&who)?;
    needs(&token, Ability::Start, lang)?;
    let bytes = read.json(lang)?;
    let key = idempotent::key(lang, &headers)?;
    let input: wire::Reassign = body(lang, &bytes)?;
    let snapshot = snapshot_of(&who)?;
    let work = reassign_now(
        state.clone(),
        lang,
        token.clone(),
        snapshot.clone(),
        id,
        input,
    );
    let request = ("POST", format!("/api/v1/instances/{id}/reassign"), &bytes);
    once(&state, lang, &token, &snapshot, key, request, work).await
}

/// A hand-over's work, once its request is read (and its key, when it has one, reserved).
async fn reassign_now(
    state: AppState,
    lang: Lang,
    token: Arc<TokenRow>,
    snapshot: Arc<Snapshot>,
    id: i64,
    input: wire::Reassign,
) -> Result<Answer, ApiError> {
    let own = reached(&state, &token, id, lang).await?.api_token_id == Some(token.id);
    let Some(participant) = input.participant.filter(|p| !p.trim().is_empty()) else {
        return Err(ApiError::invalid(
            lang,
            "participant",
            &Message::new("api-participant-missing"),
        ));
    };
    let Some(email) = input.email.filter(|e| !e.trim().is_empty()) else {
        return Err(ApiError::invalid(
            lang,
            "email",
            &Message::new("contact-email-invalid").arg("max", MAX_EMAIL.to_string()),
        ));
    };
    let contact = ContactInput {
        participant,
        email,
        name: input.name.unwrap_or_default(),
        lang: input.lang.unwrap_or_default(),
    };
    let by = Actor::Api(token.name.clone());
    let mail = api_mail(&token, &snapshot);
    let done =
        instance::reassign_for(&state.db, &state.versions, id, &contact, &by, Some(&mail)).await;
    if let Err(e) = done {
        let refusal = e.refusal()?;
        let field = match &refusal {
            instance::Refusal::InstanceOver => {
                let message = refusal.message().render(lang);
                return Err(ApiError::new(StatusCode::CONFLICT, "ended", message));
            }
            instance::Refusal::Contact(c) => match c.part {
                Part::Participant => "participant",
                part => part.as_str(),
            },
            instance::Refusal::NoAddress(_) => "email",
            instance::Refusal::ParticipantDone(_) => "participant",
            _ => return Err(ApiError::refused(lang, &refusal)),
        };
        return Err(ApiError::invalid(lang, field, &refusal.message()));
    }
    let shown = store::instances::shown(&state.db, id)
        .await?
        .ok_or_else(|| ApiError::not_found(lang))?;
    let view = instance_of(&state, shown.instance, shown.naming, None, own).await?;
    made(StatusCode::OK, None, &view)
}
