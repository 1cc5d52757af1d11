"""Results kept in `.pcp/` for the next process while what they were made from is unchanged
(`pcp export --format micro_prompt`, `pcp timeline list`): a JSON file holding a key and the
value. The key names the catalog state, the request and the code that made the value; a file
whose key differs is ignored, and a `.pcp/` that cannot be written only means the value is made
again next time."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def code_stamps(modules: Iterable[str], *paths: str | os.PathLike[str]) -> list[str] | None:
    """The mtime and size of each named (imported) module's file and of each path, or None when
    one cannot be found (then nothing is kept)."""
    stamps = []
    try:
        files = [sys.modules[name].__file__ for name in modules]
    except KeyError:
        return None
    for path in (*files, *paths):
        try:
            st = os.stat(path)  # type: ignore[arg-type]
        except (OSError, TypeError):
            return None
        stamps.append(f"{st.st_mtime_ns}/{st.st_size}")
    return stamps


def read(path: Path, key: Any) -> Any | None:
    """The value kept at `path` under `key`, or None (no file, another key, unreadable)."""
    try:
        kept = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if isinstance(kept, dict) and kept.get("key") == key:
        return kept.get("value")
    return None


def keep(path: Path, key: Any, value: Any) -> None:
    """Keep `value` under `key` at `path`, replacing the file whole."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps({"key": key, "value": value}, ensure_ascii=False),
                       encoding="utf-8")
        os.replace(tmp, path)
    except OSError:  # a read-only .pcp/: made again next time
        with contextlib.suppress(OSError):
            tmp.unlink()
