//! The SSRF guard: which IP addresses a model-directed request may dial.
//!
//! Owns: the classification of an address (public, private-but-allowlistable, forbidden), the
//! unwrapping of IPv4 embedded in IPv6 (IPv4-mapped, NAT64 `64:ff9b::/96` and
//! `64:ff9b:1::/48`, 6to4, Teredo), the exact-host allowlist for loopback and private ranges,
//! and the [`Resolver`] seam through which names become addresses.
//!
//! Refuses to own: sockets. The guard returns the socket addresses that passed; the client
//! dials exactly those and never resolves the name again, so a DNS answer that changes between
//! check and connect (rebinding) cannot reach an address that was not checked.
//!
//! Key decision: a host is refused when *any* address it resolves to is refused, rather than
//! filtering the bad ones out: a public name that also answers with 127.0.0.1 is an attack, not
//! a configuration to work around. IP-literal hosts take the same path as names (the resolver
//! is simply not consulted). Link-local (cloud metadata), unspecified, multicast, reserved and
//! documentation ranges, and IPv6 outside `2000::/3`, are refused even for allowlisted hosts.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use async_trait::async_trait;

/// How an address may be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// A global unicast address.
    Public,
    /// Loopback or a private range: only through an exact `allow_private_hosts` entry.
    Private(&'static str),
    /// Never dialed, whatever the allowlist says.
    Forbidden(&'static str),
}

impl Reach {
    fn severity(self) -> u8 {
        match self {
            Reach::Public => 0,
            Reach::Private(_) => 1,
            Reach::Forbidden(_) => 2,
        }
    }

    /// The stricter of two verdicts (for addresses that embed more than one IPv4).
    fn max(self, other: Reach) -> Reach {
        if other.severity() > self.severity() {
            other
        } else {
            self
        }
    }
}

/// The verdict on one address, with the IPv4 it embeds when that decided it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Classification {
    pub reach: Reach,
    /// `(form, address)`: e.g. `("IPv4-mapped", 127.0.0.1)`.
    pub embedded: Option<(&'static str, Ipv4Addr)>,
}

/// Classifies an address; pure.
pub fn classify(ip: IpAddr) -> Classification {
    match ip {
        IpAddr::V4(v4) => Classification {
            reach: classify_v4(v4),
            embedded: None,
        },
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - prefix)
    };
    u32::from(ip) & mask == u32::from(Ipv4Addr::from(net)) & mask
}

fn in_v6(ip: Ipv6Addr, net: Ipv6Addr, prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u128::MAX << (128 - prefix)
    };
    u128::from(ip) & mask == u128::from(net) & mask
}

/// IPv4 ranges, most specific first.
const V4_RANGES: &[([u8; 4], u32, Reach)] = &[
    (
        [169, 254, 169, 254],
        32,
        Reach::Forbidden("link-local (cloud metadata)"),
    ),
    ([169, 254, 0, 0], 16, Reach::Forbidden("link-local")),
    (
        [0, 0, 0, 0],
        8,
        Reach::Forbidden("in 0.0.0.0/8 (this network)"),
    ),
    ([127, 0, 0, 0], 8, Reach::Private("loopback")),
    ([10, 0, 0, 0], 8, Reach::Private("private (RFC 1918)")),
    ([172, 16, 0, 0], 12, Reach::Private("private (RFC 1918)")),
    ([192, 168, 0, 0], 16, Reach::Private("private (RFC 1918)")),
    (
        [100, 64, 0, 0],
        10,
        Reach::Private("shared address space (CGNAT, 100.64.0.0/10)"),
    ),
    (
        [192, 0, 0, 0],
        24,
        Reach::Forbidden("reserved for IETF protocol assignments (192.0.0.0/24)"),
    ),
    (
        [192, 0, 2, 0],
        24,
        Reach::Forbidden("documentation (TEST-NET-1)"),
    ),
    (
        [198, 51, 100, 0],
        24,
        Reach::Forbidden("documentation (TEST-NET-2)"),
    ),
    (
        [203, 0, 113, 0],
        24,
        Reach::Forbidden("documentation (TEST-NET-3)"),
    ),
    (
        [198, 18, 0, 0],
        15,
        Reach::Forbidden("reserved for benchmarking (198.18.0.0/15)"),
    ),
    (
        [192, 88, 99, 0],
        24,
        Reach::Forbidden("reserved (deprecated 6to4 relay anycast)"),
    ),
    ([224, 0, 0, 0], 4, Reach::Forbidden("multicast")),
    ([255, 255, 255, 255], 32, Reach::Forbidden("broadcast")),
    (
        [240, 0, 0, 0],
        4,
        Reach::Forbidden("reserved (240.0.0.0/4)"),
    ),
];

fn classify_v4(ip: Ipv4Addr) -> Reach {
    V4_RANGES
        .iter()
        .find(|(net, prefix, _)| in_v4(ip, *net, *prefix))
        .map_or(Reach::Public, |(_, _, reach)| *reach)
}

fn v4_at(ip: Ipv6Addr, octets: [usize; 4]) -> Ipv4Addr {
    let o = ip.octets();
    Ipv4Addr::new(o[octets[0]], o[octets[1]], o[octets[2]], o[octets[3]])
}

fn embedded(form: &'static str, v4: Ipv4Addr) -> Classification {
    Classification {
        reach: classify_v4(v4),
        embedded: Some((form, v4)),
    }
}

fn stricter(a: Classification, b: Classification) -> Classification {
    if b.reach.max(a.reach) == a.reach {
        a
    } else {
        b
    }
}

fn classify_v6(ip: Ipv6Addr) -> Classification {
    let plain = |reach| Classification {
        reach,
        embedded: None,
    };
    if let Some(v4) = ip.to_ipv4_mapped() {
        return embedded("IPv4-mapped", v4);
    }
    if ip.is_unspecified() {
        return plain(Reach::Forbidden("unspecified (::)"));
    }
    if ip.is_loopback() {
        return plain(Reach::Private("loopback"));
    }
    let last32 = v4_at(ip, [12, 13, 14, 15]);
    if in_v6(ip, Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96) {
        return embedded("NAT64", last32);
    }
    if in_v6(ip, Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0), 48) {
        // RFC 6052 places the IPv4 of a /48 prefix around the reserved `u` octet (bits 64..71);
        // deployments also use a /96 inside it. Both readings must pass, which refuses nearly
        // all of this local-use prefix: it only ever leads into the operator's own network.
        return stricter(
            embedded("NAT64", v4_at(ip, [6, 7, 9, 10])),
            embedded("NAT64", last32),
        );
    }
    if in_v6(ip, Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16) {
        return embedded("6to4", v4_at(ip, [2, 3, 4, 5]));
    }
    if in_v6(ip, Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 32) {
        // Teredo: the server's IPv4 in bits 32..63, the client's inverted in the last 32.
        let client = Ipv4Addr::from(!u32::from(last32));
        return stricter(
            embedded("Teredo server", v4_at(ip, [4, 5, 6, 7])),
            embedded("Teredo client", client),
        );
    }
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        return plain(Reach::Forbidden(
            "link-local (cloud metadata, fd00:ec2::254)",
        ));
    }
    let v6_ranges: &[(Ipv6Addr, u32, Reach)] = &[
        (
            Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0),
            10,
            Reach::Forbidden("link-local"),
        ),
        (
            Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0),
            7,
            Reach::Private("unique local (fc00::/7)"),
        ),
        (
            Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0),
            8,
            Reach::Forbidden("multicast"),
        ),
        (
            Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0),
            32,
            Reach::Forbidden("documentation (2001:db8::/32)"),
        ),
        (
            Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0),
            23,
            Reach::Forbidden("reserved for IETF protocol assignments (2001::/23)"),
        ),
        (Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3, Reach::Public),
    ];
    let reach = v6_ranges
        .iter()
        .find(|(net, prefix, _)| in_v6(ip, *net, *prefix))
        .map_or(
            Reach::Forbidden("outside global unicast (2000::/3)"),
            |(_, _, r)| *r,
        );
    plain(reach)
}

/// One `allow_private_hosts` entry: an exact host, with or without a port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrivateHost {
    /// As the URL parser serializes it: lowercase, IPv6 in brackets.
    pub host: String,
    /// `None`: every port of the host.
    pub port: Option<u16>,
}

impl PrivateHost {
    /// Parses `host`, `host:port`, `[v6]:port`. The host is normalized the way a URL's is, so
    /// `LOCALHOST:8080` and `localhost:8080` are one entry; wildcards are not accepted.
    pub fn parse(entry: &str) -> Result<PrivateHost, String> {
        let bad = |why: &str| format!("allow_private_hosts entry \"{entry}\": {why}");
        if entry.is_empty() || entry.contains(['/', '@', '?', '#', '*', ' ']) {
            return Err(bad(
                "write an exact host or host:port, such as \"localhost:8080\"",
            ));
        }
        let url = url::Url::parse(&format!("http://{entry}/"))
            .map_err(|e| bad(&format!("{e}; write host or host:port")))?;
        let host = url.host_str().ok_or_else(|| bad("it has no host"))?;
        // `url` drops an explicit :80 for http; an entry that named a port keeps it.
        let named_port = entry
            .rsplit_once(':')
            .filter(|(h, p)| {
                !h.is_empty() && !p.contains(']') && (h.ends_with(']') || !h.contains(':'))
            })
            .and_then(|(_, p)| p.parse::<u16>().ok());
        Ok(PrivateHost {
            host: host.to_owned(),
            port: named_port.or(url.port()),
        })
    }

    fn covers(&self, host: &str, port: u16) -> bool {
        self.host == host && self.port.is_none_or(|p| p == port)
    }
}

impl fmt::Display for PrivateHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.port {
            Some(p) => write!(f, "{}:{p}", self.host),
            None => f.write_str(&self.host),
        }
    }
}

/// Why an address was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    pub host: String,
    pub address: IpAddr,
    pub classification: Classification,
}

impl Blocked {
    /// The rule's name: "link-local (cloud metadata)".
    pub fn rule(&self) -> &'static str {
        match self.classification.reach {
            Reach::Public => "public",
            Reach::Private(r) | Reach::Forbidden(r) => r,
        }
    }

    /// Whether an `allow_private_hosts` entry could have let it through.
    pub fn allowlistable(&self) -> bool {
        matches!(self.classification.reach, Reach::Private(_))
    }
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = match self.address {
            IpAddr::V6(v6) => format!("[{v6}]"),
            v4 => v4.to_string(),
        };
        let via = if self.host == shown {
            shown
        } else {
            format!("{} (resolved to {shown})", self.host)
        };
        match self.classification.embedded {
            Some((form, v4)) => write!(
                f,
                "{via} embeds IPv4 {v4} ({form}), which is {}",
                self.rule()
            )?,
            None => write!(f, "{via} is {}", self.rule())?,
        }
        if self.allowlistable() {
            write!(
                f,
                "; only an exact [fetch] allow_private_hosts entry for this host reaches it"
            )
        } else {
            f.write_str("; no setting allows it")
        }
    }
}

/// The guard: the allowlist of hosts that may reach loopback and private ranges.
#[derive(Clone, Debug, Default)]
pub struct SsrfGuard {
    allow_private: Vec<PrivateHost>,
}

impl SsrfGuard {
    pub fn new(allow_private: Vec<PrivateHost>) -> SsrfGuard {
        SsrfGuard { allow_private }
    }

    /// Checks one address the host `host` (as the URL serializes it) resolved to; the socket
    /// address to dial, or why not. IPv4-mapped addresses are dialed as the IPv4 they embed.
    pub fn check(&self, host: &str, port: u16, ip: IpAddr) -> Result<SocketAddr, Blocked> {
        let classification = classify(ip);
        let allowed = match classification.reach {
            Reach::Public => true,
            Reach::Private(_) => self.allow_private.iter().any(|h| h.covers(host, port)),
            Reach::Forbidden(_) => false,
        };
        if allowed {
            Ok(SocketAddr::new(ip.to_canonical(), port))
        } else {
            Err(Blocked {
                host: host.to_owned(),
                address: ip,
                classification,
            })
        }
    }

    /// Resolves `url`'s host (names through `resolver`, IP literals as they are) and checks
    /// every address. Returns the addresses to dial, in the resolver's order.
    pub async fn resolve(
        &self,
        resolver: &dyn Resolver,
        url: &url::Url,
    ) -> Result<Vec<SocketAddr>, GuardError> {
        let port = url
            .port_or_known_default()
            .ok_or_else(|| GuardError::NoHost(url.to_string()))?;
        let shown = url
            .host_str()
            .ok_or_else(|| GuardError::NoHost(url.to_string()))?
            .to_owned();
        let ips = match url.host() {
            Some(url::Host::Ipv4(v4)) => vec![IpAddr::V4(v4)],
            Some(url::Host::Ipv6(v6)) => vec![IpAddr::V6(v6)],
            Some(url::Host::Domain(name)) => {
                let ips = resolver
                    .resolve(name, port)
                    .await
                    .map_err(|e| GuardError::Resolve {
                        host: name.to_owned(),
                        message: e.to_string(),
                    })?;
                if ips.is_empty() {
                    return Err(GuardError::Resolve {
                        host: name.to_owned(),
                        message: "no addresses".to_owned(),
                    });
                }
                ips
            }
            None => return Err(GuardError::NoHost(url.to_string())),
        };
        ips.into_iter()
            .map(|ip| self.check(&shown, port, ip).map_err(GuardError::Blocked))
            .collect()
    }
}

/// Why a host could not be turned into addresses to dial.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GuardError {
    Blocked(Blocked),
    Resolve { host: String, message: String },
    NoHost(String),
}

/// Turns a host name into addresses. The one place DNS happens, so tests substitute a stub and
/// no test resolves a real name.
#[async_trait]
pub trait Resolver: Send + Sync {
    async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<IpAddr>>;
}

/// The system resolver (getaddrinfo on a blocking thread, through tokio).
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemResolver;

#[async_trait]
impl Resolver for SystemResolver {
    async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<IpAddr>> {
        let addrs = tokio::net::lookup_host((host, port)).await?;
        Ok(addrs.map(|a| a.ip()).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach(text: &str) -> Reach {
        classify(text.parse().unwrap()).reach
    }

    #[test]
    fn address_table() {
        use Reach::*;
        // (address, expected reach kind: "public" | "private" | "forbidden", rule fragment)
        let cases: &[(&str, &str, &str)] = &[
            ("93.184.216.34", "public", ""),
            ("8.8.8.8", "public", ""),
            ("127.0.0.1", "private", "loopback"),
            ("127.255.255.254", "private", "loopback"),
            ("10.1.2.3", "private", "RFC 1918"),
            ("172.16.0.1", "private", "RFC 1918"),
            ("172.31.255.255", "private", "RFC 1918"),
            ("172.32.0.1", "public", ""),
            ("192.168.1.1", "private", "RFC 1918"),
            ("100.64.0.1", "private", "CGNAT"),
            ("100.127.255.255", "private", "CGNAT"),
            ("100.128.0.1", "public", ""),
            ("169.254.169.254", "forbidden", "cloud metadata"),
            ("169.254.1.1", "forbidden", "link-local"),
            ("0.0.0.0", "forbidden", "0.0.0.0/8"),
            ("0.1.2.3", "forbidden", "0.0.0.0/8"),
            ("224.0.0.1", "forbidden", "multicast"),
            ("239.255.255.250", "forbidden", "multicast"),
            ("240.0.0.1", "forbidden", "reserved"),
            ("255.255.255.255", "forbidden", "broadcast"),
            ("192.0.2.1", "forbidden", "documentation"),
            ("198.51.100.1", "forbidden", "documentation"),
            ("203.0.113.1", "forbidden", "documentation"),
            ("198.18.0.1", "forbidden", "benchmarking"),
            ("192.0.0.170", "forbidden", "IETF"),
            ("2606:4700::1111", "public", ""),
            ("::1", "private", "loopback"),
            ("::", "forbidden", "unspecified"),
            ("::ffff:127.0.0.1", "private", "loopback"),
            ("::ffff:169.254.169.254", "forbidden", "cloud metadata"),
            ("::ffff:8.8.8.8", "public", ""),
            ("64:ff9b::a9fe:a9fe", "forbidden", "cloud metadata"),
            ("64:ff9b::7f00:1", "private", "loopback"),
            ("64:ff9b::808:808", "public", ""),
            // Local-use NAT64: both readings must be public, so in practice it is refused.
            ("64:ff9b:1:7f00:1::", "forbidden", ""),
            ("64:ff9b:1::a9fe:a9fe", "forbidden", "cloud metadata"),
            ("2002:a9fe:a9fe::", "forbidden", "cloud metadata"),
            ("2002:7f00:1::", "private", "loopback"),
            ("2002:808:808::", "public", ""),
            // Teredo: server 65.54.227.120, client 127.0.0.1 (inverted: 80ff:fffe).
            (
                "2001:0:4136:e378:8000:63bf:80ff:fffe",
                "private",
                "loopback",
            ),
            // Teredo with a public client (8.8.8.8 inverted: f7f7:f7f7).
            ("2001:0:4136:e378:8000:63bf:f7f7:f7f7", "public", ""),
            ("fd00:ec2::254", "forbidden", "cloud metadata"),
            ("fd12:3456::1", "private", "unique local"),
            ("fe80::1", "forbidden", "link-local"),
            ("ff02::1", "forbidden", "multicast"),
            ("2001:db8::1", "forbidden", "documentation"),
            ("2001:10::1", "forbidden", "IETF"),
            ("::127.0.0.1", "forbidden", "2000::/3"),
            ("100::1", "forbidden", "2000::/3"),
            ("fec0::1", "forbidden", "2000::/3"),
        ];
        for &(addr, kind, fragment) in cases {
            let got = reach(addr);
            let (got_kind, rule) = match got {
                Public => ("public", ""),
                Private(r) => ("private", r),
                Forbidden(r) => ("forbidden", r),
            };
            assert_eq!(got_kind, kind, "{addr}: {got:?}");
            assert!(
                rule.contains(fragment),
                "{addr}: {rule:?} lacks {fragment:?}"
            );
        }
    }

    #[test]
    fn allowlist_is_exact_host_and_port() {
        let guard = SsrfGuard::new(vec![
            PrivateHost::parse("localhost:8080").unwrap(),
            PrivateHost::parse("10.0.0.5").unwrap(),
        ]);
        let lo: IpAddr = "127.0.0.1".parse().unwrap();
        assert!(guard.check("localhost", 8080, lo).is_ok());
        assert!(guard.check("localhost", 8081, lo).is_err());
        assert!(guard.check("localhost.", 8080, lo).is_err());
        assert!(guard.check("evil.localhost", 8080, lo).is_err());
        assert!(
            guard
                .check("10.0.0.5", 443, "10.0.0.5".parse().unwrap())
                .is_ok()
        );
        // The allowlist never opens forbidden ranges.
        let meta: IpAddr = "169.254.169.254".parse().unwrap();
        let e = guard.check("localhost", 8080, meta).unwrap_err();
        assert_eq!(e.rule(), "link-local (cloud metadata)");
        assert_eq!(
            e.to_string(),
            "localhost (resolved to 169.254.169.254) is link-local (cloud metadata); no setting allows it"
        );
        // Mapped addresses are dialed as the IPv4 they embed.
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert_eq!(
            guard.check("localhost", 8080, mapped).unwrap(),
            "127.0.0.1:8080".parse().unwrap()
        );
    }

    #[test]
    fn allowlist_entries_parse_strictly() {
        let ok: &[(&str, &str, Option<u16>)] = &[
            ("localhost:8080", "localhost", Some(8080)),
            ("LocalHost:8080", "localhost", Some(8080)),
            ("localhost", "localhost", None),
            ("127.0.0.1:80", "127.0.0.1", Some(80)),
            ("[::1]:9000", "[::1]", Some(9000)),
            ("[::1]", "[::1]", None),
        ];
        for &(entry, host, port) in ok {
            let h = PrivateHost::parse(entry).unwrap();
            assert_eq!((h.host.as_str(), h.port), (host, port), "{entry}");
        }
        for bad in ["", "*.internal", "http://x/", "a@b", "host:99999", "a b"] {
            let e = PrivateHost::parse(bad).unwrap_err();
            assert!(e.contains("allow_private_hosts"), "{bad}: {e}");
        }
    }
}
