//! Webhook endpoints: where messages go, which events each takes, and its signing secret,
//! sealed at rest. An endpoint's URL is checked when it is made and again at each delivery
//! (the name may resolve elsewhere by then): https only, and never an address inside the
//! server's own network (loopback, private, link-local, the cloud metadata address) or any
//! other range that is not globally reachable (`super::special`), unless
//! the operator set `ORCHESTRA_WEBHOOKS_ALLOW_PRIVATE=1` (tests, a receiver on the same host).

use std::net::IpAddr;

use cookie::{Cookie, CookieJar};
use hmac::Mac;

use super::signature::Secret;
use super::topic::Topic;
use crate::domain::keys::SiteKeys;
use crate::error::{Error, Refusable};
use crate::i18n::Message;
use crate::store::webhooks::EndpointRow;
use crate::store::{self, Db};

/// The keyed hash purpose the sealing key is derived under.
const SEAL_PURPOSE: &str = "webhook-secret";

/// Why an endpoint's URL or events were refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    BadUrl,
    NotHttps,
    /// The host is, or resolves to, an address inside the server's network.
    Private,
    Unresolved,
    UnknownEvent(String),
    /// The API token holds as many endpoints as it may (`api.caps.endpoints_per_token`).
    TooMany(u64),
}

impl Refusal {
    pub fn message(&self) -> Message {
        match self {
            Refusal::BadUrl => Message::new("webhook-url-invalid"),
            Refusal::NotHttps => Message::new("webhook-url-not-https"),
            Refusal::Private => Message::new("webhook-url-private"),
            Refusal::Unresolved => Message::new("webhook-url-unresolved"),
            Refusal::TooMany(cap) => Message::new("webhook-too-many").arg("cap", cap.to_string()),
            Refusal::UnknownEvent(e) => Message::new("webhook-event-unknown")
                .arg("event", e.clone())
                .arg("events", Topic::ALL.map(Topic::as_str).join(", ")),
        }
    }
}

/// Whether the operator allows http and private addresses (`ORCHESTRA_WEBHOOKS_ALLOW_PRIVATE=1`).
pub fn allow_private() -> bool {
    std::env::var("ORCHESTRA_WEBHOOKS_ALLOW_PRIVATE").is_ok_and(|v| v.trim() == "1")
}

/// An address no delivery may reach: the server's own network, the metadata service, and every
/// other range the IANA special-purpose registries say is not globally reachable
/// (`super::special`).
pub fn is_internal(ip: IpAddr) -> bool {
    super::special::refused_range(ip).is_some()
}

/// A URL an endpoint may have, with the addresses its host resolves to now; refused when any
/// of them is internal (a name with one public and one private address is refused too).
pub async fn check_url(
    text: &str,
    allow_private: bool,
) -> Result<(url::Url, Vec<std::net::SocketAddr>), Refusal> {
    let url = url::Url::parse(text.trim()).map_err(|_| Refusal::BadUrl)?;
    if !matches!(url.scheme(), "https" | "http") {
        return Err(Refusal::BadUrl);
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Refusal::BadUrl);
    }
    let port = url.port_or_known_default().ok_or(Refusal::BadUrl)?;
    let addrs: Vec<std::net::SocketAddr> = match url.host().ok_or(Refusal::BadUrl)? {
        url::Host::Ipv4(ip) => vec![(IpAddr::V4(ip), port).into()],
        url::Host::Ipv6(ip) => vec![(IpAddr::V6(ip), port).into()],
        url::Host::Domain(name) => tokio::net::lookup_host((name, port))
            .await
            .map_err(|_| Refusal::Unresolved)?
            .collect(),
    };
    if addrs.is_empty() {
        return Err(Refusal::Unresolved);
    }
    // The address first: an internal one is named as such whatever the scheme.
    if !allow_private && addrs.iter().any(|a| is_internal(a.ip())) {
        return Err(Refusal::Private);
    }
    if url.scheme() == "http" && !allow_private {
        return Err(Refusal::NotHttps);
    }
    Ok((url, addrs))
}

/// An `--events` list as stored: known names, comma-separated, in the order given; empty (every
/// event) when none is given.
pub fn parse_events(list: Option<&str>) -> Result<String, Refusal> {
    let mut names = Vec::new();
    for name in list.unwrap_or("").split(',').map(str::trim) {
        if name.is_empty() {
            continue;
        }
        let topic = Topic::parse(name).ok_or_else(|| Refusal::UnknownEvent(name.to_owned()))?;
        if !names.contains(&topic.as_str()) {
            names.push(topic.as_str());
        }
    }
    Ok(names.join(","))
}

/// Whether an endpoint takes messages of `topic`.
pub fn wants(row: &EndpointRow, topic: Topic) -> bool {
    row.events.is_empty() || row.events.split(',').any(|e| e == topic.as_str())
}

/// An endpoint just made, and its secret: shown to the operator once, then only sealed.
#[derive(Debug)]
pub struct Created {
    pub id: i64,
    pub secret: Secret,
}

/// Makes an administrator's endpoint after checking its URL and events (the CLI, the admin
/// page).
pub async fn create(
    db: &Db,
    keys: &SiteKeys,
    url: &str,
    events: Option<&str>,
    allow_private: bool,
) -> Result<Created, Refusable<Refusal>> {
    create_for(db, keys, url, events, None, allow_private).await
}

/// Makes an endpoint after checking its URL and events: an administrator's (`token` `None`),
/// or an API token's (its id, and how many endpoints it may hold), sent only the messages about
/// the instances that token started.
pub async fn create_for(
    db: &Db,
    keys: &SiteKeys,
    url: &str,
    events: Option<&str>,
    token: Option<(i64, u64)>,
    allow_private: bool,
) -> Result<Created, Refusable<Refusal>> {
    let events = parse_events(events).map_err(Refusable::Refused)?;
    let (url, _) = check_url(url, allow_private)
        .await
        .map_err(Refusable::Refused)?;
    let secret = Secret::generate();
    let made = store::webhooks::create(
        db,
        url.as_str(),
        &events,
        token,
        |id| seal(keys, id, &secret),
        store::now(),
    )
    .await?;
    let id = match made {
        store::webhooks::Made::Id(id) => id,
        store::webhooks::Made::CapReached => {
            let cap = token.map_or(0, |(_, cap)| cap);
            return Err(Refusable::Refused(Refusal::TooMany(cap)));
        }
        store::webhooks::Made::Unsealed => {
            return Err(Error::Corrupt("a webhook secret could not be sealed").into());
        }
    };
    tracing::info!(endpoint = id, "webhook endpoint created");
    Ok(Created { id, secret })
}

/// Seals a secret for the endpoint `id`: AES-256-GCM (the `cookie` crate's private jar, as the
/// API's stored answers are) under a key derived from the site keys, the endpoint's id as the
/// associated data, so a sealed secret copied to another row does not open.
fn seal(keys: &SiteKeys, id: i64, secret: &Secret) -> Option<String> {
    let name = seal_name(id);
    let mut jar = CookieJar::new();
    jar.private_mut(&seal_key(keys))
        .add(Cookie::new(name.clone(), hex::encode(secret.bytes())));
    jar.get(&name).map(|c| c.value().to_owned())
}

/// An endpoint's secret, opened. `None` when it does not open: sealed under other keys (a
/// rotation by a version that did not seal secrets again; the endpoint must be made again).
pub fn open_secret(keys: &SiteKeys, row: &EndpointRow) -> Option<Secret> {
    let cookie = Cookie::new(seal_name(row.id), row.secret.clone());
    let opened = CookieJar::new().private(&seal_key(keys)).decrypt(cookie)?;
    Secret::from_bytes(hex::decode(opened.value()).ok()?)
}

/// An endpoint's secret sealed again under `new` (`store::keys::rotate`); `None` when it does
/// not open under `old`.
pub fn reseal(old: &SiteKeys, new: &SiteKeys, row: &EndpointRow) -> Option<String> {
    seal(new, row.id, &open_secret(old, row)?)
}

fn seal_key(keys: &SiteKeys) -> cookie::Key {
    cookie::Key::derive_from(&keys.keyed_hasher(SEAL_PURPOSE).finalize().into_bytes())
}

fn seal_name(id: i64) -> String {
    format!("webhook.{id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses_are_named() {
        for ip in [
            "127.0.0.1",
            "10.0.0.1",
            "172.16.3.4",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
        ] {
            assert!(is_internal(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"] {
            assert!(!is_internal(ip.parse().unwrap()), "{ip}");
        }
    }

    #[tokio::test]
    async fn only_https_to_public_addresses_passes_unless_allowed() {
        for (url, refusal) in [
            ("http://93.184.216.34/hook", Refusal::NotHttps),
            ("https://127.0.0.1/hook", Refusal::Private),
            ("https://10.0.0.1/hook", Refusal::Private),
            ("https://169.254.169.254/latest/meta-data", Refusal::Private),
            ("https://[::1]/hook", Refusal::Private),
            ("https://[64:ff9b::a9fe:a9fe]/hook", Refusal::Private),
            ("https://[2002:a00:1::1]/hook", Refusal::Private),
            ("ftp://example.com/", Refusal::BadUrl),
            ("https://user:pw@93.184.216.34/", Refusal::BadUrl),
            ("not a url", Refusal::BadUrl),
        ] {
            assert_eq!(check_url(url, false).await.err(), Some(refusal), "{url}");
        }
        assert!(check_url("https://93.184.216.34/hook", false).await.is_ok());
        assert!(check_url("http://127.0.0.1:9/hook", true).await.is_ok());
    }

    #[test]
    fn events_are_known_names_and_none_means_all() {
        assert_eq!(parse_events(None), Ok(String::new()));
        assert_eq!(
            parse_events(Some("step.answered, instance.ended,step.answered")),
            Ok("step.answered,instance.ended".into())
        );
        assert_eq!(
            parse_events(Some("instance.deleted")),
            Err(Refusal::UnknownEvent("instance.deleted".into()))
        );
    }

    #[test]
    fn a_sealed_secret_opens_only_for_its_endpoint_and_keys() {
        let keys = SiteKeys::generate();
        let secret = Secret::generate();
        let sealed = seal(&keys, 3, &secret).unwrap();
        assert!(!sealed.contains(&hex::encode(secret.bytes())));
        let row = |id| EndpointRow {
            id,
            url: String::new(),
            events: String::new(),
            secret: sealed.clone(),
            enabled: 1,
            failures: 0,
            failing_since: None,
            created_at: 0,
            api_token_id: None,
        };
        assert_eq!(open_secret(&keys, &row(3)), Some(secret));
        assert_eq!(open_secret(&keys, &row(4)), None);
        assert_eq!(open_secret(&SiteKeys::generate(), &row(3)), None);
    }
}
