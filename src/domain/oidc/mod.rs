//! Signing in through an OpenID Provider (`ORCHESTRA_OIDC_*`): discovery, the authorization
//! code flow with PKCE, state and nonce, and the ID token's checks (signature against the
//! provider's JWKS, issuer, audience, expiry, nonce), all by the `openidconnect` crate. What
//! Orchestra adds: the flow is kept in the visitor's session for a few minutes and used once,
//! and a verified email finds the administrator with that address and nobody else; no account
//! is ever made by it.

pub mod client;

use std::time::{Duration, Instant};

use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreClientAuthMethod, CoreProviderMetadata,
};
use openidconnect::{
    AuthType, AuthorizationCode, ClaimsVerificationError, ClientId, ClientSecret, CsrfToken,
    IssuerUrl, Nonce, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, RequestTokenError, Scope,
    TokenResponse,
};
use serde::{Deserialize, Serialize};

use crate::i18n::Message;
use crate::store::{self, Db};

/// Where the sign-in page's button starts the flow.
pub const START_PATH: &str = "/admin/login/oidc";

/// Where the provider sends the browser back, after the site's base URL.
pub const CALLBACK_PATH: &str = "/admin/login/oidc/callback";

/// How long a started sign-in may take at the provider before its callback is refused.
pub const FLOW_SECONDS: i64 = 600;

/// How long the provider's discovery document and keys are used before they are read again.
const FRESH: Duration = Duration::from_secs(3600);

/// A token signed by a key the cached set lacks (the provider rotated its keys) reads the keys
/// again, but not more often than this, so forged tokens cannot make us hammer the provider.
const REREAD_AFTER: Duration = Duration::from_secs(60);

/// The provider, from `ORCHESTRA_OIDC_ISSUER`, `ORCHESTRA_OIDC_CLIENT_ID`,
/// `ORCHESTRA_OIDC_CLIENT_SECRET` and, for the button, `ORCHESTRA_OIDC_NAME`.
#[derive(Clone)]
pub struct OidcConfig {
    pub issuer: String,
    pub client_id: String,
    client_secret: String,
    /// What the sign-in page's button names: "Sign in with {name}".
    pub name: String,
}

/// The client secret never reaches a log line or a panic message.
impl std::fmt::Debug for OidcConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcConfig")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl OidcConfig {
    pub fn new(issuer: &str, client_id: &str, client_secret: &str, name: Option<&str>) -> Self {
        let issuer = issuer.trim().to_owned();
        let name = match name.map(str::trim).filter(|n| !n.is_empty()) {
            Some(n) => n.to_owned(),
            None => default_name(&issuer),
        };
        Self {
            issuer,
            client_id: client_id.trim().to_owned(),
            client_secret: client_secret.trim().to_owned(),
            name,
        }
    }

    /// `None` when none of the three is set; all three or none, and the issuer an http(s) URL.
    pub fn from_lookup(get: &impl Fn(&str) -> Option<String>) -> Result<Option<Self>, Message> {
        let read = |k: &str| get(k).filter(|v| !v.trim().is_empty());
        let names = [
            "ORCHESTRA_OIDC_ISSUER",
            "ORCHESTRA_OIDC_CLIENT_ID",
            "ORCHESTRA_OIDC_CLIENT_SECRET",
        ];
        let values: Vec<Option<String>> = names.iter().map(|k| read(k)).collect();
        match (&values[0], &values[1], &values[2]) {
            (None, None, None) => Ok(None),
            (Some(issuer), Some(id), Some(secret)) => {
                let parsed = url::Url::parse(issuer.trim()).ok();
                if !parsed.is_some_and(|u| matches!(u.scheme(), "https" | "http")) {
                    return Err(Message::new("config-env-oidc-issuer").arg("value", issuer));
                }
                let name = read("ORCHESTRA_OIDC_NAME");
                Ok(Some(Self::new(issuer, id, secret, name.as_deref())))
            }
            _ => {
                let missing: Vec<&str> = names
                    .iter()
                    .zip(&values)
                    .filter(|(_, v)| v.is_none())
                    .map(|(k, _)| *k)
                    .collect();
                Err(Message::new("config-env-oidc-partial").arg("names", missing.join(", ")))
            }
        }
    }
}

/// The button's name when the operator named none: the two providers offices use, else the
/// issuer's host.
fn default_name(issuer: &str) -> String {
    let host = url::Url::parse(issuer)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_default();
    if host == "accounts.google.com" {
        "Google".to_owned()
    } else if host.ends_with("microsoftonline.com") {
        "Microsoft".to_owned()
    } else {
        host
    }
}

/// Why a sign-in through the provider was refused; each is one plain message on the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The provider could not be reached or answered nonsense: try again later.
    Unavailable,
    /// A callback that is not the answer to this browser's sign-in: no flow, another state, a
    /// second use, too late, a code the provider refused, a token that does not verify.
    Refused,
    /// The provider gave no address, or did not say it verified it.
    Unverified,
    /// No active administrator has the address.
    NotAnAdministrator,
}

impl Refusal {
    pub fn message_id(self) -> &'static str {
        match self {
            Self::Unavailable => "oidc-unavailable",
            Self::Refused => "oidc-refused",
            Self::Unverified => "oidc-unverified",
            Self::NotAnAdministrator => "oidc-unknown",
        }
    }
}

/// A sign-in started and not yet finished, kept in the visitor's session.
#[derive(Serialize, Deserialize)]
pub struct Pending {
    state: String,
    nonce: String,
    verifier: String,
    /// Where the administrator was going (already made safe).
    pub destination: String,
    at: i64,
}

/// What the provider sent back to the callback, as it came.
#[derive(Deserialize, Default)]
pub struct Callback {
    pub code: Option<String>,
    pub state: Option<String>,
    /// RFC 9207: the issuer that answered, when the provider says.
    pub iss: Option<String>,
    pub error: Option<String>,
}

/// The provider and what was last read of it.
pub struct Oidc {
    pub config: OidcConfig,
    metadata: tokio::sync::Mutex<Option<(Instant, CoreProviderMetadata)>>,
}

impl Oidc {
    pub fn new(config: OidcConfig) -> Self {
        Self {
            config,
            metadata: tokio::sync::Mutex::new(None),
        }
    }

    /// The provider's discovery document and keys: read again when older than `FRESH`, or when
    /// `reread` and older than `REREAD_AFTER`. A provider that cannot be reached is answered
    /// from what was read before, if anything was.
    async fn metadata(&self, reread: bool) -> Result<CoreProviderMetadata, Refusal> {
        // Held while reading, so callbacks at once read the provider once.
        let mut cached = self.metadata.lock().await;
        if let Some((at, metadata)) = cached.as_ref() {
            let limit = if reread { REREAD_AFTER } else { FRESH };
            if at.elapsed() < limit {
                return Ok(metadata.clone());
            }
        }
        let issuer =
            IssuerUrl::new(self.config.issuer.clone()).map_err(|_| Refusal::Unavailable)?;
        match CoreProviderMetadata::discover_async(issuer, &client::call).await {
            Ok(metadata) => {
                *cached = Some((Instant::now(), metadata.clone()));
                Ok(metadata)
            }
            Err(e) => {
                tracing::warn!(error = %e, "the OpenID Provider's discovery failed");
                cached
                    .as_ref()
                    .map(|(_, m)| m.clone())
                    .ok_or(Refusal::Unavailable)
            }
        }
    }

    /// The provider's address to send the browser to, and what the callback will need.
    pub async fn start(
        &self,
        redirect: &str,
        destination: String,
        now: i64,
    ) -> Result<(String, Pending), Refusal> {
        let metadata = self.metadata(false).await?;
        let redirect = RedirectUrl::new(redirect.to_owned()).map_err(|_| Refusal::Unavailable)?;
        let client = CoreClient::from_provider_metadata(
            metadata,
            ClientId::new(self.config.client_id.clone()),
            Some(ClientSecret::new(self.config.client_secret.clone())),
        )
        .set_redirect_uri(redirect);
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let (url, state, nonce) = client
            .authorize_url(
                CoreAuthenticationFlow::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .add_scope(Scope::new("email".to_owned()))
            .set_pkce_challenge(challenge)
            .url();
        let pending = Pending {
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            verifier: verifier.secret().clone(),
            destination,
            at: now,
        };
        Ok((url.to_string(), pending))
    }

    /// The administrator the callback signs in: the flow this browser started (taken from its
    /// session by the caller, so it answers once), the state it carried, the code exchanged
    /// with its PKCE verifier, the ID token verified, its verified address, and the active
    /// administrator with that address.
    pub async fn finish(
        &self,
        db: &Db,
        pending: Option<Pending>,
        callback: Callback,
        redirect: &str,
        now: i64,
    ) -> Result<Result<store::admins::Admin, Refusal>, sqlx::Error> {
        let email = match self.verified_email(pending, callback, redirect, now).await {
            Ok(email) => email,
            Err(refusal) => return Ok(Err(refusal)),
        };
        let admin = store::admins::by_email(db, &email)
            .await?
            .filter(|a| a.disabled_at.is_none());
        Ok(admin.ok_or(Refusal::NotAnAdministrator))
    }

    async fn verified_email(
        &self,
        pending: Option<Pending>,
        callback: Callback,
        redirect: &str,
        now: i64,
    ) -> Result<String, Refusal> {
        use subtle::ConstantTimeEq;
        let pending = pending.ok_or(Refusal::Refused)?;
        if now < pending.at || now - pending.at > FLOW_SECONDS {
            return Err(Refusal::Refused);
        }
        let state = callback.state.ok_or(Refusal::Refused)?;
        if !bool::from(state.as_bytes().ct_eq(pending.state.as_bytes())) {
            return Err(Refusal::Refused);
        }
        if callback.error.is_some() {
            return Err(Refusal::Refused);
        }
        if callback.iss.is_some_and(|iss| iss != self.config.issuer) {
            return Err(Refusal::Refused);
        }
        let code = callback.code.ok_or(Refusal::Refused)?;
        let redirect = RedirectUrl::new(redirect.to_owned()).map_err(|_| Refusal::Unavailable)?;
        let metadata = self.metadata(false).await?;
        // client_secret_basic unless the provider takes only client_secret_post.
        let post_only = metadata
            .token_endpoint_auth_methods_supported()
            .is_some_and(|m| {
                m.contains(&CoreClientAuthMethod::ClientSecretPost)
                    && !m.contains(&CoreClientAuthMethod::ClientSecretBasic)
            });
        let client = CoreClient::from_provider_metadata(
            metadata,
            ClientId::new(self.config.client_id.clone()),
            Some(ClientSecret::new(self.config.client_secret.clone())),
        )
        .set_redirect_uri(redirect)
        .set_auth_type(if post_only {
            AuthType::RequestBody
        } else {
            AuthType::BasicAuth
        });
        let token = client
            .exchange_code(AuthorizationCode::new(code))
            .map_err(|_| Refusal::Unavailable)?
            .set_pkce_verifier(PkceCodeVerifier::new(pending.verifier))
            .request_async(&client::call)
            .await
            .map_err(|e| match e {
                RequestTokenError::Request(_) => Refusal::Unavailable,
                _ => Refusal::Refused,
            })?;
        let id_token = token.id_token().ok_or(Refusal::Refused)?;
        let nonce = Nonce::new(pending.nonce);
        let claims = match id_token.claims(&client.id_token_verifier(), &nonce) {
            Ok(claims) => claims.clone(),
            // Perhaps signed by a key published since the set was read.
            Err(ClaimsVerificationError::SignatureVerification(_)) => {
                let fresh = self.metadata(true).await?;
                let verifier = CoreClient::from_provider_metadata(
                    fresh,
                    ClientId::new(self.config.client_id.clone()),
                    None,
                );
                id_token
                    .claims(&verifier.id_token_verifier(), &nonce)
                    .map_err(|_| Refusal::Refused)?
                    .clone()
            }
            Err(_) => return Err(Refusal::Refused),
        };
        if claims.email_verified() != Some(true) {
            return Err(Refusal::Unverified);
        }
        let email = claims.email().ok_or(Refusal::Unverified)?;
        Ok(email.as_str().trim().to_lowercase())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn all_three_or_none_and_the_secret_is_never_shown() {
        assert!(OidcConfig::from_lookup(&lookup(&[])).unwrap().is_none());
        let c = OidcConfig::from_lookup(&lookup(&[
            ("ORCHESTRA_OIDC_ISSUER", "https://accounts.google.com"),
            ("ORCHESTRA_OIDC_CLIENT_ID", "id"),
            ("ORCHESTRA_OIDC_CLIENT_SECRET", "s3cret-value"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(c.name, "Google");
        assert!(!format!("{c:?}").contains("s3cret-value"));
        let m = OidcConfig::from_lookup(&lookup(&[("ORCHESTRA_OIDC_ISSUER", "https://x.example")]))
            .unwrap_err()
            .render(crate::i18n::Lang::En);
        assert!(m.contains("ORCHESTRA_OIDC_CLIENT_SECRET"), "{m}");
        let m = OidcConfig::from_lookup(&lookup(&[
            ("ORCHESTRA_OIDC_ISSUER", "accounts.google.com"),
            ("ORCHESTRA_OIDC_CLIENT_ID", "id"),
            ("ORCHESTRA_OIDC_CLIENT_SECRET", "s"),
        ]))
        .unwrap_err()
        .render(crate::i18n::Lang::En);
        assert!(m.contains("accounts.google.com"), "{m}");
    }
}
