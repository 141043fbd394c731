"""The SSRF guard of push notifications: which URLs a push config may name.

A push URL comes from whoever registered the config, so without a guard an agent could
be made to POST to its own admin port, to a cloud metadata service (169.254.169.254) or
to anything else on its private network. The guard refuses every address that is not
globally routable (loopback, private, link-local, multicast, shared, reserved and
documentation ranges, and IPv6 forms that carry such an IPv4 address) unless the
operator allows it (`allow` networks, or `allow_loopback`).

`PushGuard.check_target` is what the server runs when a config is set: the scheme must be
http or https; an address literal is checked as is; a host name is resolved and every
address it resolves to must pass (a name that does not resolve within the time bound is
let through: delivery checks again). The classification follows the Rust SDK's guard.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import SplitResult, urlsplit

__all__ = ["PushGuard", "Refused", "classify"]

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_V4: tuple[tuple[str, str], ...] = (
    ("0.0.0.0/32", "unspecified"),
    ("255.255.255.255/32", "broadcast"),
    ("127.0.0.0/8", "loopback"),
    ("10.0.0.0/8", "private"),
    ("172.16.0.0/12", "private"),
    ("192.168.0.0/16", "private"),
    ("100.64.0.0/10", "shared address space"),
    ("169.254.0.0/16", "link-local"),
    ("224.0.0.0/4", "multicast"),
    ("0.0.0.0/8", "reserved"),
    ("240.0.0.0/4", "reserved"),
    ("192.0.0.0/24", "reserved"),
    ("192.0.2.0/24", "reserved"),
    ("192.88.99.0/24", "reserved"),
    ("198.18.0.0/15", "reserved"),
    ("198.51.100.0/24", "reserved"),
    ("203.0.113.0/24", "reserved"),
)
_V6: tuple[tuple[str, str], ...] = (
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("ff00::/8", "multicast"),
    ("fe80::/10", "link-local"),
    ("fc00::/7", "private"),
    ("fec0::/10", "private"),
    ("::/96", "reserved"),
    ("64:ff9b:1::/48", "reserved"),
    ("100::/64", "reserved"),
    ("2001:db8::/32", "reserved"),
    ("2001::/23", "reserved"),
)
_V4_NETS = [(ipaddress.IPv4Network(n), c) for n, c in _V4]
_V6_NETS = [(ipaddress.IPv6Network(n), c) for n, c in _V6]
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")


def _embedded_v4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries to (mapped, NAT64, 6to4), if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF)
    if ip in _SIX_TO_FOUR:
        return ipaddress.IPv4Address((int(ip) >> 80) & 0xFFFF_FFFF)
    return None


def classify(ip: IpAddress) -> str | None:
    """Why `ip` is not public (`"loopback"`, `"private"`, …), or `None` when it is."""
    if isinstance(ip, ipaddress.IPv6Address):
        carried = _embedded_v4(ip)
        if carried is not None:
            ip = carried
        else:
            return next((c for n, c in _V6_NETS if ip in n), None)
    return next((c for n, c in _V4_NETS if ip in n), None)


@dataclass(slots=True)
class Refused(Exception):
    """A push URL the guard refuses, and why (the text is for people)."""

    reason: str

    def __str__(self) -> str:
        return self.reason


@dataclass(frozen=True, slots=True)
class PushGuard:
    """The address policy: public addresses pass, and those in `allow`; loopback too when
    `allow_loopback` (tests, a receiver on the same machine)."""

    allow: Sequence[IpNetwork] = field(default=())
    allow_loopback: bool = False
    resolve_timeout: float = 2.0
    """Seconds a host name may take to resolve when a config is set."""

    @classmethod
    def permissive(cls) -> PushGuard:
        """Lets every address through (loopback and private networks included): for tests
        and local receivers only."""
        return cls(allow=(ipaddress.IPv4Network("0.0.0.0/0"), ipaddress.IPv6Network("::/0")))

    def check_ip(self, host: str, ip: IpAddress) -> None:
        """Raises `Refused` unless `ip` may be sent to (`host` names it in the refusal)."""
        carried = _embedded_v4(ip) if isinstance(ip, ipaddress.IPv6Address) else None
        candidates = (ip,) if carried is None else (ip, carried)
        if any(c in n for c in candidates for n in self.allow if c.version == n.version):
            return
        why = classify(ip)
        if why is None or (why == "loopback" and self.allow_loopback):
            return
        raise Refused(f"push target {host} is {ip}, a {why} address; refused by the SSRF guard (allow it to permit)")

    def check_url(self, url: str) -> SplitResult:
        """Checks what needs no name resolution: an absolute http(s) URL with a host, and
        the address when the host is a literal."""
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - reading it checks it
        except ValueError as e:
            raise Refused(f"push URL {url!r} is not a valid absolute URL: {e}") from None
        if parts.scheme.lower() not in ("http", "https"):
            raise Refused(f"push URL scheme {parts.scheme!r} is not allowed (only http and https)")
        host = parts.hostname
        if not host:
            raise Refused(f"push URL {url!r} is not a valid absolute URL: it has no host")
        literal = _literal(host)
        if literal is not None:
            self.check_ip(host, literal)
        return parts

    async def check_target(self, url: str) -> None:
        """`check_url`, then every address the host name resolves to (see the module)."""
        parts = self.check_url(url)
        host = parts.hostname or ""
        if _literal(host) is not None:
            return
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.resolve_timeout):
                found = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, TimeoutError):
            return
        for _family, _type, _proto, _name, address in found:
            ip = _literal(str(address[0]))
            if ip is not None:
                self.check_ip(host, ip)

    async def resolve(self, host: str, port: int) -> str:
        """The address to dial for `host` at delivery: the literal itself, or the first
        address the name resolves to that passes (`Refused` when none does). Dialling the
        address checked leaves no window for the name to be re-pointed in between.

        Raises:
            Refused: no address may be sent to.
            OSError: the name does not resolve (`TimeoutError` past `resolve_timeout`).
        """
        literal = _literal(host)
        if literal is not None:
            self.check_ip(host, literal)
            return host
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(self.resolve_timeout):
            found = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        refusal: Refused | None = None
        for _family, _type, _proto, _name, address in found:
            ip = _literal(str(address[0]))
            if ip is None:
                continue
            try:
                self.check_ip(host, ip)
            except Refused as e:
                refusal = refusal or e
                continue
            return str(ip)
        raise refusal or Refused(f"push target {host} resolves to no address")


def _literal(host: str) -> IpAddress | None:
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None
