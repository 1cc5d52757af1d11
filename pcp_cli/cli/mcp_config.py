"""`pcp mcp-config`: the exact MCP configuration to paste into a client."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from pcp_cli.cli.output import JsonOpt, StoreOpt, emit, examples, note, text


def register(app: typer.Typer) -> None:
    @app.command("mcp-config", epilog=examples(
        "pcp mcp-config claude-desktop --for claude-desktop",
        "pcp mcp-config laptop --for claude-code --http https://desktop.example:8765/mcp"))
    def mcp_config(
        client: Annotated[str | None, typer.Argument(
            help="The client id whose grant the server uses (default: the --for name).")
        ] = None,
        target: Annotated[str, typer.Option(
            "--for", help="claude-desktop, cursor, claude-code, vscode or json.")] = "json",
        http: Annotated[str | None, typer.Option(
            "--http", metavar="URL", help="Configure the HTTP transport at this URL (e.g. "
            "http://127.0.0.1:8765/mcp) instead of stdio.")] = None,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Print the MCP configuration for a client, with absolute paths, ready to paste."""
        from pcp_cli.mcp import commands

        out = commands.mcp_config(store_path, client, target=target, http_url=http)
        if out["grant_command"] and not as_json:
            effect = ("the server refuses its token" if http else "the server would show it "
                      "only the default namespace, read-only")
            note(f"{out['client_id']} has no grant in pcp.yaml: {effect}. Grant it first:")
            note(f"  {out['grant_command']}")
        if http and not as_json:
            note(f"replace the token placeholder with the output of: {out['token_command']}")
        if not as_json:
            note(f"paste into {out['where']}")
        emit(out, as_json, lambda: text(json.dumps(out["config"], indent=2)))
