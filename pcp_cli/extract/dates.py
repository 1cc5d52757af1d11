"""The date a sentence gives for what it tells: YYYY, YYYY-MM or YYYY-MM-DD, or None.

Explicit dates ("in March 2024", "on 12 May 2023", "2024-06", "since 2021") are read as they
stand. Relative ones ("last year", "two years ago", "in June", "recently") are read against the
date of the turn they were written in, and only when the page gives that date.
"""

from __future__ import annotations

import re

MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August",
               "September", "October", "November", "December")
MONTHS = {name: i + 1 for i, name in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"))}
MONTHS.update({name[:3]: number for name, number in list(MONTHS.items())})
MONTHS["sept"] = 9
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|" \
         r"december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_YEAR = r"((?:19|20)[0-9]{2})"
_NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10}

_ISO = re.compile(r"\b" + _YEAR + r"-([01][0-9])(?:-([0-3][0-9]))?\b")
_MONTH_DAY_YEAR = re.compile(r"\b" + _MONTH + r"\s+([0-3]?[0-9])(?:st|nd|rd|th)?,?\s+" + _YEAR
                             + r"\b", re.I)
_DAY_MONTH_YEAR = re.compile(r"\b([0-3]?[0-9])(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r",?\s+"
                             + _YEAR + r"\b", re.I)
_MONTH_YEAR = re.compile(r"\b" + _MONTH + r"\s+(?:of\s+)?" + _YEAR + r"\b", re.I)
_YEAR_ALONE = re.compile(r"\b(?:in|since|from|around|back in|during|by|early|late|mid|of|"
                         r"summer|winter|spring|autumn|fall)\s+(?:of\s+)?" + _YEAR + r"\b", re.I)
_AGO = re.compile(r"\b(a|one|two|three|four|five|six|seven|eight|nine|ten|[0-9]{1,2})\s+"
                  r"(years?|months?)\s+ago\b", re.I)
_IN_MONTH = re.compile(r"\b(?:in|since|last)\s+" + _MONTH + r"(?!\s*[0-9])", re.I)
_RECENT = re.compile(r"\b(?:just|recently|last week|this week|a few (?:days|weeks) ago|"
                     r"this month|yesterday)\b", re.I)


def _check(year: int, month: int | None = None, day: int | None = None) -> str | None:
    from datetime import date

    try:
        date(year, month or 1, day or 1)
    except ValueError:
        return None
    if month is None:
        return f"{year:04d}"
    if day is None:
        return f"{year:04d}-{month:02d}"
    return f"{year:04d}-{month:02d}-{day:02d}"


def _shift_month(year: int, month: int, back: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) - back
    return index // 12, index % 12 + 1


def date_in(text: str, when: str | None = None, *, future: bool = False
            ) -> tuple[str | None, bool]:
    """(the date `text` gives, whether it was relative to `when`, the turn's YYYY-MM-DD).
    `future`: the text tells of something to come ("we're moving in September"), so a month
    named without a year is the next one of that name."""
    if m := _ISO.search(text):
        return _check(int(m.group(1)), int(m.group(2)),
                      int(m.group(3)) if m.group(3) else None), False
    if m := _MONTH_DAY_YEAR.search(text):
        return _check(int(m.group(3)), MONTHS[m.group(1).lower()], int(m.group(2))), False
    if m := _DAY_MONTH_YEAR.search(text):
        return _check(int(m.group(3)), MONTHS[m.group(2).lower()], int(m.group(1))), False
    if m := _MONTH_YEAR.search(text):
        return _check(int(m.group(2)), MONTHS[m.group(1).lower()]), False
    if m := _YEAR_ALONE.search(text):
        return _check(int(m.group(1))), False
    if not when or not re.match(r"^[0-9]{4}-[0-9]{2}", when):
        return None, False
    year, month = int(when[:4]), int(when[5:7])
    lowered = text.lower()
    if m := _AGO.search(text):
        count = _NUMBERS.get(m.group(1).lower()) or int(m.group(1))
        if m.group(2).lower().startswith("year"):
            return _check(year - count), True
        return _check(*_shift_month(year, month, count)), True
    if "last year" in lowered:
        return _check(year - 1), True
    if "this year" in lowered or "earlier this year" in lowered:
        return _check(year), True
    if "last month" in lowered:
        return _check(*_shift_month(year, month, 1)), True
    if m := _IN_MONTH.search(text):
        named = MONTHS[m.group(1).lower().rstrip(".")]
        if future:
            return _check(year if named >= month else year + 1, named), True
        return _check(year if named <= month else year - 1, named), True
    if _RECENT.search(text):
        return _check(year, month), True
    return None, False
