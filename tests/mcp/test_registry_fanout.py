"""`pcp search --sources` and `pcp timeline list --sources`: the other PCP sources of the device
registry, asked over MCP as their entries say: a second real pcp store (stdio, and `pcp serve
--http` with a token), a minimal PCP server written here with the SDK, one that fails and one
that never answers. Results are grouped by source, each with its own filters_applied."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import cli
from tests.mcp.http_helpers import running_server, token

pytestmark = pytest.mark.slow

# A PCP source that is not pcp: the two query-profile tools, over stdio, with the SDK's
# high-level server. `hang` never answers a search.
MINI_SERVER = '''
import sys
import time
from typing import Any

from mcp.server.mcpserver import MCPServer

mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
app = MCPServer("mini-pcp")


@app.tool()
def pcp_search(query: str, limit: int = 10, include_sensitive: bool = False) -> dict[str, Any]:
    if mode == "hang":
        time.sleep(3600)
    return {"schema_version": "1.0", "query": query, "count": 1,
            "filters_applied": {"limit": limit, "engine": "mini-grep",
                                "include_sensitive": include_sensitive},
            "results": [{"id": "mini-1", "type": "note", "origin": "imported",
                         "snippet": "mini match for " + query, "source_system": "mini"}]}


@app.tool()
def pcp_get_timeline(query: str | None = None, limit: int = 10) -> dict[str, Any]:
    if mode == "hang":
        time.sleep(3600)
    return {"schema_version": "1.0", "count": 1, "filters_applied": {"limit": limit},
            "events": [{"id": "mini-ev", "date": "2023", "summary": "Mini tide event"}]}


app.run()
'''


def registry() -> Path:
    return Path(os.environ["HOME"]) / ".pcp" / "sources.json"


@pytest.fixture
def device(tmp_path: Path) -> dict[str, Path]:
    """Ada's store (the one pcp runs in), Bob's store registered via stdio with a grant, and
    four hand-written entries: the mini server, one that hangs, one that fails at once, and an
    HTTP endpoint nobody listens on."""
    ada, bob = tmp_path / "ada", tmp_path / "bob"
    for root, owner in ((ada, "ada"), (bob, "bob")):
        assert cli("init", str(root), "--owner", owner).code == 0
    assert cli("add", "Tidewatch queue design", "--store", str(ada)).code == 0
    assert cli("add", "Tidewatch sensor notes from Bob", "--store", str(bob)).code == 0
    assert cli("add", "Bob's private tide diary", "--sensitivity", "high", "--store",
               str(bob)).code == 0
    assert cli("timeline", "add", "2024-06", "Tidewatch begun", "--store", str(bob)).code == 0
    assert cli("grant", "add", "registry", "--scope", "user:bob", "--store", str(bob)).code == 0
    assert cli("register", "--store", str(bob)).code == 0
    assert cli("register", "--store", str(ada)).code == 0  # its own entry: searched locally
    mini = tmp_path / "mini_pcp.py"
    mini.write_text(MINI_SERVER, "utf-8")
    data = json.loads(registry().read_text("utf-8"))
    data["sources"] += [
        {"id": "mini", "name": "Mini", "transport": "stdio", "command": sys.executable,
         "args": [str(mini)], "added_by": "user"},
        {"id": "hang", "name": "Hangs", "transport": "stdio", "command": sys.executable,
         "args": [str(mini), "hang"]},
        {"id": "broken", "name": "Broken", "transport": "stdio", "command": sys.executable,
         "args": ["-c", "import sys; sys.stderr.write('no such store\\n'); sys.exit(3)"]},
        {"id": "nobody", "name": "Nobody home", "transport": "http",
         "url": "http://127.0.0.1:9/mcp"},
    ]
    registry().write_text(json.dumps(data, indent=2), "utf-8")
    for source in ("mini", "hang", "broken"):  # the person trusts these commands
        assert cli("sources", "approve", source).code == 0
    return {"ada": ada, "bob": bob}


def by_id(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {group["source"]["id"]: group for group in data["sources"]}


def test_search_asks_every_registered_source_and_groups_the_answers(
        device: dict[str, Path]) -> None:
    # a generous timeout: a loaded machine starts `pcp serve` slowly (the hang has its test)
    result = cli("search", "tidewatch", "--sources", "pcp-bob,mini,broken,nobody",
                 "--source-timeout", "120", "--json", "--store", str(device["ada"]))
    assert result.code == 0, result.stderr
    groups = by_id(result.json)
    assert list(groups) == ["pcp-ada", "pcp-bob", "mini", "broken", "nobody"]
    ada, bob, mini = groups["pcp-ada"], groups["pcp-bob"], groups["mini"]
    assert ada["source"]["transport"] == "local" and ada["status"] == "ok"
    assert [r["snippet"] for r in ada["results"]] == ["Tidewatch queue design"]
    assert bob["status"] == "ok" and bob["source"]["transport"] == "stdio"
    assert {r["snippet"] for r in bob["results"]} == {"Tidewatch sensor notes from Bob",
                                                      "Tidewatch begun"}
    # each source's own report of what it ran
    assert bob["filters_applied"]["include_sensitive"] is False
    assert bob["filters_applied"]["scopes"] == ["user:bob"]  # its grant, not ours
    assert mini["filters_applied"] == {"limit": 10, "engine": "mini-grep",
                                       "include_sensitive": False}
    assert mini["results"][0]["snippet"] == "mini match for tidewatch"
    assert groups["broken"]["status"] == "failed"
    assert "no such store" in groups["broken"]["error"]
    assert groups["nobody"]["status"] == "failed" and groups["nobody"]["error"]
    assert "results" not in groups["broken"]


def test_a_source_that_does_not_answer_in_time_is_reported_beside_the_others(
        device: dict[str, Path]) -> None:
    result = cli("search", "tidewatch", "--sources", "all", "--source-timeout", "3", "--json",
                 "--store", str(device["ada"]))
    assert result.code == 0, result.stderr
    groups = by_id(result.json)
    assert list(groups) == ["pcp-ada", "pcp-bob", "mini", "hang", "broken", "nobody"]
    assert groups["hang"]["status"] == "timed_out"
    assert groups["hang"]["error"] == "no answer within 3 s"
    assert groups["pcp-ada"]["status"] == "ok" and groups["pcp-ada"]["results"]
    human = cli("timeline", "list", "--sources", "hang", "--source-timeout", "2", "--store",
                str(device["ada"]))
    assert human.code == 0
    assert "source hang (Hangs) timed out: no answer within 2 s" in human.stderr
    assert "# pcp-ada" in human.stdout


def test_the_options_a_source_understands_travel_and_failures_go_to_stderr(
        device: dict[str, Path]) -> None:
    result = cli("search", "tide", "--sources", "pcp-bob,mini", "--sources", "broken",
                 "--include-sensitive", "--limit", "3", "--source-timeout", "120", "--store",
                 str(device["ada"]))
    assert result.code == 0, result.stderr
    assert "# pcp-ada" in result.stdout and "# pcp-bob (pcp: bob)" in result.stdout
    assert "# mini (Mini): 1 result" in result.stdout
    assert "mini match for tide" in result.stdout
    assert "source broken (Broken) failed:" in result.stderr
    assert "broken" not in result.stdout
    asked = cli("search", "tide", "--sources", "mini", "--include-sensitive", "--limit", "3",
                "--json", "--store", str(device["ada"])).json
    assert by_id(asked)["mini"]["filters_applied"] == {
        "limit": 3, "engine": "mini-grep", "include_sensitive": True}
    # a limit past the cap: each source gets what this store used (25), never a refusal
    capped = cli("search", "tide", "--sources", "mini", "--limit", "40", "--json", "--store",
                 str(device["ada"])).json
    assert [g["filters_applied"]["limit"] for g in capped["sources"]] == [25, 25]


def test_timeline_list_asks_the_registered_sources_too(device: dict[str, Path]) -> None:
    result = cli("timeline", "list", "--sources", "pcp-bob,mini,broken,nobody",
                 "--source-timeout", "120", "--json", "--store", str(device["ada"]))
    assert result.code == 0, result.stderr
    groups = by_id(result.json)
    assert groups["pcp-ada"]["events"] == []
    assert [e["summary"] for e in groups["pcp-bob"]["events"]] == ["Tidewatch begun"]
    assert [e["summary"] for e in groups["mini"]["events"]] == ["Mini tide event"]
    assert groups["broken"]["status"] == groups["nobody"]["status"] == "failed"
    human = cli("timeline", "list", "--sources", "pcp-bob", "--source-timeout", "120",
                "--store", str(device["ada"]))
    assert "Tidewatch begun" in human.stdout and "# pcp-bob" in human.stdout


def test_an_http_source_is_asked_over_http_with_its_headers(device: dict[str, Path]) -> None:
    bob = device["bob"]
    assert cli("register", "--transport", "http", "--url", "http://127.0.0.1:1/mcp",
               "--store", str(bob)).code == 0
    placeholder = cli("search", "tide", "--sources", "pcp-bob", "--json", "--store",
                      str(device["ada"])).json
    assert "token placeholder" in by_id(placeholder)["pcp-bob"]["error"]
    with running_server(bob) as server:
        data = json.loads(registry().read_text("utf-8"))
        entry = next(e for e in data["sources"] if e["id"] == "pcp-bob")
        entry["url"] = server.url
        entry["headers"]["Authorization"] = f"Bearer {token(bob, 'registry')}"
        registry().write_text(json.dumps(data), "utf-8")
        result = cli("search", "tidewatch", "--sources", "pcp-bob", "--source-timeout", "120",
                     "--json", "--store", str(device["ada"]))
    assert result.code == 0, result.stderr
    bob_group = by_id(result.json)["pcp-bob"]
    assert bob_group["status"] == "ok" and bob_group["source"]["transport"] == "http"
    assert "Tidewatch sensor notes from Bob" in {r["snippet"] for r in bob_group["results"]}
