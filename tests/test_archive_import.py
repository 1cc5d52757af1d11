"""Importing PCP v1 files (`import_archive`): validation first, ids and extensions kept,
idempotent, and export -> import -> export gives the same objects."""

from __future__ import annotations

import copy
import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcp_cli import api
from pcp_cli.adapters.archive import import_archive
from pcp_cli.errors import InvalidInput
from pcp_cli.store.store import Store
from tests.conftest import V1_EXAMPLES, cli, snapshot

EXAMPLE_ARCHIVE = V1_EXAMPLES / "full-archive.example.json"
COUNTS = ("created", "revised", "unchanged", "skipped", "failed")


def counts(summary: dict) -> tuple[int, ...]:
    return tuple(summary[k] for k in COUNTS)


def write_json(path: Path, data) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def do_import(root: Path, path: Path, **kw) -> dict:
    with api.open_store(root) as store:
        return import_archive(store, path, **kw)


def export_archive(root: Path, *extra: str) -> dict:
    result = cli("export", "--format", "archive", "--store", root, *extra)
    assert result.code == 0, result.stderr
    return result.json


def new_store(parent: Path, name: str) -> Path:
    root = parent / name
    Store.init(root, owner_id="tester")
    return root


# -- the published example --------------------------------------------------------------------
def test_the_published_example_imports_cleanly(store):
    summary = do_import(store, EXAMPLE_ARCHIVE)
    assert summary == {"format": "archive", "dry_run": False, "created": 14, "revised": 0,
                       "unchanged": 0, "skipped": 0, "failed": 0, "problems": []}
    original = json.loads(EXAMPLE_ARCHIVE.read_text("utf-8"))
    exported = export_archive(store)
    assert exported["profile"] == original["profile"]
    assert exported["timeline_events"] == original["timeline_events"]
    by_id = {k["id"]: k for k in exported["keystones"]}
    for ks in original["keystones"]:
        assert by_id[ks["id"]] == ks  # never classified: no sensitivity is made up
    pages = {p["page_id"]: p for p in cli("ls", "--json", "--store", store).json}
    assert pages["ks-001"]["review_status"] == "affirmed"  # the person's own export
    assert cli("review", "--json", "--store", store).json == []


def test_the_published_examples_micro_prompt_reads_well(store):
    do_import(store, EXAMPLE_ARCHIVE)
    prompt = cli("export", "--format", "micro_prompt", "--store", store).stdout
    lines = prompt.rstrip("\n").split("\n\n")
    assert lines[0].startswith("Ada Lumen — Freelance data-visualization developer & science "
                               "writer. ")
    assert lines[1].startswith("Current focus: Building Tidewatch")
    assert lines[2].startswith("How to work with Ada: Treats AI as a pair-programmer")
    assert lines[-1] == "(profile as of 2026-01-15)"  # the source's date, not the import's
    assert len(prompt.rstrip("\n")) <= 1400
    assert "FICTIONAL" not in prompt  # the archive's top-level note is not profile material


def test_reimporting_the_same_file_creates_nothing(store):
    do_import(store, EXAMPLE_ARCHIVE)
    before = snapshot(store)
    assert counts(do_import(store, EXAMPLE_ARCHIVE)) == (0, 0, 14, 0, 0)
    assert snapshot(store) == before


def test_local_revisions_survive_reimporting_the_same_file(store):
    do_import(store, EXAMPLE_ARCHIVE)
    assert cli("keystone", "confirm", "ks-003", "--store", store).code == 0
    assert counts(do_import(store, EXAMPLE_ARCHIVE)) == (0, 0, 14, 0, 0)


def test_importing_a_changed_file_revises_what_changed(store, tmp_path):
    do_import(store, EXAMPLE_ARCHIVE)
    # unclassified in the file, so out of the micro_prompt until the person classifies it; a
    # newer file that still says nothing keeps the person's classification
    assert cli("revise", "ks-003", "--sensitivity", "low", "--store", store).code == 0
    data = json.loads(EXAMPLE_ARCHIVE.read_text("utf-8"))
    data["keystones"][2]["content"] = "Prefers Svelte 5 and D3."
    data["timeline_events"].append({"id": "tl-007", "date": "2026-01",
                                    "summary": "Tidewatch public beta.", "category": "milestone"})
    data["profile"]["primary_focus"] = "Launching the Tidewatch beta"
    # A newer export of the same source (the same file name; pcp archives carry a store id).
    summary = do_import(store, write_json(tmp_path / EXAMPLE_ARCHIVE.name, data))
    assert counts(summary) == (1, 2, 12, 0, 0)
    history = cli("history", "ks-003", "--json", "--store", store).json["revisions"]
    assert len(history) == 3 and history[-1]["operation"] == "import"
    assert history[-1]["created_by"] == {"actor_type": "tool", "actor_id": "pcp-import-archive"}
    assert "Prefers Svelte 5 and D3." in cli("export", "--format", "micro_prompt",
                                             "--store", store).stdout


def test_dry_run_writes_nothing(store):
    before = snapshot(store)
    summary = do_import(store, EXAMPLE_ARCHIVE, dry_run=True)
    assert summary["dry_run"] is True and counts(summary) == (14, 0, 0, 0, 0)
    assert snapshot(store) == before


def test_namespace_option(store):
    do_import(store, EXAMPLE_ARCHIVE, namespace="imported:ada")
    pages = cli("ls", "--json", "--store", store).json
    assert {p["namespace"] for p in pages} == {"imported:ada"}


# -- invalid files ----------------------------------------------------------------------------
def test_an_invalid_file_is_refused_whole_with_every_error(store, tmp_path):
    data = json.loads(EXAMPLE_ARCHIVE.read_text("utf-8"))
    data["keystones"][1]["confidence"] = 1.5
    data["keystones"][3]["category"] = "mood"
    del data["keystones"][4]["content"]
    data["timeline_events"][0]["date"] = "last spring"
    data["profile"]["hobby"] = "sailing"
    before = snapshot(store)
    with pytest.raises(InvalidInput) as caught:
        do_import(store, write_json(tmp_path / "bad.json", data))
    details = caught.value.details
    assert len(details) == 5, details
    joined = "\n".join(details)
    for where in ("keystones/1/confidence: ", "keystones/3/category: ", "keystones/4: ",
                  "timeline_events/0/date: ", "profile: "):
        assert where in joined, (where, details)
    assert "'content' is a required property" in joined
    assert "nothing was imported" in caught.value.message
    assert snapshot(store) == before


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"kind": "something-else", "schema_version": "1.0"}, "kind: must be"),
        ([{"id": "a", "content": "x"}, {"id": "a", "content": "y"}], "1/id: 'a' is used twice"),
        ("just a string", "not a PCP v1 file"),
        ({"kind": "pcp.full-archive", "schema_version": "1.0", "keystones": {}},
         "keystones: must be a list"),
    ],
)
def test_other_invalid_files(store, tmp_path, data, expected):
    with pytest.raises(InvalidInput) as caught:
        do_import(store, write_json(tmp_path / "bad.json", data))
    assert any(expected in d for d in caught.value.details), caught.value.details


def test_unreadable_files(store, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(InvalidInput) as caught:
        do_import(store, bad)
    assert caught.value.details[0].startswith("(top): not valid JSON")
    with pytest.raises(InvalidInput):
        do_import(store, tmp_path / "missing.json")


# -- the other shapes -------------------------------------------------------------------------
def test_bare_profile_keystone_list_and_timeline_list(store, tmp_path):
    data = json.loads(EXAMPLE_ARCHIVE.read_text("utf-8"))
    assert counts(do_import(store, write_json(tmp_path / "p.json", data["profile"]))) == (
        1, 0, 0, 0, 0)
    assert counts(do_import(store, write_json(tmp_path / "k.json", data["keystones"]))) == (
        7, 0, 0, 0, 0)
    assert counts(do_import(store, write_json(tmp_path / "t.json",
                                              data["timeline_events"]))) == (6, 0, 0, 0, 0)
    assert counts(do_import(store, EXAMPLE_ARCHIVE)) == (0, 0, 14, 0, 0)


def test_deleted_keystones_are_skipped(store, tmp_path):
    data = [{"id": "k1", "content": "Old.", "status": "deleted"},
            {"id": "k2", "content": "Kept.", "status": "superseded"}]
    summary = do_import(store, write_json(tmp_path / "k.json", data))
    assert counts(summary) == (1, 0, 0, 1, 0)
    assert summary["problems"] == [{"source": str(tmp_path / "k.json"), "item": "k1",
                                    "reason": "a deleted keystone is not imported"}]
    exported = export_archive(store)["keystones"]
    assert [(k["id"], k["status"]) for k in exported] == [("k2", "superseded")]


def test_unsafe_and_clashing_ids_are_mapped_and_given_back(store, tmp_path):
    data = {
        "schema_version": "1.0", "kind": "pcp.full-archive", "generated_at": "2026-01-01T00:00:00Z",
        "keystones": [
            {"id": "../etc/passwd", "content": "Unsafe id.", "sensitivity": "low",
             "extensions": {}},
            {"id": "KS-1", "content": "Upper case.", "extensions": {}},
            {"id": "ks-1", "content": "Lower case.", "supersedes": "../etc/passwd",
             "sensitivity": "low", "extensions": {}},
            {"id": "profile", "content": "Named like the profile page.", "extensions": {}},
        ],
        "timeline_events": [{"id": "KS-1", "date": "2020", "summary": "Same id, other type.",
                             "extensions": {}}],
    }
    path = write_json(tmp_path / "ids.json", data)
    assert counts(do_import(store, path)) == (5, 0, 0, 0, 0)
    assert counts(do_import(store, path)) == (0, 0, 5, 0, 0)
    page_ids = {p["page_id"] for p in cli("ls", "--json", "--store", store).json}
    assert "KS-1" in page_ids and "profile" not in page_ids
    assert all("/" not in pid and ".." not in pid for pid in page_ids)
    exported = export_archive(store)
    assert {k["id"] for k in exported["keystones"]} == {"../etc/passwd", "KS-1", "ks-1",
                                                        "profile"}
    ks1 = next(k for k in exported["keystones"] if k["id"] == "ks-1")
    assert ks1["supersedes"] == "../etc/passwd"
    assert [e["id"] for e in exported["timeline_events"]] == ["KS-1"]
    # The superseded (mapped) keystone is kept out of the micro_prompt.
    prompt = cli("export", "--format", "micro_prompt", "--store", store).stdout
    assert "Unsafe id." not in prompt and "Lower case." in prompt


def test_unknown_extensions_are_kept_with_nested_values(store, tmp_path):
    ext = {"com.example.mood": {"energy": "calm", "scores": [1, 2.5, None, True],
                                "deep": {"a": {"b": ["c"]}}},
           "org.other:tag": "x"}
    data = [{"id": "k1", "content": "Has extensions.", "extensions": ext}]
    do_import(store, write_json(tmp_path / "k.json", data))
    assert export_archive(store)["keystones"][0]["extensions"] == ext


# -- the round trip, with generated data ------------------------------------------------------
TEXT = st.text(st.characters(codec="utf-8", categories=("L", "N", "P", "Zs", "S")),
               min_size=1, max_size=60).filter(lambda s: s.strip())
STAMP = st.datetimes(min_value=__import__("datetime").datetime(2000, 1, 1),
                     max_value=__import__("datetime").datetime(2030, 1, 1)).map(
    lambda d: d.replace(microsecond=0).isoformat() + "Z")
UNIT = st.one_of(st.integers(0, 1), st.floats(0, 1, allow_nan=False).map(lambda f: round(f, 3)))
KEY = st.from_regex(r"\A[a-z]{2,6}\.[a-z]{2,6}(\.[a-z]{1,4})?\Z")
LEAF = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                 st.floats(-1e6, 1e6, allow_nan=False).map(lambda f: round(f, 2)), TEXT)
VALUE = st.recursive(LEAF, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.from_regex(r"\A[a-z_]{1,8}\Z"), inner,
                                                 max_size=3)), max_leaves=8)
EXTENSIONS = st.dictionaries(KEY, VALUE, max_size=3)
IDS = st.one_of(st.from_regex(r"\A[a-z][a-z0-9-]{0,10}\Z"), TEXT)


@st.composite
def keystone(draw, id_):
    obj = {"id": id_, "content": draw(TEXT)}
    for key, strategy in (("category", st.sampled_from(["identity", "preference", "rule",
                                                        "objective", "constraint",
                                                        "relationship", "glossary", "other"])),
                          ("confidence", UNIT), ("importance", UNIT),
                          ("source", st.sampled_from(["user_stated", "inferred", "imported",
                                                      "other"])),
                          ("status", st.sampled_from(["active", "superseded"])),
                          ("sensitivity", st.sampled_from(["low", "medium", "high"])),
                          ("created_at", STAMP), ("last_confirmed_at", STAMP)):
        if draw(st.booleans()):
            obj[key] = draw(strategy)
    obj["extensions"] = draw(EXTENSIONS)
    return obj


@st.composite
def archives(draw):
    ks_ids = draw(st.lists(IDS, max_size=5, unique_by=str.lower))
    ev_ids = draw(st.lists(IDS, max_size=4, unique_by=str.lower))
    keystones = [draw(keystone(i)) for i in ks_ids]
    if len(keystones) > 1 and draw(st.booleans()):
        keystones[0]["supersedes"] = keystones[1]["id"]
    events = []
    for i in ev_ids:
        ev = {"id": i, "date": draw(st.from_regex(r"\A(19|20)[0-9][0-9](-0[1-9](-1[0-9])?)?\Z")),
              "summary": draw(TEXT)}
        if draw(st.booleans()):
            ev["category"] = draw(st.sampled_from(["job", "move", "milestone", "publication",
                                                   "relationship", "other"]))
        if draw(st.booleans()):
            ev["confidence"] = draw(UNIT)
        ev["extensions"] = draw(EXTENSIONS)
        events.append(ev)
    profile = {"schema_version": "1.0", "generated_at": draw(STAMP)}
    for key in ("name", "profession", "primary_focus", "summary", "working_style"):
        if draw(st.booleans()):
            profile[key] = draw(TEXT)
    if draw(st.booleans()):
        profile["values"] = draw(st.lists(TEXT, min_size=1, max_size=3))
    profile["extensions"] = draw(EXTENSIONS)
    return {"schema_version": "1.0", "kind": "pcp.full-archive",
            "generated_at": "2026-01-01T00:00:00Z", "profile": profile,
            "keystones": keystones, "timeline_events": events}


def _without_generated_at(data: dict) -> dict:
    data = copy.deepcopy(data)
    data.pop("generated_at")
    data.pop("extensions")  # names the store it came from
    return data


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(archives())
def test_export_import_export_round_trip(data):
    tmp = Path(tempfile.mkdtemp())
    try:
        first_store, second_store = new_store(tmp, "a"), new_store(tmp, "b")
        source = write_json(tmp / "source.json", data)
        summary = do_import(first_store, source)
        assert summary["failed"] == 0, summary
        exported = export_archive(first_store, "--include-sensitive")
        # ids and unknown extensions survive the first import
        assert {k["id"] for k in exported["keystones"]} == {k["id"] for k in data["keystones"]}
        by_id = {k["id"]: k for k in exported["keystones"]}
        for ks in data["keystones"]:
            assert by_id[ks["id"]]["extensions"] == ks["extensions"]
            assert by_id[ks["id"]]["content"] == ks["content"].rstrip()  # trailing space goes
        assert exported["profile"].get("extensions", {}) == data["profile"]["extensions"]

        path = write_json(tmp / "export.json", exported)
        assert do_import(second_store, path)["failed"] == 0
        again = export_archive(second_store, "--include-sensitive")
        assert _without_generated_at(again) == _without_generated_at(exported)
        assert counts(do_import(second_store, path))[:2] == (0, 0)  # nothing new
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
