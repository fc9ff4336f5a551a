//! The site's secrets: a private key and a hash salt, made from OS randomness on first start.
//!
//! `Debug` never prints them; the only ways out are the derived keys below.

use std::fmt;

use hmac::{Hmac, Mac};
use sha2::Sha256;

#[derive(Clone)]
pub struct SiteKeys {
    private_key: [u8; 32],
    hash_salt: [u8; 32],
    /// The key the payment provider signs its notices with. Kept apart from the link keys:
    /// rotating those does not break notices already on their way.
    provider_key: [u8; 32],
    /// The key API tokens are stored under (their keyed hash). Kept apart from the link keys, so
    /// rotating those does not void every token. A site made before this key existed has it
    /// equal to its hash salt, so its tokens' stored hashes stay right.
    token_key: [u8; 32],
    /// Which link keys these are: moved on by each rotation, recorded with every link signed
    /// under them, so a link signed under older ones reads as void (`LinkState::Void`).
    generation: i64,
}

impl fmt::Debug for SiteKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SiteKeys(<redacted>)")
    }
}

impl SiteKeys {
    pub fn from_bytes(private_key: [u8; 32], hash_salt: [u8; 32]) -> Self {
        Self {
            private_key,
            hash_salt,
            provider_key: [0; 32],
            // As before the token key was a key of its own: tokens hashed under the salt.
            token_key: hash_salt,
            generation: 0,
        }
    }

    pub fn with_generation(mut self, generation: i64) -> Self {
        self.generation = generation;
        self
    }

    /// The generation of the link keys (`with_generation`).
    pub fn generation(&self) -> i64 {
        self.generation
    }

    /// Fresh keys from the operating system's random source.
    pub fn generate() -> Self {
        Self::from_bytes(random_bytes(), random_bytes())
            .with_provider_key(random_bytes())
            .with_token_key(random_bytes())
    }

    pub fn with_token_key(mut self, key: [u8; 32]) -> Self {
        self.token_key = key;
        self
    }

    pub(crate) fn token_key_hex(&self) -> String {
        hex::encode(self.token_key)
    }

    /// The keyed hash of API tokens, keyed and ready for a token's text: HMAC-SHA256 under the
    /// token key, with the purpose as `keyed_hasher` writes it (so a site whose token key is its
    /// old hash salt hashes its tokens exactly as before).
    pub fn token_hasher(&self) -> Hmac<Sha256> {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.token_key).expect("HMAC takes any key length");
        mac.update(TOKEN_PURPOSE.as_bytes());
        mac.update(b"\0");
        mac
    }

    pub fn with_provider_key(mut self, key: [u8; 32]) -> Self {
        self.provider_key = key;
        self
    }

    /// The HMAC key of the payment provider's notices.
    pub fn provider_key(&self) -> &[u8; 32] {
        &self.provider_key
    }

    pub(crate) fn provider_key_hex(&self) -> String {
        hex::encode(self.provider_key)
    }

    /// The HMAC key for capability links: private key and hash salt together.
    pub(crate) fn link_key(&self) -> [u8; 64] {
        let mut key = [0u8; 64];
        key[..32].copy_from_slice(&self.private_key);
        key[32..].copy_from_slice(&self.hash_salt);
        key
    }

    pub(crate) fn private_key_hex(&self) -> String {
        hex::encode(self.private_key)
    }

    pub(crate) fn hash_salt_hex(&self) -> String {
        hex::encode(self.hash_salt)
    }

    /// The stored keys; a token key left empty is the hash salt (`from_bytes`).
    pub(crate) fn from_hex(
        private_key: &str,
        hash_salt: &str,
        provider: &str,
        token_key: Option<&str>,
    ) -> Option<Self> {
        let decode = |hex: &str| -> Option<[u8; 32]> { hex::decode(hex).ok()?.try_into().ok() };
        let keys = Self::from_bytes(decode(private_key)?, decode(hash_salt)?)
            .with_provider_key(decode(provider)?);
        Some(match token_key {
            Some(t) => keys.with_token_key(decode(t)?),
            None => keys,
        })
    }

    /// A keyed hash standing in for a secret wherever an identifier is needed (flood store,
    /// logs, handle records). Full length, so it identifies exactly one secret.
    pub fn keyed_hash(&self, purpose: &str, secret: &str) -> String {
        let mut mac = self.keyed_hasher(purpose);
        mac.update(secret.as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }

    /// `keyed_hash` for one purpose, keyed and ready for the secret: cloned per use by a
    /// path that hashes many secrets (`site::Snapshot`).
    pub fn keyed_hasher(&self, purpose: &str) -> Hmac<Sha256> {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.hash_salt).expect("HMAC takes any key length");
        mac.update(purpose.as_bytes());
        mac.update(b"\0");
        mac
    }
}

/// The purpose a client's address is hashed under where a record keeps it (an answer's line of
/// history): answers from one client can be told apart from another's, never traced to it.
pub const CLIENT_PURPOSE: &str = "client";

/// The purpose API tokens are hashed under (`SiteKeys::token_hasher`).
pub const TOKEN_PURPOSE: &str = "api-token";

/// 32 bytes from the operating system. Without an entropy source the site cannot be secure, so
/// failing to get one ends the process rather than carrying on with weak secrets.
pub fn random_bytes() -> [u8; 32] {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the operating system's random source is unavailable");
    bytes
}

/// A random token as 64 hex characters (CSRF tokens, instance tokens, setup tokens).
pub fn random_token() -> String {
    hex::encode(random_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_keys() {
        let keys = SiteKeys::from_bytes([0xab; 32], [0xcd; 32]);
        let shown = format!("{keys:?}");
        assert!(!shown.contains("ab") && !shown.contains("171"), "{shown}");
    }

    #[test]
    fn keyed_hashes_differ_by_purpose_and_by_salt() {
        let a = SiteKeys::from_bytes([1; 32], [2; 32]);
        let b = SiteKeys::from_bytes([1; 32], [3; 32]);
        assert_eq!(a.keyed_hash("flood", "x").len(), 64);
        assert_ne!(a.keyed_hash("flood", "x"), a.keyed_hash("log", "x"));
        assert_ne!(a.keyed_hash("flood", "x"), b.keyed_hash("flood", "x"));
    }
}
