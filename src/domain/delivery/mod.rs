//! Telling other systems what happened: the outbox's messages, their JSON payloads,
//! and their Standard Webhooks signatures. A message is written with the change that causes it
//! (`store::outbox::record`, inside that change's transaction); what a payload says is decided
//! here, from the message's typed columns only, so no link, handle, secret or answer can reach
//! a receiver. See docs/delivery.md.

pub mod answered;
pub mod endpoints;
pub mod send;
pub mod signature;
pub mod special;
pub mod topic;

use serde_json::{Value, json};

use crate::store::outbox::MessageRow;

pub use answered::AnsweredFiles;
pub use topic::Topic;

/// A message's id as receivers see it (`webhook-id`): the same on every retry, so a receiver
/// can drop a message it has already handled.
pub fn message_id(m: &MessageRow) -> String {
    format!("msg_{}", m.id)
}

/// The JSON body of a message, in the Standard Webhooks shape: `type`, `timestamp` (when the
/// change was made, RFC 3339) and `data`. Only ids, the workflow's machine name, the step's
/// number and title, the participant, the state, a payment's amount and what files an answer
/// brought (`files`): never an answer, a file's bytes or where to download it.
pub fn payload(m: &MessageRow) -> Value {
    let mut data = json!({
        "instance": m.instance_id,
        "workflow": m.workflow,
        "at": m.created_at,
    });
    let fields = [
        ("step", m.step_index.map(Value::from)),
        ("step_title", m.step_title.clone().map(Value::from)),
        ("participant", m.participant.clone().map(Value::from)),
        ("state", m.state.clone().map(Value::from)),
        ("amount_cents", m.amount_cents.map(Value::from)),
        ("currency", m.currency.clone().map(Value::from)),
        ("files", m.files.0.clone().map(Value::Array)),
    ];
    if let Value::Object(map) = &mut data {
        for (name, value) in fields {
            if let Some(value) = value {
                map.insert(name.to_owned(), value);
            }
        }
    }
    json!({
        "type": m.event.as_str(),
        "timestamp": crate::time::format_iso(m.created_at),
        "data": data,
    })
}

/// How long the delivery log and what it tells of are kept once done with: delivered, failed
/// and set-aside deliveries, their attempts, and the messages no delivery names any more.
pub const KEEP_SECS: i64 = 30 * 24 * 3600;

/// Cron's cleanup: what is older than `KEEP_SECS` and done with, in batches (`store::expired`),
/// the attempts first, then the deliveries, then the messages they named. A pending delivery,
/// its attempts and its message are never touched. Returns how many rows went.
pub async fn clean(db: &crate::store::Db, now: i64) -> Result<u64, sqlx::Error> {
    use crate::store::expired::{Expired, delete};
    let cutoff = now - KEEP_SECS;
    let mut gone = 0;
    for kind in [
        Expired::WebhookAttempts,
        Expired::WebhookDeliveries,
        Expired::Outbox,
    ] {
        gone += delete(db, kind, cutoff).await?;
    }
    Ok(gone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_says_what_happened_and_no_more() {
        let m = MessageRow {
            id: 7,
            event: Topic::StepAnswered,
            instance_id: 3,
            workflow: "contract_review".into(),
            step_index: Some(0),
            step_title: Some("Legal review".into()),
            participant: Some("legal".into()),
            state: None,
            amount_cents: None,
            currency: None,
            created_at: 1_614_265_330,
            files: AnsweredFiles::of_answer(
                r#"{"fields":[{"name":"company","label":"Company","value":"Acme"}]}"#,
            ),
        };
        assert_eq!(message_id(&m), "msg_7");
        assert_eq!(
            payload(&m),
            json!({
                "type": "step.answered",
                "timestamp": "2021-02-25T15:02:10Z",
                "data": {
                    "instance": 3,
                    "workflow": "contract_review",
                    "at": 1_614_265_330,
                    "step": 0,
                    "step_title": "Legal review",
                    "participant": "legal",
                    "files": [],
                },
            })
        );
    }

    #[test]
    fn a_step_answered_payload_names_the_files_not_their_bytes_nor_the_answer() {
        let answer = r#"{"fields":[{"name":"company","label":"Company","value":"Acme secret"},
            {"name":"certificate","label":"Certificate","value":"c.pdf",
             "file":{"id":41,"name":"c.pdf","size":1234,"media_type":"application/pdf","sha256":"ab12"}}]}"#;
        let m = MessageRow {
            id: 8,
            event: Topic::StepAnswered,
            instance_id: 3,
            workflow: "suppliers".into(),
            step_index: Some(0),
            step_title: Some("Supplier".into()),
            participant: Some("supplier".into()),
            state: None,
            amount_cents: None,
            currency: None,
            created_at: 1_614_265_330,
            files: AnsweredFiles::from(AnsweredFiles::of_answer(answer).to_json()),
        };
        let body = payload(&m);
        assert_eq!(
            body["data"]["files"],
            json!([{"field": "certificate", "name": "c.pdf", "size": 1234,
                "media_type": "application/pdf", "sha256": "ab12"}])
        );
        let text = format!("{body} {m:?}");
        assert!(
            !text.contains("Acme secret") && !text.contains("\"id\""),
            "{text}"
        );
    }
}
