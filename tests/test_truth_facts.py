"""Smaller untruths (issue #22, items 4 and 8), through the CLI: what a record never said stays
unsaid through import, export and archive round trips; an archived keystone is exported as
archived; an archive's own extensions come back; stats' time range is observed time."""

from __future__ import annotations

import json
from pathlib import Path

from jsonschema import Draft202012Validator

from tests.adapters.adapter_builders import gpt_branching, write_folder
from tests.conftest import V1_EXAMPLES, V12_SCHEMAS, cli
from tests.test_archive_import import export_archive as export
from tests.test_archive_import import new_store

EXAMPLE_ARCHIVE = V1_EXAMPLES / "full-archive.example.json"


def ok(*args: object) -> object:
    result = cli(*(str(a) for a in args), "--json")
    assert result.code == 0, result.stderr
    return result.json


def keystone_validator() -> Draft202012Validator:
    return Draft202012Validator(json.loads((V12_SCHEMAS / "keystone.schema.json").read_text()))


def test_unclassified_keystones_stay_unclassified_through_round_trips(tmp_path: Path) -> None:
    data = json.loads(EXAMPLE_ARCHIVE.read_text("utf-8"))
    assert all("sensitivity" not in k for k in data["keystones"])
    data["keystones"][0]["sensitivity"] = "medium"  # one classified, to see it kept too
    source = tmp_path / "archive.json"
    source.write_text(json.dumps(data))
    first, second = new_store(tmp_path, "first"), new_store(tmp_path, "second")
    ok("import", source, "--store", first)
    classified = data["keystones"][0]["id"]
    for ks in data["keystones"]:
        page = ok("show", ks["id"], "--store", first)["page"]
        assert page["sensitivity"] == ("medium" if ks["id"] == classified else None)
    exported = export(first)
    by_id = {k["id"]: k for k in exported["keystones"]}
    assert by_id[classified]["sensitivity"] == "medium"
    assert [k for k in by_id.values() if "sensitivity" in k] == [by_id[classified]]
    # and again, through a second store: the same keystones come back
    again = tmp_path / "again.json"
    again.write_text(json.dumps(exported))
    ok("import", again, "--store", second)
    assert export(second)["keystones"] == exported["keystones"]
    # re-importing the first file into the first store changes nothing
    assert ok("import", source, "--store", first)["created"] == 0


def test_an_archived_keystone_is_exported_as_archived(tmp_path: Path) -> None:
    root = new_store(tmp_path, "store")
    page = ok("keystone", "add", "Prefers sailing to rowing.", "--category", "preference",
              "--store", root)["page_id"]
    assert cli("archive", page, "--store", str(root)).code == 0
    [obj] = export(root)["keystones"]
    assert "status" not in obj  # v1 has no word for archived, and nothing superseded it
    assert obj["extensions"]["org.pcp-cli"]["lifecycle_status"] == "archived"
    assert not list(keystone_validator().iter_errors(obj))
    # pcp gives it back as archived, without the bookkeeping in the page's extensions
    path = tmp_path / "out.json"
    path.write_text(json.dumps(export(root)))
    other = new_store(tmp_path, "other")
    ok("import", path, "--store", other)
    shown = ok("show", page, "--store", other)["page"]
    assert shown["lifecycle_status"] == "archived"
    assert "org.pcp-cli" not in (shown.get("extensions") or {})
    assert page not in {k["id"] for k in ok("keystone", "list", "--store", other)}


def test_an_archives_own_extensions_come_back_on_export(tmp_path: Path) -> None:
    data = json.loads(EXAMPLE_ARCHIVE.read_text("utf-8"))
    data["extensions"] = {"com.example.exporter": {"version": "3.1", "nested": [1, {"a": 2}]},
                          "org.pcp-cli": {"store_id": "st_elsewhere"}}
    source = tmp_path / "archive.json"
    source.write_text(json.dumps(data))
    root = new_store(tmp_path, "store")
    ok("import", source, "--store", root)
    exported = export(root)
    assert exported["extensions"]["com.example.exporter"] == data["extensions"][
        "com.example.exporter"]
    store_id = (root / "pcp.yaml").read_text().split("store_id: ")[1].split()[0]
    assert exported["extensions"]["org.pcp-cli"] == {"store_id": store_id}
    assert ok("import", source, "--store", root)["unchanged"] == 14  # nothing new
    # a changed envelope alone revises the profile page it is kept on
    data["extensions"]["com.example.exporter"]["version"] = "3.2"
    source.write_text(json.dumps(data))
    assert ok("import", source, "--store", root)["revised"] == 1
    assert export(root)["extensions"]["com.example.exporter"]["version"] == "3.2"


def test_envelope_extensions_without_a_profile_are_reported_not_dropped(tmp_path: Path) -> None:
    data = {"schema_version": "1.0", "kind": "pcp.full-archive",
            "generated_at": "2026-01-01T00:00:00Z", "keystones": [],
            "extensions": {"com.example.exporter": {"v": 1}}}
    source = tmp_path / "bare.json"
    source.write_text(json.dumps(data))
    summary = ok("import", source, "--store", new_store(tmp_path, "store"))
    assert summary["skipped"] == 1
    assert "extensions" in summary["problems"][0]["reason"]


def test_stats_time_range_is_when_the_conversations_happened(tmp_path: Path) -> None:
    root = new_store(tmp_path, "store")
    export_dir = write_folder(tmp_path / "gpt", {"conversations.json": [gpt_branching()]})
    ok("import", export_dir, "--store", root)
    span = ok("stats", "--store", root)["time_range"]
    # the conversation ran on 2024-05-01; it was imported today
    assert span["earliest"].startswith("2024-05-01") and span["latest"].startswith("2024-05-01")


def test_the_sql_observed_range_is_the_accessors(example: Path, tmp_path: Path) -> None:
    """Stats compute observed time in SQL (store/catalog.py, OBSERVED_SQL): the same range as
    `model.page.observed_time` over every entry, imported material with no time included."""
    from pcp_cli import api
    from pcp_cli.query.observed import entry_observed

    export_dir = write_folder(tmp_path / "gpt", {"conversations.json": [gpt_branching()]})
    ok("import", export_dir, "--store", example)
    bare = tmp_path / "bare.json"  # imported, no time of its own: none
    bare.write_text(json.dumps([{"id": "no-time", "content": "A claim without a date."}]))
    ok("import", bare, "--store", example)
    with api.open_store(example, readonly=True) as store:
        times = [t for e in store.entries() if (t := entry_observed(e))]
        assert len(times) < len(store.entries())  # some have none
        assert api.stats(store)["time_range"] == {"earliest": min(times), "latest": max(times)}
