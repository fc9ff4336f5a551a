//! Administrators and their one-time links: the first administrator's setup token, and the
//! invitations and password resets one administrator makes for another. A link's token is
//! stored only as a keyed hash.

use super::Db;

#[derive(Debug, sqlx::FromRow)]
pub struct Admin {
    pub id: i64,
    pub name: String,
    pub password_hash: String,
    pub created_at: i64,
    pub disabled_at: Option<i64>,
    pub last_sign_in_at: Option<i64>,
    /// Sessions signed in under another epoch no longer work.
    pub auth_epoch: i64,
    /// Part of the sign-in limits' per-account keys (`domain::login::account_keys`).
    pub login_epoch: i64,
    /// Lowercased; at most one administrator has a given address.
    pub email: Option<String>,
    /// `owner`, `editor` or `viewer` (`domain::roles`).
    pub role: String,
}

const COLUMNS: &str = "id, name, password_hash, created_at, disabled_at, last_sign_in_at, \
                       auth_epoch, login_epoch, email, role";

/// What a one-time link is for, as its row's `purpose` says.
pub const SETUP: &str = "setup";
pub const INVITE: &str = "invite";
/// An invitation's purpose carries the role it gives, after this: `invite:editor`. A bare
/// `invite` (made before roles) gives an owner, what every administrator was then.
const ROLE_AFTER: &str = ":";
/// Matches the purpose `$2` and that purpose with a role after it.
const PURPOSE_IS: &str = "(purpose = $2 OR purpose LIKE $2 || ':%')";
pub const RESET: &str = "reset";

pub async fn count(db: &Db) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT COUNT(*) FROM admins")
        .fetch_one(db.reader())
        .await
}

/// Every administrator, by name.
pub async fn list(db: &Db) -> Result<Vec<Admin>, sqlx::Error> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM admins ORDER BY name"))
        .fetch_all(db.reader())
        .await
}

pub async fn by_name(db: &Db, name: &str) -> Result<Option<Admin>, sqlx::Error> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM admins WHERE name = $1"))
        .bind(name)
        .fetch_optional(db.reader())
        .await
}

/// The administrator with this address, given lowercased.
pub async fn by_email(db: &Db, email: &str) -> Result<Option<Admin>, sqlx::Error> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM admins WHERE email = $1"))
        .bind(email)
        .fetch_optional(db.reader())
        .await
}

pub async fn by_id(db: &Db, id: i64) -> Result<Option<Admin>, sqlx::Error> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM admins WHERE id = $1"))
        .bind(id)
        .fetch_optional(db.reader())
        .await
}

/// Creates an administrator, an owner; `Ok(None)` when the name is taken.
pub async fn create(db: &Db, name: &str, password_hash: &str) -> Result<Option<i64>, sqlx::Error> {
    create_as(db, name, password_hash, "owner").await
}

/// Creates an administrator with a role; `Ok(None)` when the name is taken.
pub async fn create_as(
    db: &Db,
    name: &str,
    password_hash: &str,
    role: &str,
) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO admins (name, password_hash, created_at, role) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (name) DO NOTHING RETURNING id",
    )
    .bind(name)
    .bind(password_hash)
    .bind(super::now())
    .bind(role)
    .fetch_optional(&db.pool)
    .await
}

/// Sets a new password and moves the administrator to a new epoch, so that every session
/// signed in before stops working; returns the new epoch, `None` for an unknown id. Any reset
/// link waiting for this administrator is spent too: the password it would set is outdated.
pub async fn set_password(
    db: &Db,
    id: i64,
    password_hash: &str,
) -> Result<Option<i64>, sqlx::Error> {
    let mut tx = db.write().await?;
    let epoch: Option<i64> = sqlx::query_scalar(
        "UPDATE admins SET password_hash = $1, auth_epoch = auth_epoch + 1 WHERE id = $2 \
         RETURNING auth_epoch",
    )
    .bind(password_hash)
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM setup_tokens WHERE purpose = $1 AND admin_id = $2")
        .bind(RESET)
        .bind(id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(epoch)
}

pub async fn signed_in(db: &Db, id: i64, at: i64) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE admins SET last_sign_in_at = $1 WHERE id = $2")
        .bind(at)
        .bind(id)
        .execute(&db.pool)
        .await
        .map(|_| ())
}

/// Whether a statement may take an administrator out of the active ones: true when another
/// active one remains. Checked inside the statement that does it, so two administrators
/// disabling each other at once cannot leave none.
const ANOTHER_ACTIVE: &str =
    "(SELECT COUNT(*) FROM admins AS other WHERE other.disabled_at IS NULL AND other.id <> $1) > 0";

/// Whether a statement may take the administrator `$1` out of the active owners (a disable, a
/// removal, a new role): true when it is not an active owner, or another active owner remains.
/// Checked inside the statement, after `lock_owners`, so that two owners demoting each other at
/// once cannot leave none.
const OWNER_REMAINS: &str = "(admins.role <> 'owner' OR admins.disabled_at IS NOT NULL OR \
     (SELECT COUNT(*) FROM admins AS other WHERE other.disabled_at IS NULL \
      AND other.role = 'owner' AND other.id <> $1) > 0)";

/// On PostgreSQL, locks the active owners' rows for the rest of the transaction: a second
/// statement taking an owner away waits for the first to commit, and its check then counts
/// what the first left (each statement reads afresh). SQLite's write transaction already holds
/// the whole database.
async fn lock_owners(
    db: &Db,
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
) -> Result<(), sqlx::Error> {
    if db.backend == super::Backend::Postgres {
        sqlx::query(
            "SELECT id FROM admins WHERE role = 'owner' AND disabled_at IS NULL FOR UPDATE",
        )
        .fetch_all(&mut **tx)
        .await?;
    }
    Ok(())
}

/// What a disable or a removal did.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Done,
    Unknown,
    /// Refused: it is the last active administrator.
    LastActive,
    /// Refused: it is the last active owner.
    LastOwner,
    /// Nothing to do (already disabled, already active).
    Unchanged,
}

/// Disables an administrator (and ends its sessions), unless it is the last active one.
pub async fn disable(db: &Db, id: i64, at: i64) -> Result<Outcome, sqlx::Error> {
    let mut tx = db.write().await?;
    lock_owners(db, &mut tx).await?;
    let current: Option<Option<i64>> =
        sqlx::query_scalar("SELECT disabled_at FROM admins WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
    let outcome = match current {
        None => Outcome::Unknown,
        Some(Some(_)) => Outcome::Unchanged,
        Some(None) => {
            let done = sqlx::query(&format!(
                "UPDATE admins SET disabled_at = $2, auth_epoch = auth_epoch + 1 \
                 WHERE id = $1 AND disabled_at IS NULL AND {ANOTHER_ACTIVE} AND {OWNER_REMAINS}"
            ))
            .bind(id)
            .bind(at)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if done > 0 {
                Outcome::Done
            } else {
                last_of(&mut tx, id).await?
            }
        }
    };
    tx.commit().await?;
    Ok(outcome)
}

/// Why a statement taking an administrator out of the active ones changed nothing: the last
/// active administrator, else the last active owner.
async fn last_of(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    id: i64,
) -> Result<Outcome, sqlx::Error> {
    let others: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM admins WHERE disabled_at IS NULL AND id <> $1")
            .bind(id)
            .fetch_one(&mut **tx)
            .await?;
    Ok(if others > 0 {
        Outcome::LastOwner
    } else {
        Outcome::LastActive
    })
}

/// Gives an administrator a role (`owner`, `editor` or `viewer`), unless it would take away the
/// last active owner.
pub async fn set_role(db: &Db, id: i64, role: &str) -> Result<Outcome, sqlx::Error> {
    let mut tx = db.write().await?;
    lock_owners(db, &mut tx).await?;
    let current: Option<String> = sqlx::query_scalar("SELECT role FROM admins WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
    let outcome = match current {
        None => Outcome::Unknown,
        Some(current) if current == role => Outcome::Unchanged,
        Some(_) => {
            let done = sqlx::query(&format!(
                "UPDATE admins SET role = $2 WHERE id = $1 AND ($2 = 'owner' OR {OWNER_REMAINS})"
            ))
            .bind(id)
            .bind(role)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if done > 0 {
                Outcome::Done
            } else {
                Outcome::LastOwner
            }
        }
    };
    tx.commit().await?;
    Ok(outcome)
}

pub async fn enable(db: &Db, id: i64) -> Result<Outcome, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE admins SET disabled_at = NULL WHERE id = $1 AND disabled_at IS NOT NULL",
    )
    .bind(id)
    .execute(&db.pool)
    .await?
    .rows_affected();
    if done > 0 {
        return Ok(Outcome::Done);
    }
    Ok(match by_id(db, id).await? {
        Some(_) => Outcome::Unchanged,
        None => Outcome::Unknown,
    })
}

/// Removes an administrator and its waiting links, unless it is the last active one.
pub async fn remove(db: &Db, id: i64) -> Result<Outcome, sqlx::Error> {
    let mut tx = db.write().await?;
    lock_owners(db, &mut tx).await?;
    let exists: Option<i64> = sqlx::query_scalar("SELECT id FROM admins WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
    if exists.is_none() {
        return Ok(Outcome::Unknown);
    }
    let done = sqlx::query(&format!(
        "DELETE FROM admins WHERE id = $1 \
         AND (disabled_at IS NOT NULL OR {ANOTHER_ACTIVE}) AND {OWNER_REMAINS}"
    ))
    .bind(id)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if done == 0 {
        return last_of(&mut tx, id).await;
    }
    sqlx::query("DELETE FROM setup_tokens WHERE admin_id = $1")
        .bind(id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Outcome::Done)
}

/// Moves the administrator's sign-in keys to a new epoch; returns the old epoch, `None` for an
/// unknown id.
pub async fn next_login_epoch(db: &Db, id: i64) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar(
        "UPDATE admins SET login_epoch = login_epoch + 1 WHERE id = $1 RETURNING login_epoch - 1",
    )
    .bind(id)
    .fetch_optional(&db.pool)
    .await
}

/// Replaces any setup token with this one (stored as a keyed hash, never as it is).
pub async fn put_setup_token(db: &Db, token_hash: &str, expires: i64) -> Result<(), sqlx::Error> {
    let mut tx = db.write().await?;
    sqlx::query("DELETE FROM setup_tokens WHERE purpose = $1")
        .bind(SETUP)
        .execute(&mut *tx)
        .await?;
    sqlx::query("INSERT INTO setup_tokens (token_hash, expires, purpose) VALUES ($1, $2, $3)")
        .bind(token_hash)
        .bind(expires)
        .bind(SETUP)
        .execute(&mut *tx)
        .await?;
    tx.commit().await
}

pub async fn setup_token_valid(db: &Db, token_hash: &str, now: i64) -> Result<bool, sqlx::Error> {
    let found: Option<i64> = sqlx::query_scalar(
        "SELECT expires FROM setup_tokens WHERE token_hash = $1 AND expires > $2 AND purpose = $3",
    )
    .bind(token_hash)
    .bind(now)
    .bind(SETUP)
    .fetch_optional(db.reader())
    .await?;
    Ok(found.is_some())
}

/// Creates the first administrator and spends the setup token, in one transaction; `Ok(None)`
/// when the token is no longer valid or an administrator already exists.
pub async fn create_first(
    db: &Db,
    token_hash: &str,
    name: &str,
    password_hash: &str,
) -> Result<Option<i64>, sqlx::Error> {
    let mut tx = db.write().await?;
    let spent = sqlx::query(
        "DELETE FROM setup_tokens WHERE token_hash = $1 AND expires > $2 AND purpose = $3",
    )
    .bind(token_hash)
    .bind(super::now())
    .bind(SETUP)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    let existing: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM admins")
        .fetch_one(&mut *tx)
        .await?;
    if spent == 0 || existing > 0 {
        return Ok(None);
    }
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO admins (name, password_hash, created_at) VALUES ($1, $2, $3) RETURNING id",
    )
    .bind(name)
    .bind(password_hash)
    .bind(super::now())
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Some(id))
}

/// A waiting invitation or reset, as its link finds it.
#[derive(Debug, sqlx::FromRow)]
pub struct Pending {
    pub purpose: String,
    pub admin_id: Option<i64>,
    pub name: Option<String>,
}

/// Stores an invitation for `name` as an owner, replacing any other waiting for that name.
pub async fn put_invite(
    db: &Db,
    token_hash: &str,
    name: &str,
    expires: i64,
) -> Result<(), sqlx::Error> {
    put_invite_as(db, token_hash, name, "owner", expires).await
}

/// Stores an invitation for `name` with the role it will have, replacing any other waiting
/// for that name.
pub async fn put_invite_as(
    db: &Db,
    token_hash: &str,
    name: &str,
    role: &str,
    expires: i64,
) -> Result<(), sqlx::Error> {
    let mut tx = db.write().await?;
    sqlx::query(&format!(
        "DELETE FROM setup_tokens WHERE name = $1 AND {PURPOSE_IS}"
    ))
    .bind(name)
    .bind(INVITE)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO setup_tokens (token_hash, expires, purpose, name) VALUES ($1, $2, $3, $4)",
    )
    .bind(token_hash)
    .bind(expires)
    .bind(format!("{INVITE}{ROLE_AFTER}{role}"))
    .bind(name)
    .execute(&mut *tx)
    .await?;
    tx.commit().await
}

/// Stores a reset link for an administrator, replacing any other waiting for it.
pub async fn put_reset(
    db: &Db,
    token_hash: &str,
    admin_id: i64,
    expires: i64,
) -> Result<(), sqlx::Error> {
    let mut tx = db.write().await?;
    sqlx::query("DELETE FROM setup_tokens WHERE purpose = $1 AND admin_id = $2")
        .bind(RESET)
        .bind(admin_id)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO setup_tokens (token_hash, expires, purpose, admin_id) VALUES ($1, $2, $3, $4)",
    )
    .bind(token_hash)
    .bind(expires)
    .bind(RESET)
    .bind(admin_id)
    .execute(&mut *tx)
    .await?;
    tx.commit().await
}

/// The invitation or reset a token hash opens, while it has not expired.
pub async fn pending(
    db: &Db,
    token_hash: &str,
    purpose: &str,
    now: i64,
) -> Result<Option<Pending>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT purpose, admin_id, name FROM setup_tokens \
         WHERE token_hash = $1 AND {PURPOSE_IS} AND expires > $3"
    ))
    .bind(token_hash)
    .bind(purpose)
    .bind(now)
    .fetch_optional(db.reader())
    .await
}

/// Spends an invitation and creates the administrator it names, in one transaction;
/// `Ok(None)` when the link is spent or expired, or the name was taken meanwhile.
pub async fn accept_invite(
    db: &Db,
    token_hash: &str,
    password_hash: &str,
    now: i64,
) -> Result<Option<(i64, String)>, sqlx::Error> {
    let mut tx = db.write().await?;
    let spent: Option<(Option<String>, String)> = sqlx::query_as(&format!(
        "DELETE FROM setup_tokens WHERE token_hash = $1 AND {PURPOSE_IS} AND expires > $3 \
         RETURNING name, purpose"
    ))
    .bind(token_hash)
    .bind(INVITE)
    .bind(now)
    .fetch_optional(&mut *tx)
    .await?;
    let Some((Some(name), purpose)) = spent else {
        return Ok(None);
    };
    let role = invited_role(&purpose);
    let id: Option<i64> = sqlx::query_scalar(
        "INSERT INTO admins (name, password_hash, created_at, role) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (name) DO NOTHING RETURNING id",
    )
    .bind(&name)
    .bind(password_hash)
    .bind(now)
    .bind(role)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(id) = id else {
        return Ok(None);
    };
    tx.commit().await?;
    Ok(Some((id, name)))
}

/// The role an invitation's purpose gives.
pub fn invited_role(purpose: &str) -> &str {
    purpose
        .split_once(ROLE_AFTER)
        .map_or("owner", |(_, role)| role)
}

/// Spends a reset link and sets the password it was made for, moving that administrator to a
/// new epoch (its sessions end); `Ok(None)` when the link is spent or expired.
pub async fn use_reset(
    db: &Db,
    token_hash: &str,
    password_hash: &str,
    now: i64,
) -> Result<Option<i64>, sqlx::Error> {
    let mut tx = db.write().await?;
    let admin: Option<Option<i64>> = sqlx::query_scalar(
        "DELETE FROM setup_tokens WHERE token_hash = $1 AND purpose = $2 AND expires > $3 \
         RETURNING admin_id",
    )
    .bind(token_hash)
    .bind(RESET)
    .bind(now)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(Some(admin)) = admin else {
        return Ok(None);
    };
    let done = sqlx::query(
        "UPDATE admins SET password_hash = $1, auth_epoch = auth_epoch + 1 WHERE id = $2",
    )
    .bind(password_hash)
    .bind(admin)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if done == 0 {
        return Ok(None);
    }
    tx.commit().await?;
    Ok(Some(admin))
}
