"""IngestEvent input: one raw event, checked and put in the one shape the store keeps.

The published schema (`schemas/ingest_event.schema.json`, generated from the vocabularies) is
what a `pcp ingest` line and the `event` argument of `pcp_ingest_event` must satisfy; nothing
here re-states it. What is added on top is normalization:

- a field the schema does not name is kept, namespaced, under `extensions` (`model` becomes
  `ingest:model`; a key that is already namespaced, such as `com.example.mood`, stays as it is);
- `timestamp` is parsed as ISO 8601 and becomes `occurred_at` in UTC (the original string stays
  in the event's data);
- `idempotency_key`, when absent, is derived from the content, so the same event sent twice is
  stored once; the hash of the data is what tells a repeat from a conflicting re-use of a key.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

from pcp_cli.errors import InvalidInput
from pcp_cli.model import jsonlimit, vocab
from pcp_cli.model.page import canonical_json

SCHEMA = "ingest_event"
# The prefix a bare unknown field gets when it is kept (`model` -> `ingest:model`).
UNKNOWN_PREFIX = "ingest"
_EXT_KEY = re.compile(vocab.EXTENSION_KEY_PATTERN)
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class EventInput:
    """One checked event, ready to store. `data` is what the event file keeps as `data`."""

    type: str
    data: dict[str, Any]
    idempotency_key: str
    key_given: bool
    content_hash: str
    occurred_at: str | None
    # Where it came from, for messages and for the event's source_refs ("file.jsonl:12").
    where: str | None = None
    source_ref: str | None = None

    @property
    def conversation_id(self) -> str | None:
        value = self.data.get("conversation_id")
        return value if isinstance(value, str) else None

    @property
    def namespace(self) -> str | None:
        value = self.data.get("namespace")
        return value if isinstance(value, str) else None


def ingest_schema() -> dict[str, Any]:
    """The published input schema (also the `event` parameter's schema over MCP)."""
    from pcp_cli.model.validate import schema

    return schema(SCHEMA)


@cache
def known_fields() -> frozenset[str]:
    return frozenset(ingest_schema()["properties"])


def normalize_event(
    obj: Any,
    *,
    path: str | None = None,
    line: int | None = None,
    unknown_prefix: str = UNKNOWN_PREFIX,
    source_ref: str | None = None,
    checked: bool = False,
) -> EventInput:
    """Check `obj` against the schema and normalize it; InvalidInput names `path`:`line`.

    `checked` skips the schema check for objects pcp built itself from a parsed source (the
    session-log importers, whose output the tests hold to the same schema): jsonschema costs
    most of a millisecond an event, and a session archive holds hundreds of thousands.
    """
    if not isinstance(obj, dict):
        raise InvalidInput(f"an event must be a JSON object, not {_json_type(obj)}",
                           path=path, line=line, hint=_HINT)
    if not checked:
        _check_schema(obj, path, line)
    known = known_fields()
    data: dict[str, Any] = {}
    extensions: dict[str, Any] = dict(obj.get("extensions") or {})
    for key, value in obj.items():
        if key in known:
            if key not in ("idempotency_key", "extensions"):
                data[key] = value
            continue
        kept = key if _EXT_KEY.match(key) else f"{unknown_prefix}:{key}"
        if kept in extensions:
            raise InvalidInput(f"field {key!r} is given twice (also as extensions[{kept!r}])",
                               path=path, line=line, hint="keep only one of them")
        extensions[kept] = value
    if extensions:
        data["extensions"] = extensions
    occurred_at = None
    if "timestamp" in obj:
        occurred_at = parse_timestamp(obj["timestamp"])
        if occurred_at is None:
            raise InvalidInput(f"timestamp {str(obj['timestamp'])[:64]!r} is not ISO 8601",
                               path=path, line=line,
                               hint='write it like "2026-05-14T09:30:00Z" (a time zone is '
                               "best; without one UTC is assumed)")
    content_hash = "sha256:" + hashlib.sha256(canonical_json(data).encode("utf-8")).hexdigest()
    given = obj.get("idempotency_key")
    where = path if path is None or line is None else f"{path}:{line}"
    return EventInput(
        type=obj["type"],
        data=data,
        idempotency_key=given if isinstance(given, str) else f"derived:{content_hash}",
        key_given=isinstance(given, str),
        content_hash=content_hash,
        occurred_at=occurred_at,
        where=where,
        source_ref=source_ref,
    )


def parse_lines(text: str, path: str) -> Iterator[EventInput]:
    """The events of a JSON Lines text, one per non-blank line; the first bad line raises
    InvalidInput naming `path` and its line number (so a caller can refuse the whole input)."""
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            obj = jsonlimit.loads(raw, path, number)
        except ValueError as exc:
            message = getattr(exc, "msg", str(exc))
            column = getattr(exc, "colno", None)
            where = f" at column {column}" if column else ""
            raise InvalidInput(f"not valid JSON ({message}{where})", path=path, line=number,
                               hint=_HINT) from None
        # The event keeps where it came from by file name only (no machine path in the store).
        ref = f"{path.replace(chr(92), '/').rsplit('/', 1)[-1]}:{number}"
        yield normalize_event(obj, path=path, line=number, source_ref=ref)


def parse_timestamp(value: Any) -> str | None:
    """ISO 8601 (a date, or a date and time with or without a zone) as UTC
    `YYYY-MM-DDTHH:MM:SS.mmmZ`; None when it is not one."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if _DATE_ONLY.match(text):
        text += "T00:00:00"
    try:
        moment = datetime.fromisoformat(text.replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        moment = moment.astimezone(UTC)
    except (OverflowError, ValueError):
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


_HINT = ('one JSON object per line, e.g. {"type": "message", "conversation_id": "c1", '
         '"role": "user", "content": "…", "timestamp": "2026-05-14T09:30:00Z"}; see '
         "store_layout/README.md (Events)")


def _check_schema(obj: dict[str, Any], path: str | None, line: int | None) -> None:
    from pcp_cli.model.validate import validator  # jsonschema lives there

    errors = sorted(validator(SCHEMA).iter_errors(obj), key=lambda e: list(e.absolute_path))
    error = errors[0] if errors else None
    if error is None:
        return
    where = "/".join(str(part) for part in error.absolute_path)
    message = error.message
    if "propertyNames" in error.schema_path:
        message = f"field name {error.instance!r} cannot be kept (letters, digits, '_', '-', " \
                  "namespaced with '.' or ':')"
    elif len(message) > 200:
        message = message[:197] + "..."
    raise InvalidInput(f"{where}: {message}" if where else message, path=path, line=line,
                       hint=_HINT)


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"
