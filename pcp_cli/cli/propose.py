"""`pcp propose`: keystones and timeline events proposed from the person's own words."""

from __future__ import annotations

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
    note,
    progress_bar,
    table,
    text,
)

# More pages come as extra arguments (a list-typed argument prints its Python type in --help).
PagesArg = Annotated[str | None, typer.Argument(
    metavar="[PAGE]...", help="Read only these pages (ids, prefixes or titles; several may "
    "follow).", autocompletion=complete_page, show_default=False)]


def _plan_note(plan: dict[str, Any]) -> None:
    """What a model run will cost, on stderr before it starts."""
    sys.stderr.write(
        f"pcp propose: {plan['calls']} call(s) to {plan['url']} (model {plan['model']}), "
        f"{plan['input_chars']} characters of your text"
        + (f"; {plan['skipped_chunks']} more chunk(s) left out by --max-calls"
           if plan["skipped_chunks"] else "") + "\n")
    sys.stderr.flush()


def _sensitivity_note(item: dict[str, Any]) -> None:
    """Why a page the person's words came from is now (or would be) `high`, or is not."""
    page, why = item["page_id"], item["why"]
    if item["status"] == "kept":
        note(f"pcp propose: {page} stays {item['was']}, as you set it, though {why}; "
             f"`pcp revise {page} --sensitivity high` hides it from default search")
    else:
        verb = "would raise" if item["status"] == "would_raise" else "raised"
        note(f"pcp propose: {verb} {page} from {item['was']} to {item['to']}: {why}")


def _evidence(proposal: dict[str, Any], limit: int = 70) -> str:
    if not proposal["evidence"]:
        return ""
    first = " ".join(str(proposal["evidence"][0]["text"]).split())
    first = first if len(first) <= limit else first[:limit - 1].rstrip() + "…"
    more = len(proposal["evidence"]) - 1
    return f"“{first}”" + (f" (+{more})" if more else "")


def register(app: typer.Typer) -> None:
    @app.command(context_settings={"allow_extra_args": True}, epilog=examples(
        "pcp propose --dry-run              # what it would propose, nothing written",
        "pcp propose --type conversation --since 2024-06",
        "pcp propose --llm http://127.0.0.1:11434/v1 --model llama3.2 --max-calls 20",
        "pcp review                         # then accept or reject each proposal"))
    def propose(
        ctx: typer.Context,
        page: PagesArg = None,
        page_type: Annotated[list[str] | None, typer.Option(
            "--type", metavar="TYPE", help="conversation or note (repeatable; default both).",
            show_default=False)] = None,
        since: Annotated[str | None, typer.Option(
            "--since", metavar="DATE", help="Only what was said on or after DATE (YYYY, "
            "YYYY-MM or YYYY-MM-DD): a turn's own date, else its page's.")] = None,
        dry_run: Annotated[bool, typer.Option(
            "--dry-run", help="Show what would be proposed; write nothing.")] = False,
        llm: Annotated[str | None, typer.Option(
            "--llm", metavar="URL", help="An OpenAI-compatible endpoint (…/v1) to extract "
            "with instead of the offline rules.")] = None,
        model: Annotated[str | None, typer.Option(
            "--model", metavar="NAME", help="The model name sent to --llm.")] = None,
        api_key_env: Annotated[str | None, typer.Option(
            "--api-key-env", metavar="VAR", help="The environment variable holding the "
            "--llm API key (never given on the command line).")] = None,
        max_calls: Annotated[int, typer.Option(
            "--max-calls", metavar="N", min=1, help="At most N model calls.")] = 50,
        timeout: Annotated[float, typer.Option(
            "--timeout", metavar="SECONDS", min=0.1, help="How long one model call may "
            "take; a call that takes longer is counted as failed.")] = 60.0,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Propose keystones and timeline events from what you wrote (your turns of
        conversations and sessions, your notes) into the review queue. Deterministic and
        offline by default (English patterns); nothing is served until you accept it."""
        import os

        from pcp_cli.errors import UsageError

        pages = [page, *ctx.args] if page else list(ctx.args)
        for extra in pages:
            if extra.startswith("-"):
                raise UsageError(f"no such option: {extra}")
        extractor = None
        if llm is not None:
            key = None
            if api_key_env:
                key = os.environ.get(api_key_env)
                if not key:
                    raise UsageError(f"the environment variable {api_key_env} is not set",
                                     hint="export it, or leave out --api-key-env")
            extractor = api.llm_extractor(llm, model=model, api_key=key, max_calls=max_calls,
                                          timeout=timeout, on_plan=_plan_note)
        elif model is not None or api_key_env is not None:
            raise UsageError("--model and --api-key-env go with --llm URL")
        with api.open_store(store_path) as store, progress_bar(0, "reading") as progress:
            names = [api.find_page(store, p) for p in pages or ()]
            result = api.propose(store, names, types=tuple(page_type or ("conversation",
                                                                         "note")),
                                 since=since, dry_run=dry_run, extractor=extractor,
                                 progress=progress if extractor is None else None)

        def human() -> None:
            items = result["proposals"]
            counts = result["counts"]
            verb = "would propose" if dry_run else "proposed"
            if items:
                table(("id", "category", "claim", "conf", "evidence"),
                      ((p["id"] or "(new)",
                        p["category"] if p["kind"] == "keystone" else f"timeline: {p['category']}",
                        (f"{p['date']}: " if p["date"] else "") + p["content"]
                        + (f"  [replaces {p['supersedes']}]" if p["supersedes"] else "")
                        + ("  [more evidence]" if p["status"] == "evidence_added" else ""),
                        f"{p['confidence']:.2f}", _evidence(p)) for p in items))
            text(f"{verb} {counts['proposals']}, more evidence for {counts['evidence_added']}; "
                 f"{counts['already_known']} already known, {counts['rejected_before']} "
                 f"rejected before ({counts['pages_read']} pages read)"
                 + ("" if dry_run or not counts["proposals"] else
                    ". Review them with `pcp review`."))

        for item in result.get("sensitivity") or ():
            _sensitivity_note(item)
        if result["counts"].get("turns_cut"):
            note(f"pcp propose: {result['counts']['turns_cut']} turn(s) or note(s) longer than "
                 f"{result['counts']['read_limit']:,} characters were read up to that length")
        emit(result, as_json, human)
