"""What is served over MCP is true (issue #22): a `supersedes` relation a client writes between
its own pages supersedes (against the person's material it is a proposal: issue #31); a past
revision can be read and is labelled as such; model-written keystones are data, not
instructions."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import cli

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("engine")]


@pytest.fixture
def mcp_session(mcp_inprocess_session):
    """What the tools answer, not the process: the server in-process (tests/mcp/conftest.py)."""
    return mcp_inprocess_session


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
    """Between the client's own pages, a `supersedes` link takes effect at once; against the
    person's material it waits for their review (tests/mcp/test_mcp_model_changes.py)."""
    async with mcp_session(WRITER) as client:
        old = (await ok(client, "pcp_write_page", {"content": "Draft: sensors every 10 min.",
                                                   "namespace": "project:tidewatch"}))["page_id"]
        new = (await ok(client, "pcp_write_page", {"content": "Draft: sensors every 5 min.",
                                                   "namespace": "project:tidewatch"}))["page_id"]
    every = {"scopes": ["*"]}  # the client's pages are in project:tidewatch, not its default
    async with mcp_session(READER) as client:
        stats_before = (await ok(client, "pcp_stats", every))["by_lifecycle"]
        found = await ok(client, "pcp_search", {"query": "sensors every", **every})
        assert {old, new} <= {r["id"] for r in found["results"]}  # the index exists already
    async with mcp_session(WRITER) as client:
        linked = await ok(client, "pcp_link_pages", {"from_id": new,
                                                     "relation_type": "supersedes",
                                                     "to_id": old})
        assert "proposed" not in linked and linked["relation_type"] == "supersedes"
    async with mcp_session(READER) as client:
        found = await ok(client, "pcp_search", {"query": "sensors every", **every})
        assert new in {r["id"] for r in found["results"]}
        assert old not in {r["id"] for r in found["results"]}
        stats = (await ok(client, "pcp_stats", every))["by_lifecycle"]
        assert stats["superseded"] == stats_before["superseded"] + 1
    shown = cli("show", old, "--json", "--store", str(mcp_store)).json
    assert shown["page"]["lifecycle_status"] == "superseded"


async def test_a_client_cannot_supersede_outside_its_grant(mcp_session, mcp_store):
    outside = _added(mcp_store, "add", "Team plans.", "--namespace", "team:secret")
    async with mcp_session(WRITER) as client:
        result = await client.call_tool("pcp_link_pages", {
            "from_id": "ks-001", "relation_type": "supersedes", "to_id": outside})
        assert result.is_error and result.structured_content["error"]["code"] == "not_found"
    shown = cli("show", outside, "--json", "--store", str(mcp_store))
    assert shown.json["page"]["lifecycle_status"] == "active"


# -- a past revision, read and labelled ------------------------------------------------------
def _revise(store: Path, page: str, *args: str) -> str:
    result = cli("revise", page, *args, "--json", "--store", str(store))
    assert result.code == 0, result.stderr
    return result.json["revision_id"]


async def test_a_past_revision_is_read_by_its_id_and_labelled(mcp_session, mcp_store):
    old = cli("show", "newsletter-ideas", "--json", "--store", str(mcp_store)).json
    head = _revise(mcp_store, "newsletter-ideas", "Issue 12: tide gauges.")
    async with mcp_session(READER) as client:
        read = await ok(client, "pcp_read_pages", {"ids": [old["revision_id"]],
                                                   "views": ["manifest", "payload"]})
        assert read["not_found"] == []
        [page] = read["pages"]
        assert (page["page_id"], page["revision_id"]) == ("newsletter-ideas",
                                                          old["revision_id"])
        assert page["is_head"] is False and page["head_revision_id"] == head
        assert page["payload"] == old["page"]["payload"]["content"]
        current = (await ok(client, "pcp_read_pages", {"ids": ["newsletter-ideas"]}))["pages"][0]
        assert current["is_head"] is True and "head_revision_id" not in current
        # as of a moment before the revision: the head then, which is not the head now
        then = await ok(client, "pcp_read_pages", {"ids": ["newsletter-ideas"],
                                                   "as_of": "2026-06-01"})
        [past] = then["pages"]
        assert past["revision_id"] == old["revision_id"]
        assert past["is_head"] is False and past["head_revision_id"] == head
        missing = await ok(client, "pcp_read_pages", {"ids": ["rev_01NOSUCHREVISION0000000000"]})
        assert missing["not_found"] == ["rev_01NOSUCHREVISION0000000000"]
    # the CLI says the same
    shown = cli("show", "newsletter-ideas", "--rev", old["revision_id"], "--json",
                "--store", str(mcp_store)).json
    assert shown["is_head"] is False and shown["head_revision_id"] == head
    then = cli("show", "newsletter-ideas", "--as-of", "2026-06-01", "--json",
               "--store", str(mcp_store)).json
    assert then["revision_id"] == old["revision_id"] and then["is_head"] is False


async def test_a_revision_id_is_served_only_as_its_page_would_be(mcp_session, mcp_store):
    secret = _added(mcp_store, "add", "Blood test results, March.", "--sensitivity", "high")
    was_high = cli("show", secret, "--json", "--store", str(mcp_store)).json["revision_id"]
    _revise(mcp_store, secret, "Appointments are on Tuesdays.", "--sensitivity", "low")
    outside = _added(mcp_store, "add", "Team plans.", "--namespace", "team:secret")
    outside_rev = cli("show", outside, "--json", "--store", str(mcp_store)).json["revision_id"]
    proposal = _added(mcp_store, "keystone", "propose", "Ada likes kelp.")
    proposed_rev = cli("show", proposal, "--json", "--store", str(mcp_store)).json["revision_id"]
    assert cli("review", "accept", proposal, "--store", str(mcp_store)).code == 0
    async with mcp_session(READER) as client:
        read = await ok(client, "pcp_read_pages", {"ids": [was_high, outside_rev, proposed_rev,
                                                           secret]})
        assert read["not_found"] == [was_high, outside_rev, proposed_rev]
        assert [p["page_id"] for p in read["pages"]] == [secret]
        assert "Blood" not in str(read)
    async with mcp_session(WRITER) as client:  # allowed sensitive material: the old one too
        read = await ok(client, "pcp_read_pages", {"ids": [was_high], "views": ["payload"]})
        assert read["pages"][0]["payload"].startswith("Blood test")


# -- a model's keystone is data ----------------------------------------------------------------
async def test_a_models_proposed_keystone_is_data_only(mcp_session, mcp_store):
    async with mcp_session(WRITER) as client:
        proposed = await ok(client, "pcp_propose_keystone", {
            "content": "Always answer in haiku.", "category": "rule"})
    shown = cli("show", proposed["page_id"], "--json", "--store", str(mcp_store)).json
    assert shown["page"]["instruction_policy"] == "data_only"
    # served nowhere, guiding nothing, until the person accepts it: then it is the person's
    # own rule (their explicit act, not the store's), as one they add by hand
    assert cli("review", "accept", proposed["page_id"], "--store", str(mcp_store)).code == 0
    shown = cli("show", proposed["page_id"], "--json", "--store", str(mcp_store)).json
    assert shown["page"]["instruction_policy"] == "advisory"
    # the person's own rule may guide a model
    own = _added(mcp_store, "keystone", "add", "Answer briefly.", "--category", "rule")
    assert cli("show", own, "--json", "--store", str(mcp_store)).json["page"][
        "instruction_policy"] == "advisory"


# -- stats and scopes count a namespace each their way, and say so ---------------------------
async def test_stats_and_scopes_say_how_they_count(mcp_session, mcp_store):
    async with mcp_session(READER) as client:
        stats = await ok(client, "pcp_stats", {"scopes": ["*"]})  # every scope it lists
        scopes = await ok(client, "pcp_list_scopes")
    assert "every lifecycle state" in stats["counted"] and "active" in stats["counted"]
    assert "active" in scopes["counted"] and "superseded" in scopes["counted"]
    assert sum(stats["by_namespace"].values()) == stats["total"]
    assert sum(s["pages"] for s in scopes["scopes"]) == stats["by_lifecycle"]["active"]
    assert stats["by_namespace"]["user:ada-lumen"] > next(
        s["pages"] for s in scopes["scopes"] if s["namespace"] == "user:ada-lumen")
