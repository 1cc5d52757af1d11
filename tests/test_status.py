"""`pcp status` from summaries of the revision folders (`.pcp/graph.sqlite`): never stale.

The summaries let status skip reading revision files; these tests check that what git (or
another device) adds to a folder the summary already knows is still seen, and that a summary
file that is lost or damaged changes nothing but the speed.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.conftest import cli


def ok(*args: str) -> dict:
    result = cli(*args, "--json")
    assert result.code == 0, result.stderr
    return result.json


def age_revision_folders(store: Path) -> None:
    """As if the folders were written a minute ago (a summary of a folder written in the last
    two seconds is not remembered, so a fresh test store would never be summarized)."""
    past = time.time() - 60
    for folder in (store / "revisions").iterdir():
        os.utime(folder, (past, past))


def add_other_head(store: Path, page_id: str, revision_id: str) -> str:
    """A second child of `revision_id`, written as `git pull` would bring it."""
    from pcp_cli import api
    from pcp_cli.model.page import file_json
    from pcp_cli.store.writes import new_revision

    with api.open_store(store) as lib:
        base = lib.get(page_id, revision_id)
        theirs = new_revision(base.state.evolve(content="theirs"), actor=lib.user,
                                   operation="revise", parent=base)
        path = lib.layout.revision_path(page_id, theirs.revision_id)
        path.write_text(file_json(theirs.to_dict()), "utf-8")
    return theirs.revision_id


def test_a_head_added_after_status_summarized_the_folder_is_reported(store: Path) -> None:
    s = str(store)
    first = ok("add", "base", "--store", s)
    mine = ok("revise", first["page_id"], "mine", "--store", s)
    age_revision_folders(store)
    before = ok("status", "--store", s)
    assert before["diverged"] == [] and before["clean"]
    assert (store / ".pcp" / "graph.sqlite").exists()

    theirs = add_other_head(store, first["page_id"], first["revision_id"])
    after = ok("status", "--store", s)
    assert [d["page_id"] for d in after["diverged"]] == [first["page_id"]]
    assert sorted(h["revision_id"] for h in after["diverged"][0]["heads"]) == sorted(
        [mine["revision_id"], theirs])
    assert not after["clean"]


def test_a_head_added_in_the_same_clock_tick_is_not_missed(store: Path) -> None:
    """A folder summarized right after it was written is read again next time: a file added
    within the filesystem's timestamp granularity may leave its mtime where it was."""
    s = str(store)
    first = ok("add", "base", "--store", s)
    ok("revise", first["page_id"], "mine", "--store", s)
    folder = store / "revisions" / first["page_id"]
    stamp = folder.stat().st_mtime_ns
    assert ok("status", "--store", s)["diverged"] == []
    add_other_head(store, first["page_id"], first["revision_id"])
    os.utime(folder, ns=(stamp, stamp))  # the worst case: the mtime did not move
    assert [d["page_id"] for d in ok("status", "--store", s)["diverged"]] == [first["page_id"]]


def test_a_missing_head_file_is_reported_with_its_revision_count(store: Path) -> None:
    s = str(store)
    page = ok("add", "kept revisions", "--store", s)
    ok("revise", page["page_id"], "twice", "--store", s)
    age_revision_folders(store)
    assert ok("status", "--store", s)["missing_head_files"] == []
    next(store.glob(f"pages/**/{page['page_id']}.md")).unlink()
    missing = ok("status", "--store", s)["missing_head_files"]
    assert missing == [{"page_id": page["page_id"], "revisions": 2}]


def test_a_damaged_summary_file_is_rebuilt(store: Path) -> None:
    s = str(store)
    first = ok("add", "base", "--store", s)
    ok("revise", first["page_id"], "mine", "--store", s)
    age_revision_folders(store)
    ok("status", "--store", s)
    (store / ".pcp" / "graph.sqlite").write_bytes(b"not a database at all" * 100)
    add_other_head(store, first["page_id"], first["revision_id"])
    assert [d["page_id"] for d in ok("status", "--store", s)["diverged"]] == [first["page_id"]]
    (store / ".pcp" / "graph.sqlite").unlink()
    assert [d["page_id"] for d in ok("status", "--store", s)["diverged"]] == [first["page_id"]]


def test_a_diverged_page_stays_reported_when_nothing_changed(store: Path) -> None:
    """The folders' fingerprints say nothing moved, so no summary row is loaded but those of
    the unsettled pages: the diverged page must still be listed, run after run."""
    s = str(store)
    first = ok("add", "base", "--store", s)
    ok("revise", first["page_id"], "mine", "--store", s)
    ok("add", "another page", "--store", s)
    add_other_head(store, first["page_id"], first["revision_id"])
    age_revision_folders(store)
    for _ in range(3):
        diverged = ok("status", "--store", s)["diverged"]
        assert [d["page_id"] for d in diverged] == [first["page_id"]]


def test_revisions_that_arrive_without_a_head_file_are_reported(store: Path) -> None:
    """A page's revision folder brought by git without its head file, after status already
    remembered what it saw (the missing list is kept per catalog and folder state)."""
    import shutil

    s = str(store)
    page = ok("add", "a page", "--store", s)
    age_revision_folders(store)
    assert ok("status", "--store", s)["missing_head_files"] == []
    assert ok("status", "--store", s)["missing_head_files"] == []
    other = "pg_arrived_by_git"
    shutil.copytree(store / "revisions" / page["page_id"], store / "revisions" / other)
    age_revision_folders(store)
    missing = ok("status", "--store", s)["missing_head_files"]
    assert missing == [{"page_id": other, "revisions": 1}]
    assert ok("status", "--store", s)["missing_head_files"] == missing
    shutil.rmtree(store / "revisions" / other)
    assert ok("status", "--store", s)["missing_head_files"] == []


def test_revisions_replaced_by_a_file_is_store_damaged_never_clean(store: Path) -> None:
    """A file where revisions/ must be: status says so (exit 8, the path named), never that
    the store is clean because no revision folder could be listed."""
    import shutil

    from tests.conftest import cli

    ok("add", "a page", "--store", str(store))
    shutil.rmtree(store / "revisions")
    (store / "revisions").write_text("not a folder\n")
    result = cli("status", "--store", str(store), "--json")
    assert result.code == 8, result.stderr
    assert "revisions is not a folder (a file is where the store needs one)" in result.stderr


def test_thousands_of_uncommitted_files_are_a_few_lines(tmp_path) -> None:
    """A big import leaves thousands of uncommitted files: `pcp status` counts them by folder
    and state in a few lines (`--json` lists each)."""
    import shutil

    import pytest

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    from pcp_cli import api

    root = tmp_path / "store"
    assert cli("init", str(root), "--owner", "tester", "--git").code == 0, "init --git"
    with api.open_store(root) as store, store.batch():
        for number in range(1200):
            api.add_page(store, f"Note number {number}.", title=f"note {number}")
    result = cli("status", "--store", str(root))
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) <= 12, result.stdout
    summary = next(line for line in lines if "uncommitted files" in line)
    assert int(summary.split()[0].replace(",", "")) >= 2400
    assert any(line.strip().startswith("pages/") and "new" in line for line in lines)
    assert any(line.strip().startswith("revisions/") for line in lines)
    listed = cli("status", "--json", "--store", str(root)).json["git"]["uncommitted"]
    assert len(listed) >= 2400
