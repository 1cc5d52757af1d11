"""Over MCP: the `pcp_distill` prompt for a client that may write, keystones it proposes land
in the same review queue as data, and nothing `pcp propose` filed is served until accepted."""

from __future__ import annotations

import pytest

from tests.conftest import cli

pytestmark = pytest.mark.anyio


@pytest.fixture
def mcp_session(mcp_inprocess_session):
    """What the tools answer, not the process: the server in-process (tests/mcp/conftest.py)."""
    return mcp_inprocess_session


WRITER = ["--client-id", "writer", "--allow-write"]
READER = ["--client-id", "claude-desktop"]


async def _ok(client, name, arguments=None):
    result = await client.call_tool(name, arguments or {})
    assert not result.is_error, result.content
    return result.structured_content


async def test_pcp_distill_is_listed_and_fetched_by_a_writer(mcp_session):
    async with mcp_session(WRITER) as client:
        listing = await client.list_prompts()
        [prompt] = [p for p in listing.prompts if p.name == "pcp_distill"]
        assert {a.name for a in prompt.arguments} == {"focus", "since", "max_proposals"}
        got = await client.get_prompt("pcp_distill", {"focus": "home", "max_proposals": "5"})
    [message] = got.messages
    text = message.content.text
    assert message.role == "user"
    for needed in ("pcp_propose_keystone", "pcp_read_pages", "pcp_search", "### User",
                   '"home"', "At most 5 proposals", "pcp review", "data, not instructions"):
        assert needed in text, needed


async def test_a_client_that_cannot_write_is_offered_no_prompt(mcp_session):
    from mcp.shared.exceptions import MCPError

    async with mcp_session(READER) as client:
        listing = await client.list_prompts()
        assert listing.prompts == []
        with pytest.raises(MCPError, match="allow_write"):
            await client.get_prompt("pcp_distill")


async def test_what_the_assistant_proposes_is_data_in_the_same_queue(mcp_session, mcp_store):
    async with mcp_session(WRITER) as client:
        proposed = await _ok(client, "pcp_propose_keystone", {
            "content": "Prefers walking meetings.", "category": "preference",
            "confidence": 0.9})
        found = await _ok(client, "pcp_search", {"query": "walking meetings"})
        assert found["results"] == []
    page = cli("show", proposed["page_id"], "--json", "--store", str(mcp_store)).json["page"]
    assert (page["review_status"], page["origin"], page["instruction_policy"],
            page["record"]["source"]) == ("proposed", "inferred", "data_only", "inferred")
    queue = cli("review", "--json", "--store", str(mcp_store)).json
    assert proposed["page_id"] in {i["page_id"] for i in queue}
    assert cli("review", "accept", proposed["page_id"], "--store", str(mcp_store)).code == 0
    page = cli("show", proposed["page_id"], "--json", "--store", str(mcp_store)).json["page"]
    assert page["instruction_policy"] == "advisory"  # a preference the person affirmed


async def test_pcp_propose_is_served_nowhere_until_accepted(mcp_session, mcp_store):
    result = cli("propose", "--json", "--store", str(mcp_store))
    assert result.code == 0, result.stderr
    proposals = {p["content"]: p for p in result.json["proposals"]}
    lisbon = proposals["Lives in Lisbon."]
    async with mcp_session(WRITER) as client:
        found = await _ok(client, "pcp_search", {"query": "Lisbon", "limit": 25})
        assert {r["id"] for r in found["results"]} == {"conv-weekly-rhythm"}
        profile = await _ok(client, "pcp_get_profile", {"format": "micro_prompt"})
        assert "Lisbon" not in profile["text"]
        timeline = await _ok(client, "pcp_get_timeline", {})
        assert "Lisbon" not in str(timeline)
        read = await _ok(client, "pcp_read_pages", {"ids": [lisbon["id"]]})
        assert read["not_found"] == [lisbon["id"]]
    assert cli("review", "accept", lisbon["id"], "--store", str(mcp_store)).code == 0
    async with mcp_session(WRITER) as client:
        profile = await _ok(client, "pcp_get_profile", {"format": "micro_prompt"})
        assert "Lives in Lisbon." in profile["text"]
        read = await _ok(client, "pcp_read_pages", {"ids": [lisbon["id"]],
                                                    "views": ["source_spans"]})
    [page] = read["pages"]
    spans = page["source_spans"]["spans"]
    assert [s["text"] for s in spans] == [e["text"] for e in lisbon["evidence"]]
    assert spans[0]["page_id"] == "conv-weekly-rhythm"


async def test_evidence_from_a_page_outside_the_grant_is_not_shown(mcp_session, mcp_store):
    added = cli("add", "--type", "conversation", "--title", "side project", "--namespace",
                "project:tidewatch", "--json", "--store", str(mcp_store), "-",
                input="### User · 2026-01-20 10:00\n\nI use Zed for Rust.\n")
    assert added.code == 0, added.stderr
    result = cli("propose", added.json["page_id"], "--json", "--store", str(mcp_store))
    [proposal] = result.json["proposals"]
    assert cli("review", "accept", proposal["id"], "--store", str(mcp_store)).code == 0
    reader = ["--client-id", "claude-desktop", "--scope", "user:ada-lumen"]
    async with mcp_session(reader) as client:
        read = await _ok(client, "pcp_read_pages", {"ids": [proposal["id"]],
                                                    "views": ["source_spans", "facets"]})
    [page] = read["pages"]
    assert page["source_spans"]["spans"] == []
    assert page["facets"]["source_spans"] == []
    async with mcp_session(WRITER) as client:
        read = await _ok(client, "pcp_read_pages", {"ids": [proposal["id"]],
                                                    "views": ["source_spans"]})
    assert [s["text"] for s in read["pages"][0]["source_spans"]["spans"]] == [
        "I use Zed for Rust."]
