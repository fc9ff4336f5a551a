//! The client's address as the login limits count it: the peer, or behind a trusted proxy the
//! address it forwarded in the one header the operator chose (`proxy::TrustedProxies`).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;

use super::AppState;

#[derive(Clone, Copy, Debug)]
pub struct ClientAddr(pub IpAddr);

impl FromRequestParts<AppState> for ClientAddr {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        // Served without connection info (a test router, say), every client is one.
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |c| c.0.ip());
        if state.proxies.is_empty() {
            return Ok(Self(peer));
        }
        // Every line of that header and of no other: a proxy passes the others on as the
        // client wrote them.
        let lines: Vec<&str> = parts
            .headers
            .get_all(state.proxies.header().name())
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        Ok(Self(state.proxies.client(peer, &lines)))
    }
}
