"""The date a sentence gives for what it tells: YYYY, YYYY-MM or YYYY-MM-DD, or None.

Explicit dates ("in March 2024", "on 12 May 2023", "2024-06", "since 2021") are read as they
stand. Relative ones are read against the date of the turn they were written in, and only when
the page gives that date: "last year", "two years ago", "in June" to the year or month;
"yesterday", "last Friday", "tomorrow" to the day; "last week", "two weeks ago", "next week"
to the week before (or after) the turn, kept as the day a week away and said "in the week of
…"; "last weekend" to its Saturday; "a few days ago", "the other day" to about three days
before; "recently", "just", "this month" to the turn's month.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
_NUMBERS = {"a few": 3, "a couple of": 2, "a": 1, "one": 1, "two": 2, "three": 3, "four": 4,
            "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}

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
_RECENT = re.compile(r"\b(?:just|recently|this month|earlier this month|lately|this week)\b",
                     re.I)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY = r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_DAY_BEFORE = re.compile(r"\b(?:yesterday|last night)\b", re.I)
_SAME_DAY = re.compile(r"\b(?:today|this morning|this afternoon|this evening|tonight)\b", re.I)
_TOMORROW = re.compile(r"\btomorrow\b", re.I)
_WEEKS_AGO = re.compile(r"\b(?:(a few|a couple of|a|one|two|three|four|five|six|[0-9])\s+"
                        r"weeks?\s+ago|"
                        r"(last|past|previous)\s+week|(next|coming)\s+week)\b", re.I)
_FEW_DAYS = re.compile(r"\b(?:a few|a couple of|couple of|two|three)\s+days\s+ago\b|"
                       r"\bthe other day\b", re.I)
_WEEKEND = re.compile(r"\b(last|this|next|over the|on the)\s+weekend\b", re.I)
_NAMED_DAY = re.compile(r"\b(last|this|next|on|this past)\s+" + _WEEKDAY + r"\b", re.I)
_NEXT_MONTH_YEAR = re.compile(r"\bnext\s+(month|year)\b", re.I)
_DAY_MONTH = re.compile(r"\b(?:on\s+)?(?:the\s+)?([0-3]?[0-9])(?:st|nd|rd|th)?\s+(?:of\s+)?"
                        + _MONTH + r"(?!\s*,?\s*[0-9])\b", re.I)
_MONTH_DAY = re.compile(r"\b(?:on\s+)?" + _MONTH + r"\s+([0-3]?[0-9])(?:st|nd|rd|th)?\b"
                        r"(?!\s*,?\s*[0-9])", re.I)
_BARE_MONTH = re.compile(r"\b(?:in|since|last|this|from|back in|by|until|end of|early|late|mid)"
                         r"[\s-]+" + _MONTH + r"(?!\s*[0-9])", re.I)
_SEASON = re.compile(r"\b(?P<which>last|this|in the|over the|during the)\s+"
                     r"(?P<season>spring|summer|autumn|fall|winter)\b", re.I)


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


@dataclass(frozen=True)
class Dated:
    """A date read from a sentence: `approx` says how to word it ("" exact as stored,
    "week" the week of that day, "weekend" the weekend of that Saturday, "about" about then)."""

    date: str | None
    relative: bool = False
    approx: str = ""


def _days(when: str, delta: int) -> str | None:
    from datetime import date, timedelta

    try:
        base = date(int(when[:4]), int(when[5:7]), int(when[8:10]))
    except ValueError:
        return None
    return (base + timedelta(days=delta)).isoformat()


def _weekday(when: str) -> int | None:
    from datetime import date

    try:
        return date(int(when[:4]), int(when[5:7]), int(when[8:10])).weekday()
    except ValueError:
        return None


def _by_day(text: str, when: str, future: bool) -> Dated | None:
    """A date a day or a week from the turn's own day (`when` is YYYY-MM-DD)."""
    weekday = _weekday(when)
    if weekday is None:
        return None
    if _DAY_BEFORE.search(text):
        return Dated(_days(when, -1), True)
    if _TOMORROW.search(text):
        return Dated(_days(when, 1), True)
    if m := _NAMED_DAY.search(text):
        which, named = m.group(1).lower(), _WEEKDAYS.index(m.group(2).lower())
        if which == "next" or (future and which in ("on", "this")):
            return Dated(_days(when, (named - weekday) % 7 or 7), True)
        return Dated(_days(when, -((weekday - named) % 7 or 7)), True)
    if m := _WEEKEND.search(text):
        which = m.group(1).lower()
        if which == "next" or (future and weekday < 5):
            return Dated(_days(when, (5 - weekday) % 7 or 7), True, "weekend")
        if which == "last":
            back = {5: 7, 6: 8}.get(weekday, weekday + 2)
        else:  # this weekend, over the weekend: the one it is, else the one just past
            back = {5: 0, 6: 1}.get(weekday, weekday + 2)
        return Dated(_days(when, -back), True, "weekend")
    if m := _WEEKS_AGO.search(text):
        if m.group(3):
            return Dated(_days(when, 7), True, "week")
        count = 1 if m.group(2) else (_NUMBERS.get((m.group(1) or "").lower())
                                      or int(m.group(1)))
        return Dated(_days(when, -7 * count), True, "week")
    if _FEW_DAYS.search(text):
        return Dated(_days(when, -3), True, "about")
    if _SAME_DAY.search(text):
        return Dated(when[:10], True)
    return None


def resolve(text: str, when: str | None = None, *, future: bool = False) -> Dated:
    """The date `text` gives (see the module's docstring), read against `when`, the turn's
    YYYY-MM-DD (or YYYY-MM)."""
    if m := _ISO.search(text):
        return Dated(_check(int(m.group(1)), int(m.group(2)),
                            int(m.group(3)) if m.group(3) else None))
    if m := _MONTH_DAY_YEAR.search(text):
        return Dated(_check(int(m.group(3)), MONTHS[m.group(1).lower().rstrip(".")],
                            int(m.group(2))))
    if m := _DAY_MONTH_YEAR.search(text):
        return Dated(_check(int(m.group(3)), MONTHS[m.group(2).lower().rstrip(".")],
                            int(m.group(1))))
    if m := _MONTH_YEAR.search(text):
        return Dated(_check(int(m.group(2)), MONTHS[m.group(1).lower().rstrip(".")]))
    if m := _YEAR_ALONE.search(text):
        return Dated(_check(int(m.group(1))))
    if not when or not re.match(r"^[0-9]{4}-[0-9]{2}", when):
        return Dated(None)
    year, month = int(when[:4]), int(when[5:7])
    lowered = text.lower()
    if m := _AGO.search(text):
        count = _NUMBERS.get(m.group(1).lower()) or int(m.group(1))
        if m.group(2).lower().startswith("year"):
            return Dated(_check(year - count), True)
        return Dated(_check(*_shift_month(year, month, count)), True)
    if "last year" in lowered:
        return Dated(_check(year - 1), True)
    if m := _NEXT_MONTH_YEAR.search(text):
        if m.group(1).lower() == "year":
            return Dated(_check(year + 1), True)
        return Dated(_check(*_shift_month(year, month, -1)), True)
    if "this year" in lowered or "earlier this year" in lowered:
        return Dated(_check(year), True)
    if "last month" in lowered:
        return Dated(_check(*_shift_month(year, month, 1)), True)
    for pattern, month_at, day_at in ((_DAY_MONTH, 2, 1), (_MONTH_DAY, 1, 2)):
        if m := pattern.search(text):
            named, day = MONTHS[m.group(month_at).lower().rstrip(".")], int(m.group(day_at))
            if future:
                return Dated(_check(year if named >= month else year + 1, named, day), True)
            return Dated(_check(year if named <= month else year - 1, named, day), True)
    if m := _IN_MONTH.search(text) or _BARE_MONTH.search(text):
        named = MONTHS[m.group(1).lower().rstrip(".")]
        if future:
            return Dated(_check(year if named >= month else year + 1, named), True)
        return Dated(_check(year if named <= month else year - 1, named), True)
    if m := _SEASON.search(text):
        if m.group("which").lower() == "last":
            return Dated(_check(year - 1), True)
        return Dated(_check(year + 1 if future and month > 8 and m.group("season").lower() in (
            "spring", "summer") else year), True)
    if len(when) >= 10 and (found := _by_day(text, when, future)) is not None:
        return found
    if _RECENT.search(text):
        return Dated(_check(year, month), True)
    return Dated(None)
