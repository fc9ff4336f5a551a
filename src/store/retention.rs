//! Erasure: what retention takes from an ended instance (its answers' words, files, contacts,
//! its emails' error texts, the file names its outbox messages carry), and what `orchestra
//! contact erase` takes from every row that holds an address. The instance's shape stays: its
//! steps, states, times, participants' role names and the answers' hashes.

use super::{Db, placeholders};

/// What an erased answer reads as: the pages and the API say "erased" where the words were.
pub const ERASED: &str = r#"{"erased":true}"#;

/// What an erased address is replaced with where it stood inside a longer text.
pub const ERASED_ADDRESS: &str = "[erased]";

/// Each workflow's id and the definition of its newest version (JSON), for its retention period.
pub async fn workflows(db: &Db) -> Result<Vec<(i64, String)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT v.workflow_id, v.definition FROM workflow_versions v \
         WHERE v.number = (SELECT MAX(x.number) FROM workflow_versions x \
         WHERE x.workflow_id = v.workflow_id)",
    )
    .fetch_all(db.reader())
    .await
}

/// Up to `limit` instances of `workflow` that ended at or before `cutoff` and are not erased,
/// oldest end first: one range of the partial index `instances_erase_due` (workflow_id,
/// ended_at), which holds only ended instances not erased yet (docs/plans/retention_*.txt).
pub async fn due(db: &Db, workflow: i64, cutoff: i64, limit: i64) -> Result<Vec<i64>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT id FROM instances WHERE workflow_id = $1 AND ended_at <= $2 \
         AND erased_at IS NULL ORDER BY ended_at LIMIT $3",
    )
    .bind(workflow)
    .bind(cutoff)
    .bind(limit)
    .fetch_all(db.reader())
    .await
}

/// The kept and arriving files of these instances, whose bytes go before their rows.
pub async fn files_of(db: &Db, instances: &[i64]) -> Result<Vec<i64>, sqlx::Error> {
    if instances.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT id FROM files WHERE instance_id IN ({})",
        placeholders(1, instances.len(), 1)
    );
    let mut query = sqlx::query_scalar(&sql);
    for id in instances {
        query = query.bind(*id);
    }
    query.fetch_all(db.reader()).await
}

/// Erases ended instances in one transaction (their files' bytes went before, `files::erase_bytes`):
/// every history line's answer becomes [`ERASED`] (its hash column is left as it is), their files'
/// rows, contacts, emails' error texts and outbox messages' file names go, and each is marked
/// `erased_at`. A running instance among `instances` is left alone. How many were erased.
pub async fn erase(db: &Db, instances: &[i64], now: i64) -> Result<u64, sqlx::Error> {
    if instances.is_empty() {
        return Ok(0);
    }
    let ids = placeholders(2, instances.len(), 1);
    let mut tx = db.write().await?;
    let marked = format!(
        "UPDATE instances SET erased_at = $1 WHERE id IN ({ids}) AND erased_at IS NULL \
         AND state <> 'active' RETURNING id"
    );
    let mut query = sqlx::query_scalar::<_, i64>(&marked).bind(now);
    for id in instances {
        query = query.bind(*id);
    }
    let erased = query.fetch_all(&mut *tx).await?;
    if erased.is_empty() {
        tx.commit().await?;
        return Ok(0);
    }
    let ids = placeholders(1, erased.len(), 1);
    let statements = [
        format!(
            "UPDATE history SET answer = '{ERASED}' WHERE instance_id IN ({ids}) AND answer <> '{{}}'"
        ),
        format!(
            "DELETE FROM file_chunks WHERE file_id IN (SELECT id FROM files WHERE instance_id IN ({ids}))"
        ),
        format!("DELETE FROM files WHERE instance_id IN ({ids})"),
        format!("DELETE FROM contacts WHERE instance_id IN ({ids})"),
        format!("UPDATE mails SET error = NULL WHERE instance_id IN ({ids}) AND error IS NOT NULL"),
        format!(
            "UPDATE outbox SET files = NULL WHERE instance_id IN ({ids}) AND files IS NOT NULL"
        ),
    ];
    for sql in &statements {
        let mut query = sqlx::query(sql);
        for id in &erased {
            query = query.bind(*id);
        }
        query.execute(&mut *tx).await?;
    }
    tx.commit().await?;
    Ok(erased.len() as u64)
}

/// Rows and texts that may hold an address, scrubbed by `erase_address`: (table, key, column).
const TEXTS: [(&str, &str, &str); 9] = [
    ("history", "id", "answer"),
    ("instances", "id", "subject_title"),
    ("instances", "id", "subject_body"),
    ("instances", "id", "started_by"),
    ("mails", "id", "error"),
    ("api_idempotency", "id", "body"),
    ("webhook_attempts", "id", "error"),
    ("files", "id", "name"),
    ("outbox", "id", "files"),
];

/// Rows `erase_address` changed, by what.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AddressErased {
    /// Contacts rows deleted.
    pub contacts: u64,
    /// Emails to those contacts: error texts cleared and those still pending skipped.
    pub mails: u64,
    /// Other rows whose text held the address, now `[erased]` there.
    pub texts: u64,
}

impl AddressErased {
    pub fn total(&self) -> u64 {
        self.contacts + self.mails + self.texts
    }
}

/// Removes `address` (lower case) from every row that holds it, in one transaction, whatever the
/// instances' states: the contacts rows with it (compared without case), the error texts of the
/// emails to those participants (an SMTP error may quote the address), their emails still
/// pending (a running instance's participant simply gets no more email), and every text of
/// [`TEXTS`] where it appears, where it becomes [`ERASED_ADDRESS`]. The texts are searched
/// whole (an operator's command, not a visitor's path).
pub async fn erase_address(db: &Db, address: &str) -> Result<AddressErased, sqlx::Error> {
    let like = format!("%{}%", like_escaped(address));
    let mut tx = db.write().await?;
    let mut done = AddressErased::default();
    let of_contact = "EXISTS (SELECT 1 FROM contacts c WHERE c.instance_id = mails.instance_id \
         AND c.participant = mails.participant AND LOWER(c.email) = $1)";
    done.mails += sqlx::query(&format!(
        "UPDATE mails SET state = 'skipped' WHERE state = 'pending' AND {of_contact}"
    ))
    .bind(address)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    done.mails += sqlx::query(&format!(
        "UPDATE mails SET error = NULL WHERE error IS NOT NULL AND {of_contact}"
    ))
    .bind(address)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    done.contacts = sqlx::query("DELETE FROM contacts WHERE LOWER(email) = $1")
        .bind(address)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    for (table, key, column) in TEXTS {
        let found: Vec<(i64, String)> = sqlx::query_as(&format!(
            "SELECT {key}, {column} FROM {table} WHERE LOWER({column}) LIKE $1 ESCAPE '\\'"
        ))
        .bind(&like)
        .fetch_all(&mut *tx)
        .await?;
        for (id, text) in found {
            let Some(scrubbed) = without(&text, address) else {
                continue;
            };
            sqlx::query(&format!(
                "UPDATE {table} SET {column} = $1 WHERE {key} = $2"
            ))
            .bind(scrubbed)
            .bind(id)
            .execute(&mut *tx)
            .await?;
            done.texts += 1;
        }
    }
    tx.commit().await?;
    Ok(done)
}

/// `text` with every occurrence of `address` (lower case ASCII compared without case) replaced
/// by [`ERASED_ADDRESS`]; `None` when it holds none.
pub fn without(text: &str, address: &str) -> Option<String> {
    if address.is_empty() {
        return None;
    }
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (at, _) in lower.match_indices(address) {
        if at < from {
            continue;
        }
        out.push_str(&text[from..at]);
        out.push_str(ERASED_ADDRESS);
        from = at + address.len();
    }
    if from == 0 {
        return None;
    }
    out.push_str(&text[from..]);
    Some(out)
}

/// `s` for a `LIKE … ESCAPE '\'` pattern: its `%`, `_` and `\` taken as themselves.
fn like_escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_replaced_wherever_it_stands_whatever_its_case() {
        assert_eq!(
            without(
                r#"{"to":"Ann@Example.org","cc":"ann@example.org!"}"#,
                "ann@example.org"
            )
            .as_deref(),
            Some(r#"{"to":"[erased]","cc":"[erased]!"}"#)
        );
        assert_eq!(without("nothing here", "ann@example.org"), None);
        assert_eq!(like_escaped("a_b%c\\d"), "a\\_b\\%c\\\\d");
    }
}
