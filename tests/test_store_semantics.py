"""The semantics the store must keep, through the CLI on real folders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import cli, snapshot


def ok(*args: str, **kw) -> dict:
    result = cli(*args, "--json", **kw)
    assert result.code == 0, result.stderr
    return result.json


def revision_files(root: Path) -> dict[str, bytes]:
    return {k: v for k, v in snapshot(root).items()
            if k.startswith("revisions/") and k.endswith(".json")}


def assert_revisions_kept(before: dict[str, bytes], root: Path) -> dict[str, bytes]:
    after = revision_files(root)
    for name, raw in before.items():
        assert name in after, f"{name} disappeared"
        assert after[name] == raw, f"{name} was rewritten"
    return after


def head_path(root: Path, page_id: str) -> Path:
    found = list((root / "pages").rglob(f"{page_id}.md"))
    assert len(found) == 1, found
    return found[0]


# -- immutability ------------------------------------------------------------------------------
def test_revision_files_are_never_rewritten(store: Path) -> None:
    s = str(store)
    a = ok("add", "first page", "--store", s)
    b = ok("add", "second page", "--store", s)
    seen = revision_files(store)
    steps = [
        ("revise", a["page_id"], "first page, again", "--store", s),
        ("revise", a["page_id"], "--title", "A title", "--store", s),
        ("link", a["page_id"], "related_to", b["page_id"], "--store", s),
        ("keystone", "add", "I like tea", "--category", "preference", "--store", s),
        ("archive", b["page_id"], "--store", s),
        ("tombstone", a["page_id"], "--reason", "old", "--store", s),
        ("doctor", "--fix", "--store", s),
        ("ls", "--store", s),
        ("show", a["page_id"], "--store", s),
    ]
    for step in steps:
        result = cli(*step, "--json")
        assert result.code == 0, (step, result.stderr)
        after = assert_revisions_kept(seen, store)
        seen = after
    assert len(seen) == 2 + 2 + 1 + 1 + 1  # adds, revisions, keystone, archive, tombstone


def test_lifecycle_changes_are_new_revisions(store: Path) -> None:
    s = str(store)
    page = ok("add", "to be archived", "--store", s)["page_id"]
    for verb, status in (("archive", "archived"), ("tombstone", "tombstoned")):
        before = ok("history", page, "--store", s)["revisions"]
        result = ok(verb, page, "--store", s)
        after = ok("history", page, "--store", s)
        assert len(after["revisions"]) == len(before) + 1
        newest = after["revisions"][-1]
        assert newest["revision_id"] == result["revision_id"]
        assert newest["parent_revision_id"] == before[-1]["revision_id"]
        assert newest["lifecycle_status"] == status
        assert after["heads"] == [result["revision_id"]]


def test_supersedes_makes_a_revision_and_a_relation(store: Path) -> None:
    s = str(store)
    old = ok("keystone", "add", "I use vim", "--category", "preference", "--store", s)
    new = ok("keystone", "add", "I use helix", "--category", "preference",
             "--supersedes", old["page_id"], "--store", s)
    history = ok("history", old["page_id"], "--store", s)
    assert len(history["revisions"]) == 2
    last = history["revisions"][-1]
    assert last["lifecycle_status"] == "superseded"
    assert last["parent_revision_id"] == old["revision_id"]
    page = ok("show", old["page_id"], "--store", s)["page"]
    assert page["record"]["superseded_by"] == new["page_id"]
    relations = ok("show", new["page_id"], "--view", "relations", "--store", s)["relations"]
    assert [(r["relation_type"], r["from_page_id"], r["to_page_id"], r["to_revision_id"])
            for r in relations] == [("supersedes", new["page_id"], old["page_id"],
                                     old["revision_id"])]
    listed = {k["id"] for k in json.loads(cli("keystone", "list", "--json", "--store", s).stdout)}
    assert listed == {new["page_id"]}


def test_revise_expect_conflict_exits_4_and_writes_nothing(store: Path) -> None:
    s = str(store)
    first = ok("add", "v1", "--store", s)
    second = ok("revise", first["page_id"], "v2", "--store", s)
    before = snapshot(store)
    result = cli("revise", first["page_id"], "v3", "--expect", first["revision_id"],
                 "--store", s)
    assert result.code == 4
    assert first["revision_id"] in result.stderr
    assert second["revision_id"] in result.stderr
    assert "Traceback" not in result.stderr
    assert snapshot(store) == before
    as_json = cli("revise", first["page_id"], "v3", "--expect", first["revision_id"],
                  "--store", s, "--json")
    assert as_json.code == 4 and as_json.stdout == ""
    assert as_json.error_json["error"]["code"] == "revision_conflict"
    assert snapshot(store) == before
    # the right expectation goes through
    third = ok("revise", first["page_id"], "v3", "--expect", second["revision_id"], "--store", s)
    assert third["status"] == "revised"


def test_same_idempotency_key_twice_gives_one_page(store: Path) -> None:
    s = str(store)
    one = ok("add", "keyed text", "--idempotency-key", "import:1", "--store", s)
    before = snapshot(store)
    two = ok("add", "keyed text", "--idempotency-key", "import:1", "--store", s)
    assert (one["page_id"], one["revision_id"]) == (two["page_id"], two["revision_id"])
    assert two["status"] == "unchanged"
    assert snapshot(store) == before
    assert len(list((store / "revisions").glob("*/*.json"))) == 1
    assert len(ok("ls", "--store", s)) == 1


# -- hand edits --------------------------------------------------------------------------------
def _edit_and_drop(store: Path) -> tuple[str, Path, Path]:
    s = str(store)
    page = ok("add", "# Original\n\nbody text", "--store", s)["page_id"]
    path = head_path(store, page)
    path.write_text(path.read_text("utf-8").replace("body text", "edited in an editor"), "utf-8")
    dropped = store / "pages" / "user" / "tester" / "dropped note.md"
    dropped.write_text("# Dropped\n\nA note I wrote myself.\n", "utf-8")
    return page, path, dropped


def test_doctor_first_lists_hand_edit_and_dropped_file(store: Path) -> None:
    page, path, dropped = _edit_and_drop(store)
    before = snapshot(store)
    result = cli("doctor", "--json", "--store", str(store))
    assert result.code == 8
    kinds = {(f["kind"], f["path"]) for f in result.json["findings"]}
    assert ("hand_edit", path.relative_to(store).as_posix()) in kinds
    assert ("new_file", dropped.relative_to(store).as_posix()) in kinds
    assert snapshot(store) == before  # doctor without --fix changes nothing
    fixed = cli("doctor", "--fix", "--json", "--store", str(store))
    assert fixed.code == 0, fixed.stdout
    assert cli("doctor", "--json", "--store", str(store)).json["clean"]


def test_hand_edit_and_dropped_file_are_recorded_by_next_command(store: Path) -> None:
    s = str(store)
    page, path, dropped = _edit_and_drop(store)
    before = revision_files(store)
    listing = ok("ls", "--store", s)
    assert_revisions_kept(before, store)
    history = ok("history", page, "--store", s)
    assert len(history["revisions"]) == 2
    newest = history["revisions"][-1]
    assert newest["operation"] == "revise"
    assert "hand edit" in newest["note"]
    assert path.relative_to(store).as_posix() in newest["note"]
    assert "edited in an editor" in ok("show", page, "--store", s)["page"]["payload"]["content"]
    # the dropped file became a page with ids, and its file moved to <page_id>.md
    adopted = [e for e in listing if e["title"] == "Dropped"]
    assert len(adopted) == 1
    new_id = adopted[0]["page_id"]
    assert new_id.startswith("pg_")
    assert not dropped.exists()
    adopted_history = ok("history", new_id, "--store", s)["revisions"]
    assert len(adopted_history) == 1 and "adopted" in adopted_history[0]["note"]
    # and the store is clean again
    assert cli("doctor", "--store", s).code == 0


def test_hand_edit_is_recorded_by_revise_before_revising(store: Path) -> None:
    s = str(store)
    first = ok("add", "one", "--store", s)
    path = head_path(store, first["page_id"])
    path.write_text(path.read_text("utf-8").replace("one", "one, edited"), "utf-8")
    result = cli("revise", first["page_id"], "two", "--expect", first["revision_id"],
                 "--store", s, "--json")
    # the hand edit is now the head, so the expectation no longer holds
    assert result.code == 4, result.stderr
    history = ok("history", first["page_id"], "--store", s)["revisions"]
    assert len(history) == 2 and "hand edit" in history[-1]["note"]


# -- delete, tombstone, archive ----------------------------------------------------------------
def test_delete_needs_yes(store: Path) -> None:
    s = str(store)
    a = ok("add", "doomed", "--store", s)["page_id"]
    b = ok("add", "other", "--store", s)["page_id"]
    ok("revise", a, "doomed, v2", "--store", s)
    ok("link", a, "related_to", b, "--store", s)
    before = snapshot(store)
    refused = cli("delete", a, "--store", s)
    assert refused.code == 2 and "--yes" in refused.stderr
    assert snapshot(store) == before
    done = ok("delete", a, "--yes", "--store", s)
    assert done["revisions_removed"] == 2 and done["relations_removed"] == 1
    after = snapshot(store)
    assert not [k for k in after if a in k]
    assert not list((store / "relations").glob("*.json"))
    assert cli("show", a, "--store", s).code == 3
    assert [e["page_id"] for e in ok("ls", "--store", s)] == [b]
    assert cli("doctor", "--store", s).code == 0


@pytest.mark.parametrize(("verb", "status"), [("tombstone", "tombstoned"),
                                              ("archive", "archived")])
def test_tombstone_and_archive_keep_everything_but_hide(store: Path, verb: str,
                                                        status: str) -> None:
    s = str(store)
    page = ok("add", "hide me", "--store", s)
    before = revision_files(store)
    ok(verb, page["page_id"], "--store", s)
    assert_revisions_kept(before, store)
    assert ok("ls", "--store", s) == []
    listed = ok("ls", "--status", status, "--store", s)
    assert [e["page_id"] for e in listed] == [page["page_id"]]
    shown = ok("show", page["page_id"], "--store", s)
    assert shown["page"]["lifecycle_status"] == status
    assert ok("show", page["page_id"], "--rev", page["revision_id"], "--store", s)[
        "is_head"] is False


# -- reading -----------------------------------------------------------------------------------
VIEWS = ("manifest", "payload", "relations", "history", "facets", "source_spans")


@pytest.mark.parametrize("view", VIEWS)
def test_show_every_view(example: Path, view: str) -> None:
    data = ok("show", "ks-008", "--view", view, "--store", str(example))
    assert {"page_id", "revision_id", "is_head", "heads", "view", view} <= set(data)
    assert data["view"] == view and data["is_head"] and data["heads"] == [data["revision_id"]]
    plain = cli("show", "ks-008", "--view", view, "--store", str(example))
    assert plain.code == 0 and plain.stdout.strip()
    if view == "manifest":
        assert "content" not in data["manifest"]["payload"]
    if view == "payload":
        assert data["payload"]["content"].strip() in plain.stdout


def test_show_unknown_view_is_usage(example: Path) -> None:
    result = cli("show", "ks-008", "--view", "everything", "--store", str(example))
    assert result.code == 2 and "Traceback" not in result.stderr


def test_history_lists_oldest_first(store: Path) -> None:
    s = str(store)
    ids = [ok("add", "v0", "--store", s)]
    page = ids[0]["page_id"]
    for n in range(1, 4):
        ids.append(ok("revise", page, f"v{n}", "--store", s))
    history = ok("history", page, "--store", s)
    assert [r["revision_id"] for r in history["revisions"]] == [r["revision_id"] for r in ids]
    assert history["heads"] == [ids[-1]["revision_id"]]
    plain = cli("history", page, "--store", s)
    assert plain.code == 0 and plain.stdout.count("\n") == 4


def test_link_with_unknown_relation_type_fails_well(store: Path) -> None:
    s = str(store)
    a = ok("add", "a", "--store", s)["page_id"]
    b = ok("add", "b", "--store", s)["page_id"]
    before = snapshot(store)
    result = cli("link", a, "likes", b, "--store", s)
    assert result.code == 2
    assert "likes" in result.stderr and "related_to" in result.stderr
    assert "Traceback" not in result.stderr
    assert snapshot(store) == before
    missing = cli("link", a, "related_to", "pg_nope", "--store", s)
    assert missing.code == 3 and snapshot(store) == before


# -- --json shapes -----------------------------------------------------------------------------
WRITE = {"page_id", "revision_id", "status"}
ENTRY = {"page_id", "revision_id", "type", "title", "namespace", "lifecycle_status",
         "review_status", "origin", "sensitivity", "tags", "created_at", "updated_at",
         "observed_at", "path"}
SUMMARY = {"revision_id", "parent_revision_id", "merged_revision_ids", "created_at",
           "created_by", "operation", "note", "lifecycle_status", "content_hash", "title"}
PAGE = {"page_id", "revision_id", "type", "title", "namespace", "owner_id", "visibility",
        "lifecycle_status", "review_status", "origin", "sensitivity", "integrity",
        "epistemic_status", "instruction_policy", "tags", "source_refs", "record", "facets",
        "extensions", "payload", "parent_revision_id", "merged_revision_ids", "created_at",
        "created_by", "page_created_at", "provenance", "idempotency_key", "content_hash"}
RELATION = {"relation_id", "relation_type", "from_page_id", "from_revision_id", "to_page_id",
            "to_revision_id", "created_at", "created_by", "extensions"}


def test_json_shapes_of_every_command(tmp_path: Path) -> None:
    root = tmp_path / "s"
    init = ok("init", str(root), "--owner", "shape")
    assert set(init) == {"root", "store_id", "owner_id", "default_namespace", "created"}
    s = str(root)
    a = ok("add", "# A\n\ntext", "--tag", "x", "--store", s)
    assert set(a) == WRITE and a["status"] == "created"
    b = ok("add", "b", "--store", s)
    revised = ok("revise", a["page_id"], "new text", "--store", s)
    assert set(revised) == WRITE and revised["status"] == "revised"
    shown = ok("show", a["page_id"], "--store", s)
    assert set(shown) == {"page_id", "revision_id", "is_head", "heads", "observed_at", "page"}
    assert set(shown["page"]) == PAGE
    history = ok("history", a["page_id"], "--store", s)
    assert set(history) == {"page_id", "heads", "revisions"}
    assert all(set(r) == SUMMARY for r in history["revisions"])
    listing = ok("ls", "--store", s)
    assert listing and all(set(e) == ENTRY for e in listing)
    relation = ok("link", a["page_id"], "related_to", b["page_id"], "--store", s)
    assert set(relation) >= RELATION - {"extensions"}
    keystone = ok("keystone", "add", "I prefer tea", "--category", "preference", "--store", s)
    assert set(keystone) == WRITE
    keystones = ok("keystone", "list", "--store", s)
    assert keystones and {"id", "content", "category", "status", "extensions"} <= set(
        keystones[0])
    confirmed = ok("keystone", "confirm", keystone["page_id"], "--store", s)
    assert set(confirmed) == WRITE
    event = ok("timeline", "add", "2024-05", "Moved to Lisbon", "--category", "move",
               "--store", s)
    assert set(event) == WRITE
    profile = ok("profile", "set", "name", "Shape Tester", "--store", s)
    assert set(profile) == WRITE
    shown_profile = ok("profile", "show", "--store", s)
    assert shown_profile["name"] == "Shape Tester" and "schema_version" in shown_profile
    assert set(ok("archive", b["page_id"], "--store", s)) == WRITE
    assert set(ok("tombstone", b["page_id"], "--store", s)) == WRITE
    deleted = ok("delete", b["page_id"], "--yes", "--store", s)
    assert set(deleted) == {"page_id", "revisions_removed", "relations_removed", "event_id",
                            "overridden"}
    doctor = ok("doctor", "--store", s)
    assert set(doctor) == {"clean", "fixed", "findings"} and doctor["clean"]
    validate = ok("validate", s)
    assert set(validate) == {"store", "valid", "problems"} and validate["valid"]


def test_supersedes_with_unreadable_old_head_changes_nothing(store: Path) -> None:
    """The check comes before any write: no new keystone is left half-linked."""
    s = str(store)
    old = ok("keystone", "add", "I use vim", "--store", s)
    path = head_path(store, old["page_id"])
    path.write_text(path.read_text("utf-8").replace("type: keystone", "type: [keystone"),
                    "utf-8")
    before = snapshot(store)
    result = cli("keystone", "add", "I use helix", "--supersedes", old["page_id"], "--store", s)
    assert result.code == 5, result.stderr
    assert path.relative_to(store).as_posix() in result.stderr
    assert snapshot(store) == before


def test_supersedes_records_a_pending_hand_edit_first(store: Path) -> None:
    s = str(store)
    old = ok("keystone", "add", "I use vim", "--store", s)
    path = head_path(store, old["page_id"])
    path.write_text(path.read_text("utf-8").replace("I use vim", "I use neovim"), "utf-8")
    new = ok("keystone", "add", "I use helix", "--supersedes", old["page_id"], "--store", s)
    history = ok("history", old["page_id"], "--store", s)["revisions"]
    assert [r["lifecycle_status"] for r in history] == ["active", "active", "superseded"]
    assert "hand edit" in history[1]["note"]
    relation = ok("show", new["page_id"], "--view", "relations", "--store", s)["relations"][0]
    # the relation names the revision that was superseded: the edited one
    assert relation["to_revision_id"] == history[1]["revision_id"]


def test_show_is_enough_to_record_a_hand_edit(store: Path) -> None:
    s = str(store)
    page = ok("add", "before", "--store", s)
    path = head_path(store, page["page_id"])
    path.write_text(path.read_text("utf-8").replace("before", "after"), "utf-8")
    shown = ok("show", page["page_id"], "--store", s)
    assert shown["revision_id"] != page["revision_id"]
    assert shown["page"]["payload"]["content"] == "after\n"
    assert shown["page"]["parent_revision_id"] == page["revision_id"]
    step = shown["page"]["provenance"][0]
    assert step["operation"] == "revise" and step["actor_type"] == "user"
    assert "hand edit" in step["note"]


@pytest.mark.parametrize("change", ["crlf", "bom", "reordered", "trailing_blank_lines"])
def test_edits_that_change_no_meaning_make_no_revision(store: Path, change: str) -> None:
    s = str(store)
    page = ok("add", "# Title\n\nline one\nline two", "--tag", "t", "--store", s)
    path = head_path(store, page["page_id"])
    text = path.read_text("utf-8")
    if change == "crlf":
        raw = text.replace("\n", "\r\n").encode()
    elif change == "bom":
        raw = b"\xef\xbb\xbf" + text.encode()
    elif change == "reordered":
        front, body = text[4:].split("\n---\n", 1)
        lines = front.split("\n")
        tag_block = [ln for ln in lines if ln.startswith(("tags:", "- t"))]
        rest = [ln for ln in lines if ln not in tag_block]
        raw = ("---\n" + "\n".join(list(reversed(rest)) + tag_block) + "\n---\n" + body).encode()
    else:
        raw = (text + "\n\n\n").encode()
    path.write_bytes(raw)
    ok("ls", "--store", s)
    history = ok("history", page["page_id"], "--store", s)["revisions"]
    assert len(history) == 1, history
    assert cli("doctor", "--store", s).code == 0


def test_divergence_from_another_device_is_reported(store: Path) -> None:
    """Two devices each revised the same revision; after a merge there are two heads."""
    from pcp_cli import api
    from pcp_cli.model.page import file_json
    from pcp_cli.store.writes import new_revision

    s = str(store)
    first = ok("add", "base", "--store", s)
    mine = ok("revise", first["page_id"], "mine", "--store", s)
    with api.open_store(store) as lib:
        base = lib.get(first["page_id"], first["revision_id"])
        theirs = new_revision(base.state.evolve(content="theirs"), actor=lib.user,
                                   operation="revise", parent=base)
        path = lib.layout.revision_path(first["page_id"], theirs.revision_id)
        path.write_text(file_json(theirs.to_dict()), "utf-8")  # as `git pull` would bring it
    heads = sorted([mine["revision_id"], theirs.revision_id])
    doctor = cli("doctor", "--json", "--store", s)
    assert doctor.code == 8
    diverged = [f for f in doctor.json["findings"] if f["kind"] == "diverged"]
    assert len(diverged) == 1 and all(h in diverged[0]["message"] for h in heads)
    assert sorted(ok("history", first["page_id"], "--store", s)["heads"]) == heads
    shown = cli("show", first["page_id"], "--store", s)
    assert "diverged" in shown.stdout
    assert sorted(ok("show", first["page_id"], "--store", s)["heads"]) == heads
