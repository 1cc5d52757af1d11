"""`pcp review …`: the queue of proposed keystones, which never reach the read surface."""

from __future__ import annotations

from typing import Annotated

import typer

from pcp_cli.cli.output import (
    JsonOpt,
    StoreOpt,
    api,
    complete_page,
    emit,
    examples,
    is_terminal,
    table,
    text,
)
from pcp_cli.cli.pages import write_result

PageArg = Annotated[str, typer.Argument(
    metavar="PAGE", help="A proposal's id, a unique prefix of one, or its title.",
    autocompletion=complete_page)]

review_app = typer.Typer(
    help="Proposed keystones awaiting your review (from importers, AI clients, or "
    "`pcp keystone propose`). Until accepted they appear in no search, timeline, export, "
    "stats or micro_prompt.",
    invoke_without_command=True,
)


@review_app.callback()
def review_list(ctx: typer.Context, store_path: StoreOpt = None,
                as_json: JsonOpt = False) -> None:
    """List the proposals awaiting review (oldest first)."""
    if ctx.invoked_subcommand is not None:
        return
    with api.open_store(store_path) as store:
        items = api.review_queue(store)
        shorten = api.short_page_ids(store) if is_terminal() and not as_json else str

    def human() -> None:
        if not items:
            text("Nothing awaits review.")
            return
        table(("id", "category", "source", "proposed by", "content"),
              ((shorten(i["page_id"]), i["category"], i["source"] or "",
                f"{i['proposed_by']['actor_type']}:{i['proposed_by']['actor_id']}",
                i["content"]) for i in items))

    emit(items, as_json, human)


@review_app.command("accept", epilog=examples("pcp review accept pg_01M8R7A1"))
def review_accept(page_id: PageArg, store_path: StoreOpt = None,
                  as_json: JsonOpt = False) -> None:
    """Affirm a proposal: a keystone joins the read surface; a profile proposal's fields go onto
    your profile (records who accepted it and when)."""
    with api.open_store(store_path) as store:
        page_id = api.find_page(store, page_id)
        result = api.accept_proposal(store, page_id)
    write_result(result, as_json, "accepted")


@review_app.command("reject", epilog=examples(
    'pcp review reject pg_01M8R7A1 --reason "not true any more"'))
def review_reject(
    page_id: PageArg,
    reason: Annotated[str | None, typer.Option("--reason", metavar="TEXT",
                                               help="Why (kept for audit).")] = None,
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Reject a proposal, keystone or profile (kept for audit, never served)."""
    with api.open_store(store_path) as store:
        page_id = api.find_page(store, page_id)
        result = api.reject_proposal(store, page_id, reason=reason)
    write_result(result, as_json, "rejected")


def register(app: typer.Typer) -> None:
    app.add_typer(review_app, name="review")
