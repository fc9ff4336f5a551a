//! Two-step sign-in: an administrator's TOTP secret (`domain::totp`), set up, confirmed with a
//! first code, checked at sign-in, turned off; and ten recovery codes, each usable once.
//!
//! The secret never rests in clear: it is sealed (AES-256-GCM, the `cookie` crate's private
//! jar, as webhook secrets are) under a key derived from the site's two-step key, with the
//! administrator's id as associated data, so a sealed secret copied to another account does
//! not open. Recovery codes are kept as keyed hashes under the same key.
//!
//! The two-step key is a site key of its own (`site_keys.two_step_key`), which
//! `orchestra keys rotate` leaves alone: a rotation changes the link keys and the hash salt,
//! and neither a sealed secret nor a recovery code's hash depends on them, so a rotation signs
//! nobody out of their second factor. (Sealing again at each rotation would do for the secrets
//! but not for the codes, whose text is not kept to hash again.)

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::domain::totp::{self, Secret};
use crate::error::{Error, Result};
use crate::store::{self, Db};

/// How many recovery codes are made when two-step sign-in is turned on.
pub const RECOVERY_CODES: usize = 10;

/// The two-step key. `Debug` never prints it.
pub struct TwoStepKey([u8; 32]);

impl std::fmt::Debug for TwoStepKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TwoStepKey(<redacted>)")
    }
}

impl TwoStepKey {
    /// The site's two-step key, made on first use.
    pub async fn load(db: &Db) -> Result<Self> {
        let fresh = hex::encode(crate::domain::keys::random_bytes());
        let stored = store::two_step::key(db, &fresh).await?;
        let bytes: [u8; 32] = hex::decode(stored)
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or(Error::Corrupt("the stored two-step key is malformed"))?;
        Ok(Self(bytes))
    }

    fn derived(&self, purpose: &str) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key length");
        mac.update(purpose.as_bytes());
        mac.update(b"\0");
        mac
    }

    fn seal_key(&self) -> cookie::Key {
        cookie::Key::derive_from(&self.derived("two-step-seal").finalize().into_bytes())
    }

    /// A recovery code's keyed hash, of its canonical spelling.
    fn code_hash(&self, code: &str) -> String {
        let mut mac = self.derived("recovery-code");
        mac.update(canonical(code).as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }

    fn seal(&self, admin: i64, secret: &Secret) -> Option<String> {
        use cookie::{Cookie, CookieJar};
        let name = seal_name(admin);
        let mut jar = CookieJar::new();
        jar.private_mut(&self.seal_key())
            .add(Cookie::new(name.clone(), hex::encode(secret.bytes())));
        jar.get(&name).map(|c| c.value().to_owned())
    }

    fn open(&self, admin: i64, sealed: &str) -> Option<Secret> {
        use cookie::{Cookie, CookieJar};
        let cookie = Cookie::new(seal_name(admin), sealed.to_owned());
        let opened = CookieJar::new().private(&self.seal_key()).decrypt(cookie)?;
        Some(Secret::from_bytes(hex::decode(opened.value()).ok()?))
    }
}

fn seal_name(admin: i64) -> String {
    format!("two-step.{admin}")
}

/// A recovery code as compared: dashes and spaces dropped, upper case.
fn canonical(code: &str) -> String {
    code.chars()
        .filter(|c| !matches!(c, '-' | ' '))
        .flat_map(char::to_uppercase)
        .collect()
}

/// Ten fresh recovery codes, as shown: ten base32 characters (50 bits) in two groups.
fn recovery_codes() -> Vec<String> {
    (0..RECOVERY_CODES)
        .map(|_| {
            let text = Secret::from_bytes(crate::domain::keys::random_bytes()[..7].to_vec())
                .base32()
                .to_lowercase();
            format!("{}-{}", &text[..5], &text[5..10])
        })
        .collect()
}

/// What an administrator setting up two-step sign-in is shown: the secret as text, the address
/// an authenticator app reads, and that address as a QR code (inline SVG).
pub struct Setup {
    pub secret: String,
    pub url: String,
    pub qr: String,
}

impl Setup {
    fn of(secret: &Secret, issuer: &str, account: &str) -> Self {
        let url = secret.otpauth_url(issuer, account);
        Self {
            secret: secret.base32(),
            qr: totp::qr_svg(&url).unwrap_or_default(),
            url,
        }
    }
}

/// Whether the administrator has two-step sign-in on.
pub async fn is_on(db: &Db, admin: i64) -> Result<bool> {
    Ok(store::two_step::is_on(db, admin).await?)
}

/// The setup in progress (made by [`begin`], not yet confirmed), if any.
pub async fn pending(db: &Db, admin: i64, issuer: &str, account: &str) -> Result<Option<Setup>> {
    let key = TwoStepKey::load(db).await?;
    Ok(match store::two_step::of(db, admin).await? {
        Some(row) if row.enabled_at.is_none() => key
            .open(admin, &row.secret)
            .map(|secret| Setup::of(&secret, issuer, account)),
        _ => None,
    })
}

/// Starts setting up: a fresh secret, sealed and kept until confirmed. `None` when two-step
/// sign-in is already on.
pub async fn begin(
    db: &Db,
    admin: i64,
    issuer: &str,
    account: &str,
    now: i64,
) -> Result<Option<Setup>> {
    let key = TwoStepKey::load(db).await?;
    let secret = Secret::generate();
    let sealed = key
        .seal(admin, &secret)
        .ok_or(Error::Corrupt("a two-step secret could not be sealed"))?;
    if !store::two_step::begin(db, admin, &sealed, now).await? {
        return Ok(None);
    }
    Ok(Some(Setup::of(&secret, issuer, account)))
}

/// Confirms the setup in progress with its first code: two-step sign-in is on, and the
/// recovery codes (shown once, kept only as hashes) are returned. `None` for a wrong code or
/// no setup in progress; nothing changes then.
pub async fn confirm(db: &Db, admin: i64, code: &str, now: i64) -> Result<Option<Vec<String>>> {
    let key = TwoStepKey::load(db).await?;
    let Some(row) = store::two_step::of(db, admin).await? else {
        return Ok(None);
    };
    if row.enabled_at.is_some() {
        return Ok(None);
    }
    let Some(secret) = key.open(admin, &row.secret) else {
        return Ok(None);
    };
    let Some(step) = secret.matching_step(code.trim(), now, row.last_step) else {
        return Ok(None);
    };
    let codes = recovery_codes();
    let hashes: Vec<String> = codes.iter().map(|c| key.code_hash(c)).collect();
    if !store::two_step::enable(db, admin, step, &hashes, now).await? {
        return Ok(None);
    }
    two_step_changed(db, admin, true).await;
    Ok(Some(codes))
}

/// Turns two-step sign-in on at once, for an operator at the shell: the address to give the
/// administrator's authenticator app, and the recovery codes. `None` when it is already on.
pub async fn turn_on(
    db: &Db,
    admin: i64,
    issuer: &str,
    account: &str,
    now: i64,
) -> Result<Option<(Setup, Vec<String>)>> {
    let Some(setup) = begin(db, admin, issuer, account, now).await? else {
        return Ok(None);
    };
    let key = TwoStepKey::load(db).await?;
    let codes = recovery_codes();
    let hashes: Vec<String> = codes.iter().map(|c| key.code_hash(c)).collect();
    // Step 0: the first code the app shows is still to be taken.
    if !store::two_step::enable(db, admin, 0, &hashes, now).await? {
        return Ok(None);
    }
    two_step_changed(db, admin, true).await;
    Ok(Some((setup, codes)))
}

/// Checks a second-step code for an administrator who has two-step sign-in on: a TOTP code of
/// now (± one step) not taken before, or an unused recovery code, which is then used up.
pub async fn check(db: &Db, admin: i64, code: &str, now: i64) -> Result<bool> {
    let code = code.trim();
    let key = TwoStepKey::load(db).await?;
    let Some(row) = store::two_step::of(db, admin).await? else {
        return Ok(false);
    };
    if row.enabled_at.is_none() {
        return Ok(false);
    }
    if totp::is_code(code) {
        let Some(secret) = key.open(admin, &row.secret) else {
            tracing::error!(
                admin,
                "a two-step secret does not open under the two-step key"
            );
            return Ok(false);
        };
        return match secret.matching_step(code, now, row.last_step) {
            Some(step) => Ok(store::two_step::take_step(db, admin, step).await?),
            None => Ok(false),
        };
    }
    if canonical(code).len() != 10 {
        return Ok(false);
    }
    let taken = store::two_step::take_recovery(db, admin, &key.code_hash(code), now).await?;
    if taken {
        tracing::info!(admin, "recovery code used");
    }
    Ok(taken)
}

/// Turns two-step sign-in off (or drops a setup in progress). `false` when there was neither.
pub async fn turn_off(db: &Db, admin: i64) -> Result<bool> {
    let was_on = is_on(db, admin).await?;
    let removed = store::two_step::remove(db, admin).await?;
    if was_on {
        two_step_changed(db, admin, false).await;
    }
    Ok(removed)
}

/// Recovery codes not yet used.
pub async fn recovery_left(db: &Db, admin: i64) -> Result<i64> {
    Ok(store::two_step::recovery_left(db, admin).await?)
}

/// The one place told that an administrator's second factor was turned on or off: where the
/// email telling them so (`notify_security_change`) is to be sent.
async fn two_step_changed(db: &Db, admin: i64, on: bool) {
    tracing::info!(admin, on, "two-step sign-in changed");
    let change = if on {
        crate::domain::admins::SecurityChange::TwoStepOn
    } else {
        crate::domain::admins::SecurityChange::TwoStepOff
    };
    crate::domain::admins::notify_security_change(db, admin, change).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_secret_opens_for_its_administrator_only() {
        let key = TwoStepKey([7; 32]);
        let secret = Secret::generate();
        let sealed = key.seal(1, &secret).unwrap();
        assert!(!sealed.contains(&secret.base32()));
        assert_eq!(key.open(1, &sealed), Some(secret));
        assert_eq!(key.open(2, &sealed), None);
        assert_eq!(TwoStepKey([8; 32]).open(1, &sealed), None);
    }

    #[test]
    fn recovery_codes_are_ten_distinct_and_hash_by_their_canonical_spelling() {
        let codes = recovery_codes();
        assert_eq!(codes.len(), RECOVERY_CODES);
        assert_eq!(
            codes.iter().collect::<std::collections::HashSet<_>>().len(),
            10
        );
        let key = TwoStepKey([7; 32]);
        let code = &codes[0];
        assert_eq!(
            key.code_hash(code),
            key.code_hash(&code.to_uppercase().replace('-', " "))
        );
    }
}
