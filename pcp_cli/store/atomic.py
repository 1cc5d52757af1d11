"""Crash-safe file writes: temporary file, flush, fsync, rename into place, fsync the folder.

A reader sees either the old file or the new one, never a partial file. Temporary files carry a
recognisable name (and the writer's process id) so `pcp doctor` can find and remove what a
killed writer left behind.

A write the disk refuses (full, an I/O error, read-only) raises StorageFailed and is undone: the
temporary file is removed and, when the failure comes after the rename (the folder's fsync),
the file's old bytes are put back (or the new file removed), so the caller's store is as it was.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

from pcp_cli.errors import StorageFailed

TMP_MARKER = ".pcp-tmp-"

# What a file system says when it cannot fsync a directory at all: nothing was lost, the
# platform simply offers no such guarantee. Any other failure (EIO, ENOSPC, …) is a real one.
_CANNOT_FSYNC_DIR = frozenset(
    code for code in (errno.EINVAL, getattr(errno, "ENOTSUP", None),
                      getattr(errno, "EOPNOTSUPP", None), errno.EBADF, errno.EISDIR)
    if code is not None
)


def is_temp_name(name: str) -> bool:
    return TMP_MARKER in name


def temp_writer_pid(name: str) -> int | None:
    """The process id a temporary file's name carries (None when it carries none)."""
    tail = name.rsplit(TMP_MARKER, 1)[-1] if TMP_MARKER in name else ""
    return int(tail) if tail.isdigit() else None


def writer_alive(name: str) -> bool:
    """True when the process a temporary file's name carries is still running (and is not this
    one): its write is in progress, not interrupted, and the file is not a leftover."""
    pid = temp_writer_pid(name)
    if pid is None or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, but belongs to someone else
        return True
    return True


def fsync_dir(path: Path) -> None:
    """Make a rename or creation in `path` durable. Raises OSError on a real failure; ignores
    only the errors that mean this file system cannot fsync a directory."""
    if os.name == "nt":  # pragma: no cover - no directory fds on Windows
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in _CANNOT_FSYNC_DIR:
            raise
    finally:
        os.close(fd)


def _failed(exc: OSError, path: Path, state: str) -> StorageFailed:
    reason = exc.strerror or str(exc)
    name = errno.errorcode.get(exc.errno or 0, "")
    return StorageFailed(
        f"cannot write {path}: {reason}{f' ({name})' if name else ''}; {state}",
        hint="free some disk space (or check the disk), then run the command again; "
        "`pcp doctor` checks the store",
    )


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write `data` to `path` atomically, creating parent folders as needed.

    Raises StorageFailed (the write undone, `path` as it was) when the disk refuses it.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    folder = path.parent
    created: list[Path] = []
    tmp = folder / f".{path.name}{TMP_MARKER}{os.getpid()}"
    try:
        created = _makedirs(folder)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(raw)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        _remove_folders(created)
        raise _failed(exc, path, "nothing was written (the file is as it was)") from exc
    old = _old_bytes(path)
    try:
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        _remove_folders(created)
        if isinstance(exc, OSError):
            raise _failed(exc, path, "nothing was written (the file is as it was)") from exc
        raise
    try:
        fsync_dir(folder)
        for made in created:
            fsync_dir(made.parent)
    except OSError as exc:
        _restore(path, old, created)
        raise _failed(exc, path, "the write was undone (the file is as it was)") from exc


def write_new(path: Path, data: str | bytes) -> None:
    """Atomically publish an immutable file; refuse to replace one that exists."""
    if path.exists():
        raise FileExistsError(path)
    write_atomic(path, data)


def remove_file(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
        fsync_dir(path.parent)
    except FileNotFoundError:  # the folder itself is gone: nothing to make durable
        return
    except OSError as exc:
        raise StorageFailed(
            f"cannot remove {path}: {exc.strerror or exc}",
            hint="check the disk, then run `pcp doctor --fix` to finish the operation",
        ) from exc


def _old_bytes(path: Path) -> bytes | None:
    """What `path` holds now (None if nothing): what an undone write puts back."""
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    except OSError:
        return None


def _restore(path: Path, old: bytes | None, created: list[Path]) -> None:
    """Undo a rename whose folder could not be made durable (best effort: the disk is failing)."""
    with contextlib.suppress(OSError):
        if old is None:
            path.unlink(missing_ok=True)
            _remove_folders(created)
            return
        back = path.parent / f".{path.name}{TMP_MARKER}{os.getpid()}"
        with open(back, "wb") as fh:
            fh.write(old)
        os.replace(back, path)


def _remove_folders(created: list[Path]) -> None:
    for made in created:  # deepest first
        with contextlib.suppress(OSError):
            made.rmdir()


def _makedirs(folder: Path) -> list[Path]:
    """Create `folder` and missing parents; return the folders created, deepest first."""
    missing: list[Path] = []
    current = folder
    while not current.exists():
        missing.append(current)
        current = current.parent
    for made in reversed(missing):
        made.mkdir(exist_ok=True)
    return missing
