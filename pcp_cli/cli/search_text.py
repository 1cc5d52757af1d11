"""What `pcp search` writes without a terminal table: the notes on stderr and one tab-separated
line per result on stdout. Shared by the typer command and the fast path (cli/main.py), which
must answer alike; nothing here imports typer or rich."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

EXT = "org.pcp-cli"


def notes_before(data: dict[str, Any]) -> list[str]:
    """The stderr lines before the results: which mode `auto` ran, a capped limit, none found."""
    filters = data["filters_applied"]
    lines = []
    if filters.get("mode_requested") == "auto":
        lines.append(f"Mode: {filters['mode']} ({filters['mode_reason']}).")
    if filters.get("capped"):
        lines.append(f"Showing at most {filters['limit']} results (asked for "
                     f"{filters['limit_requested']}).")
    if not data["results"]:
        lines.append("No results.")
    return lines


def notes_after(data: dict[str, Any]) -> list[str]:
    """The stderr lines after the results: how to continue."""
    if data["results"] and data.get("next_cursor"):
        return [f"More: --cursor {data['next_cursor']}"]
    return []


def rows(results: list[Any], shorten: Callable[[str], str] = str
         ) -> list[tuple[tuple[str, ...], list[list[int]]]]:
    """(id, type, origin, score, date, snippet) and the snippet's highlights, per result: ours
    or another source's. A result missing an optional field, with values or extensions of
    unknown kinds, or stale (the date followed by "stale"), is shown as far as it goes (PCP
    v1.2 §7.2: a reader never drops context for those), never refused."""
    out = []
    for r in results:
        if not isinstance(r, dict):
            continue
        score = r.get("score")
        shown = f"{score:.2f}" if isinstance(score, int | float) and not isinstance(
            score, bool) else "-"
        when = str(r.get("timestamp") or "")[:10] + (" stale" if r.get("stale") is True
                                                      else "")
        extensions = r.get("extensions")
        ours = extensions.get(EXT) if isinstance(extensions, dict) else None
        spans = ours.get("highlights") if isinstance(ours, dict) else None
        cells = (shorten(str(r.get("id", "?"))), str(r.get("type", "?")),
                 str(r.get("origin", "generated")), shown, when.strip(),
                 str(r.get("snippet", "")))
        out.append((cells, spans if isinstance(spans, list) else []))
    return out


def write_lines(results: list[dict[str, Any]], shorten: Callable[[str], str] = str) -> None:
    """One tab-separated line per result (tabs and newlines inside a cell become spaces)."""
    for cells, _spans in rows(results, shorten):
        sys.stdout.write("\t".join(c.replace("\t", " ").replace("\n", " ")
                                   for c in cells) + "\n")
