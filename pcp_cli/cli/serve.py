"""`pcp serve` (the MCP server, over stdio or streamable HTTP) and `pcp audit` (its access log).

Both call the MCP front end's entry points (`pcp_cli.mcp.commands`), imported inside the command,
so `pcp --help` and every other command stay light. Everything that can go wrong before
serving (no store, a bad `pcp.yaml`, a bad `--client-id`, an unsafe `--http` address) goes
through the CLI's normal error funnel and exit status; once serving, stdout carries protocol
messages only (stdio) and every log line goes to stderr.
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
            "one, or for a client pcp.yaml does not name: the default namespace, read-only). "
            "stdio only: over HTTP the token says which client it is.")
        ] = None,
        scope: Annotated[list[str] | None, typer.Option(
            "--scope", help="Narrow the grant to this namespace or prefix:* pattern "
            "(repeatable; never widens it). Over HTTP: every client's grant.")] = None,
        allow_write: Annotated[bool, typer.Option(
            "--allow-write", help="Offer the write tools, if the client's grant allows "
            "writing.")] = False,
        http: Annotated[str | None, typer.Option(
            "--http", metavar="[HOST:]PORT", help="Serve MCP streamable HTTP on this address "
            "(default host 127.0.0.1) instead of stdio; clients authenticate through OAuth "
            "(with your consent) or with tokens from `pcp grant token`.")] = None,
        allow_remote: Annotated[bool, typer.Option(
            "--allow-remote", help="HTTP: allow binding an address other machines can "
            "reach.")] = False,
        tls_cert: Annotated[str | None, typer.Option(
            "--tls-cert", help="HTTP: TLS certificate (PEM); with --tls-key, serve https.")
        ] = None,
        tls_key: Annotated[str | None, typer.Option(
            "--tls-key", help="HTTP: TLS private key (PEM).")] = None,
        insecure_http: Annotated[bool, typer.Option(
            "--insecure-http", help="HTTP: allow a non-loopback address without TLS (e.g. "
            "behind a TLS-terminating proxy).")] = False,
        allow_host: Annotated[list[str] | None, typer.Option(
            "--allow-host", help="HTTP: another Host name to answer to, e.g. the machine's DNS "
            "name (repeatable; DNS-rebinding protection refuses the rest).")] = None,
        allow_origin: Annotated[list[str] | None, typer.Option(
            "--allow-origin", help="HTTP: a browser Origin to accept, e.g. "
            "https://app.example (repeatable; requests without Origin always pass).")] = None,
        public_url: Annotated[str | None, typer.Option(
            "--public-url", help="HTTP: the https://NAME clients reach this server at, when a "
            "TLS proxy or tunnel is in front (names the OAuth issuer and the /mcp resource; "
            "NAME is answered to).")] = None,
        max_body_bytes: Annotated[int, typer.Option(
            "--max-body-bytes", help="HTTP: the largest request body accepted (413 "
            "beyond).")] = 1_000_000,
        max_concurrent: Annotated[int, typer.Option(
            "--max-concurrent", help="HTTP: requests in flight per client (429 beyond).")] = 4,
        call_timeout: Annotated[float, typer.Option(
            "--call-timeout", help="HTTP: seconds a tool call may take before it is answered "
            "with an error.")] = 30.0,
        store_path: StoreOpt = None,
    ) -> None:
        """Serve the store to AI clients over MCP (stdio, or streamable HTTP with --http)."""
        from pcp_cli.errors import UsageError
        from pcp_cli.mcp import commands

        if http is None:
            used = [flag for flag, value in (
                ("--allow-remote", allow_remote), ("--tls-cert", tls_cert),
                ("--tls-key", tls_key), ("--insecure-http", insecure_http),
                ("--allow-host", allow_host), ("--allow-origin", allow_origin),
                ("--public-url", public_url)) if value]
            if used:
                raise UsageError(f"{used[0]} only applies with --http",
                                 hint="add --http [HOST:]PORT, or leave it out")
            commands.serve_stdio(store_path, client_id=client_id, scopes=scope,
                                 allow_write=allow_write, log=sys.stderr)
            return
        if client_id is not None:
            raise UsageError("--client-id is for stdio; over HTTP each token names its client",
                             hint="issue a token per client with `pcp grant token CLIENT`")
        commands.serve_http(
            store_path, address=http, scopes=scope, allow_write=allow_write,
            allow_remote=allow_remote, insecure_http=insecure_http, tls_cert=tls_cert,
            tls_key=tls_key, allowed_hosts=allow_host or (), allowed_origins=allow_origin or (),
            max_body_bytes=max_body_bytes, max_concurrent=max_concurrent,
            call_timeout=call_timeout, public_url=public_url, log=sys.stderr)

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
        from pcp_cli.mcp import commands

        if verify:
            _verify(commands.verify_audit(store_path), as_json)
            return
        records = commands.audit_records(store_path, client=client, since=since)
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
