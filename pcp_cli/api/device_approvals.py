"""Which stdio sources of the device registry the person has approved to run.

A stdio entry of `~/.pcp/sources.json` is a command line: asking that source a question
(`pcp search --sources`) starts it. The registry is shared with every app that registers itself
in it, so an entry is only a request to be run; pcp starts a stdio source only once the person
approved it, by its command, arguments and environment (`pcp sources approve ID`, or `pcp
register` for the entry it writes itself). A changed command, argument or environment value is a
new request: it is not run until approved again.

Approvals are kept in `~/.pcp/approved-sources.json` (mode 0600), never in the registry itself
(where any app that writes an entry could also write "approved") and never beside a registry the
person names elsewhere. Each approval holds the entry's id, a SHA-256 fingerprint of what it
runs, and, for reading, the command and arguments (the environment's names only: its values may
be tokens).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from pcp_cli.errors import InvalidInput

FILE_NAME = "approved-sources.json"
VERSION = 1


def approvals_path() -> Path:
    """`~/.pcp/approved-sources.json`: the person's own, whichever registry is read."""
    return Path.home() / ".pcp" / FILE_NAME


def launch_of(entry: dict[str, Any]) -> dict[str, Any]:
    """What a stdio entry runs: its command, arguments and environment, as the fan-out would."""
    return {"command": str(entry.get("command") or ""),
            "args": [str(a) for a in entry.get("args") or []],
            "env": {str(k): str(v) for k, v in (entry.get("env") or {}).items()}}


def fingerprint(entry: dict[str, Any]) -> str:
    raw = json.dumps(launch_of(entry), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def read() -> dict[str, dict[str, Any]]:
    """id -> approval (empty when nothing was approved). A damaged file approves nothing."""
    path = approvals_path()
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"cannot be read ({exc.__class__.__name__})", path=str(path),
                           hint="move it away: every stdio source then needs approving "
                           "again (`pcp sources approve ID`)") from None
    approved = data.get("approved") if isinstance(data, dict) else None
    return {k: v for k, v in approved.items() if isinstance(v, dict)} \
        if isinstance(approved, dict) else {}


def status(entry: dict[str, Any], approvals: dict[str, dict[str, Any]]) -> str:
    """`approved`, `changed` (approved once, runs something else now) or `not_approved`."""
    found = approvals.get(str(entry.get("id")))
    if found is None:
        return "not_approved"
    return "approved" if found.get("fingerprint") == fingerprint(entry) else "changed"


def approve(entry: dict[str, Any]) -> dict[str, Any]:
    """Record that the person approved what `entry` runs now; returns the approval."""
    from filelock import FileLock

    from pcp_cli.store.atomic import write_atomic

    path = approvals_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    launch = launch_of(entry)
    approval = {"fingerprint": fingerprint(entry), "command": launch["command"],
                "args": launch["args"], "env": sorted(launch["env"]),
                "approved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    with FileLock(str(path.with_name(f".{FILE_NAME}.lock")), thread_local=False):
        approvals = read()
        approvals[str(entry["id"])] = approval
        write_atomic(path, json.dumps({"version": VERSION, "approved": approvals},
                                      indent=2, sort_keys=True, ensure_ascii=False) + "\n")
        with contextlib.suppress(OSError):
            os.chmod(path, 0o600)
    return {"id": entry["id"], **approval}
