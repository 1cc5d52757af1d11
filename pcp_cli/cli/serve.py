"""`pcp serve` (the MCP stdio server) and `pcp audit` (its access log).

`pcp serve` imports the MCP SDK only inside the command, so `pcp --help` and every other command
stay light. Everything that can go wrong before serving (no store, a bad `pcp.yaml`, a bad
`--client-id`) goes through the CLI's normal error funnel and exit status; once serving, stdout
carries protocol messages only and every log line goes to stderr.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from pcp_cli.cli.output import JsonOpt, StoreOpt, emit, examples, note, paged, table, text


def register(app: typer.Typer) -> None:
    @app.command(epilog=examples("pcp serve --client-id claude-desktop",
                                 "pcp serve --client-id cursor --scope project:tidewatch"))
    def serve(
        client_id: Annotated[str | None, typer.Option(
            "--client-id", help="Which client this is: selects its grant in pcp.yaml (without "
            "one, or for a client pcp.yaml does not name: the default namespace, read-only).")
        ] = None,
        scope: Annotated[list[str] | None, typer.Option(
            "--scope", help="Narrow the grant to this namespace or prefix:* pattern "
            "(repeatable; never widens it).")] = None,
        allow_write: Annotated[bool, typer.Option(
            "--allow-write", help="Offer the write tools, if the client's grant allows "
            "writing.")] = False,
        store_path: StoreOpt = None,
    ) -> None:
        """Serve the store to an AI client over MCP (stdio)."""
        from pcp_cli import api

        api.serve_mcp(store_path, client_id=client_id, scopes=scope, allow_write=allow_write,
                      log=sys.stderr)

    @app.command(epilog=examples("pcp audit --client claude-desktop --since 2026-11-01",
                                 "pcp audit --json"))
    def audit(
        client: Annotated[str | None, typer.Option(
            "--client", help="Only this client id's calls.")] = None,
        since: Annotated[str | None, typer.Option(
            "--since", help="Only calls from this date or time on (YYYY-MM-DD or ISO 8601).")
        ] = None,
        verify: Annotated[bool, typer.Option(
            "--verify", help="Check the log's hash chain: say where it was cut or changed "
            "(exit 8 if it was).")] = False,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Show the log of MCP tool calls (who asked for what, when, and the outcome)."""
        from pcp_cli import api

        if verify:
            _verify(api.verify_audit(store_path), as_json)
            return
        records = api.audit_records(store_path, client=client, since=since)
        if not records and not as_json:
            note("no MCP tool calls recorded" + (" for that filter" if client or since else ""))
            return
        with paged():  # a log: through the pager on a terminal, as `git log` is
            emit(records, as_json, lambda: table(
                ("time", "client", "tool", "outcome", "results", "params"),
                ((r.get("time"), r.get("client_id") or "-", r.get("tool"),
                  f"{r.get('outcome')}" + (f" ({r['error_code']})" if r.get("error_code")
                                           else ""),
                  r.get("result_count"), _params(r.get("params"))) for r in records)))


def _verify(report: dict, as_json: bool) -> None:
    from pcp_cli.errors import StoreDamaged

    def human() -> None:
        if report["valid"]:
            text(f"The audit log is intact: {report['records']} record(s) in "
                 f"{len(report['files'])} file(s), the hash chain unbroken.")
            return
        table(("file", "line", "problem"),
              ((p["file"], p["line"], p["problem"]) for p in report["problems"]))

    emit(report, as_json, human)
    if not report["valid"]:
        raise StoreDamaged(f"the audit log was cut or changed ({len(report['problems'])} "
                           "place(s))", hint="the list above says where; the log is never "
                           "rewritten by pcp, so keep it as evidence")


def _params(params: object) -> str:
    import json

    text = json.dumps(params, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= 80 else text[:79] + "…"
