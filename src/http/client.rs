//! The client's address as the login limits count it: the peer, or behind a trusted proxy the
//! address it forwarded (`proxy::TrustedProxies`).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::HeaderMap;
use axum::http::request::Parts;

use super::AppState;
use crate::proxy::forwarded_hops;

#[derive(Clone, Copy, Debug)]
pub struct ClientAddr(pub IpAddr);

fn lines<'a>(headers: &'a HeaderMap, name: &str) -> Vec<&'a str> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect()
}

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
        let headers = &parts.headers;
        let (forwarded, xff, real) = (
            lines(headers, "forwarded"),
            lines(headers, "x-forwarded-for"),
            lines(headers, "x-real-ip"),
        );
        let hops = forwarded_hops(&forwarded, &xff, &real);
        Ok(Self(state.proxies.client(peer, &hops)))
    }
}
