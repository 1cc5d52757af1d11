"""What `pcp serve --http` is told, checked before anything heavy is imported: the address
(`[HOST:]PORT`), TLS and exposure, and the options the server runs with. A typo in a flag is a
usage error at once, not after the MCP SDK, Starlette and uvicorn have loaded (about two
seconds of a loaded machine's CPU): `pcp_cli.mcp.http` imports these from here.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from pcp_cli.errors import UsageError

DEFAULT_PORT = 8765


@dataclass(frozen=True)
class HttpOptions:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    tls_cert: str | None = None
    tls_key: str | None = None
    allowed_hosts: tuple[str, ...] = ()  # extra Host names to answer to (--allow-host)
    allowed_origins: tuple[str, ...] = ()  # browser origins allowed (--allow-origin)
    max_body_bytes: int = 1_000_000
    max_concurrent_per_client: int = 4
    call_timeout: float = 30.0
    public_url: str | None = None  # https://NAME when a TLS proxy or tunnel is in front

    @property
    def scheme(self) -> str:
        return "https" if self.tls_cert else "http"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_address(value: str) -> tuple[str, int]:
    """`[HOST:]PORT` (an IPv6 host in brackets) -> (host, port); host defaults to 127.0.0.1."""
    text = value.strip()
    host, port_text = "127.0.0.1", text
    if text.startswith("["):
        end = text.find("]")
        if end < 0 or text[end + 1: end + 2] != ":":
            raise _bad_address(value)
        host, port_text = text[1:end], text[end + 2:]
    elif ":" in text:
        host, _, port_text = text.rpartition(":")
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535 or not host:
        raise _bad_address(value)
    return host, int(port_text)


def _bad_address(value: str) -> UsageError:
    return UsageError(f"--http {value[:80]!r} is not [HOST:]PORT",
                      hint="e.g. --http 8765 or --http 127.0.0.1:8765")


def check_exposure(options: HttpOptions, *, allow_remote: bool, insecure_http: bool) -> None:
    """Refuse to expose the store by accident: a non-loopback address needs --allow-remote, and
    TLS (--tls-cert/--tls-key) unless --insecure-http."""
    if bool(options.tls_cert) != bool(options.tls_key):
        raise UsageError("--tls-cert and --tls-key go together", hint="pass both, or neither")
    for path in (options.tls_cert, options.tls_key):
        if path and not Path(path).is_file():
            raise UsageError(f"TLS file {path} does not exist", hint="pass a PEM file")
    if is_loopback(options.host):
        return
    if not allow_remote:
        raise UsageError(
            f"--http {options.host} would serve your context to other machines",
            hint="bind 127.0.0.1 (the default), or pass --allow-remote to mean it",
        )
    if not options.tls_cert and not insecure_http:
        raise UsageError(
            f"serving {options.host} without TLS would send tokens and pages in clear text",
            hint="pass --tls-cert and --tls-key, or --insecure-http (e.g. behind a TLS proxy)",
        )


