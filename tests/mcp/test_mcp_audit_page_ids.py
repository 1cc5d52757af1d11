"""The audit log records which pages each call returned (`page_ids`), never what they say: what
an assistant read is on record, for `pcp audit` and the console's Assistants page."""

from __future__ import annotations

from pathlib import Path

from pcp_cli.mcp.audit import AuditLog, read_audit
from pcp_cli.mcp.grants import resolve_grant
from pcp_cli.mcp.session import ToolSession
from pcp_cli.mcp.store_backend import StoreBackend
from tests.mcp.http_helpers import make_store


def _session(store: Path) -> ToolSession:
    grant = resolve_grant({"clients": {"agent": {"scopes": ["user:ada-lumen",
                                                           "project:tidewatch"]}}}, "agent")
    return ToolSession(StoreBackend(store), grant, AuditLog(store))


def test_each_call_records_the_ids_of_the_pages_it_returned(tmp_path: Path) -> None:
    store = make_store(tmp_path / "store")
    session = _session(store)
    found = session.call("pcp_search", {"query": "tidewatch", "limit": 3}).data
    searched = [r["extensions"]["org.pcp-cli"]["page_id"] for r in found["results"]]
    assert searched
    session.call("pcp_read_pages", {"ids": ["ks-001", "nothing-here"]})
    events = session.call("pcp_get_timeline", {"limit": 2}).data["events"]
    session.call("pcp_get_profile", {"format": "micro_prompt"})
    session.call("pcp_stats", {})
    session.call("pcp_read_pages", {"ids": ["nothing-here"]})
    records = read_audit(store, client="agent")
    assert [r["tool"] for r in records] == ["pcp_search", "pcp_read_pages", "pcp_get_timeline",
                                           "pcp_get_profile", "pcp_stats", "pcp_read_pages"]
    assert records[0]["page_ids"] == searched
    assert records[1]["page_ids"] == ["ks-001"]  # what it got, not what it asked for
    assert records[2]["page_ids"] == [e["id"] for e in events]
    assert records[3]["page_ids"] == ["profile"]
    assert "page_ids" not in records[4]  # counts, no pages
    assert records[5]["page_ids"] == []
    text = (store / ".pcp" / "audit.jsonl").read_text()
    assert "Ada is a freelance" not in text  # ids, never content


def test_a_refused_call_records_no_pages(tmp_path: Path) -> None:
    store = make_store(tmp_path / "store")
    session = _session(store)
    session.call("pcp_read_pages", {"ids": []})
    record = read_audit(store, client="agent")[-1]
    assert record["outcome"] == "refused" and record.get("page_ids") is None
