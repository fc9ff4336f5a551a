//! The headers a trusted site sends on every response: no sniffing, no framing, no inline
//! script (CSP), no caching of admin pages, and HSTS once the site is served over https.
//!
//! The doorway's refusal is answered before this layer runs; it carries the same static
//! headers, built into it (`doorway::refusal`), so refusing stays as cheap as it was.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, STRICT_TRANSPORT_SECURITY, X_CONTENT_TYPE_OPTIONS,
    X_FRAME_OPTIONS,
};
use axum::http::{HeaderMap, HeaderValue};

/// No inline script or style anywhere: every template takes its CSS and script from /static.
pub const CSP: &str =
    "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
pub const NOSNIFF: &str = "nosniff";
pub const DENY: &str = "DENY";
pub const HSTS: &str = "max-age=31536000";

/// What the layer needs: whether the site is served over https (read at start, as the
/// session cookie's `Secure` is), and where to note forwarded headers nobody trusts.
#[derive(Clone)]
pub struct Security {
    pub https: bool,
    pub trust_forwarded: bool,
    pub forwarded_seen: Arc<AtomicBool>,
}

/// Whether a request carries any header a proxy would add for the client's address.
pub fn has_forwarded_headers(headers: &HeaderMap) -> bool {
    headers.contains_key("x-forwarded-for")
        || headers.contains_key("forwarded")
        || headers.contains_key("x-real-ip")
}

impl Security {
    /// For the status report: forwarded headers arrive, but no proxy is named, so they are
    /// ignored and every visitor behind the proxy shares its address.
    pub fn note_forwarded(&self, headers: &HeaderMap) {
        if !self.trust_forwarded
            && !self.forwarded_seen.load(Ordering::Relaxed)
            && has_forwarded_headers(headers)
        {
            self.forwarded_seen.store(true, Ordering::Relaxed);
        }
    }

    /// Every response's headers, and no caching of an admin page (`admin`: the request's path
    /// is under `/admin`).
    pub fn insert(&self, headers: &mut HeaderMap, admin: bool) {
        insert_static(headers, self.https);
        if admin {
            headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
        }
    }
}

/// The headers every response carries, for an answer made outside the router (the API's fast
/// refusal).
pub fn insert_static(headers: &mut HeaderMap, https: bool) {
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static(NOSNIFF));
    // A download sets its own, stricter policy (`http::files`): kept.
    headers
        .entry(CONTENT_SECURITY_POLICY)
        .or_insert(HeaderValue::from_static(CSP));
    headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static(DENY));
    if https {
        headers.insert(STRICT_TRANSPORT_SECURITY, HeaderValue::from_static(HSTS));
    }
}

/// The cookies a request sent, as the `cookie` crate reads the `Cookie` headers: the one parser
/// of them (the CSRF nonce, the language, the one-time cookies), borrowing from the headers.
pub fn cookies(headers: &HeaderMap) -> impl Iterator<Item = cookie::Cookie<'_>> {
    headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(cookie::Cookie::split_parse)
        .filter_map(Result::ok)
}

/// The value of the first cookie named `name` a request sent.
pub fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    cookies(headers).find_map(|c| (c.name_raw()? == name).then_some(c.value_raw()?))
}
