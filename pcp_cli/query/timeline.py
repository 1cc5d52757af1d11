"""`pcp timeline list` / `pcp_get_timeline`: timeline_event objects ordered by date.

Dates may be partial (YYYY, YYYY-MM, YYYY-MM-DD). Each date stands for a span of days: `2024`
is the whole year. An event is inside `--from A --to B` when its span overlaps the span from
the first day of A to the last day of B, so `2024` falls within `--from 2024-01 --to 2024-12`
and `2024-06-15` within `--from 2024`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pcp_cli.errors import UsageError
from pcp_cli.model import scopes as scope_rule

if TYPE_CHECKING:
    from pcp_cli.store.store import Store

_DATE = re.compile(r"^[0-9]{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12][0-9]|3[01]))?)?$")


def first_day(date: str) -> str:
    return date + "-01-01"[len(date) - 4:] if len(date) < 10 else date


def last_day(date: str) -> str:
    # "31" is not a real day of every month, but as a string it sorts after every real one.
    return date + "-12-31"[len(date) - 4:] if len(date) < 10 else date


def _check_date(name: str, value: str | None) -> None:
    from pcp_cli.model.dates import date_problem

    if value is None:
        return
    problem = date_problem(value)
    if problem is not None or not _DATE.match(value):
        raise UsageError(f"{name} {value} {problem or 'is not a date'}",
                         hint="use YYYY, YYYY-MM or YYYY-MM-DD, e.g. --from 2024-01")


def in_range(date: str, from_: str | None, to: str | None) -> bool:
    if from_ is not None and last_day(date) < first_day(from_):
        return False
    return not (to is not None and first_day(date) > last_day(to))


def timeline(store: Store, *, from_: str | None = None, to: str | None = None,
             query: str | None = None, limit: int | None = None,
             scopes: Sequence[str] | None = None,
             suppressed: frozenset[str] = frozenset(),
             cursor: str | None = None,
             sensitivities: Sequence[str | None] | None = None) -> dict[str, Any]:
    """`{schema_version, count, filters_applied, events}`: current, affirmed timeline events in
    the caller's scopes, oldest first (ties by id). `query` keeps the events whose summary or
    category contains every word of it (case-insensitive); `limit` keeps the first N;
    `sensitivities` (None in it: unclassified) keeps only those, in the catalog query."""
    from pcp_cli.render.portable import timeline_object

    _check_date("--from", from_)
    _check_date("--to", to)
    if from_ and to and first_day(from_) > last_day(to):
        raise UsageError(f"--from {from_} is after --to {to}")
    if limit is not None and (isinstance(limit, bool) or limit < 1):
        raise UsageError(f"the limit must be at least 1, not {limit}")
    words = [w.casefold() for w in (query or "").split()]
    events: list[dict[str, Any]] = []
    for entry in store.entries(types=("timeline_event",), statuses=("active",),
                               sensitivities=sensitivities):
        if entry.page_id in suppressed or not scope_rule.in_scopes(entry.namespace, scopes):
            continue
        date = entry.record.get("date")
        if not isinstance(date, str) or not _DATE.match(date):
            continue  # `pcp validate` reports it; a timeline without it is still useful
        if not in_range(date, from_, to):
            continue
        assert entry.page_id is not None
        event = timeline_object(store.current(entry.page_id).state)
        haystack = f"{event['summary']} {event.get('category', '')}".casefold()
        if any(w not in haystack for w in words):
            continue
        events.append(event)
    from pcp_cli.query import cursor as cursors

    events.sort(key=lambda e: (first_day(e["date"]), len(e["date"]), e["id"]))
    total = len(events)
    request = {"from": from_, "to": to, "query": query, "limit": limit,
               "scopes": None if scopes is None else sorted(scopes),
               "suppressed": sorted(suppressed), "as_of": getattr(store, "as_of", None)}
    position = cursors.decode(cursor, "timeline", request, store)
    events, next_cursor = cursors.page(events, position, limit or max(total, 1), "timeline",
                                       request, store)
    filters: dict[str, Any] = {
        "from": from_, "to": to, "date_matching": "overlap_of_partial_dates",
        "query": query, "query_matching": "all_words_substring" if query else None,
        "limit": limit, "matched": total, "offset": position, "current_only": True,
        "review_status": "affirmed_only",
        "scopes": None if scopes is None else list(scopes),
    }
    if suppressed:
        filters["suppressed"] = len(suppressed)
    return {"schema_version": "1.0", "count": len(events), "filters_applied": filters,
            "events": events, "next_cursor": next_cursor}
