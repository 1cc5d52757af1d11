"""The store monitor (`pcp monitor`): a real background process that tells commands which head
files changed since their token, and every case where it cannot vouch falls back to the scan.

Each test starts a real monitor process on a real store and stops it at the end."""

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

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"),
                       reason="the store monitor needs Linux's inotify"),
]


@pytest.fixture
def watched(store: Path) -> Iterator[Path]:
    for i in range(6):
        assert cli("add", f"note number {i} about kelp", "--title", f"Note {i}",
                   "--store", str(store)).code == 0
    started = run_pcp("monitor", "start", "--store", str(store), "--json")
    assert started.code == 0, started.stderr
    assert started.json["running"] is True and started.json["auto"] is True
    yield store
    run_pcp("monitor", "stop", "--store", str(store))


def _head(store: Path, title: str) -> Path:
    entry = next(e for e in cli("ls", "--json", "--store", str(store)).json
                 if e["title"] == title)
    return store / entry["path"]


def _content(store: Path, page_id: str) -> str:
    shown = cli("show", page_id, "--store", str(store))
    assert shown.code == 0, shown.stderr
    return shown.stdout


def _found(store: Path, query: str) -> list[str]:
    """The titles of what `pcp search QUERY` finds."""
    titles = {e["page_id"]: e["title"] for e in cli("ls", "--json", "--store", str(store)).json}
    found = cli("search", query, "--json", "--store", str(store))
    assert found.code == 0, found.stderr
    return sorted(titles[r["id"]] for r in found.json["results"])


def _token(store: Path) -> str | None:
    import sqlite3

    with sqlite3.connect(store / ".pcp" / "catalog.sqlite") as db:
        row = db.execute("SELECT value FROM meta WHERE key='monitor_token'").fetchone()
    return row[0] if row else None


def _edit_keeping_stat(path: Path, old: str, new: str) -> None:
    """Rewrite in place with the same size, then put the mtime back (as some editors and
    `touch -r` do): only an event or the ctime tells."""
    st = path.stat()
    text = path.read_text(encoding="utf-8")
    assert len(old) == len(new) and old in text
    with open(path, "r+", encoding="utf-8") as f:
        f.write(text.replace(old, new))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _pid(store: Path) -> int:
    return int(json.loads((store / ".pcp/monitor/info.json").read_text())["pid"])


def test_a_command_takes_a_token_and_the_monitor_names_what_changed_since(watched: Path) -> None:
    assert cli("ls", "--store", str(watched)).code == 0
    token = _token(watched)
    assert token is not None
    same = monitor.ask(watched, token)
    assert same is not None and same[1] == []  # nothing moved: nothing to look at
    head = _head(watched, "Note 2")
    _edit_keeping_stat(head, "about kelp", "about reef")
    answer = monitor.ask(watched, token)
    assert answer is not None
    assert answer[1] == [head.relative_to(watched).as_posix()]
    assert "about reef" in _content(watched, head.stem)
    assert _token(watched) != token  # the command stored the token it scanned at


def test_an_edit_with_size_and_mtime_restored_is_seen_by_the_next_command(watched: Path) -> None:
    assert cli("search", "kelp", "--store", str(watched)).code == 0
    head = _head(watched, "Note 4")
    _edit_keeping_stat(head, "about kelp", "about tuna")
    assert _found(watched, "tuna") == ["Note 4"]
    history = cli("history", head.stem, "--json", "--store", str(watched))
    assert len(history.json["revisions"]) == 2  # recorded as a hand edit


def test_a_killed_monitor_is_not_trusted_and_the_next_command_scans(
        watched: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PCP_MONITOR")  # commands may start it again, as outside the tests
    assert cli("ls", "--store", str(watched)).code == 0
    old_token = _token(watched)
    os.kill(_pid(watched), signal.SIGKILL)
    time.sleep(0.2)
    head = _head(watched, "Note 1")
    _edit_keeping_stat(head, "about kelp", "about crab")  # made while no monitor runs
    assert "about crab" in _content(watched, head.stem)
    # the store is marked for its monitor: that command started a new one in the background
    deadline = time.monotonic() + 15
    while not monitor.ask_alive(watched) and time.monotonic() < deadline:
        time.sleep(0.1)
    answer = monitor.ask(watched, old_token)
    assert answer is not None and answer[1] is None  # another instance: cannot vouch


def test_a_change_made_while_the_monitor_was_stopped_is_seen(watched: Path) -> None:
    assert cli("ls", "--store", str(watched)).code == 0
    assert run_pcp("monitor", "stop", "--store", str(watched)).code == 0
    assert not (watched / ".pcp/monitor/auto").exists()
    head = _head(watched, "Note 3")
    _edit_keeping_stat(head, "about kelp", "about moss")
    assert run_pcp("monitor", "start", "--store", str(watched)).code == 0
    assert "about moss" in _content(watched, head.stem)


def test_an_overflowing_journal_makes_the_monitor_refuse_to_vouch(store: Path) -> None:
    for i in range(6):
        assert cli("add", f"note number {i} about kelp", "--title", f"Note {i}",
                   "--store", str(store)).code == 0
    started = run_pcp("monitor", "start", "--store", str(store),
                      env={"PCP_MONITOR_JOURNAL_LIMIT": "3"})
    assert started.code == 0, started.stderr
    try:
        assert cli("ls", "--store", str(store)).code == 0
        token = _token(store)
        for i in range(5):
            _edit_keeping_stat(_head(store, f"Note {i}"), "about kelp", "about salt")
        answer = monitor.ask(store, token)
        assert answer is not None and answer[1] is None
        assert _found(store, "salt") == [f"Note {i}" for i in range(5)]
    finally:
        run_pcp("monitor", "stop", "--store", str(store))


def test_a_new_namespace_folder_moves_the_floor_and_its_file_is_adopted(watched: Path) -> None:
    assert cli("ls", "--store", str(watched)).code == 0
    token = _token(watched)
    folder = watched / "pages" / "garden"
    folder.mkdir()
    (folder / "tomatoes.md").write_text("# Tomatoes\n\nSow in March.\n", encoding="utf-8")
    answer = monitor.ask(watched, token)
    assert answer is not None and answer[1] is None
    assert _found(watched, "tomatoes") == ["Tomatoes"]


def test_status_stop_and_sigterm(watched: Path) -> None:
    status = cli("monitor", "status", "--json", "--store", str(watched)).json
    assert status["running"] is True and status["pid"] == _pid(watched)
    os.kill(_pid(watched), signal.SIGTERM)
    deadline = time.monotonic() + 10
    while monitor.ask_alive(watched) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not monitor.ask_alive(watched)
    assert not monitor.socket_path(watched).exists()
    stopped = run_pcp("monitor", "stop", "--store", str(watched), "--json")
    assert stopped.code == 0 and stopped.json["stopped"] is False
    assert cli("monitor", "status", "--json", "--store", str(watched)).json == {
        **status, "running": False, "auto": False, "pid": None, "started_at": None,
        "revisions": None, "starts": "off"}


def test_it_stops_by_itself_when_idle(store: Path) -> None:
    assert run_pcp("monitor", "start", "--idle-timeout", "1", "--store", str(store)).code == 0
    deadline = time.monotonic() + 20
    while monitor.ask_alive(store) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not monitor.ask_alive(store)
    run_pcp("monitor", "stop", "--store", str(store))


def test_a_bad_idle_timeout_is_a_usage_error(store: Path) -> None:
    result = cli("monitor", "start", "--idle-timeout", "0", "--store", str(store))
    assert result.code == 2 and "--idle-timeout" in result.stderr
    assert not (store / ".pcp/monitor/auto").exists()


def test_without_a_monitor_nothing_is_started_or_recorded(store: Path) -> None:
    assert cli("add", "plain note", "--store", str(store)).code == 0
    assert cli("ls", "--store", str(store)).code == 0
    assert _token(store) is None
    assert not (store / ".pcp/monitor").exists()


def test_status_asks_the_monitor_and_still_lists_an_edit_that_kept_its_stat(
        watched: Path) -> None:
    assert run_pcp("status", "--store", str(watched)).code == 0
    token = _token(watched)
    assert token is not None  # status took the monitor's token: it did not scan every file
    head = _head(watched, "Note 3")
    _edit_keeping_stat(head, "about kelp", "about cod!")
    status = run_pcp("status", "--store", str(watched), "--json")
    assert status.code == 0, status.stderr
    assert [e["path"] for e in status.json["hand_edits"]] == [
        head.relative_to(watched).as_posix()]
    assert _token(watched) != token
