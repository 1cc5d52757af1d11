"""The folders this device imported from (`.pcp/imported-sources.json`): what `pcp watch`
watches when it is given no folder. (Not `.pcp/sources.json`: that name is the PCP device
registry's, `~/.pcp/sources.json`; a `./.pcp/sources.json` is never read as one.)

Per device and derived, like everything under `.pcp/`: a path means something on this
machine only. A folder is recorded by its first successful import and keeps its format;
losing the file loses only the default of `pcp watch`.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from pcp_cli.store.atomic import write_atomic

FILE = "imported-sources.json"


def recorded(local: Path) -> dict[str, dict[str, Any]]:
    """Folder path -> {"format", "last_import"[, "vault"]} (empty when nothing was recorded)."""
    try:
        data = json.loads((local / FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) \
        else {}


def record(local: Path, path: str | os.PathLike[str], fmt: str, *,
           vault: str | None = None) -> None:
    """Note that the folder `path` was imported as `fmt` (a file is not a watchable source),
    and a Markdown folder's vault name (the name its next import and `pcp watch` use)."""
    folder = Path(path).expanduser().resolve()
    if not folder.is_dir():
        return
    data = recorded(local)
    entry: dict[str, Any] = {"format": fmt, "last_import": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                         time.gmtime())}
    if vault is not None:
        entry["vault"] = vault
    data[str(folder)] = entry
    local.mkdir(parents=True, exist_ok=True)
    write_atomic(local / FILE, json.dumps(data, indent=1, sort_keys=True) + "\n")
