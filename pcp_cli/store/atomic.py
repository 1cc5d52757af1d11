"""Crash-safe file writes: temporary file, flush, fsync, rename into place, fsync the folder.

A reader sees either the old file or the new one, never a partial file. Temporary files carry a
recognisable name (and the writer's process id) so `pcp doctor` can find and remove what a
killed writer left behind.

A write the disk refuses (full, an I/O error, read-only) raises StorageFailed and is undone: the
temporary file is removed and, when the failure comes after the rename (the folder's fsync),
the file's old bytes are put back (or the new file removed), so the caller's store is as it was.

A `FileBatch` publishes many files with the same guarantees at a fraction of the waiting: the
folders are made, then every temporary file is written and fsynced, in parallel (so the file
system commits them together instead of one journal commit per file, and file creations wait
on the journal together too), then each is renamed into place, then each folder touched is
fsynced once. It is all or nothing: a failure at any step undoes the whole batch.

A `GroupCommit` publishes several batches in order (an import's revision files, then its head
files) with a few waits per batch instead of one per file: every temporary file is written
without an fsync, then one `syncfs(2)` makes the whole file system's pending writes durable,
then each batch is renamed into place and made durable by one more `syncfs` before the next
batch is renamed. Where `syncfs` is unavailable (not Linux) or the call fails, each of those
waits is today's fsync pass instead (each temporary file, then each folder touched).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

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


# How many fsyncs a FileBatch has in flight at once: enough for the file system to commit a
# batch's files together, few enough not to flood a disk that other work shares.
PARALLEL_FSYNCS = 16


class FileBatch:
    """Files published together: all written, all fsynced, all renamed, each folder fsynced
    once. `publish()` raises StorageFailed (nothing of the batch in place) when the disk refuses
    any step."""

    def __init__(self) -> None:
        self._files: dict[Path, bytes] = {}
        self._new: set[Path] = set()

    def __len__(self) -> int:
        return len(self._files)

    def add(self, path: Path, data: str | bytes, *, new: bool = False) -> None:
        """Stage `data` for `path`; `new` refuses (at publish) to replace an existing file."""
        self._files[path] = data.encode("utf-8") if isinstance(data, str) else data
        if new:
            self._new.add(path)

    def publish(self) -> None:
        if not self._files:
            return
        created: list[Path] = []  # folders made for the batch, deepest first within each
        marker = f"{TMP_MARKER}{os.getpid()}"
        temps = {path: _temp_name(path, marker) for path in self._files}
        fds: list[int] = []
        try:
            for path in self._new:
                if path.exists():
                    raise FileExistsError(path)
            # The folders, then every temporary file written and fsynced, each step issued in
            # parallel: creating a file or a folder waits on the file system's journal as an
            # fsync does (under another writer's fsyncs, 0.4-0.6 ms each), so a batch waits
            # about once per step instead of once per file.
            folders = list(dict.fromkeys(path.parent for path in self._files))
            _in_parallel(lambda folder: _makedirs(folder, created), folders)
            _in_parallel(lambda path: self._write_temp(path, temps[path], fds), list(self._files))
        except OSError as exc:
            _close_all(fds)
            self._discard(temps.values(), created)
            if isinstance(exc, FileExistsError):
                raise
            raise _failed(exc, Path(exc.filename or next(iter(self._files))),
                          "nothing was written (every file of the batch is as it was)") from exc
        old: dict[Path, bytes | None] = {}
        try:
            for path, tmp in temps.items():
                old[path] = None if path in self._new else _old_bytes(path)
                os.replace(tmp, path)
        except BaseException as exc:
            renamed = list(old)[:-1]  # the last one is the rename that failed
            for path in renamed:
                _restore(path, old[path], [])
            self._discard(temps.values(), created)
            if isinstance(exc, OSError):
                raise _failed(exc, list(old)[-1] if old else next(iter(temps)),
                              "nothing was written (every file of the batch is as it was)"
                              ) from exc
            raise
        folders = dict.fromkeys(path.parent for path in temps)
        folders.update(dict.fromkeys(made.parent for made in created))
        try:
            _in_parallel(fsync_dir, list(folders))
        except OSError as exc:
            for path in old:
                _restore(path, old[path], [])
            self._discard((), created)
            raise _failed(exc, Path(exc.filename or next(iter(folders))),
                          "the write was undone (every file of the batch is as it was)"
                          ) from exc

    def _write_temp(self, path: Path, tmp: str, fds: list[int]) -> None:
        """Write and fsync the temporary file of `path` (see `_write_file`)."""
        _write_file(path, tmp, self._files[path], fds, fsync=True)

    @staticmethod
    def _discard(temps: Iterable[str], created: list[Path]) -> None:
        for tmp in temps:
            with contextlib.suppress(FileNotFoundError, OSError):
                os.unlink(tmp)
        _remove_folders(sorted(created, key=lambda made: len(made.parts), reverse=True))


# How a GroupCommit's waits were made durable in this process: "syncfs" calls, or "fsync"
# passes (each file, then each folder) where syncfs is unavailable or failed. For benchmarks
# and tests, which need to know which path ran; nothing shows it to a person.
SYNCS: Counter[str] = Counter()


class GroupCommit:
    """File batches published in order, each made durable before the next is renamed into
    place, with a few waits in all instead of some per file:

    1. every batch's folders are made and its temporary files written, without an fsync;
    2. one sync makes them durable (their bytes, and the new folders' names);
    3. batch by batch: its files are renamed into place, then one sync makes the renames
       durable before the next batch's renames begin.

    A sync is one `syncfs(2)` of each file system the files live on (Linux); where there is
    no syncfs, each temporary file is fsynced as it is written and each step's folders after
    its renames (FileBatch's way); where a syncfs call fails, the same fsyncs are made instead
    for that step and those after it (a failed syncfs may be another program's write error:
    the fsyncs say whether ours are durable). `publish()` raises StorageFailed when the disk
    refuses a step: every file renamed so far is put back as it was (newest batch first:
    replaced files restored, new ones removed), the temporary files and folders made are
    removed, and the message says whether that undo completed.
    """

    def __init__(self) -> None:
        self.stages: list[FileBatch] = []

    def stage(self) -> FileBatch:
        """A new batch of files, renamed into place after those of the batches before it."""
        batch = FileBatch()
        self.stages.append(batch)
        return batch

    def publish(self) -> None:
        stages = [stage for stage in self.stages if len(stage)]
        if stages:
            _Commit(stages).run()


class _Commit:
    """One GroupCommit.publish(): what it has done so far, so that a failure can undo it."""

    def __init__(self, stages: list[FileBatch]) -> None:
        self.stages = stages
        marker = f"{TMP_MARKER}{os.getpid()}"
        self.temps = {path: _temp_name(path, marker) for stage in stages for path in stage._files}
        self.created: list[Path] = []  # folders made, each after its parent
        self.renamed: list[tuple[Path, bytes | None]] = []  # in place, with what it replaced
        self.sync_fds: list[int] = []  # one per file system, while syncfs serves

    def run(self) -> None:
        fds: list[int] = []
        try:
            self._open_sync_fds()
            self._write(fds)
        except OSError as exc:
            _close_all(fds)
            self._undo()
            self._close_sync_fds()
            if isinstance(exc, FileExistsError):
                raise
            raise _failed(exc, Path(exc.filename or next(iter(self.temps))),
                          "nothing was written (every file of the batch is as it was)") from exc
        try:
            self._sync(list(self.temps.values()) if self.sync_fds else [],
                       list(dict.fromkeys(made.parent for made in self.created)))
            for stage in self.stages:
                for path in stage._files:
                    old = None if path in stage._new else _old_bytes(path)
                    os.replace(self.temps[path], path)
                    self.renamed.append((path, old))
                self._sync([], list(dict.fromkeys(path.parent for path in stage._files)))
        except BaseException as exc:
            whole = self._undo()
            self._close_sync_fds()
            if not isinstance(exc, OSError):
                raise
            state = ("the write was undone (every file of the batch is as it was)" if whole
                     else "the batch is published in part: `pcp doctor --fix` finishes it")
            raise _failed(exc, Path(exc.filename or self._failed_path()), state) from exc
        self._close_sync_fds()

    def _open_sync_fds(self) -> None:
        """A descriptor on each file system the files live on (the nearest existing folder
        above each batch's files), opened before any file is written so that syncfs reports
        every write error from then on; none when syncfs is unavailable."""
        if _libc_syncfs() is None:
            return
        devices: set[int] = set()
        for stage in self.stages:
            folder = os.path.commonpath([os.path.dirname(os.fspath(p)) for p in stage._files])
            while True:
                try:
                    fd = os.open(folder, os.O_RDONLY)
                    break
                except FileNotFoundError:
                    if os.path.dirname(folder) == folder:
                        raise
                    folder = os.path.dirname(folder)
            device = os.fstat(fd).st_dev
            if device in devices:
                os.close(fd)
                continue
            devices.add(device)
            self.sync_fds.append(fd)

    def _close_sync_fds(self) -> None:
        _close_all(self.sync_fds)

    def _write(self, fds: list[int]) -> None:
        """Step 1: the folders, then the temporary files (each fsynced, in parallel, when there
        is no syncfs to make them durable together)."""
        each = not self.sync_fds
        # With syncfs, one after the other: nothing waits on a disk here, and the threads'
        # hand-offs cost more CPU than they save (measured: ~15% more CPU for the same wall).
        parallel = each
        folders = list(dict.fromkeys(os.path.dirname(tmp) for tmp in self.temps.values()))
        if parallel:
            _in_parallel(lambda folder: _make_folder(folder, self.created), folders)
        else:
            for folder in folders:
                _make_folder(folder, self.created)
        made = {os.fspath(folder) for folder in self.created}
        for stage in self.stages:
            for path in stage._new:  # a file in a folder just made cannot exist yet
                if os.path.dirname(os.fspath(path)) not in made and path.exists():
                    raise FileExistsError(path)
        files = {path: data for stage in self.stages for path, data in stage._files.items()}
        if parallel:
            _in_parallel(lambda path: _write_file(path, self.temps[path], files[path], fds,
                                                  fsync=each), list(files))
        else:
            for path, data in files.items():
                _write_file(path, self.temps[path], data, fds, fsync=False)

    def _sync(self, files: list[str], folders: list[Path]) -> None:
        """Make the last step durable: one syncfs per file system, or else an fsync of each
        of `files` (temporary files written without one) and `folders`."""
        if self.sync_fds:
            try:
                for fd in self.sync_fds:
                    syncfs(fd)
            except OSError:
                self._close_sync_fds()  # fsyncs from here on
            else:
                SYNCS["syncfs"] += 1
                return
        _in_parallel(_fsync_file, files)
        _in_parallel(fsync_dir, folders)
        SYNCS["fsync"] += 1

    def _undo(self) -> bool:
        """Put back every renamed file (newest first), remove the temporary files and the
        folders made, and try to make that durable; False when a file could not be put back."""
        whole = True
        for path, old in reversed(self.renamed):
            try:
                if old is None:
                    os.unlink(path)
                else:
                    back = f"{self.temps[path]}-undo"
                    with open(back, "wb") as fh:
                        fh.write(old)
                    os.replace(back, path)
            except OSError:
                whole = False
        FileBatch._discard(self.temps.values(), self.created)
        if self.renamed:  # best effort, as a single write's undo: the disk is failing
            with contextlib.suppress(OSError):
                self._sync([], list(dict.fromkeys(path.parent for path, _ in self.renamed)))
        return whole

    def _failed_path(self) -> Path:
        return self.renamed[-1][0] if self.renamed else next(iter(self.temps))


def _write_file(path: Path, tmp: str, data: bytes, fds: list[int], *, fsync: bool) -> None:
    """Write `data` to `tmp` (the temporary file of `path`), fsynced if `fsync`; its
    descriptor is in `fds` until it is closed, for the caller to close should this raise."""
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        fds.append(fd)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if fsync:
            os.fsync(fd)
    except OSError as exc:
        if exc.filename is None:
            exc.filename = str(path)
        raise
    fds.remove(fd)
    os.close(fd)


def _fsync_file(name: str) -> None:
    fd = os.open(name, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _make_folder(folder: str, created: list[Path]) -> None:
    """Make `folder` and any missing parents, one mkdir each (no stat first), adding each
    made to `created` (after its parent)."""
    try:
        os.mkdir(folder)
    except FileExistsError:
        return  # a file there fails the temporary file's open, as it should
    except FileNotFoundError:
        _make_folder(os.path.dirname(folder), created)
        try:
            os.mkdir(folder)
        except FileExistsError:
            return
    created.append(Path(folder))


_SYNCFS: list[Any] = []


def _libc_syncfs() -> Any:
    """The C library's syncfs(2), or None where there is none (not Linux, no such symbol)."""
    if not _SYNCFS:
        call = None
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                call = ctypes.CDLL(None, use_errno=True).syncfs
                call.argtypes, call.restype = [ctypes.c_int], ctypes.c_int
            except (OSError, AttributeError):
                call = None
        _SYNCFS.append(call)
    return _SYNCFS[0]


def syncfs(fd: int) -> None:
    """syncfs(2): every pending write on the file system `fd` is on made durable (the GIL is
    released meanwhile). Raises OSError, ENOSYS where there is no such call."""
    call = _libc_syncfs()
    if call is None:
        raise OSError(errno.ENOSYS, "syncfs is not available here")
    if call(fd) != 0:
        import ctypes

        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def _temp_name(path: Path, marker: str) -> str:
    """`path`'s temporary file, `.<name><marker>` beside it (as a string: a batch names
    hundreds, and pathlib's joins were a few percent of an import)."""
    folder, name = os.path.split(os.fspath(path))
    return os.path.join(folder, f".{name}{marker}")


def _in_parallel(function: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
    """`function` on every item, PARALLEL_FSYNCS at a time, and what each returned; the first
    error is raised after all have finished (the caller undoes the batch, so none may still be
    running then)."""
    if len(items) <= 1:
        return [function(item) for item in items]
    from concurrent.futures import wait

    futures = [_pool().submit(function, item) for item in items]
    wait(futures)
    return [future.result() for future in futures]


_POOL: Any = None


def _pool() -> Any:
    """The threads that issue a batch's fsyncs, started once per process (a batch used to
    start and join up to 16 threads for each of its four rounds of fsyncs)."""
    global _POOL
    if _POOL is None:
        from concurrent.futures import ThreadPoolExecutor

        _POOL = ThreadPoolExecutor(PARALLEL_FSYNCS, thread_name_prefix="pcp-fsync")
    return _POOL


def _forget_pool() -> None:
    """In a forked child the parent's threads do not exist: start new ones when needed."""
    global _POOL
    _POOL = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    fds.clear()


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


def _makedirs(folder: Path, created: list[Path] | None = None) -> list[Path]:
    """Create `folder` and missing parents; return the folders created, deepest first (and
    add each to `created` as soon as it exists, so that a failure can remove them)."""
    missing: list[Path] = []
    current = folder
    while not current.exists():
        missing.append(current)
        current = current.parent
    for made in reversed(missing):
        made.mkdir(exist_ok=True)
        if created is not None:
            created.insert(0, made)
    return missing
