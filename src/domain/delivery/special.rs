//! The addresses no webhook may reach: every range of the IANA IPv4 and IPv6 Special-Purpose
//! Address Registries that is not globally reachable (RFC 6890), by the registry's own names,
//! and the few ranges outside them that are no place for a delivery (multicast, IPv6
//! site-local). Addresses that carry an IPv4 address (IPv4-mapped, NAT64's well-known prefix,
//! 6to4) are judged by the IPv4 address they carry; Teredo and IPv4-compatible addresses are
//! refused outright (Teredo's is obfuscated and reaches a relay; IPv4-compatible is deprecated).
//!
//! A table in code rather than a crate: the crates that answer "is this global" carry an older
//! registry (without `3fff::/20`, `5f00::/16`, `2001:30::/28`), and this one names each entry
//! as IANA does, so a refusal can be traced to its row. The registries:
//! <https://www.iana.org/assignments/iana-ipv4-special-registry/>,
//! <https://www.iana.org/assignments/iana-ipv6-special-registry/>.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

use ipnet::IpNet;

/// What an entry means for a delivery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reach {
    /// Not globally reachable: refused.
    Internal,
    /// Globally reachable (a more specific entry inside an internal one): allowed.
    Global,
    /// Carries an IPv4 address in its last 32 bits, judged as that address.
    LastFour,
    /// 6to4: carries an IPv4 address in bits 16 to 47, judged as that address.
    SixToFour,
}

use Reach::{Global, Internal, LastFour, SixToFour};

/// `(prefix, the registry's name, reach)`; the most specific entry that holds an address wins.
const RANGES: &[(&str, &str, Reach)] = &[
    // IANA IPv4 Special-Purpose Address Registry.
    ("0.0.0.0/8", "\"This network\"", Internal),
    ("0.0.0.0/32", "\"This host on this network\"", Internal),
    ("10.0.0.0/8", "Private-Use", Internal),
    ("100.64.0.0/10", "Shared Address Space", Internal),
    ("127.0.0.0/8", "Loopback", Internal),
    ("169.254.0.0/16", "Link Local", Internal),
    ("172.16.0.0/12", "Private-Use", Internal),
    ("192.0.0.0/24", "IETF Protocol Assignments", Internal),
    ("192.0.0.0/29", "IPv4 Service Continuity Prefix", Internal),
    ("192.0.0.8/32", "IPv4 dummy address", Internal),
    ("192.0.0.9/32", "Port Control Protocol Anycast", Global),
    (
        "192.0.0.10/32",
        "Traversal Using Relays around NAT Anycast",
        Global,
    ),
    ("192.0.0.170/32", "NAT64/DNS64 Discovery", Internal),
    ("192.0.0.171/32", "NAT64/DNS64 Discovery", Internal),
    ("192.0.2.0/24", "Documentation (TEST-NET-1)", Internal),
    ("192.31.196.0/24", "AS112-v4", Global),
    ("192.52.193.0/24", "AMT", Global),
    (
        "192.88.99.0/24",
        "Deprecated (6to4 Relay Anycast)",
        Internal,
    ),
    ("192.168.0.0/16", "Private-Use", Internal),
    ("192.175.48.0/24", "Direct Delegation AS112 Service", Global),
    ("198.18.0.0/15", "Benchmarking", Internal),
    ("198.51.100.0/24", "Documentation (TEST-NET-2)", Internal),
    ("203.0.113.0/24", "Documentation (TEST-NET-3)", Internal),
    ("240.0.0.0/4", "Reserved", Internal),
    ("255.255.255.255/32", "Limited Broadcast", Internal),
    // Outside it: the IPv4 Multicast Address Space.
    ("224.0.0.0/4", "Multicast", Internal),
    // IANA IPv6 Special-Purpose Address Registry.
    ("::1/128", "Loopback Address", Internal),
    ("::/128", "Unspecified Address", Internal),
    ("::ffff:0:0/96", "IPv4-mapped Address", LastFour),
    ("64:ff9b::/96", "IPv4-IPv6 Translat.", LastFour),
    ("64:ff9b:1::/48", "IPv4-IPv6 Translat.", Internal),
    ("100::/64", "Discard-Only Address Block", Internal),
    ("100:0:0:1::/64", "Dummy IPv6 Prefix", Internal),
    ("2001::/23", "IETF Protocol Assignments", Internal),
    ("2001::/32", "TEREDO", Internal),
    ("2001:1::1/128", "Port Control Protocol Anycast", Global),
    (
        "2001:1::2/128",
        "Traversal Using Relays around NAT Anycast",
        Global,
    ),
    (
        "2001:1::3/128",
        "DNS-SD Service Registration Protocol Anycast",
        Global,
    ),
    ("2001:2::/48", "Benchmarking", Internal),
    ("2001:3::/32", "AMT", Global),
    ("2001:4:112::/48", "AS112-v6", Global),
    ("2001:10::/28", "Deprecated (previously ORCHID)", Internal),
    ("2001:20::/28", "ORCHIDv2", Global),
    (
        "2001:30::/28",
        "Drone Remote ID Protocol Entity Tags (DETs) Prefix",
        Global,
    ),
    ("2001:db8::/32", "Documentation", Internal),
    ("2002::/16", "6to4", SixToFour),
    (
        "2620:4f:8000::/48",
        "Direct Delegation AS112 Service",
        Global,
    ),
    ("3fff::/20", "Documentation", Internal),
    ("5f00::/16", "Segment Routing (SRv6) SIDs", Internal),
    ("fc00::/7", "Unique-Local", Internal),
    ("fe80::/10", "Link-Local Unicast", Internal),
    // Outside it: the IPv6 Address Space registry's deprecated and multicast blocks.
    ("::/96", "IPv4-compatible Address (deprecated)", Internal),
    ("fec0::/10", "Site-local (deprecated)", Internal),
    ("ff00::/8", "Multicast", Internal),
];

/// The table parsed once, most specific first, so the first entry that holds an address is
/// the one that decides.
static TABLE: LazyLock<Vec<(IpNet, &'static str, Reach)>> = LazyLock::new(|| {
    let mut table: Vec<_> = RANGES
        .iter()
        .map(|&(prefix, name, reach)| {
            let net: IpNet = prefix.parse().expect("the table's prefixes parse");
            (net, name, reach)
        })
        .collect();
    table.sort_by_key(|(net, ..)| std::cmp::Reverse(net.prefix_len()));
    table
});

/// The registry's name of the range that keeps `ip` from a delivery, or `None` when it may be
/// reached. An address carrying an IPv4 address is named by that address's range.
pub fn refused_range(ip: IpAddr) -> Option<&'static str> {
    let (_, name, reach) = TABLE.iter().find(|(net, ..)| net.contains(&ip))?;
    match (reach, ip) {
        (Internal, _) => Some(name),
        (Global, _) => None,
        (LastFour, IpAddr::V6(v6)) => refused_range(IpAddr::V4(last_four(v6))),
        (SixToFour, IpAddr::V6(v6)) => refused_range(IpAddr::V4(six_to_four(v6))),
        // Only IPv6 entries carry an address.
        (LastFour | SixToFour, IpAddr::V4(_)) => Some(name),
    }
}

fn last_four(ip: Ipv6Addr) -> Ipv4Addr {
    let o = ip.octets();
    Ipv4Addr::new(o[12], o[13], o[14], o[15])
}

fn six_to_four(ip: Ipv6Addr) -> Ipv4Addr {
    let o = ip.octets();
    Ipv4Addr::new(o[2], o[3], o[4], o[5])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One address per entry of both registries (and the ranges beside them), with the name it
    /// is refused under, or `None` where a delivery may go.
    const CASES: &[(&str, Option<&str>)] = &[
        ("0.1.2.3", Some("\"This network\"")),
        ("0.0.0.0", Some("\"This host on this network\"")),
        ("10.20.30.40", Some("Private-Use")),
        ("100.64.0.1", Some("Shared Address Space")),
        ("100.127.255.254", Some("Shared Address Space")),
        ("100.128.0.1", None),
        ("127.0.0.1", Some("Loopback")),
        ("169.254.169.254", Some("Link Local")),
        ("172.16.3.4", Some("Private-Use")),
        ("172.31.255.255", Some("Private-Use")),
        ("172.32.0.1", None),
        ("192.0.0.200", Some("IETF Protocol Assignments")),
        ("192.0.0.5", Some("IPv4 Service Continuity Prefix")),
        ("192.0.0.8", Some("IPv4 dummy address")),
        ("192.0.0.9", None),
        ("192.0.0.10", None),
        ("192.0.0.170", Some("NAT64/DNS64 Discovery")),
        ("192.0.0.171", Some("NAT64/DNS64 Discovery")),
        ("192.0.2.1", Some("Documentation (TEST-NET-1)")),
        ("192.31.196.1", None),
        ("192.52.193.1", None),
        ("192.88.99.1", Some("Deprecated (6to4 Relay Anycast)")),
        ("192.168.1.1", Some("Private-Use")),
        ("192.175.48.1", None),
        ("198.18.0.1", Some("Benchmarking")),
        ("198.19.255.255", Some("Benchmarking")),
        ("198.51.100.7", Some("Documentation (TEST-NET-2)")),
        ("203.0.113.9", Some("Documentation (TEST-NET-3)")),
        ("240.0.0.1", Some("Reserved")),
        ("255.255.255.255", Some("Limited Broadcast")),
        ("224.0.0.251", Some("Multicast")),
        ("93.184.216.34", None),
        ("1.1.1.1", None),
        ("::1", Some("Loopback Address")),
        ("::", Some("Unspecified Address")),
        ("::ffff:127.0.0.1", Some("Loopback")),
        ("::ffff:169.254.169.254", Some("Link Local")),
        ("::ffff:93.184.216.34", None),
        ("64:ff9b::10.0.0.1", Some("Private-Use")),
        ("64:ff9b::127.0.0.1", Some("Loopback")),
        ("64:ff9b::93.184.216.34", None),
        ("64:ff9b:1::5db8:d822", Some("IPv4-IPv6 Translat.")),
        ("100::1", Some("Discard-Only Address Block")),
        ("100:0:0:1::1", Some("Dummy IPv6 Prefix")),
        ("2001:5::1", Some("IETF Protocol Assignments")),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", Some("TEREDO")),
        ("2001:1::1", None),
        ("2001:1::2", None),
        ("2001:1::3", None),
        ("2001:1::4", Some("IETF Protocol Assignments")),
        ("2001:2::1", Some("Benchmarking")),
        ("2001:3::1", None),
        ("2001:4:112::1", None),
        ("2001:10::1", Some("Deprecated (previously ORCHID)")),
        ("2001:20::1", None),
        ("2001:30::1", None),
        ("2001:db8::1", Some("Documentation")),
        ("2002:7f00:1::1", Some("Loopback")),
        ("2002:a9fe:a9fe::1", Some("Link Local")),
        ("2002:5db8:d822::1", None),
        ("2620:4f:8000::1", None),
        ("3fff::1", Some("Documentation")),
        ("5f00::1", Some("Segment Routing (SRv6) SIDs")),
        ("fd00::1", Some("Unique-Local")),
        ("fc00::1", Some("Unique-Local")),
        ("fe80::1", Some("Link-Local Unicast")),
        ("::8.8.8.8", Some("IPv4-compatible Address (deprecated)")),
        ("::127.0.0.1", Some("IPv4-compatible Address (deprecated)")),
        ("fec0::1", Some("Site-local (deprecated)")),
        ("ff02::1", Some("Multicast")),
        ("2606:4700:4700::1111", None),
        ("2a00:1450:4007:80e::200e", None),
    ];

    #[test]
    fn each_special_range_is_refused_under_its_registry_name() {
        for &(ip, expected) in CASES {
            assert_eq!(refused_range(ip.parse().unwrap()), expected, "{ip}");
        }
    }

    #[test]
    fn every_entry_of_the_table_has_a_case() {
        for (prefix, name, _) in RANGES {
            let net: IpNet = prefix.parse().unwrap();
            assert!(
                CASES
                    .iter()
                    .any(|(ip, _)| net.contains(&ip.parse::<IpAddr>().unwrap())),
                "{prefix} ({name}) has no case"
            );
        }
    }
}
