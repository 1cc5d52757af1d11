"""One writer at a time per store, through a lock on a separate file under `.pcp/`.

Readers never take it: every file is published by an atomic rename, so they always see a whole
file. The lock is advisory (fcntl/msvcrt via filelock) and released by the OS if a writer dies.

Writers take turns. An import holds the lock for a batch at a time and takes it again at once;
a second writer polling for it would almost never find it free, and failed with `store_locked`
after the timeout. So every writer passes a gate first (`lock.queue`, a second lock file),
holding it only while it waits for the lock: a writer that wants the lock back has to pass
the gate, where the one already waiting stands, so it gets its turn after at most one batch.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pcp_cli.errors import StoreLocked

DEFAULT_TIMEOUT = 30.0
# Told True when a writer starts to wait for the lock (another process holds it), False when
# it has it, or has given up: a front end can say it waits (docs/import.md).
Waiting = Callable[[bool], None]


def lock_timeout() -> float:
    try:
        return float(os.environ.get("PCP_LOCK_TIMEOUT", DEFAULT_TIMEOUT))
    except ValueError:
        return DEFAULT_TIMEOUT


@contextmanager
def writer_lock(lock_path: Path, timeout: float | None = None,
                waiting: Waiting | None = None) -> Iterator[None]:
    from filelock import FileLock  # here: read-only commands never need it

    lock_path.parent.mkdir(parents=True, exist_ok=True)
    wait = lock_timeout() if timeout is None else timeout
    deadline = time.monotonic() + wait
    gate = FileLock(str(lock_path) + ".queue", thread_local=False)
    lock = FileLock(str(lock_path), thread_local=False)
    told = []
    try:
        _take(gate, deadline, wait, waiting, told)
        try:
            _take(lock, deadline, wait, waiting, told)
        finally:
            gate.release()
    finally:
        if told and waiting is not None:
            waiting(False)
    try:
        yield
    finally:
        lock.release()


def _take(lock: Any, deadline: float, wait: float, waiting: Waiting | None,
          told: list[bool]) -> None:
    from filelock import Timeout

    try:
        lock.acquire(blocking=False)
        return
    except Timeout:
        pass
    if waiting is not None and not told:
        told.append(True)
        waiting(True)
    try:
        lock.acquire(timeout=max(0.0, deadline - time.monotonic()))
    except Timeout:
        raise StoreLocked(
            f"another pcp process has held the store lock for {wait:g} s",
            hint="wait for it to finish, or raise PCP_LOCK_TIMEOUT",
        ) from None
