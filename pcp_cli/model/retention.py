"""The retention policy of `pcp.yaml` (`retention:`): how long tombstoned pages and replaced
revisions are kept. Pure: parsed here, applied by `pcp_cli.store.retention`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pcp_cli.errors import InvalidInput, UsageError

SECTION = "retention"
RULES = ("tombstoned_pages", "superseded_revisions")
FOREVER = "forever"
_DURATION = re.compile(r"^([1-9][0-9]{0,4})([dwy])$")
_DAYS = {"d": 1, "w": 7, "y": 365}


def duration_problem(value: Any) -> str | None:
    """None for `forever` or `<n>d|w|y`; else what is wrong, in words."""
    if value == FOREVER or (isinstance(value, str) and _DURATION.match(value)):
        return None
    return "is not a duration such as 90d, 12w, 1y, or forever"


def days(value: str) -> int | None:
    """A duration in days; None for forever."""
    match = _DURATION.match(value)
    return None if match is None else int(match.group(1)) * _DAYS[match.group(2)]


@dataclass(frozen=True)
class Policy:
    """`pcp.yaml`'s retention section; None is forever."""

    tombstoned_pages: str = FOREVER
    superseded_revisions: str = FOREVER
    configured: bool = False  # the section is there at all

    def to_dict(self) -> dict[str, Any]:
        return {"tombstoned_pages": self.tombstoned_pages,
                "superseded_revisions": self.superseded_revisions,
                "configured": self.configured}


def policy_from(section: Any) -> Policy:
    """The policy a manifest's `retention` value states; InvalidInput naming the key."""
    if section is None:
        return Policy()
    if not isinstance(section, Mapping):
        raise InvalidInput("retention must be a mapping", path="pcp.yaml",
                           hint="e.g. retention: {tombstoned_pages: 90d, "
                           "superseded_revisions: 1y}")
    unknown = sorted(str(k) for k in section if k not in RULES)
    if unknown:
        raise InvalidInput(f"retention has unknown key {unknown[0]!r}", path="pcp.yaml",
                           hint=f"retention may hold: {', '.join(RULES)}")
    values = {}
    for rule in RULES:
        value = section.get(rule, FOREVER)
        problem = duration_problem(value)
        if problem is not None:
            raise InvalidInput(f"retention.{rule} {value!r} {problem}", path="pcp.yaml",
                               hint="e.g. 90d (days), 12w (weeks), 1y (years) or forever")
        values[rule] = value
    return Policy(**values, configured=True)


def policy_section(tombstoned_pages: str | None, superseded_revisions: str | None,
                   current: Policy) -> dict[str, str]:
    """The `retention` section after `pcp retention set` (each argument None: unchanged)."""
    out = {"tombstoned_pages": current.tombstoned_pages,
           "superseded_revisions": current.superseded_revisions}
    for rule, value in (("tombstoned_pages", tombstoned_pages),
                        ("superseded_revisions", superseded_revisions)):
        if value is None:
            continue
        problem = duration_problem(value)
        if problem is not None:
            raise UsageError(f"--{rule.replace('_', '-')} {value!r} {problem}",
                             hint="e.g. 90d (days), 12w (weeks), 1y (years) or forever")
        out[rule] = value
    return out
