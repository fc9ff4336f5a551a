//! The webhook sender: claims due deliveries and POSTs each, signed, to its endpoint. Runs in
//! `serve`'s background task and in `orchestra cron`, never in a request. The endpoint's URL is
//! checked again before each attempt, and the connection goes to the address that check
//! resolved (no second lookup a DNS answer could change); no redirect is followed; 5 s to
//! connect, 10 s in all; at most 64 KiB of an answer is read.
//!
//! TLS is rustls (ring, Mozilla's roots compiled in) over the connection to the checked
//! address, with the URL's host as the name the certificate must carry.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use tokio_rustls::rustls;

use super::endpoints::{self, check_url, open_secret};
use super::{message_id, payload};
use crate::domain::keys::SiteKeys;
use crate::error::Error;
use crate::store::webhooks::{Attempt, Claimed};
use crate::store::{self, Db};

pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
pub const TOTAL_TIMEOUT: Duration = Duration::from_secs(10);
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;
/// How long a claim holds a delivery: past the longest attempt, with room.
pub const LEASE: i64 = 60;
/// Deliveries claimed per run.
pub const BATCH: i64 = 20;
/// Consecutive failed attempts after which an endpoint is disabled.
pub const DISABLE_AFTER: i64 = 15;
/// Waits before each retry (seconds): about three days in all, as Standard Webhooks suggests.
pub const BACKOFF: [i64; 10] = [
    5, 300, 1800, 7200, 18_000, 36_000, 36_000, 43_200, 43_200, 86_400,
];

/// When to try again after the `attempts`-th failed attempt (1 for the first), with up to 10%
/// of jitter so retries of many messages do not arrive together; `None` once the schedule is
/// spent.
pub fn retry_at(now: i64, attempts: i64, jitter: u8) -> Option<i64> {
    let wait = *BACKOFF.get(usize::try_from(attempts - 1).ok()?)?;
    Some(now + wait + wait * i64::from(jitter) / 2550)
}

/// A sender's figures, for the metrics: deliveries made, to be tried again, failed for good,
/// and how many were due and waiting after its last run.
#[derive(Debug, Default)]
pub struct Figures {
    delivered: AtomicU64,
    retried: AtomicU64,
    failed: AtomicU64,
    waiting: AtomicU64,
}

impl Figures {
    /// (delivered, retried, failed, waiting).
    pub fn read(&self) -> (u64, u64, u64, u64) {
        (
            self.delivered.load(Ordering::Relaxed),
            self.retried.load(Ordering::Relaxed),
            self.failed.load(Ordering::Relaxed),
            self.waiting.load(Ordering::Relaxed),
        )
    }
}

/// Sends what is due at `now`, counting what came of it in `figures`; returns how many
/// attempts were made.
pub async fn run_once(
    db: &Db,
    keys: &SiteKeys,
    now: i64,
    allow_private: bool,
    figures: &Figures,
) -> Result<usize, Error> {
    let claimed = store::webhooks::claim(db, now, LEASE, BATCH).await?;
    let mut tried = 0;
    for d in claimed {
        let counter = match attempt(db, keys, &d, now, allow_private).await? {
            Tried::No => continue,
            Tried::Delivered => &figures.delivered,
            Tried::Retry => &figures.retried,
            Tried::Failed => &figures.failed,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        tried += 1;
    }
    let waiting = store::webhooks::due_count(db, now).await?;
    figures
        .waiting
        .store(u64::try_from(waiting).unwrap_or(0), Ordering::Relaxed);
    Ok(tried)
}

/// What one claimed delivery came to.
enum Tried {
    /// No attempt (its endpoint is gone or disabled).
    No,
    Delivered,
    Retry,
    Failed,
}

async fn attempt(
    db: &Db,
    keys: &SiteKeys,
    d: &Claimed,
    now: i64,
    allow_private: bool,
) -> Result<Tried, Error> {
    let Some(endpoint) = store::webhooks::by_id(db, d.endpoint_id).await? else {
        return Ok(Tried::No);
    };
    if endpoint.enabled == 0 {
        store::webhooks::skip(db, d.id).await?;
        return Ok(Tried::No);
    }
    let message = store::outbox::by_id(db, d.outbox_id)
        .await?
        .ok_or(Error::Corrupt("a delivery names no message"))?;
    let secret = open_secret(keys, &endpoint);
    let started = Instant::now();
    let outcome = match secret {
        None => Err("secret unreadable (site keys rotated)"),
        Some(secret) => match check_url(&endpoint.url, allow_private).await {
            Err(endpoints::Refusal::Private) => Err("refused address"),
            Err(endpoints::Refusal::NotHttps) => Err("not https"),
            Err(_) => Err("bad url"),
            Ok((url, addrs)) => {
                let body = payload(&message).to_string();
                let id = message_id(&message);
                let ts = store::now();
                let signature = secret.sign(&id, ts, body.as_bytes());
                post(&url, addrs[0], &id, ts, &signature, body).await
            }
        },
    };
    let latency_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
    let (status, error) = match outcome {
        Ok(code) => (Some(i64::from(code)), None),
        Err(e) => (None, Some(e)),
    };
    let ok = status.is_some_and(|s| (200..300).contains(&s));
    let jitter = crate::domain::keys::random_bytes()[0];
    let a = Attempt {
        status,
        latency_ms,
        error,
        ok,
        retry_at: if ok {
            None
        } else {
            retry_at(now, d.attempts + 1, jitter)
        },
    };
    store::webhooks::finish(db, d, &a, DISABLE_AFTER, now).await?;
    if !ok {
        tracing::info!(
            endpoint = endpoint.id,
            delivery = d.id,
            status = ?status,
            error = ?error,
            "a webhook delivery failed"
        );
    }
    Ok(match (ok, a.retry_at) {
        (true, _) => Tried::Delivered,
        (false, Some(_)) => Tried::Retry,
        (false, None) => Tried::Failed,
    })
}

/// One POST to the checked address (over TLS for https); the status code, or why there was
/// none.
async fn post(
    url: &url::Url,
    addr: std::net::SocketAddr,
    id: &str,
    ts: i64,
    signature: &str,
    body: String,
) -> Result<u16, &'static str> {
    let request = request(url, id, ts, signature, body)?;
    let stream = tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(addr))
        .await
        .map_err(|_| "connect timeout")?
        .map_err(|_| "connect")?;
    let exchange = async {
        if url.scheme() == "https" {
            let name = match url.host() {
                Some(url::Host::Domain(d)) => {
                    rustls::pki_types::ServerName::try_from(d.to_owned()).map_err(|_| "tls")?
                }
                Some(url::Host::Ipv4(ip)) => std::net::IpAddr::V4(ip).into(),
                Some(url::Host::Ipv6(ip)) => std::net::IpAddr::V6(ip).into(),
                None => return Err("bad url"),
            };
            let tls = tokio_rustls::TlsConnector::from(tls_config())
                .connect(name, stream)
                .await
                .map_err(|_| "tls")?;
            exchange(tls, request).await
        } else {
            exchange(stream, request).await
        }
    };
    tokio::time::timeout(TOTAL_TIMEOUT, exchange)
        .await
        .map_err(|_| "timeout")?
}

fn request(
    url: &url::Url,
    id: &str,
    ts: i64,
    signature: &str,
    body: String,
) -> Result<hyper::Request<Full<Bytes>>, &'static str> {
    let host = match url.port() {
        Some(p) => format!("{}:{p}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_owned(),
    };
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    };
    hyper::Request::post(path)
        .header(hyper::header::HOST, host)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .header(hyper::header::USER_AGENT, "Orchestra-Webhooks")
        .header("webhook-id", id)
        .header("webhook-timestamp", ts.to_string())
        .header("webhook-signature", signature)
        .body(Full::new(Bytes::from(body)))
        .map_err(|_| "request")
}

/// Sends one request on a connection and reads (and drops) at most 64 KiB of the answer.
async fn exchange<S>(stream: S, request: hyper::Request<Full<Bytes>>) -> Result<u16, &'static str>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(|_| "handshake")?;
    let driver = tokio::spawn(conn);
    let response = sender.send_request(request).await.map_err(|_| "send");
    let status = match response {
        Ok(response) => {
            let status = response.status().as_u16();
            let _ = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
                .collect()
                .await;
            Ok(status)
        }
        Err(e) => Err(e),
    };
    driver.abort();
    status
}

/// The TLS client's settings, made once: ring, TLS 1.2 and 1.3, Mozilla's roots.
fn tls_config() -> Arc<rustls::ClientConfig> {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let roots = rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            let config = rustls::ClientConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .expect("ring offers the default TLS versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
            Arc::new(config)
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_over_about_three_days_then_stop() {
        assert_eq!(retry_at(1000, 1, 0), Some(1005));
        assert_eq!(retry_at(1000, 2, 255), Some(1000 + 300 + 30));
        let total: i64 = BACKOFF.iter().sum();
        assert!((2 * 86_400..4 * 86_400).contains(&total), "{total}");
        assert_eq!(retry_at(1000, BACKOFF.len() as i64 + 1, 0), None);
    }
}
