"""Client ID metadata documents (issue #31): a URL whose host is this machine or its network,
in any spelling, is refused before anything connects; the fetch has one deadline (a document
trickled a byte at a time cannot hold /authorize) and a size cap; and a client registered by
document counts under the clients' cap like any other."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from pcp_cli.mcp.audit import read_audit
from tests.mcp.oauth_inprocess import (
    REDIRECT,
    authorize_url,
    door,
    json_answer,
    pkce,
    tls_server,
)

pytestmark = pytest.mark.anyio


def reasons(store: Path) -> list[str]:
    return [r["params"].get("reason", "") for r in read_audit(store)
            if r["tool"] == "oauth_authorize" and r["outcome"] == "refused"]


@pytest.fixture
def listener() -> Any:
    """A plain TCP port on 127.0.0.1 that notes every connection made to it."""
    sock = socket.create_server(("127.0.0.1", 0))
    seen: list[str] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            seen.append("connected")
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    yield sock.getsockname()[1], seen
    sock.close()


@pytest.mark.parametrize("host", [
    "127.1", "2130706433", "0x7f000001", "0177.0.0.1", "0", "127.0.0.1", "localhost",
    "[::1]", "[::ffff:127.0.0.1]", "10.0.0.1", "169.254.169.254", "100.64.0.1"])
async def test_a_document_url_inside_the_machine_or_network_is_refused_unfetched(
        tmp_path: Path, host: str, listener: Any) -> None:
    port, seen = listener
    url = f"https://{host}:{port}/oauth/client.json"
    async with door(tmp_path) as d:
        answer = await d.http().get(authorize_url(url, pkce()[1]))
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "invalid_request"
    assert any("is a private address" in r for r in reasons(d.store)), reasons(d.store)
    assert seen == []  # nothing connected


async def test_a_trickled_document_meets_one_deadline(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    def trickle(path: str, send: Any) -> None:
        send(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n")
        for _ in range(300):  # a minute, a byte at a time
            send(b" ")
            time.sleep(0.2)

    with tls_server(tmp_path, trickle) as tls:
        monkeypatch.setenv("SSL_CERT_FILE", str(tls.cert))
        monkeypatch.setenv("PCP_OAUTH_METADATA_LOOPBACK", "1")
        async with door(tmp_path) as d:
            d.app.state.pcp_oauth.metadata_deadline = 1.0
            with anyio.fail_after(30):
                answer = await d.http().get(authorize_url(tls.base + "/c.json", pkce()[1]))
            assert answer.status_code == 400
            assert any("not fetched within 1 s" in r for r in reasons(d.store))
            # a second try at once is not fetched again (the failure is kept a while)
            with anyio.fail_after(30):
                again = await d.http().get(authorize_url(tls.base + "/c.json", pkce()[1]))
            assert again.status_code == 400 and tls.connections == ["/c.json"]


async def test_a_document_declared_too_big_is_not_read(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    def huge(path: str, send: Any) -> None:
        send(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000"
             b"\r\n\r\n{")
        time.sleep(30)

    with tls_server(tmp_path, huge) as tls:
        monkeypatch.setenv("SSL_CERT_FILE", str(tls.cert))
        monkeypatch.setenv("PCP_OAUTH_METADATA_LOOPBACK", "1")
        async with door(tmp_path) as d:
            with anyio.fail_after(20):
                answer = await d.http().get(authorize_url(tls.base + "/c.json", pkce()[1]))
            assert answer.status_code == 400
            assert any("over 5120 bytes" in r for r in reasons(d.store))


async def test_a_client_registered_by_document_counts_under_the_cap(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def document(path: str) -> dict[str, Any]:
        return {"client_id": tls.base + path, "client_name": "Doc\x1b[31m client",
                "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none",
                "logo_uri": "https://x.example/" + "l" * 3000}

    with tls_server(tmp_path, json_answer(document)) as tls:
        monkeypatch.setenv("SSL_CERT_FILE", str(tls.cert))
        monkeypatch.setenv("PCP_OAUTH_METADATA_LOOPBACK", "1")
        async with door(tmp_path) as d:
            first = await d.http().get(authorize_url(tls.base + "/a.json", pkce()[1]))
            assert first.status_code == 302, first.text
            kept = json.loads((d.store / ".pcp" / "oauth-clients.json").read_text())["clients"]
            entry = kept[tls.base + "/a.json"]
            assert entry["client_name"] == "Doc\\x1b[31m client"
            assert "logo_uri" not in entry["metadata"]
            clients = {f"c{n}": {"client_name": "x", "registered_at": "2026-01-01T00:00:00.000Z",
                                 "metadata": {"client_id": f"c{n}", "redirect_uris": [REDIRECT]}}
                       for n in range(200)}
            (d.store / ".pcp" / "oauth-clients.json").write_text(json.dumps(
                {"version": 1, "clients": clients}))
            state = json.loads((d.store / ".pcp" / "oauth.json").read_text())
            state["grants"] = {f"g{n}": {"oauth_client": f"c{n}"} for n in range(200)}
            (d.store / ".pcp" / "oauth.json").write_text(json.dumps(state))
            full = await d.http().get(authorize_url(tls.base + "/b.json", pkce()[1]))
            assert full.status_code == 400
            assert any("200 clients are registered" in r for r in reasons(d.store))
