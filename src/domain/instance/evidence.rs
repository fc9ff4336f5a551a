//! An instance's whole record, as an auditor asks for it: every step and round, every answer
//! with its SHA-256, which link record each came through and from which client (a keyed hash),
//! whether its holder was checked by an emailed code, who issued and revoked each link, each
//! email, each file, each receipt (by its id), and when retention erased it; and the SHA-256 of
//! the record itself, so a copy can be checked.
//!
//! The record is JSON. Its hash is over its canonical form: keys sorted, no spaces, UTF-8 as
//! is (RFC 8785's form for a record that holds only strings, integers, booleans and nulls,
//! which this one does). `json.dumps(record, sort_keys=True, separators=(",", ":"),
//! ensure_ascii=False)` in Python writes the same bytes. The time it was made stands outside
//! the record, so the same instance gives the same hash until something happens to it.

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{View, ViewOptions};
use crate::domain::workflow::versions::Cache;
use crate::error::Error;
use crate::store::{self, Db};

/// The record's format, named in it so a reader knows what it holds.
pub const FORMAT: &str = "orchestra-evidence/1";

/// The record and its hash.
#[derive(Debug)]
pub struct Evidence {
    pub record: Record,
    /// The instance's version, to show its answers in the reader's language.
    pub definition: std::sync::Arc<crate::domain::workflow::Definition>,
    /// The workflow's labels in other languages, for the page.
    pub workflow_labels: Option<String>,
    /// The record as JSON, whose canonical form `sha256` is the hash of.
    pub json: Value,
    pub sha256: String,
    pub generated_at: String,
}

impl Evidence {
    /// As the JSON download, the API and the CLI give it: the record, its hash and when it was
    /// made.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "record": self.json,
            "sha256": self.sha256,
            "generated_at": self.generated_at,
        })
    }
}

#[derive(Debug, Serialize)]
pub struct Record {
    pub format: &'static str,
    pub site: String,
    pub instance: InstancePart,
    pub steps: Vec<StepPart>,
    pub history: Vec<LinePart>,
    pub links: Vec<LinkPart>,
    pub emails: Vec<EmailPart>,
    pub contacts: Vec<ContactPart>,
    pub files: Vec<FilePart>,
    pub receipts: Vec<ReceiptPart>,
}

#[derive(Debug, Serialize)]
pub struct ReceiptPart {
    /// The receipt's `jti`.
    pub id: String,
    /// The history line of the answer it is for.
    pub line: i64,
    pub issued_at: String,
}

#[derive(Debug, Serialize)]
pub struct InstancePart {
    pub id: i64,
    pub workflow: Option<String>,
    pub workflow_label: Option<String>,
    pub version: i64,
    pub subject_title: String,
    pub subject_body: String,
    pub state: &'static str,
    pub step: i64,
    pub round: i64,
    pub started_at: String,
    pub updated_at: String,
    /// When retention or an erasure took its answers, files and contacts.
    pub erased_at: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct StepPart {
    pub number: usize,
    pub title: String,
    pub kind: &'static str,
    pub participants: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct LinePart {
    pub id: i64,
    pub at: String,
    pub step: i64,
    pub round: i64,
    pub event: String,
    pub step_title: String,
    pub kind: String,
    pub participant: String,
    pub branch: String,
    pub actor: String,
    /// The answer's JSON text exactly as stored: its SHA-256 is `answer_sha256`.
    pub answer: Option<String>,
    pub answer_sha256: Option<String>,
    pub link: Option<i64>,
    pub client: Option<String>,
    pub verified: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct LinkPart {
    pub id: i64,
    pub participant: String,
    pub issued_by: String,
    pub issued_at: String,
    pub expires: String,
    pub revoked_at: Option<String>,
    pub revoked_by: Option<String>,
    /// The history lines of the answers that came through it.
    pub used_by: Vec<i64>,
}

#[derive(Debug, Serialize)]
pub struct EmailPart {
    pub id: i64,
    pub kind: String,
    pub participant: String,
    pub step: i64,
    pub state: String,
    pub attempts: i64,
    pub queued_at: String,
    pub sent_at: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct ContactPart {
    pub participant: String,
    pub email: String,
    pub name: String,
    pub lang: String,
}

#[derive(Debug, Serialize)]
pub struct FilePart {
    pub id: i64,
    pub step: i64,
    pub field: String,
    pub name: String,
    pub size: i64,
    pub media_type: String,
    pub sha256: String,
}

/// How many of an instance's emails the record lists: more than its caps let it send.
const EMAILS: i64 = 10_000;

/// The evidence record of instance `id`, made at `now`; `None` when there is no such instance.
pub async fn read(
    db: &Db,
    versions: &Cache,
    site: &str,
    id: i64,
    now: i64,
) -> Result<Option<Evidence>, Error> {
    let options = ViewOptions {
        history_before: None,
        history_limit: 1,
        contacts: true,
    };
    let Some(view) = View::read(db, versions, id, options).await? else {
        return Ok(None);
    };
    let (lines, links, mut emails, files, receipts) = tokio::try_join!(
        store::history::record_lines(db, id),
        store::links::list(db, id),
        store::mails::of_instance(db, id, EMAILS),
        store::files::of_instance(db, id),
        store::receipts::of_instance(db, id),
    )?;
    emails.reverse();
    let iso = crate::time::format_iso;
    let i = &view.instance;
    let record = Record {
        format: FORMAT,
        site: site.to_owned(),
        instance: InstancePart {
            id: i.id,
            workflow: view.workflow_name.clone(),
            workflow_label: view.workflow_label.clone(),
            version: view.version,
            subject_title: i.subject_title.clone(),
            subject_body: i.subject_body.clone(),
            state: i.state.as_str(),
            step: i.step_index + 1,
            round: i.round,
            started_at: iso(i.created_at),
            updated_at: iso(i.updated_at),
            erased_at: i.erased_at.map(iso),
        },
        steps: view
            .definition
            .steps
            .iter()
            .enumerate()
            .map(|(n, s)| StepPart {
                number: n + 1,
                title: s.title.clone(),
                kind: s.interaction.kind(),
                participants: s
                    .participants()
                    .iter()
                    .map(|p| p.as_str().to_owned())
                    .collect(),
            })
            .collect(),
        links: links
            .into_iter()
            .rev()
            .map(|l| LinkPart {
                used_by: lines
                    .iter()
                    .filter(|h| h.link_id == Some(l.id))
                    .map(|h| h.id)
                    .collect(),
                id: l.id,
                participant: l.participant,
                issued_by: l.issued_by,
                issued_at: iso(l.issued_at),
                expires: iso(l.expires),
                revoked_at: l.revoked_at.map(iso),
                revoked_by: l.revoked_by,
            })
            .collect(),
        history: lines
            .into_iter()
            .map(|h| LinePart {
                id: h.id,
                at: iso(h.at),
                step: h.step_index + 1,
                round: h.round,
                answer: (h.event == "answered").then_some(h.answer),
                event: h.event,
                step_title: h.step_title,
                kind: h.kind,
                participant: h.participant,
                branch: h.branch,
                actor: h.actor,
                answer_sha256: h.answer_sha256,
                link: h.link_id,
                client: h.client,
                verified: h.verified,
            })
            .collect(),
        emails: emails
            .into_iter()
            .map(|m| EmailPart {
                id: m.id,
                kind: m.kind,
                participant: m.participant,
                step: m.step_index + 1,
                state: m.state,
                attempts: m.attempts,
                queued_at: iso(m.created_at),
                sent_at: m.sent_at.map(iso),
            })
            .collect(),
        contacts: view
            .contacts
            .unwrap_or_default()
            .into_iter()
            .map(|c| ContactPart {
                participant: c.participant,
                email: c.email,
                name: c.name,
                lang: c.lang,
            })
            .collect(),
        files: files
            .into_iter()
            .map(|f| FilePart {
                id: f.id,
                step: f.step_index + 1,
                field: f.field,
                name: f.name,
                size: f.size,
                media_type: f.media_type,
                sha256: f.sha256,
            })
            .collect(),
        receipts: receipts
            .into_iter()
            .map(|(id, line, issued_at)| ReceiptPart {
                id,
                line,
                issued_at: iso(issued_at),
            })
            .collect(),
    };
    let json = serde_json::to_value(&record).map_err(|_| Error::Corrupt("evidence record"))?;
    Ok(Some(Evidence {
        sha256: sha256_of(&json),
        json,
        record,
        definition: view.definition.clone(),
        workflow_labels: view.workflow_labels.clone(),
        generated_at: iso(now),
    }))
}

/// The SHA-256 of a record's canonical form (see the module's note), in hex.
pub fn sha256_of(record: &Value) -> String {
    hex::encode(Sha256::digest(canonical(record).as_bytes()))
}

/// The record with its keys sorted and no spaces: `serde_json`'s map is ordered by key (the
/// `preserve_order` feature would break this, and a test here would say so).
pub fn canonical(record: &Value) -> String {
    record.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_canonical_form_sorts_keys_and_has_no_spaces() {
        let v: Value = serde_json::from_str(r#"{"b": 1, "a": {"d": "é\n", "c": [true, null]}}"#)
            .expect("json");
        assert_eq!(canonical(&v), r#"{"a":{"c":[true,null],"d":"é\n"},"b":1}"#);
    }

    #[test]
    fn the_hash_follows_every_byte() {
        let a: Value = serde_json::from_str(r#"{"a":"x"}"#).expect("json");
        let b: Value = serde_json::from_str(r#"{"a":"y"}"#).expect("json");
        assert_ne!(sha256_of(&a), sha256_of(&b));
        assert_eq!(sha256_of(&a).len(), 64);
    }
}
