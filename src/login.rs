//! Sign-in attempts under the flood service, through the same `FloodGuard` as the doorway,
//! under events of their own: per client address and per account, on as shipped.
//!
//! Both counts are taken before the password is looked at, and a refused attempt never checks
//! it: a guesser learns nothing, and spends no argon2 time. A successful sign-in clears the
//! account's count, not the address's (one office sharing an address still has its limit).

use std::net::IpAddr;

use crate::guard::{Decision, FloodGuard};
use crate::i18n::Message;
use crate::keys::SiteKeys;
use crate::settings::Settings;

pub const ADDRESS_EVENT: &str = "login.address";
pub const ACCOUNT_EVENT: &str = "login.account";
/// The attempts counted under either limit, one per attempt (the metrics endpoint's count of
/// sign-in requests; each limit's decisions are under its own event).
pub const ATTEMPT_EVENT: &str = "login";

/// The flood identifier of a client address (IPv6 by its /64): a keyed hash, never the address.
pub fn address_key(keys: &SiteKeys, ip: IpAddr) -> String {
    keys.keyed_hash("login-address", &crate::proxy::counted_group(ip))
}

/// The flood identifier of the account an attempt is for: its id when it exists, else the
/// name as typed, both as keyed hashes.
pub fn account_key(keys: &SiteKeys, account: Option<i64>, typed_name: &str) -> String {
    match account {
        Some(id) => keys.keyed_hash("login-account", &format!("id:{id}")),
        None => keys.keyed_hash("login-account", &format!("name:{typed_name}")),
    }
}

/// Which limit refused an attempt. Logged, never shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    Address,
    Account,
}

/// Counts one attempt against both limits; the address first, so an address over its limit
/// spends nothing of the account's.
pub fn attempt(
    guard: &FloodGuard,
    settings: &Settings,
    address: &str,
    account: &str,
) -> Result<(), Refused> {
    let (per_address, per_account) = settings.login_limits();
    let policy = settings.login_policy();
    if FloodGuard::is_counting(&per_address) || FloodGuard::is_counting(&per_account) {
        guard.decisions().count_request(ATTEMPT_EVENT);
    }
    for (event, key, limits, refused) in [
        (ADDRESS_EVENT, address, per_address, Refused::Address),
        (ACCOUNT_EVENT, account, per_account, Refused::Account),
    ] {
        match guard.check_as(event, key, &limits, policy) {
            Decision::Allowed => {}
            Decision::Refused {
                first_in_period, ..
            } => {
                if first_in_period {
                    tracing::warn!(
                        caller = %key,
                        limit = ?refused,
                        "sign-in refused without checking the password; further refusals like it are not logged this period"
                    );
                }
                return Err(refused);
            }
            // Report only: the password is checked, but the account is counted only as
            // enforcing would count it, that is, not after the address was caught.
            Decision::WouldRefuse {
                first_in_period, ..
            } => {
                if first_in_period {
                    tracing::warn!(
                        caller = %key,
                        limit = ?refused,
                        "sign-in would have been refused (report only); further ones like it are not logged this period"
                    );
                }
                return Ok(());
            }
        }
    }
    Ok(())
}

/// A successful sign-in: the account starts again from zero.
pub fn succeeded(guard: &FloodGuard, account: &str) {
    guard.flood().clear(ACCOUNT_EVENT, account);
}

/// Checks a new administrator's name and password; the same rules as `orchestra admin create`.
pub fn check_new_admin(
    name: &str,
    password: &str,
    confirm: Option<&str>,
) -> Vec<(String, Message)> {
    let mut errors = Vec::new();
    let name_ok = !name.is_empty()
        && name.chars().count() <= 60
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || "._-@".contains(c));
    if !name_ok {
        errors.push(("name".into(), Message::new("admin-name-invalid")));
    }
    if password.chars().count() < 10 {
        errors.push((
            "password".into(),
            Message::new("admin-password-short").arg("min", "10"),
        ));
    } else if password.len() > 1024 {
        errors.push(("password".into(), Message::new("admin-password-long")));
    }
    if let Some(confirm) = confirm {
        if confirm != password {
            errors.push(("confirm".into(), Message::new("admin-password-mismatch")));
        }
    }
    errors
}
