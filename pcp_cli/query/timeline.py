"""`pcp timeline list` / `pcp_get_timeline`: timeline_event objects ordered by date.

Dates may be partial (YYYY, YYYY-MM, YYYY-MM-DD). Each date stands for a span of days: `2024`
is the whole year. An event is inside `--from A --to B` when its span overlaps the span from
the first day of A to the last day of B, so `2024` falls within `--from 2024-01 --to 2024-12`
and `2024-06-15` within `--from 2024`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pcp_cli.errors import PcpError, UsageError
from pcp_cli.model import scopes as scope_rule
from pcp_cli.store import kept

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


def check_request(from_: str | None, to: str | None, limit: int | None) -> None:
    _check_date("--from", from_)
    _check_date("--to", to)
    if from_ and to and first_day(from_) > last_day(to):
        raise UsageError(f"--from {from_} is after --to {to}")
    if limit is not None and (isinstance(limit, bool) or limit < 1):
        raise UsageError(f"the limit must be at least 1, not {limit}")


# One collected event: (page id, the date its catalog row gives, the v1 timeline_event, or
# the error reading it raised: raised when a request selects it, as it was before collecting).
Collected = tuple[str, str, Any]


def collect(store: Store, *, scopes: Sequence[str] | None = None,
            sensitivities: Sequence[str | None] | None = None) -> list[Collected]:
    """Every current, affirmed timeline event in `scopes` (of `sensitivities` only) with a
    valid date, in timeline order: what `timeline` selects from. It depends only on the
    catalog rows of timeline events and the revisions they name (so it may be kept while
    those rows are unchanged).

    Each event is built from its catalog row (the head file's fields and `detail`), not from
    its revision: a head file pcp rendered holds the revision's state, and reading every
    event's revisions was most of the command (1.3 s at 100,000 pages). A row edited by hand,
    unreadable, or written before the catalog kept `detail` is read from the page's current
    revision as before (and its `detail` kept for the next read)."""
    from pcp_cli.render.portable import timeline_event, timeline_object
    from pcp_cli.store.store import Store as RealStore

    if not isinstance(store, RealStore):  # a view as of a past moment: its own entries
        return _collect_entries(store, scopes, sensitivities)
    found: list[Collected] = []
    learned: list[tuple[str, str, Any]] = []
    loads = json.loads
    for path, page_id, revision_id, namespace, record, origin, detail, edited, problem in \
            store.entry_details("timeline_event", statuses=("active",),
                                sensitivities=sensitivities):
        if not scope_rule.in_scopes(namespace, scopes):
            continue
        fields = loads(record or "{}")
        date = fields.get("date")
        if not isinstance(date, str) or not _DATE.match(date):
            continue  # `pcp validate` reports it; a timeline without it is still useful
        event: Any
        if detail is not None and not edited and problem is None:
            kept = loads(detail)
            event = timeline_event(page_id, fields, kept["content"], origin, kept["extensions"])
        else:
            try:
                revision = store.current(page_id)
                event = timeline_object(revision.state)
            except PcpError as exc:
                event = exc
            else:
                if not edited and problem is None and revision.revision_id == revision_id:
                    learned.append((path, revision_id, {"content": revision.state.content,
                                                        "extensions": revision.state.extensions}))
        found.append((page_id, date, event))
    store.catalog.set_details(learned)
    return _ordered(found)


_KEPT = "timeline.json"  # under .pcp/: the last `collect`, with what it depends on


def collect_kept(store: Store, *, scopes: Sequence[str] | None = None,
                 sensitivities: Sequence[str | None] | None = None) -> list[Collected]:
    """`collect`, kept in `.pcp/timeline.json` for the next process while the timeline events'
    catalog rows (`Catalog.type_stamp`), the request and the code that builds the events are
    unchanged: one file read instead of building 6,000 events at 100,000 pages. Not kept while
    an event's head file holds an unrecorded edit or one could not be read."""
    key = _kept_key(store, scopes, sensitivities)
    path = store.layout.local / _KEPT if key is not None else None
    events = kept.read(path, key) if path is not None else None
    if isinstance(events, list):
        try:
            return [(str(e["id"]), str(e["date"]), e) for e in events]
        except (KeyError, TypeError):
            pass
    found = collect(store, scopes=scopes, sensitivities=sensitivities)
    if path is not None and all(isinstance(event, dict) for _p, _d, event in found):
        kept.keep(path, key, [event for _p, _d, event in found])
    return found


def _kept_key(store: Store, scopes: Sequence[str] | None,
              sensitivities: Sequence[str | None] | None) -> list[Any] | None:
    from pcp_cli import __version__
    from pcp_cli.render import portable  # noqa: F401 - its code is part of the key
    from pcp_cli.store.store import Store as RealStore

    if not isinstance(store, RealStore) or not store.has_catalog():
        return None
    count, newest, edited = store.catalog.type_stamp(("timeline_event",))
    if edited:
        return None
    stamps = kept.code_stamps(("pcp_cli.render.portable", __name__))
    if stamps is None:
        return None
    return [store.catalog.identity(), count, newest, None if scopes is None else sorted(scopes),
            None if sensitivities is None else list(sensitivities), __version__, *stamps]


def _collect_entries(store: Any, scopes: Sequence[str] | None,
                     sensitivities: Sequence[str | None] | None) -> list[Collected]:
    """`collect` on a view that has entries and revisions but no catalog rows."""
    from pcp_cli.render.portable import timeline_object

    found: list[Collected] = []
    for entry in store.entries(types=("timeline_event",), statuses=("active",),
                               sensitivities=sensitivities):
        if not scope_rule.in_scopes(entry.namespace, scopes):
            continue
        date = entry.record.get("date")
        if not isinstance(date, str) or not _DATE.match(date):
            continue
        assert entry.page_id is not None
        try:
            event: Any = timeline_object(store.current(entry.page_id).state)
        except PcpError as exc:
            event = exc
        found.append((entry.page_id, date, event))
    return _ordered(found)


def _ordered(found: list[Collected]) -> list[Collected]:
    found.sort(key=lambda c: (1, first_day(c[2]["date"]), len(c[2]["date"]), c[2]["id"])
               if isinstance(c[2], dict) else (0,))
    return found


def timeline(store: Store, *, from_: str | None = None, to: str | None = None,
             query: str | None = None, limit: int | None = None,
             scopes: Sequence[str] | None = None,
             suppressed: frozenset[str] = frozenset(),
             cursor: str | None = None,
             include_sensitive: bool = False, include_unclassified: bool = True,
             collected: Sequence[Collected] | None = None) -> dict[str, Any]:
    """`{schema_version, count, filters_applied, events}`: current, affirmed timeline events in
    the caller's scopes, oldest first (ties by id). `query` keeps the events whose summary or
    category contains every word of it (case-insensitive); `limit` keeps the first N;
    high-sensitivity events only with `include_sensitive`, unclassified ones with it or
    `include_unclassified`, as a search serves them (in the catalog query).
    `collected`: what `collect` gives for these scopes and sensitivities, when kept."""
    from pcp_cli.query.search import catalog_sensitivities, sensitivity_report

    check_request(from_, to, limit)
    words = [w.casefold() for w in (query or "").split()]
    if collected is None:
        collected = collect(store, scopes=scopes, sensitivities=catalog_sensitivities(
            include_sensitive, include_unclassified))
    events: list[dict[str, Any]] = []
    for page_id, date, event in collected:
        if page_id in suppressed or not in_range(date, from_, to):
            continue
        if isinstance(event, PcpError):
            raise event
        if words:
            haystack = f"{event['summary']} {event.get('category', '')}".casefold()
            if any(w not in haystack for w in words):
                continue
        events.append(event)
    from pcp_cli.query import cursor as cursors

    total = len(events)
    request = {"from": from_, "to": to, "query": query, "limit": limit,
               "include_sensitive": include_sensitive,
               "include_unclassified": include_unclassified,
               "scopes": None if scopes is None else sorted(scopes),
               "suppressed": sorted(suppressed), "as_of": getattr(store, "as_of", None)}
    position = cursors.decode(cursor, "timeline", request, store)
    events, next_cursor = cursors.page(events, position, limit or max(total, 1), "timeline",
                                       request, store)
    events = [_copied(e) for e in events]  # the collected events may be kept for the next call
    filters: dict[str, Any] = {
        "from": from_, "to": to, "date_matching": "overlap_of_partial_dates",
        "query": query, "query_matching": "all_words_substring" if query else None,
        "limit": limit, "matched": total, "offset": position, "current_only": True,
        "review_status": "affirmed_only",
        **sensitivity_report(include_sensitive, include_unclassified),
        "scopes": None if scopes is None else list(scopes),
    }
    if suppressed:
        filters["suppressed"] = len(suppressed)
    return {"schema_version": "1.0", "count": len(events), "filters_applied": filters,
            "events": events, "next_cursor": next_cursor}


def _copied(event: dict[str, Any]) -> dict[str, Any]:
    """A copy of an event that shares nothing with it: its values are strings and numbers but
    for `extensions` (a whole deepcopy of every event was a tenth of a second at 6,000; a
    deepcopy of each one's extensions still 90 ms at 6,000, where marshal's round trip of the
    same plain data, made in C, is a tenth of that)."""
    import marshal

    out = dict(event)
    if "extensions" in out:
        extensions = out["extensions"]
        if not extensions:
            out["extensions"] = {}
        else:
            try:
                out["extensions"] = marshal.loads(marshal.dumps(extensions))
            except ValueError:  # not plain data (marshal refuses it): the general copy
                import copy

                out["extensions"] = copy.deepcopy(extensions)
    return out
