"""Search and the other reads of `pcp_cli/query/`: related pages, diffs, stats, scopes and
capabilities. How a search runs: `pcp_cli.query.pages` (the request, the safeguards, the
engines).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pcp_cli.model.search_request import SearchRequest
from pcp_cli.query.asof import view as as_of_view
from pcp_cli.store.store import Store
from pcp_cli.upkeep.damage import refuse_damaged


def search(store: Store, request: SearchRequest | str, /, **options: Any) -> dict[str, Any]:
    """SearchPages (`pcp search` / `pcp_search`): `{schema_version, query, count,
    filters_applied, results, next_cursor}` for a `SearchRequest`
    (pcp_cli/model/search_request.py: every option, checked when the request is made), or for
    a query and the request's options as keywords (`mode` then defaults to "text").

    A keystone past its `stale_after` is served labelled `stale: true` (v1.2 §4.2), or left
    out before ranking with `exclude_stale`.

    The §4.2 safeguards run here: limit 10 by default, capped at 25 (the cap is reported);
    current, affirmed pages only unless `include_superseded` or `filters.lifecycle_status`;
    `high` sensitivity only with `include_sensitive`; pages never classified included
    (labelled) unless `include_unclassified` is False (an AI client's read: then only with
    `include_sensitive`, as a `high` page); scopes (None = all, [] = none), types and every
    filter applied before ranking; `suppressed` page ids never returned nor counted.
    """
    from pcp_cli.query.pages import search_pages

    request = search_request(request, **options)
    refuse_damaged(store)  # a replaced folder is damage, never "no results"
    return search_pages(store, request)


def search_request(request: SearchRequest | str, /, **options: Any) -> SearchRequest:
    """`request` as a SearchRequest: itself, or one made of a query and keyword options
    (`mode` "text" unless given). Raises UsageError for an option that is not valid."""
    if isinstance(request, SearchRequest):
        if options:
            return request.replace(**options)
        return request
    options.setdefault("mode", "text")
    return SearchRequest(request, **options)


def search_before_index(store: Store, request: SearchRequest) -> dict[str, Any] | None:
    """`pcp search` on a large store with no index yet (a fresh clone): start the build in the
    background and answer from a bounded, unranked scan of the files, with every safeguard of
    `search` (see pcp_cli.query.first_answer). None when the usual `search` should run; the
    store need not be refreshed first (refresh it before that `search`)."""
    from pcp_cli.query.index_sync import index_missing as missing

    if not missing(store):  # the usual case: no need to load the scan's code
        return None
    from pcp_cli.query.first_answer import answer

    return answer(store, request)


def related(store: Store, page_id: str, *, types: Sequence[str] = (), depth: int = 1,
            scopes: Sequence[str] | None = None, include_superseded: bool = False,
            include_sensitive: bool = False, suppressed: frozenset[str] = frozenset(),
            as_of: str | None = None, include_unclassified: bool = True) -> dict[str, Any]:
    """`pcp related`: the pages PAGE's relations reach within `depth` steps, both directions.
    `include_unclassified=False` treats pages without a sensitivity as high (MCP clients)."""
    from pcp_cli.query.related import related as run

    return run(as_of_view(store, as_of), page_id, types=types, depth=depth, scopes=scopes,
               include_superseded=include_superseded, include_sensitive=include_sensitive,
               include_unclassified=include_unclassified, suppressed=suppressed)


def stats(store: Store, *, scopes: Sequence[str] | None = None,
          suppressed: frozenset[str] = frozenset(), as_of: str | None = None,
          statuses: Sequence[str] | None = None, include_sensitive: bool = False,
          include_unclassified: bool = True) -> dict[str, Any]:
    """`pcp stats` / `pcp_stats`: counts by type, origin, namespace, lifecycle + time range
    (of pages in `statuses` only, when given), counted in SQL, with the `filters_applied` of
    what was counted. Sensitivity as in `search` and `timeline`."""
    from pcp_cli.query.stats import stats as run

    data = run(as_of_view(store, as_of), scopes=scopes, suppressed=suppressed,
               statuses=statuses, include_sensitive=include_sensitive,
               include_unclassified=include_unclassified)
    data["filters_applied"]["as_of"] = stamp_as_of(as_of)
    return data


def stamp_as_of(as_of: str | None) -> str | None:
    from pcp_cli.query.asof import parse_as_of

    return None if as_of is None else parse_as_of(as_of)


def offered_operations(names: Sequence[str], *, front_end: str) -> list[str]:
    """The protocol operations a front end really offers, from its own command names
    (`front_end="cli"`) or tool names (`"mcp"`): capabilities never claim more."""
    from pcp_cli.query.stats import OPERATION_COMMANDS, OPERATION_TOOLS, operations_offered

    return operations_offered(names, OPERATION_TOOLS if front_end == "mcp"
                              else OPERATION_COMMANDS)
