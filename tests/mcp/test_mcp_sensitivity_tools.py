"""Over a real `pcp serve`, every read tool applies the same sensitivity rule the search does:
a high-sensitivity page, and an unclassified one (no sensitivity in its head file), is never
listed, counted or walked for a client whose grant does not allow sensitive material; a client
whose grant does sees both. The rule is a filter of the catalog query, and a page made
sensitive (or written) while the server runs changes the very next call."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import cli
from tests.mcp.test_mcp_serve import ok

pytestmark = pytest.mark.anyio


@pytest.fixture
def mcp_session(mcp_inprocess_session):
    """What the tools answer, not the process: the server in-process (tests/mcp/conftest.py)."""
    return mcp_inprocess_session


NS = "user:ada-lumen"
ANCHOR = "tl-001"  # a low-sensitivity timeline event of the example store, in the grant


def add_event(store: Path, page_id: str, summary: str) -> None:
    out = cli("timeline", "add", "2021-04", summary, "--id", page_id, "--store", str(store))
    assert out.code == 0, out.stderr
    out = cli("link", ANCHOR, "related_to", page_id, "--store", str(store))
    assert out.code == 0, out.stderr


def make_unclassified(store: Path, page_id: str) -> None:
    head = next((store / "pages").rglob(f"{page_id}.md"))
    head.write_text(head.read_text().replace("sensitivity: low\n", ""))
    assert cli("ls", "--store", str(store)).code == 0  # records the hand edit
    assert "sensitivity:" not in head.read_text()


async def views(client, include_sensitive: bool = False) -> dict:
    opt_in = {"include_sensitive": True} if include_sensitive else {}
    timeline = await ok(client, "pcp_get_timeline", {"limit": 100, **opt_in})
    stats = await ok(client, "pcp_stats", opt_in)
    scopes = await ok(client, "pcp_list_scopes", {})
    related = await ok(client, "pcp_related_pages", {"page_id": ANCHOR})
    return {
        "timeline": {e["id"] for e in timeline["events"]},
        "timeline_filters": timeline["filters_applied"],
        "total": stats["total"],
        "events": stats["by_type"].get("timeline_event", 0),
        "scope_pages": {r["namespace"]: r["pages"] for r in scopes["scopes"]}.get(NS),
        "related": {p["page_id"] for p in related["pages"]},
    }


async def test_read_tools_never_show_high_or_unclassified_pages(mcp_session, mcp_store):
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        before = await views(client)
        assert ANCHOR in before["timeline"]
        add_event(mcp_store, "tl-secret", "A private matter, high sensitivity")
        add_event(mcp_store, "tl-unclassified", "A matter nobody classified")
        add_event(mcp_store, "tl-open", "Gave a public talk on ocean data")
        out = cli("revise", "tl-secret", "--sensitivity", "high", "--store", str(mcp_store))
        assert out.code == 0, out.stderr
        make_unclassified(mcp_store, "tl-unclassified")
        after = await views(client)
        # only the low one is seen, counted and walked to, by the very next calls
        assert after["timeline"] == before["timeline"] | {"tl-open"}
        assert after["total"] == before["total"] + 1
        assert after["events"] == before["events"] + 1
        assert after["scope_pages"] == before["scope_pages"] + 1
        assert after["related"] == before["related"] | {"tl-open"}
        # what was withheld for the grant's sake is not counted as suppressed either
        assert "suppressed" not in after["timeline_filters"]
        out = cli("revise", "tl-open", "--sensitivity", "high", "--store", str(mcp_store))
        assert out.code == 0, out.stderr
        again = await views(client)
        assert {k: v for k, v in again.items() if k != "timeline_filters"} == {
            k: v for k, v in before.items() if k != "timeline_filters"}

    async with mcp_session(["--client-id", "writer"]) as client:  # allow_sensitive: true
        # the grant permits, but the call must ask too (as pcp_search's include_sensitive)
        unasked = await views(client)
        assert not {"tl-secret", "tl-unclassified", "tl-open"} & unasked["timeline"]
        assert unasked["timeline_filters"]["include_sensitive"] is False
        shown = await views(client, include_sensitive=True)
        assert shown["timeline_filters"]["include_sensitive"] is True
        assert {"tl-secret", "tl-unclassified", "tl-open"} <= shown["timeline"]
        assert {"tl-secret", "tl-unclassified", "tl-open"} <= shown["related"]
        assert shown["events"] >= before["events"] + 3


async def test_a_suppressed_page_is_left_out_of_counts(mcp_session, mcp_store):
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        before = await views(client)
        await ok(client, "pcp_suppress_pages", {"ids": [ANCHOR]})
        timeline = await ok(client, "pcp_get_timeline", {"limit": 100})
        stats = await ok(client, "pcp_stats", {})
        scopes = await ok(client, "pcp_list_scopes", {})
        assert ANCHOR not in {e["id"] for e in timeline["events"]}
        assert timeline["filters_applied"]["suppressed"] == 1
        assert stats["total"] == before["total"] - 1
        assert {r["namespace"]: r["pages"] for r in scopes["scopes"]}[NS] == \
            before["scope_pages"] - 1
