"""Staleness (Portable Context Protocol v1.2 §3.2.2): a keystone's `stale_after` date.

`record.stale_after` is an absolute date, `YYYY-MM-DD`: the claim is stale on and after that
day, a plain comparison with today's date that survives export and re-import unchanged. It is
advisory, not lifecycle: a stale keystone is still served, labelled (`stale: true` on a search
result), and nothing here or anywhere in pcp moves it to `superseded` (only the person retires a
claim). The micro_prompt, which has no room for a label, leaves stale keystones out (§4.1).

"Today" is the local date of the machine answering (the person's today), or the day of an
`as_of` moment when a question is asked about the past.
"""

from __future__ import annotations

import datetime
import os
import re
from collections.abc import Mapping
from typing import Any

from pcp_cli.errors import UsageError

KEY = "stale_after"
_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")


def today() -> str:
    """Today's local date, `YYYY-MM-DD` (the date of `PCP_NOW` when it pins the clock, as it
    does every stored time: tests, replays)."""
    pinned = os.environ.get("PCP_NOW")
    if pinned and _DATE.match(pinned[:10]):
        return pinned[:10]
    return datetime.date.today().isoformat()


def day_of(moment: str | None) -> str:
    """The day a staleness question is asked on: the date part of an `as_of` moment (a date or
    an ISO 8601 time), else today."""
    if moment and re.match(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}", moment):
        return moment[:10]
    return today()


def problem(value: Any) -> str | None:
    """None for a real `YYYY-MM-DD` date; else what is wrong with it, in words."""
    if not isinstance(value, str) or not _DATE.match(value):
        return "is not a date YYYY-MM-DD"
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        return "is not a real date"
    return None


def check(value: str) -> str:
    """`value` as a stale_after date, or UsageError saying why it is not one."""
    why = problem(value)
    if why is not None:
        raise UsageError(f"stale_after {value!r} {why}",
                         hint="give the day the claim should be re-checked, e.g. 2026-12-31")
    return value


# What a person writes for "no staleness date" (`--stale-after never`): the date is removed.
NEVER = "never"


def setting(value: str) -> str | None:
    """A `--stale-after` value as the record holds it: a checked date, or None for `never`."""
    return None if value == NEVER else check(value)


def stale_after(record: Mapping[str, Any] | None) -> str | None:
    """The record's valid stale_after date, or None (absent or not a date: never stale)."""
    value = (record or {}).get(KEY)
    return value if problem(value) is None else None


def is_stale(record: Mapping[str, Any] | None, on: str | None = None) -> bool:
    """Is the claim stale on day `on` (default today)? Stale on and after its stale_after."""
    date = stale_after(record)
    return date is not None and date <= (on or today())
