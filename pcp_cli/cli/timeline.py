"""`pcp timeline …`: dated events in the person's life."""

from __future__ import annotations

from typing import Annotated

import typer

from pcp_cli import api
from pcp_cli.cli.output import AsOfOpt, JsonOpt, StoreOpt, emit, note, table
from pcp_cli.cli.pages import write_result

timeline_app = typer.Typer(help="Dated events (timeline).", no_args_is_help=True)


@timeline_app.command("add")
def timeline_add(
    date: Annotated[str, typer.Argument(help="YYYY, YYYY-MM or YYYY-MM-DD")],
    summary: str,
    category: Annotated[str, typer.Option(
        "--category", help="job|move|milestone|publication|relationship|other")] = "other",
    source: Annotated[str, typer.Option("--source")] = "user_stated",
    confidence: Annotated[float | None, typer.Option("--confidence")] = None,
    page_id: Annotated[str | None, typer.Option("--id")] = None,
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Add a timeline event."""
    with api.open_store(store_path) as store:
        result = api.add_timeline_event(store, date, summary, category=category, source=source,
                                        confidence=confidence, page_id=page_id)
    write_result(result, as_json)


@timeline_app.command("list")
def timeline_list(
    from_: Annotated[str | None, typer.Option(
        "--from", help="Events on or after this date (YYYY, YYYY-MM or YYYY-MM-DD).")] = None,
    to: Annotated[str | None, typer.Option(
        "--to", help="Events on or before this date; `2024` includes all of 2024.")] = None,
    query: Annotated[str | None, typer.Option(
        "--query", "-q", help="Only events whose summary contains every word.")] = None,
    limit: Annotated[int | None, typer.Option("--limit", "-n",
                                              help="At most N events (the oldest).")] = None,
    cursor: Annotated[str | None, typer.Option(
        "--cursor", help="Continue a previous listing (its next_cursor).")] = None,
    as_of: AsOfOpt = None,
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List timeline events, oldest first."""
    with api.open_store(store_path) as store:
        data = api.timeline(store, from_=from_, to=to, query=query, limit=limit,
                            cursor=cursor, as_of=as_of)
    if not as_json and not data["events"]:
        note("No timeline events.")
        return
    emit(data, as_json, lambda: table(
        ("date", "category", "summary", "id"),
        ((e["date"], e.get("category", ""), e["summary"], e["id"]) for e in data["events"])))


def register(app: typer.Typer) -> None:
    app.add_typer(timeline_app, name="timeline")
