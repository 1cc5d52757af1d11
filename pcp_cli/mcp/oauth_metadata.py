"""Fetching a client ID metadata document (`pcp_cli.mcp.oauth`), without letting its URL reach
inside the machine or hold the server.

The URL comes from whoever calls /authorize, so the fetch:

1. resolves the host name first, and refuses it unless every address it resolves to is a
   global unicast one (no loopback, private, link-local, shared, reserved or unspecified
   address, in any spelling: `127.1`, `2130706433`, `0x7f000001`, `0177.0.0.1`, `0`,
   `[::ffff:127.0.0.1]` all resolve to one);
2. connects to the very address it checked (the URL's host goes in `Host` and TLS SNI, and the
   certificate is verified against it), so a second DNS answer cannot move the connection;
3. has one deadline, `DEADLINE` seconds, for all of it (resolving, connecting, TLS, headers and
   body), not a timeout per read that a document trickled a byte at a time would never meet;
4. reads at most `MAX_BYTES` (a larger `Content-Length` is refused before reading), follows no
   redirect, uses no proxy from the environment.

`PCP_OAUTH_METADATA_LOOPBACK=1` lets the tests serve a document on 127.0.0.1.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from urllib.parse import urlsplit

import anyio

MAX_BYTES = 5 * 1024  # the CIMD draft's suggested cap
DEADLINE = 5.0


class Refused(Exception):
    """The document was not fetched or not usable: why, in a few words (for the audit)."""


def public_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """A global unicast address (an IPv4 address inside IPv6 is judged as itself)."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = address.ipv4_mapped or address.sixtofour or (
            address.teredo[1] if address.teredo else None)
        if inner is not None and not public_address(inner):
            return False
    return address.is_global and not address.is_multicast


def _allowed(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if public_address(address):
        return True
    return os.environ.get("PCP_OAUTH_METADATA_LOOPBACK") == "1" and address.is_loopback


async def fetch(url: str, *, deadline: float = DEADLINE) -> bytes:
    """The document at `url` (https only), or Refused."""
    parts = urlsplit(url)
    try:
        port = parts.port or 443
    except ValueError:
        raise Refused("its URL has a bad port") from None
    host = parts.hostname or ""
    if parts.scheme != "https" or not host or parts.username or parts.password:
        raise Refused("its URL is not https://HOST/PATH")
    try:
        with anyio.fail_after(deadline):
            return await _fetch(parts.path or "/", parts.query, host, port)
    except TimeoutError:
        raise Refused(f"not fetched within {deadline:g} s") from None


async def _fetch(path: str, query: str, host: str, port: int) -> bytes:
    import ssl

    import httpx2

    try:
        found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        raise Refused(f"its host {host[:100]} does not resolve") from None
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in found]
    refused = [a for a in addresses if not _allowed(a)]
    if not addresses or refused:
        raise Refused(f"its host {host[:100]} is a private address "
                      f"({refused[0] if refused else 'none'})")
    address = addresses[0]
    literal = f"[{address}]" if address.version == 6 else str(address)
    named = f"[{host}]" if ":" in host else host
    try:
        async with httpx2.AsyncClient(
                timeout=DEADLINE, follow_redirects=False, trust_env=False,
                verify=ssl.create_default_context()) as http, http.stream(
                "GET", f"https://{literal}:{port}{path}" + (f"?{query}" if query else ""),
                headers={"accept": "application/json",
                         "host": named if port == 443 else f"{named}:{port}"},
                extensions={"sni_hostname": host}) as answer:
            if answer.status_code != 200:
                raise Refused(f"HTTP {answer.status_code}")
            declared = answer.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > MAX_BYTES:
                raise Refused(f"over {MAX_BYTES} bytes")
            body = bytearray()
            async for chunk in answer.aiter_bytes():
                body.extend(chunk)
                if len(body) > MAX_BYTES:
                    raise Refused(f"over {MAX_BYTES} bytes")
            return bytes(body)
    except (httpx2.HTTPError, httpx2.InvalidURL) as exc:
        raise Refused(f"unreadable ({exc.__class__.__name__})") from None
