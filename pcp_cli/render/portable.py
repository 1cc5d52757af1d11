"""Portable Context Protocol v1 objects rendered from pages: keystone, timeline_event, profile.

Pure functions over model objects. What they return validates against the published v1.2
schemas unchanged (render/versions.py makes v1.1 objects of them for a reader that asks): only
the schema's own fields, our extras under namespaced `extensions`. Values that
would break the schema are normalised (timestamps to RFC 3339 UTC) or left out (an optional
field holding garbage), never passed through; a missing required value raises InvalidInput.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pcp_cli.errors import InvalidInput
from pcp_cli.model.page import PageState, Revision
from pcp_cli.model.staleness import stale_after as stale_after_of
from pcp_cli.model.vocab import (
    EXT_NS,
    KEYSTONE_CATEGORIES,
    KEYSTONE_SOURCES,
    PARTIAL_DATE_PATTERN,
    PROFILE_FIELDS,
    PROFILE_LIST_FIELDS,
    SENSITIVITIES,
    TIMELINE_CATEGORIES,
    given_extensions,
)
from pcp_cli.render.select import instant, rfc3339

# Lifecycle -> keystone v1 `status` (record lifecycle only; approval is out of band). v1 has no
# word for `archived` (retired by the person, superseded by nothing): its `status` is left out
# (the field is optional) and `extensions["org.pcp-cli"]["lifecycle_status"]` says "archived",
# which pcp's importer gives back.
KEYSTONE_STATUS = {
    "active": "active",
    "superseded": "superseded",
    "tombstoned": "deleted",
}
# Store origin -> keystone/timeline v1 `source`, used when the record has no valid `source`.
ORIGIN_TO_SOURCE = {
    "user_stated": "user_stated",
    "approved": "user_stated",
    "imported": "imported",
    "inferred": "inferred",
}
KEYSTONE_ORDER = (
    "id",
    "content",
    "category",
    "confidence",
    "importance",
    "source",
    "status",
    "sensitivity",
    "created_at",
    "generated_by",
    "last_confirmed_at",
    "last_confirmed_by",
    "stale_after",
    "supersedes",
    "extensions",
)
TIMELINE_ORDER = ("id", "date", "summary", "category", "confidence", "source", "extensions")
PROFILE_ORDER = ("schema_version", "generated_at", *PROFILE_FIELDS, "extensions")
_PARTIAL_DATE = re.compile(PARTIAL_DATE_PATTERN)


def _unit_interval(value: Any) -> float | int | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1
    return value if ok else None


def _source(record: dict[str, Any], origin: str) -> str:
    value = record.get("source")
    if value in KEYSTONE_SOURCES:
        return str(value)
    return ORIGIN_TO_SOURCE.get(origin, "other")


def keystone_object(revision: Revision) -> dict[str, Any]:
    state = revision.state
    record = state.record
    obj: dict[str, Any] = {"id": state.page_id, "content": state.content.rstrip("\n")}
    obj["category"] = (
        record.get("category") if record.get("category") in KEYSTONE_CATEGORIES else "other"
    )
    for key in ("confidence", "importance"):
        if _unit_interval(record.get(key)) is not None:
            obj[key] = record[key]
    obj["source"] = _source(record, state.origin)
    status = KEYSTONE_STATUS.get(state.lifecycle_status)
    if status is not None:
        obj["status"] = status
    if state.sensitivity in SENSITIVITIES:
        obj["sensitivity"] = state.sensitivity
    created = rfc3339(record.get("created_at")) or rfc3339(revision.page_created_at)
    if created:
        obj["created_at"] = created
    confirmed = rfc3339(record.get("last_confirmed_at"))
    if confirmed:
        obj["last_confirmed_at"] = confirmed
    # v1.2 (§3.2.1, §3.2.2): the actors and the staleness date, where the record has them
    for key in ("generated_by", "last_confirmed_by"):
        if isinstance(record.get(key), str) and record[key]:
            obj[key] = record[key]
    stale_after = stale_after_of(record)
    if stale_after:
        obj["stale_after"] = stale_after
    if isinstance(record.get("supersedes"), str) and record["supersedes"]:
        obj["supersedes"] = record["supersedes"]
    obj["extensions"] = given_extensions(state.extensions)
    if status is None:
        ours = obj["extensions"].get(EXT_NS)
        obj["extensions"][EXT_NS] = {**(ours if isinstance(ours, dict) else {}),
                                     "lifecycle_status": state.lifecycle_status}
    return _ordered(obj, KEYSTONE_ORDER)


def timeline_object(state: PageState) -> dict[str, Any]:
    return timeline_event(state.page_id, state.record, state.content, state.origin,
                          state.extensions)


def timeline_event(page_id: str, record: dict[str, Any], content: str, origin: str,
                   extensions: dict[str, Any]) -> dict[str, Any]:
    """`timeline_object` from the fields it reads (what the catalog keeps of an event)."""
    date = record.get("date")
    if not isinstance(date, str) or not _PARTIAL_DATE.match(date):
        raise InvalidInput(
            f"timeline event {page_id} has no valid date ({date!r})",
            hint="set record.date to YYYY, YYYY-MM or YYYY-MM-DD",
        )
    obj: dict[str, Any] = {"id": page_id, "date": date, "summary": content.rstrip("\n")}
    # As for a keystone: a category the record lacks (an imported event without one) is
    # `other`, never left out nor guessed.
    obj["category"] = (
        record.get("category") if record.get("category") in TIMELINE_CATEGORIES else "other"
    )
    if _unit_interval(record.get("confidence")) is not None:
        obj["confidence"] = record["confidence"]
    obj["source"] = _source(record, origin)
    obj["extensions"] = given_extensions(extensions)
    return obj  # built in TIMELINE_ORDER


def profile_object(revision: Revision | None) -> dict[str, Any]:
    """The strict v1 profile object; no profile gives just `schema_version`.

    `record["pinned"]` (which fields the person set by hand) is store bookkeeping, not part of
    the portable object, and is left out.
    """
    obj: dict[str, Any] = {"schema_version": "1.0"}
    if revision is None:
        return obj
    state = revision.state
    generated = rfc3339(revision.created_at)
    if generated:
        obj["generated_at"] = generated
    for key in PROFILE_FIELDS:
        value = state.content.rstrip("\n") if key == "summary" else state.record.get(key)
        if key in PROFILE_LIST_FIELDS:
            items = (
                [v for v in value if isinstance(v, str) and v.strip()]
                if isinstance(value, (list, tuple))
                else []
            )
            if items:
                obj[key] = items
        elif isinstance(value, str) and value.strip():
            obj[key] = value
    obj["extensions"] = given_extensions(state.extensions)
    return _ordered(obj, PROFILE_ORDER)


def profile_json(profile: Revision | None) -> dict[str, Any]:
    """`pcp_get_profile format=json`: the strict §3.1 object."""
    return profile_object(profile)


def archive(
    profile: Revision | None,
    keystones: Sequence[Revision],
    timeline_states: Sequence[PageState],
    generated_at: str,
) -> dict[str, Any]:
    """The full export (`pcp.full-archive`), each part valid against the v1 schemas.

    Keystones: every affirmed keystone except deleted (tombstoned) ones, superseded and archived
    included with their `status`, so the export keeps history; proposals and rejections are never
    exported (approval has no place on the portable surface). Timeline events: active affirmed
    events only (the v1 object has no status to mark the others). Keystones are ordered by
    created_at then id, events by date then id.
    """
    latest_keystones: dict[str, Revision] = {}
    for rev in keystones:
        state = rev.state
        if state.type != "keystone" or state.review_status != "affirmed":
            continue
        if state.lifecycle_status == "tombstoned":
            continue
        held = latest_keystones.get(rev.page_id)
        if held is None or _newer(rev, held):
            latest_keystones[rev.page_id] = rev
    ks_objects = [keystone_object(rev) for rev in latest_keystones.values()]
    ks_objects.sort(key=lambda o: (instant(o.get("created_at")) or float("-inf"), o["id"]))

    events: dict[str, PageState] = {}
    for st in timeline_states:
        if st.type == "timeline_event" and st.is_current:
            held = events.get(st.page_id)
            if held is None or st.content_hash > held.content_hash:
                events[st.page_id] = st
    ev_objects = sorted(
        (timeline_object(st) for st in events.values()), key=lambda o: (o["date"], o["id"])
    )
    usable = (
        profile
        if profile is not None
        and profile.state.review_status == "affirmed"
        and profile.state.lifecycle_status != "tombstoned"
        else None
    )
    return {
        "schema_version": "1.0",
        "kind": "pcp.full-archive",
        "generated_at": generated_at,
        "profile": profile_object(usable),
        "keystones": ks_objects,
        "timeline_events": ev_objects,
    }


def _newer(a: Revision, b: Revision) -> bool:
    return (instant(a.created_at) or float("-inf"), a.revision_id) > (
        instant(b.created_at) or float("-inf"),
        b.revision_id,
    )


def _ordered(obj: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    return {key: obj[key] for key in order if key in obj}


def portable_object(revision: Revision) -> tuple[dict[str, Any], str] | None:
    """A page's v1 object and the name of its v1 schema, for the page types that have one."""
    kind = revision.state.type
    if kind == "keystone":
        return keystone_object(revision), "keystone"
    if kind == "timeline_event":
        return timeline_object(revision.state), "timeline-event"
    if kind == "profile":
        return profile_object(revision), "profile"
    return None
