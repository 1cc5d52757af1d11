"""Results kept in `.pcp/` for the next process while what they were made from is unchanged
(`pcp export --format micro_prompt`, `pcp timeline list`): a JSON file holding a key and the
value. The key names the catalog state, the request and the code that made the value; a file
whose key differs is ignored, and a `.pcp/` that cannot be written only means the value is made
again next time.

And in this process (`kept_while`): a value kept per store while the catalog rows it was made
from are unchanged (a profile rendering, the timeline's events)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
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


def kept_while(store: Any, key: tuple[Any, ...], types: tuple[str, ...],
                compute: Any) -> Any:
    """`compute()`, kept per store and `key` while the catalog rows of `types` are unchanged.

    For what depends only on those rows and the immutable revisions they name (a profile
    rendering, the timeline's events): a look-up of the catalog's change sequence when nothing
    was written, one count over the rows of `types` when something was. Not kept while a row
    of `types` is a hand edit waiting to be recorded (reading it reads the revisions folder).
    The caller must not change what is returned (copy it before handing it out).
    """
    from pcp_cli.model.staleness import today

    # today: what is kept may hold a keystone that goes stale overnight, no file changing
    full = (str(store.root), store.catalog.identity(), today(), *key)
    seq = store.catalog.seq()
    with _KEPT_LOCK:
        kept = _KEPT.get(full)
    if kept is not None and kept[0] == seq:
        return kept[2]
    material = store.catalog.type_stamp(types)
    value = kept[2] if kept is not None and kept[1] == material else compute()
    with _KEPT_LOCK:
        if material[2]:
            _KEPT.pop(full, None)
        else:
            _KEPT[full] = (seq, material, value)
            while len(_KEPT) > _KEEP:
                del _KEPT[next(iter(_KEPT))]
    return value


# (store root, catalog identity, *key) -> (catalog seq, type stamp, value): see kept_while.
_KEPT: dict[tuple[Any, ...], tuple[int, tuple[int, int, bool], Any]] = {}
_KEEP = 32
_KEPT_LOCK = threading.Lock()
