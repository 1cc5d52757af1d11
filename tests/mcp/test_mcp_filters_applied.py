"""Over a real `pcp serve` driven by the MCP SDK client: `filters_applied` states every safeguard
in every pcp_search mode (the table of tests/test_filters_applied.py), a grant's default scopes
are what a call naming none searches, and pcp_get_timeline / pcp_stats take the same
include_sensitive opt-in as pcp_search (the grant permits and the call asks) and say so."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import cli
from tests.mcp.test_mcp_serve import call, ok
from tests.test_filters_applied import (
    EVENT,
    MODES,
    OTHER_NS,
    OWN_NS,
    SAFEGUARDS,
    Safeguard,
    _ns,
    build_store,
    context,
    valid_v1,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def mcp_session(mcp_inprocess_session):
    """What the tools answer, not the process: the server in-process (tests/mcp/conftest.py)."""
    return mcp_inprocess_session


# `reader` reads every granted scope by default: the person chose that in pcp.yaml
# (default_scopes: ["*"]). `home` names no default scopes: a call naming none reads the owner's
# namespace only.
GRANTS = """\
clients:
  reader:
    scopes: ["*"]
    default_scopes: ["*"]
    allow_sensitive: true
  plain:
    scopes: ["*"]
    default_scopes: ["*"]
  agent:
    scopes: ["*"]
    default_scopes: ["user:tester"]
    allow_sensitive: true
  home:
    scopes: ["project:*", "user:tester"]
  away:
    scopes: ["project:*", "user:other"]
"""


@pytest.fixture
def harbor_store(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "store"
    ids = build_store(root)
    s = ("--store", str(root), "--json")
    low = cli("timeline", "add", "2024-03", "Harbor festival", *s)
    high = cli("timeline", "add", "2024-05", "A private harbor matter", *s)
    assert low.code == 0 and high.code == 0, low.stderr + high.stderr
    ids.update(event=low.json["page_id"], secret_event=high.json["page_id"])
    out = cli("revise", ids["secret_event"], "--sensitivity", "high", *s)
    assert out.code == 0, out.stderr
    manifest = root / "pcp.yaml"
    text = manifest.read_text()
    assert "clients: {}\n" in text
    manifest.write_text(text.replace("clients: {}\n", GRANTS))
    return root, ids


@pytest.fixture
def mcp_store(harbor_store: tuple[Path, dict[str, str]]) -> Path:
    return harbor_store[0]


# One server per mode, every safeguard asked of it in turn: every mode in the default run, now
# that the server runs in-process (each was a `pcp serve` process, so most were in the slow set).
MCP_MODES = MODES


@pytest.mark.parametrize("mode", MCP_MODES)
async def test_every_mode_states_every_safeguard_over_mcp(mcp_session, harbor_store, mode):
    _root, ids = harbor_store
    async with mcp_session(["--client-id", "reader"]) as client:
        for param in SAFEGUARDS:
            safeguard: Safeguard = param.values[0]
            data = await ok(client, "pcp_search", {"query": mode.query, **mode.mcp,
                                                   **safeguard.mcp})
            filters = data["filters_applied"]
            assert filters["mode"] == mode.name, (mode, filters)
            try:
                safeguard.check(filters, data["results"], context(mode, ids, mcp=True))
                valid_v1(data["results"])
            except AssertionError as exc:
                raise AssertionError(f"{param.id} in mode {mode.name} ({mode.query}): "
                                     f"{exc}") from exc


async def test_cursor_pages_state_the_safeguards_over_mcp(mcp_session, harbor_store):
    async with mcp_session(["--client-id", "reader"]) as client:
        for mode, query in (("text", "harbor"), ("temporal", "*"), ("graph", "walk"),
                            ("exact", "harbor")):
            args = {"query": query, "mode": mode, "limit": 1, "min_score": 0.01,
                    "exclude_types": ["document"]}
            first = await ok(client, "pcp_search", args)
            second = await ok(client, "pcp_search", {**args, "cursor": first["next_cursor"]})
            f = second["filters_applied"]
            assert f["offset"] == 1 and f["exclude_types"] == ["document"]
            assert f["include_sensitive"] is False and f["review_status"] == "affirmed_only"
            assert f["min_score"] == 0.01
            assert f["unscored_kept"] == sum("score" not in r for r in second["results"])
            assert f["scopes"] == sorted([OTHER_NS, OWN_NS])


async def test_graph_reports_the_unscored_neighbour_it_keeps(mcp_session, harbor_store):
    _root, ids = harbor_store
    async with mcp_session(["--client-id", "reader"]) as client:
        data = await ok(client, "pcp_search", {"query": "walk", "mode": "graph",
                                               "min_score": 0.01})
    neighbour = next(r for r in data["results"] if r["id"] == ids["neighbour"])
    assert "score" not in neighbour
    assert neighbour["extensions"]["org.pcp-cli"]["match_channel"] == "graph"
    assert data["filters_applied"]["unscored_kept"] == 1
    assert "relations reach" in data["filters_applied"]["min_score_applied_to"]


async def test_a_grant_default_scopes_are_searched_when_a_call_names_none(mcp_session,
                                                                          harbor_store):
    _root, ids = harbor_store
    async with mcp_session(["--client-id", "agent"]) as client:
        plain = await ok(client, "pcp_search", {"query": "harbor"})
        wide = await ok(client, "pcp_search", {"query": "harbor", "scopes": ["*"]})
        star = await ok(client, "pcp_search", {"query": "harbor", "scopes": "*"})
        other = await ok(client, "pcp_search", {"query": "harbor", "scopes": ["project:*"]})
        caps = await ok(client, "pcp_describe_capabilities")
    assert plain["filters_applied"]["scopes"] == [OWN_NS]
    assert "default_scopes" in plain["filters_applied"]["scope_source"]
    assert {_ns(r) for r in plain["results"]} == {OWN_NS}
    # cross-scope recall is explicit: naming the scopes widens it, within the grant
    assert wide["filters_applied"]["scopes"] == sorted([OTHER_NS, OWN_NS])
    assert ids["other"] in {r["id"] for r in wide["results"]}
    assert wide["filters_applied"]["scope_source"].startswith("every scope of the grant")
    assert star["filters_applied"]["scopes"] == wide["filters_applied"]["scopes"]
    assert other["filters_applied"]["scopes"] == [OTHER_NS]
    assert other["filters_applied"]["scope_source"].startswith("the call's scopes")
    assert caps["grant"]["default_scopes"] == [OWN_NS]


async def test_a_call_naming_no_scopes_reads_the_default_scopes_on_every_tool(
        mcp_session, harbor_store):
    """A grant without default_scopes: a call naming none reads the owner's namespace (when
    granted), on every tool that recalls; the others only when the call names them."""
    _root, ids = harbor_store
    calls = {"pcp_search": {"query": "harbor"}, "pcp_get_timeline": {}, "pcp_stats": {},
             "pcp_related_pages": {"page_id": ids["low"]}}
    async with mcp_session(["--client-id", "home"]) as client:
        narrow = {name: await ok(client, name, args) for name, args in calls.items()}
        wide = {name: await ok(client, name, {**args, "scopes": ["*"]})
                for name, args in calls.items()}
        named = await ok(client, "pcp_stats", {"scopes": [OTHER_NS]})
        profile = await ok(client, "pcp_get_profile", {"format": "markdown"})
        caps = await ok(client, "pcp_describe_capabilities")
        listed = await ok(client, "pcp_list_scopes")
    for name in calls:
        filters = narrow[name]["filters_applied"]
        assert filters["scopes_read" if name != "pcp_search" else "scopes"] == [OWN_NS], name
        assert "owner's namespace" in filters["scope_source"], name
        assert 'scopes: ["*"]' in filters["scope_source"], name
        assert wide[name]["filters_applied"]["scope_source"].startswith("every scope"), name
    assert ids["other"] not in {r["id"] for r in narrow["pcp_search"]["results"]}
    assert ids["other"] in {r["id"] for r in wide["pcp_search"]["results"]}
    assert OTHER_NS not in narrow["pcp_stats"]["by_namespace"]
    assert narrow["pcp_stats"]["by_namespace"][OWN_NS] > 0
    assert wide["pcp_stats"]["by_namespace"][OTHER_NS] > 0
    assert set(named["by_namespace"]) == {OTHER_NS}
    assert profile["scopes_read"] == [OWN_NS]
    assert caps["grant"]["default_scopes"] == [OWN_NS]
    assert "owner's namespace" in caps["grant"]["default_scopes_source"]
    assert listed["default_scopes"] == [OWN_NS]
    assert {row["namespace"] for row in listed["scopes"]} == {OWN_NS, OTHER_NS}
    # a grant that does not cover the owner's namespace reads its first scope
    async with mcp_session(["--client-id", "away"]) as client:
        away = await ok(client, "pcp_search", {"query": "harbor"})
        walk, _ = await call(client, "pcp_related_pages", {"page_id": ids["low"]})
    assert away["filters_applied"]["scopes"] == [OTHER_NS]
    assert "first scope" in away["filters_applied"]["scope_source"]
    assert walk.is_error and "not found" in walk.content[0].text  # user:tester: not granted


async def test_a_walk_from_a_page_outside_the_calls_scopes_says_how_to_widen(mcp_session,
                                                                            harbor_store):
    _root, ids = harbor_store
    async with mcp_session(["--client-id", "home"]) as client:
        refused, _ = await call(client, "pcp_related_pages", {"page_id": ids["other"]})
        allowed = await ok(client, "pcp_related_pages", {"page_id": ids["other"],
                                                         "scopes": [OTHER_NS]})
    assert refused.is_error
    assert "outside the scopes this call reads" in refused.content[0].text
    assert 'scopes: ["*"]' in refused.content[0].text
    assert allowed["filters_applied"]["scopes_read"] == [OTHER_NS]


async def test_timeline_and_stats_take_the_same_opt_in_as_search(mcp_session, harbor_store):
    _root, ids = harbor_store
    secret = ids["secret_event"]
    async with mcp_session(["--client-id", "reader"]) as client:  # allow_sensitive: true
        timeline = await ok(client, "pcp_get_timeline", {})
        asked = await ok(client, "pcp_get_timeline", {"include_sensitive": True})
        stats = await ok(client, "pcp_stats", {})
        counted = await ok(client, "pcp_stats", {"include_sensitive": True})
        search = await ok(client, "pcp_search", {"query": "private"})
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert secret not in {e["id"] for e in timeline["events"]}
    assert ids["event"] in {e["id"] for e in timeline["events"]}
    assert timeline["filters_applied"]["include_sensitive"] is False
    assert timeline["filters_applied"]["sensitivity_filtering"] == "all_records"
    assert secret in {e["id"] for e in asked["events"]}
    valid_v1(asked["events"], EVENT)
    assert asked["filters_applied"]["include_sensitive"] is True
    # the high note and the high event are counted only when asked for
    assert counted["total"] == stats["total"] + 2
    assert stats["filters_applied"]["include_sensitive"] is False
    assert counted["filters_applied"]["include_sensitive"] is True
    # search under the same grant agrees: nothing sensitive without the opt-in
    assert search["results"] == [] and search["filters_applied"]["include_sensitive"] is False
    for name in ("pcp_get_timeline", "pcp_stats", "pcp_search"):
        assert "include_sensitive" in tools[name].input_schema["properties"]
    async with mcp_session(["--client-id", "plain"]) as client:  # the grant does not allow it
        timeline = await ok(client, "pcp_get_timeline", {"include_sensitive": True})
        stats = await ok(client, "pcp_stats", {"include_sensitive": True})
    assert secret not in {e["id"] for e in timeline["events"]}
    assert timeline["filters_applied"]["include_sensitive"] is False
    assert any("include_sensitive ignored" in n for n in timeline["notices"])
    assert stats["filters_applied"]["include_sensitive"] is False
    assert any("include_sensitive ignored" in n for n in stats["notices"])


async def test_opposite_keystones_come_user_stated_first_over_mcp(mcp_session, mcp_store):
    s = ("--store", str(mcp_store), "--json")
    for text, source, page_id in (("Ada prefers dark mode in every editor", "inferred", "k-i"),
                                  ("Ada prefers light mode in every editor", "user_stated",
                                   "k-u")):
        out = cli("keystone", "add", text, "--source", source, "--id", page_id, *s)
        assert out.code == 0, out.stderr
    async with mcp_session(["--client-id", "reader"]) as client:
        data = await ok(client, "pcp_search", {"query": "prefers mode editor",
                                               "mode": "text"})
    assert [(r["id"], r["origin"]) for r in data["results"]] == [
        ("k-u", "user_stated"), ("k-i", "inferred")]
    assert "higher-authority origin first" in data["filters_applied"]["tie_break"]
