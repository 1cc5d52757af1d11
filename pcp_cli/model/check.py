"""Fast validation of page state fields, without jsonschema.

Every read of a head file a person may have edited goes through here, including the
micro_prompt path that must stay light, so this is plain Python. `pcp validate` additionally
runs the published JSON Schemas (model/schemas) over every file.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

from pcp_cli.errors import InvalidInput
from pcp_cli.model import vocab
from pcp_cli.model.ids import is_safe_id

_EXT_KEY = re.compile(vocab.EXTENSION_KEY_PATTERN)
_PARTIAL_DATE = re.compile(vocab.PARTIAL_DATE_PATTERN)
_NAMESPACE = re.compile(vocab.NAMESPACE_PATTERN)

ENUM_FIELDS: dict[str, tuple[str, ...]] = {
    "type": vocab.PAGE_TYPES,
    "visibility": vocab.VISIBILITIES,
    "lifecycle_status": vocab.LIFECYCLE_STATUSES,
    "review_status": vocab.REVIEW_STATUSES,
    "origin": vocab.ORIGINS,
    "sensitivity": vocab.SENSITIVITIES,
    "integrity": vocab.INTEGRITIES,
    "epistemic_status": vocab.EPISTEMIC_STATUSES,
    "instruction_policy": vocab.INSTRUCTION_POLICIES,
    "media_type": vocab.MEDIA_TYPES,
}
STRING_FIELDS = (
    "title", "owner_id", "created_at", "updated_at", "revision_id", "content_hash"
)
LIST_FIELDS = ("tags", "source_refs")
MAPPING_FIELDS = ("record", "facets", "extensions")
# Every key a head file's frontmatter may hold.
FRONTMATTER_KEYS = frozenset(
    ("page_id", "namespace", *ENUM_FIELDS, *STRING_FIELDS, *LIST_FIELDS, *MAPPING_FIELDS)
)

KEYSTONE_RECORD: dict[str, Callable[[Any], bool]] = {}
TIMELINE_RECORD: dict[str, Callable[[Any], bool]] = {}


class FieldError(ValueError):
    """A bad value; `key` names the top-level field so the caller can find its line."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def _is_number01(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 <= value <= 1
    )


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _enum(options: tuple[str, ...]) -> Callable[[Any], bool]:
    return lambda value: value in options


KEYSTONE_RECORD.update(
    category=_enum(vocab.KEYSTONE_CATEGORIES),
    confidence=_is_number01,
    importance=_is_number01,
    source=_enum(vocab.KEYSTONE_SOURCES),
    created_at=_is_str,
    last_confirmed_at=_is_str,
    supersedes=_is_str,
    superseded_by=_is_str,
)
TIMELINE_RECORD.update(
    date=lambda value: isinstance(value, str) and bool(_PARTIAL_DATE.match(value)),
    category=_enum(vocab.TIMELINE_CATEGORIES),
    confidence=_is_number01,
    source=_enum(vocab.KEYSTONE_SOURCES),
)
RECORD_RULES = {"keystone": KEYSTONE_RECORD, "timeline_event": TIMELINE_RECORD}


def check_json_value(value: Any, where: str, depth: int = 0) -> None:
    """Only JSON types (finite numbers, string keys), at most 16 levels deep."""
    if depth > 16:
        raise ValueError(f"{where} is nested too deeply")
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{where} has a non-string key {key!r}")
            check_json_value(item, f"{where}.{key}", depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_json_value(item, f"{where}[{index}]", depth + 1)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where} is not a finite number")
    elif not (value is None or isinstance(value, (str, int, bool))):
        raise ValueError(f"{where} has a value of type {type(value).__name__}")


def yaml_reading(value: Any) -> str:
    """What YAML made of an unquoted value: 'the integer 493' for `0755`."""
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the number {value!r}"
    if isinstance(value, datetime):
        return f"the date and time {value.isoformat()}"
    if isinstance(value, date):
        return f"the date {value.isoformat()}"
    if value is None:
        return "null (no value)"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


def not_a_string(key: str, value: Any, raw: str | None = None) -> str:
    """The message for a string field YAML read as something else, naming what it read."""
    shown = f"{raw} " if raw else "it "
    return f"{key}: YAML read {shown}as {yaml_reading(value)}; quote it ({key}: \"...\")"


def check_fields(data: dict[str, Any], *, allowed: frozenset[str] = FRONTMATTER_KEYS,
                 raw_of: Callable[[str], str | None] | None = None) -> None:
    """Raise FieldError for the first unknown key or wrongly typed value in `data`.

    `raw_of(key)`, when given, returns the value as written in the file, so a message can say
    what YAML made of it ("title: YAML read 0755 as the integer 493; quote it")."""
    for key in data:
        if key not in allowed:
            hint = (
                "custom fields go under 'extensions:' with a namespaced key"
                if _EXT_KEY.match(str(key))
                else "custom fields go under 'extensions:' with a namespaced key such as "
                "'com.example.field'"
            )
            raise FieldError(str(key), f"unknown field {str(key)!r} ({hint})")
    if "page_id" in data and not is_safe_id(data["page_id"]):
        raise FieldError("page_id", f"page_id {str(data['page_id'])[:80]!r} is not a safe id")
    if "namespace" in data and not (
        isinstance(data["namespace"], str) and _NAMESPACE.match(data["namespace"])
    ):
        raise FieldError("namespace", f"namespace {str(data['namespace'])[:80]!r} is not valid")
    for key, options in ENUM_FIELDS.items():
        if key == "sensitivity" and data.get(key, "") is None:
            continue  # never classified: allowed, and served as unclassified
        if key in data and data[key] not in options:
            raise FieldError(
                key, f"{key} must be one of {', '.join(options)}, not {str(data[key])[:40]!r}"
            )
    for key in STRING_FIELDS:
        if key in data and not isinstance(data[key], str):
            raise FieldError(key, not_a_string(key, data[key], raw_of(key) if raw_of else None))
    for key in LIST_FIELDS:
        if key in data and not (
            isinstance(data[key], list) and all(isinstance(v, str) for v in data[key])
        ):
            raise FieldError(key, f"{key} must be a list of strings")
    for key in MAPPING_FIELDS:
        if key in data:
            if not isinstance(data[key], dict):
                raise FieldError(key, f"{key} must be a mapping")
            try:
                check_json_value(data[key], key)
            except ValueError as exc:
                raise FieldError(key, str(exc)) from None
    for key in data.get("extensions") or {}:
        if not _EXT_KEY.match(key):
            raise FieldError(
                "extensions",
                f"extension key {key!r} is not namespaced (use reverse-DNS, e.g. 'com.example.x')",
            )
    page_type = data.get("type")
    rules = RECORD_RULES.get(page_type) if isinstance(page_type, str) else None
    if rules:
        for key, value in (data.get("record") or {}).items():
            rule = rules.get(key)
            if rule is not None and value is not None and not rule(value):
                raise FieldError("record", f"record.{key} has an invalid value {value!r}")
        if page_type == "timeline_event" and "date" not in (data.get("record") or {}):
            raise FieldError("record", "a timeline_event needs record.date (YYYY, YYYY-MM or "
                             "YYYY-MM-DD)")


def check_state(data: dict[str, Any], *, path: str, line_of: Callable[[str], int | None],
                raw_of: Callable[[str], str | None] | None = None) -> None:
    """check_fields, with the error turned into InvalidInput naming the file and line."""
    try:
        check_fields(data, raw_of=raw_of)
    except FieldError as exc:
        raise InvalidInput(str(exc), path=path, line=line_of(exc.key)) from None
