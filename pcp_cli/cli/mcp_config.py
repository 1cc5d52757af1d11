"""`pcp mcp-config`: the exact MCP configuration to paste into a client."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from pcp_cli.cli.output import JsonOpt, StoreOpt, emit, examples, note, text


def register(app: typer.Typer) -> None:
    @app.command("mcp-config", epilog=examples(
        "pcp mcp-config claude-desktop --for claude-desktop",
        "pcp mcp-config laptop --for claude-code --http https://desktop.example:8765/mcp",
        "pcp mcp-config notes-agent --for claude-code --allow-write"))
    def mcp_config(
        client: Annotated[str | None, typer.Argument(
            help="The client id whose grant the server uses (default: the --for name).")
        ] = None,
        target: Annotated[str, typer.Option(
            "--for", help="claude-desktop, cursor, claude-code, vscode or json.")] = "json",
        http: Annotated[str | None, typer.Option(
            "--http", metavar="URL", help="Configure the HTTP transport at this URL (e.g. "
            "http://127.0.0.1:8765/mcp) instead of stdio.")] = None,
        allow_write: Annotated[bool, typer.Option(
            "--allow-write", help="Let the server offer the write tools to this client (its "
            "grant must allow writing too).")] = False,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Print the MCP configuration for a client, with absolute paths, ready to paste."""
        from pcp_cli.mcp import commands

        out = commands.mcp_config(store_path, client, target=target, http_url=http,
                                  allow_write=allow_write)
        if out["grant_command"] and not as_json:
            effect = ("the server refuses its token" if http else "the server would show it "
                      "only the default namespace, read-only")
            note(f"{out['client_id']} has no grant in pcp.yaml: {effect}. Grant it first:")
            note(f"  {out['grant_command']}")
        if out["write_command"] and not as_json:
            note(f"{out['client_id']}'s grant does not allow writing: the server offers it no "
                 "write tools until you run:")
            note(f"  {out['write_command']}")
        if http and allow_write and not as_json:
            note("over HTTP the server decides: start it with `pcp serve --http ... "
                 "--allow-write`")
        if http and not as_json:
            note(f"replace the token placeholder with the output of: {out['token_command']}")
        if not as_json:
            note(f"paste into {out['where']}")
        emit(out, as_json, lambda: text(json.dumps(out["config"], indent=2)))
