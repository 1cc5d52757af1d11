"""When a proposed claim goes stale: the `stale_after` date `pcp propose` sets (PCP v1.2 §3.2.2).

Some claims are true for a while: "I'm off to Ireland for a semester", "I'm preparing for the
IELTS exam", "I'm using Helix at the moment". `decay_of` reads how long from the claim and the
sentence it came from; `stale_after` turns that into the absolute date (`YYYY-MM-DD`, the first
day the claim should be treated as stale) counted from when the sentence was written — the
newest sentence stating it, so a claim said again is fresh again.

What decays, and for how long (the first that applies):
- a period the sentence names: "for a semester" (6 months), "for two weeks", "for a year",
  "this semester" / "this term" (to the end of that half-year), "this week", "this month",
  "this summer", "this year" (to the end of it), "until June" (to the end of June);
- a temporary state: "for now", "at the moment", "right now", "temporarily", "for the time
  being" (3 months); "currently", "these days", "lately" (6 months);
- by kind of claim: a goal or current project (category `objective`: "Wants to …", "Is
  learning …", "Is preparing for …"; to its own deadline — "by June" — when it gives one, else a
  year); a tool in use ("Uses Neovim": two years); a way of working ("Works remotely": a year).

Everything else (where the person is from, their family, a dislike) gets no date: nothing says
it will change, and `stale_after` is a promise to check, not a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pcp_cli.extract.dates import resolve

_NUMBER = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
           "a couple of": 2, "a few": 3, "several": 4}
_FOR_PERIOD = re.compile(
    r"\bfor\s+(?P<n>a couple of|a few|several|an?|one|two|three|four|five|six|[0-9]{1,2})\s+"
    r"(?P<unit>semesters?|terms?|weeks?|months?|years?|days?)\b", re.I)
_FOR_THE = re.compile(r"\bfor\s+the\s+(?P<unit>semester|term|summer|winter|year|month|week)\b",
                      re.I)
_THIS = re.compile(r"\bthis\s+(?P<unit>semester|term|week|month|summer|year|spring|autumn|fall|"
                   r"winter)\b", re.I)
_UNTIL = re.compile(r"\b(?:until|till|til|through)\s+(?P<rest>.+)", re.I)
_BRIEF = re.compile(r"\b(?:for now|at the moment|right now|temporarily|for the time being)\b",
                    re.I)
# "I've been a nurse for 12 years": a period gone by, not one the claim lasts for.
_PAST = re.compile(r"\b(?:I've|I have|I had|had|was|were|been|lived|worked|used to|"
                   r"for the (?:past|last)|ago)\b", re.I)
_A_WHILE = re.compile(r"\b(?:currently|these days|nowadays|lately|at present)\b", re.I)
_BY = re.compile(r"\bby\s+(?P<rest>(?:the\s+end\s+of\s+)?(?:the\s+)?(?:[A-Z]\w+|next\s+\w+|"
                 r"this\s+\w+|(?:spring|summer|autumn|fall|winter)\b|[0-9]{4}|[0-9]{1,2}\s+\w+)"
                 r".*)")
_TOOL = re.compile(r"^(?:Uses|Runs|Writes|Makes|Typesets|Drafts|Keeps|Their team uses)\b")
_WAY_OF_WORKING = re.compile(r"^Works\s+(?:remotely|from home|part[- ]time|full[- ]time|"
                             r"freelance|four days|4 days|in sprints|async)", re.I)


@dataclass(frozen=True)
class Decay:
    """How long a claim stays fresh: `months` and `days` from when it was said, or `until`
    a date the sentence gives (YYYY, YYYY-MM or YYYY-MM-DD: stale the day after it ends),
    or `end_of` this week/month/half-year/season/year."""

    months: int = 0
    days: int = 0
    until: str | None = None
    end_of: str | None = None
    why: str = ""


def decay_of(content: str, category: str, sentence: str, *, kind: str = "keystone"
             ) -> Decay | None:
    """How long the claim `content` (third person, as proposed) of `category`, read from
    `sentence`, stays fresh; None when nothing says it will change."""
    if kind != "keystone":
        return None  # a timeline event happened on its date; it does not decay (§3.2.2)
    if (m := _FOR_PERIOD.search(sentence)) and not _PAST.search(sentence):
        n = _NUMBER.get(m.group("n").lower()) or int(m.group("n"))
        unit = m.group("unit").lower().rstrip("s")
        months = {"semester": 6 * n, "term": 4 * n, "month": n, "year": 12 * n}.get(unit, 0)
        days = {"week": 7 * n, "day": n}.get(unit, 0)
        return Decay(months=months, days=days, why=m.group(0))
    if (m := _FOR_THE.search(sentence)) and not _PAST.search(sentence):
        return Decay(end_of=m.group("unit").lower(), why=m.group(0))
    if m := _THIS.search(sentence):
        return Decay(end_of=m.group("unit").lower(), why=m.group(0))
    if m := _UNTIL.search(sentence):
        return Decay(until=m.group("rest"), why=m.group(0)[:40])
    if m := _BRIEF.search(sentence):
        return Decay(months=3, why=m.group(0))
    if category == "objective":
        if m := _BY.search(content):
            return Decay(until=m.group("rest"), why=m.group(0)[:40])
        return Decay(months=12, why="a goal or current project")
    if m := _A_WHILE.search(sentence):
        return Decay(months=6, why=m.group(0))
    if category == "preference" and _TOOL.match(content):
        return Decay(months=24, why="a tool in use")
    if _WAY_OF_WORKING.match(content):
        return Decay(months=12, why="a way of working")
    return None


def _date(year: int, month: int, day: int) -> str:
    from datetime import date

    return date(year, month, day).isoformat()


def _add_months(year: int, month: int, day: int, months: int) -> str:
    from calendar import monthrange

    index = year * 12 + (month - 1) + months
    y, m = index // 12, index % 12 + 1
    return _date(y, m, min(day, monthrange(y, m)[1]))


def _after(partial: str) -> str:
    """The first day after the period a partial date (YYYY, YYYY-MM, YYYY-MM-DD) names."""
    from datetime import date, timedelta

    parts = [int(p) for p in partial.split("-")]
    if len(parts) == 1:
        return _date(parts[0] + 1, 1, 1)
    if len(parts) == 2:
        return _add_months(parts[0], parts[1], 1, 1)
    return (date(*parts) + timedelta(days=1)).isoformat()


def stale_after(decay: Decay | None, when: str | None) -> str | None:
    """The `stale_after` date (YYYY-MM-DD) of a claim of `decay` said on `when` (YYYY-MM-DD);
    None without both."""
    if decay is None or not when or not re.match(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}", when):
        return None
    from datetime import date, timedelta

    year, month, day = int(when[:4]), int(when[5:7]), int(when[8:10])
    try:
        said = date(year, month, day)
    except ValueError:
        return None
    if decay.until is not None:
        found = resolve(decay.until, when[:10], future=True).date
        if found and found >= when[:len(found)]:
            return _after(found)
        return None
    if decay.end_of is not None:
        unit = decay.end_of
        if unit == "week":
            return (said + timedelta(days=7 - said.weekday())).isoformat()
        if unit == "month":
            return _add_months(year, month, 1, 1)
        if unit in ("semester", "term"):
            return _date(year, 7, 1) if month <= 6 else _date(year + 1, 1, 1)
        if unit == "summer":
            return _date(year, 9, 1) if month <= 8 else _date(year + 1, 9, 1)
        if unit == "spring":
            return _date(year, 6, 1) if month <= 5 else _date(year + 1, 6, 1)
        if unit in ("autumn", "fall"):
            return _date(year, 12, 1) if month <= 11 else _date(year + 1, 12, 1)
        if unit == "winter":
            return _date(year + 1, 3, 1) if month >= 3 else _date(year, 3, 1)
        return _date(year + 1, 1, 1)  # year
    if not decay.months and not decay.days:
        return None
    return (date.fromisoformat(_add_months(year, month, day, decay.months))
            + timedelta(days=decay.days)).isoformat()
