"""`pcp stats` / `pcp_stats`, `pcp scopes` / ListScopes, `pcp capabilities` /
DescribeCapabilities. All from the catalog: no page file is opened.

Only affirmed pages are counted (a proposal waiting for review is not part of the read
surface), only in the caller's scopes, and never the caller's suppressed pages: a count of what
the caller may not see would itself say something about it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pcp_cli.model import scopes as scope_rule
from pcp_cli.model import vocab
from pcp_cli.store.catalog import Entry

if TYPE_CHECKING:
    from pcp_cli.store.store import Store


def _visible(store: Store, scopes: Sequence[str] | None, suppressed: frozenset[str],
             statuses: Sequence[str] | None = None) -> list[Entry]:
    return [e for e in store.entries(statuses=statuses)
            if e.page_id not in suppressed and scope_rule.in_scopes(e.namespace, scopes)]


def stats(store: Store, *, scopes: Sequence[str] | None = None,
          suppressed: frozenset[str] = frozenset()) -> dict[str, Any]:
    """`{schema_version, total, by_type, by_origin, by_namespace, by_lifecycle,
    time_range: {earliest, latest}}` over every affirmed page the caller may see, in any
    lifecycle state; the time range spans the pages' creation and last revision times."""
    entries = _visible(store, scopes, suppressed)
    counters = {key: Counter[str]() for key in ("by_type", "by_origin", "by_namespace",
                                               "by_lifecycle")}
    times: list[str] = []
    for e in entries:
        counters["by_type"][e.type or "unknown"] += 1
        counters["by_origin"][e.origin if e.origin in vocab.ORIGINS else "generated"] += 1
        counters["by_namespace"][e.namespace or "unknown"] += 1
        counters["by_lifecycle"][e.lifecycle_status or "unknown"] += 1
        times.extend(t for t in (e.created_at, e.updated_at) if t)
    return {
        "schema_version": "1.0",
        "total": len(entries),
        **{key: dict(sorted(counter.items())) for key, counter in counters.items()},
        "time_range": {"earliest": min(times, default=None), "latest": max(times, default=None)},
    }


def list_scopes(store: Store, *, scopes: Sequence[str] | None = None) -> dict[str, Any]:
    """ListScopes: `{scopes: [{namespace, owner_id, visibility, pages, last_activity}]}` for
    every namespace the caller may see that holds an affirmed page; `pages` counts its current
    (active) pages, `last_activity` is its newest revision time. Sorted by namespace."""
    rows: dict[str, dict[str, Any]] = {}
    for e in _visible(store, scopes, frozenset()):
        namespace = e.namespace or store.default_namespace
        row = rows.setdefault(namespace, {
            "namespace": namespace, "owner_id": store.owner_id,
            # pcp stores only private pages today (visibility is not yet settable).
            "visibility": "private", "pages": 0, "last_activity": None})
        if e.lifecycle_status == "active":
            row["pages"] += 1
        stamp = e.updated_at or e.created_at
        if stamp and (row["last_activity"] is None or stamp > row["last_activity"]):
            row["last_activity"] = stamp
    return {"scopes": [rows[k] for k in sorted(rows)]}


def capabilities(store: Store) -> dict[str, Any]:
    """DescribeCapabilities: what this store supports."""
    from pcp_cli.index import FORMAT_VERSION
    from pcp_cli.index.text import FIELD_ALIASES
    from pcp_cli.query.search import DEFAULT_LIMIT, MAX_LIMIT, READ_VIEWS, SNIPPET_CHARS

    return {
        "store_format": store.manifest.format,
        "store_id": store.manifest.store_id,
        "owner_id": store.owner_id,
        "default_namespace": store.default_namespace,
        "protocols": {"portable_context_protocol": "1.1", "paged_context_protocol": "0.4"},
        "search": {
            "modes": ["full_text"],
            "engine": "whoosh (BM25F), English stemming, CJK character bigrams",
            "index_format": FORMAT_VERSION,
            "query_syntax": ["words", "\"quoted phrases\"", "field:value", "AND", "OR", "NOT",
                             "( )", "prefix*"],
            "query_fields": sorted(FIELD_ALIASES),
            "filters": ["types", "exclude_types", "include_superseded", "include_sensitive",
                        "min_score", "scopes"],
            "scores": "relevance in [0, 1]; not comparable across queries",
            "semantic": False,
        },
        "read_views": list(READ_VIEWS),
        "limits": {"search_default": DEFAULT_LIMIT, "search_max": MAX_LIMIT,
                   "snippet_chars": SNIPPET_CHARS},
        "page_types": list(vocab.PAGE_TYPES),
        "lifecycle_statuses": list(vocab.LIFECYCLE_STATUSES),
        "relation_types": list(vocab.RELATION_TYPES),
        "ingest": {"supported": True,
                   "how": "`pcp import` (ChatGPT, Claude, Markdown folders, PCP v1 archives); "
                          "events are immutable and idempotent by key"},
        "conflict_detection": {"supported": True,
                               "how": "expected_revision_id on revise; diverged heads reported"},
        "durable_deletion": {"supported": True,
                             "how": "`pcp delete` removes the head file, every revision and "
                                    "relation from the folder; copies already in git history "
                                    "or on other devices are not rewritten"},
        "suppression": "per MCP session",
        "operations": ["DescribeCapabilities", "ListScopes", "SearchPages", "ReadPages",
                       "WritePage", "RevisePage", "LinkPages", "IngestEvent", "SuppressPages",
                       "TombstonePage", "DeletePage"],
    }
