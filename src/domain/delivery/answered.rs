//! What a step.answered message tells of an answer: the files it brought, no more (a module
//! of its own, so the outbox's store reads it without reaching the rest of delivery).

use serde_json::{Value, json};

/// The files a step.answered answer brought, as a receiver is told of them: the field each came
/// in, its name, size, kind and SHA-256. Made from the answer when it is recorded, and kept in
/// the outbox as this list alone; `None` for a message that is not an answer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AnsweredFiles(pub Option<Vec<Value>>);

/// As the outbox keeps it: the list's JSON, or NULL.
impl From<Option<String>> for AnsweredFiles {
    fn from(kept: Option<String>) -> Self {
        Self(kept.and_then(|list| serde_json::from_str(&list).ok()))
    }
}

impl AnsweredFiles {
    /// The list as the outbox keeps it.
    pub fn to_json(&self) -> Option<String> {
        self.0
            .as_ref()
            .map(|list| Value::Array(list.clone()).to_string())
    }

    /// The files of an answer as recorded (`interaction::Given`'s JSON): nothing else of it.
    pub fn of_answer(answer: &str) -> Self {
        #[derive(serde::Deserialize)]
        struct Line {
            #[serde(default)]
            name: String,
            file: Option<File>,
        }
        // As `domain::files::Stored` writes it; read here apart, so the store's row type reaches
        // nothing that reaches the store.
        #[derive(serde::Deserialize)]
        struct File {
            name: String,
            size: u64,
            media_type: String,
            sha256: String,
        }
        #[derive(serde::Deserialize)]
        struct Answer {
            #[serde(default)]
            fields: Vec<Line>,
        }
        let lines =
            serde_json::from_str::<Answer>(answer).map_or_else(|_| Vec::new(), |a| a.fields);
        let files = lines.into_iter().filter_map(|l| {
            l.file.map(|f| {
                json!({
                    "field": l.name,
                    "name": f.name,
                    "size": f.size,
                    "media_type": f.media_type,
                    "sha256": f.sha256,
                })
            })
        });
        Self(Some(files.collect()))
    }
}
