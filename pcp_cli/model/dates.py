"""Partial dates (YYYY, YYYY-MM, YYYY-MM-DD) as people type them, and why one is wrong."""

from __future__ import annotations

import calendar
import re

_SHAPE = re.compile(r"^([0-9]{4})(?:-([0-9]{2})(?:-([0-9]{2}))?)?$")


def date_problem(value: str) -> str | None:
    """None for a real partial date; else what is wrong, in words: `2024-02-30` -> "is
    impossible: February 2024 has 29 days"; `24-1-1` -> "is not YYYY, YYYY-MM or YYYY-MM-DD"."""
    match = _SHAPE.match(value)
    if match is None:
        return "is not YYYY, YYYY-MM or YYYY-MM-DD"
    year, month, day = (int(part) if part else None for part in match.groups())
    assert year is not None
    if year == 0:
        return "is impossible: there is no year 0"
    if month is not None and not 1 <= month <= 12:
        return f"is impossible: there is no month {month}"
    if month is not None and day is not None:
        days = calendar.monthrange(year, month)[1]
        if not 1 <= day <= days:
            return (f"is impossible: {calendar.month_name[month]} {year} has {days} days"
                    if day else "is impossible: there is no day 0")
    return None
