//! What the API reads and sends, as types: the handlers read and build these, and the OpenAPI
//! description (`doc`) is derived from the same types, so a field cannot be sent that the
//! description does not name, nor named and never sent.
//!
//! Fields a caller may leave out are `Option`s, so that their absence is the API's own `422`
//! naming the field rather than serde's message; the description still marks what a call needs
//! (`required = true`). What a field takes is described as the server reads it: a field that
//! may be left out takes `null` too, meaning the same; a needed text is not nullable and has a
//! `minLength` of 1, as `null` and `""` are refused for it (tests/it/api.rs sends both to each).

use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::{Object, Type};
use utoipa::{IntoParams, ToSchema};

use crate::domain::workflow::InstanceState;
use crate::domain::workflow::history::Event;

/// `POST /api/v1/instances`.
#[derive(Deserialize, Serialize, ToSchema)]
pub struct StartInstance {
    /// The workflow's machine name.
    #[schema(required = true, value_type = String, min_length = 1)]
    pub workflow: Option<String>,
    #[schema(required = true, value_type = Subject)]
    pub subject: Option<Subject>,
    /// Participants' contacts, by participant name: each is emailed their link when their step
    /// starts, in their language. Personal data: shown back only to the token that gave it.
    pub participants: Option<std::collections::BTreeMap<String, Contact>>,
}

/// A participant's contact.
#[derive(Deserialize, Serialize, ToSchema, Clone)]
pub struct Contact {
    /// An address such as ada@example.org, up to 254 characters.
    #[schema(required = true, value_type = String, max_length = 254)]
    pub email: Option<String>,
    /// Their name in the emails, up to 100 characters on one line.
    #[schema(max_length = 100)]
    pub name: Option<String>,
    /// `en` (when left out) or `fr`.
    #[schema(value_type = Option<String>, pattern = "^(en|fr)$")]
    pub lang: Option<String>,
}

/// What an instance is about, as the administrator's pages show it.
#[derive(Deserialize, Serialize, ToSchema)]
pub struct Subject {
    /// Up to 200 characters, not all blank.
    // `links::MAX_TITLE`: a test below holds the two together.
    #[schema(required = true, value_type = String, min_length = 1, max_length = 200)]
    pub title: Option<String>,
    /// Up to 10,000 characters; null or left out is none.
    // `links::MAX_BODY`: a test below holds the two together.
    #[schema(max_length = 10000)]
    pub body: Option<String>,
}

/// The header of a POST that makes something (`domain::api::idempotency`); only described, as
/// the handlers read it from the headers themselves.
#[derive(IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(dead_code)]
pub struct IdempotencyKey {
    /// Optional. A retry with the same key by the same token within 24 hours makes nothing new
    /// and is answered the first answer again; the same key with another body is refused. 1 to
    /// 255 visible ASCII characters (a UUID serves).
    // `idempotency::MAX_KEY_LEN`: a test below holds the two together.
    #[param(
        rename = "Idempotency-Key",
        min_length = 1,
        max_length = 255,
        pattern = "^[!-~]+$"
    )]
    pub key: Option<String>,
}

/// `POST /api/v1/instances/{id}/links`.
#[derive(Deserialize, Serialize, ToSchema)]
pub struct IssueLink {
    /// One of the current step's participants who has not answered. Left out, null or empty:
    /// the workflow's unnamed participant (a definition whose steps name none); a workflow
    /// that names its participants needs one named.
    pub participant: Option<String>,
    /// The link's lifetime; the site's default when left out or null.
    #[schema(minimum = 60, maximum = 31536000)]
    #[serde(default, deserialize_with = "whole")]
    pub ttl_seconds: Option<u64>,
    /// `true`: email the link to the participant's address (given at the start) rather than
    /// answer it; the answer is then `202` without a URL, and the link lives the site's
    /// default lifetime (`ttl_seconds` must be left out).
    pub send: Option<bool>,
}

/// A whole number as JSON Schema's `integer` takes it: `719` or `719.0` (or `7.19e2`), as a
/// JSON library that writes every number as a float sends it; a fraction, a negative number or
/// any other type is the field's `422` (serde's own `u64` takes only the first spelling).
fn whole<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    use serde::de::{Error, Unexpected};
    let Some(number) = Option::<serde_json::Number>::deserialize(d)? else {
        return Ok(None);
    };
    if let Some(n) = number.as_u64() {
        return Ok(Some(n));
    }
    match number.as_f64() {
        // Below 2^53 a float is a whole number exactly; past it, past any lifetime taken.
        Some(f) if f.fract() == 0.0 && (0.0..9_007_199_254_740_992.0).contains(&f) => {
            Ok(Some(f as u64))
        }
        _ => Err(D::Error::invalid_type(
            Unexpected::Other("a number that is not a whole one"),
            &"a whole number",
        )),
    }
}

/// A link queued to be emailed (`"send": true`).
#[derive(Serialize, ToSchema)]
pub struct Queued {
    pub participant: String,
    /// Always `true`.
    pub queued: bool,
}

/// `POST /api/v1/instances/{id}/cancel`; the body may be left out.
#[derive(Deserialize, Serialize, ToSchema)]
pub struct CancelInstance {
    /// Why, kept in the instance's history; up to 500 characters; null or left out is none.
    // `links::MAX_REASON`: a test below holds the two together.
    #[schema(max_length = 500)]
    pub reason: Option<String>,
}

/// `POST /api/v1/instances/{id}/reassign`.
#[derive(Deserialize, Serialize, ToSchema)]
pub struct Reassign {
    /// The participant to hand over: one of the workflow's who still has something to answer.
    #[schema(required = true, value_type = String, min_length = 1)]
    pub participant: Option<String>,
    /// The new contact's address, such as ada@example.org, up to 254 characters.
    #[schema(required = true, value_type = String, min_length = 1, max_length = 254)]
    pub email: Option<String>,
    /// Their name in the emails, up to 100 characters on one line.
    #[schema(max_length = 100)]
    pub name: Option<String>,
    /// `en` (when left out, null or empty) or `fr`.
    #[schema(value_type = Option<String>, pattern = "^(en|fr)?$")]
    pub lang: Option<String>,
}

/// A link just issued: its URL is shown this once.
#[derive(Serialize, ToSchema)]
pub struct Link {
    pub id: i64,
    pub url: String,
    /// Unix seconds.
    pub expires: i64,
}

/// `GET /api/v1/instances/{id}/links`: the instance's newest links (never their URLs).
#[derive(Serialize, ToSchema)]
pub struct Links {
    /// The newest 100 at most, newest first.
    pub links: Vec<IssuedLink>,
    /// How many links the instance has in all.
    pub total: i64,
}

/// A link as recorded, with its state now.
#[derive(Serialize, ToSchema)]
pub struct IssuedLink {
    pub id: i64,
    pub participant: String,
    /// Unix seconds.
    pub issued_at: i64,
    /// Unix seconds.
    pub expires: i64,
    /// `void`: signed under site keys a rotation has since replaced; it opens nothing.
    #[schema(schema_with = link_states)]
    pub state: &'static str,
}

/// `GET /api/v1/workflows`: those the token's scope covers.
#[derive(Serialize, ToSchema)]
pub struct Workflows {
    pub workflows: Vec<Workflow>,
}

#[derive(Serialize, ToSchema)]
pub struct Workflow {
    /// The machine name a start names.
    pub name: String,
    pub label: String,
    /// The newest version: what a start runs.
    pub version: i64,
    pub participants: Vec<String>,
    pub steps: Vec<Step>,
}

/// A step of a definition.
#[derive(Serialize, ToSchema)]
pub struct Step {
    pub title: String,
    /// `form`, `review` or `payment`.
    pub kind: &'static str,
    pub participants: Vec<String>,
    /// The earlier steps (numbered from 1) whose answers this step shows its participant; the
    /// answers themselves are in an instance's `history`.
    pub shows: Vec<i64>,
}

/// An instance: its state, the step it waits on, who has still to answer, and its history.
#[derive(Serialize, ToSchema)]
pub struct Instance {
    pub id: i64,
    /// The workflow's label; null once the workflow itself is gone.
    pub workflow: Option<String>,
    /// The workflow's machine name, as a start names it (`GET /api/v1/workflows` lists it as
    /// `name`); null once the workflow itself is gone.
    pub workflow_name: Option<String>,
    /// The version of the definition it runs on.
    pub version: i64,
    #[schema(schema_with = instance_states)]
    pub state: &'static str,
    pub subject: ShownSubject,
    /// The step it waits on; null once it has ended.
    pub current_step: Option<CurrentStep>,
    /// How many steps its definition has.
    pub steps: usize,
    /// The current step's participants who have not answered yet.
    pub participants_left: Vec<String>,
    /// The newest 100 lines at most (or the 100 before `history_cursor`), oldest first: an
    /// instance with fewer has its whole history here, as before paging.
    pub history: Vec<HistoryEntry>,
    /// How many history lines the instance has in all.
    pub history_total: i64,
    /// Pass it as `?history_cursor=` for the lines before these; null when these reach the start.
    pub history_cursor: Option<String>,
    /// The files its answers brought, in the order they came.
    pub files: Vec<InstanceFile>,
    /// Unix seconds when retention or an erasure took its answers (each then reads
    /// `{"erased": true}`), files and contacts; null while they are kept.
    pub erased_at: Option<i64>,
    /// The participants' contacts given at the start; only to the token that started the
    /// instance (left out otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub participants: Option<std::collections::BTreeMap<String, Contact>>,
}

/// `GET /api/v1/instances/{id}`'s query; only described, as the handler reads the query itself.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct HistoryCursor {
    /// An instance view's `history_cursor`: the 100 history lines before it.
    // `lists::CURSOR_PATTERN`: a test below holds the two together.
    #[param(pattern = "^623[1-9](3[0-9]){0,17}$")]
    pub history_cursor: Option<String>,
}

/// `GET /api/v1/instances`'s query; only described, as the handler reads the query itself.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct ListInstances {
    /// How many instances a page holds: 1 to 200, 50 when left out.
    // `lists::MAX_PAGE`: a test below holds the two together.
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the page before; left out for the newest page.
    // `lists::CURSOR_PATTERN`: a test below holds the two together.
    #[param(pattern = "^623[1-9](3[0-9]){0,17}$")]
    pub cursor: Option<String>,
    /// Only the instances of this workflow (its machine name); an unknown one lists none.
    pub workflow: Option<String>,
    /// Only the instances in this state: active, complete, rejected or cancelled.
    #[param(pattern = "^(active|complete|rejected|cancelled)$")]
    pub state: Option<String>,
    /// Only the instances whose subject title holds this text, in any case (up to 200
    /// characters are used).
    pub q: Option<String>,
}

/// `GET /api/v1/instances`: a page of instances, newest first.
#[derive(Serialize, ToSchema)]
pub struct InstanceList {
    pub instances: Vec<InstanceSummary>,
    /// Pass it as `cursor` for the next page; null on the last.
    pub next_cursor: Option<String>,
}

/// An instance as a list shows it; its own path has the rest.
#[derive(Serialize, ToSchema)]
pub struct InstanceSummary {
    pub id: i64,
    /// The workflow's label; null once the workflow itself is gone.
    pub workflow: Option<String>,
    /// The workflow's machine name; null once the workflow itself is gone.
    pub workflow_name: Option<String>,
    #[schema(schema_with = instance_states)]
    pub state: &'static str,
    /// The subject's title.
    pub title: String,
    /// Who started it: admin, cli or api; null for instances started before this was recorded.
    pub started_by: Option<String>,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds.
    pub updated_at: i64,
}

/// The subject as stored: both texts, empty when none was given.
#[derive(Serialize, ToSchema)]
pub struct ShownSubject {
    pub title: String,
    pub body: String,
}

#[derive(Serialize, ToSchema)]
pub struct CurrentStep {
    /// From 1.
    pub number: i64,
    pub title: String,
    /// `form`, `review` or `payment`.
    pub kind: &'static str,
    pub participants: Vec<String>,
    /// The earlier steps (from 1) whose answers its participant is shown, as in `history`.
    pub shows: Vec<i64>,
}

/// An instance's evidence record, its hash and when it was made.
#[derive(Serialize, ToSchema)]
pub struct Evidence {
    /// The record: `format`, `site`, `instance`, `steps`, `history`, `links`, `emails`,
    /// `contacts`, `files`.
    #[schema(value_type = Object)]
    pub record: serde_json::Value,
    /// The SHA-256 of the record's canonical form (keys sorted, no spaces, UTF-8), in hex.
    pub sha256: String,
    /// When this copy was made (ISO 8601, UTC); outside the record, so not in its hash.
    pub generated_at: String,
}

/// A file an answer brought: what it is, never its bytes (`download` reads them).
#[derive(Serialize, ToSchema)]
pub struct InstanceFile {
    pub id: i64,
    /// The step whose answer brought it, from 1.
    pub step: i64,
    /// The form field it was given in.
    pub field: String,
    /// The name it was kept as.
    pub name: String,
    /// Bytes.
    pub size: i64,
    /// What its content is.
    pub media_type: String,
    /// Its SHA-256, lowercase hex.
    pub sha256: String,
    /// Its path: `GET` it with a token that may read instances.
    pub download: String,
}

/// One event of an instance's history.
#[derive(Serialize, ToSchema)]
pub struct HistoryEntry {
    /// Unix seconds.
    pub at: i64,
    #[schema(schema_with = events)]
    pub event: &'static str,
    /// The step it happened at, from 1.
    pub step: i64,
    pub step_title: String,
    /// Empty for events of the whole instance.
    pub participant: String,
    /// What the participant answered (a form's fields, a review's decision); null otherwise.
    #[schema(value_type = Option<Object>)]
    pub answer: serde_json::Value,
}

/// Every error but the bucket's: a stable code, a message in the caller's language and, for bad
/// input, the field.
#[derive(Serialize, ToSchema)]
pub struct Error {
    /// A stable code: unauthorized, bad_signature, invalid, forbidden_scope, not_found,
    /// too_many_failures, running_instance_cap, link_cap, endpoint_cap, email_rate, too_large,
    /// timeout, busy, bad_request, method_not_allowed, unsupported_media_type,
    /// idempotency_key_reused, idempotency_key_in_progress, ended, internal.
    pub error: &'static str,
    pub message: String,
    /// The input that is wrong: a field's name, a nested field's dotted path
    /// (`subject.title`), `body` for the body as a whole, or `Idempotency-Key` for that header.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<std::borrow::Cow<'static, str>>,
    /// Every thing wrong, when a call checks them all (a workflow's definition: each wrong
    /// line); `field` and `message` are the first of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problems: Option<Vec<Problem>>,
}

/// One thing wrong with a request.
#[derive(Serialize, ToSchema)]
pub struct Problem {
    /// The field it is about: `name`, `label` or `definition`.
    pub field: &'static str,
    /// For a definition, the line (from 1) it is about, when it is about one.
    pub line: Option<u64>,
    /// What is wrong, naming the line, in the caller's language.
    pub message: String,
}

/// `POST /api/v1/workflows`.
#[derive(Deserialize, Serialize, ToSchema)]
pub struct CreateWorkflow {
    /// The machine name: 1 to 64 lower-case letters, digits and `_`.
    #[schema(required = true, value_type = String, min_length = 1, max_length = 64)]
    pub name: Option<String>,
    /// The label the pages show, 1 to 100 characters, not all blank.
    #[schema(required = true, value_type = String, min_length = 1, max_length = 100)]
    pub label: Option<String>,
    /// The definition in the line format (docs/workflows.md), as `orchestra workflow show`
    /// prints it; up to 20,000 characters.
    #[schema(required = true, value_type = String, min_length = 1, max_length = 20000)]
    pub definition: Option<String>,
}

/// `PUT /api/v1/workflows/{name}`.
#[derive(Deserialize, Serialize, ToSchema)]
pub struct SaveWorkflow {
    /// The definition in the line format; a new version when it differs from the newest.
    #[schema(required = true, value_type = String, min_length = 1, max_length = 20000)]
    pub definition: Option<String>,
    /// A new label, 1 to 100 characters; the label is kept when left out or null.
    #[schema(min_length = 1, max_length = 100)]
    pub label: Option<String>,
}

/// A workflow's newest definition.
#[derive(Serialize, ToSchema)]
pub struct WorkflowDefinition {
    pub name: String,
    pub label: String,
    /// The newest version's number, from 1.
    pub version: i64,
    /// The line format, exactly as `orchestra workflow show NAME` prints it.
    pub definition: String,
}

/// The token's bucket is empty.
// Written as bytes by `fields::refusal`; a test below checks they parse as this.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct RateLimited {
    /// Always `rate_limited`.
    #[schema(pattern = "^rate_limited$")]
    pub error: String,
    #[schema(minimum = 1)]
    pub retry_after_seconds: u64,
}

/// The states as the API names them, from the domain's own list.
fn instance_states() -> Object {
    string_of(InstanceState::ALL.iter().map(|s| s.as_str()))
}

/// A link's states as the API names them, from the domain's own list.
fn link_states() -> Object {
    string_of(
        crate::domain::instance::LinkState::ALL
            .iter()
            .map(|s| s.as_str()),
    )
}

/// The history's events as the API names them, from the domain's own list.
fn events() -> Object {
    string_of(Event::ALL.iter().map(|e| e.as_str()))
}

fn string_of<'a>(values: impl Iterator<Item = &'a str>) -> Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(values))
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{instance as links, lists, settings};

    /// The limits the description states are the domain's (attributes take literals only).
    #[test]
    fn the_described_limits_are_the_domains() {
        let json: serde_json::Value = serde_json::from_str(super::super::description()).unwrap();
        let schemas = &json["components"]["schemas"];
        assert_eq!(
            schemas["Subject"]["properties"]["title"]["maxLength"],
            links::MAX_TITLE
        );
        assert_eq!(
            schemas["Subject"]["properties"]["body"]["maxLength"],
            links::MAX_BODY
        );
        assert_eq!(
            schemas["CancelInstance"]["properties"]["reason"]["maxLength"],
            links::MAX_REASON
        );
        let key = json["paths"]["/api/v1/instances"]["post"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "Idempotency-Key")
            .unwrap();
        assert_eq!(
            key["schema"]["maxLength"],
            crate::domain::api::idempotency::MAX_KEY_LEN
        );
        let limit = json["paths"]["/api/v1/instances"]["get"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "limit")
            .unwrap();
        assert_eq!(limit["schema"]["maximum"], crate::domain::lists::MAX_PAGE);
        for (path, name) in [
            ("/api/v1/instances", "cursor"),
            ("/api/v1/instances/{id}", "history_cursor"),
        ] {
            let cursor = json["paths"][path]["get"]["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["name"] == name)
                .unwrap();
            assert_eq!(cursor["schema"]["pattern"], lists::CURSOR_PATTERN, "{name}");
        }
        let ttl = &schemas["IssueLink"]["properties"]["ttl_seconds"];
        assert_eq!(ttl["minimum"], settings::MIN_TTL);
        assert_eq!(ttl["maximum"], settings::MAX_TTL);
    }

    /// The bucket's refusal is written as bytes, not through `RateLimited`: they are the same.
    #[test]
    fn the_buckets_bytes_are_a_rate_limited() {
        let (bytes, _) = super::super::fields::refusal(7);
        let read: RateLimited = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(read.error, "rate_limited");
        assert_eq!(read.retry_after_seconds, 7);
    }
}

/// `POST /api/v1/webhooks`.
#[derive(Deserialize, Serialize, ToSchema)]
pub struct CreateWebhook {
    /// Where messages are posted: https, to a public address (its host is resolved now and at
    /// each delivery; loopback, private, link-local and metadata addresses are refused).
    #[schema(required = true, value_type = String, min_length = 1)]
    pub url: Option<String>,
    /// The events it takes: instance.started, step.answered, instance.ended,
    /// payment.confirmed, step.reopened, step.skipped, step.reassigned, step.closed. Left out,
    /// null or empty: every event.
    pub events: Option<Vec<String>>,
}

/// `GET /api/v1/webhooks`: the token's own endpoints.
#[derive(Serialize, ToSchema)]
pub struct Webhooks {
    pub webhooks: Vec<Webhook>,
}

/// A webhook endpoint of the token's: sent the messages about the instances this token started.
#[derive(Serialize, ToSchema)]
pub struct Webhook {
    pub id: i64,
    pub url: String,
    /// The events it takes; empty: every event.
    pub events: Vec<String>,
    /// False once 15 deliveries in a row failed: nothing more is sent to it.
    pub enabled: bool,
    /// Failed deliveries in a row.
    pub failures: i64,
    /// Unix seconds.
    pub created_at: i64,
}

/// An endpoint just made, with its signing secret: shown this once, never again.
#[derive(Serialize, ToSchema)]
pub struct CreatedWebhook {
    pub id: i64,
    pub url: String,
    pub events: Vec<String>,
    pub enabled: bool,
    pub failures: i64,
    pub created_at: i64,
    /// `whsec_` and the base64 of 32 bytes: the key of each message's `webhook-signature`
    /// (Standard Webhooks). Shown this once.
    pub secret: String,
}

impl Webhook {
    pub fn of(row: &crate::store::webhooks::EndpointRow) -> Self {
        Self {
            id: row.id,
            url: row.url.clone(),
            events: row
                .events
                .split(',')
                .filter(|e| !e.is_empty())
                .map(str::to_owned)
                .collect(),
            enabled: row.enabled != 0,
            failures: row.failures,
            created_at: row.created_at,
        }
    }
}
