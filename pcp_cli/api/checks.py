"""Checks of the arguments the api functions share: a value from a vocabulary, a page id the
caller chose."""

from __future__ import annotations

from collections.abc import Sequence

from pcp_cli.errors import UsageError


def check_enum(name: str, value: str, options: Sequence[str]) -> None:
    if value not in options:
        raise UsageError(f"unknown {name} {value!r}", hint=f"one of: {', '.join(options)}")


def given_id(page_id: str | None) -> str:
    """An id the caller chose (checked, so `--id ''` is refused), or '' for a new one."""
    if page_id is None:
        return ""
    from pcp_cli.model.ids import check_id

    return check_id(page_id, "page id")
