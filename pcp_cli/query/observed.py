"""The one answer to "when was this page observed?" (as opposed to when it was stored).

Temporal search, the `--from/--to` window and `observed_from/observed_to` filters all ask
`observed_time()`, and nothing else in the query layer decides it. A page's observed time is the
time of what it records (a conversation's own time, a dated event, a keystone's stated date);
its storage time (`created_at` of a revision) is only the fallback for pages that carry none.
"""

from __future__ import annotations

from typing import Any

# Record keys that state when the recorded thing happened, most specific first.
OBSERVED_KEYS = ("observed_at", "date", "created_at")


def observed_time(record: dict[str, Any], stored_at: str | None) -> str | None:
    """The observed time of a page given its `record` and its page-creation (storage) time.

    An ISO 8601 string, possibly partial (`2024-06` for a timeline event), compared as text.
    """
    for key in OBSERVED_KEYS:
        value = record.get(key)
        if isinstance(value, str) and value[:4].isdigit():
            return value
    return stored_at


def entry_observed(entry: Any) -> str | None:
    """`observed_time` of a catalog entry (or an as-of entry)."""
    return observed_time(entry.record or {}, entry.created_at)


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
