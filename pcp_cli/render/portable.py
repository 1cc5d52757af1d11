"""Portable Context Protocol v1 objects rendered from pages: keystone, timeline_event, profile.

Pure functions over model objects. What they return validates against the published v1 schemas
unchanged: only the schema's own fields, our extras under namespaced `extensions`.
"""

from __future__ import annotations

from typing import Any

from pcp_cli.model.page import PageState, Revision
from pcp_cli.model.vocab import PROFILE_FIELDS

# Lifecycle -> keystone v1 `status` (record lifecycle only; approval is out of band).
KEYSTONE_STATUS = {
    "active": "active",
    "superseded": "superseded",
    "archived": "superseded",
    "tombstoned": "deleted",
}

KEYSTONE_RECORD_KEYS = (
    "category",
    "confidence",
    "importance",
    "source",
    "created_at",
    "last_confirmed_at",
    "supersedes",
)
TIMELINE_RECORD_KEYS = ("date", "category", "confidence", "source")


def _copy_present(record: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {key: record[key] for key in keys if record.get(key) is not None}


def keystone_object(revision: Revision) -> dict[str, Any]:
    state = revision.state
    obj: dict[str, Any] = {"id": state.page_id, "content": state.content}
    obj.update(_copy_present(state.record, KEYSTONE_RECORD_KEYS))
    obj.setdefault("created_at", revision.page_created_at)
    obj["status"] = KEYSTONE_STATUS[state.lifecycle_status]
    obj["sensitivity"] = state.sensitivity
    obj["extensions"] = dict(state.extensions)
    return _ordered(obj, ("id", "content", "category", "confidence", "importance", "source",
                          "status", "sensitivity", "created_at", "last_confirmed_at",
                          "supersedes", "extensions"))


def timeline_object(state: PageState) -> dict[str, Any]:
    obj: dict[str, Any] = {"id": state.page_id, "date": state.record.get("date", "")}
    obj["summary"] = state.content
    obj.update(_copy_present(state.record, TIMELINE_RECORD_KEYS[1:]))
    obj["extensions"] = dict(state.extensions)
    return obj


def profile_object(revision: Revision | None) -> dict[str, Any]:
    """The strict v1 profile object; an empty store gives just `schema_version`."""
    obj: dict[str, Any] = {"schema_version": "1.0"}
    if revision is None:
        return obj
    state = revision.state
    obj["generated_at"] = revision.created_at
    for key in PROFILE_FIELDS:
        value = state.content if key == "summary" else state.record.get(key)
        if value not in (None, "", []):
            obj[key] = list(value) if isinstance(value, (list, tuple)) else value
    obj["extensions"] = dict(state.extensions)
    return obj


def _ordered(obj: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    return {key: obj[key] for key in order if key in obj}
