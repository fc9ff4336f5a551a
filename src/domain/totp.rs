//! Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP): HMAC-SHA1, 30-second steps,
//! six digits, the parameters every authenticator app takes (and the only ones some take).
//! Secrets are 160 bits, shown in base32 (RFC 4648, no padding) and in an `otpauth://`
//! address (Google Authenticator's key URI format), drawn as a QR code. Pure: no clock, no
//! database.

use ring::hmac;
use subtle::ConstantTimeEq;

/// Seconds a code stands for.
pub const STEP_SECS: i64 = 30;
/// Steps either side of now a code is still taken from: a phone's clock a little off, or a
/// code typed as it changed.
pub const SKEW: i64 = 1;
const DIGITS: u32 = 6;

/// A TOTP secret. `Debug` never prints it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl Secret {
    /// 160 fresh bits (RFC 4226 recommends the HMAC's output length).
    pub fn generate() -> Self {
        Self(crate::domain::keys::random_bytes()[..20].to_vec())
    }

    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        Self(bytes)
    }

    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// As the text an authenticator app takes by hand: base32, no padding.
    pub fn base32(&self) -> String {
        base32(&self.0)
    }

    /// The six-digit code of time step `step`.
    pub fn code_at(&self, step: i64) -> String {
        let key = hmac::Key::new(hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY, &self.0);
        let tag = hmac::sign(&key, &step.to_be_bytes());
        let mac = tag.as_ref();
        // RFC 4226's dynamic truncation.
        let offset = usize::from(mac[mac.len() - 1] & 0x0f);
        let bin = u32::from_be_bytes([
            mac[offset] & 0x7f,
            mac[offset + 1],
            mac[offset + 2],
            mac[offset + 3],
        ]);
        format!(
            "{:0width$}",
            bin % 10u32.pow(DIGITS),
            width = DIGITS as usize
        )
    }

    /// The step within `SKEW` of now whose code `code` is, and that is later than `after`
    /// (the last step taken, so no code is taken twice), if any. Compared in constant time.
    pub fn matching_step(&self, code: &str, now: i64, after: i64) -> Option<i64> {
        if !is_code(code) {
            return None;
        }
        let current = step_of(now);
        (current - SKEW..=current + SKEW)
            .filter(|step| *step > after)
            .find(|step| bool::from(self.code_at(*step).as_bytes().ct_eq(code.as_bytes())))
    }

    /// The `otpauth://` address an authenticator app reads (from the QR code or a link).
    pub fn otpauth_url(&self, issuer: &str, account: &str) -> String {
        let label = format!("{issuer}:{account}");
        let query = serde_urlencoded::to_string([
            ("secret", self.base32().as_str()),
            ("issuer", issuer),
            ("algorithm", "SHA1"),
            ("digits", "6"),
            ("period", "30"),
        ])
        .unwrap_or_default();
        format!("otpauth://totp/{}?{query}", percent(&label))
    }
}

/// The time step `now` (seconds since the epoch) is in.
pub fn step_of(now: i64) -> i64 {
    now.div_euclid(STEP_SECS)
}

/// Whether `text` looks like a TOTP code: six ASCII digits.
pub fn is_code(text: &str) -> bool {
    text.len() == DIGITS as usize && text.bytes().all(|b| b.is_ascii_digit())
}

/// A QR code of `text` as an inline SVG element, black on white with its quiet zone, sized by
/// the page's CSS.
pub fn qr_svg(text: &str) -> Option<String> {
    let code = qrcode::QrCode::with_error_correction_level(text, qrcode::EcLevel::M).ok()?;
    let svg = code
        .render::<qrcode::render::svg::Color>()
        .min_dimensions(200, 200)
        .quiet_zone(true)
        .build();
    // The renderer starts with an XML declaration, which has no place inside HTML.
    let start = svg.find("<svg")?;
    Some(svg[start..].to_owned())
}

const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

fn base32(bytes: &[u8]) -> String {
    let mut out = String::new();
    let (mut buffer, mut bits) = (0u32, 0u32);
    for &b in bytes {
        buffer = (buffer << 8) | u32::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(ALPHABET[((buffer >> bits) & 31) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(ALPHABET[((buffer << (5 - bits)) & 31) as usize] as char);
    }
    out
}

/// A path segment's reserved characters escaped (the label's `:` stays, as the format writes it).
fn percent(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b':' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6238's appendix B, SHA1 rows, as six digits (the last six of its eight).
    #[test]
    fn codes_match_the_rfc_vectors() {
        let secret = Secret::from_bytes(b"12345678901234567890".to_vec());
        for (time, code) in [
            (59, "287082"),
            (1_111_111_109, "081804"),
            (1_234_567_890, "005924"),
            (2_000_000_000, "279037"),
        ] {
            assert_eq!(secret.code_at(step_of(time)), code, "at {time}");
        }
    }

    #[test]
    fn base32_is_rfc_4648() {
        assert_eq!(base32(b"foobar"), "MZXW6YTBOI");
        assert_eq!(
            base32(b"12345678901234567890"),
            "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
        );
    }

    #[test]
    fn a_code_is_taken_within_the_skew_and_after_the_last_step_only() {
        let secret = Secret::generate();
        let now = 1_700_000_000;
        let step = step_of(now);
        let code = secret.code_at(step);
        assert_eq!(secret.matching_step(&code, now, 0), Some(step));
        assert_eq!(secret.matching_step(&code, now, step), None, "replayed");
        let early = secret.code_at(step - 1);
        assert_eq!(secret.matching_step(&early, now, 0), Some(step - 1));
        let old = secret.code_at(step - 2);
        assert_eq!(secret.matching_step(&old, now, 0), None, "too old");
        assert_eq!(secret.matching_step("12345", now, 0), None);
    }

    #[test]
    fn the_address_names_the_site_and_account() {
        let secret = Secret::from_bytes(b"12345678901234567890".to_vec());
        let url = secret.otpauth_url("My Site", "ada");
        assert!(
            url.starts_with("otpauth://totp/My%20Site:ada?secret=GEZDGNBVGY3TQOJQ"),
            "{url}"
        );
        assert!(url.contains("issuer=My+Site"), "{url}");
        assert!(qr_svg(&url).unwrap().starts_with("<svg"));
    }
}
