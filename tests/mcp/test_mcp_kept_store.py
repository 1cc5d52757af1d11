"""The backend keeps one read-only store open per worker thread and refreshes it per call.

What a client relies on: the calls that are made all day (search, profile, read) never list the
store to apply the grant, and keeping the store open never serves a stale page: a page the CLI
writes, a catalog deleted and rebuilt, or a pcp.yaml replaced while the server runs are all seen
by the very next call.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from pcp_cli import api
from pcp_cli.api import pages
from pcp_cli.mcp.audit import AuditLog
from pcp_cli.mcp.grants import resolve_grant
from pcp_cli.mcp.session import ToolSession
from pcp_cli.mcp.store_backend import StoreBackend
from tests.conftest import cli
from tests.mcp.http_helpers import make_store

PAGE = "tidewatch-architecture"
SENSITIVE_PAGE = "health-notes"


def session_for(store: Path, client: str = "agent",
                scopes: tuple[str, ...] = ("project:tidewatch",)) -> ToolSession:
    grant = resolve_grant({"clients": {client: {"scopes": list(scopes),
                                                "default_scopes": ["*"]}}}, client)
    return ToolSession(StoreBackend(store), grant, AuditLog(store))


def payload(session: ToolSession, page_id: str) -> str | None:
    data = session.call("pcp_read_pages", {"ids": [page_id], "views": ["payload"]}).data
    return data["pages"][0]["payload"] if data["pages"] else None


def test_no_read_tool_lists_the_store_for_the_grant(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sensitivity is the index's filter (search), the page's own catalog row (read, related)
    or a filter of one catalog query (timeline, stats, scopes, the profile's material): no
    call lists every page, or every high-sensitivity page, to apply the grant."""
    store = make_store(tmp_path / "store")
    session = session_for(store, scopes=("user:ada-lumen", "project:tidewatch"))
    listed: list[str] = []
    opened: list[str] = []
    real_list, real_open, real_entries = api.list_pages, api.open_store, api.Store.entries

    def entries(self: api.Store, **kwargs: object) -> list[api.Entry]:
        if not kwargs.get("types"):
            listed.append("Store.entries of every type")
        return real_entries(self, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(api.Store, "entries", entries)
    def counted(*a: object, **k: object) -> list[api.Entry]:
        listed.append("list_pages")
        return real_list(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(api, "list_pages", counted)
    monkeypatch.setattr(pages, "list_pages", counted)  # the api's own calls of it
    monkeypatch.setattr(api, "open_store",
                        lambda *a, **k: opened.append("open") or real_open(*a, **k))
    for _ in range(3):
        found = session.call("pcp_search", {"query": "tidewatch", "limit": 25}).data
        ids = {r["id"] for r in found["results"]}
        assert PAGE in ids and SENSITIVE_PAGE not in ids
        text = session.call("pcp_get_profile", {"format": "micro_prompt"}).data["text"]
        assert text
        assert payload(session, PAGE)
        assert payload(session, SENSITIVE_PAGE) is None  # high: not for this grant
        for tool, arguments in (("pcp_get_timeline", {}), ("pcp_stats", {}),
                                ("pcp_list_scopes", {}), ("pcp_describe_capabilities", {}),
                                ("pcp_related_pages", {"page_id": PAGE})):
            reply = session.call(tool, arguments)
            assert not reply.is_error, (tool, reply)
            assert SENSITIVE_PAGE not in str(reply.data), tool
    assert listed == []
    assert len(opened) == 1  # one store for the session's thread, refreshed per call


def test_a_page_written_while_serving_is_read_at_once(tmp_path: Path) -> None:
    store = make_store(tmp_path / "store")
    session = session_for(store)
    before = payload(session, PAGE)
    assert before and "kept-store-check" not in before
    out = cli("revise", PAGE, "kept-store-check: rewritten while serving", "--store", str(store))
    assert out.code == 0, out.stderr
    assert "kept-store-check" in (payload(session, PAGE) or "")
    found = session.call("pcp_search", {"query": "kept-store-check"}).data["results"]
    assert [r["id"] for r in found] == [PAGE]


def test_a_catalog_deleted_while_serving_is_rebuilt_and_used(tmp_path: Path) -> None:
    store = make_store(tmp_path / "store")
    session = session_for(store)
    assert payload(session, PAGE)
    for suffix in ("", "-wal", "-shm"):
        (store / ".pcp" / f"catalog.sqlite{suffix}").unlink(missing_ok=True)
    out = cli("revise", PAGE, "after-the-rebuild text", "--store", str(store))
    assert out.code == 0, out.stderr
    assert "after-the-rebuild" in (payload(session, PAGE) or "")


def test_a_replaced_manifest_is_read_again(tmp_path: Path) -> None:
    """pcp.yaml replaced (as an editor or git does): the kept store reads it again."""
    store = make_store(tmp_path / "store")
    session = session_for(store)
    caps = session.call("pcp_describe_capabilities", {}).data["store"]
    manifest = store / "pcp.yaml"
    text = manifest.read_text()
    assert "default_namespace: user:ada-lumen" in text
    replaced = tmp_path / "pcp.yaml.new"
    replaced.write_text(text.replace("default_namespace: user:ada-lumen",
                                     "default_namespace: project:tidewatch"))
    shutil.move(replaced, manifest)
    after = session.call("pcp_describe_capabilities", {}).data["store"]
    assert caps.get("default_namespace") is None  # user:ada-lumen: outside this grant
    assert after["default_namespace"] == "project:tidewatch"


def test_worker_threads_do_not_share_a_store(tmp_path: Path) -> None:
    """SQLite connections stay with their thread: calls from several threads at once work."""
    store = make_store(tmp_path / "store")
    session = session_for(store)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(5):
                assert payload(session, PAGE)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
