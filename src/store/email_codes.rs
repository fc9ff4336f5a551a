//! The emailed codes asked before a `| verify email` step, one row per link record
//! (`domain::interaction::code` owns their rules). A row keeps a nonce and a keyed hash,
//! never a code, and no address.

use super::Db;
use super::mails::Lane;

/// A link record's code, as stored.
#[derive(Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct CodeRow {
    pub link_id: i64,
    pub instance_id: i64,
    pub nonce: String,
    /// Empty once a right code spent it.
    pub code_hash: String,
    pub expires_at: i64,
    pub sends: i64,
    pub window_start: i64,
}

/// By hand: the nonce and the hash stay out of any log line.
impl std::fmt::Debug for CodeRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeRow")
            .field("link_id", &self.link_id)
            .field("expires_at", &self.expires_at)
            .field("sends", &self.sends)
            .finish_non_exhaustive()
    }
}

/// A new code for a link record, about to be stored and emailed.
#[derive(Clone, Copy, Debug)]
pub struct NewCode<'a> {
    pub link_id: i64,
    pub instance: i64,
    pub step: i64,
    pub participant: &'a str,
    pub nonce: &'a str,
    pub code_hash: &'a str,
    pub expires_at: i64,
    /// Codes a link may be sent in one window of `window` seconds.
    pub most: i64,
    pub window: i64,
}

/// What asking for a code came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Issued {
    Yes,
    /// The participant has no address in this instance.
    NoAddress,
    /// `most` codes were sent in the window; another may be asked from this time.
    TooMany(i64),
}

const COLUMNS: &str = "link_id, instance_id, nonce, code_hash, expires_at, sends, window_start";

/// Stores a new code for the link record and queues its email (kind `code`), in one
/// transaction: the email first (none without an address), then the row, whose update counts
/// the send only while under `most` in the window (the row's lock orders two asks at once).
pub async fn issue(db: &Db, code: &NewCode<'_>, now: i64) -> Result<Issued, sqlx::Error> {
    let mut tx = db.write().await?;
    let mail: Option<i64> = sqlx::query_scalar(
        "INSERT INTO mails (instance_id, participant, step_index, kind, lane, next_at, \
         created_at) SELECT instance_id, participant, $3, 'code', $4, $5, $5 FROM contacts \
         WHERE instance_id = $1 AND participant = $2 RETURNING id",
    )
    .bind(code.instance)
    .bind(code.participant)
    .bind(code.step)
    .bind(Lane::Site as i64)
    .bind(now)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(mail) = mail else {
        return Ok(Issued::NoAddress);
    };
    sqlx::query(
        "INSERT INTO email_codes (link_id, instance_id, nonce, code_hash, expires_at, sends, \
         window_start, mail_id) VALUES ($1, $2, '', '', 0, 0, $3, 0) \
         ON CONFLICT (link_id) DO NOTHING",
    )
    .bind(code.link_id)
    .bind(code.instance)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    let since = now - code.window;
    let counted = sqlx::query(
        "UPDATE email_codes SET \
         sends = CASE WHEN window_start <= $2 THEN 1 ELSE sends + 1 END, \
         window_start = CASE WHEN window_start <= $2 THEN $3 ELSE window_start END, \
         nonce = $4, code_hash = $5, expires_at = $6, mail_id = $7 \
         WHERE link_id = $1 AND (window_start <= $2 OR sends < $8)",
    )
    .bind(code.link_id)
    .bind(since)
    .bind(now)
    .bind(code.nonce)
    .bind(code.code_hash)
    .bind(code.expires_at)
    .bind(mail)
    .bind(code.most)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if counted == 0 {
        let start: i64 =
            sqlx::query_scalar("SELECT window_start FROM email_codes WHERE link_id = $1")
                .bind(code.link_id)
                .fetch_one(&mut *tx)
                .await?;
        tx.rollback().await?;
        return Ok(Issued::TooMany(start + code.window));
    }
    tx.commit().await?;
    Ok(Issued::Yes)
}

/// A link record's code, if one was ever asked.
pub async fn of_link(db: &Db, link_id: i64) -> Result<Option<CodeRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM email_codes WHERE link_id = $1"
    ))
    .bind(link_id)
    .fetch_optional(&db.pool)
    .await
}

/// The code an email carries: the row whose current email it is (an email a newer code
/// replaced finds none).
pub async fn of_mail(db: &Db, mail_id: i64) -> Result<Option<CodeRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM email_codes WHERE mail_id = $1"
    ))
    .bind(mail_id)
    .fetch_optional(&db.pool)
    .await
}

/// Spends the code of `nonce` once a right one was typed; `false` when another request spent
/// it first, or a new code replaced it.
pub async fn spend(db: &Db, link_id: i64, nonce: &str) -> Result<bool, sqlx::Error> {
    Ok(sqlx::query(
        "UPDATE email_codes SET code_hash = '', expires_at = 0 \
         WHERE link_id = $1 AND nonce = $2 AND code_hash <> ''",
    )
    .bind(link_id)
    .bind(nonce)
    .execute(&db.pool)
    .await?
    .rows_affected()
        == 1)
}
