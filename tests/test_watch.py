"""A long-lived process that watches its store (`pcp serve`) skips the stat scan while nothing
under pages/ moved, and still sees every edit, new folder and deletion on the next refresh."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pcp_cli import api
from pcp_cli.store import watch

pytestmark = pytest.mark.skipif(not watch.local_file_system(Path("/tmp").resolve()),
                                reason="inotify is trusted on local Linux file systems only")

HEAD = Path("pages/user/ada-lumen/client-checklist.md")


def scans(store, monkeypatch) -> list[int]:
    """Count the catalog's real scans (the scan itself runs unchanged)."""
    seen: list[int] = []
    real = type(store.catalog)._scan_files

    def counted(self, **kwargs):
        seen.append(1)
        return real(self, **kwargs)

    monkeypatch.setattr(type(store.catalog), "_scan_files", counted)
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
        counted = scans(store, monkeypatch)
        store.refresh()  # the first refresh after watching always scans
        assert counted == [1]
        store.refresh()
        store.refresh()
        assert counted == [1]  # nothing moved: no scan
        path = example / HEAD
        rewrite_same_size(path, b"README", b"ReadMe")  # in place, mtime put back
        store.refresh()
        assert len(counted) == 2
        assert digest_row(store, HEAD) == hashlib.sha256(path.read_bytes()).hexdigest()
        store.refresh()
        assert len(counted) == 2
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
