"""`pcp monitor …`: the store monitor, which tells commands what changed instead of a scan."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from pcp_cli import api
from pcp_cli.cli.output import JsonOpt, StoreOpt, emit, examples, text

monitor_app = typer.Typer(
    help="The store monitor: a background process that watches the store's files, so each "
    "command looks only at what changed instead of checking every page (Linux, local file "
    "systems). Optional; without it every command scans, as before.",
    no_args_is_help=True,
)

IdleOpt = Annotated[float | None, typer.Option(
    "--idle-timeout", metavar="SECONDS",
    help="Stop after this long with no command asking (default: 3600).")]


def _show(data: dict[str, Any]) -> None:
    if data["running"]:
        text(f"The store monitor is running (pid {data['pid']}, since {data['started_at']}).")
    else:
        text("The store monitor is not running: every command scans the store.")
    if data["auto"]:
        text("Commands start it again when it is not running (`pcp monitor stop` ends that).")
    if data.get("supported"):
        text(data["supported"])
    revisions = data.get("revisions")
    if revisions and not revisions.get("watched"):
        text(f"It does not watch revisions/: {revisions.get('why_not')}.")


@monitor_app.command("start", epilog=examples("pcp monitor start"))
def start(store_path: StoreOpt = None, idle_timeout: IdleOpt = None,
          as_json: JsonOpt = False) -> None:
    """Start the monitor, and have later commands start it again when it is not running."""
    data = api.monitor_start(store_path, idle_timeout=idle_timeout)
    emit(data, as_json, lambda: _show(data))


@monitor_app.command("stop", epilog=examples("pcp monitor stop"))
def stop(store_path: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Stop the monitor; commands scan the store again and no longer start it."""
    data = api.monitor_stop(store_path)
    emit(data, as_json, lambda: text("Stopped the store monitor." if data["stopped"]
                                     else "The store monitor was not running."))


@monitor_app.command("status", epilog=examples("pcp monitor status --json"))
def status(store_path: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Whether the monitor runs, since when, and whether commands start it."""
    data = api.monitor_status(store_path)
    emit(data, as_json, lambda: _show(data))


@monitor_app.command("run", epilog=examples("pcp monitor run"))
def run(store_path: StoreOpt = None, idle_timeout: IdleOpt = None) -> None:
    """Be the monitor in the foreground (what `start` runs in the background) until idle,
    Ctrl-C or SIGTERM."""
    api.monitor_run(store_path, idle_timeout=idle_timeout)


def register(app: typer.Typer) -> None:
    app.add_typer(monitor_app, name="monitor")
