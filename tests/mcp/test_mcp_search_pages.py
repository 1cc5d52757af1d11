"""SearchPages over MCP exactly as the Paged Context Protocol's example asks, through the real
`pcp serve` and the SDK client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import cli

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SEED_REQUEST = {
    "query": "此前是否讨论过有限乘积保持紧致性的证明路线？",
    "scopes": ["project:formal-math", "user:user_01"], "mode": "auto",
    "filters": {"relation_types": ["depends_on", "inspired_by"],
                "lifecycle_status": ["active", "superseded"]},
    "limit": 20,
}
# default_scopes: ["*"]: this client reads both of its scopes when a call names none (the
# person's choice in pcp.yaml; without it a call would read the owner's namespace only)
GRANT = """clients:
  math:
    scopes: ["project:formal-math", "user:user_01"]
    default_scopes: ["*"]
"""


def _add(store: Path, text: str, namespace: str, key: str) -> str:
    out = cli("add", text, "--namespace", namespace, "--idempotency-key", key,
              "--store", str(store), "--json")
    assert out.code == 0, out.stderr
    return out.json["page_id"]


@pytest.fixture
def mcp_store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    assert cli("init", str(root), "--owner", "user_01").code == 0
    ids = {
        "route": _add(root, "此前对有限乘积紧致性的证明讨论：证明路线是用管状引理。",
                      "project:formal-math", "route"),
        "lemma": _add(root, "引理：有限乘积保持紧致性的证明依赖管状引理。",
                      "project:formal-math", "lemma"),
        "old": _add(root, "旧笔记：有限乘积保持紧致性的证明路线，后来被替换。", "user:user_01",
                    "old"),
        "lone": _add(root, "有限乘积保持紧致性：一条没有关系的笔记。", "user:user_01", "lone"),
        "other": _add(root, "有限乘积保持紧致性的证明路线（别的项目）。", "project:elsewhere",
                      "other"),
        "gone": _add(root, "有限乘积保持紧致性的证明路线，已撤回。", "project:formal-math",
                     "gone"),
    }
    s = str(root)
    for a, rel, b in (("route", "depends_on", "lemma"), ("old", "inspired_by", "route"),
                      ("other", "depends_on", "route"), ("gone", "depends_on", "lemma")):
        assert cli("link", ids[a], rel, ids[b], "--store", s).code == 0
    assert cli("revise", ids["old"], "旧笔记：有限乘积保持紧致性的证明路线，已被取代。",
               "--store", s).code == 0
    from pcp_cli import api

    with api.open_store(root) as store:
        api.set_lifecycle(store, ids["old"], "superseded")
        api.set_lifecycle(store, ids["gone"], "tombstoned")
    manifest = root / "pcp.yaml"
    manifest.write_text(manifest.read_text().replace("clients: {}\n", GRANT))
    (root / "ids.json").write_text(json.dumps(ids))
    return root


async def test_the_seed_example_request_succeeds_with_its_documented_meaning(mcp_session,
                                                                            mcp_store):
    ids = json.loads((mcp_store / "ids.json").read_text())
    async with mcp_session(["--client-id", "math"]) as client:
        result = await client.call_tool("pcp_search", SEED_REQUEST)
        assert not result.is_error, result.content[0].text
        data = result.structured_content
        found = [r["id"] for r in data["results"]]
        # filters.relation_types: only pages with such a relation, either direction;
        # lifecycle_status: active and superseded, never tombstoned; scopes: never elsewhere.
        assert ids["route"] in found
        assert set(found) <= {ids["route"], ids["lemma"], ids["old"]}
        assert not set(found) & {ids["lone"], ids["other"], ids["gone"]}
        applied = data["filters_applied"]
        assert applied["mode_requested"] == "auto" and applied["mode"] == "text"
        assert applied["mode_reason"]
        assert applied["relation_types"] == ["depends_on", "inspired_by"]
        assert applied["lifecycle_status"] == ["active", "superseded"]
        assert applied["scopes"] == ["project:formal-math", "user:user_01"]
        assert applied["limit"] == 20
        assert data["count"] == len(found) and data["next_cursor"] is None
        for r in data["results"]:
            ext = r["extensions"]["org.pcp-cli"]
            assert ext["match_channel"] == "text"
            assert ext["page_id"] == r["id"] and ext["revision_id"].startswith("rev_")
            assert ext["scope"]["namespace"] in SEED_REQUEST["scopes"]
            assert ext["scope"]["owner_id"] == "user_01"
            assert ext["scope"]["visibility"] == "private"
            assert "facets" in ext and {"manifest", "payload"} <= set(ext["read_views"])
            assert ext["lifecycle_status"] in ("active", "superseded")
        # ...and the client can read on from the identity it was given.
        first = data["results"][0]["extensions"]["org.pcp-cli"]
        read = await client.call_tool("pcp_read_pages", {"ids": [first["page_id"]],
                                                          "views": ["relations"]})
        assert read.structured_content["pages"][0]["revision_id"] == first["revision_id"]


async def test_modes_cursor_and_capabilities_over_mcp(mcp_session, mcp_store):
    async with mcp_session(["--client-id", "math"]) as client:
        semantic = await client.call_tool("pcp_search", {"query": "证明", "mode": "semantic"})
        assert not semantic.is_error  # the semantic extra is part of the test install
        assert semantic.structured_content["filters_applied"]["mode"] == "semantic"
        first = await client.call_tool("pcp_search", {"query": "有限乘积", "limit": 1})
        cursor = first.structured_content["next_cursor"]
        assert cursor
        second = await client.call_tool("pcp_search", {"query": "有限乘积", "limit": 1,
                                                       "cursor": cursor})
        assert second.structured_content["results"][0]["id"] != \
            first.structured_content["results"][0]["id"]
        other = await client.call_tool("pcp_search", {"query": "紧致", "cursor": cursor})
        assert other.is_error and "different request" in other.content[0].text
        request = {"query": "管状引理", "mode": "graph", "limit": 1}
        graph = (await client.call_tool("pcp_search", request)).structured_content
        more = (await client.call_tool("pcp_search", {**request, "cursor":
                                                      graph["next_cursor"]})).structured_content
        results = graph["results"] + more["results"]
        channels = [r["extensions"]["org.pcp-cli"]["match_channel"] for r in results]
        assert channels == ["text", "graph"]  # the best match, then what its relations reach
        for r in results:  # never outside the grant
            assert r["extensions"]["org.pcp-cli"]["scope"]["namespace"] != "project:elsewhere"
        caps = (await client.call_tool("pcp_describe_capabilities", {})).structured_content
        tools = {t.name for t in (await client.list_tools()).tools}
        # every operation claimed has its tool, and IngestEvent exactly when its tool exists
        assert ("IngestEvent" in caps["operations"]) == ("pcp_ingest_event" in tools)
        assert "DeletePage" not in caps["operations"]
        for mode in caps["store"]["search"]["modes"]:
            q = "*" if mode == "temporal" else "有限乘积"
            out = await client.call_tool("pcp_search", {"query": q, "mode": mode})
            assert not out.is_error, (mode, out.content[0].text)
        scopes = (await client.call_tool("pcp_list_scopes", {})).structured_content
        assert {s["namespace"] for s in scopes["scopes"]} == {"project:formal-math",
                                                              "user:user_01"}
        for s in scopes["scopes"]:
            assert s["display_name"] and s["permissions"] == {
                "read": True, "write": False, "sensitive": False}


async def test_related_and_as_of_over_mcp(mcp_session, mcp_store):
    ids = json.loads((mcp_store / "ids.json").read_text())
    async with mcp_session(["--client-id", "math"]) as client:
        out = await client.call_tool("pcp_related_pages", {"page_id": ids["route"],
                                                            "depth": 2})
        assert not out.is_error, out.content[0].text
        reached = {p["page_id"]: p for p in out.structured_content["pages"]}
        # lemma (outgoing depends_on) and old (incoming inspired_by, superseded but readable);
        # never "other" (outside the grant) nor "gone" (tombstoned), nor anything through them
        assert set(reached) == {ids["lemma"], ids["old"]}
        assert reached[ids["old"]]["via"]["direction"] == "incoming"
        hidden = await client.call_tool("pcp_related_pages", {"page_id": ids["other"]})
        assert hidden.is_error and hidden.structured_content["error"]["code"] == "not_found"
        past = await client.call_tool("pcp_search", {"query": "有限乘积", "mode": "text",
                                                     "as_of": "2000-01-01"})
        assert past.structured_content["results"] == []
        assert past.structured_content["filters_applied"]["as_of"] == "2000-01-01T23:59:59.999Z"
        read = await client.call_tool("pcp_read_pages", {"ids": [ids["route"]],
                                                          "as_of": "2000-01-01"})
        assert read.structured_content["not_found"] == [ids["route"]]
        stats = await client.call_tool("pcp_stats", {"as_of": "2000-01-01"})
        assert stats.structured_content["total"] == 0
        timeline = await client.call_tool("pcp_get_timeline", {"as_of": "2000-01-01"})
        assert not timeline.is_error and timeline.structured_content["events"] == []
        profile = await client.call_tool("pcp_get_profile", {"format": "micro_prompt",
                                                              "as_of": "2000-01-01"})
        assert not profile.is_error
        bad = await client.call_tool("pcp_stats", {"as_of": "soon"})
        assert bad.is_error
