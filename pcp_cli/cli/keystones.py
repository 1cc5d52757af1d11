"""`pcp keystone …`: curated, user-affirmed claims."""

from __future__ import annotations

from typing import Annotated

import typer

from pcp_cli import api
from pcp_cli.cli.output import (
    JsonOpt,
    StoreOpt,
    complete_page,
    emit,
    examples,
    is_terminal,
    table,
)
from pcp_cli.cli.pages import write_result

keystone_app = typer.Typer(help="Curated claims about you (keystones).", no_args_is_help=True)

CategoryOpt = Annotated[str, typer.Option(
    "--category", metavar="CATEGORY",
    help="identity|preference|rule|objective|constraint|relationship|glossary|other")]
ConfidenceOpt = Annotated[float | None, typer.Option("--confidence", metavar="0-1",
                                                     help="How sure (0-1).")]
ImportanceOpt = Annotated[float | None, typer.Option("--importance", metavar="0-1",
                                                     help="How much it matters (0-1).")]
SourceOpt = Annotated[str, typer.Option("--source", metavar="SOURCE",
                                        help="user_stated|inferred|imported|other")]
SensitivityOpt = Annotated[str, typer.Option("--sensitivity", metavar="LEVEL",
                                             help="low|medium|high")]
SupersedesOpt = Annotated[str | None, typer.Option(
    "--supersedes", metavar="PAGE", help="The keystone this one replaces (id, prefix or title).",
    autocompletion=complete_page)]
IdOpt = Annotated[str | None, typer.Option("--id", metavar="ID", help="Use this page id.")]
PageArg = Annotated[str, typer.Argument(
    metavar="PAGE", help="A keystone's id, a unique prefix of one, or its title.",
    autocompletion=complete_page)]
ContentArg = Annotated[str, typer.Argument(metavar="TEXT", help="What is true (one claim).")]
StaleAfterOpt = Annotated[str | None, typer.Option(
    "--stale-after", metavar="DATE", help="The day the claim goes stale (YYYY-MM-DD): still "
    "served, labelled stale, left out of the micro_prompt.")]


def keystone_rows(store, entries):  # type: ignore[no-untyped-def]
    from pcp_cli.render.portable import keystone_object

    rows = []
    for entry in entries:
        revision = store.current(entry.page_id)
        obj = keystone_object(revision)
        obj["extensions"] = {**obj["extensions"], "org.pcp-cli": {
            "revision_id": revision.revision_id,
            "origin": revision.state.origin,
            "review_status": revision.state.review_status,
            "lifecycle_status": revision.state.lifecycle_status,
            "namespace": revision.state.namespace,
        }}
        rows.append(obj)
    return sorted(rows, key=lambda o: (o.get("created_at", ""), o["id"]))


@keystone_app.command("add", epilog=examples(
    'pcp keystone add "I write Python every day" --category identity',
    'pcp keystone add "Prefers tabs" --category preference --supersedes "Prefers spaces"'))
def keystone_add(
    content: ContentArg,
    category: CategoryOpt = "other",
    confidence: ConfidenceOpt = None,
    importance: ImportanceOpt = None,
    source: SourceOpt = "user_stated",
    sensitivity: SensitivityOpt = "low",
    supersedes: SupersedesOpt = None,
    page_id: IdOpt = None,
    stale_after: StaleAfterOpt = None,
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Add an affirmed keystone (optionally superseding an older one)."""
    with api.open_store(store_path) as store:
        supersedes = None if supersedes is None else api.find_page(store, supersedes)
        result = api.add_keystone(store, content, category=category, confidence=confidence,
                                  importance=importance, source=source, sensitivity=sensitivity,
                                  supersedes=supersedes, page_id=page_id,
                                  stale_after=stale_after)
    write_result(result, as_json)


@keystone_app.command("edit", epilog=examples(
    "pcp keystone edit ks-005 --stale-after 2026-12-31",
    "pcp keystone edit ks-005 --stale-after never"))
def keystone_edit(
    page_id: PageArg,
    stale_after: Annotated[str | None, typer.Option(
        "--stale-after", metavar="DATE", help="The day the claim goes stale (YYYY-MM-DD), or "
        "`never` to remove the date.")] = None,
    expect: Annotated[str | None, typer.Option(
        "--expect", metavar="REV", help="Fail (exit 4) unless the keystone is still at this "
        "revision.")] = None,
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Edit a keystone's staleness date (editing is not re-affirming it)."""
    with api.open_store(store_path) as store:
        page_id = api.find_page(store, page_id)
        result = api.edit_keystone(store, page_id, stale_after=stale_after,
                                   expected_revision_id=expect)
    write_result(result, as_json, None if result.status == "unchanged" else "edited")


@keystone_app.command("propose", epilog=examples(
    'pcp keystone propose "Works in UTC+1" --category identity --source inferred'))
def keystone_propose(
    content: ContentArg,
    category: CategoryOpt = "other",
    confidence: ConfidenceOpt = None,
    importance: ImportanceOpt = None,
    source: SourceOpt = "user_stated",
    sensitivity: SensitivityOpt = "low",
    supersedes: SupersedesOpt = None,
    page_id: IdOpt = None,
    stale_after: StaleAfterOpt = None,
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Propose a keystone: it waits in `pcp review` and is served nowhere until accepted."""
    with api.open_store(store_path) as store:
        supersedes = None if supersedes is None else api.find_page(store, supersedes)
        result = api.propose_keystone(store, content, category=category, confidence=confidence,
                                      importance=importance, source=source,
                                      sensitivity=sensitivity, supersedes=supersedes,
                                      page_id=page_id, stale_after=stale_after)
    write_result(result, as_json, "proposed")


@keystone_app.command("list", epilog=examples("pcp keystone list",
                                               "pcp keystone list --all --json"))
def keystone_list(
    show_all: Annotated[bool, typer.Option("--all", help="Include superseded, archived, "
                                           "tombstoned and proposed keystones.")] = False,
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List keystones (active and affirmed by default)."""
    with api.open_store(store_path) as store:
        rows = keystone_rows(store, api.keystone_entries(store, include_all=show_all))
        shorten = api.short_page_ids(store) if is_terminal() and not as_json else str
    emit(rows, as_json, lambda: table(
        ("id", "category", "status", "source", "content"),
        ((shorten(o["id"]), o.get("category", ""),
          o["status"] + ("" if o["extensions"]["org.pcp-cli"]["review_status"] == "affirmed"
                         else f" ({o['extensions']['org.pcp-cli']['review_status']})")
          + (" · stale" if api.is_stale(o) else ""),
          o.get("source", ""), o["content"].strip()) for o in rows)))


@keystone_app.command("confirm", epilog=examples("pcp keystone confirm pg_01M8R7A1"))
def keystone_confirm(page_id: PageArg, store_path: StoreOpt = None,
                     as_json: JsonOpt = False) -> None:
    """Re-affirm a published keystone (last_confirmed_at now, last_confirmed_by you)."""
    with api.open_store(store_path) as store:
        page_id = api.find_page(store, page_id)
        result = api.confirm_keystone(store, page_id)
    write_result(result, as_json, "confirmed")


def register(app: typer.Typer) -> None:
    app.add_typer(keystone_app, name="keystone")
