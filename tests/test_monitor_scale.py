"""The store monitor on a big store, tested small.

- When the kernel refuses a watch (the per-user inotify watch limit, fs.inotify.max_user_watches,
  reached: ENOSPC) it must not vouch for anything while a folder is unwatched, so every command
  falls back to the full scan, and it vouches again once every folder is watched. In process,
  on the monitor's own journal (a watch limit cannot be lowered for one test without root).
- A long-lived process that watches the store itself (`pcp serve`) asks the monitor at its
  first refresh instead of statting every head file, and still sees what changed before."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pcp_cli.store.changes import monitor
from pcp_cli.store.changes import watch as watching
from tests.conftest import cli, run_pcp

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not watching.local_file_system(Path("/tmp")),
    reason="the store monitor needs Linux's inotify on a local file system")


def test_a_folder_it_could_not_watch_makes_the_monitor_refuse_to_vouch(store, monkeypatch):
    assert cli("add", "kelp forests", "--namespace", "work", "--store", str(store)).code == 0
    assert cli("add", "tide tables", "--store", str(store)).code == 0
    pages = (store / "pages").resolve()
    hub = watching._Hub()
    try:
        journal = monitor.Journal(limit=1000)
        store_watch = watching.StoreWatch(hub, pages)
        real_add = hub.add
        refused: list[str] = []

        def add(folder: str, watch: watching.StoreWatch) -> int:
            if folder.endswith("/work"):
                refused.append(folder)
                return -1  # what inotify_add_watch returns at the watch limit (ENOSPC)
            return real_add(folder, watch)

        monkeypatch.setattr(hub, "add", add)
        monitor.take(store_watch, journal)
        token = journal.token()
        note = next((pages / "work").glob("*.md"))
        note.write_text(note.read_text("utf-8") + "\nA hand edit.\n", "utf-8")
        for _ in range(3):  # every question: the folders again, and still no vouching
            monitor.take(store_watch, journal)
            assert journal.since(token) is None
            token = journal.token()
        assert len(refused) >= 3
        monkeypatch.setattr(hub, "add", real_add)  # the limit raised, or watches freed
        monitor.take(store_watch, journal)  # watches every folder: vouches from here on
        token = journal.token()
        monitor.take(store_watch, journal)
        assert journal.since(token) == []
        note.write_text(note.read_text("utf-8") + "\nAnother.\n", "utf-8")
        monitor.take(store_watch, journal)
        assert journal.since(token) == [note.relative_to(store.resolve()).as_posix()]
    finally:
        import os

        os.close(hub.fd)


@pytest.mark.slow
def test_a_watching_process_asks_the_monitor_at_its_first_refresh(store, monkeypatch):
    import hashlib

    from pcp_cli import api

    assert cli("add", "kelp forests", "--title", "Kelp", "--store", str(store)).code == 0
    started = run_pcp("monitor", "start", "--store", str(store), "--json")
    assert started.code == 0 and started.json["running"], started.stderr
    try:
        assert run_pcp("ls", "--store", str(store)).code == 0  # takes the monitor's token
        head = next((store / "pages").rglob("*.md"))
        head.write_text(head.read_text("utf-8").replace("kelp forests", "kelp FORESTS"), "utf-8")
        with api.open_store(store, readonly=True, refresh=False) as opened:
            assert api.watch_files(opened)
            full: list[int] = []
            real = type(opened.catalog)._scan_files
            monkeypatch.setattr(type(opened.catalog), "_scan_files",
                                lambda self, **kw: full.append(1) or real(self, **kw))
            changes = opened.refresh()
            assert full == []  # the monitor vouched: no stat of every file
            assert [e.path for e in changes.changed] == [
                head.relative_to(store).as_posix()]
            seen = changes.changed[0]
            assert seen.edited and seen.digest == hashlib.sha256(head.read_bytes()).hexdigest()
            watched = watching.watching(opened.layout.pages)
            assert watched is not None and watched.scanned_at > 0
            opened.refresh()
            assert full == []  # then the watch's own events, as before
    finally:
        run_pcp("monitor", "stop", "--store", str(store))
