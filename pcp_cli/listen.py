"""A listening TCP socket for the servers pcp runs (`pcp serve --http`, `pcp console`).

Port 0 picks a free port; an address that cannot be had (in use, not this machine's) is a
UsageError naming it. Inheritable, so a server started on it by uvicorn keeps it.
"""

from __future__ import annotations

import socket

from pcp_cli.errors import UsageError


def listen(host: str, port: int, *, hint: str) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror}", hint=hint) from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock
