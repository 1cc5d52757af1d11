"""Conformance rows whose earlier tests could not fail (issue #31, "tests that see each layer"):

- PG-tombstone, TombstonePage 保留审计关系 (a tombstone keeps the audit relations): a tombstoned
  page with relations both ways keeps every relation file byte for byte, both pages' relations
  views still show them, and only a retention collection that the person runs may remove them.
- PG-separate-axes, 来源完整性、事实状态、敏感级别和指令资格是不同问题 (integrity, epistemic status,
  sensitivity and instruction policy are separate questions): every way pcp writes a page
  records each axis on its own, none left `unknown`, and pages that agree on one axis differ on
  another.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import cli

AXES = ("origin", "integrity", "epistemic_status", "sensitivity", "instruction_policy")


def ok(*args: object) -> dict:
    result = cli(*(str(a) for a in args), "--json")
    assert result.code == 0, result.stderr
    return result.json


def relation_files(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (root / "relations").glob("*.json")}


def test_a_tombstoned_pages_relations_are_kept(store: Path) -> None:
    doomed = ok("add", "Old design notes", "--store", store)["page_id"]
    summary = ok("add", "Summary of the design", "--type", "summary", "--derived-from", doomed,
                 "--store", store)["page_id"]
    spec = ok("add", "The spec it depends on", "--store", store)["page_id"]
    ok("link", summary, "derived_from", doomed, "--store", store)
    ok("link", doomed, "depends_on", spec, "--store", store)
    before = relation_files(store)
    assert len(before) == 2  # summary derived_from doomed, doomed depends_on spec
    ok("tombstone", doomed, "--reason", "superseded by the summary", "--store", store)
    assert relation_files(store) == before  # every relation file, byte for byte
    for page in (summary, spec):
        shown = ok("show", page, "--view", "relations", "--store", store)["relations"]
        assert doomed in {r["from_page_id"] for r in shown} | {r["to_page_id"] for r in shown}
    kept = ok("show", doomed, "--view", "relations", "--store", store)["relations"]
    assert {r["relation_type"] for r in kept} == {"derived_from", "depends_on"}
    # the store is whole, and nothing but a retention collection the person runs removes them
    assert cli("validate", str(store)).code == 0
    ok("retention", "set", "--tombstoned-pages", "1d", "--store", store)
    assert relation_files(store) == before


def axes_of(root: Path, page_id: str) -> dict[str, object]:
    page = ok("show", page_id, "--store", root)["page"]
    return {axis: page[axis] for axis in AXES}


def test_every_write_records_each_trust_axis_on_its_own(store: Path) -> None:
    from pcp_cli import api

    s = ("--store", store)
    pages = {
        "note": ok("add", "A note of mine", *s)["page_id"],
        "rule": ok("keystone", "add", "Answer briefly.", "--category", "rule", *s)["page_id"],
        "event": ok("timeline", "add", "2024-05", "Moved to Lisbon", *s)["page_id"],
    }
    pages["summary"] = ok("add", "What the note says", "--type", "summary", "--derived-from",
                          pages["note"], *s)["page_id"]
    proposal = ok("keystone", "propose", "Likes long walks", "--category", "preference",
                  *s)["page_id"]
    with api.open_store(store) as opened:
        api.accept_proposal(opened, proposal, content="Likes long walks by the sea")
        pages["edited"] = proposal
        pages["model"] = api.propose_keystone(opened, "Prefers dark mode",
                                              actor=api.Actor("model", "claude")).page_id
    line = {"type": "message", "conversation_id": "c1", "role": "user", "content": "hi"}
    ingested = cli("ingest", "-", "--store", str(store), "--json", input=json.dumps(line) + "\n")
    assert ingested.code == 0, ingested.stderr
    pages["conversation"] = ingested.json["conversations"][0]["page_id"]
    seen = {name: axes_of(store, page_id) for name, page_id in pages.items()}
    for name, axes in seen.items():
        assert "unknown" not in axes.values() and None not in axes.values(), (name, axes)
    # each axis answers its own question: pages alike on one differ on another
    assert seen["note"]["origin"] == seen["event"]["origin"] == "user_stated"
    assert seen["rule"]["epistemic_status"] == "affirmed" != seen["note"]["epistemic_status"]
    assert seen["rule"]["instruction_policy"] == "advisory"
    assert seen["model"]["instruction_policy"] == "data_only"  # a model's: data, even a rule
    assert seen["edited"]["integrity"] == "edited" and seen["summary"]["integrity"] == "derived"
    assert seen["note"]["integrity"] == "verbatim"
    assert seen["conversation"]["origin"] == "recorded"
    assert seen["model"]["epistemic_status"] == "asserted"
    assert seen["edited"]["epistemic_status"] == "affirmed"
