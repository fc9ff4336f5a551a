//! Standard Webhooks signatures (https://www.standardwebhooks.com/): an endpoint's secret is
//! `whsec_` and the base64 of its key bytes; a delivery's `webhook-signature` is `v1,` and the
//! base64 of HMAC-SHA256 under those bytes of `{id}.{timestamp}.{body}`. Pure: no I/O.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The prefix of a secret as the operator is shown it.
pub const PREFIX: &str = "whsec_";

/// An endpoint's signing key. `Debug` shows nothing of it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Secret {
    /// A new random key of 32 bytes.
    pub fn generate() -> Self {
        Secret(crate::domain::keys::random_bytes().to_vec())
    }

    /// A key as stored (opened from its seal); `None` when shorter than 16 bytes.
    pub fn from_bytes(bytes: Vec<u8>) -> Option<Self> {
        (bytes.len() >= 16).then_some(Secret(bytes))
    }

    /// Reads `whsec_<base64>` (or the base64 alone, as some receivers store it). `None` for
    /// anything else, or a key shorter than 16 bytes.
    pub fn parse(s: &str) -> Option<Self> {
        let b64 = s.trim().strip_prefix(PREFIX).unwrap_or(s.trim());
        STANDARD
            .decode(b64)
            .ok()
            .filter(|k| k.len() >= 16)
            .map(Secret)
    }

    /// The key bytes, for sealing at rest.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// `whsec_<base64>`: shown once, to the operator who made the endpoint.
    pub fn reveal(&self) -> String {
        format!("{PREFIX}{}", STANDARD.encode(&self.0))
    }

    /// The `webhook-signature` of a delivery: `v1,<base64>`.
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key length");
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::Secret;

    /// The specification's published example: any Standard Webhooks library verifies what this
    /// module signs.
    #[test]
    fn the_signature_matches_the_standard_webhooks_test_vector() {
        let secret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        assert_eq!(
            secret.sign(
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1_614_265_330,
                br#"{"test": 2432232314}"#
            ),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn a_secret_reads_back_from_what_the_operator_is_shown_and_hides_from_debug() {
        let secret = Secret::generate();
        let shown = secret.reveal();
        assert!(shown.starts_with("whsec_"));
        assert_eq!(Secret::parse(&shown), Some(secret.clone()));
        assert_eq!(format!("{secret:?}"), "Secret(..)");
        assert_eq!(Secret::parse("whsec_c2hvcnQ="), None, "too short");
        assert_eq!(Secret::parse("whsec_not base64!"), None);
    }
}
