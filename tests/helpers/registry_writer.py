"""`pcp register` with a window onto the device registry's lock, for the lock's own test
(tests/test_registry_file.py): `python registry_writer.py pause|watch STORE`.

- `pause`: once it has read the registry (under the lock), prints `inside` and waits for a line
  on stdin before it goes on to write.
- `watch`: prints `waiting` the first time it finds the registry's lock held by another process
  (filelock's own debug record of a failed try), then waits for the lock as usual.

Each then registers STORE and exits with pcp's exit status.
"""

from __future__ import annotations

import logging
import sys

from pcp_cli.api import devices as registry
from pcp_cli.cli.main import run


class _SayWaiting(logging.Handler):
    said = False

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if not self.said and "not acquired" in message and ".sources.json.lock" in message:
            self.said = True
            sys.stdout.write("waiting\n")
            sys.stdout.flush()


def main() -> int:
    mode, store = sys.argv[1], sys.argv[2]
    if mode == "pause":
        read = registry.read_file

        def read_then_wait(path):  # type: ignore[no-untyped-def]
            data = read(path)
            sys.stdout.write("inside\n")
            sys.stdout.flush()
            sys.stdin.readline()
            return data

        registry.read_file = read_then_wait  # type: ignore[assignment]
    else:
        watcher = logging.getLogger("filelock")
        watcher.setLevel(logging.DEBUG)
        watcher.addHandler(_SayWaiting())
    return run(["register", "--store", store])


if __name__ == "__main__":
    sys.exit(main())
