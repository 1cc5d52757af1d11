"""One notion of superseded, whichever way it was said (PCP §4.1 MUST NOT include superseded
facts; §4.2 current-only by default): `pcp link B supersedes A` supersedes A exactly as
`keystone add --supersedes` does, and the micro_prompt, both search engines, the keystone list,
the timeline and the stats agree, over the CLI and over MCP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import cli

pytestmark = pytest.mark.usefixtures("engine")

OLD, NEW = "Prefers spaces for indentation", "Prefers tabs for indentation"
OLD_EVENT, NEW_EVENT = "Moved to Oslo", "Moved to Bergen"


def _ok(*args: str) -> dict:
    result = cli(*args, "--json")
    assert result.code == 0, result.stderr
    return result.json


def _seed(root: Path) -> dict[str, str]:
    s = str(root)
    ids = {
        "old": _ok("keystone", "add", OLD, "--category", "preference", "--store", s)["page_id"],
        "new": _ok("keystone", "add", NEW, "--category", "preference", "--store", s)["page_id"],
        "old_event": _ok("timeline", "add", "2020-03", OLD_EVENT, "--store", s)["page_id"],
        "new_event": _ok("timeline", "add", "2020-04", NEW_EVENT, "--store", s)["page_id"],
    }
    # the index exists before the link: the link must update it without a rebuild
    assert len(_ok("search", "indentation", "--store", s)["results"]) == 2
    return ids


def _served(root: Path, ids: dict[str, str]) -> dict[str, object]:
    """What every read surface says about the four pages."""
    s = str(root)
    micro = cli("export", "--format", "micro_prompt", "--store", s)
    assert micro.code == 0, micro.stderr
    return {
        "micro_prompt": micro.stdout,
        "search": {r["id"] for r in _ok("search", "indentation", "--store", s)["results"]},
        "search_events": {r["id"] for r in _ok("search", "moved", "--store", s)["results"]},
        "keystones": {k["id"] for k in _ok("keystone", "list", "--store", s)},
        "all_keystones": {k["id"]: k["status"]
                          for k in _ok("keystone", "list", "--all", "--store", s)},
        "timeline": {e["id"] for e in _ok("timeline", "list", "--store", s)["events"]},
        "stats": _ok("stats", "--store", s)["by_lifecycle"],
    }


def _assert_superseded(seen: dict[str, object], ids: dict[str, str]) -> None:
    assert OLD not in seen["micro_prompt"] and NEW in seen["micro_prompt"]
    assert seen["search"] == {ids["new"]}
    assert seen["search_events"] == {ids["new_event"]}
    assert seen["keystones"] == {ids["new"]}
    assert seen["all_keystones"][ids["old"]] == "superseded"
    assert seen["timeline"] == {ids["new_event"]}
    assert seen["stats"] == {"active": 2, "superseded": 2}


def test_a_supersedes_link_supersedes_everywhere(store: Path) -> None:
    ids = _seed(store)
    s = str(store)
    first = cli("link", ids["new"], "supersedes", ids["old"], "--store", s)
    assert first.code == 0 and first.stdout.startswith("linked"), first.stderr
    linked = _ok("link", ids["new_event"], "supersedes", ids["old_event"], "--store", s)
    assert linked["relation_type"] == "supersedes"
    _assert_superseded(_served(store, ids), ids)

    shown = _ok("show", ids["old"], "--store", s)["page"]
    assert shown["lifecycle_status"] == "superseded"
    # said again: the same relation, nothing new written
    again = cli("link", ids["new"], "supersedes", ids["old"], "--store", s)
    assert again.code == 0 and again.stdout.startswith("already linked"), again.stdout
    assert len(list((store / "relations").glob("*.json"))) == 2
    # nothing for doctor to finish
    assert _ok("doctor", "--store", s)["findings"] == []


def test_the_index_rebuilt_agrees(store: Path) -> None:
    ids = _seed(store)
    s = str(store)
    _ok("link", ids["new"], "supersedes", ids["old"], "--store", s)
    _ok("link", ids["new_event"], "supersedes", ids["old_event"], "--store", s)
    assert cli("index", "--rebuild", "--store", s).code == 0
    _assert_superseded(_served(store, ids), ids)


def test_a_proposal_supersedes_once_accepted(store: Path) -> None:
    ids = _seed(store)
    s = str(store)
    proposed = _ok("keystone", "propose", "Prefers two-space tabs", "--category", "preference",
                   "--store", s)["page_id"]
    _ok("link", proposed, "supersedes", ids["new"], "--store", s)
    assert ids["new"] in {k["id"] for k in _ok("keystone", "list", "--store", s)}
    assert cli("review", "accept", proposed, "--store", s).code == 0
    listed = {k["id"] for k in _ok("keystone", "list", "--store", s)}
    assert ids["new"] not in listed and proposed in listed


def test_doctor_finishes_a_relation_written_by_hand(store: Path) -> None:
    """A `supersedes` relation file that arrived without the superseded revision (by hand, or
    a crash between the two writes) is found and finished by `pcp doctor --fix`."""
    ids = _seed(store)
    s = str(store)
    _ok("link", ids["new"], "related_to", ids["old"], "--store", s)
    path = next((store / "relations").glob("*.json"))
    data = json.loads(path.read_text())
    data["relation_type"] = "supersedes"
    path.write_text(json.dumps(data, sort_keys=True, indent=2) + "\n")
    found = cli("doctor", "--json", "--store", s)
    assert found.code == 8
    assert [f["kind"] for f in found.json["findings"]] == ["unfinished_supersede"]
    assert cli("doctor", "--fix", "--store", s).code == 0
    assert _ok("show", ids["old"], "--store", s)["page"]["lifecycle_status"] == "superseded"
    assert ids["old"] not in {k["id"] for k in _ok("keystone", "list", "--store", s)}

