"""Hold a store's writer lock until stdin closes: `python hold_lock.py STORE`.

Prints `locked` (flushed) once it holds the lock, so the test knows when to go on.
"""

from __future__ import annotations

import sys
from pathlib import Path

from filelock import FileLock


def main() -> None:
    lock_path = Path(sys.argv[1]) / ".pcp" / "lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock_path), thread_local=False):
        sys.stdout.write("locked\n")
        sys.stdout.flush()
        sys.stdin.read()


if __name__ == "__main__":
    main()
