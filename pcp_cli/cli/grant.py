"""`pcp grant`: which MCP clients may see what, and their HTTP tokens.

Grants live in `pcp.yaml`'s `clients` section (edited atomically, the rest of the file and its
comments kept); tokens live only as salted hashes under `.pcp/`, never in a committed file.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from pcp_cli.cli.output import JsonOpt, StoreOpt, emit, examples, note, table, text

grant_app = typer.Typer(help="MCP client grants (pcp.yaml) and their HTTP tokens.",
                        no_args_is_help=True)

ClientArg = Annotated[str, typer.Argument(help="The client id, e.g. claude-desktop.")]


def _show(view: dict[str, Any]) -> None:
    text(f"client:    {view['client_id']}")
    text(f"scopes:    {', '.join(view['scopes']) or '(none)'}")
    text(f"defaults:  {', '.join(view.get('default_scopes') or []) or '(all its scopes)'}")
    text(f"sensitive: {'allowed' if view['allow_sensitive'] else 'never'}")
    text(f"writes:    {'allowed (with pcp serve --allow-write)' if view['allow_write'] else 'no'}")
    if view.get("description"):
        text(f"about:     {view['description']}")
    tokens = view.get("tokens") or []
    text(f"tokens:    {', '.join(t['token_id'] + ' (' + t['created_at'] + ')' for t in tokens)}"
         if tokens else "tokens:    none (pcp grant token " + view["client_id"] + ")")


@grant_app.command("add", epilog=examples(
    "pcp grant add claude-desktop --scope user:ada-lumen --scope project:tidewatch",
    "pcp grant add cursor --scope 'project:*' --write",
    "pcp grant add agent --scope 'project:*' --default-scope project:tidewatch"))
def grant_add(
    client: ClientArg,
    scope: Annotated[list[str] | None, typer.Option(
        "--scope", help="A namespace, prefix:* pattern or * the client may read "
        "(repeatable, at least one).")] = None,
    default_scope: Annotated[list[str] | None, typer.Option(
        "--default-scope", help="What its searches that name no scopes search: a namespace "
        "or pattern inside its --scope values (repeatable; default: all of them).")] = None,
    sensitive: Annotated[bool, typer.Option(
        "--sensitive", help="Also let it see high-sensitivity pages.")] = False,
    write: Annotated[bool, typer.Option(
        "--write", help="Let it write (still needs `pcp serve --allow-write`).")] = False,
    description: Annotated[str | None, typer.Option(
        "--description", help="A note on what this client is.")] = None,
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Add (or replace) a client's grant in pcp.yaml."""
    from pcp_cli.mcp import commands

    view = commands.grant_add(store_path, client, scopes=scope or [], sensitive=sensitive,
                              write=write, description=description,
                              default_scopes=default_scope or [])
    if not as_json:
        note(f"{'replaced' if view['replaced'] else 'added'} the grant of {client} in pcp.yaml")
    emit(view, as_json, lambda: _show(view))


@grant_app.command("list", epilog=examples("pcp grant list", "pcp grant list --json"))
def grant_list(store_path: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """List the client grants in pcp.yaml."""
    from pcp_cli.mcp import commands

    views = commands.grant_list(store_path)
    if not views and not as_json:
        note("no client grants in pcp.yaml (add one: pcp grant add CLIENT --scope NAMESPACE)")
        return
    emit(views, as_json, lambda: table(
        ("client", "scopes", "default scopes", "sensitive", "write", "tokens"),
        ((v["client_id"], ", ".join(v["scopes"]), ", ".join(v["default_scopes"]) or "(all)",
          "yes" if v["allow_sensitive"] else "no",
          "yes" if v["allow_write"] else "no", len(v["tokens"])) for v in views)))


@grant_app.command("show", epilog=examples("pcp grant show claude-desktop"))
def grant_show(client: ClientArg, store_path: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Show one client's grant and its tokens (ids and dates, never the tokens)."""
    from pcp_cli.mcp import commands

    view = commands.grant_show(store_path, client)
    emit(view, as_json, lambda: _show(view))


@grant_app.command("remove", epilog=examples("pcp grant remove cursor"))
def grant_remove(client: ClientArg, store_path: StoreOpt = None, as_json: JsonOpt = False
                 ) -> None:
    """Remove a client's grant from pcp.yaml and revoke its tokens."""
    from pcp_cli.mcp import commands

    result = commands.grant_remove(store_path, client)
    emit(result, as_json, lambda: note(
        f"removed the grant of {client}; {result['tokens_revoked']} token(s) revoked"))


@grant_app.command("token", epilog=examples(
    "pcp grant token laptop-claude-code", "pcp grant token laptop-claude-code --rotate"))
def grant_token(
    client: ClientArg,
    rotate: Annotated[bool, typer.Option(
        "--rotate", help="Revoke the client's other tokens at the same moment.")] = False,
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Issue an HTTP bearer token for a client, printed once (only a salted hash is kept)."""
    from pcp_cli.mcp import commands

    result = commands.grant_token(store_path, client, rotate=rotate)
    if not as_json:
        note(f"token {result['token_id']} for {client}"
             + (" (older tokens revoked)" if rotate else "")
             + ": shown once, store it in the client's config")
    emit(result, as_json, lambda: text(result["token"]))


@grant_app.command("revoke-tokens", epilog=examples("pcp grant revoke-tokens laptop-claude-code"))
def grant_revoke_tokens(client: ClientArg, store_path: StoreOpt = None,
                        as_json: JsonOpt = False) -> None:
    """Revoke every HTTP token of a client (its requests fail at once; the grant stays)."""
    from pcp_cli.mcp import commands

    result = commands.grant_revoke_tokens(store_path, client)
    emit(result, as_json, lambda: note(f"{result['tokens_revoked']} token(s) of {client} "
                                       "revoked"))


def register(app: typer.Typer) -> None:
    app.add_typer(grant_app, name="grant")
