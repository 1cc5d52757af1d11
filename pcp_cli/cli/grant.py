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
    source = view.get("default_scopes_source") or "pcp.yaml"
    text(f"defaults:  {', '.join(view.get('default_scopes') or []) or '(none)'}"
         + ("" if source == "pcp.yaml" else f"  ({source})"))
    text(f"protocol:  PCP v{view.get('pcp_version', '1.2')}")
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
        "--default-scope", help="What its calls that name no scopes read: a namespace or "
        "pattern inside its --scope values (repeatable; default: your own namespace if it is "
        "granted, else the first --scope). Other scopes are read only when a call names "
        "them.")] = None,
    pcp_version: Annotated[str | None, typer.Option(
        "--pcp-version", metavar="VERSION", help="The Portable Context Protocol version it is "
        "served: 1.2 (the default) or 1.1 (v1.2 fields kept under extensions).")] = None,
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
                              default_scopes=default_scope or [], pcp_version=pcp_version)
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
        ("client", "scopes", "default scopes", "sensitive", "write", "tokens", "made by",
         "last use"),
        ((v["client_id"], ", ".join(v["scopes"]), ", ".join(v["default_scopes"]) or "(none)",
          "yes" if v["allow_sensitive"] else "no",
          "yes" if v["allow_write"] else "no", len(v["tokens"]),
          f"OAuth: {v['oauth']['client_name']}" if v.get("oauth") else "pcp grant",
          (v.get("oauth") or {}).get("last_used") or "-") for v in views)))


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


@grant_app.command("oauth-clients", epilog=examples("pcp grant oauth-clients --json"))
def grant_oauth_clients(store_path: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """List the OAuth clients registered with `pcp serve --http` (and the grant each got)."""
    from pcp_cli.mcp import commands

    rows = commands.oauth_clients(store_path)
    if not rows and not as_json:
        note("no OAuth clients registered")
        return
    emit(rows, as_json, lambda: table(
        ("client id", "name", "redirects", "registered", "grant", "tokens"),
        ((r["client_id"], r["client_name"], " ".join(r["redirect_uris"]), r["registered_at"],
          r["grant"] or "-", r["tokens"]) for r in rows)))


@grant_app.command("remove-client", epilog=examples("pcp grant remove-client CLIENT_ID"))
def grant_remove_client(
    client: Annotated[str, typer.Argument(help="The OAuth client id (pcp grant oauth-clients).")],
    store_path: StoreOpt = None, as_json: JsonOpt = False,
) -> None:
    """Forget an OAuth client: its registration, its tokens and the grant made for it."""
    from pcp_cli.mcp import commands

    result = commands.oauth_remove_client(store_path, client)
    emit(result, as_json, lambda: note(
        f"removed OAuth client {client}; {result['tokens_revoked']} token(s) revoked"
        + (f"; grant {', '.join(result['grants'])} removed" if result["grants"] else "")))


@grant_app.command("approve", epilog=examples("pcp grant approve",
                                              "pcp grant approve REQUEST_ID"))
def grant_approve(
    request: Annotated[str | None, typer.Argument(
        help="The authorization request to approve; without it, list the pending ones.")
    ] = None,
    store_path: StoreOpt = None, as_json: JsonOpt = False,
) -> None:
    """Approve an OAuth authorization request from this terminal, instead of typing the
    approval code `pcp serve` printed (the consent page still picks what it may see)."""
    from pcp_cli.mcp import commands

    if request is None:
        rows = commands.oauth_pending(store_path)
        if not rows and not as_json:
            note("no authorization request is waiting for consent")
            return
        emit(rows, as_json, lambda: table(
            ("request", "client", "redirect host", "asks", "approved", "expires in"),
            ((r["request"], r["client_name"], r["redirect_host"], " ".join(r["scopes"]),
              "yes" if r["approved"] else "no", f"{r['expires_in']}s") for r in rows)))
        return
    result = commands.oauth_approve(store_path, request)
    emit(result, as_json, lambda: note(f"approved request {request}: finish on the consent "
                                       "page"))


def register(app: typer.Typer) -> None:
    app.add_typer(grant_app, name="grant")
