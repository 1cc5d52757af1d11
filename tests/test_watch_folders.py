"""`pcp watch` as a real process: a note written slowly is imported once, complete; a renamed
or deleted note's page is archived, never lost; SIGTERM stops it cleanly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pcp_cli.store.store import page_id_for_key
from tests.conftest import cli

DATA = Path(__file__).parent / "data" / "sessions"
SETTLE = "1.5"


def pages(store: Path, *extra: str) -> dict[str, dict]:
    listed = cli("ls", "--store", str(store), "--json", *extra).json
    return {p["title"]: p for p in listed}


def until(check, what: str, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"pcp watch did not {what}")


def start(store: Path, *args: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-m", "pcp_cli", "watch", *args, "--settle",
                             SETTLE, "--store", str(store)], stderr=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    assert "watching" in proc.stderr.readline()
    return proc


def stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "Traceback" not in err and err.rstrip().endswith("stopped")
    return err


@pytest.mark.slow
def test_watch_a_vault_written_slowly_renamed_and_deleted(store: Path, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "first.md").write_text("# First\n\nThere from the start.\n")
    proc = start(store, str(vault))
    try:
        until(lambda: "First" in pages(store), "catch up with the vault")

        # written in chunks, more slowly than a save: imported once, when complete
        with (vault / "slow.md").open("w") as note:
            for i in range(4):
                note.write(f"# Slow\n\nchunk {i}\n" if i == 0 else f"chunk {i}\n")
                note.flush()
                time.sleep(0.4)
        slow = until(lambda: pages(store).get("Slow"), "import the slow note")
        history = cli("history", slow["page_id"], "--store", str(store), "--json").json
        assert len(history["revisions"]) == 1
        shown = cli("show", slow["page_id"], "--store", str(store), "--json").json
        assert "chunk 3" in json.dumps(shown)

        first = pages(store)["First"]["page_id"]
        (vault / "first.md").rename(vault / "renamed.md")
        until(lambda: "First" in pages(store) and pages(store)["First"]["page_id"] != first,
              "import the renamed note")
        (vault / "slow.md").unlink()
        until(lambda: "Slow" not in pages(store), "archive the deleted note")
    finally:
        err = stop(proc)
    kept = cli("ls", "--store", str(store), "--json", "--status", "archived", "--status",
               "superseded").json
    status = {p["page_id"]: p["lifecycle_status"] for p in kept}
    assert status == {first: "superseded", slow["page_id"]: "archived"}  # nothing lost
    renamed = pages(store)["First"]["page_id"]
    related = cli("related", renamed, "--include-superseded", "--store", str(store),
                  "--json").json
    assert first in json.dumps(related) and "supersedes" in json.dumps(related)
    assert "archived" in err and "supersedes" in err


@pytest.mark.slow
def test_watch_imports_a_session_log_as_it_grows(store: Path, tmp_path: Path) -> None:
    projects = tmp_path / ".claude" / "projects"
    folder = projects / "-home-ada-code-tidewatch"
    folder.mkdir(parents=True)
    source = (DATA / "claude" / "projects" / "-home-ada-code-tidewatch" /
              "4f35e220-c435-4cf7-b9b9-f40426042847.jsonl").read_text().splitlines(True)
    proc = start(store, str(projects))
    try:
        with (folder / "4f35e220-c435-4cf7-b9b9-f40426042847.jsonl").open("w") as log:
            for line in source:
                log.write(line)
                log.flush()
                time.sleep(0.05)
        until(lambda: cli("ls", "--type", "conversation", "--store", str(store),
                          "--json").json, "import the session")
    finally:
        stop(proc)


@pytest.mark.slow
def test_watch_without_paths_watches_what_imports_recorded(store: Path, tmp_path: Path) -> None:
    empty = subprocess.run([sys.executable, "-m", "pcp_cli", "watch", "--store", str(store)],
                           capture_output=True, text=True, timeout=60)
    assert empty.returncode == 2 and "no folder to watch" in empty.stderr
    vault = tmp_path / "notes"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n\ntext\n")
    assert cli("import", str(vault), "--store", str(store)).code == 0
    run = start(store)
    try:
        (vault / "b.md").write_text("# B\n\nmore\n")
        until(lambda: "B" in pages(store), "import a note in a recorded folder")
    finally:
        stop(run)


def test_watch_refuses_a_missing_folder(store: Path, tmp_path: Path) -> None:
    result = cli("watch", str(tmp_path / "nope"), "--store", str(store))
    assert result.code == 2 and "not a folder" in result.stderr


@pytest.mark.slow
@pytest.mark.skipif(os.name == "nt", reason="SIGINT as Ctrl-C")
def test_ctrl_c_stops_it_cleanly(store: Path, tmp_path: Path) -> None:
    proc = start(store, "--poll", str(tmp_path))
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and err.rstrip().endswith("stopped")
    assert "Traceback" not in err


# -- a rename storm: every renamed note's new page supersedes its old one ---------------------
def lifecycles(store: Path) -> dict[str, str]:
    """page id -> lifecycle status, for every page."""
    listed = cli("ls", "--store", str(store), "--json", "--status", "active", "--status",
                 "archived", "--status", "superseded").json
    return {p["page_id"]: p["lifecycle_status"] for p in listed}


def supersedes(store: Path) -> set[tuple[str, str]]:
    from pcp_cli.store.store import Store

    with Store.open(store, readonly=True) as opened:
        return {(r.from_page_id, r.to_page_id) for r in opened.relations()
                if r.relation_type == "supersedes"}


def storm_vault(folder: Path, count: int) -> Path:
    folder.mkdir()
    for n in range(count):
        (folder / f"n{n}.md").write_text(f"# N{n}\n\nnote {n}\n")
    for name in ("chain", "back", "hide", "gone"):
        (folder / f"{name}.md").write_text(f"# {name.title()}\n\n{name}\n")
    (folder / "sub").mkdir()
    for name in ("s1", "s2"):
        (folder / "sub" / f"{name}.md").write_text(f"# {name.upper()}\n\n{name}\n")
    return folder


def storm(folder: Path, count: int, note=None) -> None:
    """Rename notes as a person or a sync tool does, all at once; `note(src, dest)` is told
    each move (and `note(path, None)` each deletion) as watchdog would tell the watcher."""
    def move(src: Path, dest: Path) -> None:
        src.rename(dest)
        if note is not None:
            note(src, dest)

    for n in range(count):
        move(folder / f"n{n}.md", folder / f"renamed-{n}.md")
    move(folder / "chain.md", folder / "chain2.md")
    move(folder / "chain2.md", folder / "chain3.md")  # renamed again before it settled
    move(folder / "back.md", folder / "back2.md")
    move(folder / "back2.md", folder / "back.md")  # and back: just a note
    move(folder / "hide.md", folder / ".hide.md")  # to a name no import takes: archived
    move(folder / "gone.md", folder / "gone2.md")
    (folder / "gone2.md").unlink()  # renamed, then deleted
    if note is not None:
        note(folder / "gone2.md", None)
    (folder / "sub").rename(folder / "sub2")  # a folder: watchdog sends each file's move too
    if note is not None:
        for name in ("s1", "s2"):
            note(folder / "sub" / f"{name}.md", folder / "sub2" / f"{name}.md")


def assert_storm_linked(store: Path, count: int) -> None:
    ids = {name: page_id_for_key(f"markdown:{name}") for name in (
        *(f"n{n}.md" for n in range(count)), *(f"renamed-{n}.md" for n in range(count)),
        "chain.md", "chain2.md", "chain3.md", "back.md", "back2.md", "hide.md", "gone.md",
        "gone2.md", "sub/s1.md", "sub/s2.md", "sub2/s1.md", "sub2/s2.md")}
    status = lifecycles(store)
    linked = supersedes(store)
    for old, new in [*((f"n{n}.md", f"renamed-{n}.md") for n in range(count)),
                     ("chain.md", "chain3.md"), ("sub/s1.md", "sub2/s1.md"),
                     ("sub/s2.md", "sub2/s2.md")]:
        assert (status.get(ids[old]), status.get(ids[new])) == ("superseded", "active"), old
        assert (ids[new], ids[old]) in linked, old
    # a name a note held only in passing has no page, or one retired (never one left active)
    assert status[ids["back.md"]] == "active"
    assert status.get(ids["back2.md"]) != "active"
    assert status.get(ids["chain2.md"]) != "active"
    assert status[ids["hide.md"]] == "archived" and status[ids["gone.md"]] == "archived"
    assert ids["gone2.md"] not in status


def test_a_rename_storm_links_every_renamed_note_to_its_old_page(store: Path,
                                                                 tmp_path: Path) -> None:
    """The watcher's own logic in this process, told the events watchdog sends, looking as
    its loop does (the real watch is below, in the slow set)."""
    from pcp_cli.capture.watch import Watcher

    folder = storm_vault(tmp_path / "vault", 12)
    said: list[str] = []
    watcher = Watcher(store, {folder: "markdown"}, settle=0, say=said.append)
    watcher.import_paths([folder])

    def note(src: Path, dest: Path | None) -> None:
        watcher.note([src] if dest is None else [src, dest], moved=dest is not None)
        if watcher.pending:  # the loop looks between events too
            watcher.import_paths(watcher.ready())

    storm(folder, 12, note)
    for _ in range(10):
        watcher.import_paths(watcher.ready())
    assert not watcher.pending and not watcher.moves
    assert_storm_linked(store, 12)


@pytest.mark.slow
def test_a_real_watch_links_a_rename_storm(store: Path, tmp_path: Path) -> None:
    folder = storm_vault(tmp_path / "vault", 40)
    proc = start(store, str(folder))
    try:
        until(lambda: "N39" in pages(store), "catch up with the vault")
        storm(folder, 40)
        until(lambda: len(supersedes(store)) >= 43, "link the renamed notes")
        until(lambda: lifecycles(store).get(page_id_for_key("markdown:gone.md")) == "archived",
              "archive the deleted note")
    finally:
        stop(proc)
    assert_storm_linked(store, 40)


def test_a_note_back_in_the_vault_makes_the_page_the_watch_retired_active_again(
        store: Path, tmp_path: Path) -> None:
    from pcp_cli.capture.watch import Watcher

    folder = tmp_path / "vault"
    folder.mkdir()
    note, mine = folder / "tide.md", folder / "mine.md"
    note.write_text("# Tide\n\nhigh\n")
    mine.write_text("# Mine\n\nkept as I left it\n")
    watcher = Watcher(store, {folder: "markdown"}, settle=0, say=lambda line: None)
    watcher.import_paths([folder])
    tide, own = (page_id_for_key(f"markdown:{name}") for name in ("tide.md", "mine.md"))
    assert cli("archive", own, "--store", str(store)).code == 0  # the person's own act

    trash = tmp_path / "trash.md"
    note.rename(trash)  # to the trash, out of the vault
    watcher.note([note, trash], moved=True)
    watcher.import_paths(watcher.ready())
    assert lifecycles(store)[tide] == "archived"
    trash.write_text("# Tide\n\nlow, now\n")
    trash.rename(note)  # restored, and changed meanwhile
    watcher.note([trash, note], moved=True)
    mine.write_text("# Mine\n\nedited, still archived\n")
    watcher.note([mine])
    for _ in range(3):
        watcher.import_paths(watcher.ready())
    assert lifecycles(store)[tide] == "active"
    assert lifecycles(store)[own] == "archived"  # an edit in the vault does not undo that
    assert "edited, still archived" in cli("show", own, "--store", str(store)).stdout


def test_a_session_log_written_by_rename_is_imported(store: Path, tmp_path: Path) -> None:
    """A session log saved the atomic way (written beside, then renamed into place)."""
    from pcp_cli.capture.watch import Watcher

    folder = tmp_path / "projects"
    (folder / "-home-ada-code-tidewatch").mkdir(parents=True)
    source = DATA / "claude" / "projects" / "-home-ada-code-tidewatch" / \
        "4f35e220-c435-4cf7-b9b9-f40426042847.jsonl"
    temp = folder / "-home-ada-code-tidewatch" / "4f35e220.jsonl.tmp"
    final = folder / "-home-ada-code-tidewatch" / source.name
    temp.write_text(source.read_text())
    watcher = Watcher(store, {folder: "claude_code"}, settle=0, say=lambda line: None)
    temp.rename(final)
    watcher.note([temp, final], moved=True)
    for _ in range(3):
        watcher.import_paths(watcher.ready())
    assert len(cli("ls", "--type", "conversation", "--store", str(store), "--json").json) == 1
