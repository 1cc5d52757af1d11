"""Over HTTP each MCP session of a client is its own context (issue #31): the answer to
`initialize` carries an `Mcp-Session-Id`, the client sends it back, and a page one chat hid with
`pcp_suppress_pages` stays visible to that client's other chats. In process: the ASGI app `pcp
serve --http` runs, driven by the MCP Python SDK's client and by hand."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from pcp_cli.mcp.audit import AuditLog
from pcp_cli.mcp.http import HttpOptions, build_app
from pcp_cli.mcp.store_backend import StoreBackend
from pcp_cli.mcp.tokens import issue_token
from tests.mcp.http_helpers import make_store

pytestmark = pytest.mark.anyio
BASE = "http://127.0.0.1:8765"
PAGE = "conv-tidewatch-mobile"


@contextlib.asynccontextmanager
async def serving(tmp_path: Path) -> AsyncIterator[tuple[Any, Path]]:
    store = make_store(tmp_path / "store")
    app = build_app(store, StoreBackend(store), AuditLog(store), HttpOptions(port=8765))
    async with app.router.lifespan_context(app):
        yield app, store


@contextlib.asynccontextmanager
async def chat(app: Any, secret: str, headers: dict[str, str] | None = None
               ) -> AsyncIterator[Any]:
    """One connection of the MCP Python SDK's client (a chat), over the ASGI app."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app), base_url=BASE, timeout=60,
            headers={"authorization": f"Bearer {secret}", **(headers or {})}) as http, Client(
            streamable_http_client(BASE + "/mcp", http_client=http), mode="legacy") as client:
        yield client


async def hidden(client: Any) -> bool:
    read = await client.call_tool("pcp_read_pages", {"ids": [PAGE]})
    return read.structured_content["not_found"] == [PAGE]


async def test_each_chat_of_one_client_has_its_own_suppressions(tmp_path: Path) -> None:
    async with serving(tmp_path) as (app, store):
        secret, _ = issue_token(store, "claude-desktop")
        async with chat(app, secret) as first, chat(app, secret) as second:
            done = await first.call_tool("pcp_suppress_pages", {"ids": [PAGE]})
            assert "for this MCP session" in done.structured_content["note"]
            assert await hidden(first)
            assert not await hidden(second)  # the other chat never hid it
            assert await hidden(first)  # and the first still has it hidden


def raw(app: Any) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=BASE,
                              timeout=60)


def headers(secret: str, **more: str) -> dict[str, str]:
    return {"authorization": f"Bearer {secret}", "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2025-06-18", **more}


INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "by-hand", "version": "1"}}}


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}


async def test_the_session_id_is_issued_at_initialize_and_delete_ends_it(tmp_path: Path) -> None:
    async with serving(tmp_path) as (app, store), raw(app) as http:
        secret, _ = issue_token(store, "claude-desktop")
        other, _ = issue_token(store, "tidewatch")
        opened = await http.post("/mcp", json=INITIALIZE, headers=headers(secret))
        sid = opened.headers["mcp-session-id"]
        assert opened.status_code == 200 and len(sid) >= 32
        listed = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                                 headers=headers(secret))
        assert "mcp-session-id" not in listed.headers  # issued for initialize only
        mine = headers(secret, **{"mcp-session-id": sid})
        await http.post("/mcp", json=call("pcp_suppress_pages", {"ids": [PAGE]}), headers=mine)

        async def not_found(h: dict[str, str]) -> list[str]:
            answer = await http.post("/mcp", json=call("pcp_read_pages", {"ids": [PAGE]}),
                                     headers=h)
            return answer.json()["result"]["structuredContent"]["not_found"]

        assert await not_found(mine) == [PAGE]
        assert await not_found(headers(secret)) == []  # no session: the default context
        # another client naming the same session id has its own context
        assert await not_found(headers(other, **{"mcp-session-id": sid})) == []
        ended = await http.delete("/mcp", headers=mine)
        assert ended.status_code == 204
        assert await not_found(mine) == []  # a session id not known: nothing suppressed
        bad = await http.post("/mcp", json=INITIALIZE,
                              headers=headers(secret, **{"mcp-session-id": "a b"}))
        assert bad.status_code == 400
