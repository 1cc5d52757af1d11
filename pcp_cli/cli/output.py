"""Everything the CLI writes: JSON or rich text on stdout, messages on stderr.

stdout carries data only. Rich tables on a terminal, plain text when piped; NO_COLOR honoured.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Annotated, Any

import typer

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON (the documented shape).")]
StoreOpt = Annotated[
    str | None,
    typer.Option("--store", envvar="PCP_STORE", help="The store folder (default: the nearest "
                 "pcp.yaml above the current folder).", show_envvar=True),
]
AsOfOpt = Annotated[
    str | None,
    typer.Option("--as-of", help="The store as it stood then: DATE (the end of that day, UTC) "
                 "or DATETIME (2024-06-30T18:00:00Z)."),
]


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def console(stderr: bool = False) -> Any:
    from rich.console import Console

    return Console(
        stderr=stderr,
        no_color=bool(os.environ.get("NO_COLOR")),
        highlight=False,
        soft_wrap=not stderr and not sys.stdout.isatty(),
    )


def is_terminal() -> bool:
    return sys.stdout.isatty()


def emit(data: Any, as_json: bool, human: Callable[[], None]) -> None:
    """Print `data` as JSON, or call `human` to render it for people."""
    if as_json:
        print_json(data)
    else:
        human()


def table(columns: Sequence[str], rows: Iterable[Sequence[Any]], *, title: str | None = None
          ) -> None:
    """A rich table on a terminal; tab-separated lines (no header) when piped."""
    rows = [["" if cell is None else str(cell) for cell in row] for row in rows]
    if not is_terminal():
        for row in rows:
            sys.stdout.write("\t".join(cell.replace("\t", " ").replace("\n", " ")
                                       for cell in row) + "\n")
        return
    from rich.table import Table

    tbl = Table(*columns, title=title, show_lines=False)
    for row in rows:
        tbl.add_row(*row)
    console().print(tbl)


def note(message: str) -> None:
    """A message for the person on stderr (never mixed into data on stdout)."""
    sys.stderr.write(message + "\n")


def text(message: str) -> None:
    sys.stdout.write(message if message.endswith("\n") else message + "\n")
