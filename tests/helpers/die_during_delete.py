"""Delete a page and die by SIGKILL just before the Nth file removal:

    python die_during_delete.py STORE PAGE_ID N

The test patches this child process only (no hook in pcp itself): the store module's
`remove_file` is wrapped to kill the process when it is called for the Nth time.
"""

from __future__ import annotations

import os
import signal
import sys

from pcp_cli import api
from pcp_cli.store import store as store_module


def main() -> None:
    root, page_id, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    real = store_module.remove_file
    calls = 0

    def remove_file(path):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        if calls == n:
            os.kill(os.getpid(), signal.SIGKILL)
        real(path)

    store_module.remove_file = remove_file
    with api.open_store(root) as store:
        store.delete(page_id)
    sys.stdout.write(f"done after {calls} removals\n")


if __name__ == "__main__":
    main()
