"""Connections that cannot lock clients out of `pcp serve --http` (issue #26): sockets that send
half a request head and stop, against a real server process over real sockets; the waiting
room's rule on its own, in process; and connections that send each response at once (issue
#25), on the server `pcp serve --http` runs, in process."""

from __future__ import annotations

import select
import socket
import threading
import time
from pathlib import Path

import httpx2
import pytest

from pcp_cli.mcp.audit import AuditLog
from pcp_cli.mcp.connections import HEADER_TIMEOUT, DoorLimits, WaitingRoom
from pcp_cli.mcp.http import HttpOptions, bind, build_app, http_server
from pcp_cli.mcp.store_backend import StoreBackend
from pcp_cli.mcp.tokens import issue_token
from tests.mcp.http_helpers import make_store, running_server, token

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
SEARCH = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
          "params": {"name": "pcp_search", "arguments": {"query": "tidewatch", "limit": 2}}}
STATS = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "pcp_stats", "arguments": {}}}
HALF_HEAD = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAcc"
SLOW_SOCKETS = 75


def _headers(secret: str) -> dict[str, str]:
    return {"authorization": f"Bearer {secret}", "accept": "application/json, text/event-stream",
            "content-type": "application/json", "mcp-protocol-version": "2025-06-18"}


def _closed_by_server(sock: socket.socket) -> bool:
    """True once the server has closed the socket (whatever it wrote first is read away)."""
    while select.select([sock], [], [], 0)[0]:
        try:
            if not sock.recv(4096):
                return True
        except OSError:
            return True
    return False


@pytest.mark.slow
def test_half_sent_requests_neither_lock_out_a_client_nor_stay_open(tmp_path: Path) -> None:
    store = make_store(tmp_path / "store")
    secret = token(store, "claude-desktop")
    with running_server(store) as server:
        host, port = server.base.split("//")[1].split(":")
        slow = []
        for _ in range(SLOW_SOCKETS):
            sock = socket.create_connection((host, int(port)), timeout=10)
            sock.sendall(HALF_HEAD)
            slow.append(sock)
        try:
            with httpx2.Client(base_url=server.base, timeout=30) as client:
                for body in (LIST, SEARCH, LIST):
                    answer = client.post("/mcp", json=body, headers=_headers(secret))
                    assert answer.status_code == 200, answer.text
                    assert "error" not in answer.json()
                assert client.post("/mcp", json=SEARCH, headers=_headers(secret)).json()[
                    "result"]["structuredContent"]["results"]
            # Every slow socket is closed by the server: the oldest to make room, the rest
            # once the header timeout has passed.
            deadline = time.monotonic() + HEADER_TIMEOUT + 30
            open_ = list(slow)
            while open_ and time.monotonic() < deadline:
                open_ = [s for s in open_ if not _closed_by_server(s)]
                time.sleep(0.2)
            assert not open_, f"{len(open_)} of {SLOW_SOCKETS} half-sent requests still open"
        finally:
            for sock in slow:
                sock.close()
        assert server.process.poll() is None


@pytest.mark.slow
def test_a_request_without_a_token_does_not_keep_its_connection(tmp_path: Path) -> None:
    """Only an authenticated request keeps its connection alive for the next one; a request
    head over 16 KiB is refused and closed."""
    store = make_store(tmp_path / "store")
    secret = token(store, "claude-desktop")
    with running_server(store) as server, httpx2.Client(base_url=server.base,
                                                        timeout=30) as client:
        refused = client.post("/mcp", json=LIST, headers={**_headers(secret),
                                                          "authorization": "Bearer nope"})
        assert refused.status_code == 401 and refused.headers["connection"] == "close"
        metadata = client.get("/.well-known/oauth-protected-resource/mcp")
        assert metadata.status_code == 200 and metadata.headers["connection"] == "close"
        served = client.post("/mcp", json=LIST, headers=_headers(secret))
        assert served.status_code == 200 and served.headers.get("connection") != "close"
        host, port = server.base.split("//")[1].split(":")
        with socket.create_connection((host, int(port)), timeout=30) as big:
            big.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * 20_000)
            answer = b""
            while chunk := big.recv(4096):  # until the server closes it
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 400 ")


class _Conn:
    def __init__(self, room: WaitingRoom, name: str) -> None:
        self.room, self.name, self.closed = room, name, False

    def too_slow(self) -> None:
        self.closed = True
        self.room.leave(self)


def test_the_waiting_room_closes_the_longest_waiting_of_a_peer_then_of_all() -> None:
    room = WaitingRoom(DoorLimits(waiting_per_peer=2, waiting_total=3))
    a1, a2, a3 = (_Conn(room, f"a{i}") for i in range(3))
    for conn in (a1, a2, a3):
        room.enter(conn, "10.0.0.1")
    assert (a1.closed, a2.closed, a3.closed) == (True, False, False)
    b1, c1 = _Conn(room, "b1"), _Conn(room, "c1")
    room.enter(b1, "10.0.0.2")  # three waiting: the total is reached, nobody closed
    assert not any(c.closed for c in (a2, a3, b1))
    room.enter(c1, "10.0.0.3")  # four: the longest waiting of all goes
    assert a2.closed and not (a3.closed or b1.closed or c1.closed)
    room.leave(a3)  # its request head arrived
    assert len(room) == 2


def test_the_server_sends_each_response_without_waiting_for_an_ack(tmp_path: Path) -> None:
    """Every accepted connection has Nagle's algorithm off (TCP_NODELAY): the server writes a
    response's head and body in two sends, and with Nagle on the body waited for the client's
    delayed ACK, ~40 ms per call on a kept-alive connection. Checked on the server's own end
    of a kept-alive connection of the uvicorn server `pcp serve --http` runs."""
    store = make_store(tmp_path / "store")
    secret, _ = issue_token(store, "claude-desktop")
    options = HttpOptions(port=0)
    server = http_server(build_app(store, StoreBackend(store), AuditLog(store), options),
                         options)
    listening = bind(options)
    port = listening.getsockname()[1]
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)
        with httpx2.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            for body in (LIST, STATS, LIST):
                answer = client.post("/mcp", json=body, headers=_headers(secret))
                assert answer.status_code == 200 and "error" not in answer.json(), answer.text
            connections = list(server.server_state.connections)
            assert len(connections) == 1  # the three requests kept one connection
            ours = connections[0].transport.get_extra_info("socket")
            assert ours.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        listening.close()
