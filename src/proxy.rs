//! Who the client is: the peer address, or, behind proxies the operator named
//! (`ORCHESTRA_TRUSTED_PROXIES`), the rightmost forwarded hop that is not one of them.
//!
//! Pure: no axum. CIDR parsing is hand-written (a dozen lines) rather than a dependency.
//! Forwarded headers are read only when a proxy is named: otherwise anyone could write any
//! address into them and spread their attempts over as many counts as they liked.

use std::net::{IpAddr, Ipv6Addr};

/// An address range: `192.0.2.0/24`, `2001:db8::/32`, or one address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    prefix: u8,
}

impl Cidr {
    pub fn parse(text: &str) -> Option<Self> {
        let (addr, prefix) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let addr = canonical(addr.trim().parse::<IpAddr>().ok()?);
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
                p.parse::<u8>().ok().filter(|p| *p <= max)?
            }
            Some(_) => return None,
        };
        Some(Self { addr, prefix })
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, canonical(ip)) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                masked(u32::from(net).into(), self.prefix, 32)
                    == masked(u32::from(ip).into(), self.prefix, 32)
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                masked(u128::from(net), self.prefix, 128)
                    == masked(u128::from(ip), self.prefix, 128)
            }
            _ => false,
        }
    }
}

fn masked(bits: u128, prefix: u8, width: u32) -> u128 {
    if prefix == 0 {
        0
    } else {
        bits >> (width - u32::from(prefix))
    }
}

/// An IPv4 address written as IPv6 (`::ffff:192.0.2.1`) is the IPv4 address.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The proxies the operator trusts to say who their client is. Empty: nothing forwarded is read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<Cidr>);

impl TrustedProxies {
    /// A list separated by commas or spaces; `None` names the first entry that does not parse.
    pub fn parse(text: &str) -> Result<Self, String> {
        text.split([',', ' ', '\t'])
            .filter(|s| !s.is_empty())
            .map(|s| Cidr::parse(s).ok_or_else(|| s.to_owned()))
            .collect::<Result<Vec<_>, _>>()
            .map(Self)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn trusts(&self, ip: IpAddr) -> bool {
        self.0.iter().any(|c| c.contains(ip))
    }

    /// The client's address. `forwarded` holds the hops a proxy reported, leftmost first (one
    /// entry per hop, as written: see [`forwarded_hops`]). Only when the peer itself is a
    /// trusted proxy are they read, right to left, past every trusted proxy; the first hop that
    /// is not one is the client. A hop that does not parse ends the walk at the last proxy.
    pub fn client(&self, peer: IpAddr, forwarded: &[&str]) -> IpAddr {
        let mut client = canonical(peer);
        if !self.trusts(client) {
            return client;
        }
        for hop in forwarded.iter().rev() {
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

/// The hops of the forwarding headers present, leftmost first: `Forwarded`'s `for=`, else
/// `X-Forwarded-For`, else `X-Real-IP`. Each argument is every line of that header, joined.
pub fn forwarded_hops<'a>(
    forwarded: &[&'a str],
    x_forwarded_for: &[&'a str],
    x_real_ip: &[&'a str],
) -> Vec<&'a str> {
    if !forwarded.is_empty() {
        return forwarded
            .iter()
            .flat_map(|line| line.split(','))
            .map(|element| {
                element
                    .split(';')
                    .find_map(|pair| {
                        let (k, v) = pair.trim().split_once('=')?;
                        k.trim().eq_ignore_ascii_case("for").then(|| v.trim())
                    })
                    .unwrap_or("")
            })
            .collect();
    }
    if !x_forwarded_for.is_empty() {
        return x_forwarded_for
            .iter()
            .flat_map(|line| line.split(','))
            .map(str::trim)
            .collect();
    }
    x_real_ip.iter().map(|v| v.trim()).collect()
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
    ip.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)
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

    #[test]
    fn ranges_parse_and_contain() {
        let c = Cidr::parse("10.0.0.0/8").unwrap();
        assert!(c.contains(ip("10.200.3.4")));
        assert!(!c.contains(ip("11.0.0.1")));
        assert!(
            c.contains(ip("::ffff:10.1.2.3")),
            "IPv4-mapped IPv6 is IPv4"
        );
        let c = Cidr::parse("2001:db8::/32").unwrap();
        assert!(c.contains(ip("2001:db8:1::5")));
        assert!(!c.contains(ip("2001:db9::5")));
        assert!(Cidr::parse("0.0.0.0/0").unwrap().contains(ip("8.8.8.8")));
        assert!(Cidr::parse("127.0.0.1").unwrap().contains(ip("127.0.0.1")));
        assert!(!Cidr::parse("127.0.0.1").unwrap().contains(ip("127.0.0.2")));
        for bad in [
            "10.0.0.0/33",
            "10.0.0.0/",
            "10.0.0/8",
            "x",
            "::/129",
            "10.0.0.0/+8",
        ] {
            assert!(Cidr::parse(bad).is_none(), "{bad} accepted");
        }
        assert_eq!(
            TrustedProxies::parse("127.0.0.1, 10.0.0.0/8 ::1")
                .unwrap()
                .0
                .len(),
            3
        );
        assert_eq!(TrustedProxies::parse("127.0.0.1,nope"), Err("nope".into()));
    }

    #[test]
    fn the_client_is_the_rightmost_hop_not_trusted() {
        let trusted = TrustedProxies::parse("127.0.0.1, 10.0.0.0/8").unwrap();
        let peer = ip("127.0.0.1");
        // The client wrote "1.1.1.1" itself; nginx appended the address it saw.
        assert_eq!(
            trusted.client(peer, &["1.1.1.1", "203.0.113.9"]),
            ip("203.0.113.9")
        );
        assert_eq!(
            trusted.client(peer, &["203.0.113.9", "10.1.1.1"]),
            ip("203.0.113.9")
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
    fn forwarded_headers_give_their_hops() {
        assert_eq!(
            forwarded_hops(
                &["for=192.0.2.60;proto=http, for=\"[2001:db8:cafe::17]:4711\""],
                &["9.9.9.9"],
                &[]
            ),
            vec!["192.0.2.60", "\"[2001:db8:cafe::17]:4711\""]
        );
        assert_eq!(
            parse_hop("\"[2001:db8:cafe::17]:4711\""),
            Some(ip("2001:db8:cafe::17"))
        );
        assert_eq!(parse_hop("192.0.2.1:80"), Some(ip("192.0.2.1")));
        assert_eq!(
            forwarded_hops(&[], &["1.1.1.1, 2.2.2.2", "3.3.3.3"], &["4.4.4.4"]),
            vec!["1.1.1.1", "2.2.2.2", "3.3.3.3"]
        );
        assert_eq!(forwarded_hops(&[], &[], &["4.4.4.4"]), vec!["4.4.4.4"]);
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
