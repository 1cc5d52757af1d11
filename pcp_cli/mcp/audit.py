"""The local audit log of MCP access: one JSON line per tool call in `<store>/.pcp/audit.jsonl`.

A record says who (client id, actor category), what (tool and its parameters, never page
content), when, how many results and the ids of the pages it returned (`page_ids`: which pages
an assistant read, never what they say), and the outcome (`allowed | refused | error`). The log is
append-only (O_APPEND, flushed and fsynced per record). If a record cannot be written the call
fails: an unaudited answer is never served.

The log is tamper-evident: a hash chain. Every line carries `hash` (SHA-256 of the line's
other fields and `prev`) and `prev` (the hash of the line before it); a log file opens with a
`log_created` record (its `prev` is the last hash of the file it continues after a rotation, or
null for the first). Deleting, inserting or changing a line breaks the chain exactly there,
which `verify_audit` (`pcp audit --verify`, `pcp doctor`) reports by file and line. When the log
passes `max_bytes` it is rotated to `audit-<time>.jsonl` and the new file continues the chain.

SDK-free, so `pcp audit [--client ID] [--since DATE] [--verify] [--json]` reads it cheaply.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pcp_cli.audit_anchor import read_anchor, write_anchor
from pcp_cli.errors import InvalidInput, PcpError

AUDIT_RELPATH = Path(".pcp") / "audit.jsonl"
ROTATED_GLOB = "audit-*.jsonl"
ANCHOR_NAME = ".pcp/audit-anchor.json"
CREATED = "log_created"  # the `event` of the record that opens every log file
# Rotate past this size (PCP_AUDIT_MAX_BYTES overrides it).
MAX_BYTES = 16 * 1024 * 1024
OUTCOMES = ("allowed", "refused", "error")
# Parameters that carry page content: recorded as their size only.
CONTENT_FIELDS = frozenset({"content", "payload", "text", "body"})
MAX_STRING = 200
MAX_ITEMS = 50
MAX_DEPTH = 3
# Page ids recorded per call (a timeline page returns at most 100, a search 25).
MAX_PAGE_IDS = 200


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


def _page_ids(page_ids: Sequence[str]) -> list[str]:
    """The ids of the pages a call returned, in order, once each, at most MAX_PAGE_IDS (then a
    last item saying how many more)."""
    unique = list(dict.fromkeys(str(i)[:MAX_STRING] for i in page_ids))
    if len(unique) > MAX_PAGE_IDS:
        return unique[:MAX_PAGE_IDS] + [f"… {len(unique) - MAX_PAGE_IDS} more"]
    return unique


def _canonical(record: Mapping[str, Any]) -> bytes:
    return json.dumps({k: v for k, v in record.items() if k != "hash"}, ensure_ascii=False,
                      sort_keys=True, separators=(",", ":")).encode("utf-8")


def record_hash(record: Mapping[str, Any]) -> str:
    """The hash a chained record must carry: SHA-256 of its other fields (`prev` included)."""
    return hashlib.sha256(_canonical(record)).hexdigest()


def chain(record: Mapping[str, Any], prev: str | None) -> dict[str, Any]:
    """`record` linked after the line whose hash is `prev`."""
    linked = {**{k: v for k, v in record.items() if k not in ("hash", "prev")}, "prev": prev}
    linked["hash"] = record_hash(linked)
    return linked


def line_hash(raw: bytes) -> str:
    """What the next record names as `prev` after this line: its `hash`, or, for a line that
    is not a chained record (torn, garbled, from before the chain), a hash of its bytes."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        data = None
    if isinstance(data, dict) and isinstance(data.get("hash"), str):
        return str(data["hash"])
    return "raw:" + hashlib.sha256(raw).hexdigest()


def _last_line(read: Any, size: int) -> tuple[bytes, bool]:
    """The file's last line (without its newline) and whether it ended with one, reading
    backwards from the end in growing steps (a record is usually well under 4 KiB)."""
    step = 4096
    while True:
        start = max(0, size - step)
        tail = read(size - start, start)
        body = tail[:-1] if tail.endswith(b"\n") else tail
        cut = body.rfind(b"\n")
        if cut != -1 or start == 0:
            return body[cut + 1:], tail.endswith(b"\n")
        step *= 4


def _line(record: Mapping[str, Any]) -> bytes:
    return (json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


def log_files(store_root: Path | str) -> list[Path]:
    """Every file of the log, oldest first: the rotated ones, then the current one."""
    path = audit_path(store_root)
    files = sorted(path.parent.glob(ROTATED_GLOB)) if path.parent.is_dir() else []
    return files + ([path] if path.exists() else [])


class AuditLog:
    """Appends call records for one server session."""

    def __init__(self, store_root: Path | str, *, session_id: str | None = None) -> None:
        self.root = Path(store_root)
        self.path = audit_path(store_root)
        self.session_id = session_id or f"ses_{secrets.token_hex(6)}"
        self.max_bytes = int(os.environ.get("PCP_AUDIT_MAX_BYTES") or MAX_BYTES)

    def _open_fd(self) -> int:
        return os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)

    def rotated(self) -> list[Path]:
        """The rotated files of this log, oldest first."""
        return sorted(self.path.parent.glob(ROTATED_GLOB))

    def last_rotated_hash(self) -> str | None:
        """The chain's last hash in the newest rotated file (where a new file continues)."""
        rotated = self.rotated()
        if not rotated:
            return None
        fd = os.open(rotated[-1], os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            last, _ = _last_line(lambda n, at: os.pread(fd, n, at), size)
        finally:
            os.close(fd)
        return line_hash(last) if last else None

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
            fd = self._open_fd()
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
        page_ids: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {OUTCOMES}, not {outcome!r}")
        extra = {} if page_ids is None else {"page_ids": _page_ids(page_ids)}
        return {
            **extra,
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
        if self._fd is None:
            raise RuntimeError("audit sink already closed")
        try:
            with self._locked():
                record = self._append(record)
        except OSError as exc:
            raise self._log._failed(exc) from exc
        return record

    @contextlib.contextmanager
    def _locked(self) -> Any:
        """Hold the log's lock on the file the path names now (another server may have
        rotated the one this sink opened)."""
        import fcntl

        self._acquire()
        try:
            yield
        finally:
            if self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _acquire(self) -> None:
        """Lock the open file, and make sure it is still the one the path names: between
        opening and locking, another server may have rotated it away (then reopen and retry)."""
        import fcntl

        while True:
            assert self._fd is not None
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                current = os.stat(self._log.path).st_ino
            except FileNotFoundError:
                current = None
            if current == os.fstat(self._fd).st_ino:
                return
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
            self._fd = self._log._open_fd()

    def _append(self, record: dict[str, Any]) -> dict[str, Any]:
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        if size and size >= self._log.max_bytes:
            self._rotate()
            size = os.fstat(self._fd).st_size  # another server may have begun the new file
        head = b""
        if size == 0:
            rotated = self._log.rotated()
            created = chain({"event": CREATED, "log_id": f"log_{secrets.token_hex(8)}",
                             "time": now_iso(),
                             "continues": rotated[-1].name if rotated else None},
                            self._log.last_rotated_hash())
            head = _line(created)
            prev = created["hash"]
        else:
            last, whole = _last_line(lambda n, at: os.pread(self._fd, n, at), size)
            prev = line_hash(last)
            if not whole:  # a torn last line must not swallow this record
                head = b"\n"
        record = chain(record, prev)
        data = head + _line(record)
        # One write() of the whole line: with O_APPEND and the lock, never interleaved.
        written = os.write(self._fd, data)
        if written != len(data):
            raise OSError(0, "short write to the audit log")
        os.fsync(self._fd)
        write_anchor(self._log.root, record)
        return record

    def _rotate(self) -> None:
        """Rename the full log aside (under its lock) and continue in a new file."""
        assert self._fd is not None
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        target = self._log.path.with_name(f"audit-{stamp}.jsonl")
        os.replace(self._log.path, target)
        with contextlib.suppress(OSError):
            fd = os.open(self._log.path.parent, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        import fcntl

        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = self._log._open_fd()
        # Another server may lock the new file first, fill it and rotate it too before this one
        # gets the lock: appending to that rotated file would break the chain after it.
        self._acquire()

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
    raw = b""
    for path in log_files(store_root):
        try:
            raw += path.read_bytes().rstrip(b"\n") + b"\n"
        except FileNotFoundError:  # rotated meanwhile: its records are in the next file
            continue
    records: list[dict[str, Any]] = []
    for line in raw.split(b"\n"):
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue
        if not isinstance(record, dict) or record.get("event") == CREATED:
            continue
        if client is not None and record.get("client_id") != client:
            continue
        if threshold is not None:
            when = _record_time(record)
            if when is None or when < threshold:
                continue
        records.append(record)
    return records


def _lines_backwards(path: Path, chunk: int = 1 << 20) -> Iterator[bytes]:
    """The file's lines, last first, read in chunks from its end (the rest never read)."""
    with path.open("rb") as file:
        end = file.seek(0, os.SEEK_END)
        rest = b""
        while end > 0:
            start = max(0, end - chunk)
            file.seek(start)
            lines = (file.read(end - start) + rest).split(b"\n")
            end = start
            rest = lines.pop(0) if start > 0 else b""  # maybe a part: joined to the next chunk
            yield from reversed(lines)


def read_audit_newest(store_root: Path | str, *, client: str | None = None,
                      limit: int | None = None, max_bytes: int | None = None
                      ) -> tuple[list[dict[str, Any]], bool]:
    """Records newest first (optionally of one client), at most `limit` of them, reading the
    log backwards from its end and no more than about `max_bytes` of it: `(records, whole)`,
    `whole` being true when nothing older was left unread. What the console's Assistants
    pages show, at a cost that does not grow with the log (it is never pruned).

    A line that cannot be one of `client`'s records (its id's text is not in it) is not
    parsed; torn and garbled lines are skipped as `read_audit` skips them."""
    needle = None
    if client is not None and json.dumps(client, ensure_ascii=False)[1:-1] == client:
        needle = client.encode("utf-8")  # written as is: a record of it contains these bytes
    records: list[dict[str, Any]] = []
    read = 0
    for path in reversed(log_files(store_root)):
        try:
            lines = _lines_backwards(path)
            for line in lines:
                read += len(line) + 1
                if max_bytes is not None and read > max_bytes:
                    return records, False
                if not line.strip() or (needle is not None and needle not in line):
                    continue
                try:
                    record = json.loads(line.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError):
                    continue
                if not isinstance(record, dict) or record.get("event") == CREATED or \
                        (client is not None and record.get("client_id") != client):
                    continue
                if limit is not None and len(records) >= limit:
                    return records, False
                records.append(record)
        except FileNotFoundError:  # rotated meanwhile: its records are in the next file
            continue
    return records, True


def verify_audit(store_root: Path | str) -> dict[str, Any]:
    """Check the log's hash chain across its files. `{valid, files, records, unchained,
    problems: [{file, line, problem}]}`; a problem says where the log was cut or changed.

    Lines from before the chain existed (an older pcp) are counted as `unchained`, not
    problems, as long as they all come before the chain starts.
    """
    files = log_files(store_root)
    problems: list[dict[str, Any]] = []
    expected: str | None = None  # the hash the next record must name as its `prev`
    started = False
    records = unchained = 0
    seen: set[str] = set()

    def problem(path: Path, line: int, text: str) -> None:
        problems.append({"file": path.name, "line": line, "problem": text})

    for index, path in enumerate(files):
        try:
            raw = path.read_bytes()
        except OSError as exc:
            problem(path, 0, f"cannot read: {exc.strerror or exc}")
            continue
        lines = raw.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        for number, line in enumerate(lines, start=1):
            try:
                data = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                data = None
            if not isinstance(data, dict):
                problem(path, number, "not a whole record (torn by a crash, or garbled)")
                expected = line_hash(line)
                continue
            stated = data.get("hash")
            if not isinstance(stated, str):
                if started:
                    problem(path, number, "a record without a hash inside the chain "
                            "(inserted or rewritten by hand)")
                else:
                    unchained += 1
                expected = line_hash(line)
                continue
            if record_hash(data) != stated:
                problem(path, number, "changed: its hash does not match its content")
            prev = data.get("prev")
            if data.get("event") == CREATED:
                if not started and index == 0 and number == 1 and prev is not None:
                    problem(path, number, "the log continues a file that is missing "
                            f"(the chain names an earlier log, {data.get('continues')})")
                elif (started or unchained) and prev != expected:
                    problem(path, number, "the chain is broken before this line: records "
                            "were removed, or an earlier file is missing or changed")
            else:
                records += 1
                if not started and not unchained:
                    problem(path, number, "the log's beginning is missing (the first "
                            "record is not its creation record)")
                elif prev != expected:
                    problem(path, number, "the chain is broken before this line: the "
                            "record(s) before it were removed or changed")
            started = True
            expected = stated
            seen.add(stated)
    anchor = read_anchor(store_root)
    if anchor is not None and anchor["hash"] not in seen:
        newest = f"its newest record ({anchor.get('time') or 'time unknown'}, hash " \
                 f"{anchor['hash'][:16]}…, kept in {ANCHOR_NAME})"
        if not files:
            problem(Path(AUDIT_RELPATH.name), 0, f"the log was deleted: {newest} is gone")
        elif not seen:
            problem(files[-1], 0, f"the log was emptied: {newest} is gone")
        else:
            problem(files[-1], 0, f"the log was cut short: it ends before {newest}; the last "
                    "record(s) were removed")
    return {"valid": not problems, "files": [p.name for p in files], "records": records,
            "unchained": unchained, "problems": problems}
