"""`filters_applied` states every safeguard that ran, in every SearchPages mode and on every path
(PCP §4.2 MUST: "an unstated safeguard is indistinguishable from an absent one"), and the
results obey what it states. Every mode × every safeguard, through `pcp search --json`; the
same table runs over MCP in tests/mcp/test_mcp_filters_applied.py.

The store holds, for the word "harbor": a low note, a high-sensitivity note, a document, a
keystone superseded by another, a proposal, a page in another namespace; and a page that says
nothing of harbors but is related to the low note (what graph mode reaches, with no score).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.conftest import V12_SCHEMAS, cli


def _validator(name: str) -> Draft202012Validator:
    import json

    return Draft202012Validator(json.loads((V12_SCHEMAS / name).read_text(encoding="utf-8")))


RESULT = _validator("search-result.schema.json")
EVENT = _validator("timeline-event.schema.json")


def valid_v1(results: list[dict[str, Any]], validator: Draft202012Validator = RESULT) -> None:
    """Every object emitted validates against the published v1 schema."""
    for item in results:
        errors = [e.message for e in validator.iter_errors(item)]
        assert not errors, (item.get("id"), errors)


OWN_NS = "user:tester"
OTHER_NS = "project:quay"


def _ok(*args: str) -> Any:
    out = cli(*args, "--json")
    assert out.code == 0, (args, out.stderr)
    return out.json


def build_store(root: Path) -> dict[str, str]:
    """The store described above; returns the page id of each by name."""
    assert cli("init", str(root), "--owner", "tester").code == 0
    s = ("--store", str(root))

    def add(text: str, *args: str) -> str:
        return str(_ok("add", text, *args, *s)["page_id"])

    ids = {
        "low": add("Harbor walk notes, low sensitivity"),
        "high": add("Harbor private matter", "--sensitivity", "high"),
        "document": add("Harbor survey document", "--type", "document"),
        "other": add("Harbor project plan", "--namespace", OTHER_NS),
        "neighbour": add("A quiet bench by the water"),
    }
    _ok("keystone", "add", "Harbor keystone, the older claim", "--id", "ks-old", *s)
    _ok("keystone", "add", "Harbor keystone, the newer claim", "--id", "ks-new",
        "--supersedes", "ks-old", *s)
    ids.update(superseded="ks-old", current="ks-new")
    ids["proposal"] = _ok("keystone", "propose", "Harbor proposed claim", *s)["page_id"]
    _ok("link", ids["low"], "related_to", ids["neighbour"], *s)
    return ids


@pytest.fixture(scope="module")
def harbor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    with pytest.MonkeyPatch.context() as mp:  # the autouse isolation is per test, not module
        mp.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        for name in [n for n in os.environ if n.startswith("PCP_")]:
            mp.delenv(name)
        root = tmp_path_factory.mktemp("harbor") / "store"
        yield root, build_store(root)


def _semantic() -> bool:
    from pcp_cli.semantic import installed

    return installed()


NEEDS_SEMANTIC = pytest.mark.skipif(not _semantic(), reason="the semantic extra is not installed")


@dataclass(frozen=True)
class Mode:
    name: str
    query: str
    cli: tuple[str, ...]
    mcp: dict[str, Any]


MODES = [
    pytest.param(Mode("text", "harbor", ("--mode", "text"), {"mode": "text"}), id="text"),
    pytest.param(Mode("exact", "harbor", ("--mode", "exact"), {"mode": "exact"}), id="exact"),
    pytest.param(Mode("temporal", "harbor", ("--mode", "temporal"), {"mode": "temporal"}),
                 id="temporal"),
    pytest.param(Mode("temporal", "*", ("--mode", "temporal"), {"mode": "temporal"}),
                 id="temporal-all"),
    pytest.param(Mode("graph", "harbor", ("--mode", "graph"), {"mode": "graph"}), id="graph"),
    pytest.param(Mode("text", "harbor", ("--mode", "auto"), {"mode": "auto"}), id="auto"),
    pytest.param(Mode("semantic", "harbor", ("--mode", "semantic"), {"mode": "semantic"}),
                 id="semantic", marks=NEEDS_SEMANTIC),
    pytest.param(Mode("hybrid", "harbor", ("--mode", "hybrid"), {"mode": "hybrid"}),
                 id="hybrid", marks=NEEDS_SEMANTIC),
]


@dataclass(frozen=True)
class Safeguard:
    """One safeguard: the request (CLI options and MCP arguments) and what the answer must
    say and obey. `check(filters, results, ctx)` asserts; ctx has the page ids by name, whether
    this is an MCP answer, and the mode."""

    cli: tuple[str, ...]
    mcp: dict[str, Any]
    check: Callable[[dict[str, Any], list[dict[str, Any]], dict[str, Any]], None]
    keys: tuple[str, ...] = field(default=())


def _ns(r: dict[str, Any]) -> str:
    return r["extensions"]["org.pcp-cli"]["scope"]["namespace"]


def _status(r: dict[str, Any]) -> str:
    return r["extensions"]["org.pcp-cli"]["lifecycle_status"]


def _sensitivity_default(f, results, ctx):
    assert f["include_sensitive"] is False
    assert f["sensitivity_filtering"] == "all_records"
    assert f["unclassified_sensitivity"].startswith(
        "withheld" if ctx["mcp"] else "included")
    assert ctx["ids"]["high"] not in {r["id"] for r in results}
    assert all(r.get("sensitivity") != "high" for r in results)


def _sensitivity_opt_in(f, results, ctx):
    assert f["include_sensitive"] is True
    assert f["unclassified_sensitivity"].startswith("included")
    if ctx["served_all"]:
        assert ctx["ids"]["high"] in {r["id"] for r in results}


def _scopes_default(f, results, ctx):
    # the namespaces searched, named (never a pattern such as '*')
    assert f["scopes"] == sorted([OTHER_NS, OWN_NS])
    assert f["scope_filtering"] in ("before_ranking", "before_answering")
    if ctx["mcp"]:
        assert f["scopes_requested"] == ["*"]
    else:
        assert f["scopes_requested"] is None
    if ctx["served_all"]:
        assert {OWN_NS, OTHER_NS} <= {_ns(r) for r in results}


def _scopes_narrowed(f, results, ctx):
    assert f["scopes"] == [OWN_NS] and f["scopes_requested"] == ["user:*"]
    assert results and {_ns(r) for r in results} == {OWN_NS}


def _review(f, results, ctx):
    assert f["review_status"] == "affirmed_only"
    assert ctx["ids"]["proposal"] not in {r["id"] for r in results}


def _exclude_types(f, results, ctx):
    assert f["exclude_types"] == ["document"] and f["types"] is None
    assert results and all(r["type"] != "document" for r in results)


def _types(f, results, ctx):
    assert f["types"] == ["note"] and f["exclude_types"] is None
    assert results and all(r["type"] == "note" for r in results)


def _current(f, results, ctx):
    assert f["current_only"] is True and f["lifecycle_statuses"] == ["active"]
    assert ctx["ids"]["superseded"] not in {r["id"] for r in results}
    assert {_status(r) for r in results} == {"active"}


def _with_superseded(f, results, ctx):
    assert f["current_only"] is False
    assert f["lifecycle_statuses"] == ["active", "superseded", "archived"]
    if ctx["served_all"]:
        assert ctx["ids"]["superseded"] in {r["id"] for r in results}


def _min_score(f, results, ctx):
    assert f["min_score"] == 0.01
    # what was kept without a score is counted on the results served, whatever the mode
    assert f["unscored_kept"] == sum("score" not in r for r in results)
    assert f["min_score_applied_to"]
    assert all(r["score"] >= 0.01 for r in results if "score" in r)
    if ctx["query"] == "*":
        assert results and f["unscored_kept"] == len(results)
        assert f["min_score_applied_to"].startswith("nothing")
    if ctx["mode"] == "graph":
        assert ctx["ids"]["neighbour"] in {r["id"] for r in results}
        assert f["unscored_kept"] >= 1


def _no_floor(f, results, ctx):
    assert f["min_score"] is None and "unscored_kept" not in f
    assert f["relevance_scores"].split(":")[0] in ("present", "partial", "absent")
    if any("score" not in r for r in results):
        assert f["relevance_scores"] != "present"


def _limit(f, results, ctx):
    assert f["limit"] == 1 and "capped" not in f
    assert len(results) == 1


SAFEGUARDS = [
    pytest.param(Safeguard((), {}, _sensitivity_default), id="sensitivity-default"),
    pytest.param(Safeguard(("--include-sensitive",), {"include_sensitive": True},
                           _sensitivity_opt_in), id="sensitivity-opt-in"),
    pytest.param(Safeguard((), {}, _scopes_default), id="scopes-default"),
    pytest.param(Safeguard(("--scope", "user:*"), {"scopes": ["user:*"]}, _scopes_narrowed),
                 id="scopes-narrowed"),
    pytest.param(Safeguard((), {}, _review), id="review-status"),
    pytest.param(Safeguard(("--exclude-type", "document"), {"exclude_types": ["document"]},
                           _exclude_types), id="exclude-types"),
    pytest.param(Safeguard(("--type", "note"), {"types": ["note"]}, _types), id="types"),
    pytest.param(Safeguard((), {}, _current), id="current-only"),
    pytest.param(Safeguard(("--include-superseded",), {"include_superseded": True},
                           _with_superseded), id="include-superseded"),
    pytest.param(Safeguard(("--min-score", "0.01"), {"min_score": 0.01}, _min_score),
                 id="min-score"),
    pytest.param(Safeguard((), {}, _no_floor), id="no-floor"),
    pytest.param(Safeguard(("-n", "1"), {"limit": 1}, _limit), id="limit"),
]


def context(mode: Mode, ids: dict[str, str], *, mcp: bool) -> dict[str, Any]:
    # temporal '*' and the text modes serve every harbor page the filters admit (limit 10)
    return {"mcp": mcp, "ids": ids, "query": mode.query, "mode": mode.name,
            "served_all": mode.name in ("text", "exact", "temporal", "graph")}


@pytest.mark.parametrize("safeguard", SAFEGUARDS)
@pytest.mark.parametrize("mode", MODES)
def test_every_mode_states_every_safeguard(harbor, mode: Mode, safeguard: Safeguard):
    root, made = harbor
    data = _ok("search", mode.query, *mode.cli, *safeguard.cli, "--store", str(root))
    filters = data["filters_applied"]
    assert filters["mode"] == mode.name
    safeguard.check(filters, data["results"], context(mode, made, mcp=False))
    valid_v1(data["results"])


@pytest.mark.parametrize("mode", MODES)
def test_a_cursor_page_states_the_same_safeguards(harbor, mode: Mode):
    root, _made = harbor
    # graph mode starts from `limit` matches: one that has a relation to follow
    query = "walk" if mode.name == "graph" else mode.query
    args = ("search", query, *mode.cli, "-n", "1", "--min-score", "0.01",
            "--exclude-type", "document", "--store", str(root))
    first = _ok(*args)
    assert first["next_cursor"], "the mode serves more than one result"
    second = _ok(*args, "--cursor", first["next_cursor"])
    same = ("types", "exclude_types", "current_only", "lifecycle_statuses", "review_status",
            "include_sensitive", "sensitivity_filtering", "unclassified_sensitivity",
            "min_score", "min_score_applied_to", "scopes", "scopes_requested", "limit")
    assert {k: second["filters_applied"][k] for k in same} == \
        {k: first["filters_applied"][k] for k in same}
    assert second["filters_applied"]["offset"] == 1
    assert second["filters_applied"]["unscored_kept"] == sum(
        "score" not in r for r in second["results"])
    assert {r["id"] for r in first["results"]}.isdisjoint(r["id"] for r in second["results"])


def test_the_scan_of_a_fresh_clone_states_the_safeguards(harbor, tmp_path, monkeypatch):
    """No index yet: the scan answers (query/first_answer.py), with the same report. The build
    lock is held, as by a builder still at work, so no background build starts."""
    import fcntl
    import shutil

    root, made = harbor
    clone = tmp_path / "clone"
    shutil.copytree(root, clone, ignore=shutil.ignore_patterns(".pcp"))
    (clone / ".pcp").mkdir()
    fd = os.open(clone / ".pcp" / "index-build.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    monkeypatch.setenv("PCP_SCAN_FIRST_MIN_PAGES", "1")
    try:
        data = _ok("search", "harbor", "--exclude-type", "document", "--store", str(clone))
    finally:
        os.close(fd)
    filters = data["filters_applied"]
    assert filters["mode"] == "scan"
    ctx = context(Mode("scan", "harbor", (), {}), made, mcp=False)
    for check in (_sensitivity_default, _scopes_default, _review, _exclude_types, _current):
        check(filters, data["results"], ctx)
    assert filters["relevance_scores"].startswith("absent: every result was found by a scan")
