"""The typer app, its global options, and the single error funnel.

Every PcpError becomes `Error: …` / `Hint: …` on stderr (a JSON error object on stderr under
`--json`) and its documented exit status. Anything unexpected prints one line and suggests
`--traceback`.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pcp_cli import __version__
from pcp_cli.errors import ExitStatus, PcpError

if TYPE_CHECKING:
    import typer

# Command modules, each with a `register(app)`; imported when the app is built. They keep heavy
# imports (whoosh, jsonschema, mcp) inside the command functions.
COMMAND_MODULES = (
    "pcp_cli.cli.pages",
    "pcp_cli.cli.keystones",
    "pcp_cli.cli.timeline",
    "pcp_cli.cli.profile",
    "pcp_cli.cli.maintenance",
    "pcp_cli.cli.sync",
    "pcp_cli.cli.serve",
    "pcp_cli.cli.grant",
    "pcp_cli.cli.mcp_config",
    "pcp_cli.cli.imports",
    "pcp_cli.cli.ingest",
    "pcp_cli.cli.export",
    "pcp_cli.cli.review",
    "pcp_cli.cli.search",
)

STATE = {"traceback": False, "store": None}


def _version(value: bool) -> None:
    import typer

    if value:
        sys.stdout.write(f"pcp {__version__}\n")
        raise typer.Exit()


def build_app() -> typer.Typer:
    import typer

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
    def root(  # typer is imported lazily, so options are defaults, not Annotated[...] hints
        version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                     help="Print the version and exit."),
        traceback: bool = typer.Option(False, "--traceback",
                                       help="Show the full traceback on errors."),
    ) -> None:
        """pcp: your AI context, in a folder you own."""
        STATE["traceback"] = traceback

    for name in COMMAND_MODULES:
        importlib.import_module(name).register(app)
    return app


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    sys.exit(run(args))


def guarded(work: Callable[[], int], want_json: bool) -> int:
    """Run `work` and turn what it raises into a message and an exit status: the one funnel."""
    try:
        return work()
    except PcpError as exc:
        _report(exc, want_json)
        return int(exc.exit_status)
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


def run(args: list[str]) -> int:
    """Run the CLI on `args` and return the exit status (never raises)."""
    want_json = "--json" in args
    STATE["traceback"] = "--traceback" in args
    fast = _fast_command(args)
    if fast is not None:
        return fast
    return guarded(lambda: _run_typer(args, want_json), want_json)


def _run_typer(args: list[str], want_json: bool) -> int:
    import typer

    exit_types, abort_types, usage_types = _click_exceptions()
    try:
        command = typer.main.get_command(build_app())
        returned = command.main(args=args, prog_name="pcp", standalone_mode=False)
        # Without standalone mode click returns typer.Exit's code instead of raising it.
        return returned if isinstance(returned, int) else ExitStatus.OK
    except exit_types as exc:
        return int(exc.exit_code or 0)
    except abort_types:
        sys.stderr.write("Aborted.\n")
        return ExitStatus.UNEXPECTED
    except usage_types as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # a bare `pcp` or group: the help
            sys.stderr.write(exc.format_message().rstrip("\n") + "\n")
            return ExitStatus.USAGE
        if want_json:
            _json_error("usage", exc.format_message(), None, ExitStatus.USAGE)
        else:
            ctx = getattr(exc, "ctx", None)
            if ctx is not None:
                sys.stderr.write(ctx.get_usage() + "\n")
            sys.stderr.write(f"Error: {exc.format_message()}\n")
            sys.stderr.write(_usage_hint(exc))
        return ExitStatus.USAGE


def _click_exceptions() -> tuple[tuple[type, ...], tuple[type, ...], tuple[type, ...]]:
    """Exit, Abort and ClickException from click and from the copy newer typers bundle."""
    import importlib

    found: tuple[list[type], list[type], list[type]] = ([], [], [])
    for module_name, names in (
        ("typer.exceptions", ("Exit", "Abort", None)),
        ("typer._click.exceptions", (None, None, "ClickException")),
        ("click.exceptions", ("Exit", "Abort", "ClickException")),
    ):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for bucket, name in zip(found, names, strict=True):
            if name and hasattr(module, name):
                bucket.append(getattr(module, name))
    exits, aborts, usage = found
    return tuple(exits), tuple(aborts), tuple(usage)


def _fast_command(args: list[str]) -> int | None:
    """`pcp export --format micro_prompt [--store S] [--scope NS]...`, without typer.

    Clients run this at every cold start, and building the typer app costs more than the work
    (typer, click and pydantic imports: ~100 ms of the 0.3 s budget). This handles exactly
    those options, through the same library call and the same error reporting; any other
    argument (--help, --out, a typo) returns None and goes the normal way.
    """
    if args and args[0] == "search":
        return _fast_search(args[1:])
    if not args or args[0] != "export":
        return None
    fmt: str | None = None
    store: str | None = None
    scopes: list[str] = []
    rest = args[1:]
    index = 0
    while index < len(rest):
        name, has_value, value = rest[index].partition("=")
        if not has_value:
            if index + 1 >= len(rest):
                return None
            value = rest[index + 1]
            index += 1
        index += 1
        if name == "--format" or (name == "-F" and not has_value):
            fmt = value
        elif name == "--store":
            store = value
        elif name == "--scope":
            scopes.append(value)
        else:
            return None
    if fmt not in ("micro_prompt", "micro-prompt"):
        return None

    def work() -> int:
        from pcp_cli import api

        with api.open_store(store) as opened:
            data = api.export_text(opened, "micro_prompt", scopes=scopes)
        sys.stdout.write(data)
        sys.stdout.flush()
        return ExitStatus.OK

    return guarded(work, False)


BUILDING_NOTE = "Building the search index for {} pages (once; later searches catch up).\n"
# `pcp search` options the fast path understands: name -> (key, takes a value, repeatable).
_SEARCH_OPTIONS = {
    "--store": ("store", True, False),
    "--limit": ("limit", True, False),
    "-n": ("limit", True, False),
    "--type": ("types", True, True),
    "--exclude-type": ("exclude_types", True, True),
    "--scope": ("scopes", True, True),
    "--min-score": ("min_score", True, False),
    "--include-superseded": ("include_superseded", False, False),
    "--include-sensitive": ("include_sensitive", False, False),
    "--json": ("json", False, False),
}


def _fast_search(rest: list[str]) -> int | None:
    """`pcp search QUERY [options] --json` (or piped), without typer.

    Building the typer app costs ~100 ms, as much as the search itself on a 10,000-page store,
    and whole-process search time is what a person (or a script looping over queries) feels.
    Same library call, same output, same error funnel. Anything unusual (--help, a typo, a bad
    number, two queries, human output on a terminal) returns None and goes the normal way.
    """
    opts: dict[str, Any] = {"types": [], "exclude_types": [], "scopes": []}
    query: str | None = None
    index = 0
    while index < len(rest):
        arg = rest[index]
        index += 1
        name, has_value, value = arg.partition("=")
        spec = _SEARCH_OPTIONS.get(name) if arg.startswith("-") else None
        if spec is None:
            if arg.startswith("-") or query is not None:
                return None
            query = arg
            continue
        key, takes_value, repeatable = spec
        if takes_value and not has_value:
            if index >= len(rest):
                return None
            value = rest[index]
            index += 1
        elif not takes_value and has_value:
            return None
        if repeatable:
            opts[key].append(value)
        else:
            opts[key] = value if takes_value else True
    if query is None or (not opts.get("json") and sys.stdout.isatty()):
        return None
    try:
        limit = None if "limit" not in opts else int(opts["limit"])
        min_score = None if "min_score" not in opts else float(opts["min_score"])
    except ValueError:
        return None
    want_json = bool(opts.get("json"))

    def work() -> int:
        from pcp_cli import api

        with api.open_store(opts.get("store")) as opened:
            if not want_json and api.index_missing(opened):  # stderr stays JSON under --json
                sys.stderr.write(BUILDING_NOTE.format(api.index_pages_count(opened)))
            data = api.search(
                opened, query, limit=limit, types=opts["types"],
                exclude_types=opts["exclude_types"],
                include_superseded=bool(opts.get("include_superseded")),
                include_sensitive=bool(opts.get("include_sensitive")), min_score=min_score,
                scopes=opts["scopes"] or None)
        if want_json:
            sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        else:
            filters = data["filters_applied"]
            if filters.get("capped"):
                sys.stderr.write(f"Showing at most {filters['limit']} results (asked for "
                                 f"{filters['limit_requested']}).\n")
            if not data["results"]:
                sys.stderr.write("No results.\n")
            for r in data["results"]:
                cells = (r["id"], r["type"], r["origin"],
                         f"{r['score']:.2f}" if "score" in r else "-",
                         (r.get("timestamp") or "")[:10], r["snippet"])
                sys.stdout.write("\t".join(c.replace("\t", " ").replace("\n", " ")
                                           for c in cells) + "\n")
        sys.stdout.flush()
        return ExitStatus.OK

    return guarded(work, want_json)


def _usage_hint(exc: Exception) -> str:
    ctx = getattr(exc, "ctx", None)
    name = ctx.command_path if ctx is not None else "pcp"
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
