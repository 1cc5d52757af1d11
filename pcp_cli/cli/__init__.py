"""The `pcp` command line: typer + rich over the library in `pcp_cli.api`."""

from pcp_cli.cli.main import main

__all__ = ["main"]
