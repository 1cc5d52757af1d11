"""`pcp review …`: the queue of proposals, which never reach the read surface until accepted.

`accept` and `reject` take several ids and are all-or-nothing in what they check: every id is
resolved and checked to be awaiting review before any is changed, so an unknown id (exit 3) or
one that is no proposal (exit 2) leaves the queue as it was.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Annotated, Any

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
    text,
)
from pcp_cli.cli.pages import write_result

PageArg = Annotated[str, typer.Argument(
    metavar="PAGE", help="A proposal's id, a unique prefix of one, or its title.",
    autocompletion=complete_page)]
# Several pages: the first is the argument, the rest come as extra arguments (a list-typed
# argument would print its Python type in --help).
PagesArg = Annotated[str, typer.Argument(
    metavar="PAGE...", help="Proposals (one or more): ids, unique prefixes or titles.",
    autocompletion=complete_page)]
SEVERAL = {"allow_extra_args": True}


def _several(first: str, ctx: typer.Context) -> list[str]:
    from pcp_cli.errors import UsageError

    more = list(ctx.args)
    for extra in more:
        if extra.startswith("-"):
            raise UsageError(f"no such option: {extra}")
    return [first, *more]
EVIDENCE_SHOWN = 160

review_app = typer.Typer(
    help="Proposed keystones and timeline events awaiting your review (from `pcp propose`, "
    "importers, AI clients, or `pcp keystone propose`). Until accepted they appear in no "
    "search, timeline, export, stats or micro_prompt.",
    invoke_without_command=True,
)


def _clip(value: str, limit: int = EVIDENCE_SHOWN) -> str:
    value = " ".join(value.split())
    return value if len(value) <= limit else value[:limit - 1].rstrip() + "…"


def _evidence(item: dict[str, Any]) -> str:
    spans = item.get("source_spans") or []
    if not spans:
        return ""
    first = _clip(str(spans[0].get("text") or ""))
    more = len(spans) - 1
    return f"“{first}”" + (f" (+{more} more)" if more else "")


def _claim(item: dict[str, Any]) -> str:
    claim = item["content"]
    if item.get("date"):
        claim = f"{item['date']}: {claim}"
    if item.get("supersedes"):
        claim += f"  [replaces {item['supersedes']}]"
    return claim


def _show_list(items: list[dict[str, Any]], shorten: Callable[[str], str]) -> None:
    if not items:
        text("Nothing awaits review.")
        return
    groups: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        label = item["category"] if item.get("kind") != "timeline_event" \
            else f"timeline: {item['category']}"
        groups.setdefault(label, []).append(item)
    for label in sorted(groups):
        group = groups[label]
        # piped, the group is a column (tab-separated lines carry no titles)
        table(("id", "claim", "conf", "evidence") if is_terminal() else
              ("id", "category", "claim", "conf", "evidence"),
              ((shorten(i["page_id"]), *(() if is_terminal() else (label,)), _claim(i),
                "" if i.get("confidence") is None else f"{i['confidence']:.2f}",
                _evidence(i) or f"{i['source'] or ''} via "
                f"{i['proposed_by']['actor_type']}:{i['proposed_by']['actor_id']}")
               for i in group), title=f"{label} ({len(group)})")
    text(f"{len(items)} awaiting review: `pcp review accept ID...`, `pcp review reject ID...`, "
         "or `pcp review next` to step through them.")


def _list(store_path: str | None, as_json: bool) -> None:
    with api.open_store(store_path) as store:
        items = api.review_queue(store)
        shorten = api.short_page_ids(store) if is_terminal() and not as_json else str
    emit(items, as_json, lambda: _show_list(items, shorten))


@review_app.callback()
def review_main(ctx: typer.Context, store_path: StoreOpt = None,
                as_json: JsonOpt = False) -> None:
    """List the proposals awaiting review, grouped by category, each with its evidence."""
    if ctx.invoked_subcommand is not None:
        return
    _list(store_path, as_json)


@review_app.command("list", epilog=examples("pcp review list", "pcp review list --json"))
def review_list(store_path: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """List the proposals awaiting review, grouped by category, each with the sentence it
    came from (oldest first within a category)."""
    _list(store_path, as_json)


def _item(store: Any, page_id: str) -> dict[str, Any]:
    for item in api.review_queue(store):
        if item["page_id"] == page_id:
            return item
    from pcp_cli.errors import UsageError

    revision = store.current(page_id)
    raise UsageError(f"{revision.state.type} {page_id} is not awaiting review (it is "
                     f"{revision.state.review_status})", hint="`pcp review` lists the proposals")


def _show_item(item: dict[str, Any]) -> None:
    text(f"{item['page_id']}  {item.get('kind', 'keystone')} · {item['category']}"
         + (f" · confidence {item['confidence']:.2f}" if item.get("confidence") is not None
            else ""))
    text(f"  {_claim(item)}")
    if item.get("stale_after"):
        text(f"  stale after {item['stale_after']} (change it: accept --stale-after DATE|never)")
    for span in item.get("source_spans") or []:
        where = f"{span.get('page_id')}@{span.get('revision_id')} [{span.get('start')}-" \
                f"{span.get('end')}]"
        text(f"  from {where}: “{_clip(str(span.get('text') or ''), 300)}”")


@review_app.command("show", epilog=examples("pcp review show pg_01M8R7A1 --json"))
def review_show(page_id: PageArg, store_path: StoreOpt = None,
                as_json: JsonOpt = False) -> None:
    """One proposal with its evidence: the page, revision, span and text of each sentence it
    came from (`source_spans`)."""
    with api.open_store(store_path) as store:
        item = _item(store, api.find_page(store, page_id))
    emit(item, as_json, lambda: _show_item(item))


def _checked(store: Any, refs: list[str]) -> list[str]:
    """Every ref resolved and awaiting review, or an error before anything changes."""
    page_ids = []
    waiting = {i["page_id"] for i in api.review_queue(store)}
    for ref in refs:
        page_id = api.find_page(store, ref)
        if page_id not in waiting:
            _item(store, page_id)  # raises the reason
        if page_id not in page_ids:
            page_ids.append(page_id)
    return page_ids


def _report(results: list[Any], as_json: bool, verb: str) -> None:
    if len(results) == 1:
        write_result(results[0], as_json, verb)
        return
    data = [r.to_dict() for r in results]

    def human() -> None:
        for r in results:
            text(f"{verb} {r.page_id} ({r.revision_id})")

    emit(data, as_json, human)


def _edited_claim(store: Any, page_id: str) -> str:
    """The claim after the person edited it in $EDITOR (empty: nothing is accepted)."""
    import tempfile
    from pathlib import Path

    from pcp_cli.cli.editor import run_editor
    from pcp_cli.errors import UsageError

    content = store.current(page_id).state.content.rstrip("\n")
    with tempfile.TemporaryDirectory(prefix="pcp-review-") as folder:
        path = Path(folder) / "claim.md"
        path.write_text(content + "\n\n# Edit the claim above, save and quit to accept it.\n"
                        "# Lines starting with # are ignored; an empty claim accepts "
                        "nothing.\n", "utf-8")
        run_editor(path)
        lines = path.read_text("utf-8").splitlines()
    edited = "\n".join(line for line in lines if not line.startswith("#")).strip()
    if not edited:
        raise UsageError("the edited claim is empty; nothing was accepted")
    return edited


@review_app.command("accept", context_settings=SEVERAL, epilog=examples(
    "pcp review accept pg_01M8R7A1", "pcp review accept pg_01M8R7A1 pg_01M8R7B2",
    "pcp review accept pg_01M8R7A1 --edit   # reword it in $EDITOR first"))
def review_accept(
    ctx: typer.Context,
    page: PagesArg,
    edit: Annotated[bool, typer.Option("--edit", help="Open $EDITOR on the claim and accept "
                                       "the edited text (one proposal).")] = False,
    stale_after: Annotated[str | None, typer.Option(
        "--stale-after", metavar="DATE", help="Keystones: the day the claim goes stale "
        "(YYYY-MM-DD), in place of any proposed; `never` for none.")] = None,
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Affirm proposals: a keystone or timeline event joins the read surface; a profile
    proposal's fields go onto your profile (records who accepted it and when). Every id is
    checked before any is accepted."""
    from pcp_cli.errors import UsageError

    page_ids = _several(page, ctx)
    if edit and len(page_ids) != 1:
        raise UsageError("--edit takes one proposal at a time")
    with api.open_store(store_path) as store:
        ids = _checked(store, page_ids)
        content = _edited_claim(store, ids[0]) if edit else None
        dated = {} if stale_after is None else {"stale_after": stale_after}
        results = [api.accept_proposal(store, page_id, content=content, **dated)
                   if content is not None else api.accept_proposal(store, page_id, **dated)
                   for page_id in ids]
    _report(results, as_json, "accepted")


@review_app.command("reject", context_settings=SEVERAL, epilog=examples(
    'pcp review reject pg_01M8R7A1 --reason "not true any more"',
    "pcp review reject pg_01M8R7A1 pg_01M8R7B2"))
def review_reject(
    ctx: typer.Context,
    page: PagesArg,
    reason: Annotated[str | None, typer.Option("--reason", metavar="TEXT",
                                               help="Why (kept for audit).")] = None,
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Reject proposals (kept for audit, never served, never proposed again by `pcp
    propose`). Every id is checked before any is rejected."""
    page_ids = _several(page, ctx)
    with api.open_store(store_path) as store:
        ids = _checked(store, page_ids)
        results = [api.reject_proposal(store, page_id, reason=reason) for page_id in ids]
    _report(results, as_json, "rejected")


_CHOICES = {"a": "accept", "r": "reject", "s": "skip", "e": "edit", "q": "quit"}


@review_app.command("next", epilog=examples("pcp review next"))
def review_next(store_path: StoreOpt = None) -> None:
    """Step through the queue one proposal at a time on a terminal: accept, reject, skip,
    edit (then accept) or quit."""
    from pcp_cli.errors import UsageError

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError("pcp review next asks on a terminal, and this is not one",
                         hint="use `pcp review list`, then `pcp review accept|reject ID...`")
    done = {"accept": 0, "reject": 0, "skip": 0}
    with api.open_store(store_path) as store:
        items = api.review_queue(store)
        if not items:
            text("Nothing awaits review.")
            return
        for number, item in enumerate(items, 1):
            text(f"\n[{number}/{len(items)}]")
            _show_item(item)
            while True:
                sys.stderr.write("[a]ccept, [r]eject, [s]kip, [e]dit then accept, [q]uit? ")
                sys.stderr.flush()
                answer = sys.stdin.readline()
                if not answer:  # end of input: stop here, as quit
                    choice = "quit"
                    break
                choice = _CHOICES.get(answer.strip().lower()[:1], "")
                if choice:
                    break
            if choice == "quit":
                break
            if choice == "skip":
                done["skip"] += 1
                continue
            if choice == "reject":
                result = api.reject_proposal(store, item["page_id"])
                text(f"rejected {result.page_id}")
                done["reject"] += 1
                continue
            content = _edited_claim(store, item["page_id"]) if choice == "edit" else None
            result = api.accept_proposal(store, item["page_id"], content=content)
            text(f"accepted {result.page_id}")
            done["accept"] += 1
    text(f"\naccepted {done['accept']}, rejected {done['reject']}, skipped {done['skip']}")


def register(app: typer.Typer) -> None:
    app.add_typer(review_app, name="review")

