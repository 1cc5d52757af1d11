"""The HTTP guard's caps that need a slow backend to show: requests in flight per client, and
the request-time cap. In process (the ASGI app over an in-memory backend whose pcp_stats blocks
until released), so nothing depends on timing beyond generous bounds."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import httpx2
import pytest

from pcp_cli.mcp.audit import AuditLog, read_audit
from pcp_cli.mcp.http import HttpOptions, build_app
from pcp_cli.mcp.tokens import issue_token
from tests.mcp.fake_backend_server import FakeBackend
from tests.mcp.http_helpers import make_store

pytestmark = pytest.mark.anyio

HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream",
           "mcp-protocol-version": "2025-06-18", "host": "127.0.0.1:8765"}
STATS = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
         "params": {"name": "pcp_stats", "arguments": {}}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class SlowBackend(FakeBackend):
    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.entered = threading.Event()

    def stats(self, grant, *, suppressed, **_):
        self.entered.set()
        self.release.wait(timeout=20)
        return {"total": 0}


async def _client(tmp_path: Path, options: HttpOptions):
    store = make_store(tmp_path / "store")
    secret, _ = issue_token(store, "claude-desktop")
    backend = SlowBackend()
    app = build_app(store, backend, AuditLog(store), options)
    return store, backend, app, {**HEADERS, "authorization": f"Bearer {secret}"}


async def test_requests_beyond_the_per_client_cap_get_429(tmp_path: Path) -> None:
    store, backend, app, headers = await _client(
        tmp_path, HttpOptions(port=8765, max_concurrent_per_client=1, call_timeout=30))
    async with app.router.lifespan_context(app), httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1:8765") as http:
        answers: list[httpx2.Response] = []

        async def slow() -> None:
            answers.append(await http.post("/mcp", json=STATS, headers=headers, timeout=30))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(slow)
                await anyio.to_thread.run_sync(backend.entered.wait, 20)
                second = await http.post("/mcp", json=STATS, headers=headers)
                assert second.status_code == 429 and second.headers["retry-after"] == "1"
                backend.release.set()
        assert answers[0].status_code == 200
        # The cap counts requests in flight: once the first is done, the next gets through.
        assert (await http.post("/mcp", json=STATS, headers=headers)).status_code == 200


async def test_a_call_past_the_time_cap_is_an_error_and_serving_goes_on(tmp_path: Path) -> None:
    store, backend, app, headers = await _client(
        tmp_path, HttpOptions(port=8765, call_timeout=0.5))
    async with app.router.lifespan_context(app), httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1:8765") as http:
        with anyio.fail_after(30):
            slow = await http.post("/mcp", json=STATS, headers=headers)
        result = slow.json()["result"]
        assert result["isError"] is True and "took longer than 0.5s" in result[
            "content"][0]["text"]
        backend.release.set()
        listed = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 8,
                                               "method": "tools/list"}, headers=headers)
        assert listed.status_code == 200
    # The abandoned call finishes in the background and is audited like any other.
    with anyio.fail_after(20):
        while not [r for r in read_audit(store) if r.get("tool") == "pcp_stats"]:
            await anyio.sleep(0.05)


async def test_get_is_405_and_takes_none_of_the_clients_requests_in_flight(
        tmp_path: Path) -> None:
    """Clients (mcp-remote, the TypeScript SDK) open GET /mcp for server-initiated messages; a
    stateless server has none, so GET is 405 at once and holds no slot of the client's cap."""
    store, backend, app, headers = await _client(
        tmp_path, HttpOptions(port=8765, max_concurrent_per_client=4))
    backend.release.set()
    stream = {**headers, "accept": "text/event-stream"}
    async with app.router.lifespan_context(app), httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1:8765") as http:
        with anyio.fail_after(30):
            gets = [await http.get("/mcp", headers=stream) for _ in range(5)]
            listed = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1,
                                                   "method": "tools/list"}, headers=headers)
            anonymous = await http.get("/mcp", headers={**stream, "authorization": ""})
    assert {g.status_code for g in gets} == {405}
    assert gets[0].headers["allow"] == "POST"
    assert "sends no event stream" in gets[0].json()["error"]["message"]
    assert listed.status_code == 200 and listed.json()["result"]["tools"]
    assert anonymous.status_code == 401  # authentication comes first, as for every method
