"""Two devices, one bare remote, real git: concurrent edits of every kind, synced in both orders,
with and without the merge driver. Nothing is lost, nothing is silently chosen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.gitsync_helpers import (
    Device,
    clone_device,
    first_device,
    fsck_clean,
    git_env,
    make_remote,
    no_markers_anywhere,
    write_editor,
)


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    git_env(monkeypatch)


def setup_pair(tmp_path: Path, *, driver: bool) -> tuple[Device, Device, dict[str, str]]:
    bare = make_remote(tmp_path)
    laptop = first_device(tmp_path, bare)
    ids = {
        "note": laptop.add("# Shared note\n\nWritten on the laptop."),
        "keystone": laptop.pcp("keystone", "add", "Prefers tea in the morning",
                               "--json").json["page_id"],
        "doomed": laptop.add("# Old plan\n\nTo be tombstoned."),
    }
    laptop.sync("-m", "start")
    desktop = clone_device(tmp_path, bare, "desktop", driver=driver)
    if not driver:
        laptop.git("config", "--unset", "merge.pcp.driver")
        laptop.git("config", "--unset", "merge.pcp.name")
    assert laptop.status()["git"]["merge_driver"] is driver
    assert desktop.status()["git"]["merge_driver"] is driver
    return laptop, desktop, ids


def edit_both(laptop: Device, desktop: Device, ids: dict[str, str]) -> dict[str, str]:
    """Every kind of concurrent change, on both devices, before either syncs."""
    laptop.pcp("revise", ids["note"], "# Shared note\n\nRevised on the laptop.")
    desktop.pcp("revise", ids["note"], "# Shared note\n\nRevised on the desktop.")
    new = {"laptop_page": laptop.add("Laptop's new page"),
           "desktop_page": desktop.add("Desktop's new page")}
    new["laptop_ks"] = laptop.pcp("keystone", "add", "Prefers coffee", "--supersedes",
                                  ids["keystone"], "--json").json["page_id"]
    new["desktop_ks"] = desktop.pcp("keystone", "add", "Prefers green tea", "--supersedes",
                                    ids["keystone"], "--json").json["page_id"]
    laptop.pcp("tombstone", ids["doomed"], "--reason", "obsolete")
    desktop.pcp("revise", ids["doomed"], "# Old plan\n\nStill useful, says the desktop.")
    return new


def sync_round(first: Device, second: Device) -> list[dict[str, Any]]:
    """first syncs, second syncs (merging first's work), first syncs (getting the merge)."""
    return [first.sync(), second.sync(), first.sync()]


def assert_converged(laptop: Device, desktop: Device) -> None:
    for folder in ("revisions", "relations", "events", "pages"):
        assert laptop.files(folder) == desktop.files(folder), folder
    fsck_clean(laptop.root)
    fsck_clean(desktop.root)
    for device in (laptop, desktop):
        no_markers_anywhere(device)
        status = device.status()
        assert not status["conflicts"] and not status["git"]["uncommitted"]
        assert status["git"]["in_progress"] is None
    assert laptop.git("rev-parse", "HEAD").stdout == desktop.git("rev-parse", "HEAD").stdout
    # ULID names: in the whole history no revision, relation or event file was ever modified,
    # deleted or conflicted; each was only ever added.
    touched = laptop.git("log", "--format=", "--name-status", "--diff-merges=first-parent",
                         "--diff-filter=MDR", "--",
                         "revisions", "relations", "events").stdout
    assert touched.strip() == ""


def revision_files(device: Device) -> set[str]:
    return set(device.files("revisions"))


@pytest.mark.slow
@pytest.mark.parametrize("driver", [True, False], ids=["driver", "no-driver"])
@pytest.mark.parametrize("order", ["laptop-first", "desktop-first"])
def test_two_devices_converge_and_resolve(tmp_path: Path, driver: bool, order: str) -> None:
    laptop, desktop, ids = setup_pair(tmp_path, driver=driver)
    written_before = revision_files(laptop) | revision_files(desktop)
    new = edit_both(laptop, desktop, ids)
    written = revision_files(laptop) | revision_files(desktop)
    first, second = (laptop, desktop) if order == "laptop-first" else (desktop, laptop)

    reports = sync_round(first, second)

    # The second device merged; without a driver git left conflict markers pcp rebuilt.
    assert reports[1]["merged"] == ("merged" if driver else "merged_with_repairs")
    if not driver:
        assert {r["reason"] for r in reports[1]["repaired"]} == {"conflict_markers"}
    assert_converged(laptop, desktop)
    fsck_clean(tmp_path / "remote.git")
    # Nothing lost: every revision either device ever wrote is on both, byte-identical.
    assert written_before < written <= revision_files(laptop) == revision_files(desktop)
    # Every divergence is named, on both devices, and by the merging sync's report.
    diverged = {ids["note"], ids["keystone"], ids["doomed"]}
    assert laptop.diverged() == desktop.diverged() == diverged
    assert {d["page_id"] for d in reports[1]["diverged"]} == diverged
    for page_id in diverged:
        assert len(laptop.heads(page_id)) == 2
    # Both new pages and both new keystones arrived; both supersede relations are kept.
    listed = {e["page_id"] for e in laptop.pcp("ls", "--json").json}
    assert {new["laptop_page"], new["desktop_page"], new["laptop_ks"], new["desktop_ks"]} <= listed
    relations = [laptop.pcp("show", ids["keystone"], "--view", "relations", "--json")
                 .json["relations"]]
    assert len(relations[0]) == 2
    # The shown head is the same on both devices, and it is one of the heads.
    for page_id in diverged:
        shown_l = laptop.pcp("show", page_id, "--json").json
        shown_d = desktop.pcp("show", page_id, "--json").json
        assert shown_l["revision_id"] == shown_d["revision_id"] in shown_l["heads"]

    # Resolve on the second device, one page each way.
    note_heads = second.heads(ids["note"])
    second.pcp("resolve", ids["note"], "--keep", note_heads[0])
    doomed_heads = second.heads(ids["doomed"])
    tombstoned = [h for h in doomed_heads if second.pcp(
        "show", ids["doomed"], "--rev", h, "--json").json["page"]["lifecycle_status"]
        == "tombstoned"]
    second.pcp("resolve", ids["doomed"], "--keep", tombstoned[0])
    import os

    os.environ["EDITOR"] = write_editor(tmp_path, "Prefers tea, coffee or green tea.\n")
    try:
        second.pcp("resolve", ids["keystone"], "--edit")
    finally:
        del os.environ["EDITOR"]
    assert second.diverged() == set()
    second.sync()
    first.sync()
    assert_converged(laptop, desktop)
    for device in (laptop, desktop):
        assert device.diverged() == set()
        assert device.status()["clean"]
        for page_id in diverged:
            heads = device.heads(page_id)
            assert len(heads) == 1
            history = device.pcp("history", page_id, "--json").json["revisions"]
            merge = next(r for r in history if r["revision_id"] == heads[0])
            assert {merge["parent_revision_id"], *merge["merged_revision_ids"]} \
                >= set(note_heads if page_id == ids["note"] else
                       doomed_heads if page_id == ids["doomed"] else [])
    note_page = laptop.pcp("show", ids["note"], "--json").json["page"]
    kept = laptop.pcp("show", ids["note"], "--rev", note_heads[0], "--json").json["page"]
    assert note_page["payload"] == kept["payload"]
    assert laptop.pcp("show", ids["doomed"], "--json").json["page"]["lifecycle_status"] \
        == "tombstoned"
    assert laptop.pcp("show", ids["keystone"], "--view", "payload", "--json").json[
        "payload"]["content"] == "Prefers tea, coffee or green tea.\n"
