"""One writer at a time per store, through a lock on a separate file under `.pcp/`.

Readers never take it: every file is published by an atomic rename, so they always see a whole
file. The lock is advisory (fcntl/msvcrt via filelock) and released by the OS if a writer dies.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pcp_cli.errors import StoreLocked

DEFAULT_TIMEOUT = 30.0


def lock_timeout() -> float:
    try:
        return float(os.environ.get("PCP_LOCK_TIMEOUT", DEFAULT_TIMEOUT))
    except ValueError:
        return DEFAULT_TIMEOUT


@contextmanager
def writer_lock(lock_path: Path, timeout: float | None = None) -> Iterator[None]:
    from filelock import FileLock, Timeout  # here: read-only commands never need it

    lock_path.parent.mkdir(parents=True, exist_ok=True)
    wait = lock_timeout() if timeout is None else timeout
    lock = FileLock(str(lock_path), timeout=wait, thread_local=False)
    try:
        lock.acquire()
    except Timeout:
        raise StoreLocked(
            f"another pcp process has held the store lock for {wait:g} s",
            hint="wait for it to finish, or raise PCP_LOCK_TIMEOUT",
        ) from None
    try:
        yield
    finally:
        lock.release()
