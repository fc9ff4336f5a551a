//! Capability links and continuation handles: signing and verifying, nothing else.
//!
//! A link is `{kind}.{instance}.{branch}.{expires}.{nonce}.{signature}`, one URL path segment.
//! The signature is HMAC-SHA256 over every other field and the instance's current token, keyed
//! with the site's private key and hash salt, so rotating either the keys or the instance token
//! voids every outstanding link. The nonce (8 random bytes) makes every link issued distinct,
//! whatever the clock says: two links for one participant with one expiry were one text, so
//! revoking one revoked the other, and the next issued was the revoked one. Links signed before
//! the nonce (`{kind}.{instance}.{branch}.{expires}.{signature}`) keep working. Pure: no
//! database, no HTTP.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::domain::keys::SiteKeys;

type HmacSha256 = Hmac<Sha256>;

/// The longest token we even try to parse; anything longer is refused before any work.
pub const MAX_TOKEN_LEN: usize = 256;
/// Branch names are short lowercase words so they can sit inside a link unescaped.
pub const MAX_BRANCH_LEN: usize = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A link an administrator issued.
    Link,
    /// A short-lived continuation handle the doorway issued for a return trip.
    Handle,
}

impl Kind {
    fn tag(self) -> &'static str {
        match self {
            Kind::Link => "l",
            Kind::Handle => "h",
        }
    }
}

/// What a link grants: the instance, optionally one branch of its current step, until a time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claims {
    pub kind: Kind,
    pub instance: i64,
    pub branch: Option<String>,
    /// Unix seconds; the link is valid while `now < expires`.
    pub expires: i64,
}

/// A token split into its fields, before any key is involved. Cheap: no HMAC.
#[derive(Clone, Debug)]
pub struct Parsed {
    pub claims: Claims,
    /// `None` for a link signed before links had one.
    nonce: Option<[u8; NONCE_BYTES]>,
    signature: [u8; 32],
}

/// Random bytes in every link signed now, spelled as twice as many lower-case hex digits.
const NONCE_BYTES: usize = 8;

/// Whether `name` may be used as a branch name (and so inside a link).
pub fn valid_branch_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_BRANCH_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

fn mac(
    keys: &SiteKeys,
    claims: &Claims,
    nonce: Option<&[u8; NONCE_BYTES]>,
    instance_token: &str,
) -> HmacSha256 {
    let mut mac = HmacSha256::new_from_slice(&keys.link_key()).expect("HMAC takes any key length");
    // Length-free fields separated by NUL, which none of them can contain. A link with a nonce
    // is signed under a name of its own, so neither form can pass for the other.
    match nonce {
        None => mac.update(b"orchestra-capability\0"),
        Some(nonce) => {
            mac.update(b"orchestra-capability-2\0");
            mac.update(nonce);
            mac.update(b"\0");
        }
    }
    mac.update(claims.kind.tag().as_bytes());
    mac.update(b"\0");
    mac.update(claims.instance.to_string().as_bytes());
    mac.update(b"\0");
    mac.update(claims.branch.as_deref().unwrap_or("").as_bytes());
    mac.update(b"\0");
    mac.update(claims.expires.to_string().as_bytes());
    mac.update(b"\0");
    mac.update(instance_token.as_bytes());
    mac
}

/// Signs `claims` for an instance whose current token is `instance_token`.
pub fn sign(keys: &SiteKeys, claims: &Claims, instance_token: &str) -> String {
    let mut nonce = [0u8; NONCE_BYTES];
    getrandom::fill(&mut nonce).expect("the operating system's random source is unavailable");
    signed(keys, claims, Some(&nonce), instance_token)
}

/// A link as signed before links had a nonce: what the links already sent out look like. They
/// are still verified; nothing signs them any more but tests showing that they still work.
#[doc(hidden)]
pub fn sign_without_nonce(keys: &SiteKeys, claims: &Claims, instance_token: &str) -> String {
    signed(keys, claims, None, instance_token)
}

/// The link's text: the claims, the nonce when there is one, then the signature, dot-separated.
fn signed(
    keys: &SiteKeys,
    claims: &Claims,
    nonce: Option<&[u8; NONCE_BYTES]>,
    instance_token: &str,
) -> String {
    let signature = mac(keys, claims, nonce, instance_token)
        .finalize()
        .into_bytes();
    let mut text = format!(
        "{}.{}.{}.{}.",
        claims.kind.tag(),
        claims.instance,
        claims.branch.as_deref().unwrap_or(""),
        claims.expires,
    );
    if let Some(nonce) = nonce {
        text.push_str(&hex::encode(nonce));
        text.push('.');
    }
    text.push_str(&hex::encode(signature));
    text
}

/// Splits a token into fields. `None` for anything malformed; says nothing about validity.
pub fn parse(token: &str) -> Option<Parsed> {
    if token.len() > MAX_TOKEN_LEN {
        return None;
    }
    let mut parts = token.split('.');
    let kind = match parts.next()? {
        "l" => Kind::Link,
        "h" => Kind::Handle,
        _ => return None,
    };
    let instance = parse_decimal(parts.next()?)?;
    let branch = match parts.next()? {
        "" => None,
        b if valid_branch_name(b) => Some(b.to_owned()),
        _ => return None,
    };
    let expires = parse_decimal(parts.next()?)?;
    let next = parts.next()?;
    let (nonce, signature) = if next.len() == NONCE_BYTES * 2 {
        (Some(hex_decode(next)?), hex_decode(parts.next()?)?)
    } else {
        (None, hex_decode(next)?)
    };
    if parts.next().is_some() {
        return None;
    }
    Some(Parsed {
        claims: Claims {
            kind,
            instance,
            branch,
            expires,
        },
        nonce,
        signature,
    })
}

/// Checks the signature in constant time, then the expiry. The caller must treat every `false`
/// the same way: the visitor is never told why a link was refused.
pub fn verify(keys: &SiteKeys, parsed: &Parsed, instance_token: &str, now: i64) -> bool {
    let signature_ok = mac(keys, &parsed.claims, parsed.nonce.as_ref(), instance_token)
        .verify_slice(&parsed.signature)
        .is_ok();
    signature_ok && now < parsed.claims.expires
}

/// Only canonical decimals (no sign, no leading zero, at most 18 digits), so one link has one
/// spelling and its keyed hash identifies it.
fn parse_decimal(s: &str) -> Option<i64> {
    if s.is_empty() || s.len() > 18 || (s.len() > 1 && s.starts_with('0')) {
        return None;
    }
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Exactly twice `N` lower-case hex digits as `N` bytes. Upper case is refused: one link has one
/// spelling, so its keyed hash identifies it (the `hex` crate alone would take both cases).
fn hex_decode<const N: usize>(s: &str) -> Option<[u8; N]> {
    if s.len() != N * 2 || !only_lower_hex(s) {
        return None;
    }
    let mut bytes = [0u8; N];
    hex::decode_to_slice(s, &mut bytes).ok()?;
    Some(bytes)
}

/// Whether `s` is spelled in lower-case hex digits only.
pub(crate) fn only_lower_hex(s: &str) -> bool {
    s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> SiteKeys {
        SiteKeys::from_bytes([7; 32], [9; 32])
    }

    fn claims() -> Claims {
        Claims {
            kind: Kind::Link,
            instance: 42,
            branch: Some("legal".into()),
            expires: 1_000,
        }
    }

    #[test]
    fn a_signed_link_verifies_until_its_expiry_and_not_at_it() {
        let token = sign(&keys(), &claims(), "tok");
        let parsed = parse(&token).expect("parses");
        assert_eq!(parsed.claims, claims());
        assert!(verify(&keys(), &parsed, "tok", 999));
        assert!(!verify(&keys(), &parsed, "tok", 1_000));
        assert!(!verify(&keys(), &parsed, "tok", 1_001));
    }

    #[test]
    fn every_byte_tampered_is_refused() {
        let token = sign(&keys(), &claims(), "tok");
        let bytes = token.as_bytes();
        for i in 0..bytes.len() {
            for replacement in [b'0', b'1', b'a', b'f', b'.', b'x', b'9'] {
                if bytes[i] == replacement {
                    continue;
                }
                let mut changed = bytes.to_vec();
                changed[i] = replacement;
                let changed = String::from_utf8(changed).unwrap();
                let accepted = parse(&changed).is_some_and(|p| verify(&keys(), &p, "tok", 0));
                assert!(!accepted, "byte {i} set to {replacement} still verified");
            }
        }
    }

    #[test]
    fn a_swapped_branch_or_instance_is_refused() {
        let token = sign(&keys(), &claims(), "tok");
        for forged in [
            token.replace(".legal.", ".finance."),
            token.replace(".legal.", ".."),
            token.replacen(".42.", ".43.", 1),
            token.replacen("l.", "h.", 1),
        ] {
            let parsed = parse(&forged).expect("still well formed");
            assert!(!verify(&keys(), &parsed, "tok", 0), "{forged} verified");
        }
    }

    #[test]
    fn rotated_keys_or_a_new_instance_token_void_the_link() {
        let token = sign(&keys(), &claims(), "tok");
        let parsed = parse(&token).unwrap();
        assert!(!verify(&keys(), &parsed, "revoked", 0));
        assert!(!verify(
            &SiteKeys::from_bytes([7; 32], [8; 32]),
            &parsed,
            "tok",
            0
        ));
        assert!(!verify(
            &SiteKeys::from_bytes([6; 32], [9; 32]),
            &parsed,
            "tok",
            0
        ));
    }

    #[test]
    fn malformed_tokens_do_not_parse() {
        for bad in [
            "",
            "l",
            "l.1..5",
            "l.01..5.00",
            "l.-1..5.00",
            "q.1..5.0000000000000000000000000000000000000000000000000000000000000000",
            "l.1.Bad.5.0000000000000000000000000000000000000000000000000000000000000000",
            "l.1..5.0000000000000000000000000000000000000000000000000000000000000000.x",
            "l.1..5.000000000000000000000000000000000000000000000000000000000000000g",
        ] {
            assert!(parse(bad).is_none(), "{bad:?} parsed");
        }
        assert!(parse(&"l".repeat(MAX_TOKEN_LEN + 1)).is_none());
    }

    #[test]
    fn two_links_signed_alike_differ_and_both_verify() {
        let (first, second) = (sign(&keys(), &claims(), "t"), sign(&keys(), &claims(), "t"));
        assert_ne!(first, second, "same claims, same second: still two links");
        for link in [&first, &second] {
            let parsed = parse(link).unwrap();
            assert_eq!(parsed.claims, claims());
            assert!(verify(&keys(), &parsed, "t", 0));
        }
    }

    /// Links sent before the nonce keep working, and neither form passes for the other: a
    /// nonce taken out of a new link, or put into an old one, is no link.
    #[test]
    fn a_link_signed_before_the_nonce_still_verifies_and_the_forms_do_not_mix() {
        let old = sign_without_nonce(&keys(), &claims(), "t");
        assert_eq!(old.split('.').count(), 5);
        assert!(verify(&keys(), &parse(&old).unwrap(), "t", 0));
        assert!(
            !verify(&keys(), &parse(&old).unwrap(), "t", 1_000),
            "it still expires"
        );
        let new = sign(&keys(), &claims(), "t");
        let fields: Vec<&str> = new.split('.').collect();
        assert_eq!(fields.len(), 6);
        let without = format!(
            "{}.{}.{}.{}.{}",
            fields[0], fields[1], fields[2], fields[3], fields[5]
        );
        assert!(!verify(&keys(), &parse(&without).unwrap(), "t", 0));
        let (head, signature) = old.rsplit_once('.').unwrap();
        let with = format!("{head}.{}.{signature}", fields[4]);
        assert!(!verify(&keys(), &parse(&with).unwrap(), "t", 0));
        let upper = new.replace(fields[4], &fields[4].to_ascii_uppercase());
        if upper != new {
            assert!(parse(&upper).is_none(), "one spelling for the nonce too");
        }
    }

    #[test]
    fn a_link_has_one_spelling_its_signature_in_upper_case_is_no_link() {
        let token = sign(&keys(), &claims(), "t");
        assert!(parse(&token).is_some());
        let (head, signature) = token.rsplit_once('.').unwrap();
        let upper = format!("{head}.{}", signature.to_ascii_uppercase());
        assert_ne!(upper, token, "the signature has letters to raise");
        assert!(parse(&upper).is_none());
    }
}
