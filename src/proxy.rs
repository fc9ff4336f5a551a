//! Who the client is: the peer address, or, behind proxies the operator named
//! (`ORCHESTRA_TRUSTED_PROXIES`), the rightmost hop not one of them in the one header the
//! operator chose (`ORCHESTRA_CLIENT_IP_HEADER`).
//!
//! Pure: no axum. Forwarded headers are read only when a proxy is named: otherwise anyone could
//! write any address into them and spread their attempts over as many counts as they liked. And
//! only one header is ever read, the one the proxy sets: a proxy passes on whatever other
//! forwarding header the client wrote (nginx forwards a client's `Forwarded` untouched), so
//! preferring one header over another let any client choose its address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::{IpNet, Ipv4Net};

/// The header a trusted proxy writes the client's address in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClientIpHeader {
    /// `X-Forwarded-For`: what nginx (`$remote_addr` or `$proxy_add_x_forwarded_for`), HAProxy's
    /// `option forwardfor`, Caddy and most load balancers set, so the default.
    #[default]
    XForwardedFor,
    /// `X-Real-IP`: one address, as nginx's `proxy_set_header X-Real-IP $remote_addr` sets it.
    XRealIp,
    /// RFC 7239 `Forwarded`: its `for=` parameters.
    Forwarded,
}

impl ClientIpHeader {
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "x-forwarded-for" => Some(Self::XForwardedFor),
            "x-real-ip" => Some(Self::XRealIp),
            "forwarded" => Some(Self::Forwarded),
            _ => None,
        }
    }

    /// The header's name, lower case, as `HeaderMap` looks it up.
    pub fn name(self) -> &'static str {
        match self {
            Self::XForwardedFor => "x-forwarded-for",
            Self::XRealIp => "x-real-ip",
            Self::Forwarded => "forwarded",
        }
    }

    /// The header's name as documents spell it.
    pub fn display(self) -> &'static str {
        match self {
            Self::XForwardedFor => "X-Forwarded-For",
            Self::XRealIp => "X-Real-IP",
            Self::Forwarded => "Forwarded",
        }
    }

    /// The hops in the header's lines, leftmost first, one entry per hop as written.
    pub fn hops<'a>(self, lines: &[&'a str]) -> Vec<&'a str> {
        let elements = lines.iter().flat_map(|line| line.split(','));
        match self {
            Self::XForwardedFor | Self::XRealIp => elements.map(str::trim).collect(),
            // An element without `for=` is a hop that does not parse: it ends the walk.
            Self::Forwarded => elements
                .map(|element| {
                    element
                        .split(';')
                        .find_map(|pair| {
                            let (k, v) = pair.trim().split_once('=')?;
                            k.trim().eq_ignore_ascii_case("for").then(|| v.trim())
                        })
                        .unwrap_or("")
                })
                .collect(),
        }
    }
}

/// An IPv4 address written as IPv6 (`::ffff:192.0.2.1`) is the IPv4 address.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// One entry of the list: `192.0.2.0/24`, `2001:db8::/32`, or one address. Parsing is the
/// `ipnet` crate's; an IPv4-mapped range is taken as the IPv4 range it maps, since peers are
/// compared in their IPv4 form.
fn parse_range(text: &str) -> Option<IpNet> {
    let net = match text.parse::<IpNet>() {
        Ok(net) => net,
        Err(_) => IpNet::from(text.parse::<IpAddr>().ok()?),
    };
    match net {
        IpNet::V6(v6) => match v6.addr().to_ipv4_mapped() {
            Some(v4) if v6.prefix_len() >= 96 => {
                Ipv4Net::new(v4, v6.prefix_len() - 96).ok().map(IpNet::V4)
            }
            _ => Some(net),
        },
        v4 => Some(v4),
    }
}

/// The proxies the operator trusts to say who their client is, and the header they say it in.
/// No proxy: nothing forwarded is read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    ranges: Vec<IpNet>,
    header: ClientIpHeader,
}

impl TrustedProxies {
    /// A list separated by commas or spaces; `Err` names the first entry that does not parse.
    pub fn parse(text: &str) -> Result<Self, String> {
        text.split([',', ' ', '\t'])
            .filter(|s| !s.is_empty())
            .map(|s| parse_range(s).ok_or_else(|| s.to_owned()))
            .collect::<Result<Vec<_>, _>>()
            .map(|ranges| Self {
                ranges,
                header: ClientIpHeader::default(),
            })
    }

    /// The same proxies, read through `header`.
    pub fn with_header(self, header: ClientIpHeader) -> Self {
        Self { header, ..self }
    }

    pub fn header(&self) -> ClientIpHeader {
        self.header
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    pub fn trusts(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.ranges.iter().any(|r| r.contains(&ip))
    }

    /// The client's address. `lines` holds every line of the chosen header (only that one:
    /// see [`ClientIpHeader`]). Only when the peer itself is a trusted proxy are its hops read,
    /// right to left, past every trusted proxy; the first hop that is not one is the client. A
    /// hop that does not parse ends the walk at the last proxy.
    pub fn client(&self, peer: IpAddr, lines: &[&str]) -> IpAddr {
        let mut client = canonical(peer);
        if !self.trusts(client) {
            return client;
        }
        for hop in self.header.hops(lines).iter().rev() {
            let Some(ip) = parse_hop(hop) else {
                return client;
            };
            client = ip;
            if !self.trusts(ip) {
                return ip;
            }
        }
        client
    }
}

/// One hop: `192.0.2.1`, `192.0.2.1:4711`, `2001:db8::1`, `[2001:db8::1]:4711`, quoted or not.
fn parse_hop(hop: &str) -> Option<IpAddr> {
    let hop = hop.trim().trim_matches('"');
    if let Ok(ip) = hop.parse::<IpAddr>() {
        return Some(canonical(ip));
    }
    if let Some(rest) = hop.strip_prefix('[') {
        let (ip, _) = rest.split_once(']')?;
        return ip
            .parse::<Ipv6Addr>()
            .ok()
            .map(|ip| canonical(IpAddr::V6(ip)));
    }
    let (ip, port) = hop.rsplit_once(':')?;
    port.parse::<u16>().ok()?;
    ip.parse::<Ipv4Addr>().ok().map(IpAddr::V4)
}

/// The address as counted: IPv4 as it is, IPv6 by its /64, which one subscriber usually holds
/// whole (counting single IPv6 addresses would give each attacker 2^64 counts).
pub fn counted_group(ip: IpAddr) -> String {
    match canonical(ip) {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) >> 64 << 64;
            format!("{}/64", Ipv6Addr::from(bits))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn trusting(list: &str, header: ClientIpHeader) -> TrustedProxies {
        TrustedProxies::parse(list).unwrap().with_header(header)
    }

    #[test]
    fn ranges_parse_and_contain() {
        let t = TrustedProxies::parse("10.0.0.0/8").unwrap();
        assert!(t.trusts(ip("10.200.3.4")));
        assert!(!t.trusts(ip("11.0.0.1")));
        assert!(t.trusts(ip("::ffff:10.1.2.3")), "IPv4-mapped IPv6 is IPv4");
        let t = TrustedProxies::parse("2001:db8::/32").unwrap();
        assert!(t.trusts(ip("2001:db8:1::5")));
        assert!(!t.trusts(ip("2001:db9::5")));
        assert!(
            TrustedProxies::parse("0.0.0.0/0")
                .unwrap()
                .trusts(ip("8.8.8.8"))
        );
        let one = TrustedProxies::parse("127.0.0.1").unwrap();
        assert!(one.trusts(ip("127.0.0.1")));
        assert!(!one.trusts(ip("127.0.0.2")));
        let mapped = TrustedProxies::parse("::ffff:127.0.0.1, ::ffff:10.0.0.0/104").unwrap();
        assert!(mapped.trusts(ip("127.0.0.1")) && mapped.trusts(ip("10.9.9.9")));
        for bad in [
            "10.0.0.0/33",
            "10.0.0.0/",
            "10.0.0/8",
            "x",
            "::/129",
            "10.0.0.0/+8",
        ] {
            assert!(TrustedProxies::parse(bad).is_err(), "{bad} accepted");
        }
        assert_eq!(
            TrustedProxies::parse("127.0.0.1, 10.0.0.0/8 ::1")
                .unwrap()
                .len(),
            3
        );
        assert_eq!(TrustedProxies::parse("127.0.0.1,nope"), Err("nope".into()));
    }

    #[test]
    fn the_client_is_the_rightmost_hop_not_trusted() {
        let trusted = trusting("127.0.0.1, 10.0.0.0/8", ClientIpHeader::XForwardedFor);
        let peer = ip("127.0.0.1");
        // The client wrote "1.1.1.1" itself; nginx appended the address it saw.
        assert_eq!(
            trusted.client(peer, &["1.1.1.1, 203.0.113.9"]),
            ip("203.0.113.9")
        );
        assert_eq!(
            trusted.client(peer, &["203.0.113.9", "10.1.1.1"]),
            ip("203.0.113.9"),
            "lines are one list, in order"
        );
        assert_eq!(trusted.client(peer, &[]), peer);
        assert_eq!(trusted.client(peer, &["garbage"]), peer);
        // An untrusted peer's headers are never read.
        assert_eq!(
            trusted.client(ip("198.51.100.7"), &["203.0.113.9"]),
            ip("198.51.100.7")
        );
        assert_eq!(
            TrustedProxies::default().client(peer, &["203.0.113.9"]),
            peer
        );
    }

    #[test]
    fn each_header_gives_its_own_hops() {
        let forwarded = ClientIpHeader::Forwarded;
        assert_eq!(
            forwarded.hops(&["for=192.0.2.60;proto=http, for=\"[2001:db8:cafe::17]:4711\""]),
            vec!["192.0.2.60", "\"[2001:db8:cafe::17]:4711\""]
        );
        assert_eq!(forwarded.hops(&["proto=https"]), vec![""]);
        assert_eq!(
            ClientIpHeader::XForwardedFor.hops(&["1.1.1.1, 2.2.2.2", "3.3.3.3"]),
            vec!["1.1.1.1", "2.2.2.2", "3.3.3.3"]
        );
        assert_eq!(ClientIpHeader::XRealIp.hops(&["4.4.4.4"]), vec!["4.4.4.4"]);
        assert_eq!(
            parse_hop("\"[2001:db8:cafe::17]:4711\""),
            Some(ip("2001:db8:cafe::17"))
        );
        assert_eq!(parse_hop("192.0.2.1:80"), Some(ip("192.0.2.1")));
        let real = trusting("127.0.0.1", ClientIpHeader::Forwarded);
        assert_eq!(
            real.client(ip("127.0.0.1"), &["for=203.0.113.4, for=192.0.2.8"]),
            ip("192.0.2.8")
        );
    }

    #[test]
    fn header_names_parse_in_any_case_and_nothing_else_does() {
        assert_eq!(
            ClientIpHeader::parse(" X-Real-IP"),
            Some(ClientIpHeader::XRealIp)
        );
        assert_eq!(
            ClientIpHeader::parse("forwarded"),
            Some(ClientIpHeader::Forwarded)
        );
        assert_eq!(ClientIpHeader::parse("x-client-ip"), None);
        assert_eq!(ClientIpHeader::default(), ClientIpHeader::XForwardedFor);
    }

    #[test]
    fn ipv6_addresses_count_by_their_64() {
        assert_eq!(
            counted_group(ip("2001:db8:1:2:aaaa::1")),
            counted_group(ip("2001:db8:1:2:ffff::9"))
        );
        assert_ne!(
            counted_group(ip("2001:db8:1:2::1")),
            counted_group(ip("2001:db8:1:3::1"))
        );
        assert_eq!(counted_group(ip("192.0.2.1")), "192.0.2.1");
    }
}
