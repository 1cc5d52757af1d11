"""`pcp register`, `pcp unregister`, `pcp sources`: the PCP device registry
(`~/.pcp/sources.json`), and the `--sources` fan-out `pcp search` and `pcp timeline list` share.

Opt-in only: a store is listed because its owner ran `pcp register` (or wrote the entry by
hand); pcp never looks for other stores. The MCP client side lives in `pcp_cli.mcp`.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer

from pcp_cli import api
from pcp_cli.cli.output import (
    JsonOpt,
    StoreOpt,
    emit,
    examples,
    note,
    print_json,
    table,
    text,
)

SourcesOpt = Annotated[list[str] | None, typer.Option(
    "--sources", metavar="all|ID",
    help="Also ask these registered PCP sources (`all`, or ids; repeatable or comma-separated; "
    "see `pcp sources`), over MCP; results are grouped by source.")]
SourceTimeoutOpt = Annotated[float, typer.Option(
    "--source-timeout", metavar="SECONDS",
    help="With --sources: how long to wait for each source (default 20).")]
DEFAULT_SOURCE_TIMEOUT = 20.0


def register(app: typer.Typer) -> None:
    @app.command("register", epilog=examples(
        "pcp register", 'pcp register --name "Work notes" --client registry',
        "pcp register --transport http --url http://127.0.0.1:8765/mcp"))
    def register_(
        name: Annotated[str | None, typer.Option(
            "--name", help="Display name (default: pcp: <store folder>).")] = None,
        source_id: Annotated[str | None, typer.Option(
            "--id", help="The entry's id (default: pcp-<store folder>).")] = None,
        transport: Annotated[str, typer.Option(
            "--transport", metavar="stdio|http",
            help="stdio: agents launch `pcp serve` (default); http: a running `pcp serve "
            "--http`.")] = "stdio",
        client: Annotated[str | None, typer.Option(
            "--client", metavar="CLIENT",
            help="The client id whose grant the server uses (default: registry).")] = None,
        url: Annotated[str | None, typer.Option(
            "--url", help="--transport http: the MCP endpoint (default "
            "http://127.0.0.1:8765/mcp).")] = None,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Add this store to the PCP device registry (~/.pcp/sources.json), so agents and
        `pcp search --sources` can query it; other entries are kept as they are."""
        from pcp_cli.mcp import commands

        out = commands.register_source(store_path, name=name, source_id=source_id,
                                       transport=transport, client_id=client, url=url)

        def human() -> None:
            entry = out["entry"]
            how = entry.get("url") or " ".join([entry["command"], *entry["args"]])
            text(f"{'Updated' if out['replaced'] else 'Registered'} source {entry['id']!r} "
                 f"in {out['path']} ({entry['transport']}: {how})")

        emit(out, as_json, human)
        if not as_json:
            if out["grant_command"]:
                note(f"{out['client_id']} has no grant in pcp.yaml: the server would show it "
                     f"only the default namespace. Grant it: {out['grant_command']}")
            if out["token_command"]:
                note("replace the token placeholder in the entry's Authorization header with "
                     f"the output of: {out['token_command']}")

    @app.command("unregister", epilog=examples("pcp unregister"))
    def unregister(
        source_id: Annotated[str | None, typer.Option(
            "--id", help="Only the entry with this id (it must be this store's).")] = None,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Remove this store's entry from the PCP device registry; other entries are kept."""
        from pcp_cli.mcp import commands

        out = commands.unregister_source(store_path, source_id)
        emit(out, as_json, lambda: text(
            f"Removed {', '.join(map(repr, out['removed']))} from {out['path']}"))

    sources_app = typer.Typer(
        help="The PCP sources registered on this device (~/.pcp/sources.json, or the file "
        "PCP_REGISTRY names). A stdio source runs only once you approve its command.",
        invoke_without_command=True)

    @sources_app.callback(epilog=examples("pcp sources", "pcp sources --json",
                                          "pcp sources approve memorandai"))
    def sources(ctx: typer.Context, as_json: JsonOpt = False) -> None:
        """The PCP sources registered on this device (~/.pcp/sources.json, or the file
        PCP_REGISTRY names; never a ./.pcp/sources.json of the current folder)."""
        if ctx.invoked_subcommand is not None:
            return
        from pcp_cli.mcp import commands

        data = commands.list_sources(_own_store_id())

        def human() -> None:
            if not data["sources"]:
                note("No sources registered (`pcp register` adds this store).")
            table(("id", "name", "transport", "added by", "approved", "how"),
                  ((s["id"] + (" *" if s["this_store"] else ""), str(s.get("name", "")),
                    s["transport"], str(s.get("added_by") or ""),
                    APPROVAL_WORDS.get(s.get("approval"), ""), s.get("launch") or s.get("url"))
                   for s in data["sources"]))
            if any(s["this_store"] for s in data["sources"]):
                note("* this store")
            waiting = [s["id"] for s in data["sources"]
                       if s.get("approval") in ("not_approved", "changed")]
            if waiting:
                note(f"not run until you approve them: {', '.join(waiting)} "
                     "(`pcp sources approve ID`, once you trust the command shown)")

        emit(data, as_json, human)
        for problem in data["problems"] if not as_json else ():
            note(problem)

    @sources_app.command("approve", epilog=examples("pcp sources approve memorandai"))
    def approve(
        source_id: Annotated[str, typer.Argument(
            metavar="ID", help="The stdio source to approve (`pcp sources` lists them).")],
        as_json: JsonOpt = False,
    ) -> None:
        """Let `pcp search --sources` start this stdio source: approves its command, arguments
        and environment as they are now (a later change needs approving again)."""
        out = api.approve_source(source_id)
        emit(out, as_json, lambda: text(
            f"Approved {out['id']!r}: runs {shlex.join([out['command'], *out['args']])}"
            + (f" (environment: {', '.join(out['env'])})" if out["env"] else "")))

    app.add_typer(sources_app, name="sources")


APPROVAL_WORDS = {"approved": "yes", "not_approved": "no", "changed": "changed"}


def _own_store_id() -> str | None:
    """The store_id of the store pcp runs in, if any (`pcp sources` needs no store)."""
    from pcp_cli.errors import PcpError

    try:
        with api.open_store(None, readonly=True, refresh=False) as store:
            return store.manifest.store_id
    except PcpError:
        return None


def fan_out(store: Any, selection: list[str], tool: str, arguments: dict[str, Any],
            local: dict[str, Any], timeout: float, as_json: bool) -> dict[str, Any]:
    """`--sources`: this store's answer `local` as the first group, then one group per other
    selected source. `{schema_version, sources: [group], problems}`; see docs/mcp.md."""
    from pcp_cli.mcp import commands

    if "limit" in arguments:  # what this store really used (capped), never a refusal there
        arguments = {**arguments, "limit": local["filters_applied"].get("limit")
                     or arguments["limit"]}
    asked = commands.query_sources(selection, tool, arguments, timeout=timeout,
                                   own_store_id=store.manifest.store_id)
    mine = asked["this_store"] or {"id": "this-store", "name": str(store.root)}
    answer = {k: v for k, v in local.items() if k != "schema_version"}
    first = {"source": {**mine, "transport": "local"}, "status": "ok", "error": None, **answer}
    for problem in asked["problems"] if not as_json else ():  # stderr stays JSON under --json
        note(problem)
    if not asked["groups"] and not as_json:
        note("No other registered source to ask (`pcp sources` lists them; `pcp register`, "
             "run in another store, adds it).")
    return {"schema_version": local.get("schema_version", "1.0"),
            "sources": [first, *asked["groups"]], "problems": asked["problems"]}


def show_groups(data: dict[str, Any], as_json: bool, items: str,
                render: Callable[[list[dict[str, Any]], bool], None]) -> None:
    """Print `fan_out`'s groups: a heading per source, then its `items` through `render`
    (called with the items and whether they are this store's); failures on stderr."""
    if as_json:
        print_json(data)
        return
    for group in data["sources"]:
        source = group["source"]
        label = f"{source['id']} ({source.get('name', source['id'])})"
        if group["status"] != "ok":
            note(f"source {label} {group['status'].replace('_', ' ')}: {group['error']}")
            continue
        found = group.get(items) or []
        sys.stdout.write(f"# {label}: {len(found)} {items if len(found) != 1 else items[:-1]}\n")
        sys.stdout.flush()
        if found:
            render(found, source["transport"] == "local")
