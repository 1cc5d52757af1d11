"""The store monitor's watch on `revisions/`, which `pcp status` asks instead of a stat of every
page folder; and every case where it cannot vouch falls back to that stat.

The proof that status used the monitor: a revision added by hand with the folder's mtime put
back, which no stat can see (the full pass trusts a folder whose mtime did not move), and an
event does. Each test starts a real monitor process and stops it at the end."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pcp_cli.store.changes import monitor
from tests.conftest import cli, run_pcp
from tests.test_status import add_other_head, age_revision_folders, ok

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"),
                       reason="the store monitor needs Linux's inotify"),
]


def _two_revisions(store: Path, text: str) -> dict:
    first = ok("add", text, "--store", str(store))
    ok("revise", first["page_id"], f"{text}, revised", "--store", str(store))
    return first


def _start(store: Path, **env: str) -> dict:
    started = run_pcp("monitor", "start", "--store", str(store), "--json", env=env)
    assert started.code == 0, started.stderr
    deadline = time.monotonic() + 30  # the folders are watched in chunks after it answers
    while time.monotonic() < deadline:
        status = ok("monitor", "status", "--store", str(store))
        revisions = status["revisions"]
        if revisions and (not revisions["watched"] or revisions["folders"] > 0):
            return status
        time.sleep(0.05)
    raise AssertionError("the monitor did not watch revisions/")


@pytest.fixture
def pages(store: Path) -> Iterator[tuple[Path, dict]]:
    first = _two_revisions(store, "base")
    _two_revisions(store, "another page")
    age_revision_folders(store)
    yield store, first
    run_pcp("monitor", "stop", "--store", str(store))


def _head_by_hand_keeping_mtime(store: Path, page_id: str, revision_id: str) -> str:
    """A second head written into the page's folder, then the folder's mtime put back: only an
    event tells (a full pass of stats would trust the summary it remembers)."""
    folder = store / "revisions" / page_id
    st = folder.stat()
    theirs = add_other_head(store, page_id, revision_id)
    os.utime(folder, ns=(st.st_atime_ns, st.st_mtime_ns))
    return theirs


def _diverged(store: Path) -> list[str]:
    return [d["page_id"] for d in ok("status", "--store", str(store))["diverged"]]


def _graph_token(store: Path) -> str | None:
    import sqlite3

    with sqlite3.connect(store / ".pcp" / "graph.sqlite") as db:
        row = db.execute("SELECT value FROM meta WHERE key='monitor_token'").fetchone()
    return row[0] if row else None


def test_status_sees_a_revision_added_by_hand_through_the_monitor(
        pages: tuple[Path, dict]) -> None:
    store, first = pages
    _start(store)
    assert _diverged(store) == []  # takes the monitor's token (a full pass this once)
    token = _graph_token(store)
    assert token is not None
    assert _diverged(store) == []
    _head_by_hand_keeping_mtime(store, first["page_id"], first["revision_id"])
    assert _diverged(store) == [first["page_id"]]
    assert _graph_token(store) != token
    assert _diverged(store) == [first["page_id"]]  # and stays reported


def test_a_page_folder_made_after_the_monitor_started_is_watched(
        pages: tuple[Path, dict]) -> None:
    store, _first = pages
    _start(store)
    assert _diverged(store) == []
    late = _two_revisions(store, "written while the monitor ran")
    folder = store / "revisions" / late["page_id"]
    past = time.time() - 60
    os.utime(folder, (past, past))
    assert _diverged(store) == []
    _head_by_hand_keeping_mtime(store, late["page_id"], late["revision_id"])
    assert _diverged(store) == [late["page_id"]]


def test_a_missing_head_file_is_reported_while_the_monitor_vouches(
        pages: tuple[Path, dict]) -> None:
    store, first = pages
    _start(store)
    assert ok("status", "--store", str(store))["missing_head_files"] == []
    next(store.glob(f"pages/**/{first['page_id']}.md")).unlink()
    missing = ok("status", "--store", str(store))["missing_head_files"]
    assert missing == [{"page_id": first["page_id"], "revisions": 2}]


def test_past_its_watch_budget_it_says_why_and_status_stats_every_folder(
        pages: tuple[Path, dict]) -> None:
    store, first = pages
    status = _start(store, PCP_MONITOR_MAX_WATCHES="1")
    assert status["revisions"]["watched"] is False
    assert "inotify watches" in status["revisions"]["why_not"]
    shown = cli("monitor", "status", "--store", str(store))
    assert "It does not watch revisions/" in shown.stdout
    assert _diverged(store) == []
    assert _graph_token(store) is not None  # head files are still vouched for
    add_other_head(store, first["page_id"], first["revision_id"])  # the mtime moves
    assert _diverged(store) == [first["page_id"]]
    edited = next(store.glob(f"pages/**/{first['page_id']}.md"))
    edited.write_text(edited.read_text("utf-8") + "\nmore\n", "utf-8")
    assert [e["path"] for e in ok("status", "--store", str(store))["hand_edits"]] == [
        edited.relative_to(store).as_posix()]


def test_a_revision_added_while_the_monitor_was_killed_is_seen(
        pages: tuple[Path, dict]) -> None:
    store, first = pages
    _start(store)
    assert _diverged(store) == []
    pid = int(json.loads((store / ".pcp/monitor/info.json").read_text())["pid"])
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while monitor.ask_alive(store) and time.monotonic() < deadline:
        time.sleep(0.05)
    add_other_head(store, first["page_id"], first["revision_id"])
    # No monitor answers (the next one a command starts is another instance): a full pass.
    assert _diverged(store) == [first["page_id"]]


def test_a_journal_limit_reached_moves_the_floor_and_status_still_sees_everything(
        store: Path) -> None:
    first = _two_revisions(store, "base")
    age_revision_folders(store)
    _start(store, PCP_MONITOR_JOURNAL_LIMIT="2")
    try:
        assert _diverged(store) == []
        for i in range(3):  # more folders named than the journal keeps: it forgets them all
            ok("add", f"filler {i}", "--store", str(store))
        add_other_head(store, first["page_id"], first["revision_id"])
        assert _diverged(store) == [first["page_id"]]
    finally:
        run_pcp("monitor", "stop", "--store", str(store))
