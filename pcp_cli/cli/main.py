"""The typer app, its global options, and the single error funnel.

Every PcpError becomes `Error: …` / `Hint: …` on stderr (a JSON error object on stderr under
`--json`) and its documented exit status. Anything unexpected prints one line and suggests
`--traceback`.
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import Annotated

import click
import typer

from pcp_cli import __version__
from pcp_cli.errors import ExitStatus, PcpError

# Command modules, each with a `register(app)`; imported when the app is built. They keep heavy
# imports (whoosh, jsonschema, mcp) inside the command functions.
COMMAND_MODULES = (
    "pcp_cli.cli.pages",
    "pcp_cli.cli.keystones",
    "pcp_cli.cli.timeline",
    "pcp_cli.cli.profile",
    "pcp_cli.cli.maintenance",
)

STATE = {"traceback": False, "store": None}

# typer >= 0.2x parses with its own vendored copy of click, whose exceptions are not click's.
# Catch both, found through typer's public names, so usage errors exit 2 and not 1.
_TYPER_CLICK_ERROR = next(
    (c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"),
    click.ClickException,
)
CLICK_ERRORS = (click.ClickException, _TYPER_CLICK_ERROR)
EXITS = (click.exceptions.Exit, typer.Exit)
ABORTS = (click.exceptions.Abort, typer.Abort)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"pcp {__version__}\n")
        raise typer.Exit()


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="pcp",
        help="Own your AI context: a Git-friendly folder of Markdown pages with immutable "
        "revisions, searchable, exportable, and served to AI clients over MCP.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def root(
        version: Annotated[
            bool,
            typer.Option("--version", callback=_version, is_eager=True,
                         help="Print the version and exit."),
        ] = False,
        traceback: Annotated[
            bool, typer.Option("--traceback", help="Show the full traceback on errors.")
        ] = False,
    ) -> None:
        """pcp: your AI context, in a folder you own."""
        STATE["traceback"] = traceback

    for name in COMMAND_MODULES:
        importlib.import_module(name).register(app)
    return app


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    sys.exit(run(args))


def run(args: list[str]) -> int:
    """Run the CLI on `args` and return the exit status (never raises)."""
    want_json = "--json" in args
    STATE["traceback"] = "--traceback" in args
    try:
        command = typer.main.get_command(build_app())
        command.main(args=args, prog_name="pcp", standalone_mode=False)
        return ExitStatus.OK
    except PcpError as exc:
        _report(exc, want_json)
        return int(exc.exit_status)
    except EXITS as exc:
        return int(getattr(exc, "exit_code", 0) or 0)
    except ABORTS:
        sys.stderr.write("Aborted.\n")
        return ExitStatus.UNEXPECTED
    except CLICK_ERRORS as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # `pcp` or `pcp keystone` alone
            sys.stderr.write(exc.format_message() + "\n")
            return ExitStatus.USAGE
        if want_json:
            _json_error("usage", exc.format_message(), None, ExitStatus.USAGE)
        else:
            if exc.ctx is not None:
                sys.stderr.write(exc.ctx.get_usage() + "\n")
            sys.stderr.write(f"Error: {exc.format_message()}\n")
            sys.stderr.write(_usage_hint(exc))
        return ExitStatus.USAGE
    except KeyboardInterrupt:
        sys.stderr.write("Interrupted.\n")
        return 130
    except BrokenPipeError:
        return ExitStatus.OK
    except Exception as exc:  # the one place an unexpected error is turned into a message
        if STATE["traceback"]:
            raise
        message = f"{type(exc).__name__}: {exc}"
        if want_json:
            _json_error("unexpected", message, "rerun with --traceback", ExitStatus.UNEXPECTED)
        else:
            sys.stderr.write(f"Error: unexpected {message}\n")
            sys.stderr.write("Hint: rerun with --traceback and report it.\n")
        return ExitStatus.UNEXPECTED


def _usage_hint(exc: click.ClickException) -> str:  # or typer's vendored ClickException
    name = exc.ctx.command_path if exc.ctx is not None else "pcp"
    return f"Hint: run `{name} --help` for usage.\n"


def _report(exc: PcpError, want_json: bool) -> None:
    if want_json:
        sys.stderr.write(json.dumps(exc.to_json(), ensure_ascii=False) + "\n")
        return
    sys.stderr.write(f"Error: {exc.message}\n")
    if exc.hint:
        sys.stderr.write(f"Hint: {exc.hint}\n")
    details = getattr(exc, "details", None) or []
    for detail in details[:50]:
        sys.stderr.write(f"  {detail}\n")
    if len(details) > 50:
        sys.stderr.write(f"  … and {len(details) - 50} more\n")


def _json_error(code: str, message: str, hint: str | None, status: ExitStatus) -> None:
    payload = {"error": {"code": code, "message": message, "hint": hint,
                         "exit_status": int(status)}}
    sys.stderr.write(json.dumps(payload, ensure_ascii=False) + "\n")
