//! One-time values that the page after a POST shows once (a new API token's text, a link just
//! issued). They travel in the administrator's own browser, in a cookie encrypted and
//! authenticated with a key derived from the site keys (AES-256-GCM, the `cookie` crate's
//! private jar), short-lived and scoped to the one page that shows it, which removes it. Nothing
//! of them is written to the database, so no copy of it, nor of its WAL, holds them.

use axum::extract::FromRequestParts;
use axum::http::header::SET_COOKIE;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::Response;
use cookie::{Cookie, CookieJar, Key, SameSite};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::AppState;
use super::error::AppError;
use crate::domain::keys::SiteKeys;

const TOKEN_COOKIE: &str = "orchestra_once_token";
const LINK_COOKIE: &str = "orchestra_once_link";
const ADMIN_LINK_COOKIE: &str = "orchestra_once_admin_link";
const WEBHOOK_COOKIE: &str = "orchestra_once_webhook";

/// How long a value waits for its page: the redirect is followed at once, so a minute is
/// ample, and a cookie a browser kept past it is refused by the date sealed inside it.
const MAX_AGE_SECS: i64 = 60;

/// What may wait for a page, and which page shows it.
#[derive(Clone, Copy, Debug)]
pub enum Slot {
    /// A new API token's text, for the tokens page.
    NewToken,
    /// A link just issued on an instance, for that instance's page.
    IssuedLink(i64),
    /// An invitation or a reset link just made, for the administrators page.
    AdminLink,
    /// A new webhook endpoint's signing secret, for the webhooks page.
    WebhookSecret,
}

impl Slot {
    /// Also the encryption's associated data: a value sealed for one slot opens in no other.
    fn name(self) -> &'static str {
        match self {
            Self::NewToken => TOKEN_COOKIE,
            Self::IssuedLink(_) => LINK_COOKIE,
            Self::AdminLink => ADMIN_LINK_COOKIE,
            Self::WebhookSecret => WEBHOOK_COOKIE,
        }
    }

    /// The only path the browser sends the cookie to (and the pages below it).
    fn path(self) -> String {
        match self {
            Self::NewToken => "/admin/config/api".to_owned(),
            Self::IssuedLink(instance) => format!("/admin/instances/{instance}"),
            Self::AdminLink => "/admin/admins".to_owned(),
            Self::WebhookSecret => "/admin/webhooks".to_owned(),
        }
    }
}

/// What is sealed: the value and the time past which it is refused.
#[derive(serde::Serialize, serde::Deserialize)]
struct Sealed<T> {
    until: i64,
    value: T,
}

/// The request's one-time cookies and what it takes to open and seal them.
pub struct Once {
    /// The browser's cookies with a slot's name, as sent (sealed).
    sent: Vec<Cookie<'static>>,
    /// For the key, derived only when a value is opened or sealed.
    keys: SiteKeys,
    secure: bool,
    now: i64,
}

/// The cookies' key: the site keys' keyed hash for this purpose, expanded by HKDF. Rotating
/// the site keys makes every value still waiting unreadable (it is then not shown).
fn key(keys: &SiteKeys) -> Key {
    cookie_key(keys, "one-time-cookie")
}

/// A private jar's key for one `purpose` (each kind of sealed cookie has its own).
pub(super) fn cookie_key(keys: &SiteKeys, purpose: &str) -> Key {
    use hmac::Mac;
    Key::derive_from(&keys.keyed_hasher(purpose).finalize().into_bytes())
}

fn sent(headers: &HeaderMap) -> Vec<Cookie<'static>> {
    super::headers::cookies(headers)
        .filter(|c| {
            [TOKEN_COOKIE, LINK_COOKIE, ADMIN_LINK_COOKIE, WEBHOOK_COOKIE].contains(&c.name())
        })
        .map(Cookie::into_owned)
        .collect()
}

impl FromRequestParts<AppState> for Once {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, AppError> {
        Ok(Self {
            sent: sent(&parts.headers),
            keys: state.site.get().await.keys.clone(),
            secure: state.secure_cookies,
            now: state.clock.now_secs(),
        })
    }
}

impl Once {
    /// The value waiting for this page, if the browser sent one that opens, is for this slot
    /// and has not expired. Anything else (tampered, another site's keys, too old) is nothing.
    pub fn take<T: DeserializeOwned>(&self, slot: Slot) -> Option<T> {
        let cookie = self.sent.iter().find(|c| c.name() == slot.name())?;
        let jar = CookieJar::new();
        let opened = jar.private(&key(&self.keys)).decrypt(cookie.clone())?;
        let sealed: Sealed<T> = serde_json::from_str(opened.value()).ok()?;
        (sealed.until >= self.now).then_some(sealed.value)
    }

    /// Seals a value into the response for the page of `slot` to show.
    pub fn keep<T: Serialize>(
        &self,
        response: &mut Response,
        slot: Slot,
        value: T,
    ) -> Result<(), AppError> {
        let sealed = Sealed {
            until: self.now + MAX_AGE_SECS,
            value,
        };
        let text = serde_json::to_string(&sealed)
            .map_err(|e| AppError::internal("one-time value not encoded", e))?;
        let mut jar = CookieJar::new();
        jar.private_mut(&key(&self.keys))
            .add(self.cookie(slot, text, MAX_AGE_SECS));
        let sealed = jar
            .get(slot.name())
            .ok_or_else(|| AppError::internal("one-time value not sealed", slot.name()))?;
        set(response, sealed)
    }

    /// Removes the slot's cookie from the browser, when it sent one: a reload shows nothing.
    pub fn forget(&self, response: &mut Response, slot: Slot) -> Result<(), AppError> {
        if !self.sent.iter().any(|c| c.name() == slot.name()) {
            return Ok(());
        }
        set(response, &self.cookie(slot, String::new(), 0))
    }

    fn cookie(&self, slot: Slot, value: String, max_age: i64) -> Cookie<'static> {
        Cookie::build((slot.name(), value))
            .path(slot.path())
            .http_only(true)
            .same_site(SameSite::Strict)
            .secure(self.secure)
            .max_age(cookie::time::Duration::seconds(max_age))
            .build()
    }
}

pub(super) fn set(response: &mut Response, cookie: &Cookie<'_>) -> Result<(), AppError> {
    let value = HeaderValue::from_str(&cookie.to_string())
        .map_err(|e| AppError::internal("one-time cookie not a header", e))?;
    response.headers_mut().append(SET_COOKIE, value);
    Ok(())
}
