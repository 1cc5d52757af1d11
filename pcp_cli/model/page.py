"""The store's objects: page revisions, relations and events, as frozen dataclasses.

A page's *state* is everything a person can see and edit in its head file (frontmatter and
body). A *revision* is one immutable published state plus who made it, when, from what, and the
hash of the state. The hash is what tells a hand edit apart from the recorded head.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from typing import Any

# Keys of a page's state, in the order they are written to frontmatter. `payload` is the body.
STATE_KEYS = (
    "page_id",
    "type",
    "title",
    "namespace",
    "owner_id",
    "visibility",
    "lifecycle_status",
    "review_status",
    "origin",
    "sensitivity",
    "integrity",
    "epistemic_status",
    "instruction_policy",
    "tags",
    "source_refs",
    "record",
    "facets",
    "extensions",
    "payload",
)


def now_iso() -> str:
    """The current UTC time as ISO 8601 with milliseconds; `PCP_NOW` pins it (tests, replays)."""
    pinned = os.environ.get("PCP_NOW")
    if pinned:
        return pinned
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def canonical_json(data: Any) -> str:
    """Deterministic JSON: sorted keys, no ASCII escaping, compact separators."""
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def file_json(data: Any) -> str:
    """Deterministic JSON for files: sorted keys, two-space indent, one trailing newline.

    The same text as `json.dumps(data, sort_keys=True, ensure_ascii=False, indent=2)` (tested
    against it): CPython's json module uses its pure-Python encoder whenever `indent` is set,
    which made this a fifth of an import's CPU, so the layout is written here and every string
    goes through the C escaper. A value outside what a revision holds (a dict subclass, a
    non-string key, a deep or circular structure) takes the json module's own path.
    """
    out: list[str] = []
    try:
        _indented(data, out, "\n")
    except _Unusual:
        return json.dumps(data, sort_keys=True, ensure_ascii=False, indent=2) + "\n"
    out.append("\n")
    return "".join(out)


class _Unusual(Exception):
    """A value `_indented` leaves to the json module."""


_escape = json.encoder.encode_basestring  # what json uses with ensure_ascii=False (C when built)
_MAX_DEPTH = 64


def _indented(value: Any, out: list[str], newline: str) -> None:
    """Append `value` as json.dumps(indent=2, sort_keys=True) writes it at the indentation
    `newline` (a line break and the current indentation) stands for."""
    kind = type(value)
    if kind is str:
        out.append(_escape(value))
    elif kind is dict:
        if not value:
            out.append("{}")
            return
        if len(newline) > _MAX_DEPTH:
            raise _Unusual
        inner = newline + "  "
        separator = "{" + inner
        try:
            keys = sorted(value)
        except TypeError:
            raise _Unusual from None
        for key in keys:
            if type(key) is not str:
                raise _Unusual
            out.append(separator)
            out.append(_escape(key))
            out.append(": ")
            _indented(value[key], out, inner)
            separator = "," + inner
        out.append(newline)
        out.append("}")
    elif kind is list or kind is tuple:
        if not value:
            out.append("[]")
            return
        if len(newline) > _MAX_DEPTH:
            raise _Unusual
        inner = newline + "  "
        separator = "[" + inner
        for item in value:
            out.append(separator)
            _indented(item, out, inner)
            separator = "," + inner
        out.append(newline)
        out.append("]")
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif kind is int:
        out.append(int.__repr__(value))
    elif kind is float and value == value and value not in (_INF, -_INF):
        out.append(float.__repr__(value))
    else:  # NaN, infinities, subclasses, anything else: as the json module writes (or refuses)
        raise _Unusual


_INF = float("inf")


def normalize_body(text: str) -> str:
    """LF line ends, no BOM, no trailing blank lines, one final newline (empty stays empty)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.startswith("\ufeff"):
        text = text[1:]
    stripped = text.rstrip()
    return stripped + "\n" if stripped else ""


def title_from(content: str, limit: int = 80) -> str:
    """A page title from its text: the first non-empty line, heading marks dropped, capped."""
    for line in content.strip().splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
    return ""


def hash_state(state: dict[str, Any]) -> str:
    digest = hashlib.sha256(canonical_json(state).encode("utf-8")).hexdigest()
    return f"sha256:{digest}"


@dataclass(frozen=True)
class Actor:
    actor_type: str
    actor_id: str

    def to_dict(self) -> dict[str, str]:
        return {"actor_type": self.actor_type, "actor_id": self.actor_id}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Actor:
        return cls(actor_type=data["actor_type"], actor_id=data["actor_id"])


@dataclass(frozen=True)
class ProvenanceStep:
    operation: str
    actor_type: str
    actor_id: str
    timestamp: str
    input_revision_ids: tuple[str, ...] = ()
    note: str | None = None
    # A page derived from raw events (a conversation rolled up from ingested messages) names
    # the events this revision added; written only when there are some.
    input_event_ids: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "operation": self.operation,
            "actor_type": self.actor_type,
            "actor_id": self.actor_id,
            "timestamp": self.timestamp,
            "input_revision_ids": list(self.input_revision_ids),
        }
        if self.input_event_ids:
            data["input_event_ids"] = list(self.input_event_ids)
        if self.note is not None:
            data["note"] = self.note
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ProvenanceStep:
        return cls(
            operation=data["operation"],
            actor_type=data["actor_type"],
            actor_id=data["actor_id"],
            timestamp=data["timestamp"],
            input_revision_ids=tuple(data.get("input_revision_ids", ())),
            note=data.get("note"),
            input_event_ids=tuple(data.get("input_event_ids", ())),
        )


@dataclass(frozen=True)
class PageState:
    """What a page says at one revision. Dicts inside are treated as immutable by convention."""

    page_id: str
    type: str
    namespace: str
    owner_id: str
    content: str
    title: str = ""
    media_type: str = "text/markdown"
    visibility: str = "private"
    lifecycle_status: str = "active"
    review_status: str = "affirmed"
    origin: str = "user_stated"
    # None: never classified (see vocab.SERVED_SENSITIVITIES for how such pages are served).
    sensitivity: str | None = "low"
    integrity: str = "verbatim"
    epistemic_status: str = "asserted"
    instruction_policy: str = "data_only"
    tags: tuple[str, ...] = ()
    source_refs: tuple[str, ...] = ()
    record: dict[str, Any] = field(default_factory=dict)
    facets: dict[str, Any] = field(default_factory=dict)
    extensions: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "content", normalize_body(self.content))
        object.__setattr__(self, "tags", tuple(self.tags))
        object.__setattr__(self, "source_refs", tuple(self.source_refs))

    def to_dict(self) -> dict[str, Any]:
        return {
            "page_id": self.page_id,
            "type": self.type,
            "title": self.title,
            "namespace": self.namespace,
            "owner_id": self.owner_id,
            "visibility": self.visibility,
            "lifecycle_status": self.lifecycle_status,
            "review_status": self.review_status,
            "origin": self.origin,
            "sensitivity": self.sensitivity,
            "integrity": self.integrity,
            "epistemic_status": self.epistemic_status,
            "instruction_policy": self.instruction_policy,
            "tags": list(self.tags),
            "source_refs": list(self.source_refs),
            "record": self.record,
            "facets": self.facets,
            "extensions": self.extensions,
            "payload": {"media_type": self.media_type, "content": self.content},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PageState:
        payload = data.get("payload") or {}
        return cls(
            page_id=data["page_id"],
            type=data["type"],
            title=data.get("title", ""),
            namespace=data["namespace"],
            owner_id=data["owner_id"],
            visibility=data.get("visibility", "private"),
            lifecycle_status=data.get("lifecycle_status", "active"),
            review_status=data.get("review_status", "affirmed"),
            origin=data.get("origin", "generated"),
            sensitivity=data.get("sensitivity"),
            integrity=data.get("integrity", "unknown"),
            epistemic_status=data.get("epistemic_status", "unknown"),
            instruction_policy=data.get("instruction_policy", "data_only"),
            tags=tuple(data.get("tags", ())),
            source_refs=tuple(data.get("source_refs", ())),
            record=dict(data.get("record") or {}),
            facets=dict(data.get("facets") or {}),
            extensions=dict(data.get("extensions") or {}),
            media_type=payload.get("media_type", "text/markdown"),
            content=payload.get("content", ""),
        )

    @property
    def content_hash(self) -> str:
        return hash_state(self.to_dict())

    def evolve(self, **changes: Any) -> PageState:
        return replace(self, **changes)

    @property
    def is_current(self) -> bool:
        """Active and affirmed: what ordinary reads and the portable surface may show."""
        return self.lifecycle_status == "active" and self.review_status == "affirmed"

    @property
    def source_observed_at(self) -> str | None:
        """The time the page's own content gives for when it was observed (None if it gives
        none); `Revision.observed_at` adds the fallback for material made in the store."""
        return source_time(self.type, self.record)


OBSERVED_AT = "observed_at"
# The store's own profile page: distillation and accepted profile proposals land on it.
PROFILE_PAGE_ID = "profile"
# Keys of a page's `record` that importers use to remember the Portable Context Protocol id a
# page was imported under when that id could not be the page id (see adapters/archive.py).
V1_ID = "v1_id"
V1_SUPERSEDES = "v1_supersedes"
# The source a page was imported from (`store:<store_id>` or `file:<name>`): v1 ids are
# unique only within their source (see adapters/archive.py).
V1_SOURCE = "v1_source"
# The profile page's record key holding an imported archive's own extensions (adapters/archive).
ARCHIVE_EXTENSIONS = "archive_extensions"


def source_time(page_type: str | None, record: dict[str, Any]) -> str | None:
    """When the content of a page was created or observed, as its record states it.

    `record["observed_at"]` when set (importers and adoptions write it); otherwise what the
    page type itself records: a timeline event's `date`, a keystone's `created_at`, a
    conversation's `updated_at` or `started_at`, a note's `updated_at` or `created_at`.
    """
    keys: tuple[str, ...] = {
        "timeline_event": ("date",),
        "keystone": ("created_at",),
        "conversation": ("updated_at", "started_at"),
    }.get(page_type or "", ("updated_at", "created_at"))
    for key in (OBSERVED_AT, *keys):
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def observed_time(page_type: str | None, record: dict[str, Any], origin: str | None,
                  stored_at: str | None) -> str | None:
    """THE observed time of a page: when what it says was created or observed.

    This is the one accessor for it (search results' `timestamp`, freshness, temporal search
    and `--as-of` use it); `Revision.observed_at` is the same for a revision. It is the time the
    content gives (`source_time`); failing that, for material made in this store (the person's
    writes, a model's, a derivation) the time its page was first stored, which is when it was
    observed. Material from outside (`imported`, `recorded`) that gives no time of its own has
    none: storage time never stands in for it, so it never looks fresher than it is.
    """
    from pcp_cli.model.vocab import OUTSIDE_ORIGINS

    own = source_time(page_type, record)
    if own is not None:
        return own
    if origin in OUTSIDE_ORIGINS:
        return None
    return stored_at or None


@dataclass(frozen=True)
class Revision:
    """One immutable published state of a page (a file under `revisions/<page_id>/`)."""

    revision_id: str
    state: PageState
    created_at: str
    created_by: Actor
    provenance: tuple[ProvenanceStep, ...]
    page_created_at: str
    parent_revision_id: str | None = None
    merged_revision_ids: tuple[str, ...] = ()
    idempotency_key: str | None = None
    content_hash: str = ""

    def __post_init__(self) -> None:
        if not self.content_hash:
            object.__setattr__(self, "content_hash", self.state.content_hash)

    @property
    def page_id(self) -> str:
        return self.state.page_id

    @property
    def observed_at(self) -> str | None:
        """When what this revision says was created or observed (see `observed_time`)."""
        state = self.state
        return observed_time(state.type, state.record, state.origin, self.page_created_at)

    @property
    def parent_ids(self) -> tuple[str, ...]:
        first = (self.parent_revision_id,) if self.parent_revision_id else ()
        return first + self.merged_revision_ids

    def to_dict(self) -> dict[str, Any]:
        data = self.state.to_dict()
        data.update(
            {
                "revision_id": self.revision_id,
                "parent_revision_id": self.parent_revision_id,
                "merged_revision_ids": list(self.merged_revision_ids),
                "created_at": self.created_at,
                "created_by": self.created_by.to_dict(),
                "page_created_at": self.page_created_at,
                "provenance": [step.to_dict() for step in self.provenance],
                "idempotency_key": self.idempotency_key,
                "content_hash": self.content_hash,
            }
        )
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Revision:
        return cls(
            revision_id=data["revision_id"],
            state=PageState.from_dict(data),
            created_at=data["created_at"],
            created_by=Actor.from_dict(data["created_by"]),
            provenance=tuple(ProvenanceStep.from_dict(p) for p in data.get("provenance", ())),
            page_created_at=data.get("page_created_at") or data["created_at"],
            parent_revision_id=data.get("parent_revision_id"),
            merged_revision_ids=tuple(data.get("merged_revision_ids", ())),
            idempotency_key=data.get("idempotency_key"),
            content_hash=data.get("content_hash", ""),
        )

    def manifest(self) -> dict[str, Any]:
        """Everything about the revision except the payload content (the `manifest` read view)."""
        data = self.to_dict()
        content = data["payload"]["content"]
        data["payload"] = {"media_type": data["payload"]["media_type"], "length": len(content)}
        return data


@dataclass(frozen=True)
class Relation:
    """A typed, directed edge between two revisions (a file under `relations/`)."""

    relation_id: str
    relation_type: str
    from_page_id: str
    from_revision_id: str
    to_page_id: str
    to_revision_id: str
    created_at: str
    created_by: Actor
    note: str | None = None
    extensions: dict[str, Any] = field(default_factory=dict)
    # The ends the person named by a revision id ("from", "to"): the relation is pinned to that
    # revision (every relation names revisions; an unpinned end named the page's head then).
    pinned: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        data["created_by"] = self.created_by.to_dict()
        if self.note is None:
            del data["note"]
        if self.pinned:
            data["pinned"] = list(self.pinned)
        else:
            del data["pinned"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Relation:
        return cls(
            relation_id=data["relation_id"],
            relation_type=data["relation_type"],
            from_page_id=data["from_page_id"],
            from_revision_id=data["from_revision_id"],
            to_page_id=data["to_page_id"],
            to_revision_id=data["to_revision_id"],
            created_at=data["created_at"],
            created_by=Actor.from_dict(data["created_by"]),
            note=data.get("note"),
            extensions=dict(data.get("extensions") or {}),
            pinned=tuple(data.get("pinned") or ()),
        )


@dataclass(frozen=True)
class Event:
    """A raw ingested event (IngestEvent), or a record of a store operation such as a delete."""

    event_id: str
    kind: str
    occurred_at: str
    recorded_at: str
    actor: Actor
    data: dict[str, Any] = field(default_factory=dict)
    source_refs: tuple[str, ...] = ()
    idempotency_key: str | None = None
    # Ingested events only: whose key `idempotency_key` is (ingest, mcp:<client>, claude_code,
    # codex), and the hash of `data` that tells a repeat from a conflict.
    source: str | None = None
    content_hash: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "event_id": self.event_id,
            "kind": self.kind,
            "occurred_at": self.occurred_at,
            "recorded_at": self.recorded_at,
            "actor": self.actor.to_dict(),
            "data": self.data,
            "source_refs": list(self.source_refs),
            "idempotency_key": self.idempotency_key,
        }
        if self.source is not None:
            data["source"] = self.source
        if self.content_hash is not None:
            data["content_hash"] = self.content_hash
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Event:
        return cls(
            event_id=data["event_id"],
            kind=data["kind"],
            occurred_at=data["occurred_at"],
            recorded_at=data["recorded_at"],
            actor=Actor.from_dict(data["actor"]),
            data=dict(data.get("data") or {}),
            source_refs=tuple(data.get("source_refs", ())),
            idempotency_key=data.get("idempotency_key"),
            source=data.get("source"),
            content_hash=data.get("content_hash"),
        )
