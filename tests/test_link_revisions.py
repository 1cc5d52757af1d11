"""LinkPages to a named revision (issue #34): `pcp link rev_… depends_on rev_…` and
`pcp_link_pages` with revision ids relate those revisions, pinned, and say so when read back."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import cli


def ok(*args: object) -> dict:
    result = cli(*(str(a) for a in args), "--json")
    assert result.code == 0, result.stderr
    return result.json


def two_pages(root: Path) -> tuple[dict, dict]:
    assert cli("init", str(root), "--owner", "tester").code == 0
    design = ok("add", "Tidewatch design, first draft", "--store", root)
    spec = ok("add", "Tidewatch sensor spec, first draft", "--store", root)
    return design, spec


def test_a_link_between_revisions_stays_on_those_revisions(tmp_path: Path) -> None:
    root = tmp_path / "store"
    design, spec = two_pages(root)
    linked = ok("link", design["revision_id"], "depends_on", spec["revision_id"],
                "--store", root)
    assert (linked["from_page_id"], linked["from_revision_id"]) == (design["page_id"],
                                                                   design["revision_id"])
    assert (linked["to_page_id"], linked["to_revision_id"]) == (spec["page_id"],
                                                               spec["revision_id"])
    assert linked["pinned"] == ["from", "to"]
    newer = ok("revise", spec["page_id"], "Tidewatch sensor spec, second draft",
               "--store", root)
    [shown] = ok("show", design["page_id"], "--view", "relations", "--store", root)["relations"]
    assert shown["to_revision_id"] == spec["revision_id"]  # not the new head
    assert shown["pinned_now"]["to"] == {"revision_id": spec["revision_id"], "is_head": False,
                                         "head_revision_id": newer["revision_id"]}
    assert shown["pinned_now"]["from"]["is_head"] is True
    # said so on the terminal too, and the same link again is the same relation
    again = cli("link", design["revision_id"], "depends_on", spec["revision_id"],
                "--store", str(root))
    assert again.code == 0 and again.stdout.startswith("already linked")
    assert f"{spec['page_id']}@{spec['revision_id']}" in again.stdout
    assert "pinned" in again.stdout
    assert len(list((root / "relations").glob("*.json"))) == 1
    assert cli("validate", str(root)).code == 0
    # a page id on one end names that page's head, unpinned
    half = ok("link", design["page_id"], "related_to", spec["revision_id"], "--store", root)
    assert half["pinned"] == ["to"] and half["from_revision_id"] == design["revision_id"]


def test_an_unknown_revision_is_not_found_and_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "store"
    design, _spec = two_pages(root)
    result = cli("link", "rev_01NOPE0000000000000000000", "depends_on", design["page_id"],
                 "--store", str(root))
    assert result.code == 3 and "no revision or page rev_01NOPE" in result.stderr
    assert "Traceback" not in result.stderr
    assert not list((root / "relations").glob("*.json"))


def test_supersedes_names_current_revisions_only(tmp_path: Path) -> None:
    root = tmp_path / "store"
    assert cli("init", str(root), "--owner", "tester").code == 0
    old = ok("keystone", "add", "Prefers spaces.", "--category", "preference", "--store", root)
    new = ok("keystone", "add", "Prefers tabs.", "--category", "preference", "--store", root)
    ok("revise", old["page_id"], "Prefers spaces, four of them.", "--store", root)
    refused = cli("link", new["page_id"], "supersedes", old["revision_id"], "--store", str(root))
    assert refused.code == 2 and "not the head" in refused.stderr
    assert not list((root / "relations").glob("*.json"))
    # the head revision's id is the page: it supersedes as a page id would, unpinned
    head = ok("show", old["page_id"], "--store", root)["revision_id"]
    linked = ok("link", new["revision_id"], "supersedes", head, "--store", root)
    assert "pinned" not in linked
    assert ok("show", old["page_id"], "--store", root)["page"]["lifecycle_status"] == \
        "superseded"
