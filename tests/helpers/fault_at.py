"""Run a pcp command with one file-system fault injected at the Nth call of an operation:

    python fault_at.py OP N FAULT PCP_ARG...

OP is `write`, `fsync` (a file's), `rename`, `dirfsync` (a folder's fsync) or `syncfs` (a
group commit's sync of the file system), as `pcp_cli.store.atomic` performs them, or `commit`
/ `committed` (just before / just after the catalog records a batch of pages); FAULT is `EIO`,
`ENOSPC` or `kill` (SIGKILL just before the operation, or for `committed` just after the
commit), or `term` for a server (`pcp console`): SIGTERM, then the operation goes on once
uvicorn has given up waiting for the request doing it (the write outlives the grace period on
any machine), and the process exits as pcp does, waiting for its threads. With OP `trace` (N
and FAULT ignored), every operation is logged instead, one `op path` line each, to the file
named by `PCP_FAULT_TRACE`.

`PCP_TEST_NO_SYNCFS=1` (read here) makes `pcp_cli.store.atomic` find no syncfs, as on a
platform without one: a group commit then fsyncs each file and folder.

`PCP_TEST_BATCH_PAGES` (read here, never by pcp) makes an import's batches that many pages, so
a small export spans several batches.

The patch lives in this child process only (a stand-in for the `os` module that
`pcp_cli.store.atomic` sees); pcp itself has no test hook. The command's exit status is this
process's; `finished after K calls` goes to stderr so a test can tell whether N was reached.
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import stat
import sys
import threading
import types

from pcp_cli.cli.main import run
from pcp_cli.store import atomic

# Set when uvicorn says it cancels the requests still running at shutdown (fault `term`).
GAVE_UP = threading.Event()


def _gave_up(record: logging.LogRecord) -> bool:
    """A filter on uvicorn's logger (its logging setup replaces handlers, keeps filters)."""
    if record.getMessage().startswith("Cancel"):
        GAVE_UP.set()
    return True


class FaultyOs(types.ModuleType):
    def __init__(self, op: str, n: int, fault: str) -> None:
        super().__init__("os")
        self._op, self._n, self._fault = op, n, fault
        self.calls = 0
        self._paths: dict[int, str] = {}
        trace = os.environ.get("PCP_FAULT_TRACE")
        self._trace = open(trace, "a", encoding="utf-8") if trace else None  # noqa: SIM115

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    def _hit(self, op: str, path: object) -> None:
        if self._trace is not None:
            self._trace.write(f"{op} {path}\n")
            self._trace.flush()
        if op != self._op:
            return
        self.calls += 1
        if self.calls != self._n:
            return
        if self._fault == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if self._fault == "term":  # asked to stop, and the operation goes on
            os.kill(os.getpid(), signal.SIGTERM)
            # ... after the server has given up waiting for the request doing it (uvicorn
            # logs that it cancels what outlived its grace period): whatever the machine's speed
            GAVE_UP.wait(120)
            return
        code = getattr(errno, self._fault)
        raise OSError(code, os.strerror(code), str(path))

    def open(self, path, flags, mode=0o777, *a, **kw):  # type: ignore[no-untyped-def]
        fd = os.open(path, flags, mode, *a, **kw)
        self._paths[fd] = str(path)
        return fd

    def close(self, fd):  # type: ignore[no-untyped-def]
        self._paths.pop(fd, None)
        return os.close(fd)

    def write(self, fd, data):  # type: ignore[no-untyped-def]
        self._hit("write", self._paths.get(fd, fd))
        return os.write(fd, data)

    def fsync(self, fd):  # type: ignore[no-untyped-def]
        is_dir = stat.S_ISDIR(os.fstat(fd).st_mode)
        self._hit("dirfsync" if is_dir else "fsync", self._paths.get(fd, fd))
        return os.fsync(fd)

    def replace(self, src, dst, *a, **kw):  # type: ignore[no-untyped-def]
        self._hit("rename", dst)
        return os.replace(src, dst, *a, **kw)


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def watch_opens(fake: FaultyOs) -> None:
    """Log every open for writing anywhere in the process (`open-write path`), through
    Python's audit hooks: a plain `Path.write_bytes` is seen too, not only what
    `pcp_cli.store.atomic` does."""
    def hook(event: str, args: tuple[object, ...]) -> None:
        if event != "open" or fake._trace is None or not isinstance(args[0], str | bytes):
            return
        mode, flags = args[1], args[2]
        writing = any(c in mode for c in "wax+") if isinstance(mode, str) else \
            isinstance(flags, int) and bool(flags & _WRITE_FLAGS)
        if writing:
            fake._trace.write(f"open-write {os.fsdecode(args[0])}\n")
            fake._trace.flush()

    sys.addaudithook(hook)


def watch_syncs(fake: FaultyOs) -> None:
    """The group commit's syncfs calls, and the catalog's batch commits, as operations."""
    real_syncfs = atomic.syncfs

    def syncfs(fd: int) -> None:
        fake._hit("syncfs", fake._paths.get(fd, fd))
        real_syncfs(fd)

    atomic.syncfs = syncfs  # type: ignore[assignment]
    if os.environ.get("PCP_TEST_NO_SYNCFS"):
        atomic._libc_syncfs = lambda: None  # type: ignore[assignment]
    from pcp_cli.store.catalog import Catalog

    record_writes = Catalog.record_writes

    def recording(self: Catalog, writes: object) -> None:
        writes = list(writes)  # type: ignore[call-overload]
        fake._hit("commit", f"catalog {len(writes)} files")
        record_writes(self, writes)  # type: ignore[arg-type]
        fake._hit("committed", f"catalog {len(writes)} files")

    Catalog.record_writes = recording  # type: ignore[method-assign]


def main() -> None:
    op, n, fault, args = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
    fake = FaultyOs(op, n, fault)
    if fault == "term":
        logging.getLogger("uvicorn.error").addFilter(_gave_up)
    atomic.os = fake  # type: ignore[attr-defined]
    watch_syncs(fake)
    if op == "trace":
        watch_opens(fake)
    if os.environ.get("PCP_TEST_BATCH_PAGES"):
        from pcp_cli.store import writes

        writes.BATCH_PAGES = int(os.environ["PCP_TEST_BATCH_PAGES"])
    code = run(args)
    sys.stderr.write(f"finished after {fake.calls} calls\n")
    sys.stderr.flush()
    sys.stdout.flush()
    if fault == "term":  # exit as pcp does: Python waits for the threads still working
        sys.exit(code)
    os._exit(code)


if __name__ == "__main__":
    main()
