"""Run a pcp command and die by SIGKILL just before the Nth call of a store file operation:

    python die_at.py FUNCTION N PCP_ARG...

FUNCTION is one of the file operations the Store uses (`remove_file`, `write_atomic`,
`write_new`), counted across the modules of the Store that call it (`pcp_cli.store.writes`,
`pcp_cli.store.store`, `pcp_cli.store.folder`, `pcp_cli.store.lifecycle`,
`pcp_cli.store.retention`). The patch lives in
this child process only; pcp itself has no test hook. Exits 0 (printing `finished`) if the
command ended before the Nth call.
"""

from __future__ import annotations

import os
import signal
import sys

from pcp_cli.cli.main import run
from pcp_cli.store import folder, lifecycle, retention, store, writes


def main() -> None:
    function, n, args = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    modules = [module for module in (writes, store, folder, lifecycle, retention)
               if hasattr(module, function)]
    real = getattr(modules[0], function)
    calls = 0

    def dying(*a, **kw):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        if calls == n:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*a, **kw)

    for module in modules:
        setattr(module, function, dying)
    code = run(args)
    sys.stdout.write(f"finished with {code} after {calls} calls\n")


if __name__ == "__main__":
    main()
