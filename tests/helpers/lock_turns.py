"""Writers that want the store lock back at once, as an import does between its batches.

    python lock_turns.py churn STORE    take pcp's writer lock for half a second, let it go
                                        and take it again at once, over and over, until stdin
                                        closes; prints `held` (flushed) once it first holds it
    python lock_turns.py pause PCP_ARG...
                                        run a pcp command in which an import lets the lock go
                                        after every page; after the first time, print
                                        `released` (flushed) and wait for a line on stdin

The patch lives in this child process only; pcp itself has no test hook.
"""

from __future__ import annotations

import sys
from pathlib import Path


def churn(store: Path) -> None:
    import select

    from pcp_cli.store.lock import writer_lock

    said = False
    while True:
        with writer_lock(store / ".pcp" / "lock", timeout=600):
            if not said:
                sys.stdout.write("held\n")
                sys.stdout.flush()
                said = True
            # a batch's work under the lock; then the lock is let go and taken again at once
            ready, _, _ = select.select([sys.stdin], [], [], 0.5)
            if ready and not sys.stdin.read(1):
                return  # stdin closed: the test is done


def pause(args: list[str]) -> int:
    from pcp_cli.adapters import writer
    from pcp_cli.cli.main import run

    writer.LOCK_BATCH_SECONDS = 0.0  # the lock is let go after every page
    real = writer._Batches.release
    paused = False

    def release(self: writer._Batches) -> None:
        nonlocal paused
        held = self._since is not None
        real(self)
        if held and not paused:
            paused = True
            sys.stdout.write("released\n")
            sys.stdout.flush()
            sys.stdin.readline()

    writer._Batches.release = release  # type: ignore[method-assign]
    return run(args)


if __name__ == "__main__":
    if sys.argv[1] == "churn":
        churn(Path(sys.argv[2]))
    else:
        sys.exit(pause(sys.argv[2:]))
