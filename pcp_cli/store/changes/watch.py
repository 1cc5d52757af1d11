"""For a long-lived process (`pcp serve`): skip the change scan while nothing under pages/ moved.

The change scan stats every head file (catalog.py): ~5 ms of CPU per 1,000 pages, half a second
on every MCP call at 100,000 pages. A process that answers many calls can instead ask Linux to
tell it when a folder under `pages/` changes (inotify, through ctypes: no dependency), and scan
only then. The stat scan stays the truth whenever there is doubt:

- the first refresh after watching starts scans every file (events before the watches were
  set are not known);
- an event names a file in a watched folder (a write, an attribute change, a file created,
  deleted or renamed): the next refresh looks at the head files named since the last one, and
  only at them (the catalog's `scan_paths`: a stat, and a read where the stat moved), finding
  what each file now is; events about other files (temporary files, hidden ones) need no scan;
- an event queue overflow, a watch that could not be added, a new or removed folder, or a
  catalog that was replaced (its first scan not done) make the next refresh scan and re-watch;
- a full scan is also done when the last one is older than `MAX_AGE_S`, whatever the events
  say (the safety net); `keep_scanning` runs it in the background before a call has to,
  without the lock a call's refresh takes, so no call waits for it. On a big store that scan
  is long (seconds at a million pages), so the age grows with what the last full scan took:
  the safety net takes at most `SAFETY_SHARE` of the time (a 5 s scan: every 250 s, not every
  minute);
- only local file systems are watched (ext2/3/4, XFS, Btrfs, tmpfs, overlayfs, ZFS, F2FS):
  inotify does not see another machine's writes to a network file system, so there the scan
  runs on every refresh as before. Not on Linux: the same.

One inotify instance per process, shared by every store it watches (the per-user limit on
instances is small), and one lock per store: a refresh that finds events scans while holding
it, so a concurrent refresh waits for that scan instead of answering from the catalog before it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pcp_cli.store.layout import is_foreign_root

MAX_AGE_S = 60.0
SAFETY_SHARE = 0.02
_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF, _IN_Q_OVERFLOW, _IN_IGNORED = 0x400, 0x800, 0x4000, 0x8000
_IN_ONLYDIR, _IN_ISDIR = 0x1000000, 0x40000000
_IN_NONBLOCK, _IN_CLOEXEC = os.O_NONBLOCK, getattr(os, "O_CLOEXEC", 0o2000000)
_MASK = (_IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE
         | _IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR)
_EVENT = struct.Struct("iIII")
# statfs f_type of the file systems whose changes inotify always sees (linux/magic.h).
_LOCAL = {0xEF53, 0x58465342, 0x9123683E, 0x01021994, 0x794C7630, 0x2FC12FC1, 0xF2F52010}


class _StatFs(ctypes.Structure):
    _fields_ = [("f_type", ctypes.c_long), ("rest", ctypes.c_byte * 120)]


class StoreWatch:
    """The watches on one store's folders, and what its catalog must scan."""

    def __init__(self, hub: _Hub, pages: Path) -> None:
        self.hub = hub
        self.pages = pages
        self.root = pages.parent
        self.lock = threading.Lock()
        self.wds: set[int] = set()
        self.folders: dict[int, str] = {}  # wd -> the folder's store-relative path
        self.full = True  # nothing known yet: the first refresh scans everything
        self.paths: set[str] = set()  # head files named by events since the last scan
        self.rewatch = True
        self.scanned_at = 0.0
        self.scan_s = 0.0  # how long the last full scan took

    def max_age(self) -> float:
        """How old the last full scan may be before the safety net runs another: `MAX_AGE_S`,
        or longer when the scans are long, so that they take at most `SAFETY_SHARE` of the
        time (`MAX_AGE_S = 0`: every refresh scans)."""
        return MAX_AGE_S and max(MAX_AGE_S, self.scan_s / SAFETY_SHARE)

    def pending(self) -> set[str] | None:
        """Drain the events and take what the catalog must scan: None for every file (the
        first scan, an overflow, a folder added or removed, a watch lost, or the last full scan
        older than `max_age()`), else the store-relative paths of the head files named by
        events since the last `pending` (empty: nothing moved). Events noted from now on are
        the next call's. The caller holds `lock`, scans, then calls `scanned` (or `failed`)."""
        full, taken = self.take()
        if full or time.monotonic() - self.scanned_at > self.max_age():
            return None
        return taken

    def take(self) -> tuple[bool, set[str]]:
        """Drain the events and take what they say: (whether everything must be looked at,
        the head files named since the last take). The store monitor's journal uses it too."""
        self.hub.drain()
        if self.rewatch:
            self._watch_all()
        with self.hub.lock:
            full, self.full = self.full, self.rewatch
            taken, self.paths = self.paths, set()
        return full, taken

    def scanned(self, started: float, *, full: bool = True) -> None:
        """The scan that began at `started` (time.monotonic, taken before `pending`) is done.
        A targeted scan (`full=False`) leaves the age of the last full scan as it was."""
        if full:
            self.scanned_at = started
            self.scan_s = time.monotonic() - started

    def failed(self) -> None:
        """The scan did not finish: the next one scans everything."""
        with self.hub.lock:
            self.full = True

    def note(self, wd: int, mask: int, name: str) -> None:
        """One event (the hub's lock held)."""
        if mask & (_IN_IGNORED | _IN_DELETE_SELF | _IN_MOVE_SELF) or (
                mask & _IN_ISDIR and mask & (_IN_CREATE | _IN_MOVED_TO | _IN_MOVED_FROM
                                             | _IN_DELETE)):
            self.rewatch = True  # the set of folders changed: watch them afresh
            self.full = True
            return
        folder = self.folders.get(wd)
        if folder is None or not name:
            self.full = True  # an event on a folder itself (its mode, say): look at everything
            return
        if name.startswith(".") or not name.endswith(".md") or mask & _IN_ISDIR:
            return  # not a head file (the change scan never reads it): temporary files, etc.
        self.paths.add(f"{folder}/{name}")

    def _watch_all(self) -> None:
        self.rewatch = False
        with self.hub.lock:
            self.full = True
        for wd in self.wds:
            self.hub.forget(wd)
        self.wds.clear()
        self.folders.clear()
        for folder in _folders(self.pages):
            wd = self.hub.add(folder, self)
            if wd < 0:
                self.rewatch = True  # could not watch everything: scan every time for now
                return
            self.wds.add(wd)
            self.folders[wd] = Path(folder).relative_to(self.root).as_posix()


class _Hub:
    """The process's one inotify instance."""

    def __init__(self) -> None:
        self.libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        self.fd = self.libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self.by_wd: dict[int, Any] = {}  # wd -> the StoreWatch (or RevisionsWatch) it serves
        self.lock = threading.Lock()
        self.error = 0  # the errno of the last watch the kernel refused

    def add(self, folder: str, watch: Any, mask: int = _MASK) -> int:
        wd = int(self.libc.inotify_add_watch(self.fd, os.fsencode(folder), mask))
        if wd >= 0:
            self.by_wd[wd] = watch
        else:
            self.error = ctypes.get_errno()
        return wd

    def forget(self, wd: int) -> None:
        if self.by_wd.pop(wd, None) is not None:
            self.libc.inotify_rm_watch(self.fd, wd)

    def drain(self) -> None:
        with self.lock:
            while True:
                try:
                    data = os.read(self.fd, 65536)
                except BlockingIOError:
                    return
                except OSError:  # pragma: no cover - the instance broke: scan everything
                    for watch in set(self.by_wd.values()):
                        watch.rewatch = watch.full = True
                    return
                self._note(data)

    def _note(self, data: bytes) -> None:
        offset = 0
        while offset + _EVENT.size <= len(data):
            wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
            offset += _EVENT.size + length
            if mask & _IN_Q_OVERFLOW:
                for watch in set(self.by_wd.values()):
                    watch.rewatch = watch.full = True
                continue
            watch = self.by_wd.get(wd)
            if watch is None:
                continue
            raw = data[offset - length:offset].split(b"\0", 1)[0]
            watch.note(wd, mask, os.fsdecode(raw))


def _folders(pages: Path) -> list[str]:
    """pages/ and every folder under it that the change scan walks into."""
    found = [str(pages)]
    for folder in found:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if (not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False)
                    and not is_foreign_root(Path(entry.path))):
                found.append(entry.path)
    return found


_HUB: _Hub | None = None
_WATCHES: dict[Path, StoreWatch] = {}
_GUARD = threading.Lock()


def keep_scanning(pages: Path, open_store: Callable[[], Any]) -> None:
    """Run the safety net's full scan in a daemon thread, before a call would have to: every
    `MAX_AGE_S / 4` seconds, when the last full scan is older than half of `max_age()`, a store
    opened for that scan alone runs `refresh("safety")`: a full scan that does not hold the
    watch's lock, so no call waits for it (a call's refresh looks at what its events named,
    meanwhile). A call's own refresh stays the judge: if this thread falls behind or fails,
    the call scans as before."""

    def loop() -> None:
        while True:
            time.sleep(MAX_AGE_S / 4)
            watched = watching(pages)
            if watched is None or not pages.is_dir():
                return
            if time.monotonic() - watched.scanned_at < watched.max_age() / 2:
                continue
            try:
                with open_store() as store:
                    store.refresh("safety")
            except Exception:  # noqa: BLE001, S112 - the next call scans instead
                continue

    threading.Thread(target=loop, name="pcp-safety-net-scan", daemon=True).start()


def local_file_system(path: Path) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        buf = _StatFs()
        if libc.statfs(os.fsencode(str(path)), ctypes.byref(buf)) != 0:
            return False
    except (OSError, AttributeError):
        return False
    return (buf.f_type & 0xFFFFFFFF) in _LOCAL


def watch(pages: Path) -> bool:
    """Watch the store whose head files live under `pages`, for the life of this process.
    False (and nothing changes: every refresh scans) where that cannot be trusted."""
    global _HUB
    pages = pages.resolve()
    with _GUARD:
        if pages in _WATCHES:
            return True
        if not local_file_system(pages):
            return False
        try:
            if _HUB is None:
                _HUB = _Hub()
        except (OSError, AttributeError):
            return False
        _WATCHES[pages] = StoreWatch(_HUB, pages)
        return True


def watching(pages: Path) -> StoreWatch | None:
    if not _WATCHES:
        return None
    return _WATCHES.get(pages) or _WATCHES.get(pages.resolve())
