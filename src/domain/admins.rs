//! Managing administrators, as the admin pages and the command line both do it: invitations
//! and reset links (one-time, stored as keyed hashes), password changes that end the other
//! sessions, disabling, enabling and removing (never the last active administrator), and
//! unlocking an account the sign-in limits hold. Log lines name administrators by id only.

use crate::domain::keys::{SiteKeys, random_token};
use crate::domain::login;
use crate::domain::roles::Role;
use crate::error::Refusable;
use crate::i18n::Message;
use crate::limits::address::Address;
use crate::store::{self, Db};

pub use crate::store::admins::Outcome;

/// How long an invitation waits for its administrator: a week, as a mailbox may be read late.
pub const INVITE_TTL: i64 = 7 * 86_400;
/// How long a reset link works: a day.
pub const RESET_TTL: i64 = 86_400;

/// The keyed hash purposes of the two links: a token of one is nothing to the other.
const INVITE_PURPOSE: &str = "admin-invite";
const RESET_PURPOSE: &str = "admin-reset";

/// The one-time links, as their pages take them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    Invite,
    Reset,
}

impl Link {
    fn purpose(self) -> (&'static str, &'static str) {
        match self {
            Self::Invite => (INVITE_PURPOSE, store::admins::INVITE),
            Self::Reset => (RESET_PURPOSE, store::admins::RESET),
        }
    }

    /// The path its page answers under.
    pub fn path(self) -> &'static str {
        match self {
            Self::Invite => "/setup/invite/",
            Self::Reset => "/setup/reset/",
        }
    }

    pub fn token_hash(self, keys: &SiteKeys, token: &str) -> String {
        keys.keyed_hash(self.purpose().0, token)
    }
}

/// Why a change to an administrator was refused, as web and command line both say it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    Unknown(String),
    LastActive(String),
    Disabled(String),
    /// Disabling, removing or demoting the last active owner.
    LastOwner(String),
}

impl Refusal {
    pub fn message(&self) -> Message {
        match self {
            Self::Unknown(name) => Message::new("admins-unknown").arg("name", name.clone()),
            Self::LastActive(name) => Message::new("admins-last-active").arg("name", name.clone()),
            Self::Disabled(name) => Message::new("admins-is-disabled").arg("name", name.clone()),
            Self::LastOwner(name) => Message::new("admins-last-owner").arg("name", name.clone()),
        }
    }
}

/// Makes an invitation for a new owner named `name`; its URL, shown once, or the field errors
/// of the name.
pub async fn invite(
    db: &Db,
    keys: &SiteKeys,
    base_url: &str,
    by: Option<i64>,
    name: &str,
) -> Result<String, Refusable<Vec<(String, Message)>>> {
    invite_as(db, keys, base_url, by, name, Role::Owner).await
}

/// Makes an invitation for a new administrator named `name`, who will have `role`; its URL,
/// shown once, or the field errors of the name.
pub async fn invite_as(
    db: &Db,
    keys: &SiteKeys,
    base_url: &str,
    by: Option<i64>,
    name: &str,
    role: Role,
) -> Result<String, Refusable<Vec<(String, Message)>>> {
    if !login::name_is_valid(name) {
        let invalid = Message::new("admin-name-invalid");
        return Err(Refusable::Refused(vec![("name".into(), invalid)]));
    }
    if store::admins::by_name(db, name).await?.is_some() {
        let taken = Message::new("cli-admin-exists").arg("name", name.to_owned());
        return Err(Refusable::Refused(vec![("name".into(), taken)]));
    }
    let token = random_token();
    let hash = Link::Invite.token_hash(keys, &token);
    let expires = store::now() + INVITE_TTL;
    store::admins::put_invite_as(db, &hash, name, role.as_str(), expires).await?;
    tracing::info!(by = ?by, role = role.as_str(), "administrator invitation made");
    Ok(format!("{base_url}{}{token}", Link::Invite.path()))
}

/// Makes a reset link for an administrator; its URL, shown once.
pub async fn reset_link(
    db: &Db,
    keys: &SiteKeys,
    base_url: &str,
    by: Option<i64>,
    admin: &store::admins::Admin,
) -> Result<String, Refusable<Refusal>> {
    if admin.disabled_at.is_some() {
        return Err(Refusable::Refused(Refusal::Disabled(admin.name.clone())));
    }
    let token = random_token();
    let hash = Link::Reset.token_hash(keys, &token);
    store::admins::put_reset(db, &hash, admin.id, store::now() + RESET_TTL).await?;
    tracing::info!(admin = admin.id, by = ?by, "administrator reset link made");
    Ok(format!("{base_url}{}{token}", Link::Reset.path()))
}

/// What a one-time link opens while it is valid: the invitee's name, or the name of the
/// administrator whose password it resets.
pub async fn opened(
    db: &Db,
    keys: &SiteKeys,
    link: Link,
    token: &str,
) -> Result<Option<String>, sqlx::Error> {
    let hash = link.token_hash(keys, token);
    let Some(pending) = store::admins::pending(db, &hash, link.purpose().1, store::now()).await?
    else {
        return Ok(None);
    };
    Ok(match link {
        Link::Invite => pending.name,
        Link::Reset => match pending.admin_id {
            Some(id) => store::admins::by_id(db, id)
                .await?
                .filter(|a| a.disabled_at.is_none())
                .map(|a| a.name),
            None => None,
        },
    })
}

/// Spends a link with the password its holder chose; the administrator's id, or `None` when
/// the link was spent or expired meanwhile.
pub async fn spend(
    db: &Db,
    keys: &SiteKeys,
    link: Link,
    token: &str,
    password_hash: &str,
) -> Result<Option<i64>, sqlx::Error> {
    let hash = link.token_hash(keys, token);
    let now = store::now();
    Ok(match link {
        Link::Invite => {
            let made = store::admins::accept_invite(db, &hash, password_hash, now).await?;
            if let Some((id, _)) = &made {
                tracing::info!(admin = id, "invited administrator chose a password");
            }
            made.map(|(id, _)| id)
        }
        Link::Reset => {
            let reset = store::admins::use_reset(db, &hash, password_hash, now).await?;
            if let Some(id) = reset {
                tracing::info!(
                    admin = id,
                    "administrator password reset by link; its sessions are signed out"
                );
            }
            reset
        }
    })
}

/// Sets an administrator's password; its sessions signed in before stop working. The new
/// epoch, for the one session that made the change to keep going.
pub async fn set_password(
    db: &Db,
    id: i64,
    password_hash: &str,
) -> Result<Option<i64>, sqlx::Error> {
    let epoch = store::admins::set_password(db, id, password_hash).await?;
    if epoch.is_some() {
        tracing::info!(
            admin = id,
            "administrator password changed; its other sessions are signed out"
        );
    }
    Ok(epoch)
}

pub async fn disable(db: &Db, admin: &store::admins::Admin) -> Result<(), Refusable<Refusal>> {
    let outcome = store::admins::disable(db, admin.id, store::now()).await?;
    if outcome == Outcome::Done {
        tracing::info!(
            admin = admin.id,
            "administrator disabled; its sessions are signed out"
        );
    }
    refusal_of(outcome, &admin.name)
}

/// Gives an administrator a role; never takes away the last active owner.
pub async fn set_role(
    db: &Db,
    admin: &store::admins::Admin,
    role: Role,
) -> Result<(), Refusable<Refusal>> {
    let outcome = store::admins::set_role(db, admin.id, role.as_str()).await?;
    if outcome == Outcome::Done {
        tracing::info!(
            admin = admin.id,
            role = role.as_str(),
            "administrator role changed"
        );
    }
    refusal_of(outcome, &admin.name)
}

pub async fn enable(db: &Db, admin: &store::admins::Admin) -> Result<(), Refusable<Refusal>> {
    let outcome = store::admins::enable(db, admin.id).await?;
    if outcome == Outcome::Done {
        tracing::info!(admin = admin.id, "administrator enabled");
    }
    refusal_of(outcome, &admin.name)
}

pub async fn remove(db: &Db, admin: &store::admins::Admin) -> Result<(), Refusable<Refusal>> {
    let outcome = store::admins::remove(db, admin.id).await?;
    if outcome == Outcome::Done {
        tracing::info!(admin = admin.id, "administrator removed");
    }
    refusal_of(outcome, &admin.name)
}

fn refusal_of(outcome: Outcome, name: &str) -> Result<(), Refusable<Refusal>> {
    match outcome {
        Outcome::Done | Outcome::Unchanged => Ok(()),
        Outcome::Unknown => Err(Refusable::Refused(Refusal::Unknown(name.to_owned()))),
        Outcome::LastActive => Err(Refusable::Refused(Refusal::LastActive(name.to_owned()))),
        Outcome::LastOwner => Err(Refusable::Refused(Refusal::LastOwner(name.to_owned()))),
    }
}

/// Lifts the per-account sign-in limit off one administrator: the account moves to its next
/// login epoch, so every process counts it afresh from its next attempt (the counting table
/// cannot forget one key without forgetting those sharing its cells; a key no one has counted
/// needs no forgetting). The old epoch's count, where an earlier version stored it per key,
/// goes too. Counts per address, and every other account's, are left as they are.
pub async fn unlock(db: &Db, keys: &SiteKeys, id: i64) -> Result<bool, sqlx::Error> {
    let Some(old) = store::admins::next_login_epoch(db, id).await? else {
        return Ok(false);
    };
    let event = Address::SignInAccount.event();
    store::flood::delete_identifier(db, event, &login::account_key(keys, id, old)).await?;
    tracing::info!(
        admin = id,
        "administrator unlocked: its sign-in failures count afresh"
    );
    Ok(true)
}
