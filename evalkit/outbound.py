"""Which addresses the server may call on a workspace writer's behalf (HTTP evaluators, LLM judges
named in an evaluator spec, harness agents).

A writer names the URL; the server makes the request from inside its network. Unchecked, that
reaches what only the server can: its own API and store on loopback, the cloud's metadata service
(169.254.169.254, which hands out credentials), a private network's admin pages. So loopback,
private, link-local, shared (CGNAT), multicast and reserved addresses are refused unless the
operator allows them with EVALKIT_OUTBOUND_ALLOW (host names and CIDRs, comma-separated).

A host name is resolved and every address it resolves to is checked (one private address among
public ones is refused). The check runs when a request starts, redirects included, and again in
the connector's resolver, on the addresses actually connected to, so a name that resolves to a
public address when checked and to 127.0.0.1 when connected (DNS rebinding) is refused too.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# Not private by Python's definition, yet not the public internet: carrier-grade NAT (and some
# clouds' metadata, e.g. 100.100.100.200), IETF protocol assignments, benchmarking.
_ALSO_INTERNAL = tuple(ipaddress.ip_network(n) for n in ("100.64.0.0/10", "192.0.0.0/24", "198.18.0.0/15"))

ALLOW_SETTING = "EVALKIT_OUTBOUND_ALLOW"


class OutboundRefused(aiohttp.ClientError, ValueError):
    """The server will not call this address; the message says why and how an operator allows it."""


def is_internal(address: IpAddress) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return (address.is_private or address.is_loopback or address.is_link_local or address.is_multicast
            or address.is_reserved or address.is_unspecified or any(address in n for n in _ALSO_INTERNAL))


class OutboundPolicy:
    """The allow-list: host names (exact, case-insensitive; `.example.com` for a domain and its
    subdomains) and networks (CIDR or single addresses) the server may call although internal."""

    def __init__(self, allow: Iterable[str] = ()) -> None:
        self.hosts: set[str] = set()
        self.networks: list[IpNetwork] = []
        for raw in allow:
            entry = raw.strip().lower().strip("[]")
            if not entry:
                continue
            try:
                self.networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                self.hosts.add(entry)

    @classmethod
    def from_setting(cls, value: str | None, *also: str) -> OutboundPolicy:
        """From the comma-separated setting, plus hosts the operator configured elsewhere (the server's
        own judge URL is the operator's choice, not a writer's)."""
        entries = [e for e in (value or "").split(",") if e.strip()]
        entries.extend(host for url in also if (host := urlsplit(url).hostname))
        return cls(entries)

    def _host_allowed(self, host: str) -> bool:
        host = host.lower().rstrip(".")
        return host in self.hosts or any(h.startswith(".") and (host == h[1:] or host.endswith(h))
                                         for h in self.hosts)

    def _address_allowed(self, address: IpAddress) -> bool:
        return not is_internal(address) or any(address in n for n in self.networks) or (
            isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None
            and any(address.ipv4_mapped in n for n in self.networks))

    def refuse_addresses(self, host: str, addresses: Iterable[str]) -> None:
        """Raise OutboundRefused unless the host is allowed by name or every address is allowed."""
        if self._host_allowed(host):
            return
        for text in addresses:
            address = ipaddress.ip_address(text.split("%", 1)[0])
            if not self._address_allowed(address):
                raise OutboundRefused(
                    f"the server does not call {host} ({address}): loopback, private, link-local and metadata "
                    f"addresses are refused for URLs given through the API; an operator who means it allows "
                    f"the host or its network with {ALLOW_SETTING} (e.g. {ALLOW_SETTING}={host} or "
                    f"{ALLOW_SETTING}={address}/32) and restarts `evalkit serve`")

    async def check_url(self, url: str) -> None:
        """Refuse `url` unless its host (resolved, every address) may be called."""
        parts = urlsplit(url)
        host = parts.hostname
        if parts.scheme not in ("http", "https") or not host:
            raise OutboundRefused(f"{url[:200]!r} is not an http(s) URL with a host")
        if self._host_allowed(host):
            return
        try:
            ipaddress.ip_address(host.split("%", 1)[0])
            addresses = [host]
        except ValueError:
            try:
                infos = await asyncio.get_running_loop().getaddrinfo(host, parts.port or 443,
                                                                     type=socket.SOCK_STREAM)
            except OSError as exc:
                raise OutboundRefused(f"the host {host} of {url[:200]} does not resolve ({exc}); "
                                      "check the URL") from exc
            addresses = [str(info[4][0]) for info in infos]
        self.refuse_addresses(host, addresses)

    def session(self, **options: Any) -> aiohttp.ClientSession:
        """An aiohttp session whose every request (and redirect) is checked against this policy."""
        async def on_request_start(_session: aiohttp.ClientSession, _context: SimpleNamespace,
                                   params: aiohttp.TraceRequestStartParams) -> None:
            await self.check_url(str(params.url))

        async def on_request_redirect(_session: aiohttp.ClientSession, _context: SimpleNamespace,
                                      params: aiohttp.TraceRequestRedirectParams) -> None:
            # Fired before a redirect is followed (on_request_start is not fired again for it).
            location = params.response.headers.get("Location") or params.response.headers.get("URI")
            if location:
                await self.check_url(str(params.url.join(URL(location))))

        trace = aiohttp.TraceConfig()
        trace.on_request_start.append(on_request_start)
        trace.on_request_redirect.append(on_request_redirect)
        connector = aiohttp.TCPConnector(resolver=_CheckingResolver(self))
        return aiohttp.ClientSession(connector=connector, trace_configs=[trace], **options)


class _CheckingResolver(AbstractResolver):
    """The default resolver, refusing what the policy refuses: the addresses connected to are the
    ones checked."""

    def __init__(self, policy: OutboundPolicy) -> None:
        self.policy = policy
        self.inner = aiohttp.ThreadedResolver()

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        results = await self.inner.resolve(host, port, family)
        self.policy.refuse_addresses(host, [r["host"] for r in results])
        return results

    async def close(self) -> None:
        await self.inner.close()
