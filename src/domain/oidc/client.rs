//! The HTTP client the OpenID Connect crate sends its requests through: hyper over TCP, with
//! rustls for https (the webhook sender's TLS settings: ring, Mozilla's roots), so the server
//! builds no second HTTP client. The provider is the operator's (`ORCHESTRA_OIDC_ISSUER`), not
//! a visitor's, so its address is not checked as a webhook's is; no redirect is followed;
//! 5 s to connect, 10 s in all, at most 1 MiB of an answer.

use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use openidconnect::{HttpRequest, HttpResponse};
use tokio_rustls::rustls;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const TOTAL_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// Why a request to the provider had no answer: a fixed phrase, never the URL (a token
/// request's body carries the code and the client secret).
#[derive(Debug, thiserror::Error)]
#[error("provider request failed: {0}")]
pub struct ClientError(&'static str);

/// One request, one connection.
pub async fn call(request: HttpRequest) -> Result<HttpResponse, ClientError> {
    tokio::time::timeout(TOTAL_TIMEOUT, send(request))
        .await
        .map_err(|_| ClientError("timeout"))?
}

async fn send(request: HttpRequest) -> Result<HttpResponse, ClientError> {
    let url = url::Url::parse(&request.uri().to_string()).map_err(|_| ClientError("bad url"))?;
    let host = url.host_str().ok_or(ClientError("bad url"))?.to_owned();
    let port = url.port_or_known_default().ok_or(ClientError("bad url"))?;
    let (parts, body) = request.into_parts();
    let mut outgoing = hyper::Request::builder()
        .method(parts.method)
        .uri(match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        })
        .header(
            hyper::header::HOST,
            match url.port() {
                Some(p) => format!("{host}:{p}"),
                None => host.clone(),
            },
        )
        .header(hyper::header::USER_AGENT, "Orchestra-OIDC");
    for (name, value) in &parts.headers {
        outgoing = outgoing.header(name, value);
    }
    let outgoing = outgoing
        .body(Full::new(Bytes::from(body)))
        .map_err(|_| ClientError("request"))?;
    let target = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let stream = tokio::time::timeout(
        CONNECT_TIMEOUT,
        tokio::net::TcpStream::connect((target.as_str(), port)),
    )
    .await
    .map_err(|_| ClientError("connect timeout"))?
    .map_err(|_| ClientError("connect"))?;
    if url.scheme() == "https" {
        let name = match url.host() {
            Some(url::Host::Domain(d)) => rustls::pki_types::ServerName::try_from(d.to_owned())
                .map_err(|_| ClientError("tls"))?,
            Some(url::Host::Ipv4(ip)) => std::net::IpAddr::V4(ip).into(),
            Some(url::Host::Ipv6(ip)) => std::net::IpAddr::V6(ip).into(),
            None => return Err(ClientError("bad url")),
        };
        let tls = tokio_rustls::TlsConnector::from(crate::domain::delivery::send::tls_config())
            .connect(name, stream)
            .await
            .map_err(|_| ClientError("tls"))?;
        exchange(tls, outgoing).await
    } else {
        exchange(stream, outgoing).await
    }
}

async fn exchange<S>(
    stream: S,
    request: hyper::Request<Full<Bytes>>,
) -> Result<HttpResponse, ClientError>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(|_| ClientError("handshake"))?;
    let driver = tokio::spawn(conn);
    let answer = async {
        let response = sender
            .send_request(request)
            .await
            .map_err(|_| ClientError("send"))?;
        let (parts, body) = response.into_parts();
        let body = Limited::new(body, MAX_ANSWER_BYTES)
            .collect()
            .await
            .map_err(|_| ClientError("answer too long or cut"))?
            .to_bytes();
        Ok(HttpResponse::from_parts(parts, body.to_vec()))
    }
    .await;
    driver.abort();
    answer
}
