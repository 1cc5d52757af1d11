"""Semantic and hybrid `pcp_search` over MCP: the real `pcp serve`, driven by the SDK's client.

The canaries say exactly what the question asks, in places the client may not see (another
scope, high sensitivity, a proposal, an archived page, a page suppressed in the session); none
may come back through the vector path, whatever the mode and however high the limit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from tests.conftest import V1_SCHEMAS, cli

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
pytest.importorskip("wordllama", reason="the semantic extra is not installed")

PORTO = "Moved to Porto in the spring of 2024, into a flat near the river."
QUESTION = "which city did she move to"
EXT = "org.pcp-cli"


def add(store: Path, text: str, *args: str) -> str:
    result = cli("add", text, "--store", store, "--json", *args)
    assert result.code == 0, result.stderr
    return result.json["page_id"]


@pytest.fixture
def canaries(mcp_store: Path) -> dict[str, str]:
    made = {
        "user": add(mcp_store, PORTO, "--namespace", "user:ada-lumen"),
        "project": add(mcp_store, PORTO + " (project)", "--namespace", "project:tidewatch"),
        "high": add(mcp_store, PORTO + " (private)", "--namespace", "user:ada-lumen",
                    "--sensitivity", "high"),
        "other_scope": add(mcp_store, PORTO + " (vault)", "--namespace", "vault:secrets"),
        "archived": add(mcp_store, PORTO + " (old)", "--namespace", "user:ada-lumen"),
        "suppressed": add(mcp_store, PORTO + " (hidden)", "--namespace", "user:ada-lumen"),
    }
    proposed = cli("keystone", "propose", "Lives in Porto near the river.", "--store",
                   mcp_store, "--json")
    assert proposed.code == 0, proposed.stderr
    made["proposal"] = proposed.json["page_id"]
    assert cli("archive", made["archived"], "--store", mcp_store).code == 0
    return made


async def search(client, **arguments):
    result = await client.call_tool("pcp_search", arguments)
    assert not result.is_error, result.content[0].text
    return result.structured_content


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
async def test_vector_path_keeps_every_safeguard(mcp_session, canaries, mode):
    validator = Draft202012Validator(
        json.loads((V1_SCHEMAS / "search-result.schema.json").read_text()))
    never = {canaries[k] for k in ("high", "other_scope", "archived", "proposal", "suppressed")}
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        hidden = await client.call_tool("pcp_suppress_pages", {"ids": [canaries["suppressed"]]})
        assert not hidden.is_error
        data = await search(client, query=QUESTION, mode=mode, limit=25,
                            include_sensitive=True, include_superseded=False)
        found = [r["id"] for r in data["results"]]
        assert data["filters_applied"]["mode"] == mode
        assert data["filters_applied"]["semantic_model"] == "wordllama-l2_supercat-256"
        assert canaries["user"] in found[:3]
        assert not never & set(found)
        for item in data["results"]:
            errors = list(validator.iter_errors(item))
            assert not errors, [e.message for e in errors]
            assert 0 <= item["score"] <= 1
            assert item["extensions"][EXT]["match_channel"] in ("text", "semantic", "both")
            assert item["extensions"][EXT]["scope"]["namespace"] in (
                "user:ada-lumen", "project:tidewatch")
    # a client granted only project:tidewatch sees only that scope through the vectors
    async with mcp_session(["--client-id", "tidewatch"]) as client:
        data = await search(client, query=QUESTION, mode=mode, limit=25)
        found = {r["id"] for r in data["results"]}
        assert canaries["project"] in found
        assert found <= {canaries["project"], "tidewatch-architecture", "conv-tidewatch-mobile"}


async def test_auto_mode_over_mcp_reports_what_ran(mcp_session):
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        asked = await search(client, query="which frontend framework does she like")
        assert asked["filters_applied"]["mode"] == "hybrid"
        assert asked["filters_applied"]["mode_requested"] == "auto"
        words = await search(client, query="svelte dashboards")
        assert words["filters_applied"]["mode"] == "text"
        bad = await client.call_tool("pcp_search", {"query": "svelte", "mode": "vibes"})
        assert bad.is_error
