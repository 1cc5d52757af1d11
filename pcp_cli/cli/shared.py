"""What the CLI's entry (main.py) and its command modules share, importing nothing heavy (no
typer: `pcp --version` reads this too): the command table, the state of the global options,
the search notes and `one_line`. Command modules import this, never main.py.
"""

from __future__ import annotations

from typing import Any

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
    "pcp_cli.cli.sources",
    "pcp_cli.cli.imports",
    "pcp_cli.cli.ingest",
    "pcp_cli.cli.export",
    "pcp_cli.cli.review",
    "pcp_cli.cli.search",
    "pcp_cli.cli.hooks",
    "pcp_cli.cli.monitor",
    "pcp_cli.cli.propose",
    "pcp_cli.cli.console",
    "pcp_cli.cli.retention",
)

# The module that registers each top-level command or group. Running one command builds the app
# with its module alone: importing and registering all fourteen (typer builds a pydantic adapter
# per parameter) cost ~70 ms of CPU per run. A name missing here still works through the whole
# app; tests/test_cli_lazy_commands.py checks the table against what each module registers.
COMMAND_MODULE = {
    **dict.fromkeys(("init", "add", "edit", "revise", "show", "history", "ls", "related", "diff",
                     "link", "archive", "tombstone", "delete"), "pcp_cli.cli.pages"),
    "keystone": "pcp_cli.cli.keystones",
    "timeline": "pcp_cli.cli.timeline",
    "profile": "pcp_cli.cli.profile",
    "validate": "pcp_cli.cli.maintenance",
    "doctor": "pcp_cli.cli.maintenance",
    **dict.fromkeys(("status", "resolve", "sync", "merge-file"), "pcp_cli.cli.sync"),
    "serve": "pcp_cli.cli.serve",
    "audit": "pcp_cli.cli.serve",
    "grant": "pcp_cli.cli.grant",
    "mcp-config": "pcp_cli.cli.mcp_config",
    **dict.fromkeys(("register", "unregister", "sources"), "pcp_cli.cli.sources"),
    "import": "pcp_cli.cli.imports",
    "ingest": "pcp_cli.cli.ingest",
    "export": "pcp_cli.cli.export",
    "review": "pcp_cli.cli.review",
    "propose": "pcp_cli.cli.propose",
    **dict.fromkeys(("search", "index", "stats", "scopes", "capabilities"), "pcp_cli.cli.search"),
    **dict.fromkeys(("hooks", "watch"), "pcp_cli.cli.hooks"),
    "monitor": "pcp_cli.cli.monitor",
    "console": "pcp_cli.cli.console",
    "retention": "pcp_cli.cli.retention",
}

# The global options of this run (main.py sets them; `--no-pager` is read by output.py).
STATE: dict[str, Any] = {"traceback": False, "no_pager": False}

BUILDING_NOTE = "Building the search index for {} pages (once; later searches catch up).\n"
SCAN_NOTE = ("The search index is being built in the background (once; .pcp/index-build.log). "
             "Until it is, these results come from a scan of the files and are not ranked.\n")


def one_line(message: str) -> str:
    """A parser's multi-line error text (YAML's "in <unicode string>, line 3…", JSON's
    positions, yajl's "(right here) ------^" pointer) as one line: the pointer line dropped,
    every run of whitespace, newlines included, made one space, and what cannot be printed as it
    is (the bytes of a name that is not UTF-8, an escape code) escaped."""
    import re

    from pcp_cli.model.filenames import shown  # a name that is not UTF-8, an escape code

    message = re.sub(r"\(right here\) -*\^", "", message)
    return shown(" ".join(message.split()).replace("( ", "(").replace(" )", ")"))
