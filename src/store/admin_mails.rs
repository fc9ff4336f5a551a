//! Administrators' own emails (`domain::mail::admin` owns their rules): an invitation, a reset
//! link, a notice that a password or a second factor changed. A row holds the address, the
//! name, the language and, for a link, the nonce the token is derived from with the site keys:
//! never the link. Also the address an invitation was made for, and an administrator's language.

use super::Db;

/// A row a sender holds. By hand `Debug`: an address is personal data.
#[derive(Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Claimed {
    pub id: i64,
    pub kind: String,
    pub admin_id: Option<i64>,
    pub email: String,
    pub name: String,
    pub lang: String,
    pub nonce: String,
    pub expires_at: Option<i64>,
    pub attempts: i64,
}

impl std::fmt::Debug for Claimed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Claimed")
            .field("id", &self.id)
            .field("kind", &self.kind)
            .field("admin_id", &self.admin_id)
            .finish_non_exhaustive()
    }
}

/// What to queue.
pub struct New<'a> {
    pub kind: &'a str,
    pub admin_id: Option<i64>,
    pub email: &'a str,
    pub name: &'a str,
    pub lang: &'a str,
    pub nonce: &'a str,
    pub expires_at: Option<i64>,
}

pub async fn queue(db: &Db, new: &New<'_>, now: i64) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO admin_mails (kind, admin_id, email, name, lang, nonce, expires_at, \
         next_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING id",
    )
    .bind(new.kind)
    .bind(new.admin_id)
    .bind(new.email)
    .bind(new.name)
    .bind(new.lang)
    .bind(new.nonce)
    .bind(new.expires_at)
    .bind(now)
    .fetch_one(&db.pool)
    .await
}

/// Claims up to `limit` due rows for `lease` seconds (`store::queue`).
pub async fn claim(db: &Db, now: i64, lease: i64, limit: i64) -> Result<Vec<Claimed>, sqlx::Error> {
    let due: Vec<Claimed> = sqlx::query_as(
        "SELECT id, kind, admin_id, email, name, lang, nonce, expires_at, attempts \
         FROM admin_mails WHERE state = 'pending' AND next_at <= $1 \
         AND (claimed_until IS NULL OR claimed_until < $1) ORDER BY next_at, id LIMIT $2",
    )
    .bind(now)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    let taken = super::queue::take(
        db,
        super::queue::Table::AdminMails,
        due.iter().map(|m| m.id).collect::<Vec<_>>(),
        now,
        now + lease,
    )
    .await?;
    Ok(due.into_iter().filter(|m| taken.contains(&m.id)).collect())
}

/// Records how a claimed row ended and releases its claim: `state` is `pending` (with
/// `next_at`, tried again), `sent`, `failed` or `skipped`.
pub async fn finish(
    db: &Db,
    id: i64,
    state: &str,
    next_at: i64,
    error: Option<&str>,
    tried: bool,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE admin_mails SET state = $1, next_at = $2, error = $3, claimed_until = NULL, \
         attempts = attempts + $4, sent_at = CASE WHEN $1 = 'sent' THEN $2 ELSE sent_at END \
         WHERE id = $5",
    )
    .bind(state)
    .bind(next_at)
    .bind(error)
    .bind(i64::from(tried))
    .bind(id)
    .execute(&db.pool)
    .await
    .map(|_| ())
}

/// Records the address an invitation was made for on its waiting row.
pub async fn set_invite_email(db: &Db, token_hash: &str, email: &str) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE setup_tokens SET email = $1 WHERE token_hash = $2")
        .bind(email)
        .bind(token_hash)
        .execute(&db.pool)
        .await
        .map(|_| ())
}

/// The address a waiting invitation was made for.
pub async fn invite_email(db: &Db, token_hash: &str) -> Result<Option<String>, sqlx::Error> {
    Ok(sqlx::query_scalar::<_, Option<String>>(
        "SELECT email FROM setup_tokens WHERE token_hash = $1",
    )
    .bind(token_hash)
    .fetch_optional(db.reader())
    .await?
    .flatten())
}

/// Whether an administrator other than `except`, or a live invitation, holds `email`.
pub async fn email_taken(
    db: &Db,
    email: &str,
    except: Option<i64>,
    now: i64,
) -> Result<bool, sqlx::Error> {
    let n: i64 = sqlx::query_scalar(
        "SELECT (SELECT COUNT(*) FROM admins WHERE email = $1 AND id <> $2) + \
         (SELECT COUNT(*) FROM setup_tokens WHERE email = $1 AND expires > $3)",
    )
    .bind(email)
    .bind(except.unwrap_or(-1))
    .bind(now)
    .fetch_one(&db.pool)
    .await?;
    Ok(n > 0)
}

/// Sets an administrator's address (lowercased by the caller; `None` removes it) and, when
/// given, the language their emails are written in. `false` when another administrator holds it.
pub async fn set_email(
    db: &Db,
    id: i64,
    email: Option<&str>,
    lang: Option<&str>,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE admins SET email = $1, lang = COALESCE($2, lang) WHERE id = $3 \
         AND NOT EXISTS (SELECT 1 FROM admins AS other WHERE other.email = $1 AND other.id <> $3)",
    )
    .bind(email)
    .bind(lang)
    .bind(id)
    .execute(&db.pool)
    .await;
    match done {
        Ok(r) => Ok(r.rows_affected() == 1),
        // Two taking one address at once: the unique index refuses the second.
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Ok(false),
        Err(e) => Err(e),
    }
}

/// An administrator's address and language, when they have an address.
pub async fn contact_of(db: &Db, id: i64) -> Result<Option<(String, String, String)>, sqlx::Error> {
    let row: Option<(String, Option<String>, String)> =
        sqlx::query_as("SELECT name, email, lang FROM admins WHERE id = $1")
            .bind(id)
            .fetch_optional(db.reader())
            .await?;
    Ok(row.and_then(|(name, email, lang)| email.map(|e| (name, e, lang))))
}
