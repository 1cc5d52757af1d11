"""The local audit log of MCP access: one JSON line per tool call in `<store>/.pcp/audit.jsonl`.

A record says who (client id, actor category), what (tool and its parameters, never page
content), when, how many results, and the outcome (`allowed | refused | error`). The log is
append-only (O_APPEND, flushed and fsynced per record). If a record cannot be written the call
fails: an unaudited answer is never served.

SDK-free, so a future `pcp audit [--client ID] [--since DATE] [--json]` can read it cheaply.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pcp_cli.errors import InvalidInput, PcpError

AUDIT_RELPATH = Path(".pcp") / "audit.jsonl"
OUTCOMES = ("allowed", "refused", "error")
# Parameters that carry page content: recorded as their size only.
CONTENT_FIELDS = frozenset({"content", "payload", "text", "body"})
MAX_STRING = 200
MAX_ITEMS = 50
MAX_DEPTH = 3


class AuditUnavailable(PcpError):
    """The audit record could not be written, so the call is refused."""

    code = "audit_unavailable"


def audit_path(store_root: Path | str) -> Path:
    return Path(store_root) / AUDIT_RELPATH


def now_iso() -> str:
    """UTC, ISO 8601 with milliseconds; `PCP_NOW` pins it (tests, replays)."""
    pinned = os.environ.get("PCP_NOW")
    if pinned:
        return pinned
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _trim(value: Any, depth: int = 0) -> Any:
    if isinstance(value, str):
        return value if len(value) <= MAX_STRING else value[:MAX_STRING] + "…"
    if value is None or isinstance(value, bool | int | float):
        return value
    if depth >= MAX_DEPTH:
        return "…"
    if isinstance(value, Mapping):
        items = list(value.items())[:MAX_ITEMS]
        return {str(k)[:MAX_STRING]: _redact(str(k), v, depth + 1) for k, v in items}
    if isinstance(value, list | tuple):
        trimmed = [_trim(v, depth + 1) for v in value[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            trimmed.append(f"… {len(value) - MAX_ITEMS} more")
        return trimmed
    return _trim(repr(value), depth)


def _redact(key: str, value: Any, depth: int) -> Any:
    if key in CONTENT_FIELDS:
        size = len(value) if isinstance(value, str) else None
        return {"omitted": True, "chars": size}
    return _trim(value, depth)


def sanitize_params(params: Mapping[str, Any] | Any) -> Any:
    """Parameters fit for the log: content reduced to its size, strings and lists capped."""
    if not isinstance(params, Mapping):
        return _trim(params)
    return {str(k)[:MAX_STRING]: _redact(str(k), v, 1) for k, v in list(params.items())[:MAX_ITEMS]}


class AuditLog:
    """Appends call records for one server session."""

    def __init__(self, store_root: Path | str, *, session_id: str | None = None) -> None:
        self.path = audit_path(store_root)
        self.session_id = session_id or f"ses_{secrets.token_hex(6)}"

    def _failed(self, exc: OSError) -> AuditUnavailable:
        return AuditUnavailable(
            f"the audit log {self.path} cannot be written ({exc.strerror or exc}); "
            "the call was refused because unaudited access is not allowed",
            hint=f"check that {self.path} is a writable file and the disk is not full",
        )

    def open(self) -> AuditSink:
        """Open the log for one record before the work is done, so a broken log stops the call
        before it touches anything. Raises AuditUnavailable."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            raise self._failed(exc) from exc
        return AuditSink(self, fd)

    def record(self, **fields: Any) -> dict[str, Any]:
        """Open, write one record and close. Raises AuditUnavailable."""
        with self.open() as sink:
            return sink.write(**fields)

    def make_record(
        self,
        *,
        client_id: str | None,
        actor: str,
        tool: str,
        params: Mapping[str, Any] | Any,
        outcome: str,
        result_count: int | None = None,
        error_code: str | None = None,
    ) -> dict[str, Any]:
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {OUTCOMES}, not {outcome!r}")
        return {
            "time": now_iso(),
            "session_id": self.session_id,
            "client_id": client_id,
            "actor": actor,
            "tool": _trim(tool),
            "params": sanitize_params(params),
            "result_count": result_count,
            "outcome": outcome,
            "error_code": error_code,
        }


class AuditSink:
    """One opened record slot: `write(...)` once, then close (a context manager)."""

    def __init__(self, log: AuditLog, fd: int) -> None:
        self._log = log
        self._fd: int | None = fd

    def write(self, **fields: Any) -> dict[str, Any]:
        record = self._log.make_record(**fields)
        line = (json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
        if self._fd is None:
            raise RuntimeError("audit sink already closed")
        try:
            # A torn last line (a crash mid-append) must not swallow this record.
            size = os.fstat(self._fd).st_size
            if size and os.pread(self._fd, 1, size - 1) != b"\n":
                line = b"\n" + line
            # One write() of the whole line: with O_APPEND, concurrent servers never interleave.
            written = os.write(self._fd, line)
            if written != len(line):
                raise OSError(0, "short write to the audit log")
            os.fsync(self._fd)
        except OSError as exc:
            raise self._log._failed(exc) from exc
        return record

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> AuditSink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _parse_since(since: str | datetime | None) -> datetime | None:
    if since is None or isinstance(since, datetime):
        return since if since is None or since.tzinfo else since.replace(tzinfo=UTC)
    text = since.strip().replace("Z", "+00:00")
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError as exc:
        raise InvalidInput(
            f"--since {since!r} is not a date", hint="use YYYY-MM-DD or an ISO 8601 time"
        ) from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _record_time(record: Mapping[str, Any]) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(str(record.get("time", "")).replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def read_audit(
    store_root: Path | str, client: str | None = None, since: str | datetime | None = None
) -> list[dict[str, Any]]:
    """Records in file order, optionally for one client and from a date on.

    Tolerates a torn or garbled line (a crash mid-append, a hand edit): it is skipped, never an
    error. A missing log is an empty list.
    """
    threshold = _parse_since(since)
    path = audit_path(store_root)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    records: list[dict[str, Any]] = []
    for line in raw.split(b"\n"):
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue
        if not isinstance(record, dict):
            continue
        if client is not None and record.get("client_id") != client:
            continue
        if threshold is not None:
            when = _record_time(record)
            if when is None or when < threshold:
                continue
        records.append(record)
    return records
