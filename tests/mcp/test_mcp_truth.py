"""What is served over MCP is true (issue #22): a `supersedes` relation written by a client
supersedes; a past revision can be read and is labelled as such; model-written keystones are
data, not instructions."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import cli

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("engine")]

WRITER = ["--client-id", "writer", "--allow-write"]
READER = ["--client-id", "claude-desktop"]


async def ok(client, name, arguments=None):
    result = await client.call_tool(name, arguments or {})
    assert not result.is_error, result.content[0].text
    return result.structured_content


def _added(store: Path, *args: str) -> str:
    result = cli(*args, "--json", "--store", str(store))
    assert result.code == 0, result.stderr
    return result.json["page_id"]


async def test_a_link_over_mcp_supersedes_on_every_surface(mcp_session, mcp_store):
    new = _added(mcp_store, "keystone", "add", "Prefers Lit web components over Svelte.",
                 "--category", "preference")
    event = _added(mcp_store, "timeline", "add", "2025-12", "Tidewatch public beta opened.")
    async with mcp_session(READER) as client:
        stats_before = (await ok(client, "pcp_stats"))["by_lifecycle"]
        found = await ok(client, "pcp_search", {"query": "Svelte"})
        assert "ks-008" in {r["id"] for r in found["results"]}  # the index exists already
    async with mcp_session(WRITER) as client:
        await ok(client, "pcp_link_pages", {"from_id": new, "relation_type": "supersedes",
                                            "to_id": "ks-008"})
        await ok(client, "pcp_link_pages", {"from_id": event, "relation_type": "supersedes",
                                            "to_id": "tl-006"})
    async with mcp_session(READER) as client:
        micro = (await ok(client, "pcp_get_profile", {"format": "micro_prompt"}))["text"]
        assert "Svelte 5" not in micro
        found = await ok(client, "pcp_search", {"query": "Svelte"})
        assert {r["id"] for r in found["results"]} == {new}
        events = {e["id"] for e in (await ok(client, "pcp_get_timeline"))["events"]}
        assert "tl-006" not in events and event in events
        stats = (await ok(client, "pcp_stats"))["by_lifecycle"]
        assert stats["superseded"] == stats_before["superseded"] + 2
    listed = cli("keystone", "list", "--json", "--store", str(mcp_store))
    assert "ks-008" not in {k["id"] for k in listed.json}


async def test_a_client_cannot_supersede_outside_its_grant(mcp_session, mcp_store):
    outside = _added(mcp_store, "add", "Team plans.", "--namespace", "team:secret")
    async with mcp_session(WRITER) as client:
        result = await client.call_tool("pcp_link_pages", {
            "from_id": "ks-001", "relation_type": "supersedes", "to_id": outside})
        assert result.is_error and result.structured_content["error"]["code"] == "not_found"
    shown = cli("show", outside, "--json", "--store", str(mcp_store))
    assert shown.json["page"]["lifecycle_status"] == "active"
