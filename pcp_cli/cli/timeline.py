"""`pcp timeline …`: dated events in the person's life."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer

from pcp_cli import api
from pcp_cli.cli.output import (
    AsOfOpt,
    JsonOpt,
    StoreOpt,
    emit,
    examples,
    is_terminal,
    note,
    paged,
    table,
)
from pcp_cli.cli.pages import write_result
from pcp_cli.cli.sources import (
    DEFAULT_SOURCE_TIMEOUT,
    SourcesOpt,
    SourceTimeoutOpt,
    fan_out,
    show_groups,
)

timeline_app = typer.Typer(help="Dated events (timeline).", no_args_is_help=True)


@timeline_app.command("add", epilog=examples(
    'pcp timeline add 2024-03 "Moved to Lisbon" --category move',
    'pcp timeline add 2019 "Started at Acme" --category job --confidence 0.8'))
def timeline_add(
    date: Annotated[str, typer.Argument(metavar="DATE", help="YYYY, YYYY-MM or YYYY-MM-DD")],
    summary: Annotated[str, typer.Argument(metavar="SUMMARY", help="What happened.")],
    category: Annotated[str, typer.Option(
        "--category", metavar="CATEGORY",
        help="job|move|milestone|publication|relationship|other")] = "other",
    source: Annotated[str, typer.Option("--source", metavar="SOURCE",
                                        help="user_stated|inferred|imported|other")
                      ] = "user_stated",
    confidence: Annotated[float | None, typer.Option("--confidence", metavar="0-1",
                                                     help="How sure (0-1).")] = None,
    page_id: Annotated[str | None, typer.Option("--id", metavar="ID",
                                                help="Use this page id.")] = None,
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Add a timeline event."""
    with api.open_store(store_path) as store:
        result = api.add_timeline_event(store, date, summary, category=category, source=source,
                                        confidence=confidence, page_id=page_id)
    write_result(result, as_json)


@timeline_app.command("list", epilog=examples("pcp timeline list --from 2020 --to 2024",
                                                 "pcp timeline list -q lisbon --json"))
def timeline_list(
    from_: Annotated[str | None, typer.Option(
        "--from", metavar="DATE",
        help="Events on or after this date (YYYY, YYYY-MM or YYYY-MM-DD).")] = None,
    to: Annotated[str | None, typer.Option(
        "--to", metavar="DATE",
        help="Events on or before this date; `2024` includes all of 2024.")] = None,
    query: Annotated[str | None, typer.Option(
        "--query", "-q", metavar="WORDS",
        help="Only events whose summary contains every word.")] = None,
    limit: Annotated[int | None, typer.Option("--limit", "-n", metavar="N",
                                              help="At most N events (the oldest).")] = None,
    cursor: Annotated[str | None, typer.Option(
        "--cursor", help="Continue a previous listing (its next_cursor).")] = None,
    include_sensitive: Annotated[bool, typer.Option(
        "--include-sensitive", help="Also high-sensitivity events.")] = False,
    as_of: AsOfOpt = None,
    sources: SourcesOpt = None,
    source_timeout: SourceTimeoutOpt = DEFAULT_SOURCE_TIMEOUT,
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List timeline events, oldest first (non-sensitive ones by default); with --sources,
    the other registered PCP sources' too."""
    with api.open_store(store_path) as store:
        data = api.timeline(store, from_=from_, to=to, query=query, limit=limit,
                            cursor=cursor, as_of=as_of, include_sensitive=include_sensitive)
        shorten = api.short_page_ids(store) if is_terminal() and not as_json else str
        if sources:
            remote = {k: v for k, v in {"from": from_, "to": to, "query": query,
                                        "limit": limit}.items() if v is not None}
            grouped = fan_out(store, sources, "pcp_get_timeline", remote, data,
                              source_timeout, as_json)
    if sources:
        show_groups(grouped, as_json, "events", lambda found, local: _events(
            found, shorten if local else str))
        return
    if not as_json and not data["events"]:
        note("No timeline events.")
        return
    with paged():
        emit(data, as_json, lambda: _events(data["events"], shorten))


def _events(events: list[dict[str, Any]], shorten: Callable[[str], str]) -> None:
    table(("date", "category", "summary", "id"),
          ((e["date"], e.get("category", ""), e["summary"], shorten(e["id"])) for e in events),
          whole=(0, 3))


def register(app: typer.Typer) -> None:
    app.add_typer(timeline_app, name="timeline")
