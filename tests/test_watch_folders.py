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
