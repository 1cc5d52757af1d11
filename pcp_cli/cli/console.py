"""`pcp console`: the local web console (review, pages, assistants, health).

It calls the console front end's entry point (`pcp_cli.console.commands`), imported inside the
command, so `pcp --help` and every other command load none of starlette, uvicorn or Jinja2.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from pcp_cli.cli.output import StoreOpt, examples


def register(app: typer.Typer) -> None:
    @app.command(epilog=examples("pcp console", "pcp console --port 8770 --no-browser"))
    def console(
        port: Annotated[int, typer.Option(
            "--port", metavar="N", help="Serve on 127.0.0.1:N (default: any free port).")] = 0,
        no_browser: Annotated[bool, typer.Option(
            "--no-browser", help="Print the sign-in link without opening a browser.")] = False,
        store_path: StoreOpt = None,
    ) -> None:
        """Open your store in a local web console: review proposals, browse pages, see what
        each assistant read, check the store's health. Only on 127.0.0.1, only for you: the
        first line printed is a one-time sign-in link. Ctrl-C stops it."""
        from pcp_cli.console import commands

        commands.serve_console(store_path, port=port, open_browser=not no_browser,
                               out=sys.stdout, log=sys.stderr)
