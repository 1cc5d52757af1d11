"""The OAuth doors of `pcp serve --http`, in process: the ASGI app `pcp serve --http` runs, over a
copy of the example store, driven with httpx over an ASGI transport (each request may come from
its own client address). What the server prints on its terminal (the approval codes) is kept in
`Door.said`. Nothing here waits on a clock."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import re
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import httpx2

from pcp_cli.mcp.audit import AuditLog
from pcp_cli.mcp.http import HttpOptions, build_app
from pcp_cli.mcp.store_backend import StoreBackend
from tests.mcp.http_helpers import make_store

BASE = "http://127.0.0.1:8765"
REDIRECT = "http://127.0.0.1:9/callback"
NAMESPACES = ["user:ada-lumen", "project:tidewatch"]


class Said:
    """The server's terminal: every line it printed."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, text: str) -> None:
        self.lines += text.splitlines()

    def flush(self) -> None:
        pass


@dataclass
class Door:
    store: Path
    app: Any
    said: Said
    clients: dict[tuple[str, int], httpx2.AsyncClient] = field(default_factory=dict)

    def http(self, address: str = "127.0.0.1") -> httpx2.AsyncClient:
        """A browser or client at `address` (its own cookies)."""
        key = (address, 40000 + len(self.clients))
        client = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=self.app, client=key),
                                    base_url=BASE, timeout=60)
        self.clients[key] = client
        return client

    def approval_code(self, request_id: str) -> str:
        for line in self.said.lines:
            if f"pcp grant approve {request_id}" in line:
                found = re.search(r"approval code (\d{4}-\d{4})", line)
                assert found, line
                return found.group(1)
        raise AssertionError(f"no approval code printed for {request_id}: {self.said.lines}")


@contextlib.asynccontextmanager
async def door(tmp_path: Path, **options: Any) -> AsyncIterator[Door]:
    store = make_store(tmp_path / "store")
    said = Said()
    app = build_app(store, StoreBackend(store), AuditLog(store),
                    HttpOptions(port=8765, **options), announce=said)
    opened = Door(store, app, said)
    async with app.router.lifespan_context(app):
        try:
            yield opened
        finally:
            for client in opened.clients.values():
                await client.aclose()


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    return verifier, challenge.decode().rstrip("=")


async def register(http: httpx2.AsyncClient, **extra: Any) -> httpx2.Response:
    body = {"client_name": "Test Assistant", "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            **extra}
    return await http.post("/register", json=body)


async def registered(http: httpx2.AsyncClient, **extra: Any) -> str:
    answer = await register(http, **extra)
    assert answer.status_code == 201, answer.text
    return str(answer.json()["client_id"])


def authorize_url(client_id: str, challenge: str, **extra: str) -> str:
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT,
              "code_challenge": challenge, "code_challenge_method": "S256", "state": "st8",
              "resource": BASE + "/mcp", **extra}
    return f"/authorize?{urlencode(params)}"


def field_of(page: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', page)
    assert found, f"no {name} in the consent page"
    return found.group(1)


async def open_consent(http: httpx2.AsyncClient, client_id: str,
                       challenge: str | None = None) -> tuple[str, str]:
    """GET /authorize, then the consent page it sends the browser to: (request id, csrf)."""
    first = await http.get(authorize_url(client_id, challenge or pkce()[1]))
    assert first.status_code == 302, first.text
    location = first.headers["location"]
    page = await http.get(location)
    assert page.status_code == 200, page.text
    return parse_qs(urlparse(location).query)["request"][0], field_of(page.text, "csrf")


async def consent(http: httpx2.AsyncClient, request_id: str, csrf: str, approval: str,
                  **extra: Any) -> httpx2.Response:
    """The consent form posted (with its CSRF cookie, from whichever address `http` is at)."""
    return await http.post("/consent", headers={"cookie": f"pcp_csrf={csrf}"}, data={
        "request": request_id, "csrf": csrf, "approval": approval, "scope": NAMESPACES,
        "decision": "approve", **extra})



async def tokens(d: Door, http: httpx2.AsyncClient) -> dict[str, Any]:
    """A new client's tokens, through the whole flow (its client id under `client`)."""
    client = await registered(http)
    verifier, challenge = pkce()
    request_id, csrf = await open_consent(http, client, challenge)
    back = await consent(http, request_id, csrf, d.approval_code(request_id))
    code = parse_qs(urlparse(back.headers["location"]).query)["code"][0]
    answer = await http.post("/token", data={
        "grant_type": "authorization_code", "code": code, "client_id": client,
        "redirect_uri": REDIRECT, "code_verifier": verifier, "resource": BASE + "/mcp"})
    assert answer.status_code == 200, answer.text
    return {"client": client, **answer.json()}


async def list_tools(http: httpx2.AsyncClient, bearer: str) -> httpx2.Response:
    return await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                           headers={"authorization": f"Bearer {bearer}",
                                    "accept": "application/json, text/event-stream",
                                    "mcp-protocol-version": "2025-06-18"})

# -- an https server on 127.0.0.1 for client ID metadata documents ----------------------------
@dataclass
class Tls:
    base: str
    cert: Path
    connections: list[str]


@contextlib.contextmanager
def tls_server(folder: Path, answer: Any) -> Any:
    """An https server on 127.0.0.1 (a self-signed certificate made with openssl): `answer(path,
    send)` writes the raw HTTP answer for `path` with `send(bytes)`. Yields a Tls whose
    `connections` lists each request path (or `closed early` when the client hung up)."""
    import shutil
    import socket
    import ssl
    import subprocess
    import threading

    import pytest

    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True,
                   timeout=60)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.create_server(("127.0.0.1", 0))
    seen: list[str] = []
    stop = threading.Event()

    def serve_one(raw: socket.socket) -> None:
        try:
            with context.wrap_socket(raw, server_side=True) as conn:
                head = b""
                while b"\r\n\r\n" not in head:
                    chunk = conn.recv(4096)
                    if not chunk:
                        return
                    head += chunk
                path = head.split(b" ")[1].decode()
                seen.append(path)
                try:
                    answer(path, conn.sendall)
                except OSError:
                    seen.append("closed early")
        except (OSError, ssl.SSLError):
            pass

    def accept() -> None:
        while not stop.is_set():
            try:
                raw, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve_one, args=(raw,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield Tls(f"https://127.0.0.1:{listener.getsockname()[1]}", cert, seen)
    finally:
        stop.set()
        listener.close()


def json_answer(document: Any) -> Any:
    """An `answer` for `tls_server`: `document(path)` as JSON (bytes as they are), or 404 when
    it returns None."""
    import json

    def answer(path: str, send: Any) -> None:
        found = document(path)
        body = b"{}" if found is None else found if isinstance(found, bytes) else json.dumps(
            found).encode()
        send(b"HTTP/1.1 " + (b"404 Not Found" if found is None else b"200 OK")
             + b"\r\ncontent-type: application/json\r\ncontent-length: "
             + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body)

    return answer
