"""The typer app, its global options, and the single error funnel.

Every PcpError becomes `Error: …` / `Hint: …` on stderr (a JSON error object on stderr under
`--json`) and its documented exit status. Anything unexpected prints one line and suggests
`--traceback`.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pcp_cli import __version__
from pcp_cli.cli.shared import (
    BUILDING_NOTE,
    COMMAND_MODULE,
    COMMAND_MODULES,
    SCAN_NOTE,
    STATE,
    one_line,
)
from pcp_cli.errors import ExitStatus, PcpError

if TYPE_CHECKING:
    import typer


# Options taken before the command, like git's: `pcp --store PATH ls`, `pcp -C DIR ls`.
# name -> takes a value. `run` applies them before anything else (the typer-free fast paths
# included); the root callback declares them too, for `--help` and completion.
# (`--traceback` is left to typer: a leading one also keeps the fast paths out of the way.)
GLOBAL_OPTIONS = {"--store": True, "-C": True, "--no-pager": False}


def _version(value: bool) -> None:
    import typer

    if value:
        sys.stdout.write(f"pcp {__version__}\n")
        raise typer.Exit()


def build_app(command: str | None = None) -> typer.Typer:
    """The typer app: every command, or only the module of `command` when the table knows it
    (the usage, help and errors of that command are the same either way)."""
    import typer

    app = typer.Typer(
        name="pcp",
        help="Own your AI context: a Git-friendly folder of Markdown pages with immutable "
        "revisions, searchable, exportable, and served to AI clients over MCP.",
        no_args_is_help=True,
        add_completion=True,
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
        store: str | None = typer.Option(
            None, "--store", metavar="PATH",
            help="Use the store in PATH (as if every command got --store PATH)."),
        directory: str | None = typer.Option(
            None, "-C", metavar="DIR",
            help="Run as if pcp was started in DIR (its store: the nearest pcp.yaml from "
            "there; PCP_STORE is ignored)."),
        no_pager: bool = typer.Option(False, "--no-pager",
                                      help="Never pipe output through a pager."),
    ) -> None:
        """pcp: your AI context, in a folder you own."""
        STATE["traceback"] = STATE["traceback"] or traceback
        STATE["no_pager"] = STATE["no_pager"] or no_pager
        # Normally `run` has applied (and removed) these already; this is for other callers.
        if directory is not None:
            _change_directory(directory)
        if store is not None:
            _use_store(store)

    modules = (COMMAND_MODULE[command],) if command in COMMAND_MODULE else COMMAND_MODULES
    for name in modules:
        importlib.import_module(name).register(app)
    if command in COMMAND_MODULE:
        _keep_only(app, command)
    _whole_short_help(app)
    return app


def _keep_only(app: typer.Typer, command: str) -> None:
    """Drop what `command`'s module registered beside it. typer reads the signature and
    evaluates the annotations of every command it builds: ~15 ms of CPU for the thirteen of
    `pcp_cli.cli.pages`, to run one. (Nothing is dropped if the table named no command.)"""
    import typer.main

    def named(value: object) -> str | None:  # typer keeps unset values as placeholders
        return value if isinstance(value, str) else None

    commands = [c for c in app.registered_commands if c.callback is not None and (
        named(c.name) or typer.main.get_command_name(c.callback.__name__)) == command]
    groups = [g for g in app.registered_groups if command in (
        named(g.name), named(g.typer_instance.info.name) if g.typer_instance else None)]
    if commands or groups:
        app.registered_commands, app.registered_groups = commands, groups


# What an option's value is, in a word, for options that do not say it themselves.
METAVARS = {
    "--store": "PATH", "--limit": "N", "--type": "TYPE", "--exclude-type": "TYPE",
    "--scope": "NS", "--namespace": "NS", "--min-score": "0-1", "--format": "FORMAT",
    "--out": "FILE", "--client-id": "ID", "--client": "ID", "--since": "DATE",
    "--remote": "NAME", "--message": "TEXT", "--keep": "REV", "--rev": "REV",
    "--reason": "TEXT", "--confidence": "0-1", "--importance": "0-1",
}


# The click trees built so far in this process, by the command they hold (`build_app` keeps
# only the named command of its module; None: every command).
# A process runs one command, so this matters only to in-process callers that run many (the
# tests' `cli()`): typer's building of the tree (a signature and type hints per parameter) was
# ~85 ms of each run, more than most commands themselves. click commands keep no state between
# runs (each `main()` makes its own context).
_COMMANDS: dict[str | None, Any] = {}


def get_command(name: str | None = None) -> Any:
    """The click command tree of the app (only `name`'s module when given: see
    COMMAND_MODULE), with readable metavars everywhere."""
    import typer

    key = name if name in COMMAND_MODULE else None
    command = _COMMANDS.get(key)
    if command is None:
        command = typer.main.get_command(build_app(name))
        _readable_metavars(command)
        _COMMANDS[key] = command
    return command


def _readable_metavars(command: Any) -> None:
    """`--store PATH`, `QUERY`: never typer's `<str>` or `<list[str]>`. An option without a
    metavar gets the word METAVARS has for it, else its name in capitals."""
    for param in getattr(command, "params", []):
        if param.metavar is not None or getattr(param, "is_flag", False) or \
                getattr(param, "count", False):
            continue
        if param.param_type_name == "argument":
            param.metavar = (param.name or "VALUE").upper()
        else:
            long = max(param.opts, key=len)
            param.metavar = METAVARS.get(long, long.lstrip("-").replace("-", "_").upper())
    for sub in (getattr(command, "commands", None) or {}).values():
        _readable_metavars(sub)


def _whole_short_help(app: typer.Typer) -> None:
    """Command lists show each command's whole first paragraph (wrapped), never one cut at
    45 characters with "…", which is what click does with a help text it shortens itself."""
    import inspect

    def first_paragraph(text: str | None) -> str | None:
        if not text:
            return None
        return " ".join(inspect.cleandoc(text).split("\n\n")[0].split())

    for command in app.registered_commands:
        if command.short_help is None and not command.hidden:
            command.short_help = first_paragraph(command.help or inspect.getdoc(command.callback))
    def given(value: object) -> str | None:  # typer keeps unset values as placeholders
        return value if isinstance(value, str) else None

    for group in app.registered_groups:
        sub = group.typer_instance
        if sub is None:
            continue
        if given(group.short_help) is None and given(sub.info.short_help) is None:
            group.short_help = first_paragraph(given(group.help) or given(sub.info.help))
        _whole_short_help(sub)


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
        known = _storage_failure(exc) or _not_text_argument(exc)
        if known is not None:
            _report(known, want_json)
            return int(known.exit_status)
        if STATE["traceback"]:
            raise
        message = one_line(f"{type(exc).__name__}: {exc}")
        if want_json:
            _json_error("unexpected", message, "rerun with --traceback", ExitStatus.UNEXPECTED)
        else:
            sys.stderr.write(f"Error: unexpected {message}\n")
            sys.stderr.write("Hint: rerun with --traceback and report it.\n")
        return ExitStatus.UNEXPECTED


def _show_warnings() -> None:
    """What the library repaired on its own (PcpWarning) goes to stderr as `Warning: …`."""
    import warnings

    from pcp_cli.errors import PcpNotice, PcpWarning

    def show(message: Warning | str, category: type[Warning], *args: Any, **kw: Any) -> None:
        if issubclass(category, PcpWarning):
            sys.stderr.write(f"Warning: {message}\n")
        elif issubclass(category, PcpNotice):
            sys.stderr.write(f"Note: {message}.\n")
        else:
            original(message, category, *args, **kw)

    original = getattr(warnings.showwarning, "pcp_original", warnings.showwarning)
    show.pcp_original = original  # type: ignore[attr-defined]
    warnings.showwarning = show
    warnings.simplefilter("always", PcpWarning)
    warnings.simplefilter("always", PcpNotice)


def _storage_failure(exc: Exception) -> PcpError | None:
    """A disk that refused a write somewhere pcp did not wrap it (SQLite, a library), or a file
    where the store needs a folder: their own exit status, not "unexpected"."""
    import errno

    from pcp_cli.errors import StorageFailed

    codes = {errno.ENOSPC, errno.EIO, errno.EROFS, errno.EDQUOT, errno.EFBIG}
    words = ("disk is full", "disk i/o error", "readonly database")
    if isinstance(exc, OSError) and exc.errno in codes:
        what = f" {exc.filename}" if exc.filename else ""
        return StorageFailed(f"the disk refused a write{what}: {exc.strerror or exc}",
                             hint="free some disk space (or check the disk), then run "
                             "`pcp doctor`: pcp's writes are undone or finished by it")
    if isinstance(exc, NotADirectoryError):  # e.g. relations/ replaced by a file
        from pcp_cli.errors import StoreDamaged

        what = exc.filename or "a path"
        return StoreDamaged(f"{what}: a file is where a folder must be",
                            hint="move it aside and put the folder back (from git or a "
                            "backup); `pcp doctor` checks the store")
    if type(exc).__module__ == "sqlite3" and "database is locked" in str(exc).lower():
        from pcp_cli.errors import StoreLocked

        return StoreLocked("pcp's catalog (in .pcp/) stayed locked by another pcp process "
                           "for 30 s (a first build of a big store's catalog, `pcp index`, or "
                           "a process that is stopped)",
                           hint="try again when it is done; `pcp status` in a while names a "
                           "build that is running")
    if type(exc).__module__ == "sqlite3" and any(w in str(exc).lower() for w in words):
        return StorageFailed(f"the disk refused a write to the catalog (.pcp/): {exc}",
                             hint="free some disk space (or check the disk); the catalog is "
                             "derived and rebuilt from the files, nothing in the store is lost")
    return None


def run(args: list[str]) -> int:
    """Run the CLI on `args` and return the exit status (never raises).

    The global options before the command change the process's folder or PCP_STORE; both are
    put back afterwards, so an in-process caller (the tests) sees no change.
    """
    want_json = "--json" in args
    STATE["args"] = list(args)
    STATE["traceback"] = "--traceback" in args
    STATE["no_pager"] = False
    _show_warnings()
    saved_cwd, saved_store = os.getcwd(), os.environ.get("PCP_STORE")
    try:
        try:
            args = _apply_global_options(args)
        except PcpError as exc:
            _report(exc, want_json)
            return int(exc.exit_status)
        if _asks_version(args):
            sys.stdout.write(f"pcp {__version__}\n")
            return ExitStatus.OK
        fast = _fast_command(args)
        if fast is not None:
            return fast
        return guarded(lambda: _run_typer(args, want_json), want_json)
    finally:
        os.chdir(saved_cwd)
        if saved_store is None:
            os.environ.pop("PCP_STORE", None)
        else:
            os.environ["PCP_STORE"] = saved_store


def _asks_version(args: list[str]) -> bool:
    """`pcp --version` (after the global options, maybe with --traceback): the version is
    printed before typer is even imported. Building the app to run the eager `--version`
    callback cost ~150 ms of CPU (typer, click, pydantic and every command module) to print
    one line; this is 0 extra. Anything else (`pcp ls --version`) goes to typer as before."""
    for arg in args:
        if arg == "--version":
            return True
        if arg != "--traceback":
            return False
    return False


def _apply_global_options(args: list[str]) -> list[str]:
    """Apply (and drop) the options given before the command; return the rest.

    `--no-pager` is also taken after the command (people type `pcp show X --no-pager`), up
    to a `--` that ends the options.
    """
    index = 0
    while index < len(args):
        name, has_value, value = args[index].partition("=")
        if name.startswith("-C") and len(name) > 2 and not has_value:  # -CDIR
            name, has_value, value = "-C", True, name[2:]
        if name not in GLOBAL_OPTIONS:
            break
        takes_value = GLOBAL_OPTIONS[name]
        if takes_value and not has_value:
            if index + 1 >= len(args):
                from pcp_cli.errors import UsageError

                raise UsageError(f"{name} needs a value", hint="e.g. pcp --store PATH ls")
            value = args[index + 1]
            index += 1
        index += 1
        if name == "-C":
            _change_directory(value)
        elif name == "--store":
            _use_store(value)
        elif name == "--no-pager":
            STATE["no_pager"] = True
    rest = args[index:]
    end = rest.index("--") if "--" in rest else len(rest)
    if "--no-pager" in rest[:end]:
        STATE["no_pager"] = True
        rest = [a for i, a in enumerate(rest) if not (a == "--no-pager" and i < end)]
    return rest


def _change_directory(directory: str) -> None:
    from pcp_cli.errors import UsageError

    try:
        os.chdir(os.path.expanduser(directory))
    except FileNotFoundError:
        raise UsageError(f"-C {directory}: no such folder") from None
    except NotADirectoryError:
        raise UsageError(f"-C {directory}: not a folder") from None
    except OSError as exc:
        raise UsageError(f"-C {directory}: {exc.strerror}") from None
    os.environ.pop("PCP_STORE", None)  # "run as if started there": the store found from there


def _use_store(path: str) -> None:
    os.environ["PCP_STORE"] = os.path.abspath(os.path.expanduser(path))


def _run_typer(args: list[str], want_json: bool) -> int:

    exit_types, abort_types, usage_types = _click_exceptions()
    try:
        command = get_command(args[0] if args else None)
        returned = command.main(args=args, prog_name="pcp", standalone_mode=False)
        # Without standalone mode click returns typer.Exit's code instead of raising it.
        return returned if isinstance(returned, int) else ExitStatus.OK
    except exit_types as exc:
        return int(exc.exit_code or 0)
    except SystemExit as exc:  # typer's completion callbacks end with sys.exit()
        return exc.code if isinstance(exc.code, int) else ExitStatus.OK
    except abort_types:
        sys.stderr.write("Aborted.\n")
        return ExitStatus.UNEXPECTED
    except usage_types as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # a bare `pcp` or group: the help
            sys.stderr.write(exc.format_message().rstrip("\n") + "\n")
            return ExitStatus.USAGE
        if want_json:
            _json_error("usage", one_line(exc.format_message()), None, ExitStatus.USAGE)
        else:
            ctx = getattr(exc, "ctx", None)
            if ctx is not None:
                sys.stderr.write(ctx.get_usage() + "\n")
            sys.stderr.write(f"Error: {one_line(exc.format_message())}\n")
            sys.stderr.write(_usage_hint(exc))
        return ExitStatus.USAGE


def _click_exceptions() -> tuple[tuple[type, ...], tuple[type, ...], tuple[type, ...]]:
    """Exit, Abort and ClickException from the copy of click newer typers bundle, or from
    click itself for a typer without one (importing click beside the bundled copy cost ~5 ms
    of every command, for exceptions nothing raises)."""
    import importlib

    found: tuple[list[type], list[type], list[type]] = ([], [], [])
    for module_name, names in (
        ("typer.exceptions", ("Exit", "Abort", None)),
        ("typer._click.exceptions", (None, None, "ClickException")),
        ("click.exceptions", ("Exit", "Abort", "ClickException")),
    ):
        if module_name == "click.exceptions" and found[2]:
            continue  # typer bundles click: its exceptions are the ones raised
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

    Clients run this at every cold start, and the typer route costs more than the work. This
    handles exactly those options, through the same library call and the same error reporting;
    any other argument (--help, --out, a typo) returns None and goes the normal way.

    Measured (bench/cli_startup_bench.py, issue #16, CPU medians): even with the typer app
    built from the one command's module (COMMAND_MODULE) and everything else imported lazily,
    the typer route costs ~185 ms of CPU more for this export (0.30 vs 0.12 s) and ~170 ms
    more for `_fast_search` (0.42 vs 0.25 s): typer, click and pydantic imports plus typer's
    per-parameter adapters. Lazy imports do not make the fast paths unnecessary, so they stay.
    """
    if args and args[0] == "search":
        return _fast_search(args[1:])
    if args[:2] == ["hooks", "run"] and not {"-h", "--help"} & set(args):
        # What a coding agent runs at the end of every session: it must return at once and
        # never exit 2 (Claude Code's "block"), which typer does on a usage error.
        from pcp_cli.capture.queue import hook_main

        return hook_main(args[2:])
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

        data = api.micro_prompt_export(store, scopes=scopes)
        sys.stdout.write(data)
        sys.stdout.flush()
        return ExitStatus.OK

    return guarded(work, False)




def _fast_search(rest: list[str]) -> int | None:
    """`pcp search QUERY [options] --json` (or piped), without typer.

    Building the typer app costs ~100 ms, as much as the search itself on a 10,000-page store,
    and whole-process search time is what a person (or a script looping over queries) feels.
    Same request (its flags are the SearchRequest's option table), same library call, same
    output, same error funnel. Anything unusual (--help, a typo, a bad number, two queries,
    --sources, human output on a terminal) returns None and goes the normal way.
    """
    from pcp_cli.model.search_request import cli_flags

    flags = cli_flags()
    values: dict[str, Any] = {}
    store: str | None = None
    want_json = False
    query: str | None = None
    index = 0
    while index < len(rest):
        arg = rest[index]
        index += 1
        name, has_value, value = arg.partition("=")
        if arg.startswith("-") and name in ("--store", "--json"):
            if name == "--json":
                if has_value:
                    return None
                want_json = True
                continue
            if not has_value:
                if index >= len(rest):
                    return None
                value = rest[index]
                index += 1
            store = value
            continue
        spec = flags.get(name) if arg.startswith("-") else None
        if spec is None:
            if arg.startswith("-") or query is not None:
                return None
            query = arg
            continue
        opt, key = spec
        if opt.takes_value and not has_value:
            if index >= len(rest):
                return None
            value = rest[index]
            index += 1
        elif not opt.takes_value and has_value:
            return None
        try:
            typed: Any = int(value) if opt.kind == "integer" else float(value) \
                if opt.kind == "number" else value if opt.takes_value else True
        except ValueError:
            return None
        if opt.repeatable:
            values.setdefault(key, []).append(typed)
        elif key in values:
            return None  # given twice: typer's rules decide
        else:
            values[key] = typed
    if query is None or (not want_json and sys.stdout.isatty()):
        return None
    values.update(query=query, mode=values.get("mode", "text"))

    def work() -> int:
        from pcp_cli import api
        from pcp_cli.cli import search_text

        request = api.SearchRequest.from_options(values)
        with api.open_store(store, refresh=False) as opened:
            data = api.search_before_index(opened, request)
            if data is not None and not want_json:
                sys.stderr.write(SCAN_NOTE)
            if data is None:
                opened.refresh()
                if not want_json and api.index_missing(opened):  # stderr stays JSON: --json
                    sys.stderr.write(BUILDING_NOTE.format(api.index_pages_count(opened)))
                if not want_json and request.mode in ("semantic", "hybrid") and \
                        api.vectors_missing(opened):
                    sys.stderr.write(f"Embedding {api.index_pages_count(opened)} pages for "
                                     "semantic search (once; later searches embed only what "
                                     "changed)…\n")
                data = api.search(opened, request)
        if want_json:
            sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        else:
            for line in search_text.notes_before(data):
                sys.stderr.write(line + "\n")
            search_text.write_lines(data["results"])
            for line in search_text.notes_after(data):
                sys.stderr.write(line + "\n")
        sys.stdout.flush()
        return ExitStatus.OK

    return guarded(work, want_json)


def _usage_hint(exc: Exception) -> str:
    ctx = getattr(exc, "ctx", None)
    name = ctx.command_path if ctx is not None else "pcp"
    return f"Hint: run `{name} --help` for usage.\n"


def _not_text_argument(exc: Exception) -> PcpError | None:
    """An argument that is not UTF-8 text (a terminal in another encoding) met something
    that must encode it (a page reference, a namespace, a page's text): a usage error naming
    it, not an unexpected one. (A file name that is not UTF-8 is handled where files are
    read: model/filenames.py.)"""
    if not (isinstance(exc, UnicodeEncodeError) and "surrogates not allowed" in str(exc)):
        return None
    from pcp_cli.errors import UsageError
    from pcp_cli.model.filenames import is_text, shown

    odd = next((arg for arg in STATE.get("args") or () if not is_text(arg)), None)
    if odd is None:
        return None
    return UsageError(f"the argument {shown(odd)} is not valid UTF-8 text",
                      hint="pcp reads its arguments as UTF-8: check the terminal's encoding "
                      "(LANG, LC_ALL)")


def _report(exc: PcpError, want_json: bool) -> None:
    exc.message = one_line(exc.message)
    if exc.hint:
        exc.hint = one_line(exc.hint)
    if want_json:
        data = exc.to_json()
        try:
            text = json.dumps(data, ensure_ascii=False)
            text.encode("utf-8")
        except UnicodeEncodeError:  # a path that is not UTF-8: \udcXX escapes, still JSON
            text = json.dumps(data)
        sys.stderr.write(text + "\n")
        return
    sys.stderr.write(f"Error: {exc.message}\n")
    if exc.hint:
        sys.stderr.write(f"Hint: {exc.hint}\n")
    details = getattr(exc, "details", None) or []
    for detail in details[:50]:
        sys.stderr.write(f"  {one_line(str(detail))}\n")
    if len(details) > 50:
        sys.stderr.write(f"  … and {len(details) - 50} more\n")


def _json_error(code: str, message: str, hint: str | None, status: ExitStatus) -> None:
    payload = {"error": {"code": code, "message": message, "hint": hint,
                         "exit_status": int(status)}}
    sys.stderr.write(json.dumps(payload, ensure_ascii=False) + "\n")
