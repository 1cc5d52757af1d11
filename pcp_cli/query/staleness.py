"""Stale labelling, not stale hiding (Portable Context Protocol v1.2 §3.2.2, §4.2).

A search result whose keystone is past its `stale_after` carries `stale: true` (and, for every
dated keystone, `extensions["org.pcp-cli"]["stale_after"]`); it is served, labelled, unless the
caller opts in to `exclude_stale`, which leaves stale keystones out before ranking, like every
other filter. `filters_applied` says which ran and against which day.

Only keystones carry a staleness date (a timeline event records something that happened: it does
not decay), so the dated pages are looked up in the catalog by one query over the keystone rows.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from pcp_cli.model import staleness, vocab

LABELLING = "where_dated: keystones with a stale_after date are labelled stale on and after it"


# What `dated` found, per store, while the catalog is unchanged: one query over every keystone
# row costs ~16-55 ms at 11,000 keystones (100,000 pages; 2 cores under load), more than a
# search's own work, so it runs once per catalog state: kept in this process (the MCP server)
# and in `.pcp/` for the next one (the CLI).
KEPT = "stale-after.json"
_MEMO: dict[str, tuple[list[Any], dict[str, str]]] = {}
_MEMO_LOCK = threading.Lock()


def dated(current: Any) -> dict[str, str]:
    """page id -> stale_after of every keystone of the store (or a view of it) that has one."""
    from pcp_cli.store import kept
    from pcp_cli.store.store import Store

    if not isinstance(current, Store) or not current.has_catalog():
        # a view as of a past moment, or a fresh clone's peek: its entries
        raw = {e.page_id: e.record.get(staleness.KEY)
               for e in current.entries(types=("keystone",), statuses=None, review=None)
               if e.page_id}
        return _valid(raw)
    catalog = current.catalog
    key = [catalog.identity(), catalog.seq()]
    path = current.layout.local / KEPT
    with _MEMO_LOCK:
        memo = _MEMO.get(str(path))
    if memo is not None and memo[0] == key:
        return memo[1]
    found = kept.read(path, key)
    if not isinstance(found, dict):
        found = _valid(catalog.record_values("keystone", staleness.KEY))
        kept.keep(path, key, found)
    with _MEMO_LOCK:
        _MEMO[str(path)] = (key, found)
    return found


def _valid(raw: dict[str, Any]) -> dict[str, str]:
    return {pid: value for pid, value in raw.items() if staleness.problem(value) is None}


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
