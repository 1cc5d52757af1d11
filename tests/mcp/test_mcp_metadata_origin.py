"""The metadata documents refuse a foreign browser Origin in their own layer: the ASGI app
itself (no uvicorn protocol layer in front, in process), each endpoint on its own, so a second
check elsewhere cannot mask a missing one (issue #26)."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx2
import pytest

from pcp_cli.mcp.audit import AuditLog
from pcp_cli.mcp.http import HttpOptions, build_app
from tests.mcp.fake_backend_server import FakeBackend
from tests.mcp.http_helpers import make_store

pytestmark = pytest.mark.anyio

DOCUMENTS = ["/.well-known/oauth-protected-resource",
             "/.well-known/oauth-protected-resource/mcp",
             "/.well-known/oauth-authorization-server"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("path", DOCUMENTS)
async def test_a_metadata_document_refuses_a_foreign_origin_by_itself(tmp_path: Path,
                                                                      path: str) -> None:
    store = make_store(tmp_path / "store")
    app = build_app(store, FakeBackend(), AuditLog(store), HttpOptions(port=8765))
    host = {"host": "127.0.0.1:8765"}
    async with app.router.lifespan_context(app), httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1:8765") as http:
        served = await http.get(path, headers=host)
        assert served.status_code == 200, served.text
        for origin in ("http://evil.example", "null", "http://127.0.0.1.evil.example"):
            refused = await http.get(path, headers={**host, "origin": origin})
            assert refused.status_code == 403, (origin, refused.text)
            assert "Origin" in refused.text
        same = await http.get(path, headers={**host, "origin": "http://127.0.0.1:8765"})
        assert same.status_code == 200
    await anyio.sleep(0)
