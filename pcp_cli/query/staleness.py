"""Stale labelling, not stale hiding (Portable Context Protocol v1.2 §3.2.2, §4.2).

A search result whose keystone is past its `stale_after` carries `stale: true` (and, for every
dated keystone, `extensions["org.pcp-cli"]["stale_after"]`); it is served, labelled, unless the
caller opts in to `exclude_stale`, which leaves stale keystones out before ranking, like every
other filter. `filters_applied` says which ran and against which day.

Only keystones carry a staleness date (a timeline event records something that happened: it does
not decay), so the dated pages are looked up in the catalog by one query over the keystone rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pcp_cli.model import staleness, vocab

LABELLING = "where_dated: keystones with a stale_after date are labelled stale on and after it"


def dated(current: Any) -> dict[str, str]:
    """page id -> stale_after of every keystone of the store (or a view of it) that has one."""
    catalog = getattr(current, "catalog", None)
    if catalog is not None and hasattr(catalog, "record_values"):
        raw = catalog.record_values("keystone", staleness.KEY)
    else:  # a view as of a past moment: its entries
        raw = {e.page_id: e.record.get(staleness.KEY)
               for e in current.entries(types=("keystone",), statuses=None, review=None)
               if e.page_id}
    return {pid: value for pid, value in raw.items()
            if staleness.problem(value) is None}


def stale_ids(dates: dict[str, str], on: str) -> frozenset[str]:
    """The pages of `dates` that are stale on day `on`."""
    return frozenset(pid for pid, date in dates.items() if date <= on)


def label(results: Iterable[dict[str, Any]], dates: dict[str, str], on: str) -> int:
    """Mark each result whose keystone is stale on `on` (`stale: true`, v1.2 §3.4) and note every
    dated keystone's date under pcp's extension key; returns how many are stale."""
    count = 0
    for result in results:
        date = dates.get(result.get("id"))  # type: ignore[arg-type]
        if date is None:
            continue
        ext = result.setdefault("extensions", {}).setdefault(vocab.EXT_NS, {})
        ext["stale_after"] = date
        if date <= on:
            result["stale"] = True
            count += 1
    return count


def report(filters: dict[str, Any], *, exclude_stale: bool, on: str, labelled: int) -> None:
    """What filters_applied says of staleness (never how many stale pages were left out: a
    count of pages the caller may not see is itself a leak)."""
    filters.update(
        exclude_stale=exclude_stale,
        stale_labeling=LABELLING,
        stale_as_of=on,
        stale_results=labelled,
    )
