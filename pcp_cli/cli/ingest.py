"""`pcp ingest`: raw events (JSON Lines) into the store, rolled up into conversation pages."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from pcp_cli import api
from pcp_cli.cli.output import JsonOpt, StoreOpt, examples, print_json, text
from pcp_cli.errors import InvalidInput

# A JSON Lines file of events is read whole (every line is checked before anything is stored).
MAX_INGEST_BYTES = 256 * 1024 * 1024


def register(app: typer.Typer) -> None:
    @app.command("ingest", epilog=examples(
        "pcp ingest events.jsonl --source my-agent",
        "my-agent --export | pcp ingest - --namespace project:tidewatch --json"))
    def ingest(
        file: Annotated[str, typer.Argument(
            help="A JSON Lines file of events, one per line ('-' = stdin).")] = "-",
        source: Annotated[str | None, typer.Option(
            "--source", help="Whose idempotency keys and conversation ids these are: the same "
            "key from the same source is the same event (default: ingest).")] = None,
        namespace: Annotated[str | None, typer.Option(
            "--namespace", help="Namespace for new conversation pages whose events name none "
            "(default: the store's).")] = None,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Store raw events (messages, tool calls, notes) and roll them up into conversation
        pages; the same events again change nothing (exit 4 if a key is re-used with other
        content, exit 5 for a bad line: then nothing is stored)."""
        raw, label = _read(file)
        with api.open_store(store_path) as store:
            # the default is the library's (read here, so `pcp --help` needs no library)
            report = api.ingest_text(store, raw, path=label,
                                     source=api.INGEST_SOURCE if source is None else source,
                                     namespace=namespace)
        if as_json:
            print_json(report)
        else:
            _print(report, label)


def _read(file: str) -> tuple[bytes, str]:
    if file == "-":
        raw = sys.stdin.buffer.read(MAX_INGEST_BYTES + 1)
        label = "<stdin>"
    else:
        path = Path(file)
        label = file
        try:
            with path.open("rb") as handle:
                raw = handle.read(MAX_INGEST_BYTES + 1)
        except FileNotFoundError:
            raise InvalidInput("no such file", path=file) from None
        except IsADirectoryError:
            raise InvalidInput("is a folder, not a file", path=file,
                               hint="session log folders are read by `pcp import`") from None
        except OSError as exc:
            raise InvalidInput(f"cannot read: {exc.strerror}", path=file) from None
    if len(raw) > MAX_INGEST_BYTES:
        raise InvalidInput(f"over the {MAX_INGEST_BYTES:,}-byte limit", path=label,
                           hint="split the events into several files")
    return raw, label


def _print(report: dict[str, Any], label: str) -> None:
    events, pages = report["events"], report["pages"]
    text(f"ingested {events['received']} event(s) from {label}: {events['stored']} stored, "
         f"{events['unchanged']} unchanged")
    text(f"pages: {pages['created']} created, {pages['revised']} revised, "
         f"{pages['unchanged']} unchanged")
    for conversation in report["conversations"]:
        if conversation["status"] != "unchanged":
            name = conversation["conversation_id"] or "(note)"
            text(f"  {conversation['status']} {conversation['page_id']} "
                 f"[{conversation['namespace']}] {name}")
