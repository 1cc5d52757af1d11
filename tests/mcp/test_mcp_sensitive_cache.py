"""The backend caches which pages are high-sensitivity per catalog state; a page made sensitive
(or not) while the server runs must change what the very next call returns."""

from __future__ import annotations

from pathlib import Path

from pcp_cli.mcp.audit import AuditLog
from pcp_cli.mcp.grants import resolve_grant
from pcp_cli.mcp.session import ToolSession
from pcp_cli.mcp.store_backend import StoreBackend
from tests.conftest import cli
from tests.mcp.http_helpers import make_store


def test_a_page_made_sensitive_while_serving_is_hidden_at_once(tmp_path: Path) -> None:
    store = make_store(tmp_path / "store")
    grant = resolve_grant({"clients": {"agent": {"scopes": ["project:tidewatch"]}}}, "agent")
    session = ToolSession(StoreBackend(store), grant, AuditLog(store))
    page = "tidewatch-architecture"

    def visible() -> bool:
        found = session.call("pcp_search", {"query": "tidewatch", "limit": 25}).data["results"]
        read = session.call("pcp_read_pages", {"ids": [page]}).data
        assert (page in {r["id"] for r in found}) == (read["not_found"] == [])
        return read["not_found"] == []

    assert visible()
    out = cli("revise", page, "--sensitivity", "high", "--store", str(store))
    assert out.code == 0, out.stderr
    assert not visible()
    out = cli("revise", page, "--sensitivity", "low", "--store", str(store))
    assert out.code == 0, out.stderr
    assert visible()
