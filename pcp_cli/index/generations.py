"""The generation handling both engines can share: an index folder holds `meta.json` (format
version, current generation, built flag, doc count, the size of every file of the generation,
the caller's key/values), a WRITELOCK, and `g-<hex>/` folders, one per build; a rebuild writes a
new generation beside the old one and switches meta.json atomically.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Any

META = "meta.json"
LOCK = "WRITELOCK"


def atomic_write(path: Path, data: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def check_files(directory: Path, meta: dict[str, Any]) -> str | None:
    """Why the generation `meta` names cannot be trusted (a file missing or of another size
    than was written), or None."""
    gen = directory / str(meta.get("generation"))
    files = meta.get("files")
    if not isinstance(files, dict) or not gen.is_dir():
        return "its files are missing"
    for name, size in files.items():
        try:
            actual = (gen / name).stat().st_size
        except OSError:
            return f"its file {name} is missing"
        if actual != size:
            return f"its file {name} has {actual} bytes where {size} were written"
    return None


def file_sizes(directory: Path, generation: str) -> dict[str, int]:
    """name -> size of every file of a generation, for meta.json: locks (an engine's own
    come and go with its writers) and dot files left out."""
    gen = directory / generation
    return {
        p.name: p.stat().st_size
        for p in gen.iterdir()
        if p.is_file() and not p.name.endswith(".lock") and p.name != LOCK
        and not p.name.startswith(".")
    }


def remove_other_generations(directory: Path, keep: str) -> None:
    """Remove everything in the index folder but meta.json, the lock, dot files and `keep`."""
    for p in directory.iterdir():
        if p.name in (META, LOCK, keep) or p.name.startswith("."):
            continue
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                p.unlink()
