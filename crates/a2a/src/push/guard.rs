//! The SSRF guard: which addresses a push notification may be sent to.
//!
//! A push URL comes from the client that registered it, so without a guard an agent can
//! be made to POST to its own admin port, to a cloud metadata service
//! (`169.254.169.254`) or to anything else on its private network. The guard refuses
//! every address that is not globally routable unless an operator allow-listed it.
//!
//! It runs twice for every request:
//! 1. [`SsrfGuard::check_url`] checks the scheme and, when the host is an IP literal, the
//!    address itself (the HTTP connector never asks the resolver about literals);
//! 2. [`GuardedResolver`], installed as the HTTP client's resolver, filters every address
//!    a host name resolves to at connect time. Checking the name once before the request
//!    and letting the connector resolve it again would leave a window in which the name
//!    could be re-pointed at a private address (DNS rebinding); filtering at the one
//!    resolution whose addresses are actually dialled closes it.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::str::FromStr;
use std::sync::Arc;

/// An IP network in CIDR notation (`10.0.0.0/8`, `fd00::/8`); a bare address is a
/// network of one (`/32` or `/128`).
///
/// An IPv4-mapped IPv6 network (`::ffff:10.0.0.0/104`) is stored as its IPv4 form, and
/// [`Cidr::contains`] looks through IPv4-mapped addresses, so an IPv4 entry matches both
/// spellings of an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cidr {
    network: IpAddr,
    prefix: u8,
}

/// Why a CIDR string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid CIDR {input:?}: {reason}")]
pub struct CidrError {
    /// The text that was read.
    pub input: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl Cidr {
    /// The network of `addr` with `prefix` leading bits; host bits are cleared. Fails when
    /// the prefix is longer than the address.
    pub fn new(addr: IpAddr, prefix: u8) -> Result<Cidr, CidrError> {
        let (addr, prefix) = match addr {
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) if prefix >= 96 => (IpAddr::V4(v4), prefix - 96),
                _ => (addr, prefix),
            },
            IpAddr::V4(_) => (addr, prefix),
        };
        let network = match addr {
            IpAddr::V4(v4) => {
                if prefix > 32 {
                    return Err(CidrError {
                        input: format!("{addr}/{prefix}"),
                        reason: "an IPv4 prefix is at most 32",
                    });
                }
                IpAddr::V4(Ipv4Addr::from(u32::from(v4) & mask32(prefix)))
            }
            IpAddr::V6(v6) => {
                if prefix > 128 {
                    return Err(CidrError {
                        input: format!("{addr}/{prefix}"),
                        reason: "an IPv6 prefix is at most 128",
                    });
                }
                IpAddr::V6(Ipv6Addr::from(u128::from(v6) & mask128(prefix)))
            }
        };
        Ok(Cidr { network, prefix })
    }

    /// The network address (host bits cleared).
    pub fn network(&self) -> IpAddr {
        self.network
    }

    /// The prefix length.
    pub fn prefix(&self) -> u8 {
        self.prefix
    }

    /// Whether `ip` lies in this network. IPv4-mapped IPv6 addresses are compared as IPv4.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.network, ip.to_canonical()) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => u32::from(ip) & mask32(self.prefix) == u32::from(net),
            (IpAddr::V6(net), IpAddr::V6(ip)) => u128::from(ip) & mask128(self.prefix) == u128::from(net),
            _ => false,
        }
    }
}

impl FromStr for Cidr {
    type Err = CidrError;

    fn from_str(input: &str) -> Result<Cidr, CidrError> {
        let error = |reason| CidrError { input: input.to_owned(), reason };
        let trimmed = input.trim();
        let (addr, prefix) = match trimmed.split_once('/') {
            Some((addr, prefix)) => (addr, Some(prefix)),
            None => (trimmed, None),
        };
        let addr = addr.strip_prefix('[').and_then(|a| a.strip_suffix(']')).unwrap_or(addr);
        let addr: IpAddr = addr.parse().map_err(|_| error("not an IP address"))?;
        let prefix = match prefix {
            Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
                p.parse::<u8>().map_err(|_| error("the prefix is out of range"))?
            }
            Some(_) => return Err(error("the prefix is not a number")),
            None => match addr {
                IpAddr::V4(_) => 32,
                IpAddr::V6(_) => 128,
            },
        };
        Cidr::new(addr, prefix).map_err(|e| error(e.reason))
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

fn mask32(prefix: u8) -> u32 {
    match prefix {
        0 => 0,
        p => u32::MAX << (32 - u32::from(p.min(32))),
    }
}

fn mask128(prefix: u8) -> u128 {
    match prefix {
        0 => 0,
        p => u128::MAX << (128 - u32::from(p.min(128))),
    }
}

/// Why an address is not globally routable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressClass {
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918 (`10/8`, `172.16/12`, `192.168/16`) and unique-local IPv6 (`fc00::/7`),
    /// plus the deprecated site-local `fec0::/10`.
    Private,
    /// Carrier-grade NAT shared space, `100.64.0.0/10` (RFC 6598).
    SharedAddressSpace,
    /// `169.254.0.0/16` (where cloud metadata services live) and `fe80::/10`.
    LinkLocal,
    /// `0.0.0.0`, `::`.
    Unspecified,
    /// `255.255.255.255`.
    Broadcast,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// Everything else that is not meant to be reached on the public internet: "this
    /// network" (`0/8`), the future-use block (`240/4`), protocol assignments
    /// (`192.0.0/24`), benchmarking (`198.18/15`), documentation ranges, the IPv6 discard
    /// prefix, deprecated IPv4-compatible IPv6 and Teredo.
    Reserved,
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AddressClass::Loopback => "a loopback address",
            AddressClass::Private => "a private address",
            AddressClass::SharedAddressSpace => "a carrier-grade NAT (shared) address",
            AddressClass::LinkLocal => "a link-local address",
            AddressClass::Unspecified => "the unspecified address",
            AddressClass::Broadcast => "the broadcast address",
            AddressClass::Multicast => "a multicast address",
            AddressClass::Reserved => "a reserved address",
        })
    }
}

/// The class of a non-public address, or `None` for a globally routable one.
///
/// IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is classified as the IPv4 address it carries, and
/// so are the IPv4 addresses embedded in NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`)
/// addresses, since a gateway forwards those to the embedded address.
pub fn classify(ip: IpAddr) -> Option<AddressClass> {
    match ip.to_canonical() {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u8) -> bool {
    u32::from(ip) & mask32(prefix) == u32::from(Ipv4Addr::from(net))
}

fn classify_v4(ip: Ipv4Addr) -> Option<AddressClass> {
    use AddressClass::*;
    let table: &[([u8; 4], u8, AddressClass)] = &[
        ([0, 0, 0, 0], 32, Unspecified),
        ([255, 255, 255, 255], 32, Broadcast),
        ([127, 0, 0, 0], 8, Loopback),
        ([10, 0, 0, 0], 8, Private),
        ([172, 16, 0, 0], 12, Private),
        ([192, 168, 0, 0], 16, Private),
        ([100, 64, 0, 0], 10, SharedAddressSpace),
        ([169, 254, 0, 0], 16, LinkLocal),
        ([224, 0, 0, 0], 4, Multicast),
        ([0, 0, 0, 0], 8, Reserved),
        ([240, 0, 0, 0], 4, Reserved),
        ([192, 0, 0, 0], 24, Reserved),
        ([192, 0, 2, 0], 24, Reserved),
        ([192, 88, 99, 0], 24, Reserved),
        ([198, 18, 0, 0], 15, Reserved),
        ([198, 51, 100, 0], 24, Reserved),
        ([203, 0, 113, 0], 24, Reserved),
    ];
    table.iter().find(|(net, prefix, _)| in_v4(ip, *net, *prefix)).map(|(_, _, class)| *class)
}

fn classify_v6(ip: Ipv6Addr) -> Option<AddressClass> {
    use AddressClass::*;
    let bits = u128::from(ip);
    let within = |net: u128, prefix: u8| bits & mask128(prefix) == net;
    if ip.is_unspecified() {
        return Some(Unspecified);
    }
    if ip.is_loopback() {
        return Some(Loopback);
    }
    if within(0xff00 << 112, 8) {
        return Some(Multicast);
    }
    if within(0xfe80 << 112, 10) {
        return Some(LinkLocal);
    }
    if within(0xfc00 << 112, 7) || within(0xfec0 << 112, 10) {
        return Some(Private);
    }
    // NAT64 well-known prefix: the last 32 bits are the IPv4 destination.
    if within(0x0064_ff9b << 96, 96) {
        return classify_v4(Ipv4Addr::from(bits as u32));
    }
    // 6to4: bits 16..48 are the IPv4 address of the relay-side host.
    if within(0x2002 << 112, 16) {
        return classify_v4(Ipv4Addr::from((bits >> 80) as u32));
    }
    let reserved = [
        (0u128, 96u8),                // IPv4-compatible (deprecated) and the rest of ::/96
        (0x0064_ff9b_0001 << 80, 48), // local-use NAT64
        (0x0100 << 112, 64),          // discard-only
        (0x2001_0db8 << 96, 32),      // documentation
        (0x2001_0000 << 96, 32),      // Teredo
        (0x2001_0000 << 96, 23),      // IETF protocol assignments (includes the above)
    ];
    if reserved.iter().any(|&(net, prefix)| within(net, prefix)) {
        return Some(Reserved);
    }
    None
}

/// Why the guard refused a push target. Every refusal is permanent: retrying the same
/// URL cannot make it acceptable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The URL does not parse, or is not absolute.
    #[error("push URL {url:?} is not a valid absolute URL: {reason}")]
    BadUrl {
        /// The URL as configured.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The scheme is neither `http` nor `https`.
    #[error("push URL scheme {scheme:?} is not allowed (only http and https)")]
    Scheme {
        /// The scheme found.
        scheme: String,
    },
    /// The host is, or resolves to, an address that is not public and not allow-listed.
    #[error("push target {host} resolves to {ip}, {class}; refused by the SSRF guard (allow-list it to permit)")]
    Address {
        /// The host of the URL.
        host: String,
        /// The address refused.
        ip: IpAddr,
        /// Why that address is not public.
        class: AddressClass,
    },
}

/// The address policy: refuse every non-public address except those allow-listed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SsrfGuard {
    allow: Vec<Cidr>,
    allow_loopback: bool,
}

impl SsrfGuard {
    /// A guard that lets through public addresses and the addresses in `allow`.
    pub fn new(allow: Vec<Cidr>) -> SsrfGuard {
        SsrfGuard { allow, allow_loopback: false }
    }

    /// The same guard, letting loopback addresses (`127.0.0.0/8`, `::1`) through too:
    /// for tests and receivers on the same machine.
    pub fn with_loopback(self) -> SsrfGuard {
        SsrfGuard { allow_loopback: true, ..self }
    }

    /// Accepts `ip` or says why not; `host` only names the target in the refusal.
    pub fn check_ip(&self, host: &str, ip: IpAddr) -> Result<(), Refused> {
        if self.allow.iter().any(|cidr| cidr.contains(ip)) {
            return Ok(());
        }
        match classify(ip) {
            None => Ok(()),
            Some(AddressClass::Loopback) if self.allow_loopback => Ok(()),
            Some(class) => Err(Refused::Address { host: host.to_owned(), ip, class }),
        }
    }

    /// Parses a push URL and checks what can be checked before resolving: the scheme
    /// (http or https) and, for an IP literal host, the address. Host names are checked
    /// by [`GuardedResolver`] when the connection is made.
    pub fn check_url(&self, url: &str) -> Result<reqwest::Url, Refused> {
        let bad = |reason: String| Refused::BadUrl { url: url.to_owned(), reason };
        let parsed = reqwest::Url::parse(url).map_err(|e| bad(e.to_string()))?;
        match parsed.scheme() {
            "http" | "https" => {}
            other => return Err(Refused::Scheme { scheme: other.to_owned() }),
        }
        let host = match parsed.host_str() {
            Some(host) if !host.is_empty() => host,
            _ => return Err(bad("it has no host".to_owned())),
        };
        // The URL parser normalises IPv4 literals (`127.1`, `0x7f.0.0.1` become
        // `127.0.0.1`) and keeps IPv6 literals in brackets.
        let bare = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        if let Ok(ip) = bare.parse::<IpAddr>() {
            self.check_ip(host, ip)?;
        }
        Ok(parsed)
    }
}

/// A `reqwest` resolver that resolves with the system resolver (tokio's `lookup_host`)
/// and hands the connector only the addresses the guard accepts. When it refuses every
/// address a name has, it fails with [`Refused`], which the worker finds in the error's
/// source chain and treats as a permanent failure.
#[derive(Debug, Clone)]
pub struct GuardedResolver {
    guard: Arc<SsrfGuard>,
}

impl GuardedResolver {
    /// A resolver that refuses names resolving to addresses `guard` refuses.
    pub fn new(guard: Arc<SsrfGuard>) -> GuardedResolver {
        GuardedResolver { guard }
    }
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let guard = Arc::clone(&self.guard);
        let host = name.as_str().to_owned();
        Box::pin(async move {
            // Port 0: the connector puts the URL's port (or the scheme's default) in.
            let resolved: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let mut refused = None;
            let mut allowed = Vec::with_capacity(resolved.len());
            for addr in resolved {
                match guard.check_ip(&host, addr.ip()) {
                    Ok(()) => allowed.push(addr),
                    Err(refusal) => {
                        refused.get_or_insert(refusal);
                    }
                }
            }
            if allowed.is_empty() {
                if let Some(refusal) = refused {
                    return Err(Box::new(refusal) as Box<dyn std::error::Error + Send + Sync>);
                }
                return Err(format!("{host} resolved to no address").into());
            }
            let addrs: reqwest::dns::Addrs = Box::new(allowed.into_iter());
            Ok(addrs)
        })
    }
}
