"""The connections `pcp serve --http` accepts, before a request reaches the ASGI app.

uvicorn counts every open connection against `limit_concurrency` and has no timeout for reading
a request head, so 64 sockets that sent half a request head and stopped made every client get
503 for as long as they stayed open. The protocol here is uvicorn's h11 protocol plus:

- **A request head must be complete within `HEADER_TIMEOUT` seconds** of the connection opening
  (or, on a kept-alive connection, of the next request's first byte); otherwise the server
  answers 408 and closes the connection.
- **Few connections wait for a request head**: at most `WAITING_PER_PEER` from one address and
  `WAITING_TOTAL` in all. Past that, the one that has waited longest is closed. A client that
  sends its request at once waits a few milliseconds, so it gets through however many slow
  sockets are open; a slow one is closed to make room.
- **The connection ceiling (`MAX_CONNECTIONS`, uvicorn's 503) is far above the waiting room**,
  so what is left of it belongs to connections that have sent a request. The ASGI app closes
  every connection whose request was not authenticated once it is answered
  (`close_unless_authenticated`), so only clients with a token keep connections open.
- **Every write leaves at once (`TCP_NODELAY`).** uvicorn writes a response's head and its body
  in two sends. With Nagle's algorithm on, the body waited for the client's ACK of the head, and
  a client on a kept-alive connection delays that ACK (Linux: ~40 ms): a call made soon after
  the previous one on the same connection took 40-50 ms instead of 2-5. asyncio turns Nagle
  off by itself only for a socket made with `proto=IPPROTO_TCP`, which a listening socket
  passed in (`http.bind`'s, or one from a service manager) need not be; so the protocol does it
  for every connection.

uvicorn is imported when `protocol_class` is called, by `pcp serve --http` only.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

HEADER_TIMEOUT = 10.0
WAITING_PER_PEER = 16
WAITING_TOTAL = 128
MAX_CONNECTIONS = 512
KEEP_ALIVE = 30

_REQUEST_TIMEOUT = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
                    b"connection: close\r\ncontent-length: 32\r\n\r\n"
                    b"the request head came too slowly")


@dataclass(frozen=True)
class DoorLimits:
    header_timeout: float = HEADER_TIMEOUT
    waiting_per_peer: int = WAITING_PER_PEER
    waiting_total: int = WAITING_TOTAL


class WaitingRoom:
    """The connections that have not yet sent a whole request head, oldest first."""

    def __init__(self, limits: DoorLimits) -> None:
        self.limits = limits
        self._waiting: dict[Any, str] = {}  # connection -> peer address (dicts keep order)

    def __len__(self) -> int:
        return len(self._waiting)

    def enter(self, connection: Any, peer: str) -> None:
        """Admit a new connection; close the longest-waiting one of its peer (or of all) when
        this one makes too many."""
        self._waiting[connection] = peer
        same_peer = [c for c, p in self._waiting.items() if p == peer]
        if len(same_peer) > self.limits.waiting_per_peer:
            same_peer[0].too_slow()
        elif len(self._waiting) > self.limits.waiting_total:
            next(iter(self._waiting)).too_slow()

    def leave(self, connection: Any) -> None:
        self._waiting.pop(connection, None)


def protocol_class(limits: DoorLimits | None = None) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with the header timeout and the waiting room (one room per
    class, so per server)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    room = WaitingRoom(limits or DoorLimits())
    timeout = room.limits.header_timeout

    class DoorProtocol(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None
        _waiting = False

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            send_at_once(transport)
            self._await_head()
            self._waiting = True
            room.enter(self, self.client[0] if self.client else "")

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.transport.is_closing():
                self._head_done()
            elif self.conn.their_state is h11.IDLE:  # a request head is still to come
                self._await_head()
            else:
                self._head_done()

        def connection_lost(self, exc: Exception | None) -> None:
            self._head_done()
            super().connection_lost(exc)

        def _await_head(self) -> None:
            if self._head_timer is None:
                self._head_timer = self.loop.call_later(timeout, self.too_slow)

        def _head_done(self) -> None:
            if self._waiting:
                room.leave(self)
                self._waiting = False
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def too_slow(self) -> None:
            """No whole request head in time (or room made for a newer connection): 408."""
            self._head_done()
            if not self.transport.is_closing():
                self.transport.write(_REQUEST_TIMEOUT)
                self.transport.close()

    return DoorProtocol


def send_at_once(transport: asyncio.BaseTransport) -> None:
    """Turn Nagle's algorithm off on a TCP connection (see the module docstring)."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):  # already gone: nothing left to send on
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def close_unless_authenticated(app: ASGIApp) -> ASGIApp:
    """Answer `Connection: close` to every request the guard did not authenticate (it sets
    `scope["pcp.client"]`), so a connection without a token never lingers kept alive."""

    async def door(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return

        async def send_closing(message: Message) -> None:
            if message["type"] == "http.response.start" and "pcp.client" not in scope:
                headers = [(k, v) for k, v in message.get("headers", [])
                           if k.lower() != b"connection"]
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        await app(scope, receive, send_closing)

    return door


def replaying(receive: Receive, body: bytes, more_body: bool = False) -> Receive:
    """A `receive` that gives `body` (already read from `receive`) first, then whatever
    `receive` still has: for a layer that had to read the request body before the app."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": more_body}

    return replay
