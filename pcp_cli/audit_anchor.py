"""The audit chain's anchor: the newest hash of the MCP audit log, kept outside the log.

A hash chain shows a record removed or changed in the middle, but not the last records cut
off, nor the log emptied or deleted: what is left is still a valid chain. So every append also
writes the newest hash to `.pcp/audit-anchor.json` (beside the store's other local state), and
`pcp sync` names it in each commit message, where a cut of the local files cannot reach it.
`pcp audit --verify` reports a log whose chain does not reach the anchor as truncated.

Stdlib only: the MCP server's audit writer, `pcp audit` and `pcp sync` share it.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

ANCHOR_RELPATH = Path(".pcp") / "audit-anchor.json"


def anchor_path(store_root: Path | str) -> Path:
    return Path(store_root) / ANCHOR_RELPATH


def write_anchor(store_root: Path | str, record: dict[str, Any]) -> None:
    """Keep `record`'s hash (and its time) as the chain's newest. Called under the log's lock,
    after the record is fsynced: the anchor may lag the log after a crash, never lead it."""
    path = anchor_path(store_root)
    data = json.dumps({"hash": record["hash"], "time": record.get("time")},
                      separators=(",", ":")).encode("utf-8") + b"\n"
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temp, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise


def read_anchor(store_root: Path | str) -> dict[str, Any] | None:
    """The anchor, or None when there is none (no MCP call was ever audited here)."""
    try:
        data = json.loads(anchor_path(store_root).read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("hash"), str) else None
