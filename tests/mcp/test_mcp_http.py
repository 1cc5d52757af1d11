"""`pcp serve --http` driven by the official Python SDK's streamable HTTP client (and plain HTTP
for what a client SDK hides: status codes and headers), against a real server subprocess on
127.0.0.1. The server is started once per module; every test issues its own tokens."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from pcp_cli.mcp.audit import read_audit
from pcp_cli.mcp.tools import READ_TOOLS
from tests.mcp.http_helpers import Running, make_store, pcp, running_server, token

pytestmark = pytest.mark.anyio

TIDEWATCH_PAGES = {"tidewatch-architecture", "conv-tidewatch-mobile"}
JSON_HEADERS = {"content-type": "application/json",
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2025-06-18"}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_store(tmp_path_factory.mktemp("http") / "store")


@pytest.fixture(scope="module")
def server(store: Path) -> Iterator[Running]:
    with running_server(store, "--max-body-bytes", "65536") as running:
        yield running


@asynccontextmanager
async def sdk_client(url: str, bearer: str | None, mode: str = "legacy",
                     headers: dict[str, str] | None = None) -> AsyncIterator[Any]:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    sent = dict(headers or {})
    if bearer:
        sent["Authorization"] = f"Bearer {bearer}"
    with anyio.fail_after(60):
        async with create_mcp_http_client(headers=sent) as http, Client(
            streamable_http_client(url, http_client=http), mode=mode, read_timeout_seconds=30,
        ) as client:
            yield client


def post(url: str, body: Any, bearer: str | None = None, **headers: str) -> httpx2.Response:
    sent = {**JSON_HEADERS, **{k.replace("_", "-"): v for k, v in headers.items()}}
    if bearer:
        sent["authorization"] = f"Bearer {bearer}"
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx2.post(url, content=data, headers=sent, timeout=30)


def call_body(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}


def refusals(store: Path) -> int:
    return sum(1 for r in read_audit(store) if r.get("tool") == "http_auth")


# -- tools over HTTP ------------------------------------------------------------------------------
@pytest.mark.slow  # among the default run's slowest (10-26 s): in the slow set
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_tools_listed_and_called_with_the_sdk_client(server, store, mode):
    secret = token(store, "claude-desktop")
    async with sdk_client(server.url, secret, mode=mode) as client:
        listing = await client.list_tools()
        assert {t.name for t in listing.tools} == set(READ_TOOLS)
        search = next(t for t in listing.tools if t.name == "pcp_search")
        assert search.input_schema["properties"]["limit"]["type"] == ["integer", "null"]
        result = await client.call_tool("pcp_search", {"query": "tide", "limit": None})
        assert not result.is_error
        assert result.structured_content["results"]
        # A pattern is narrowed to the grant, not answered with nothing.
        star = await client.call_tool("pcp_search", {"query": "tidewatch", "scopes": ["*"]})
        assert star.structured_content["results"] and "notices" not in star.structured_content
        profile = await client.call_tool("pcp_get_profile", {"format": "micro_prompt"})
        assert not profile.is_error
    calls = [r for r in read_audit(store) if r.get("client_id") == "claude-desktop"]
    assert {"pcp_search", "pcp_get_profile"} <= {r["tool"] for r in calls}


async def test_two_clients_see_only_their_own_grants(server, store):
    async with sdk_client(server.url, token(store, "tidewatch")) as agent, \
            sdk_client(server.url, token(store, "claude-desktop")) as desktop:
        mine = await agent.call_tool("pcp_list_scopes", {})
        theirs = await desktop.call_tool("pcp_list_scopes", {})
        assert [s["namespace"] for s in mine.structured_content["scopes"]] == [
            "project:tidewatch"]
        assert {s["namespace"] for s in theirs.structured_content["scopes"]} == {
            "user:ada-lumen", "project:tidewatch"}
        found = await agent.call_tool("pcp_search", {
            "query": "Ada tide", "limit": 25, "scopes": ["*"], "include_sensitive": True})
        assert {r["id"] for r in found.structured_content["results"]} <= TIDEWATCH_PAGES
        # One client's suppression never reaches the other's.
        hidden = await agent.call_tool("pcp_suppress_pages", {"ids": ["tidewatch-architecture"]})
        assert hidden.structured_content["suppressed"] == ["tidewatch-architecture"]
        gone = await agent.call_tool("pcp_read_pages", {"ids": ["tidewatch-architecture"]})
        assert gone.structured_content["not_found"] == ["tidewatch-architecture"]
        still = await desktop.call_tool("pcp_read_pages", {"ids": ["tidewatch-architecture"]})
        assert [p["page_id"] for p in still.structured_content["pages"]] == [
            "tidewatch-architecture"]


async def test_suppression_is_scoped_by_the_session_header(server, store):
    secret = token(store, "claude-desktop")
    async with sdk_client(server.url, secret, headers={"Pcp-Session-Id": "task-a"}) as a, \
            sdk_client(server.url, secret, headers={"Pcp-Session-Id": "task-b"}) as b:
        await a.call_tool("pcp_suppress_pages", {"ids": ["conv-tidewatch-mobile"]})
        in_a = await a.call_tool("pcp_read_pages", {"ids": ["conv-tidewatch-mobile"]})
        in_b = await b.call_tool("pcp_read_pages", {"ids": ["conv-tidewatch-mobile"]})
    assert in_a.structured_content["not_found"] == ["conv-tidewatch-mobile"]
    assert in_b.structured_content["not_found"] == []
    # The same context id on a new connection still has its suppression (stateless transport).
    async with sdk_client(server.url, secret, headers={"Pcp-Session-Id": "task-a"}) as again:
        later = await again.call_tool("pcp_read_pages", {"ids": ["conv-tidewatch-mobile"]})
    assert later.structured_content["not_found"] == ["conv-tidewatch-mobile"]
    bad = post(server.url, LIST, secret, pcp_session_id="no spaces allowed")
    assert bad.status_code == 400


async def test_a_read_cursor_keeps_its_meaning_across_requests(server, store):
    secret = token(store, "claude-desktop")
    first = post(server.url, call_body("pcp_read_pages", {"ids": ["tidewatch-architecture"],
                                                          "views": ["payload"]}), secret)
    data = first.json()["result"]["structuredContent"]
    assert first.status_code == 200 and data["pages"]
    # No cursor on a short page; a forged one is refused with a hint, over a fresh request.
    again = post(server.url, call_body("pcp_read_pages", {"ids": ["tidewatch-architecture"],
                                                          "cursor": "bm9wZQ"}), secret)
    assert again.json()["result"]["isError"] is True


# -- refusals -------------------------------------------------------------------------------------
@pytest.mark.slow  # among the default run's slowest (10-26 s): in the slow set
async def test_no_token_wrong_token_and_revoked_token_are_refused(server, store):
    before = refusals(store)
    missing = post(server.url, LIST)
    assert missing.status_code == 401
    challenge = missing.headers["www-authenticate"]
    assert challenge.startswith("Bearer ") and "resource_metadata=" in challenge
    wrong = post(server.url, LIST, "pcp_000000000000_not-a-real-secret")
    assert wrong.status_code == 401 and 'error="invalid_token"' in wrong.headers[
        "www-authenticate"]
    assert post(server.url, LIST, "garbage").status_code == 401

    secret = token(store, "tidewatch")
    assert post(server.url, LIST, secret).status_code == 200
    pcp(store, "grant", "revoke-tokens", "tidewatch")
    assert post(server.url, LIST, secret).status_code == 401  # at once, no restart

    first = token(store, "tidewatch")
    second = token(store, "tidewatch", "--rotate")
    assert post(server.url, LIST, first).status_code == 401
    assert post(server.url, LIST, second).status_code == 200
    assert refusals(store) == before + 5

    with pytest.raises(Exception):  # noqa: B017  -- the SDK client cannot connect either
        async with sdk_client(server.url, first) as client:
            await client.list_tools()


@pytest.mark.slow  # among the default run's slowest (10-26 s): in the slow set
async def test_a_removed_grant_locks_its_token_out(server, store):
    pcp(store, "grant", "add", "temp", "--scope", "project:tidewatch")
    secret = token(store, "temp")
    assert post(server.url, LIST, secret).status_code == 200
    manifest = (store / "pcp.yaml").read_text()
    pcp(store, "grant", "remove", "temp")
    assert post(server.url, LIST, secret).status_code == 401
    after = (store / "pcp.yaml").read_text()
    assert "# who may see what" in manifest and "# end of grants" in after


async def test_bad_origin_and_host_are_refused(server, store):
    secret = token(store, "claude-desktop")
    evil = post(server.url, LIST, secret, origin="http://evil.example")
    assert evil.status_code == 403
    assert post(server.url, LIST, secret, host="evil.example").status_code == 421
    local = post(server.url, LIST, secret, origin="http://localhost:3000")
    assert local.status_code == 200


async def test_oversized_and_malformed_requests_get_errors_and_serving_goes_on(server, store):
    secret = token(store, "claude-desktop")
    big = call_body("pcp_search", {"query": "x" * 100_000})
    assert post(server.url, big, secret).status_code == 413
    broken = post(server.url, b'{"jsonrpc": "2.0", "id": 1, "method": ', secret)
    assert broken.status_code == 400 and broken.json()["error"]["code"] == -32700
    not_rpc = post(server.url, [1, 2, 3], secret)
    assert 400 <= not_rpc.status_code < 500
    assert httpx2.get(server.base + "/elsewhere", timeout=10).status_code == 404
    async with sdk_client(server.url, secret) as client:
        result = await client.call_tool("pcp_stats", {})
        assert not result.is_error
    assert server.process.poll() is None


async def test_protected_resource_metadata_is_published(server):
    response = httpx2.get(server.base + "/.well-known/oauth-protected-resource/mcp", timeout=10)
    assert response.status_code == 200
    document = response.json()
    assert document["resource"] == server.url
    assert document["bearer_methods_supported"] == ["header"]
    assert document["authorization_servers"] == [server.base]  # its own (issue #24)


# -- start-up refusals (no server runs) -----------------------------------------------------------
@pytest.mark.parametrize(("args", "expected"), [
    (["--http", "0.0.0.0:0"], "--allow-remote"),
    (["--http", "0.0.0.0:0", "--allow-remote"], "--insecure-http"),
    (["--http", "nonsense"], "[HOST:]PORT"),
    (["--http", "8765", "--client-id", "claude-desktop"], "--client-id is for stdio"),
    (["--allow-remote"], "only applies with --http"),
])
def test_unsafe_or_wrong_serve_options_are_usage_errors(store, args, expected):
    out = pcp(store, "serve", *args, check=False)
    assert out.returncode == 2, out.stderr
    assert expected in out.stderr and "Traceback" not in out.stderr


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_tls_serves_https(store, tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    secret = token(store, "claude-desktop")
    with running_server(store, "--tls-cert", str(cert), "--tls-key", str(key)) as tls:
        assert tls.url.startswith("https://")
        answer = httpx2.post(tls.url, json=LIST, timeout=30, verify=False,
                             headers={**JSON_HEADERS, "authorization": f"Bearer {secret}"})
        assert answer.status_code == 200 and answer.json()["result"]["tools"]
        challenge = httpx2.post(tls.url, json=LIST, timeout=30, verify=False,
                                headers=JSON_HEADERS).headers["www-authenticate"]
        assert 'resource_metadata="https://' in challenge


@pytest.mark.slow  # among the default run's slowest (10-26 s): in the slow set
async def test_a_flood_of_bad_tokens_is_audited_up_to_the_cap_and_counted(tmp_path, monkeypatch):
    """Refusals are recorded one by one up to PCP_AUDIT_REFUSALS_PER_MINUTE; the rest are
    counted in the next record (here: the one written when the server stops), so a flood can
    neither fill the disk nor go unseen, and the hash chain stays whole."""
    store = make_store(tmp_path / "flood")
    monkeypatch.setenv("PCP_AUDIT_REFUSALS_PER_MINUTE", "3")
    with running_server(store) as running:
        for n in range(10):
            assert post(running.url, LIST, f"pcp_000000000000_wrong-{n}").status_code == 401
        assert refusals(store) == 3
    records = [r for r in read_audit(store) if r.get("tool") == "http_auth"]
    assert len(records) == 4
    assert [r["params"].get("not_recorded") for r in records] == [None, None, None, 7]
    assert pcp(store, "audit", "--verify", check=False).returncode == 0
