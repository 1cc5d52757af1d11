"""PCP v1.2 §7.2, consumer conformance: pcp reading PCP context (an archive to import, the device
registry, another source's search results) never rejects or discards it for missing optional
fields, unknown extension keys or types, absent provenance, a dangling `supersedes`, or
staleness. One test per obligation, each on a file that has only that oddity."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import V12_SCHEMAS, cli
from tests.test_archive_import import new_store

ENVELOPE = {"schema_version": "1.0", "kind": "pcp.full-archive",
            "generated_at": "2026-01-01T00:00:00Z", "profile": {"schema_version": "1.0"}}


def imported(tmp_path: Path, keystones: list[dict], events: list[dict] = ()) -> dict:
    """Import an archive holding `keystones` and `events` into a new store; its export."""
    path = tmp_path / "archive.json"
    path.write_text(json.dumps({**ENVELOPE, "keystones": keystones,
                                "timeline_events": list(events)}), "utf-8")
    root = new_store(tmp_path, "store")
    result = cli("import", str(path), "--store", str(root), "--json")
    assert result.code == 0, result.stderr
    assert result.json["created"] == len(keystones) + len(events)
    assert result.json["skipped"] == result.json["failed"] == 0
    out = cli("export", "--format", "archive", "--store", str(root))
    assert out.code == 0, out.stderr
    exported = json.loads(out.stdout)
    exported["_root"] = str(root)
    return exported


def by_id(objects: list[dict]) -> dict[str, dict]:
    return {o["id"]: o for o in objects}


def valid(obj: dict, name: str) -> list[str]:
    from jsonschema import Draft202012Validator

    schema = json.loads((V12_SCHEMAS / f"{name}.schema.json").read_text())
    return [e.message for e in Draft202012Validator(schema).iter_errors(obj)]


def test_missing_optional_fields(tmp_path: Path) -> None:
    data = imported(tmp_path, [{"id": "k1", "content": "Only an id and content."}],
                    [{"id": "e1", "date": "2024", "summary": "Only the required three."}])
    [keystone], [event] = data["keystones"], data["timeline_events"]
    assert keystone["content"] == "Only an id and content."
    assert event["summary"] == "Only the required three."
    # an event without a category is treated as a keystone without one: `other`
    assert keystone["category"] == event["category"] == "other"
    assert valid(keystone, "keystone") == [] and valid(event, "timeline-event") == []


@pytest.mark.parametrize("extensions", [
    {"mood": "calm"},  # a key without a namespace
    {"com.example.list": [1, {"a": None}], "org.other:n": 3.5, "z.q": None, "x.y": True},
    {"com.example.deep": {"a": {"b": {"c": ["d"]}}}},
])
def test_unknown_extension_keys_and_value_types_are_kept(tmp_path: Path,
                                                         extensions: dict) -> None:
    given = [{"id": "k1", "content": "Odd extensions.", "extensions": extensions}]
    events = [{"id": "e1", "date": "2024-05", "summary": "Odd too.", "extensions": extensions}]
    data = imported(tmp_path, given, events)
    assert data["keystones"][0]["extensions"] == extensions  # given back as they came
    assert data["timeline_events"][0]["extensions"] == extensions
    assert cli("validate", data["_root"]).code == 0


def test_unknown_search_result_types_and_fields_from_another_source_are_shown(
        capsys: pytest.CaptureFixture[str]) -> None:
    """What `pcp search --sources` prints of another source's results: shown as far as they
    go, never a crash for a field or value it does not know."""
    from pcp_cli.cli.search import _print_results

    _print_results([
        {"id": "a", "type": "whiteboard-photo", "origin": "recorded", "snippet": "odd type"},
        {"id": "b", "type": "note", "origin": "imported", "snippet": "score as text",
         "score": "0.9", "timestamp": None, "extensions": ["not", "an", "object"]},
        {"id": "c", "type": "keystone", "origin": "approved", "snippet": "stale one",
         "stale": True, "timestamp": "2025-11-30T09:00:00Z",
         "extensions": {"org.pcp-cli": {"highlights": "not a list"}}},
        {"id": "d", "snippet": "no type, no origin"},
        "not even an object",
    ])
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["a", "b", "c", "d"]
    assert "whiteboard-photo" in lines[0]
    assert lines[1].split("\t")[3] == "-"  # a score it cannot read is not invented
    assert "2025-11-30 stale" in lines[2]
    assert lines[3].split("\t")[2] == "generated"  # unclassified: under-claimed


def test_absent_provenance(tmp_path: Path) -> None:
    data = imported(tmp_path, [{"id": "k1", "content": "No source, confidence or actors.",
                                "category": "preference"}])
    [keystone] = data["keystones"]
    for absent in ("confidence", "generated_by", "last_confirmed_by"):
        assert absent not in keystone  # nothing invented
    found = cli("search", "actors", "--store", data["_root"], "--json").json
    assert [r["id"] for r in found["results"]] == ["k1"]  # and served


def test_a_dangling_supersedes(tmp_path: Path) -> None:
    data = imported(tmp_path, [{"id": "k1", "content": "Replaces one not in this file.",
                                "supersedes": "ks-elsewhere"}])
    [keystone] = data["keystones"]
    assert keystone["supersedes"] == "ks-elsewhere" and keystone["status"] == "active"
    found = cli("search", "replaces", "--store", data["_root"], "--json").json
    assert [r["id"] for r in found["results"]] == ["k1"]


def test_staleness(tmp_path: Path) -> None:
    data = imported(tmp_path, [{"id": "k1", "content": "Stale these many years.",
                                "stale_after": "2001-01-01",
                                "last_confirmed_by": "memorandai/claude-opus-5"}])
    assert data["keystones"][0]["stale_after"] == "2001-01-01"
    found = cli("search", "stale years", "--store", data["_root"], "--json").json
    assert [(r["id"], r.get("stale")) for r in found["results"]] == [("k1", True)]


def test_a_v11_file_and_a_bare_keystone_list_import_too(tmp_path: Path) -> None:
    from tests.conftest import V1_EXAMPLES

    root = new_store(tmp_path, "store")
    assert cli("import", str(V1_EXAMPLES / "full-archive.example.json"), "--store",
               str(root)).code == 0
    bare = tmp_path / "list.json"
    bare.write_text(json.dumps([{"id": "b1", "content": "A bare list of one."}]))
    assert cli("import", str(bare), "--store", str(root)).code == 0


def test_the_device_registry_tolerates_what_it_does_not_know(tmp_path: Path) -> None:
    """A registry entry missing optional fields, or with keys, kinds, extension values or
    `added_by` values pcp does not know, is listed and usable; only one that cannot be launched
    as written (its args or env not what the schema says) is skipped, and said so."""
    registry = Path.home() / ".pcp" / "sources.json"
    registry.parent.mkdir(parents=True, exist_ok=True)
    registry.write_text(json.dumps({
        "pcp_registry_version": "1.0", "x-vendor": {"a": 1}, "extensions": {"mood": 1},
        "sources": [
            {"id": "bare", "transport": "stdio", "command": "pcp"},
            {"id": "odd", "name": 7, "kind": ["a-kind", 2], "transport": "stdio",
             "command": "pcp", "args": ["serve"], "added_by": "robot",
             "extensions": "not-an-object", "future_field": {"x": 1}, "description": 3},
            {"id": "web", "transport": "http", "url": "https://example.invalid/mcp",
             "extensions": {"org.pcp-cli": "not-an-object"}},
            {"id": "broken", "transport": "stdio", "command": "pcp", "args": "serve"},
        ]}))
    listed = cli("sources", "--json")
    assert listed.code == 0, listed.stderr
    data = listed.json
    assert [s["id"] for s in data["sources"]] == ["bare", "odd", "web"]
    assert data["problems"] == [f"{registry}: source 'broken': args must be a list of "
                                "strings; skipped"]
    human = cli("sources")
    assert human.code == 0 and "odd" in human.stdout and "Traceback" not in human.stderr
