"""Timeline events: how one is added (its partial date checked), and the timeline read.

(Named for the page type, `timeline_event`: `api.timeline` is the read function.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pcp_cli.api.checks import check_enum, given_id
from pcp_cli.api.queries import stamp_as_of
from pcp_cli.errors import UsageError
from pcp_cli.model import vocab
from pcp_cli.model.page import Actor, title_from
from pcp_cli.query.asof import view as as_of_view
from pcp_cli.store.kept import kept_while
from pcp_cli.store.store import Store, WriteResult


def add_timeline_event(
    store: Store,
    date: str,
    summary: str,
    *,
    category: str = "other",
    source: str = "user_stated",
    confidence: float | None = None,
    page_id: str | None = None,
    namespace: str | None = None,
    actor: Actor | None = None,
    extensions: dict[str, Any] | None = None,
    idempotency_key: str | None = None,
) -> WriteResult:
    import re

    from pcp_cli.model.dates import date_problem

    problem = date_problem(date)
    if problem is None and (not re.match(vocab.PARTIAL_DATE_PATTERN, date)
                            or not _valid_partial_date(date)):
        problem = "is not YYYY, YYYY-MM or YYYY-MM-DD"
    if problem is not None:
        raise UsageError(f"the date {date} {problem}", hint="a date is YYYY, YYYY-MM or "
                         "YYYY-MM-DD, e.g. 2024-02-29")
    check_enum("category", category, vocab.TIMELINE_CATEGORIES)
    check_enum("source", source, vocab.KEYSTONE_SOURCES)
    if confidence is not None and not 0 <= confidence <= 1:
        raise UsageError(f"confidence must be between 0 and 1, not {confidence}")
    if not summary.strip():
        raise UsageError("a timeline event needs a summary")
    record: dict[str, Any] = {"date": date, "category": category, "source": source}
    if confidence is not None:
        record["confidence"] = confidence
    state = store.new_state(
        summary,
        page_id=given_id(page_id),
        type="timeline_event",
        title=title_from(summary),
        namespace=store.default_namespace if namespace is None else namespace,
        origin=vocab.ORIGIN_FOR_SOURCE[source],
        record=record,
        extensions=dict(extensions or {}),
    )
    return store.write_page(state, actor=actor, idempotency_key=idempotency_key)


def _valid_partial_date(value: str) -> bool:
    from datetime import date

    parts = [int(p) for p in value.split("-")]
    try:
        date(parts[0], parts[1] if len(parts) > 1 else 1, parts[2] if len(parts) > 2 else 1)
    except ValueError:
        return False
    return True


def timeline(store: Store, *, from_: str | None = None, to: str | None = None,
             query: str | None = None, limit: int | None = None,
             scopes: Sequence[str] | None = None,
             suppressed: frozenset[str] = frozenset(), cursor: str | None = None,
             as_of: str | None = None, include_sensitive: bool = False,
             include_unclassified: bool = True) -> dict[str, Any]:
    """`pcp timeline list` / `pcp_get_timeline`: `{schema_version, count, filters_applied,
    events, next_cursor}`, v1 timeline_event objects ordered by (partial) date. Sensitivity as
    in `search`: `high` only with `include_sensitive`; unclassified events unless
    `include_unclassified` is False (an AI client's read)."""
    from pcp_cli.query.search import catalog_sensitivities
    from pcp_cli.query.timeline import check_request, collect_kept
    from pcp_cli.query.timeline import timeline as run

    sensitivities = catalog_sensitivities(include_sensitive, include_unclassified)

    view = as_of_view(store, as_of)
    collected = None
    if isinstance(view, Store):  # kept while the timeline events' catalog rows are unchanged
        check_request(from_, to, limit)
        chosen = (None if scopes is None else tuple(scopes),
                  None if sensitivities is None else tuple(sensitivities))
        collected = kept_while(view, ("timeline", *chosen), ("timeline_event",),
                                lambda: collect_kept(view, scopes=scopes,
                                                     sensitivities=sensitivities))
    data = run(view, from_=from_, to=to, query=query, limit=limit,
               scopes=scopes, suppressed=suppressed, cursor=cursor,
               include_sensitive=include_sensitive,
               include_unclassified=include_unclassified, collected=collected)
    data["filters_applied"]["as_of"] = stamp_as_of(as_of)
    return data
