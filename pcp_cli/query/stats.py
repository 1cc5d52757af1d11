"""`pcp stats` / `pcp_stats`, `pcp scopes` / ListScopes, `pcp capabilities` /
DescribeCapabilities. All from the catalog: no page file is opened.

Only affirmed pages are counted (a proposal waiting for review is not part of the read
surface), only in the caller's scopes, and never the caller's suppressed pages: a count of what
the caller may not see would itself say something about it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from pcp_cli.errors import UsageError
from pcp_cli.model import scopes as scope_rule
from pcp_cli.model import vocab
from pcp_cli.store.catalog import Entry

if TYPE_CHECKING:
    from pcp_cli.store.store import Store


# One group of entries: (namespace, type, origin, lifecycle_status, count), as
# `Catalog.groups` counts them.
Group = tuple[Any, ...]


def _groups(store: Store, scopes: Sequence[str] | None, suppressed: frozenset[str],
            statuses: Sequence[str] | None = None,
            sensitivities: Sequence[str | None] | None = None) -> list[Group]:
    """The affirmed entries the caller may see, counted by group: in SQL on a store (no Entry
    is built, whatever the store's size), from the entries on a view as of a past moment."""
    from pcp_cli.store.store import Store as RealStore

    if isinstance(store, RealStore):
        found = store.entry_groups(statuses=statuses, sensitivities=sensitivities,
                                   exclude=suppressed)
    else:
        found = _count(e for e in store.entries(statuses=statuses, sensitivities=sensitivities)
                       if e.page_id not in suppressed)
    return [g for g in found if scope_rule.in_scopes(g[0], scopes)]


def _count(entries: Iterable[Entry]) -> list[Group]:
    """`Catalog.groups` over entries in memory."""
    groups: Counter[tuple[Any, ...]] = Counter(
        (e.namespace, e.type, e.origin, e.lifecycle_status) for e in entries)
    return [(*key, n) for key, n in groups.items()]


def stats(store: Store, *, scopes: Sequence[str] | None = None,
          suppressed: frozenset[str] = frozenset(),
          statuses: Sequence[str] | None = None, include_sensitive: bool = False,
          include_unclassified: bool = True) -> dict[str, Any]:
    """`{schema_version, total, by_type, by_origin, by_namespace, by_lifecycle,
    time_range: {earliest, latest}, counted, filters_applied}` over every affirmed page the
    caller may see, in any lifecycle state (or only `statuses`: an MCP client never counts a
    tombstoned page it may not read); `high` pages only with `include_sensitive`, unclassified
    ones with it or `include_unclassified`, as a search serves them; the time range spans the
    pages' observed times (when what they record happened: an imported conversation's own
    time, not the import's; `query.observed`), not their storage times. `filters_applied` says
    what was counted."""
    from pcp_cli.query.search import catalog_sensitivities, sensitivity_report

    sensitivities = catalog_sensitivities(include_sensitive, include_unclassified)
    counters = {key: Counter[str]() for key in ("by_type", "by_origin", "by_namespace",
                                               "by_lifecycle")}
    total = 0
    for namespace, type_, origin, lifecycle, count in _groups(
            store, scopes, suppressed, statuses, sensitivities):
        total += count
        counters["by_type"][type_ or "unknown"] += count
        counters["by_origin"][origin if origin in vocab.ORIGINS else "generated"] += count
        counters["by_namespace"][namespace or "unknown"] += count
        counters["by_lifecycle"][lifecycle or "unknown"] += count
    times = _observed_range(store, scopes, suppressed, statuses, sensitivities)
    from pcp_cli.render.versions import protocols

    return {
        "schema_version": "1.0",
        "total": total,
        **{key: dict(sorted(counter.items())) for key, counter in counters.items()},
        "time_range": {"earliest": min(times, default=None), "latest": max(times, default=None)},
        "counted": STATS_COUNTED,
        "filters_applied": {
            "lifecycle_statuses": "all" if statuses is None else list(statuses),
            "review_status": "affirmed_only",
            **sensitivity_report(include_sensitive, include_unclassified),
            "scopes": None if scopes is None else list(scopes),
            **({"suppressed": len(suppressed)} if suppressed else {}),
        },
        "protocols": protocols(),
    }


# Why a namespace's count in stats and in ListScopes differ, said in both answers.
STATS_COUNTED = ("affirmed pages in every lifecycle state the caller may read (by_lifecycle "
                 "splits them); a scope's `pages` in ListScopes counts only the active ones")
SCOPES_COUNTED = ("pages: the active (current) affirmed pages of each namespace the caller may "
                  "read; stats' by_namespace also counts superseded and archived ones")


def _observed_range(store: Store, scopes: Sequence[str] | None, suppressed: frozenset[str],
                    statuses: Sequence[str] | None,
                    sensitivities: Sequence[str | None] | None) -> list[str]:
    """The observed times bounding what `_groups` counts (in SQL on a store)."""
    from pcp_cli.query.observed import entry_observed
    from pcp_cli.store.store import Store as RealStore

    if isinstance(store, RealStore):
        found = store.observed_ranges(statuses=statuses, sensitivities=sensitivities,
                                      exclude=suppressed)
        return [t for namespace, *pair in found if scope_rule.in_scopes(namespace, scopes)
                for t in pair if t]
    return [t for e in store.entries(statuses=statuses, sensitivities=sensitivities)
            if e.page_id not in suppressed and scope_rule.in_scopes(e.namespace, scopes)
            and (t := entry_observed(e))]


def display_name(namespace: str) -> str:
    """A readable name for a namespace: `project:formal-math` -> `formal-math (project)`."""
    kind, _, rest = namespace.partition(":")
    return f"{rest} ({kind})" if rest else namespace


def list_scopes(store: Store, *, scopes: Sequence[str] | None = None,
                permissions: Callable[[str], dict[str, bool]] | None = None,
                limit: int | None = None, cursor: str | None = None,
                suppressed: frozenset[str] | None = None,
                sensitivities: Sequence[str | None] | None = None) -> dict[str, Any]:
    """ListScopes: `{scopes: [{namespace, display_name, owner_id, visibility, permissions,
    pages, last_activity}], next_cursor}` for every namespace the caller may see that holds an
    affirmed page; `pages` counts its current (active) pages, `last_activity` is its newest
    revision time, `permissions` what the caller may do there (read, write, see
    high-sensitivity pages; the store's owner on the CLI may do all three). Sorted by
    namespace; `limit` and `cursor` page through them. Counted for one reader when
    `suppressed` is given (an MCP client): `pages` and `last_activity` (newest `updated_at`)
    are of the active pages it can read, of `sensitivities` only, without `suppressed`. One
    SQL pass over the catalog either way."""
    from pcp_cli.query import cursor as cursors

    if limit is not None and (isinstance(limit, bool) or limit < 1):
        raise UsageError(f"the limit must be at least 1, not {limit}")
    reader = suppressed is not None
    rows: dict[str, dict[str, Any]] = {}
    for found, active, activity, readable, updated in store.namespace_counts(
            sensitivities=sensitivities, exclude=suppressed or ()):
        if not scope_rule.in_scopes(found, scopes):
            continue
        namespace = found or store.default_namespace
        row = rows.setdefault(namespace, {
            "namespace": namespace, "display_name": display_name(namespace),
            "owner_id": store.owner_id,
            # pcp stores only private pages today (visibility is not yet settable).
            "visibility": "private",
            "permissions": (permissions or _owner)(namespace),
            "pages": 0, "last_activity": None})
        row["pages"] += readable if reader else active
        stamp = updated if reader else activity
        if stamp and (row["last_activity"] is None or stamp > row["last_activity"]):
            row["last_activity"] = stamp
    ordered = [rows[k] for k in sorted(rows)]
    request = {"scopes": None if scopes is None else sorted(scopes), "limit": limit}
    position = cursors.decode(cursor, "scopes", request, store)
    chunk, next_cursor = cursors.page(ordered, position, limit or max(len(ordered), 1),
                                      "scopes", request, store)
    return {"scopes": chunk, "next_cursor": next_cursor, "counted": SCOPES_COUNTED}


def _owner(namespace: str) -> dict[str, bool]:
    return {"read": True, "write": True, "sensitive": True}


# The protocol operations, and the CLI command / MCP tool that performs each. Capabilities name
# an operation only when the front end asking really has its command or tool.
OPERATION_COMMANDS = {
    "DescribeCapabilities": "capabilities", "ListScopes": "scopes", "SearchPages": "search",
    "ReadPages": "show", "WritePage": "add", "RevisePage": "revise", "LinkPages": "link",
    "IngestEvent": "ingest", "TombstonePage": "tombstone", "DeletePage": "delete",
}
OPERATION_TOOLS = {
    "DescribeCapabilities": "pcp_describe_capabilities", "ListScopes": "pcp_list_scopes",
    "SearchPages": "pcp_search", "ReadPages": "pcp_read_pages", "WritePage": "pcp_write_page",
    "RevisePage": "pcp_revise_page", "LinkPages": "pcp_link_pages",
    "IngestEvent": "pcp_ingest_event", "SuppressPages": "pcp_suppress_pages",
    "TombstonePage": "pcp_tombstone_page",
}


def operations_offered(names: Iterable[str], table: dict[str, str]) -> list[str]:
    """The operations whose command (or tool) is among `names`, in the protocol's order."""
    have = set(names)
    return [op for op, name in table.items() if name in have]


def capabilities(store: Store, *, operations: Sequence[str] | None = None) -> dict[str, Any]:
    """DescribeCapabilities: what this store supports, derived from the code that does it (the
    mode list, the filters, the read views, the vocabularies) so it cannot drift."""
    from pcp_cli.index import FORMAT_VERSION
    from pcp_cli.index.text import FIELD_ALIASES
    from pcp_cli.model.search_request import DEFAULT_LIMIT, FILTERS, MAX_LIMIT, MODES
    from pcp_cli.query.cursor import MAX_POSITION
    from pcp_cli.query.graph import MAX_DEPTH, MAX_PAGES
    from pcp_cli.query.pages import MATCH_CHANNELS, unavailable_modes
    from pcp_cli.query.search import READ_VIEWS, SNIPPET_CHARS
    from pcp_cli.render.versions import protocols

    data: dict[str, Any] = {
        "store_format": store.manifest.format,
        "store_id": store.manifest.store_id,
        "owner_id": store.owner_id,
        "default_namespace": store.default_namespace,
        "protocols": protocols(),
        "search": {
            "modes": [m for m in MODES if m not in unavailable_modes()],
            "unavailable_modes": list(unavailable_modes()),
            "match_channels": list(MATCH_CHANNELS),
            "engine": "whoosh (BM25F), English stemming, CJK character bigrams",
            "index_format": FORMAT_VERSION,
            "query_syntax": ["words", "\"quoted phrases\"", "field:value", "AND", "OR", "NOT",
                             "( )", "prefix*"],
            "query_fields": sorted(FIELD_ALIASES),
            "filters": list(FILTERS),
            "options": ["types", "exclude_types", "include_superseded", "include_sensitive",
                        "min_score", "scopes", "cursor", "as_of", "depth"],
            "scores": "relevance in [0, 1]; not comparable across queries",
            "observed_time": "record observed_at, date, created_at, updated_at or started_at "
            "by page type, else the page's creation for material made in the store",
            "semantic": _semantic(),
        },
        "read_views": list(READ_VIEWS),
        "as_of": {"supported": True,
                  "how": "the head revision of each page at that time, lifecycle included; "
                         "deleted pages are gone from every time"},
        "cursor": {"supported": True, "max_position": MAX_POSITION,
                   "how": "opaque; continues the same request on an unchanged store, refused "
                          "(stale_cursor) once the store changed"},
        "graph": {"max_depth": MAX_DEPTH, "max_pages": MAX_PAGES, "directions": "both"},
        "limits": {"search_default": DEFAULT_LIMIT, "search_max": MAX_LIMIT,
                   "snippet_chars": SNIPPET_CHARS},
        "page_types": list(vocab.PAGE_TYPES),
        "lifecycle_statuses": list(vocab.LIFECYCLE_STATUSES),
        "relation_types": list(vocab.RELATION_TYPES),
        "relation_types_open": {"pattern": vocab.RELATION_TYPE_PATTERN,
                                "example": "com.example.reviews"},
        "conflict_detection": {"supported": True,
                               "how": "expected_revision_id on revise; diverged heads reported"},
        "durable_deletion": {"supported": True,
                             "how": "`pcp delete` removes the head file, every revision and "
                                    "relation from the folder; copies already in git history "
                                    "or on other devices are not rewritten"},
        "suppression": "per MCP session",
    }
    if operations is not None:
        data["operations"] = list(operations)
    return data


def _semantic() -> dict[str, Any] | bool:
    """What the semantic channel is here (False without the extra), without loading it."""
    from pcp_cli.semantic import installed

    if not installed():
        return False
    from pcp_cli.query.semantic import RRF_K
    from pcp_cli.semantic.embedder import WordLlamaEmbedder

    return {"model": WordLlamaEmbedder.name, "dimensions": WordLlamaEmbedder.dim,
            "fusion": f"reciprocal rank fusion, k={RRF_K}", "vectors": ".pcp/vectors/"}
