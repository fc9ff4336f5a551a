//! The webhook sender: claims due deliveries and POSTs each, signed, to its endpoint. Runs in
//! `serve`'s background task and in `orchestra cron`, never in a request. The endpoint's URL is
//! checked again before each attempt, and the connection goes to the address that check
//! resolved (no second lookup a DNS answer could change); no redirect is followed; 5 s to
//! connect, 10 s in all; at most 64 KiB of an answer is read.
//!
//! TLS is rustls (ring, Mozilla's roots compiled in) over the connection to the checked
//! address, with the URL's host as the name the certificate must carry.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use tokio_rustls::rustls;

use std::collections::HashMap;

use tokio::task::JoinSet;

use super::endpoints::{self, check_url, open_secret};
use super::{message_id, payload};
use crate::domain::keys::SiteKeys;
use crate::domain::outbox::{Lease, Stop};
use crate::error::Error;
use crate::store::outbox::MessageRow;
use crate::store::queue::Table;
use crate::store::webhooks::{Attempt, Claimed, EndpointRow, Finished};
use crate::store::{self, Db};

pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
pub const TOTAL_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest one attempt may take, the name's lookup included.
pub const LONGEST_ATTEMPT: Duration = Duration::from_secs(20);
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;
/// How long a claim holds a batch: room for `PER_ENDPOINT` of the longest attempts, and their
/// records (`outbox::Lease` starts no attempt that would end past it).
pub const LEASE: i64 = 120;
/// Deliveries of one endpoint claimed at a time, sent one after the other.
pub const PER_ENDPOINT: i64 = 5;
/// Batches of one endpoint `Sender::run_once` sends at most (the server's sender drains an
/// endpoint's backlog whole, a batch after another).
pub const ONCE_BATCHES: usize = 4;
/// Endpoints sent to side by side, each by a task of its own: a slow endpoint holds its own
/// task, never another endpoint's messages.
pub const SIDE_BY_SIDE: usize = 8;
/// Waits before each retry (seconds): about three days in all, as Standard Webhooks suggests.
pub const BACKOFF: [i64; 10] = [
    5, 300, 1800, 7200, 18_000, 36_000, 36_000, 43_200, 43_200, 86_400,
];

/// How long an endpoint fails, nothing taken, before a message that spent its schedule
/// disables it: the schedule's length, so only an endpoint that failed every try of a message
/// over days is disabled, never one that was down for a minute.
pub const DISABLE_AFTER: i64 = {
    let mut total = 0;
    let mut i = 0;
    while i < BACKOFF.len() {
        total += BACKOFF[i];
        i += 1;
    }
    total
};

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

    fn count(&self, finished: Finished) {
        let counter = match finished {
            Finished::Delivered => &self.delivered,
            Finished::Retry => &self.retried,
            Finished::Failed | Finished::Disabled => &self.failed,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// What a sender needs, owned, so that each endpoint's task holds its own.
#[derive(Clone)]
pub struct Sender {
    pub db: Db,
    pub keys: SiteKeys,
    pub allow_private: bool,
    pub figures: Arc<Figures>,
}

impl Sender {
    /// Sends what is due at `now` to every endpoint, side by side (`SIDE_BY_SIDE` at once), and
    /// waits for all of it: `orchestra cron`'s run and the tests'. Returns how many attempts
    /// were made.
    pub async fn run_once(&self, now: i64) -> Result<usize, Error> {
        let mut tasks = JoinSet::new();
        let mut tried = 0;
        for endpoint in store::webhooks::due_endpoints(&self.db, now).await? {
            if tasks.len() >= SIDE_BY_SIDE
                && let Some(done) = tasks.join_next().await
            {
                tried += joined(done)?;
            }
            let sender = self.clone();
            tasks.spawn(async move {
                sender
                    .drain(endpoint, Some(now), ONCE_BATCHES, &Stop::never())
                    .await
            });
        }
        while let Some(done) = tasks.join_next().await {
            tried += joined(done)?;
        }
        self.count_waiting(now).await?;
        Ok(tried)
    }

    /// The server's sender: every `interval`, a task for each endpoint with something due that
    /// has none yet (`SIDE_BY_SIDE` at most), not waiting for the slow ones. At `stop`, claims
    /// nothing more and lets each task finish the attempt it is making.
    pub async fn run(
        mut self,
        interval: Duration,
        site: Arc<crate::domain::site::Site>,
        allow_private: Arc<AtomicBool>,
        mut stop: Stop,
    ) {
        let mut tasks: JoinSet<Result<usize, Error>> = JoinSet::new();
        let mut busy: HashMap<tokio::task::Id, i64> = HashMap::new();
        let mut tick = tokio::time::interval(interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                biased;
                () = stop.wait() => break,
                Some(done) = tasks.join_next_with_id() => {
                    let (id, done) = match done {
                        Ok((id, r)) => (id, Ok(r)),
                        Err(e) => (e.id(), Err(e)),
                    };
                    busy.remove(&id);
                    if let Err(e) = joined(done) {
                        tracing::error!(error = %e, "webhook delivery failed");
                    }
                    continue;
                }
                _ = tick.tick() => {}
            }
            if self.db.vanished() {
                continue;
            }
            // The keys of the moment (a rotation re-seals every secret under the new ones).
            self.keys = site.get().await.keys.clone();
            self.allow_private = allow_private.load(Ordering::Relaxed);
            let now = store::now();
            if let Err(e) = self.start_tasks(&mut tasks, &mut busy, now, &stop).await {
                tracing::error!(error = %e, "webhook delivery failed");
            }
        }
        while tasks.join_next().await.is_some() {}
    }

    async fn start_tasks(
        &self,
        tasks: &mut JoinSet<Result<usize, Error>>,
        busy: &mut HashMap<tokio::task::Id, i64>,
        now: i64,
        stop: &Stop,
    ) -> Result<(), Error> {
        for endpoint in store::webhooks::due_endpoints(&self.db, now).await? {
            if tasks.len() >= SIDE_BY_SIDE {
                break;
            }
            if busy.values().any(|e| *e == endpoint) {
                continue;
            }
            let (sender, stop) = (self.clone(), stop.clone());
            let handle =
                tasks.spawn(async move { sender.drain(endpoint, None, usize::MAX, &stop).await });
            busy.insert(handle.id(), endpoint);
        }
        self.count_waiting(now).await
    }

    async fn count_waiting(&self, now: i64) -> Result<(), Error> {
        let waiting = store::webhooks::due_count(&self.db, now).await?;
        self.figures
            .waiting
            .store(u64::try_from(waiting).unwrap_or(0), Ordering::Relaxed);
        Ok(())
    }

    /// An endpoint's due deliveries, a claimed batch after another until none is left (at
    /// most `batches`), each batch sent one delivery after the other. `at`: the moment to send
    /// as of (a test's, cron's); `None` for the clock's, read anew for each batch.
    async fn drain(
        &self,
        endpoint: i64,
        at: Option<i64>,
        batches: usize,
        stop: &Stop,
    ) -> Result<usize, Error> {
        let mut tried = 0;
        for _ in 0..batches {
            let now = at.unwrap_or_else(store::now);
            let batch =
                store::webhooks::claim(&self.db, endpoint, now, LEASE, PER_ENDPOINT).await?;
            // Until nothing is left to claim: a batch another sender shared is not the end.
            if batch.is_empty() {
                break;
            }
            tried += self.send_batch(batch, now, stop).await?;
            if stop.is_set() {
                break;
            }
        }
        Ok(tried)
    }

    /// One endpoint's claimed deliveries, one after the other, while the claim leaves room
    /// and no stop is asked for; what is left is handed back untried (or held, once the
    /// endpoint is disabled). Returns how many attempts were made.
    async fn send_batch(&self, batch: Vec<Claimed>, now: i64, stop: &Stop) -> Result<usize, Error> {
        let lease = Lease::new(LEASE);
        let mut tried = 0;
        let mut rest = batch.iter();
        while let Some(d) = rest.next() {
            if stop.is_set() || !lease.room_for(LONGEST_ATTEMPT) {
                let ids: Vec<i64> = std::iter::once(d.id).chain(rest.map(|d| d.id)).collect();
                store::queue::release(&self.db, Table::WebhookDeliveries, ids).await?;
                break;
            }
            // The attempt's own clock: a batch's later attempts are made (and backed off from)
            // when they are, not when the batch was claimed.
            let at = now.max(store::now());
            let Some(finished) = self.attempt(d, at).await? else {
                continue;
            };
            self.figures.count(finished);
            tried += 1;
            if finished == Finished::Disabled {
                for d in rest {
                    store::webhooks::hold(&self.db, d.id).await?;
                }
                break;
            }
        }
        Ok(tried)
    }

    /// One attempt of a claimed delivery, recorded; `None` when none was made (its endpoint is
    /// gone, or was disabled meanwhile: the delivery waits for it).
    async fn attempt(&self, d: &Claimed, now: i64) -> Result<Option<Finished>, Error> {
        let db = &self.db;
        let Some(endpoint) = store::webhooks::by_id(db, d.endpoint_id).await? else {
            return Ok(None);
        };
        if endpoint.enabled == 0 {
            store::webhooks::hold(db, d.id).await?;
            return Ok(None);
        }
        let message = store::outbox::by_id(db, d.outbox_id)
            .await?
            .ok_or(Error::Corrupt("a delivery names no message"))?;
        let started = Instant::now();
        let outcome =
            match tokio::time::timeout(LONGEST_ATTEMPT, self.post_message(&endpoint, &message))
                .await
            {
                Ok(outcome) => outcome,
                Err(_) => Err("timeout"),
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
        let finished = store::webhooks::finish(db, d, &a, DISABLE_AFTER, now).await?;
        if !ok {
            tracing::info!(
                endpoint = endpoint.id,
                delivery = d.id,
                status = ?status,
                error = ?error,
                outcome = ?finished,
                "a webhook delivery failed"
            );
        }
        Ok(Some(finished))
    }

    async fn post_message(
        &self,
        endpoint: &EndpointRow,
        message: &MessageRow,
    ) -> Result<u16, &'static str> {
        let secret =
            open_secret(&self.keys, endpoint).ok_or("secret unreadable (site keys rotated)")?;
        let (url, addrs) = match check_url(&endpoint.url, self.allow_private).await {
            Err(endpoints::Refusal::Private) => return Err("refused address"),
            Err(endpoints::Refusal::NotHttps) => return Err("not https"),
            Err(_) => return Err("bad url"),
            Ok(checked) => checked,
        };
        let body = payload(message).to_string();
        let id = message_id(message);
        let ts = store::now();
        let signature = secret.sign(&id, ts, body.as_bytes());
        post(&url, addrs[0], &id, ts, &signature, body).await
    }
}

/// A finished task's attempts, or its failure.
fn joined(done: Result<Result<usize, Error>, tokio::task::JoinError>) -> Result<usize, Error> {
    done.map_err(|_| Error::Corrupt("a webhook task failed"))?
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
pub(crate) fn tls_config() -> Arc<rustls::ClientConfig> {
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
