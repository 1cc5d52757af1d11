"""PCP v1.2 over MCP (issue #34): stale results labelled (or left out with exclude_stale), a
client granted v1.1 gets v1.1 objects, the server says which versions it speaks, and a model's
proposal names the model's client as its writer and carries the staleness date it gave."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from tests.conftest import V1_SCHEMAS, V12_SCHEMAS, cli

pytestmark = pytest.mark.anyio

PAST = "2001-01-01"


@pytest.fixture
def mcp_session(mcp_inprocess_session):
    """What the tools answer, not the process: the server in-process (tests/mcp/conftest.py)."""
    return mcp_inprocess_session


@pytest.fixture
def mcp_store(mcp_store: Path) -> Path:
    """The example store, a stale keystone added, and a client that asked for v1.1."""
    manifest = mcp_store / "pcp.yaml"
    manifest.write_text(manifest.read_text() + """\
  strict-reader:
    scopes: ["user:ada-lumen"]
    pcp_version: "1.1"
""")
    added = cli("keystone", "add", "Ada drafts every chart in Observable notebooks first.",
                "--category", "preference", "--stale-after", PAST, "--id", "ks-stale",
                "--store", str(mcp_store))
    assert added.code == 0, added.stderr
    return mcp_store


def valid(obj: dict, name: str, folder: Path) -> list[str]:
    schema = json.loads((folder / f"{name}.schema.json").read_text())
    return [e.message for e in Draft202012Validator(schema).iter_errors(obj)]


async def ok(client, name, arguments=None):
    result = await client.call_tool(name, arguments or {})
    assert not result.is_error, result.content[0].text
    return result.structured_content


async def test_stale_results_are_labelled_and_can_be_left_out(mcp_session):
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        labelled = await ok(client, "pcp_search", {"query": "Observable notebooks"})
        left_out = await ok(client, "pcp_search", {"query": "Observable notebooks",
                                                   "exclude_stale": True})
        micro = await ok(client, "pcp_get_profile", {"format": "micro_prompt"})
    [hit] = [r for r in labelled["results"] if r["id"] == "ks-stale"]
    assert hit["stale"] is True
    assert valid(hit, "search-result", V12_SCHEMAS) == []
    assert labelled["filters_applied"]["exclude_stale"] is False
    assert "ks-stale" not in {r["id"] for r in left_out["results"]}
    assert left_out["filters_applied"]["exclude_stale"] is True
    assert "Observable" not in micro["text"]


async def test_a_client_granted_v11_gets_v11_objects_and_is_told_so(mcp_session):
    async with mcp_session(["--client-id", "strict-reader"]) as client:
        found = await ok(client, "pcp_search", {"query": "Observable notebooks"})
        caps = await ok(client, "pcp_describe_capabilities")
        stats = await ok(client, "pcp_stats")
    [hit] = [r for r in found["results"] if r["id"] == "ks-stale"]
    assert "stale" not in hit
    assert hit["extensions"]["org.pcp-cli.v1.2"] == {"stale": True}
    for result in found["results"]:
        assert valid(result, "search-result", V1_SCHEMAS) == []
    for answer in (caps["protocols"], caps["store"]["protocols"], stats["protocols"]):
        assert answer["portable_context_protocol"] == {
            "served": "1.1", "available": ["1.2", "1.1"], "default": "1.2"}
    assert caps["grant"]["pcp_version"] == "1.1"
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        caps = await ok(client, "pcp_describe_capabilities")
    assert caps["protocols"]["portable_context_protocol"]["served"] == "1.2"
    assert caps["protocols"]["paged_context_protocol"]["served"] == "0.4"


async def test_a_models_proposal_names_its_client_and_keeps_its_date(mcp_session, mcp_store):
    async with mcp_session(["--client-id", "writer", "--allow-write"]) as client:
        proposed = await ok(client, "pcp_propose_keystone", {
            "content": "Ada is on the Tidewatch project this quarter.",
            "category": "objective", "stale_after": "2026-12-31"})
        refused = await client.call_tool("pcp_propose_keystone", {
            "content": "Ada rows.", "stale_after": "next week"})
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert refused.is_error and "stale_after" in refused.content[0].text
    schema = tools["pcp_propose_keystone"].input_schema["properties"]["stale_after"]
    assert schema["pattern"] == "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
    page = cli("review", "show", proposed["page_id"], "--json", "--store", str(mcp_store)).json
    assert page["generated_by"] == "writer/mcp" and page["stale_after"] == "2026-12-31"
