"""A listing of `revisions/` kept from one batch's hold of the writer lock to the next.

An import (`Store.batch`) lists `revisions/` once per hold of the lock (about a second) to
refuse page ids that differ only in case; at 100,000 pages that listing cost 60-400 ms a hold
on the bench machine, and it grows with the store. The listing is kept as a batch ends and
used again by the next batch if the folder provably has not changed meanwhile: the same inode
and the same modification time, recorded at least `QUIET_NS` after that time (any entry added
or removed later gets a later time). A file system whose times are whole milliseconds (FAT,
HFS+, some network file systems: too coarse to prove anything) never keeps one.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

# Listings smaller than this are cheaper to make again than to wait for.
KEEP_MIN = 20_000
# How long after the folder's last change its time must be recorded: longer than the coarsest
# clock tick a file system stamps times with (Linux: a jiffy, at most 10 ms).
QUIET_NS = 50_000_000


def keep(folder: Path, index: dict[str, Any] | None) -> tuple[int, int, dict[str, Any]] | None:
    """What to keep of `index` (the listing of `folder`) as a batch ends, the lock still held:
    None when it is small, or the folder's time cannot vouch for it. Caller holds the lock
    (so the wait, at most QUIET_NS, happens before any other writer can change the folder)."""
    if index is None or len(index) < KEEP_MIN:
        return None
    try:
        stat = os.stat(folder)
        if stat.st_mtime_ns % 1_000_000 == 0:
            return None
        age = time.time_ns() - stat.st_mtime_ns
        if 0 <= age < QUIET_NS:
            time.sleep((QUIET_NS - age) / 1e9)
        elif age < 0:  # a time in the future: the clock cannot vouch
            return None
        again = os.stat(folder)
    except OSError:
        return None
    if (again.st_ino, again.st_mtime_ns) != (stat.st_ino, stat.st_mtime_ns):
        return None
    return stat.st_ino, stat.st_mtime_ns, index


def reuse(folder: Path, kept: tuple[int, int, dict[str, Any]] | None) -> dict[str, Any] | None:
    """The kept listing if `folder` is as it was when it was kept, else None."""
    if kept is None:
        return None
    try:
        stat = os.stat(folder)
    except OSError:
        return None
    return kept[2] if (stat.st_ino, stat.st_mtime_ns) == kept[:2] else None
