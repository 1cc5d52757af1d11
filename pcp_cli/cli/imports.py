"""`pcp import`: bring a ChatGPT, Claude, Markdown or PCP v1 export, or Claude Code / Codex CLI
session logs, into the store."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer

from pcp_cli import api
from pcp_cli.cli.output import (
    JsonOpt,
    StoreOpt,
    console,
    examples,
    is_terminal,
    note,
    print_json,
    text,
)
from pcp_cli.cli.shared import one_line
from pcp_cli.errors import ImportFailed

MAX_PROBLEM_LINES = 50

FormatOpt = Annotated[str, typer.Option(
    "--format", help="auto|archive|chatgpt|claude|markdown|claude_code|codex (auto: "
    "recognised from the content).")]
NamespaceOpt = Annotated[str | None, typer.Option(
    "--namespace", help="Namespace for the imported pages (default: the store's). Claude "
    "projects and coding-agent sessions keep their own project:<name> namespace.")]
AsOpt = Annotated[str | None, typer.Option(
    "--as", metavar="NAME", help="A Markdown folder's vault name (default: the name this "
    "device imported it under, else the folder's name). Two folders of one name are two "
    "vaults only with names of their own; the same name on another device finds the same "
    "pages.")]
DryRunOpt = Annotated[bool, typer.Option(
    "--dry-run", help="Report what would be created, revised or skipped; write nothing.")]


def register(app: typer.Typer) -> None:
    @app.command("import", epilog=examples(
        "pcp import ~/Downloads/chatgpt-export.zip --dry-run",
        "pcp import claude-export.zip --namespace project:tidewatch",
        "pcp import ~/notes --format markdown",
        "pcp import ~/home/notes --as home-notes"))
    def import_(
        path: Annotated[str, typer.Argument(help="The export: a .zip, its unpacked folder, a "
                                            "conversations.json, a Markdown folder or file, "
                                            "a PCP v1 archive, or Claude Code / Codex CLI "
                                            "session logs (a folder or one .jsonl).")],
        fmt: FormatOpt = "auto",
        namespace: NamespaceOpt = None,
        dry_run: DryRunOpt = False,
        vault: AsOpt = None,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Import an export; the same export again changes nothing (exit 9 if items failed)."""
        with api.open_store(store_path, readonly=dry_run) as store, \
                _progress_bar() as (progress, waiting):
            summary = api.import_path(store, path, format=fmt, namespace=namespace,
                                      dry_run=dry_run, progress=progress, waiting=waiting,
                                      vault=vault)
        if as_json:
            print_json(summary)
        else:
            _print_summary(summary)
            _print_problems(summary)
        failed = int(summary.get("failed") or 0)
        if failed:
            raise ImportFailed(
                f"{failed} item(s) failed to import; everything else was imported",
                hint="the problems above say which file, which item and why; fix them and "
                "import again (what is already imported comes back unchanged)",
            )


@contextmanager
def _progress_bar() -> Iterator[tuple[Callable[[int, int | None], None] | None,
                                      Callable[[bool], None] | None]]:
    """A rich progress bar over the bytes read, on stderr, only when stderr is a terminal; it
    says so while a write waits for another pcp process's store lock."""
    if not sys.stderr.isatty():
        yield None, None
        return
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    bar = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                   TransferSpeedColumn(), TimeRemainingColumn(),
                   console=console(stderr=True), transient=True)
    task = bar.add_task("importing", total=None)

    def update(done: int, total: int | None) -> None:
        bar.update(task, completed=done, total=total)

    def waiting(now: bool) -> None:
        bar.update(task, description="waiting for another pcp process to release the store "
                   "lock" if now else "importing", refresh=True)

    with bar:
        yield update, waiting


_OUTCOMES = ("created", "revised", "unchanged", "skipped", "failed")


def _print_summary(summary: dict[str, Any]) -> None:
    verb = "would import" if summary.get("dry_run") else "imported"
    title = f"{summary.get('format')}: {verb} {summary.get('source', '')}".rstrip()
    by_type: dict[str, dict[str, int]] = summary.get("by_type") or {}
    relations = summary.get("relations") or {}
    events = summary.get("events")
    if not is_terminal():
        text(title)
        text(", ".join(f"{key} {summary.get(key, 0)}" for key in _OUTCOMES))
        if events:
            text(f"  events: {events['stored']} stored, {events['unchanged']} unchanged "
                 f"(from {summary.get('sessions', 0)} session file(s))")
        for page_type, counts in by_type.items():
            text(f"  {page_type}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        if summary.get("proposals"):
            text(f"  proposals for review: {summary['proposals']}")
        if relations.get("created"):
            text(f"  relations created: {relations['created']}")
        return
    from rich.table import Table

    table = Table("", "created", "revised", "unchanged", title=title, title_justify="left")
    for page_type, counts in by_type.items():
        table.add_row(page_type, *(str(counts.get(k, 0)) for k in _OUTCOMES[:3]))
    table.add_row("total", *(str(summary.get(k, 0)) for k in _OUTCOMES[:3]), style="bold")
    out = console()
    out.print(table)
    extra = [f"skipped {summary.get('skipped', 0)}", f"failed {summary.get('failed', 0)}"]
    if summary.get("proposals"):
        extra.append(f"{summary['proposals']} proposal(s) for review (`pcp keystone list --all`)")
    if relations.get("created"):
        extra.append(f"{relations['created']} relation(s) created")
    if events:
        extra.append(f"events {events['stored']} stored, {events['unchanged']} unchanged")
    out.print(", ".join(extra))


def _print_problems(summary: dict[str, Any]) -> None:
    entries = list(summary.get("problems") or []) + list(summary.get("warnings") or [])
    for entry in entries[:MAX_PROBLEM_LINES]:
        outcome = entry.get("outcome") or "problem"
        item = f" [{entry['item']}]" if entry.get("item") else ""
        reason = one_line(str(entry.get("reason")))  # a parser's text, on one line
        note(f"{outcome}: {entry.get('source')}{item}: {reason}")
    if len(entries) > MAX_PROBLEM_LINES:
        note(f"… and {len(entries) - MAX_PROBLEM_LINES} more (all of them under --json)")
