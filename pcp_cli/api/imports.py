"""Bringing material in: `pcp import` (an export through its adapter) and `pcp ingest` /
`pcp_ingest_event` (events rolled up into pages). After either writes, the search index
catches up (`api.index.after_import`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from pcp_cli.api.checks import check_enum
from pcp_cli.api.index import after_import
from pcp_cli.errors import InvalidInput, UsageError
from pcp_cli.model.page import Actor
from pcp_cli.store.store import Store

# -- import (pcp import) ----------------------------------------------------------------------
# The source parsers live in pcp_cli.adapters; the writer turns their items into pages. Both are
# imported lazily so that light commands never load ijson.
IMPORT_FORMATS = ("auto", "archive", "chatgpt", "claude", "markdown", "claude_code", "codex")


def import_path(
    store: Store,
    path: str | os.PathLike[str],
    *,
    format: str = "auto",  # noqa: A002 - mirrors the CLI's --format
    namespace: str | None = None,
    dry_run: bool = False,
    progress: Any = None,
    waiting: Callable[[bool], None] | None = None,
    vault: str | None = None,
) -> dict[str, Any]:
    """`pcp import`: import an export into `store` and return the summary (the --json shape).

    {"format", "dry_run", "created", "revised", "unchanged", "skipped", "failed",
     "problems": [{"source", "item", "reason", "outcome"}], "source", "namespace", "by_type",
     "proposals", "relations": {"created", "unchanged"}, "warnings"}

    `progress(bytes_done, bytes_total)` is called as the export is read; `waiting(True)` when
    a write starts waiting for another process's store lock, `waiting(False)` when it stops.
    Raises InvalidInput when the path cannot be recognised or read at all; failed items are in
    the summary. StoreLocked when the lock stayed held past PCP_LOCK_TIMEOUT, saying what was
    imported before it.

    A Markdown folder is imported as a vault (`vault`: its name, `--as`; default the name this
    device imported it under, else the folder's name), and the summary has `vault: {name,
    key_prefix}`; UsageError before anything is written when two folders would share a name
    (docs/import.md, "Two folders: vaults").
    """
    check_enum("format", format, IMPORT_FORMATS)
    from pcp_cli.adapters.importer import import_source
    from pcp_cli.store import sources

    before, store.lock_waiting = store.lock_waiting, waiting
    try:
        summary = import_source(store, path, format=format, namespace=namespace,
                                dry_run=dry_run, progress=progress, vault=vault,
                                local=sources.recorded(store.layout.local))
    finally:
        store.lock_waiting = before
    if not dry_run:
        sources.record(store.layout.local, path, summary.get("format") or format,
                       vault=(summary.get("vault") or {}).get("name"))
        after_import(store)
    return summary


def markdown_vault(store: Store, folder: str | os.PathLike[str]) -> dict[str, str]:
    """The vault a Markdown folder is imported as, `{name, key_prefix}`, recording nothing
    (`pcp watch` keys a renamed or deleted note's page with it)."""
    from pathlib import Path

    from pcp_cli.adapters.vaults import resolve
    from pcp_cli.store import sources

    return resolve(store, Path(folder), as_name=None,
                   local=sources.recorded(store.layout.local)).to_dict()


def import_sources(store: Store) -> dict[str, dict[str, Any]]:
    """The folders earlier imports read on this device: path -> {"format", "last_import"}."""
    from pcp_cli.store import sources

    return sources.recorded(store.layout.local)


# -- IngestEvent (pcp ingest, pcp_ingest_event; pcp_cli/store/events.py) -----------------------
INGEST_SOURCE = "ingest"
_SOURCE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"


def ingest_text(
    store: Store,
    raw: bytes,
    *,
    path: str,
    source: str = INGEST_SOURCE,
    namespace: str | None = None,
    actor: Actor | None = None,
) -> dict[str, Any]:
    """`pcp ingest`: the JSON Lines events in `raw`, stored and rolled up into their pages.

    Every line is checked before anything is written: a bad line raises InvalidInput naming
    `path` and the line, a key re-used with other content raises IdempotencyConflict, and the
    store is left as it was. Returns the report (`{source, events, pages, conversations,
    results, conflicts}`).
    """
    from pcp_cli.model.ingest import parse_lines
    from pcp_cli.store.events import ingest

    _check_source(source)
    if namespace is not None:
        _check_namespace_arg(namespace)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InvalidInput(f"not valid UTF-8 (byte {exc.start})", path=path, line=line,
                           hint="save the events as UTF-8") from None
    events = list(parse_lines(text.removeprefix("\ufeff"), path))
    report = ingest(store, events, source=source, actor=actor or store.user,
                    origin="recorded", namespace=namespace,
                    note=f"rolled up from events ingested from {path}")
    after_import(store)
    return report.to_dict()


def ingest_event(
    store: Store,
    event: Any,
    *,
    source: str,
    actor: Actor,
    origin: str = "recorded",
    allow_namespace: Any = None,
) -> dict[str, Any]:
    """IngestEvent for one event object (the MCP tool): `{event_id, status, idempotency_key,
    conversation_id, page_id, revision_id, namespace, page_status}`."""
    from pcp_cli.model.ingest import normalize_event
    from pcp_cli.store.events import ingest

    _check_source(source)
    item = normalize_event(event, path="event")
    report = ingest(store, [item], source=source, actor=actor, origin=origin,
                    allow_namespace=allow_namespace)
    after_import(store)
    result = report.results[0]
    page = report.conversations[0] if report.conversations else {}
    return {
        "event_id": result["event_id"],
        "status": result["status"],
        "idempotency_key": result["idempotency_key"],
        "conversation_id": result.get("conversation_id"),
        "page_id": page.get("page_id"),
        "revision_id": page.get("revision_id"),
        "namespace": page.get("namespace"),
        "page_status": page.get("status"),
    }


def _check_source(source: str) -> None:
    import re

    if not re.match(_SOURCE_PATTERN, source):
        raise UsageError(f"source {source[:80]!r} is not a valid source name",
                         hint="lowercase letters, digits and . _ : -, e.g. 'ingest' or "
                         "'my-host'")


def _check_namespace_arg(namespace: str) -> None:
    from pcp_cli.store.layout import check_namespace

    try:
        check_namespace(namespace)
    except InvalidInput as exc:
        raise UsageError(exc.message, hint=exc.hint) from None
