//! The device cookie (OWASP's "device cookies"): a browser that signed in to an account gets a
//! cookie naming that administrator, their password epoch and a random nonce, sealed in the
//! private jar under a key of its own derived from the site keys. Presented at sign-in for the
//! same account, it takes the attempt out of the account-wide count strangers spend and onto
//! the device's own (`crate::domain::login`), so the owner's browser is never locked out by
//! other addresses. Its value and nonce are never logged nor stored; the flood store counts a
//! keyed hash of the nonce.

use axum::http::HeaderMap;
use axum::response::Response;
use cookie::{Cookie, CookieJar, SameSite};

use super::error::AppError;
use crate::domain::keys::SiteKeys;

const NAME: &str = "orchestra_device";

/// Only the sign-in page is sent the cookie: no other request carries it.
const PATH: &str = "/admin/login";

/// A year: a device is the owner's browser, recognised as long as it is used once a year.
const MAX_AGE_SECS: i64 = 365 * 24 * 3600;

/// What is sealed: whose device, under which password epoch (a password change or a reset
/// makes every older device cookie a stranger's), its nonce, and when it expires.
#[derive(serde::Serialize, serde::Deserialize)]
struct Sealed {
    admin: i64,
    epoch: i64,
    nonce: String,
    until: i64,
}

/// A device cookie that opened and has not expired.
pub struct Device {
    admin: i64,
    epoch: i64,
    nonce: String,
}

impl Device {
    /// The nonce, when the cookie is the administrator's `admin` under their `auth_epoch`.
    pub fn nonce_for(&self, admin: i64, auth_epoch: i64) -> Option<&str> {
        (self.admin == admin && self.epoch == auth_epoch).then_some(self.nonce.as_str())
    }
}

fn key(keys: &SiteKeys) -> cookie::Key {
    super::once::cookie_key(keys, "device-cookie")
}

/// The device cookie the browser sent, if one opens under the site keys and is not expired.
/// Anything else (tampered, another site's, too old) is no device.
pub fn sent(headers: &HeaderMap, keys: &SiteKeys, now: i64) -> Option<Device> {
    let cookie = super::headers::cookies(headers).find(|c| c.name() == NAME)?;
    let opened = CookieJar::new()
        .private(&key(keys))
        .decrypt(cookie.into_owned())?;
    let sealed: Sealed = serde_json::from_str(opened.value()).ok()?;
    (sealed.until >= now).then_some(Device {
        admin: sealed.admin,
        epoch: sealed.epoch,
        nonce: sealed.nonce,
    })
}

/// Gives the browser a new device cookie for `admin` under `auth_epoch`, with a fresh nonce.
pub fn issue(
    response: &mut Response,
    keys: &SiteKeys,
    secure: bool,
    now: i64,
    admin: i64,
    auth_epoch: i64,
) -> Result<(), AppError> {
    let sealed = Sealed {
        admin,
        epoch: auth_epoch,
        nonce: crate::domain::keys::random_token(),
        until: now + MAX_AGE_SECS,
    };
    let text = serde_json::to_string(&sealed)
        .map_err(|e| AppError::internal("device cookie not encoded", e))?;
    let mut jar = CookieJar::new();
    jar.private_mut(&key(keys)).add(
        Cookie::build((NAME, text))
            .path(PATH)
            .http_only(true)
            .same_site(SameSite::Strict)
            .secure(secure)
            .max_age(cookie::time::Duration::seconds(MAX_AGE_SECS))
            .build(),
    );
    let sealed = jar
        .get(NAME)
        .ok_or_else(|| AppError::internal("device cookie not sealed", NAME))?;
    super::once::set(response, sealed)
}

#[cfg(test)]
mod tests {
    use axum::http::header::{COOKIE, SET_COOKIE};

    use super::*;

    /// The cookie `issue` sets, and the request headers of a browser sending it back.
    fn issued(keys: &SiteKeys, secure: bool, now: i64) -> (String, HeaderMap) {
        let mut response = Response::default();
        issue(&mut response, keys, secure, now, 7, 2).unwrap();
        let set = response.headers()[SET_COOKIE].to_str().unwrap().to_owned();
        let pair = set.split(';').next().unwrap().to_owned();
        let mut headers = HeaderMap::new();
        headers.insert(COOKIE, pair.parse().unwrap());
        (set, headers)
    }

    #[test]
    fn a_device_opens_for_its_administrator_and_epoch_until_it_expires() {
        let keys = SiteKeys::generate();
        let (set, headers) = issued(&keys, true, 1000);
        for part in ["HttpOnly", "Secure", "SameSite=Strict", "Path=/admin/login"] {
            assert!(set.contains(part), "{part} in {set}");
        }
        let device = sent(&headers, &keys, 1000).unwrap();
        assert!(device.nonce_for(7, 2).is_some());
        assert!(device.nonce_for(8, 2).is_none(), "another administrator");
        assert!(device.nonce_for(7, 3).is_none(), "a later password epoch");
        assert!(sent(&headers, &keys, 1000 + MAX_AGE_SECS + 1).is_none());
        assert!(sent(&headers, &SiteKeys::generate(), 1000).is_none());
        let (plain, _) = issued(&keys, false, 1000);
        assert!(!plain.contains("Secure"));
    }
}
