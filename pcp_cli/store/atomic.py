"""Crash-safe file writes: temporary file, flush, fsync, rename into place, fsync the folder.

A reader sees either the old file or the new one, never a partial file. Temporary files carry a
recognisable name so `pcp doctor` can find and remove what a killed writer left behind.
"""

from __future__ import annotations

import os
from pathlib import Path

TMP_MARKER = ".pcp-tmp-"


def is_temp_name(name: str) -> bool:
    return TMP_MARKER in name


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write `data` to `path` atomically, creating parent folders as needed."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    folder = path.parent
    created = _makedirs(folder)
    tmp = folder / f".{path.name}{TMP_MARKER}{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(raw)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(folder)
    for made in created:
        fsync_dir(made.parent)


def write_new(path: Path, data: str | bytes) -> None:
    """Atomically publish an immutable file; refuse to replace one that exists."""
    if path.exists():
        raise FileExistsError(path)
    write_atomic(path, data)


def remove_file(path: Path) -> None:
    path.unlink(missing_ok=True)
    fsync_dir(path.parent)


def _makedirs(folder: Path) -> list[Path]:
    """Create `folder` and missing parents; return the folders that were created."""
    missing: list[Path] = []
    current = folder
    while not current.exists():
        missing.append(current)
        current = current.parent
    for made in reversed(missing):
        made.mkdir(exist_ok=True)
    return missing
