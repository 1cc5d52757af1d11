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


def rows(results: list[dict[str, Any]], shorten: Callable[[str], str] = str
         ) -> list[tuple[tuple[str, ...], list[list[int]]]]:
    """(id, type, origin, score, date, snippet) and the snippet's highlights, per result."""
    out = []
    for r in results:
        score = f"{r['score']:.2f}" if "score" in r else "-"
        cells = (shorten(r["id"]), r["type"], r["origin"], score,
                 (r.get("timestamp") or "")[:10], r["snippet"])
        out.append((cells, r.get("extensions", {}).get(EXT, {}).get("highlights", [])))
    return out


def write_lines(results: list[dict[str, Any]], shorten: Callable[[str], str] = str) -> None:
    """One tab-separated line per result (tabs and newlines inside a cell become spaces)."""
    for cells, _spans in rows(results, shorten):
        sys.stdout.write("\t".join(c.replace("\t", " ").replace("\n", " ")
                                   for c in cells) + "\n")
