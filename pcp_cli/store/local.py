"""`.pcp/`, the device's derived state (catalog, search index, lock, audit log), kept in shape.

Everything here is rebuilt from the store's files, so anything that is not what pcp expects (the
catalog a folder, the index a file, `.pcp` itself a file) is moved aside, with a warning, and
built afresh; it is never a reason to fail a command.
"""

from __future__ import annotations

import os
import time
import warnings
from pathlib import Path

from pcp_cli.errors import PcpWarning

# name under .pcp/ -> what it must be when it exists. Not the audit log: it is a record, not
# derived, so an unwritable one fails the MCP call instead (an unaudited answer is never given).
EXPECTED = {"catalog.sqlite": "file", "index": "folder", "lock": "file", "lock.queue": "file"}


def _is(path: Path, kind: str) -> bool:
    if path.is_symlink():
        return False
    return path.is_dir() if kind == "folder" else path.is_file()


def move_aside(path: Path, what: str) -> Path:
    """Rename `path` to `<name>.moved-aside-<time>` beside it and warn; returns the new path."""
    aside = path.with_name(f"{path.name}.moved-aside-{time.strftime('%Y%m%dT%H%M%S')}-"
                           f"{os.getpid()}")
    os.replace(path, aside)
    warnings.warn(PcpWarning(f"{path} was {what}, not what pcp keeps there; moved it aside to "
                             f"{aside.name} and rebuilding it (it is derived: nothing is lost)"),
                  stacklevel=3)
    return aside


def heal(local: Path) -> None:
    """Move aside whatever under `local` (the store's `.pcp/`) is of the wrong kind."""
    if os.path.lexists(local) and not _is(local, "folder"):
        move_aside(local, "not a folder")
        return
    for name, kind in EXPECTED.items():
        path = local / name
        if os.path.lexists(path) and not _is(path, kind):
            move_aside(path, "a folder" if path.is_dir() and not path.is_symlink() else
                       "a file" if path.is_file() and not path.is_symlink() else
                       "a link or a special file")
