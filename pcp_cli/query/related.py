"""`pcp related` (walk a page's relations) and `pcp diff` (what changed between revisions)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from pcp_cli.errors import NotFound, UsageError
from pcp_cli.model import scopes as scope_rule
from pcp_cli.model import vocab
from pcp_cli.query.graph import MAX_DEPTH, MAX_PAGES, adjacency, load_relations, walk

READABLE = ("active", "superseded", "archived")


def related(store: Any, page_id: str, *, types: Sequence[str] = (), depth: int = 1,
            scopes: Sequence[str] | None = None, include_superseded: bool = False,
            include_sensitive: bool = False,
            suppressed: frozenset[str] = frozenset(),
            include_unclassified: bool = True) -> dict[str, Any]:
    """`{page_id, revision_id, depth, relation_types, pages: [...], truncated, filters_applied}`.

    Walks relations of `types` (all when empty) from `page_id`, both directions, up to `depth`
    steps; a page outside `scopes`, suppressed, tombstoned, awaiting review, high-sensitivity
    (without `include_sensitive`), unclassified (without `include_unclassified`) or, without
    `include_superseded`, not active, is neither listed nor walked through."""
    for value in types:
        if not vocab.is_relation_type(value):
            raise UsageError(f"unknown relation type {value!r}",
                             hint=f"one of: {', '.join(vocab.RELATION_TYPES)}, or a namespaced "
                             "type such as com.example.reviews")
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
        raise UsageError(f"--depth must be 1 to {MAX_DEPTH}, not {depth!r}")
    statuses = READABLE if include_superseded else ("active",)

    def visible(pid: str, *, start: bool = False) -> bool:
        entry = store.head_entry(pid)
        if entry is None or entry.problem is not None or pid in suppressed:
            return False
        if entry.review_status != "affirmed" or entry.lifecycle_status not in (
                READABLE if start else statuses):
            return False
        if entry.sensitivity == "high" and not include_sensitive:
            return False
        if entry.sensitivity not in vocab.SENSITIVITIES and not include_unclassified:
            return False
        return scope_rule.in_scopes(entry.namespace, scopes)

    if not visible(page_id, start=True):
        store.current(page_id)  # the usual error for an unknown or malformed id
        raise NotFound(f"page {page_id} not found",
                       hint="`pcp ls` and `pcp search` list the pages you can read")
    adj = adjacency(load_relations(store), types or None)
    reached, truncated = walk(adj, [page_id], depth=depth, visible=visible,
                              max_pages=MAX_PAGES)
    pages = []
    for node in reached:
        entry = store.head_entry(node["page_id"])
        pages.append({
            "page_id": node["page_id"], "revision_id": entry.revision_id, "type": entry.type,
            "title": entry.title, "namespace": entry.namespace,
            "lifecycle_status": entry.lifecycle_status, "depth": node["depth"],
            "via": {k: node[k] for k in ("from_page_id", "relation_id", "relation_type",
                                         "direction")},
        })
    head = store.head_entry(page_id)
    return {
        "page_id": page_id, "revision_id": head.revision_id if head else None,
        "depth": depth, "relation_types": list(types) or None, "count": len(pages),
        "pages": pages, "truncated": truncated,
        "filters_applied": {"directions": "both", "max_pages": MAX_PAGES,
                            "lifecycle_statuses": list(statuses),
                            "include_sensitive": include_sensitive,
                            "scopes": None if scopes is None else list(scopes),
                            "as_of": getattr(store, "as_of", None)},
    }


def diff_revisions(store: Any, page_id: str, rev_a: str | None = None,
                   rev_b: str | None = None) -> dict[str, Any]:
    """`{page_id, from_revision_id, to_revision_id, diff, fields}`: the unified diff of the
    Markdown, then each frontmatter field whose value changed (`{field, from, to}`).

    With no revision: the head against its parent. With one: that revision against the head.
    """
    head = store.current(page_id)
    if rev_a is None:
        if not head.parent_revision_id:
            raise UsageError(f"page {page_id} has one revision: nothing to compare",
                             hint=f"`pcp history {page_id}` lists its revisions")
        old, new = store.get(page_id, head.parent_revision_id), head
    else:
        old = store.get(page_id, rev_a)
        new = store.get(page_id, rev_b) if rev_b is not None else head
    a, b = old.state.to_dict(), new.state.to_dict()
    text = "".join(difflib.unified_diff(
        a["payload"]["content"].splitlines(keepends=True),
        b["payload"]["content"].splitlines(keepends=True),
        fromfile=f"{page_id}@{old.revision_id}", tofile=f"{page_id}@{new.revision_id}"))
    fields = []
    for key in a:
        if key == "payload":
            if a[key]["media_type"] != b[key]["media_type"]:
                fields.append({"field": "media_type", "from": a[key]["media_type"],
                               "to": b[key]["media_type"]})
            continue
        if a[key] != b.get(key):
            fields.append({"field": key, "from": a[key], "to": b.get(key)})
    return {"page_id": page_id, "from_revision_id": old.revision_id,
            "to_revision_id": new.revision_id, "from_created_at": old.created_at,
            "to_created_at": new.created_at, "diff": text, "fields": fields}
