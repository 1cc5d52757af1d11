"""A long-lived process that watches its store (`pcp serve`) skips the stat scan while nothing
under pages/ moved, and still sees every edit, new folder and deletion on the next refresh."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pcp_cli import api
from pcp_cli.store.changes import watch

pytestmark = pytest.mark.skipif(not watch.local_file_system(Path("/tmp").resolve()),
                                reason="inotify is trusted on local Linux file systems only")

HEAD = Path("pages/user/ada-lumen/client-checklist.md")


def scans(store, monkeypatch, targeted: list[list[str]] | None = None) -> list[int]:
    """Count the catalog's full scans, and note the paths of its targeted ones in `targeted`
    (both run unchanged)."""
    seen: list[int] = []
    real, real_paths = type(store.catalog)._scan_files, type(store.catalog).scan_paths

    def counted(self, **kwargs):
        seen.append(1)
        return real(self, **kwargs)

    def counted_paths(self, rels):
        rels = sorted(rels)
        if targeted is not None:
            targeted.append(rels)
        return real_paths(self, rels)

    monkeypatch.setattr(type(store.catalog), "_scan_files", counted)
    monkeypatch.setattr(type(store.catalog), "scan_paths", counted_paths)
    return seen


def rewrite_same_size(path: Path, old: bytes, new: bytes) -> None:
    st = path.stat()
    data = path.read_bytes()
    assert old in data and len(old) == len(new)
    with open(path, "r+b") as fh:
        fh.write(data.replace(old, new))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def digest_row(store, rel: Path):
    return store.catalog.entries("path = ?", (rel.as_posix(),))[0].digest


def test_a_watched_store_scans_only_after_a_change(example, monkeypatch):
    import hashlib

    with api.open_store(example, readonly=True) as store:
        assert api.watch_files(store)
        targeted: list[list[str]] = []
        counted = scans(store, monkeypatch, targeted)
        store.refresh()  # the first refresh after watching always scans
        assert counted == [1]
        store.refresh()
        store.refresh()
        assert counted == [1] and targeted == []  # nothing moved: no scan
        path = example / HEAD
        rewrite_same_size(path, b"README", b"ReadMe")  # in place, mtime put back
        store.refresh()
        assert counted == [1] and targeted == [[HEAD.as_posix()]]  # that file alone
        assert digest_row(store, HEAD) == hashlib.sha256(path.read_bytes()).hexdigest()
        store.refresh()
        assert counted == [1] and len(targeted) == 1
        # saved by rename, as many editors do: a temporary file, then a rename over it
        tmp = path.with_name(".client-checklist.md.swp")
        tmp.write_bytes(path.read_bytes().replace(b"ReadMe", b"READ-ME"))
        os.replace(tmp, path)
        changes = store.refresh()
        assert [e.path for e in changes.changed] == [HEAD.as_posix()]
        assert targeted[-1] == [HEAD.as_posix()] and counted == [1]
        # deleted, then put back: gone from the catalog, then back
        data = path.read_bytes()
        path.unlink()
        assert store.refresh().removed == (HEAD.as_posix(),)
        path.write_bytes(data)
        assert [e.path for e in store.refresh().changed] == [HEAD.as_posix()]
        assert counted == [1]
        # the safety net's full scan finds nothing the targeted scans missed
        monkeypatch.setattr(watch, "MAX_AGE_S", 0.0)
        assert not store.refresh() and counted == [1, 1]
        monkeypatch.setattr(watch, "MAX_AGE_S", 60.0)
        # A new folder with a page in it, then a file in that folder: both seen.
        (example / "pages/user/new-folder").mkdir()
        store.refresh()
        nested = example / "pages/user/new-folder/dropped.md"
        nested.write_text("A dropped-in note about quokkas.\n")
        changes = store.refresh()
        assert "pages/user/new-folder/dropped.md" in {e.path for e in changes.changed}
        nested.unlink()
        assert "pages/user/new-folder/dropped.md" in store.refresh().removed


def test_a_watched_store_still_scans_when_the_watch_is_old(example, monkeypatch):
    with api.open_store(example, readonly=True) as store:
        assert api.watch_files(store)
        counted = scans(store, monkeypatch)
        store.refresh()
        monkeypatch.setattr(watch, "MAX_AGE_S", 0.0)
        store.refresh()
        assert len(counted) == 2  # the stat scan stays the truth now and then


def test_a_targeted_scan_takes_odd_files_as_the_full_scan_does(example, monkeypatch, tmp_path):
    """A head file replaced by a symlink while watched is not a head file any more (as the
    full walk says); a hidden or non-Markdown file is no page at all, and costs no scan."""
    with api.open_store(example, readonly=True) as store:
        assert api.watch_files(store)
        targeted: list[list[str]] = []
        counted = scans(store, monkeypatch, targeted)
        store.refresh()
        path = example / HEAD
        data = path.read_bytes()
        outside = tmp_path / "elsewhere.md"
        outside.write_bytes(data)
        path.unlink()
        path.symlink_to(outside)
        assert store.refresh().removed == (HEAD.as_posix(),)
        path.unlink()
        path.write_bytes(data)
        assert [e.path for e in store.refresh().changed] == [HEAD.as_posix()]
        (example / "pages/user/ada-lumen/.hidden.md").write_text("not a page\n")
        (example / "pages/user/ada-lumen/notes.txt").write_text("not a page\n")
        assert not store.refresh()
        assert counted == [1] and len(targeted) == 2  # the hidden and .txt files: no scan
        monkeypatch.setattr(watch, "MAX_AGE_S", 0.0)
        assert not store.refresh() and counted == [1, 1]


def test_the_safety_net_scan_runs_in_the_background(example, monkeypatch):
    """`pcp serve` runs the once-a-minute full scan in a thread of its own, so no call pays
    for it; a call then finds nothing left to scan."""
    import time

    monkeypatch.setattr(watch, "MAX_AGE_S", 0.4)  # the thread wakes every 0.1 s
    with api.open_store(example, readonly=True) as store:
        assert api.watch_files(store, background_scan=True)
        counted = scans(store, monkeypatch)
        store.refresh()
        assert counted == [1]
        deadline = time.monotonic() + 10
        while len(counted) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(counted) >= 2  # a full scan nobody's refresh asked for
        import hashlib

        path = example / HEAD
        path.write_text(path.read_text() + "\nA line added.\n")
        store.refresh()  # by this call's targeted scan, or the thread's: seen either way
        assert digest_row(store, HEAD) == hashlib.sha256(path.read_bytes()).hexdigest()


def test_after_a_long_full_scan_the_safety_net_waits_longer(example, monkeypatch):
    """On a big store a full scan takes seconds (and a call waits for it): the safety net runs
    at most SAFETY_SHARE of the time, so the age it allows grows with the last scan's length."""
    import time

    with api.open_store(example, readonly=True) as store:
        assert api.watch_files(store)
        counted = scans(store, monkeypatch)
        store.refresh()  # the first refresh after watching always scans
        watched = watch.watching(store.layout.pages)
        assert watched is not None and counted == [1]
        now = time.monotonic()
        watched.scanned_at, watched.scan_s = now - 2 * watch.MAX_AGE_S, 0.001  # a short scan
        store.refresh()
        assert counted == [1, 1]  # older than MAX_AGE_S: scanned again
        watched.scanned_at, watched.scan_s = now - 2 * watch.MAX_AGE_S, 5.0  # a 5 s scan
        assert watched.max_age() == 5.0 / watch.SAFETY_SHARE
        store.refresh()
        assert counted == [1, 1]  # within 250 s of it: the events are trusted
        watched.scanned_at = now - watched.max_age() - 1
        store.refresh()
        assert counted == [1, 1, 1]


def test_a_call_never_waits_for_the_safety_net_scan(example, monkeypatch):
    """While the background full scan is under way (held here at its start), a call's own
    refresh returns at once and still sees the edit its events named."""
    import hashlib
    import threading

    monkeypatch.setattr(watch, "MAX_AGE_S", 0.4)  # the thread wakes every 0.1 s
    entered, release = threading.Event(), threading.Event()
    with api.open_store(example, readonly=True) as store:
        assert api.watch_files(store, background_scan=True)
        real = type(store.catalog)._scan_files

        def held(self, **kwargs):
            if threading.current_thread().name == "pcp-safety-net-scan":
                entered.set()
                release.wait(60)
            return real(self, **kwargs)

        monkeypatch.setattr(type(store.catalog), "_scan_files", held)
        store.refresh()  # the first refresh scans everything, in this thread
        try:
            assert entered.wait(60), "the safety net never ran"
            path = example / HEAD
            path.write_text(path.read_text() + "\nWritten while the safety net scans.\n")
            done, seen = threading.Event(), []

            def call() -> None:  # a call of the server: a store of its own, in its own thread
                with api.open_store(example, readonly=True, refresh=False) as mine:
                    mine.refresh()
                    seen.append(digest_row(mine, HEAD))
                done.set()

            threading.Thread(target=call, daemon=True).start()
            assert done.wait(60), "the call waited for the safety net's scan"
            assert seen == [hashlib.sha256(path.read_bytes()).hexdigest()]
        finally:
            release.set()
