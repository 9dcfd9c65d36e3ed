"""The SSRF guard of outgoing hook deliveries: which resolved addresses a POST may reach.

Pure: the caller resolves the host name (every address it resolves to is checked, so a name
with one public and one private address is refused) and passes the addresses here. Refused,
unless inside an allowed CIDR (`aiOperator.jobHooks.allowedCIDRs`, operator flag
`--job-hook-allowed-cidr`):

- loopback (127.0.0.0/8, ::1), RFC 1918 private (10/8, 172.16/12, 192.168/16), ULA (fc00::/7),
  CGNAT (100.64.0.0/10), link-local and cloud metadata (169.254.0.0/16 with 169.254.169.254,
  fe80::/10), multicast (224.0.0.0/4, ff00::/8), and every other reserved or not globally
  routable range (0.0.0.0/8, 240.0.0.0/4, documentation and benchmark nets, ...).

An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is judged as its IPv4 address.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_NAMED: tuple[tuple[str, str], ...] = (
    ("169.254.169.254/32", "cloud metadata"),
    ("127.0.0.0/8", "loopback"),
    ("::1/128", "loopback"),
    ("10.0.0.0/8", "private (RFC 1918)"),
    ("172.16.0.0/12", "private (RFC 1918)"),
    ("192.168.0.0/16", "private (RFC 1918)"),
    ("fc00::/7", "unique local (ULA)"),
    ("100.64.0.0/10", "carrier-grade NAT"),
    ("169.254.0.0/16", "link-local"),
    ("fe80::/10", "link-local"),
    ("224.0.0.0/4", "multicast"),
    ("ff00::/8", "multicast"),
    ("0.0.0.0/8", "reserved (this network)"),
    ("240.0.0.0/4", "reserved"),
)
BLOCKED: tuple[tuple[IPNetwork, str], ...] = tuple(
    (ipaddress.ip_network(net), label) for net, label in _NAMED
)
"""Named refused ranges, most specific first (anything else not global is `reserved`)."""


def parse_cidrs(values: Iterable[str]) -> tuple[IPNetwork, ...]:
    """Allowed CIDRs from strings like `127.0.0.0/8` or `10.1.2.3` (a single host).

    Raises ValueError naming the bad entry and the expected form."""
    out = []
    for value in values:
        try:
            out.append(ipaddress.ip_network(value.strip(), strict=False))
        except ValueError as exc:
            raise ValueError(
                f"allowed CIDR {value!r} is not an address range: write it like 10.0.0.0/8 "
                f"or fd00::/8 ({exc})"
            ) from exc
    return tuple(out)


def _unmapped(address: IPAddress) -> IPAddress:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def refusal(address: str, allowed: Sequence[IPNetwork] = ()) -> str | None:
    """Why `address` (an IP literal) may not be reached, or None when it may.

    >>> refusal("169.254.169.254")
    '169.254.169.254 is cloud metadata (169.254.169.254/32)'
    >>> refusal("10.0.0.1", parse_cidrs(["10.0.0.0/8"])) is None
    True
    """
    ip = _unmapped(ipaddress.ip_address(address.split("%", 1)[0]))
    if any(ip.version == net.version and ip in net for net in allowed):
        return None
    for net, label in BLOCKED:
        if ip.version == net.version and ip in net:
            return f"{ip} is {label} ({net})"
    if not ip.is_global or ip.is_reserved:
        return f"{ip} is reserved (not globally routable)"
    return None


@dataclass(frozen=True)
class Target:
    """The parts of a hook URL the guard and the connection need."""

    scheme: str
    host: str
    """Host name or IP literal, without brackets."""
    port: int


def parse_target(url: str) -> Target:
    """Scheme, host and port of an http(s) URL; raises ValueError saying what is wrong."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"URL {url!r} must start with http:// or https://")
    if not parts.hostname:
        raise ValueError(f"URL {url!r} has no host")
    if parts.username or parts.password:
        raise ValueError(f"URL {url!r} must not carry credentials: use webhook.headers")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise ValueError(f"URL {url!r} has a bad port: {exc}") from exc
    return Target(parts.scheme, parts.hostname, port)


def first_refusal(
    host: str, addresses: Iterable[str], allowed: Sequence[IPNetwork] = ()
) -> str | None:
    """The refusal of the first address of `host` the guard refuses (None: all may be
    reached), phrased for a status message with the fix:
    `example.test resolves to 10.0.0.1 is private (RFC 1918) (10.0.0.0/8): refused ...`."""
    for address in addresses:
        why = refusal(address, allowed)
        if why is not None:
            shown = why if host == address.split("%", 1)[0] else f"{host} resolves to {why}"
            return (
                f"{shown}: refused (allow it with aiOperator.jobHooks.allowedCIDRs, "
                "operator flag --job-hook-allowed-cidr)"
            )
    return None
