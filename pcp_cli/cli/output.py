"""Everything the CLI writes: JSON or rich text on stdout, messages on stderr.

stdout carries data only. Rich tables on a terminal, plain text when piped; NO_COLOR honoured.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any

import typer

from pcp_cli import api
from pcp_cli.cli.shared import STATE

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON (the documented shape).")]
StoreOpt = Annotated[
    str | None,
    typer.Option("--store", envvar="PCP_STORE", metavar="PATH",
                 help="The store folder (default: the nearest pcp.yaml above the current "
                 "folder).", show_envvar=True),
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

    paging = not stderr and isinstance(sys.stdout, _PagerBuffer)
    return Console(
        stderr=stderr,
        no_color=bool(os.environ.get("NO_COLOR")),
        highlight=False,
        soft_wrap=not stderr and not sys.stdout.isatty(),
        # Into a pager: lay out (and colour) for the terminal the pager shows it on.
        force_terminal=True if paging else None,
        width=sys.stdout.columns if isinstance(sys.stdout, _PagerBuffer) and not stderr
        else None,
    )


def is_terminal() -> bool:
    return sys.stdout.isatty()


# -- the pager ---------------------------------------------------------------------------------
DEFAULT_PAGER = "less -FRX"


def pager_command() -> str | None:
    """PCP_PAGER, then PAGER, then `less -FRX`, as git does; None when it is empty or `cat`."""
    for name in ("PCP_PAGER", "PAGER"):
        value = os.environ.get(name)
        if value is not None:
            command = value.strip()
            break
    else:
        import shutil

        command = DEFAULT_PAGER if shutil.which("less") else ""
    return None if command in ("", "cat") else command


def paging_wanted() -> bool:
    return sys.stdout.isatty() and not STATE.get("no_pager") and pager_command() is not None


class _PagerBuffer:
    """Stands in for stdout while a command runs under `paged()`: collects what it prints and
    answers like the terminal the pager will show it on."""

    def __init__(self, real: Any) -> None:
        import io
        import shutil

        self.real = real
        self.buffer_text = io.StringIO()
        self.columns = shutil.get_terminal_size().columns

    def write(self, data: str) -> int:
        return self.buffer_text.write(data)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True

    @property
    def encoding(self) -> str:
        return "utf-8"

    def getvalue(self) -> str:
        return self.buffer_text.getvalue()


@contextmanager
def paged() -> Iterator[None]:
    """Send what the command prints through a pager when stdout is a terminal (git's way:
    PCP_PAGER, PAGER, then `less -FRX`, which stays out of the way when it fits the screen).
    `--no-pager`, PCP_PAGER=cat or a pipe: printed directly."""
    if not paging_wanted():
        yield
        return
    real = sys.stdout
    buffer = _PagerBuffer(real)
    sys.stdout = buffer  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout = real
        _run_pager(pager_command() or DEFAULT_PAGER, buffer.getvalue(), real)


def _run_pager(command: str, data: str, real: Any) -> None:
    import subprocess

    if not data:
        return
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")  # as git sets it: quit if one screen, keep colours
    env.setdefault("LV", "-c")
    try:
        proc = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:
        real.write(data)
        real.flush()
        return
    assert proc.stdin is not None
    try:
        proc.stdin.write(data.encode("utf-8", "replace"))
        proc.stdin.close()
    except BrokenPipeError:  # the person quit the pager early
        pass
    while True:
        try:
            proc.wait()
            break
        except KeyboardInterrupt:  # ^C belongs to the pager (less stays open), as in git
            continue
    if proc.returncode in (126, 127):  # the shell could not run it: nothing was shown
        sys.stderr.write(f"pcp: the pager {command!r} could not be run; printing directly "
                         "(set PCP_PAGER, or PCP_PAGER=cat)\n")
        real.write(data)
        real.flush()


def emit(data: Any, as_json: bool, human: Callable[[], None]) -> None:
    """Print `data` as JSON, or call `human` to render it for people."""
    if as_json:
        print_json(data)
    else:
        human()


def table(columns: Sequence[str], rows: Iterable[Sequence[Any]], *, title: str | None = None,
          whole: Sequence[int] = (0,)) -> None:
    """A rich table on a terminal; tab-separated lines (no header) when piped.

    The columns numbered in `whole` (ids, by default the first) are never cut or wrapped: a
    narrow terminal squeezes the other columns instead.
    """
    rows = [["" if cell is None else str(cell) for cell in row] for row in rows]
    if not is_terminal():
        for row in rows:
            sys.stdout.write("\t".join(cell.replace("\t", " ").replace("\n", " ")
                                       for cell in row) + "\n")
        return
    from rich.table import Column, Table
    from rich.text import Text

    from pcp_cli.render.visible import visible

    # the escape codes and bidi overrides of stored text shown, not obeyed by the terminal
    rows = [[visible(cell) for cell in row] for row in rows]
    specs = []
    for index, name in enumerate(columns):
        if index in whole:
            width = max([len(name), *(len(row[index]) for row in rows)])
            specs.append(Column(name, no_wrap=True, min_width=width, overflow="fold"))
        else:
            specs.append(Column(name))
    tbl = Table(*specs, title=title and Text(visible(title)), show_lines=False)
    for row in rows:
        tbl.add_row(*map(Text, row))  # text, never rich markup ("[link=…]" is a hyperlink)
    console().print(tbl)


def note(message: str) -> None:
    """A message for the person on stderr (never mixed into data on stdout)."""
    sys.stderr.write(message + "\n")


def text(message: str) -> None:
    sys.stdout.write(message if message.endswith("\n") else message + "\n")


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 revision`, `2 revisions`."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def examples(*lines: str) -> str:
    """A command's `--help` epilog: example command lines, kept as typed (not re-wrapped)."""
    return "Examples:\n\n\b\n" + "\n".join(f"  {line}" for line in lines)


# -- shell completion ---------------------------------------------------------------------------
# Called by typer when the shell asks (`_PCP_COMPLETE=complete_bash` …). They open the store
# read-only without refreshing it, and stay silent (no completions) on any error.
def _completion_store(ctx: typer.Context) -> Any:
    root = ctx.find_root().params
    explicit = ctx.params.get("store_path") or root.get("store")
    if root.get("directory") and not explicit:
        os.chdir(os.path.expanduser(root["directory"]))
        os.environ.pop("PCP_STORE", None)
    return api.open_store(explicit, readonly=True, refresh=False)


def complete_page(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """Page ids starting with what was typed (pg_ optional), each with its title."""
    try:
        with _completion_store(ctx) as store:
            return api.page_id_completions(store, incomplete)
    except Exception:  # completion must never print a traceback into the shell
        return []


def complete_namespace(ctx: typer.Context, incomplete: str) -> list[str]:
    """The store's namespaces (and their `prefix:*` patterns) starting with what was typed."""
    try:
        with _completion_store(ctx) as store:
            names = store.catalog.namespaces()
    except Exception:
        return []
    found = set(names)
    for name in names:
        parts = name.split(":")
        found.update(":".join(parts[:i]) + ":*" for i in range(1, len(parts)))
    return sorted(n for n in found if n.startswith(incomplete))


def complete_type(incomplete: str) -> list[str]:
    """Page types (the vocabulary)."""
    from pcp_cli.model.vocab import PAGE_TYPES

    return [t for t in PAGE_TYPES if t.startswith(incomplete)]


@contextmanager
def progress_bar(total: int,
                 label: str = "indexing") -> Iterator[Callable[..., None] | None]:
    """A rich progress bar of `total` things (pages indexed, pages read), on stderr, when stderr
    is a terminal: `update(done[, of])` (`of`: the total, when it was not known at first), or
    None elsewhere. It shows from the first update on (an
    index rebuild reports every 1,000 pages)."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    bar = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(),
                   TimeRemainingColumn(), console=console(stderr=True), transient=True)
    task = bar.add_task("index", total=total or None)
    started = False

    def update(done: int, of: int | None = None) -> None:
        nonlocal started
        if not started:
            bar.start()
            started = True
        bar.update(task, completed=done, **({"total": of} if of is not None else {}))

    try:
        yield update
    finally:
        if started:
            bar.stop()
