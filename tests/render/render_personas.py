"""Test helpers: build Revisions and PageStates directly (the store is not needed here).

`ada()` turns the fictional Ada Lumen persona of the published PCP v1 full-archive example into
a profile revision, keystone revisions and timeline states.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pcp_cli.model.page import Actor, PageState, ProvenanceStep, Revision
from tests.conftest import V1_EXAMPLES, V12_SCHEMAS

SCHEMAS = V12_SCHEMAS
ARCHIVE_EXAMPLE = V1_EXAMPLES / "full-archive.example.json"
GOLDEN = Path(__file__).parent / "golden"
USER = Actor("user", "usr_ada")


def state(page_id: str, page_type: str, content: str, **fields: Any) -> PageState:
    return PageState(
        page_id=page_id,
        type=page_type,
        namespace="personal",
        owner_id="usr_ada",
        content=content,
        **fields,
    )


def revision(
    st: PageState,
    created_at: str,
    revision_id: str | None = None,
    page_created_at: str | None = None,
) -> Revision:
    step = ProvenanceStep("write", "user", "usr_ada", created_at)
    return Revision(
        revision_id=revision_id or f"rev_{st.page_id}",
        state=st,
        created_at=created_at,
        created_by=USER,
        provenance=(step,),
        page_created_at=page_created_at or created_at,
    )


def keystone(
    page_id: str,
    content: str,
    *,
    category: str = "preference",
    created_at: str = "2026-01-01T00:00:00Z",
    last_confirmed_at: str | None = None,
    importance: float | None = None,
    origin: str = "user_stated",
    revision_id: str | None = None,
    supersedes: str | None = None,
    **fields: Any,
) -> Revision:
    record: dict[str, Any] = {
        "category": category,
        "created_at": created_at,
        "source": origin if origin in ("user_stated", "inferred", "imported") else "other",
    }
    if last_confirmed_at:
        record["last_confirmed_at"] = last_confirmed_at
    if importance is not None:
        record["importance"] = importance
    if supersedes:
        record["supersedes"] = supersedes
    st = state(page_id, "keystone", content, origin=origin, record=record, **fields)
    return revision(st, created_at, revision_id)


def profile(
    record: dict[str, Any],
    summary: str = "",
    *,
    created_at: str = "2026-01-15T09:00:00Z",
    **fields: Any,
) -> Revision:
    fields.setdefault("origin", "generated")
    return revision(state("profile", "profile", summary, record=record, **fields), created_at)


def ada() -> tuple[Revision, list[Revision], list[PageState]]:
    data = json.loads(ARCHIVE_EXAMPLE.read_text(encoding="utf-8"))
    prof = data["profile"]
    record = {
        k: v
        for k, v in prof.items()
        if k not in ("schema_version", "generated_at", "summary", "extensions")
    }
    record["pinned"] = []
    prof_rev = profile(record, prof["summary"], created_at=prof["generated_at"])
    keystones = []
    for ks in data["keystones"]:
        rec = {
            k: ks[k]
            for k in (
                "category",
                "confidence",
                "importance",
                "source",
                "created_at",
                "last_confirmed_at",
            )
            if k in ks
        }
        st = state(ks["id"], "keystone", ks["content"], origin=ks["source"], record=rec)
        keystones.append(revision(st, ks["created_at"]))
    events = []
    for ev in data["timeline_events"]:
        rec = {k: ev[k] for k in ("date", "category", "confidence", "source") if k in ev}
        events.append(
            state(ev["id"], "timeline_event", ev["summary"], origin=ev["source"], record=rec)
        )
    return prof_rev, keystones, events
