//! Managing administrators, as the admin pages and the command line both do it: invitations
//! and reset links (one-time, stored as keyed hashes), password changes that end the other
//! sessions, disabling, enabling and removing (never the last active administrator), and
//! unlocking an account the sign-in limits hold. Log lines name administrators by id only.

use crate::domain::keys::{SiteKeys, random_token};
use crate::domain::login;
use crate::domain::roles::Role;
use crate::error::Refusable;
use crate::i18n::{Lang, Message};
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

/// The keyed hash purpose a link's token is derived under, from its email row's nonce.
const TOKEN_PURPOSE: &str = "admin-mail-link";

/// What an administrator's email is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum About {
    Invite,
    Reset,
    /// Their password changed (by them, by a reset link, by an operator).
    Password,
    /// Two-step sign-in was turned on for them.
    TwoStepOn,
    /// Two-step sign-in was turned off for them.
    TwoStepOff,
}

impl About {
    pub const ALL: [About; 5] = [
        About::Invite,
        About::Reset,
        About::Password,
        About::TwoStepOn,
        About::TwoStepOff,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            About::Invite => "invite",
            About::Reset => "reset",
            About::Password => "password",
            About::TwoStepOn => "two-step-on",
            About::TwoStepOff => "two-step-off",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    pub fn link(self) -> Option<Link> {
        match self {
            About::Invite => Some(Link::Invite),
            About::Reset => Some(Link::Reset),
            _ => None,
        }
    }
}

/// A one-time link's token, derived from the site keys and a nonce: the nonce waits in the
/// email's row, the token in no row (a copy of the database without the keys opens nothing).
pub fn token_of(keys: &SiteKeys, nonce: &str) -> String {
    keys.keyed_hash(TOKEN_PURPOSE, nonce)
}

/// Who an email goes to.
pub struct To<'a> {
    pub admin_id: Option<i64>,
    pub email: &'a str,
    pub name: &'a str,
    pub lang: Lang,
}

/// Queues an email; `nonce` and `expires` for a link's.
async fn queue_mail(
    db: &Db,
    about: About,
    to: &To<'_>,
    nonce: &str,
    expires: Option<i64>,
) -> Result<(), sqlx::Error> {
    let new = store::admin_mails::New {
        kind: about.as_str(),
        admin_id: to.admin_id,
        email: to.email,
        name: to.name,
        lang: to.lang.code(),
        nonce,
        expires_at: expires,
    };
    store::admin_mails::queue(db, &new, store::now()).await?;
    tracing::info!(admin = ?to.admin_id, kind = about.as_str(), "an administrator's email was queued");
    Ok(())
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

/// Makes an invitation for a new administrator named `name`, who will have `role`, with no
/// address; its URL, shown once, or the field errors of the name.
pub async fn invite_as(
    db: &Db,
    keys: &SiteKeys,
    base_url: &str,
    by: Option<i64>,
    name: &str,
    role: Role,
) -> Result<String, Refusable<Vec<(String, Message)>>> {
    let invitation = Invitation {
        name,
        email: "",
        lang: Lang::En,
        emailing: false,
        role,
    };
    invite_with(db, keys, base_url, by, &invitation)
        .await
        .map(|made| made.url)
}

/// An invitation as a form or a command gives it.
#[derive(Clone, Copy)]
pub struct Invitation<'a> {
    pub name: &'a str,
    /// As typed; blank for none.
    pub email: &'a str,
    /// The language the email is written in (the inviter's).
    pub lang: Lang,
    /// An SMTP server is set: the link is emailed to the address.
    pub emailing: bool,
    /// The role the new administrator will have.
    pub role: Role,
}

/// A link made: its URL (shown once), and whether it was queued to be emailed.
#[derive(Clone, PartialEq, Eq)]
pub struct Made {
    pub url: String,
    pub emailed: bool,
}

/// By hand: the URL is a one-time link and stays out of any log line.
impl std::fmt::Debug for Made {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Made")
            .field("emailed", &self.emailed)
            .finish_non_exhaustive()
    }
}

/// An address as typed: `None` when blank, else lowercased and checked (`mail::valid_email`).
pub fn email_of(typed: &str) -> Result<Option<String>, Message> {
    let email = typed.trim().to_lowercase();
    if email.is_empty() {
        return Ok(None);
    }
    if crate::domain::mail::valid_email(&email) {
        Ok(Some(email))
    } else {
        Err(Message::new("admin-email-invalid"))
    }
}

/// Makes an invitation: checks the name and the address (free: no administrator and no live
/// invitation holds it), stores the link's keyed hash, and queues its email when there is an
/// address and an SMTP server. The field errors, each by its field, when refused.
pub async fn invite_with(
    db: &Db,
    keys: &SiteKeys,
    base_url: &str,
    by: Option<i64>,
    invitation: &Invitation<'_>,
) -> Result<Made, Refusable<Vec<(String, Message)>>> {
    let name = invitation.name;
    let mut errors = Vec::new();
    if !login::name_is_valid(name) {
        errors.push(("name".into(), Message::new("admin-name-invalid")));
    } else if store::admins::by_name(db, name).await?.is_some() {
        let taken = Message::new("cli-admin-exists").arg("name", name.to_owned());
        errors.push(("name".into(), taken));
    }
    let email = match email_of(invitation.email) {
        Ok(Some(e)) if store::admin_mails::email_taken(db, &e, None, store::now()).await? => {
            errors.push(("email".into(), Message::new("admin-email-taken")));
            None
        }
        Ok(e) => e,
        Err(m) => {
            errors.push(("email".into(), m));
            None
        }
    };
    if !errors.is_empty() {
        return Err(Refusable::Refused(errors));
    }
    let nonce = random_token();
    let token = token_of(keys, &nonce);
    let hash = Link::Invite.token_hash(keys, &token);
    let expires = store::now() + INVITE_TTL;
    let role = invitation.role;
    store::admins::put_invite_as(db, &hash, name, role.as_str(), expires).await?;
    let mut emailed = false;
    if let Some(email) = &email {
        store::admin_mails::set_invite_email(db, &hash, email).await?;
        if invitation.emailing {
            let to = To {
                admin_id: None,
                email,
                name,
                lang: invitation.lang,
            };
            queue_mail(db, About::Invite, &to, &nonce, Some(expires)).await?;
            emailed = true;
        }
    }
    tracing::info!(by = ?by, emailed, role = role.as_str(), "administrator invitation made");
    Ok(Made {
        url: format!("{base_url}{}{token}", Link::Invite.path()),
        emailed,
    })
}

/// Makes a reset link for an administrator; its URL, shown once.
pub async fn reset_link(
    db: &Db,
    keys: &SiteKeys,
    base_url: &str,
    by: Option<i64>,
    admin: &store::admins::Admin,
) -> Result<String, Refusable<Refusal>> {
    reset_link_with(db, keys, base_url, by, admin, false)
        .await
        .map(|made| made.url)
}

/// Makes a reset link for an administrator, queued to their address in their language when
/// they have one and `emailing` (an SMTP server is set).
pub async fn reset_link_with(
    db: &Db,
    keys: &SiteKeys,
    base_url: &str,
    by: Option<i64>,
    admin: &store::admins::Admin,
    emailing: bool,
) -> Result<Made, Refusable<Refusal>> {
    if admin.disabled_at.is_some() {
        return Err(Refusable::Refused(Refusal::Disabled(admin.name.clone())));
    }
    let nonce = random_token();
    let token = token_of(keys, &nonce);
    let hash = Link::Reset.token_hash(keys, &token);
    let expires = store::now() + RESET_TTL;
    store::admins::put_reset(db, &hash, admin.id, expires).await?;
    let mut emailed = false;
    if emailing
        && let Some((name, email, lang)) = store::admin_mails::contact_of(db, admin.id).await?
    {
        let to = To {
            admin_id: Some(admin.id),
            email: &email,
            name: &name,
            lang: Lang::from_code(&lang).unwrap_or_default(),
        };
        queue_mail(db, About::Reset, &to, &nonce, Some(expires)).await?;
        emailed = true;
    }
    tracing::info!(admin = admin.id, by = ?by, emailed, "administrator reset link made");
    Ok(Made {
        url: format!("{base_url}{}{token}", Link::Reset.path()),
        emailed,
    })
}

/// What changed in an administrator's security, as they are told by email.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecurityChange {
    Password,
    TwoStepOn,
    TwoStepOff,
}

/// Tells an administrator by email that their password or their second factor changed, when
/// they have an address: queued, and sent by the email sender once an SMTP server is set. A
/// failure to queue is logged and does not undo the change. `true` when it was queued.
pub async fn notify_security_change(db: &Db, admin_id: i64, kind: SecurityChange) -> bool {
    let about = match kind {
        SecurityChange::Password => About::Password,
        SecurityChange::TwoStepOn => About::TwoStepOn,
        SecurityChange::TwoStepOff => About::TwoStepOff,
    };
    let queued = async {
        let Some((name, email, lang)) = store::admin_mails::contact_of(db, admin_id).await? else {
            return Ok::<bool, sqlx::Error>(false);
        };
        let to = To {
            admin_id: Some(admin_id),
            email: &email,
            name: &name,
            lang: Lang::from_code(&lang).unwrap_or_default(),
        };
        queue_mail(db, about, &to, "", None).await?;
        Ok(true)
    }
    .await;
    queued.unwrap_or_else(|e| {
        tracing::error!(admin = admin_id, error = %e, "an administrator's security notice was not queued");
        false
    })
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
            let email = store::admin_mails::invite_email(db, &hash).await?;
            let made = store::admins::accept_invite(db, &hash, password_hash, now).await?;
            if let Some((id, _)) = &made {
                if let Some(email) = email {
                    store::admin_mails::set_email(db, *id, Some(&email), None).await?;
                }
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
                notify_security_change(db, id, SecurityChange::Password).await;
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
        notify_security_change(db, id, SecurityChange::Password).await;
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
