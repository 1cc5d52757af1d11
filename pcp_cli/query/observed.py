"""The one answer to "when was this page observed?" (as opposed to when it was stored).

Temporal search, the `--from/--to` window and `observed_from/observed_to` filters all ask
`observed_time()`, and nothing else in the query layer decides it. A page's observed time is the
time of what it records (a conversation's own time, a dated event, a keystone's stated date);
its storage time (`created_at` of a revision) stands in only for material made in the store (the
person's own writes); see `pcp_cli.model.page.observed_time`, which this delegates to.
"""

from __future__ import annotations

from typing import Any

# Record keys that state when the recorded thing happened (model.page.source_time has the
# per-type order: a conversation's updated_at/started_at, a note's updated_at/created_at).
OBSERVED_KEYS = ("observed_at", "date", "created_at", "updated_at", "started_at")


def observed_time(record: dict[str, Any], stored_at: str | None, *,
                  page_type: str | None = None, origin: str | None = None) -> str | None:
    """The observed time of a page: `pcp_cli.model.page.observed_time`, the one accessor.

    An ISO 8601 string, possibly partial (`2024-06` for a timeline event), compared as text;
    None for imported material whose source gave no time (storage time never stands in).
    """
    from pcp_cli.model.page import observed_time as accessor

    value = accessor(page_type, record, origin, stored_at)
    return value if value and value[:4].isdigit() else None


def entry_observed(entry: Any) -> str | None:
    """`observed_time` of a catalog entry (or an as-of entry)."""
    return observed_time(entry.record or {}, entry.created_at, page_type=entry.type,
                         origin=entry.origin)


def in_window(observed: str | None, start: str | None, end: str | None) -> bool:
    """Is a (possibly partial) observed time inside [start, end]? Partial times are spans:
    `2024` overlaps a window that starts in June 2024. An unknown time is outside any window."""
    if start is None and end is None:
        return True
    if not observed:
        return False
    low, high = observed, observed + "\uffff"
    if start is not None and high < start:
        return False
    return not (end is not None and low[: len(end)] > end)
