//! Sign-in attempts under the flood service, through the same `FloodGuard` as the doorway,
//! under events of their own, on as shipped. Drupal's user module is the model:
//! - per client address, every attempt, counted before anything is checked (`login.address`);
//! - per account, its failures only, from one address (Drupal's `user_limit` per user and IP)
//!   and from all addresses together (`login.account`, the pair as the caller and the account
//!   as the total), so that one address's guesses lock only that address out of the account.
//!
//! A name no account has is counted per address only: it has no account to protect, so it
//! writes no row of its own and no made-up name can collide with a real one in the counting
//! table. What that tells a guesser: after `login.limits.per_account` wrong passwords from one
//! address a real name is refused and a made-up one never is, so names can be told apart at
//! that price (admin names are rarely secret; passwords are what the limits protect).
//!
//! A refused attempt counts nothing, its password is not checked, and a guesser learns
//! nothing from it. A success counts nothing per account and clears nothing: the counting
//! table cannot forget one key without forgetting those sharing its cells, so the guard never
//! clears; an owner's own mistakes count for their period, `per_account` of them per address.
//! Unlocking an administrator (`domain::admins::unlock`) gives the account new keys instead.
//!
//! A browser that signed in to an account carries a device cookie for it (OWASP's "device
//! cookies", `crate::http::device`). An attempt presenting one is counted on that device's own
//! key instead of the account's: strangers' failures from every address, which hold the
//! account, do not hold its owner's browser, and the device's own failures are held at the
//! per-account limit (or the total, when that is off), so a stolen cookie guesses no more than
//! one address could. The per-address limit applies to every attempt.

use std::net::IpAddr;

use crate::domain::keys::SiteKeys;
use crate::domain::settings::Settings;
use crate::i18n::Message;
use crate::limits::guard::{Address, Decision, FloodGuard};

/// The flood identifier of a client address (IPv6 by its /64): a keyed hash, never the address.
pub fn address_key(keys: &SiteKeys, ip: IpAddr) -> String {
    keys.keyed_hash("login-address", &crate::proxy::counted_group(ip))
}

/// The flood identifiers of an existing account: the account itself, and the account as tried
/// from one client address (IPv6 by its /64), both keyed hashes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountKeys {
    pub account: String,
    pub pair: String,
    /// The device cookie's key, when the attempt presents a valid one for this account
    /// ([`device_key`]): its failures are counted there alone.
    pub device: Option<String>,
}

impl AccountKeys {
    /// The keys of an attempt through a device cookie for this account.
    pub fn through_device(self, device: String) -> Self {
        Self {
            device: Some(device),
            ..self
        }
    }

    /// The identifier a failure is counted under, the one its total is, and the limits: the
    /// device's own when there is one, with no total (the account's total is what strangers
    /// spend, and a device's failures must not hold the account for its other devices).
    fn counted(&self, settings: &Settings) -> (&str, &str, crate::limits::guard::Limits) {
        let limits = settings.limits_of(Address::SignInAccount);
        match &self.device {
            Some(device) => {
                let per_device = if limits.per_caller > 0 {
                    limits.per_caller
                } else {
                    limits.total
                };
                let limits = crate::limits::guard::Limits {
                    per_caller: per_device,
                    total: 0,
                    ..limits
                };
                (device, device, limits)
            }
            None => (&self.pair, &self.account, limits),
        }
    }
}

/// `epoch` is the account's `login_epoch`: unlocking it moves it to the next one, whose keys
/// no count has touched, in every process at once, without forgetting anything of the counting
/// table (which cannot forget one key alone). Epoch 0 keeps the keys accounts had before.
pub fn account_keys(keys: &SiteKeys, account: i64, epoch: i64, ip: IpAddr) -> AccountKeys {
    let id = account_id(account, epoch);
    AccountKeys {
        account: account_key(keys, account, epoch),
        pair: keys.keyed_hash(
            "login-pair",
            &format!("{id} from:{}", crate::proxy::counted_group(ip)),
        ),
        device: None,
    }
}

/// The flood identifier of a device cookie's `nonce` for an account: a keyed hash, never the
/// nonce. Under the account's `login_epoch`, so unlocking the account frees its devices too.
pub fn device_key(keys: &SiteKeys, account: i64, epoch: i64, nonce: &str) -> String {
    keys.keyed_hash(
        "login-device",
        &format!("{} device:{nonce}", account_id(account, epoch)),
    )
}

fn account_id(account: i64, epoch: i64) -> String {
    if epoch == 0 {
        format!("id:{account}")
    } else {
        format!("id:{account}.{epoch}")
    }
}

/// The account's identifier from all addresses together.
pub fn account_key(keys: &SiteKeys, account: i64, epoch: i64) -> String {
    keys.keyed_hash("login-account", &account_id(account, epoch))
}

/// An account's failed sign-ins in the current period, from all addresses together, and
/// whether the per-account limit holds it: its failures have reached the failures allowed from
/// one address (so the address they came from, at least when one, is refused) or from all.
/// Only counted while the total tier is on; 0 when it is off.
pub fn account_lock(
    guard: &FloodGuard,
    settings: &Settings,
    keys: &SiteKeys,
    account: i64,
    epoch: i64,
) -> (u64, bool) {
    let limits = settings.limits_of(Address::SignInAccount);
    if !FloodGuard::is_counting(&limits) || limits.total == 0 {
        return (0, false);
    }
    let failures = guard.count_of(
        Address::SignInAccount,
        &account_key(keys, account, epoch),
        limits.period,
    );
    (failures, is_held(&limits, failures))
}

/// Whether an account with `failures` from all addresses is held by its limits (see
/// [`account_lock`]).
pub fn is_held(limits: &crate::limits::guard::Limits, failures: u64) -> bool {
    FloodGuard::is_counting(limits)
        && ((limits.per_caller > 0 && failures >= limits.per_caller)
            || (limits.total > 0 && failures >= limits.total))
}

/// Which limit refused an attempt; never shown (the guard logs the tier, `Decision::logged`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    Address,
    /// The account's failures from this address.
    AccountFromAddress,
    /// The account's failures from all addresses.
    Account,
    /// The failures made through one device cookie.
    Device,
}

/// An attempt let through to its password check; whether its failure is counted (in
/// report-only mode, not after a limit would have refused it: enforcing would not check it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub struct Admitted {
    counts_failure: bool,
}

/// Decides an attempt before its password is checked: the account's failures first (counting
/// nothing), then the address, which counts the attempt. So a refusal counts nothing anywhere.
/// `account` is `None` for a name no account has.
pub fn admit(
    guard: &FloodGuard,
    settings: &Settings,
    address: &str,
    account: Option<&AccountKeys>,
) -> Result<Admitted, Refused> {
    let per_address = settings.limits_of(Address::SignInAddress);
    let per_account = settings.limits_of(Address::SignInAccount);
    let policy = settings.policy_of(Address::SignInAddress);
    let account_counts = account.is_some() && FloodGuard::is_counting(&per_account);
    if FloodGuard::is_counting(&per_address) || account_counts {
        guard.decisions().count_request(Address::SignInAddress);
    }
    if let Some(keys) = account {
        let (caller, total, limits) = keys.counted(settings);
        let decision = guard.allows_as(Address::SignInAccount, caller, total, &limits, policy);
        let refused = |tier| match (tier, keys.device.is_some()) {
            (_, true) => Refused::Device,
            (crate::limits::guard::Refusal::PerCaller, false) => Refused::AccountFromAddress,
            (crate::limits::guard::Refusal::Total, false) => Refused::Account,
        };
        match decision.logged(Address::SignInAccount, caller) {
            Decision::Allowed => {}
            Decision::Refused { tier, .. } => return Err(refused(tier)),
            Decision::WouldRefuse { .. } => {
                return Ok(Admitted {
                    counts_failure: false,
                });
            }
        }
    }
    match guard
        .check_as(Address::SignInAddress, address, &per_address, policy)
        .logged(Address::SignInAddress, address)
    {
        Decision::Allowed => Ok(Admitted {
            counts_failure: true,
        }),
        Decision::Refused { .. } => Err(Refused::Address),
        // Report only: the password is checked, but its failure is counted only as enforcing
        // would count it, that is, not after the address was caught.
        Decision::WouldRefuse { .. } => Ok(Admitted {
            counts_failure: false,
        }),
    }
}

/// A wrong password for an existing account, after [`admit`] let it be checked: one failure
/// for the account from this address, and one for the account; or, through a device cookie,
/// one for that device alone.
pub fn failed(guard: &FloodGuard, settings: &Settings, account: &AccountKeys, admitted: Admitted) {
    if admitted.counts_failure {
        let (caller, total, limits) = account.counted(settings);
        guard.failed(Address::SignInAccount, caller, total, &limits);
    }
}

/// Checks a new administrator's name and password; the same rules as `orchestra admin create`.
pub fn check_new_admin(
    name: &str,
    password: &str,
    confirm: Option<&str>,
) -> Vec<(String, Message)> {
    let mut errors = Vec::new();
    if !name_is_valid(name) {
        errors.push(("name".into(), Message::new("admin-name-invalid")));
    }
    errors.extend(check_new_password(password, confirm));
    errors
}

/// An administrator's name: 1 to 60 letters, digits and `._-@`.
pub fn name_is_valid(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= 60
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || "._-@".contains(c))
}

/// Checks a new password (and its confirmation, when one was asked for): the same rules
/// wherever a password is chosen.
pub fn check_new_password(password: &str, confirm: Option<&str>) -> Vec<(String, Message)> {
    let mut errors = Vec::new();
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::limits::flood::{Clock, FloodStore, MemoryFlood};

    const HOURS_6: Duration = Duration::from_secs(6 * 3600);

    fn setup(per_address: u64, per_account: u64, total: u64) -> (FloodGuard, Settings) {
        let flood: Arc<dyn FloodStore> = Arc::new(MemoryFlood::new(1024, Clock::manual(0)));
        let settings = Settings {
            login_per_address: per_address,
            login_per_account: per_account,
            login_account_total: total,
            ..Settings::default()
        };
        (FloodGuard::with_clock(flood, Clock::manual(0)), settings)
    }

    fn keys_of(account: i64, from: &str) -> AccountKeys {
        account_keys(&SiteKeys::generate(), account, 0, from.parse().unwrap())
    }

    fn count(guard: &FloodGuard, address: Address, key: &str, window: Duration) -> u64 {
        guard.flood().count(address.event(), key, window)
    }

    #[test]
    fn failures_are_counted_per_account_and_address_and_successes_not_at_all() {
        let (guard, settings) = setup(50, 2, 100);
        let keys = keys_of(1, "203.0.113.1");
        for _ in 0..3 {
            // Three successes: nothing counted per account.
            let _ = admit(&guard, &settings, "addr", Some(&keys)).unwrap();
        }
        assert_eq!(
            count(&guard, Address::SignInAccount, &keys.pair, HOURS_6),
            0
        );
        for _ in 0..2 {
            let admitted = admit(&guard, &settings, "addr", Some(&keys)).unwrap();
            failed(&guard, &settings, &keys, admitted);
        }
        assert_eq!(
            count(&guard, Address::SignInAccount, &keys.pair, HOURS_6),
            2
        );
        assert_eq!(
            count(&guard, Address::SignInAccount, &keys.account, HOURS_6),
            2
        );
        assert_eq!(
            admit(&guard, &settings, "addr", Some(&keys)),
            Err(Refused::AccountFromAddress)
        );
    }

    #[test]
    fn a_refusal_counts_nothing_anywhere() {
        let (guard, settings) = setup(50, 1, 100);
        let keys = keys_of(1, "203.0.113.1");
        let admitted = admit(&guard, &settings, "addr", Some(&keys)).unwrap();
        failed(&guard, &settings, &keys, admitted);
        let hour = Duration::from_secs(3600);
        assert_eq!(count(&guard, Address::SignInAddress, "addr", hour), 1);
        for _ in 0..5 {
            assert!(admit(&guard, &settings, "addr", Some(&keys)).is_err());
        }
        assert_eq!(
            count(&guard, Address::SignInAddress, "addr", hour),
            1,
            "refusals counted"
        );
        assert_eq!(
            count(&guard, Address::SignInAccount, &keys.pair, HOURS_6),
            1
        );
    }

    #[test]
    fn the_account_total_counts_every_address_and_refuses_them_all() {
        let (guard, settings) = setup(50, 5, 3);
        for from in ["203.0.113.1", "203.0.113.2", "203.0.113.3"] {
            let keys = AccountKeys {
                pair: format!("pair {from}"),
                account: "account 1".into(),
                device: None,
            };
            let admitted = admit(&guard, &settings, from, Some(&keys)).unwrap();
            failed(&guard, &settings, &keys, admitted);
        }
        let clean = AccountKeys {
            pair: "pair 198.51.100.9".into(),
            account: "account 1".into(),
            device: None,
        };
        assert_eq!(
            admit(&guard, &settings, "198.51.100.9", Some(&clean)),
            Err(Refused::Account)
        );
        // Another account is not touched.
        let other = AccountKeys {
            pair: "pair 198.51.100.9 of 2".into(),
            account: "account 2".into(),
            device: None,
        };
        assert!(admit(&guard, &settings, "198.51.100.9", Some(&other)).is_ok());
    }

    #[test]
    fn a_device_is_not_held_by_the_account_and_is_held_by_its_own_failures() {
        let (guard, settings) = setup(50, 2, 4);
        let site = SiteKeys::generate();
        for from in ["203.0.113.1", "203.0.113.2"] {
            let keys = account_keys(&site, 1, 0, from.parse().unwrap());
            for _ in 0..2 {
                let admitted = admit(&guard, &settings, from, Some(&keys)).unwrap();
                failed(&guard, &settings, &keys, admitted);
            }
        }
        let stranger = account_keys(&site, 1, 0, "198.51.100.9".parse().unwrap());
        assert_eq!(
            admit(&guard, &settings, "198.51.100.9", Some(&stranger)),
            Err(Refused::Account)
        );
        let device = stranger.through_device(device_key(&site, 1, 0, "nonce"));
        for _ in 0..2 {
            let admitted = admit(&guard, &settings, "198.51.100.9", Some(&device)).unwrap();
            failed(&guard, &settings, &device, admitted);
        }
        assert_eq!(
            admit(&guard, &settings, "198.51.100.9", Some(&device)),
            Err(Refused::Device)
        );
        let other = account_keys(&site, 1, 0, "198.51.100.9".parse().unwrap())
            .through_device(device_key(&site, 1, 0, "another nonce"));
        assert!(admit(&guard, &settings, "198.51.100.9", Some(&other)).is_ok());
    }

    #[test]
    fn a_name_without_an_account_is_counted_per_address_only() {
        let (guard, settings) = setup(3, 1, 1);
        for _ in 0..3 {
            let _ = admit(&guard, &settings, "addr", None).unwrap();
        }
        assert_eq!(
            admit(&guard, &settings, "addr", None),
            Err(Refused::Address)
        );
        assert!(admit(&guard, &settings, "another addr", None).is_ok());
    }

    #[test]
    fn report_only_checks_every_password_but_counts_only_what_enforcing_would() {
        let (guard, mut settings) = setup(50, 1, 100);
        settings.login_report_only = true;
        let keys = keys_of(1, "203.0.113.1");
        for _ in 0..4 {
            let admitted = admit(&guard, &settings, "addr", Some(&keys)).unwrap();
            failed(&guard, &settings, &keys, admitted);
        }
        assert_eq!(
            count(&guard, Address::SignInAccount, &keys.pair, HOURS_6),
            1,
            "enforcing would have checked only the first"
        );
        let seen = guard.would_refuse(Address::SignInAccount, HOURS_6);
        assert_eq!(seen.current, [3, 0]);
    }

    #[test]
    fn one_account_from_two_addresses_has_two_pairs() {
        let keys = SiteKeys::generate();
        let a = account_keys(&keys, 1, 0, "203.0.113.1".parse().unwrap());
        let b = account_keys(&keys, 1, 0, "203.0.113.2".parse().unwrap());
        let v6 = account_keys(&keys, 1, 0, "2001:db8::1".parse().unwrap());
        let v6_same_64 = account_keys(&keys, 1, 0, "2001:db8::ffff".parse().unwrap());
        assert_eq!(a.account, b.account);
        assert_ne!(a.pair, b.pair);
        assert_eq!(v6.pair, v6_same_64.pair);
        assert_ne!(
            account_keys(&keys, 2, 0, "203.0.113.1".parse().unwrap()).pair,
            a.pair
        );
    }
}
