"""Where webhooks may be sent: the address a request is about to connect to, after DNS, checked against the
deployment's setting (LAKELET_WEBHOOK_ALLOWED_DESTINATIONS, chalicelib/settings.py).

A webhook runs with the server's network position: a URL naming the instance metadata service, the Lambda runtime
API or a private service would let any user who can commit an action file reach what only the server can (and
read the answer, kept as the hook's output). So an address that is not globally routable is refused unless a
listed network holds it: loopback, link-local (169.254.169.254 and fd00:ec2::254, the metadata service, among
them), private and shared ranges (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7), unspecified, reserved,
multicast and broadcast. IPv6 forms that carry an IPv4 address (IPv4-mapped ``::ffff:a.b.c.d``, 6to4 ``2002::/16``,
NAT64 ``64:ff9b::/96``) are judged by that address. The Lambda runtime API of the running function
(AWS_LAMBDA_RUNTIME_API) is refused even when its network is listed.

The check is on the address actually connected to (the webhook adapter connects to the address it checked, never
resolving the name again), so a name that resolves to a public address once and a private one next (DNS
rebinding) cannot slip past it.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

__all__ = ["Destinations", "parse_networks"]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))


def parse_networks(entries: Iterable[str]) -> tuple[Network, ...]:
    """The networks of entries such as ``10.1.0.0/16``, ``203.0.113.7`` or ``::1/128``; ValueError otherwise."""
    return tuple(ipaddress.ip_network(entry.strip(), strict=False) for entry in entries if entry.strip())


def embedded_ipv4(address: Address) -> Address:
    """The IPv4 address an IPv6 address carries (mapped, 6to4, NAT64), else the address itself."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address.sixtofour is not None:
            return address.sixtofour
        if any(address in net for net in _NAT64):
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


class Destinations:
    """``allowed``: networks webhooks may reach even when not public. ``refused``: host:port endpoints refused
    whatever is allowed (the Lambda runtime API)."""

    def __init__(self, allowed: Iterable[str] = (), refused: Iterable[str] = ()) -> None:
        self.allowed = parse_networks(allowed)
        self.refused = frozenset(r for r in refused if r)

    def refusal(self, address: str, port: int) -> str:
        """Why a connection to ``address``:``port`` is refused; empty when it is allowed."""
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0])  # a scope id (fe80::1%eth0) names no other address
        except ValueError:
            return f"{address} is not an IP address"
        inner = embedded_ipv4(ip)
        for endpoint in (f"{ip}:{port}", f"{inner}:{port}", f"[{ip}]:{port}"):
            if endpoint in self.refused:
                return f"{address}:{port} is the Lambda runtime API"
        if any(a.version == net.version and a in net for net in self.allowed for a in (ip, inner)):
            return ""
        if inner.is_global and not inner.is_multicast and not inner.is_reserved:
            return ""
        kind = _kind(inner)
        return (
            f"{address} is {kind}; webhooks reach only public addresses and the networks listed in the deployment's "
            "LAKELET_WEBHOOK_ALLOWED_DESTINATIONS"
        )


def _kind(ip: Address) -> str:
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address (the instance metadata service lives there)"
    if ip.is_unspecified:
        return "the unspecified address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_private:
        return "a private address"
    return "not a public address"
