//! The emailed code a `| verify email` step asks for before it shows anything: a link proves
//! possession, the code that its holder also reads the participant's mailbox.
//!
//! No code is kept anywhere in clear. A code is six digits derived from the site keys, the
//! link record and a random nonce (`derive`): the sender derives it when it sends
//! (`domain::mail::code`), the row keeps the nonce and a keyed hash of the code
//! (`store::email_codes`), and the check hashes what was typed. A code lives `LIFETIME`; a
//! right one is spent. Wrong tries are counted by the guard (`Address::EmailCode`) under a keyed
//! hash of the link record and the nonce: `MAX_WRONG` of them lock that code, and a new code
//! (at most `MAX_SENDS` an hour per link) opens a fresh count. Whether a browser has typed the
//! right code is the web's to keep (`http::doorway::code`).

use std::time::Duration;

use hmac::Mac;

use crate::domain::keys::{SiteKeys, random_token};
use crate::error::Error;
use crate::limits::guard::{Address, Decision, FloodGuard, Limits, Policy, TOTAL};
use crate::store::email_codes::{self, CodeRow, Issued, NewCode};
use crate::store::{Db, mails};

use super::Resolved;

/// How long a code works after it is asked.
pub const LIFETIME: i64 = 600;
/// Wrong codes that lock a code: the right one is refused too until a new code is sent.
pub const MAX_WRONG: u64 = 5;
/// Codes one link may be sent in `SENDS_WINDOW` seconds.
pub const MAX_SENDS: i64 = 3;
pub const SENDS_WINDOW: i64 = 3600;
/// The digits of a code.
pub const DIGITS: usize = 6;

/// The guard's limits for wrong codes: per code only (a total would let one visitor lock
/// every link), over a period longer than a code lives, so no wrong try ages out of its count.
pub const LIMITS: Limits = Limits {
    enabled: true,
    per_caller: MAX_WRONG,
    total: 0,
    period: Duration::from_secs(SENDS_WINDOW as u64),
};

const POLICY: Policy = Policy {
    mode: crate::limits::guard::Mode::Enforce,
    on_fault: crate::limits::guard::OnFault::Count,
};

/// What `verified` says on an answer's line of history after a code (`interaction::record`).
pub const VERIFIED_BY: &str = "email";

/// The code of `link_id` under `nonce`: six digits of an HMAC keyed by the site keys.
pub fn derive(keys: &SiteKeys, link_id: i64, nonce: &str) -> String {
    let mut mac = keys.keyed_hasher("email-code");
    mac.update(format!("{link_id}:{nonce}").as_bytes());
    let bytes = mac.finalize().into_bytes();
    let n = u64::from_be_bytes(bytes[..8].try_into().unwrap_or_default());
    format!("{:06}", n % 1_000_000)
}

/// The keyed hash a row keeps of its code.
fn hash(keys: &SiteKeys, link_id: i64, nonce: &str, code: &str) -> String {
    keys.keyed_hash("email-code-check", &format!("{link_id}:{nonce}:{code}"))
}

/// The guard's name for one code's wrong tries: a keyed hash, never the link.
fn caller(keys: &SiteKeys, link_id: i64, nonce: &str) -> String {
    keys.keyed_hash("email-code-tries", &format!("{link_id}:{nonce}"))
}

/// Where a link stands before its step shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Standing {
    /// No address for the participant, or no link record: no code can be sent.
    Unverifiable,
    /// No code asked yet, or the last one expired or was spent.
    NoCode { sends_left: i64, again_at: i64 },
    /// A code waits to be typed.
    Waiting {
        /// Where it went, masked (`masked`).
        to: String,
        expires_at: i64,
        sends_left: i64,
        again_at: i64,
        locked: bool,
    },
}

/// What the code page of `resolved` says at `now`.
pub async fn standing(
    db: &Db,
    keys: &SiteKeys,
    guard: &FloodGuard,
    resolved: &Resolved,
    now: i64,
) -> Result<Standing, Error> {
    let Some(link_id) = resolved.link_id else {
        return Ok(Standing::Unverifiable);
    };
    let Some(address) = address_of(db, resolved).await? else {
        return Ok(Standing::Unverifiable);
    };
    let Some(row) = email_codes::of_link(db, link_id).await? else {
        return Ok(Standing::NoCode {
            sends_left: MAX_SENDS,
            again_at: now,
        });
    };
    let (sends_left, again_at) = sends(&row, now);
    if row.code_hash.is_empty() || row.expires_at <= now {
        return Ok(Standing::NoCode {
            sends_left,
            again_at,
        });
    }
    Ok(Standing::Waiting {
        to: masked(&address),
        expires_at: row.expires_at,
        sends_left,
        again_at,
        locked: locked(keys, guard, &row),
    })
}

/// Codes the row may still be sent now, and when the next may be asked when none may.
fn sends(row: &CodeRow, now: i64) -> (i64, i64) {
    if row.window_start <= now - SENDS_WINDOW {
        (MAX_SENDS, now)
    } else {
        (
            (MAX_SENDS - row.sends).max(0),
            row.window_start + SENDS_WINDOW,
        )
    }
}

/// Whether the row's code took `MAX_WRONG` wrong tries. A read: counts nothing.
fn locked(keys: &SiteKeys, guard: &FloodGuard, row: &CodeRow) -> bool {
    let id = caller(keys, row.link_id, &row.nonce);
    guard.count_of(Address::EmailCode, &id, LIMITS.period) >= MAX_WRONG
}

/// The participant's address, when the instance has one for them.
pub async fn address_of(db: &Db, resolved: &Resolved) -> Result<Option<String>, Error> {
    Ok(
        mails::contact(db, resolved.instance.id, resolved.participant.as_str())
            .await?
            .map(|c| c.email),
    )
}

/// An address as the page may show it: its first letter, then dots, then its domain
/// (`r•••@example.com`).
pub fn masked(address: &str) -> String {
    let Some((local, domain)) = address.rsplit_once('@') else {
        return "•••".to_owned();
    };
    let first: String = local.chars().take(1).collect();
    format!("{first}•••@{domain}")
}

/// What asking for a code came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sent {
    /// Queued: the sender emails it within seconds.
    Queued,
    Unverifiable,
    /// `MAX_SENDS` were sent in the window; another may be asked at this time.
    TooMany(i64),
}

/// Makes a new code for the link and queues its email. The code itself is not made here: only
/// its nonce and keyed hash are stored (the sender derives it again).
pub async fn send(db: &Db, keys: &SiteKeys, resolved: &Resolved, now: i64) -> Result<Sent, Error> {
    let Some(link_id) = resolved.link_id else {
        return Ok(Sent::Unverifiable);
    };
    let nonce = random_token();
    let code = derive(keys, link_id, &nonce);
    let code_hash = hash(keys, link_id, &nonce, &code);
    let new = NewCode {
        link_id,
        instance: resolved.instance.id,
        step: resolved.instance.step_index,
        participant: resolved.participant.as_str(),
        nonce: &nonce,
        code_hash: &code_hash,
        expires_at: now + LIFETIME,
        most: MAX_SENDS,
        window: SENDS_WINDOW,
    };
    Ok(match email_codes::issue(db, &new, now).await? {
        Issued::Yes => {
            tracing::info!(
                instance = resolved.instance.id,
                participant = %resolved.participant,
                "an emailed code was asked"
            );
            Sent::Queued
        }
        Issued::NoAddress => Sent::Unverifiable,
        Issued::TooMany(at) => Sent::TooMany(at),
    })
}

/// What a typed code came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checked {
    Right,
    /// Wrong; this many tries are left before the code locks.
    Wrong(u64),
    /// `MAX_WRONG` wrong codes were typed: this code is refused, right or not.
    Locked,
    /// No code waits (none asked, expired, or spent).
    NoCode,
}

/// Checks a typed code. The lock is asked first, counting nothing, so a locked code refuses
/// the right one too; a wrong code is counted once found wrong (`FloodGuard::failed`).
pub async fn check(
    db: &Db,
    keys: &SiteKeys,
    guard: &FloodGuard,
    resolved: &Resolved,
    typed: &str,
    now: i64,
) -> Result<Checked, Error> {
    let Some(link_id) = resolved.link_id else {
        return Ok(Checked::NoCode);
    };
    let Some(row) = email_codes::of_link(db, link_id).await? else {
        return Ok(Checked::NoCode);
    };
    if row.code_hash.is_empty() || row.expires_at <= now {
        return Ok(Checked::NoCode);
    }
    let id = caller(keys, link_id, &row.nonce);
    let decision = guard
        .allows_as(Address::EmailCode, &id, TOTAL, &LIMITS, POLICY)
        .logged(Address::EmailCode, &id);
    if matches!(decision, Decision::Refused { .. }) {
        return Ok(Checked::Locked);
    }
    // Spaces and dashes a reader may type between the digits are not part of the code.
    let digits: String = typed
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .collect();
    let right = digits.len() == DIGITS
        && digits.chars().all(|c| c.is_ascii_digit())
        && hash(keys, link_id, &row.nonce, &digits) == row.code_hash;
    if right {
        // Of two right answers at once, the one that spent the code opens the step.
        if !email_codes::spend(db, link_id, &row.nonce).await? {
            return Ok(Checked::NoCode);
        }
        tracing::info!(instance = resolved.instance.id, participant = %resolved.participant, "an emailed code was verified");
        return Ok(Checked::Right);
    }
    guard.failed(Address::EmailCode, &id, TOTAL, &LIMITS);
    let tried = guard.count_of(Address::EmailCode, &id, LIMITS.period);
    tracing::info!(instance = resolved.instance.id, participant = %resolved.participant, "a wrong emailed code");
    Ok(match MAX_WRONG.saturating_sub(tried) {
        0 => Checked::Locked,
        left => Checked::Wrong(left),
    })
}

/// The steps of an instance that ask for a code of a participant it has no address for, as
/// (participant, step number): the warning of a start that left someone unable to answer.
pub async fn without_address(
    db: &Db,
    versions: &crate::domain::workflow::versions::Cache,
    instance: i64,
) -> Result<Vec<(String, usize)>, Error> {
    let Some(row) = crate::store::instances::by_id(db, instance).await? else {
        return Ok(Vec::new());
    };
    let definition = versions.get(db, row.version_id).await?;
    let contacts = mails::contacts_of(db, instance).await?;
    let mut out = Vec::new();
    for (i, step) in definition.steps.iter().enumerate() {
        if !step.verify_email {
            continue;
        }
        for who in step.participants() {
            if !contacts.iter().any(|c| c.participant == who.as_str()) {
                out.push((who.as_str().to_owned(), i + 1));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_is_six_digits_of_its_link_and_nonce() {
        let keys = SiteKeys::from_bytes([1; 32], [2; 32]);
        let code = derive(&keys, 7, "a");
        assert_eq!(code.len(), DIGITS);
        assert!(code.chars().all(|c| c.is_ascii_digit()));
        assert_eq!(code, derive(&keys, 7, "a"));
        let others = [
            derive(&keys, 8, "a"),
            derive(&keys, 7, "b"),
            derive(&SiteKeys::from_bytes([1; 32], [3; 32]), 7, "a"),
        ];
        assert!(others.iter().all(|o| *o != code), "{others:?}");
    }

    #[test]
    fn an_address_is_shown_by_its_first_letter_and_domain() {
        assert_eq!(masked("rosa@example.com"), "r•••@example.com");
        assert_eq!(masked("nobody"), "•••");
    }
}
