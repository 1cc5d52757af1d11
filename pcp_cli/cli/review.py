"""`pcp review …`: the queue of proposals, which never reach the read surface until accepted.

`accept` and `reject` take several ids and are all-or-nothing in what they check: every id is
resolved and checked to be awaiting review before any is changed, so an unknown id (exit 3) or
one that is no proposal (exit 2) leaves the queue as it was.
"""

from __future__ import annotations

import os
import re
import sys
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
    paged,
    table,
    text,
)
from pcp_cli.cli.pages import write_result

PageArg = Annotated[str, typer.Argument(
    metavar="PAGE", help="A proposal's id, a unique prefix of one, its title, or its number as "
    "`pcp review` lists it.",
    autocompletion=complete_page)]
# Several pages: the first is the argument, the rest come as extra arguments (a list-typed
# argument would print its Python type in --help).
PagesArg = Annotated[str | None, typer.Argument(
    metavar="[PAGE...]", help="Proposals: ids, unique prefixes or titles, or numbers and ranges "
    "as `pcp review` lists them (3, 5-7).", autocompletion=complete_page)]
SEVERAL = {"allow_extra_args": True}


def _several(first: str | None, ctx: typer.Context) -> list[str]:
    from pcp_cli.errors import UsageError

    more = list(ctx.args)
    for extra in more:
        if extra.startswith("-"):
            raise UsageError(f"no such option: {extra}")
    return [*([first] if first is not None else []), *more]
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
    where = _where(spans[0])
    return f"“{first}”" + (f" ({where})" if where else "") + (f" (+{more} more)" if more else "")


def _where(span: dict[str, Any]) -> str:
    """The evidence's conversation or note, as its title and date (`api.evidence_sources`)."""
    return ", ".join(part for part in (span.get("title"), span.get("date")) if part)


def _claim(item: dict[str, Any]) -> str:
    claim = item["content"]
    if item.get("date"):
        claim = f"{item['date']}: {claim}"
    if item.get("supersedes"):
        claim += f"  [replaces {item['supersedes']}]"
    return claim


def _show_list(items: list[dict[str, Any]]) -> None:
    if not items:
        text("Nothing awaits review.")
        return
    number = 0
    for label, group in api.queue_groups(items):
        # piped, the group is a column (tab-separated lines carry no titles)
        rows = []
        for item in group:
            number += 1
            cells = (_claim(item), "" if item.get("confidence") is None
                     else f"{item['confidence']:.2f}",
                     _evidence(item) or f"{item['source'] or ''} via "
                     f"{item['proposed_by']['actor_type']}:{item['proposed_by']['actor_id']}")
            # on a terminal a number, not the id: a run's ids differ only in their last
            # characters, so a neighbour is easily taken by mistake (piped: the id, for scripts)
            rows.append((f"#{number}", *cells) if is_terminal()
                        else (item["page_id"], label, *cells))
        table(("#", "claim", "conf", "evidence") if is_terminal() else
              ("id", "category", "claim", "conf", "evidence"), rows,
              title=f"{label} ({len(group)})")
    text(f"{len(items)} awaiting review. Accept or reject by number (`pcp review accept 3 5-7`),"
         "\nid, --category CATEGORY or --all; `pcp review show 3` shows one; `pcp review next`"
         "\nsteps through them.")


ListAllOpt = Annotated[bool, typer.Option(
    "--all", help="Also the proposals you rejected (kept for audit, never served), after the "
    "queue; with --json each item's review_status says which.")]


def _list(store_path: str | None, as_json: bool, everything: bool = False) -> None:
    with api.open_store(store_path) as store:
        items = api.review_queue(store)
        rejected = api.rejected_proposals(store) if everything else []
        if not as_json:  # for the eye; --json keeps the spans as stored
            api.evidence_sources(store, items)
    if as_json:
        emit(items + rejected, as_json, lambda: None)
        return
    with paged():
        _show_list(items)
        if rejected:
            table(("id", "category", "claim", "reason"),
                  ((i["page_id"], i["category"], _claim(i), i.get("rejection_reason") or "")
                   for i in rejected),
                  title=f"rejected ({len(rejected)}): kept for audit, never served")


@review_app.callback()
def review_main(ctx: typer.Context, store_path: StoreOpt = None,
                as_json: JsonOpt = False, everything: ListAllOpt = False) -> None:
    """List the proposals awaiting review, grouped by category, each with its evidence."""
    if ctx.invoked_subcommand is not None:
        return
    _list(store_path, as_json, everything)


@review_app.command("list", epilog=examples("pcp review list", "pcp review list --json",
                                            "pcp review list --all"))
def review_list(store_path: StoreOpt = None, as_json: JsonOpt = False,
                everything: ListAllOpt = False) -> None:
    """List the proposals awaiting review, grouped by category, each with the sentence it
    came from (oldest first within a category)."""
    _list(store_path, as_json, everything)


def _item(store: Any, page_id: str) -> dict[str, Any]:
    for item in api.review_queue(store):
        if item["page_id"] == page_id:
            return item
    from pcp_cli.errors import UsageError

    revision = store.current(page_id)
    status = revision.state.review_status
    raise UsageError(f"{revision.state.type} {page_id} is not awaiting review (it is {status})",
                     hint=f"`pcp review withdraw {page_id}` takes the decision back"
                     if status in ("affirmed", "rejected") else "`pcp review` lists the proposals")


def _show_item(item: dict[str, Any]) -> None:
    """One proposal for the eye (its stored text's escape codes and bidi overrides shown,
    not obeyed)."""
    from pcp_cli.render.visible import visible  # with it, the whole render package: not at --help

    text(f"{item['page_id']}  {item.get('kind', 'keystone')} · {item['category']}"
         + (f" · confidence {item['confidence']:.2f}" if item.get("confidence") is not None
            else ""))
    text(f"  {visible(_claim(item))}")
    if item.get("stale_after"):
        text(f"  stale after {item['stale_after']} (change it: accept --stale-after DATE|never)")
    for span in item.get("source_spans") or []:
        where = _where(span) or str(span.get("page_id"))
        text(visible(f"  from {where}: “{_clip(str(span.get('text') or ''), 300)}”"))


@review_app.command("show", epilog=examples("pcp review show pg_01M8R7A1 --json"))
def review_show(page_id: PageArg, store_path: StoreOpt = None,
                as_json: JsonOpt = False) -> None:
    """One proposal with its evidence: the page, revision, span and text of each sentence it
    came from (`source_spans`)."""
    with api.open_store(store_path) as store:
        item = _item(store, _checked(store, [page_id])[0])
        if not as_json:  # for the eye; --json keeps the spans as stored
            api.evidence_sources(store, [item])
    emit(item, as_json, lambda: _show_item(item))


_NUMBERS = re.compile(r"^#?([0-9]+)(?:-([0-9]+))?$")


def _checked(store: Any, refs: list[str], *, every: bool = False,
             categories: list[str] | None = None) -> list[str]:
    """The proposals chosen (ids, unique prefixes, titles; numbers and ranges of numbers as
    `pcp review` lists them; every one; every one of a category), each resolved and awaiting
    review, or an error before anything changes."""
    from pcp_cli.errors import UsageError

    queue = [item for _label, group in api.queue_groups(api.review_queue(store))
             for item in group]
    waiting = {i["page_id"] for i in queue}
    page_ids: list[str] = []
    if every:
        page_ids = [i["page_id"] for i in queue]
    for category in categories or ():
        chosen = [i["page_id"] for i in queue if category in (
            i["category"], f"timeline: {i['category']}")]
        if not chosen:
            raise UsageError(f"no proposal of category {category!r} awaits review",
                             hint="`pcp review` lists them by category")
        page_ids += chosen
    for ref in refs:
        numbers = _NUMBERS.match(ref)
        if numbers and not api.page_entry(store, ref):
            low = int(numbers.group(1))
            high = int(numbers.group(2) or low)
            if not 1 <= low <= high <= len(queue):
                raise UsageError(f"{ref}: the queue has {len(queue)} proposal(s), numbered "
                                 "as `pcp review` lists them", hint="`pcp review` numbers them")
            page_ids += [i["page_id"] for i in queue[low - 1:high]]
            continue
        page_id = api.find_page(store, ref)
        if page_id not in waiting:
            _item(store, page_id)  # raises the reason
        page_ids.append(page_id)
    if not page_ids:
        raise UsageError("name the proposals: ids, numbers as `pcp review` lists them, "
                         "--category CATEGORY or --all")
    return list(dict.fromkeys(page_ids))


AllOpt = Annotated[bool, typer.Option("--all", help="Every proposal awaiting review.")]
CategoryOpt = Annotated[list[str] | None, typer.Option(
    "--category", metavar="CATEGORY", help="Every proposal of this category (repeatable), e.g. "
    "preference, or 'timeline: job'.")]


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
    page: PagesArg = None,
    edit: Annotated[bool, typer.Option("--edit", help="Open $EDITOR on the claim and accept "
                                       "the edited text (one proposal).")] = False,
    every: AllOpt = False,
    category: CategoryOpt = None,
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
    with api.open_store(store_path) as store:
        ids = _checked(store, page_ids, every=every, categories=category)
        if edit and len(ids) != 1:
            raise UsageError("--edit takes one proposal at a time")
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
    page: PagesArg = None,
    reason: Annotated[str | None, typer.Option("--reason", metavar="TEXT",
                                               help="Why (kept for audit).")] = None,
    every: AllOpt = False,
    category: CategoryOpt = None,
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Reject proposals (kept for audit, never served, never proposed again by `pcp
    propose`). Every id is checked before any is rejected."""
    page_ids = _several(page, ctx)
    with api.open_store(store_path) as store:
        ids = _checked(store, page_ids, every=every, categories=category)
        results = [api.reject_proposal(store, page_id, reason=reason) for page_id in ids]
    _report(results, as_json, "rejected")


def _withdrawn(result: dict[str, Any], as_json: bool) -> None:
    def human() -> None:
        what = "acceptance" if result["withdrawn"] == "accepted" else "rejection"
        text(f"took back the {what} of {result['page_id']} ({result['revision_id']}): it "
             "waits for review again")
        for page_id in result["restored"]:
            text(f"{page_id} is current again")

    emit(result, as_json, human)


@review_app.command("undo", epilog=examples("pcp review undo", "pcp review undo --json"))
def review_undo(store_path: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Take back the last decision: the proposal accepted or rejected last waits for review
    again (a new revision; the history keeps the decision). A keystone it superseded is
    current again."""
    with api.open_store(store_path) as store:
        result = api.undo_decision(store)
    _withdrawn(result, as_json)


@review_app.command("withdraw", epilog=examples("pcp review withdraw pg_01M8R7A1"))
def review_withdraw(page: PageArg, store_path: StoreOpt = None,
                    as_json: JsonOpt = False) -> None:
    """Take back the decision on one proposal: an accepted one leaves the read surface, a
    rejected one is reconsidered; either way it waits for review again (a new revision; the
    history keeps the decision). A keystone it superseded is current again."""
    with api.open_store(store_path) as store:
        result = api.withdraw_decision(store, api.find_page(store, page))
    _withdrawn(result, as_json)


_CHOICES = {"a": "accept", "r": "reject", "s": "skip", "e": "edit", "u": "undo", "q": "quit"}


def _read_key() -> str:
    """One key from stdin without waiting for Enter (the terminal in cbreak mode meanwhile);
    a whole line where the terminal cannot be switched (Windows). "" at end of input."""
    try:
        import termios
        import tty
    except ImportError:  # pragma: no cover - Windows
        return sys.stdin.readline()[:1]
    fd = sys.stdin.fileno()
    before = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd, termios.TCSANOW)  # keys typed ahead are kept, not flushed
        return os.read(fd, 1).decode("utf-8", "replace")
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, before)


def _key() -> str:
    """One key pressed, as a choice; end of input or Ctrl-C/Ctrl-D is quit."""
    while True:
        try:
            key = _read_key()
        except KeyboardInterrupt:
            return "quit"
        if key in ("\x03", "\x04", ""):
            return "quit"
        choice = _CHOICES.get(key.lower())
        if choice:
            return choice


@review_app.command("next", epilog=examples("pcp review next"))
def review_next(store_path: StoreOpt = None) -> None:
    """Step through the queue one proposal at a time on a terminal, one key each (no Enter):
    accept, reject, skip, edit (then accept), undo the last decision, or quit."""
    from pcp_cli.errors import UsageError

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError("pcp review next asks on a terminal, and this is not one",
                         hint="use `pcp review list`, then `pcp review accept|reject ID...`")
    from pcp_cli.errors import PcpError

    done = {"accept": 0, "reject": 0, "skip": 0, "undo": 0}
    with api.open_store(store_path) as store:
        items = [item for _label, group in api.queue_groups(api.review_queue(store))
                 for item in group]
        api.evidence_sources(store, items)
        if not items:
            text("Nothing awaits review.")
            return
        number = 0
        while number < len(items):
            item = items[number]
            text(f"\n[{number + 1}/{len(items)}]")
            _show_item(item)
            sys.stderr.write("[a]ccept, [r]eject, [s]kip, [e]dit then accept, [u]ndo the "
                             "last decision, [q]uit? ")
            sys.stderr.flush()
            choice = _key()
            sys.stderr.write(f"{choice}\n")
            if choice == "quit":
                break
            if choice == "undo":  # the proposal taken back comes round again, at the end
                try:
                    result = api.undo_decision(store)
                except PcpError as exc:
                    text(f"nothing taken back: {exc.message}")
                    continue
                text(f"took back {result['page_id']}: it waits for review again")
                done["undo"] += 1
                items += [i for i in api.review_queue(store) if i["page_id"] ==
                          result["page_id"] and i["page_id"] != item["page_id"]]
                api.evidence_sources(store, items)
                continue
            number += 1
            if choice == "skip":
                done["skip"] += 1
            elif choice == "reject":
                result = api.reject_proposal(store, item["page_id"])
                text(f"rejected {result.page_id}")
                done["reject"] += 1
            else:
                content = _edited_claim(store, item["page_id"]) if choice == "edit" else None
                result = api.accept_proposal(store, item["page_id"], content=content)
                text(f"accepted {result.page_id}")
                done["accept"] += 1
    text(f"\naccepted {done['accept']}, rejected {done['reject']}, skipped {done['skip']}"
         + (f", took back {done['undo']}" if done["undo"] else ""))


def register(app: typer.Typer) -> None:
    app.add_typer(review_app, name="review")

