"""`pcp profile …`: the distilled "who I am" page."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from pcp_cli import api
from pcp_cli.cli.output import AsOfOpt, JsonOpt, StoreOpt, emit, examples, note, text
from pcp_cli.cli.pages import write_result
from pcp_cli.errors import UsageError

profile_app = typer.Typer(help="Your profile (who you are, how you work).", no_args_is_help=True)


@profile_app.command("set", epilog=examples(
    'pcp profile set summary "Backend engineer in Lisbon"',
    'pcp profile set values "clarity; kindness"'))
def profile_set(
    field: Annotated[str, typer.Argument(metavar="FIELD", help="The profile field (summary, "
                                         "domain_expertise, values, …).")],
    value: Annotated[str, typer.Argument(metavar="VALUE", help="Its value (list fields: "
                                         "items separated by ';').")],
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Set a profile field by hand (pinned: distillation never overwrites it).

    List fields (domain_expertise, values) take items separated by ';'.
    """
    with api.open_store(store_path) as store:
        result = api.set_profile_field(store, field, value)
    write_result(result, as_json, "set")


@profile_app.command("show", epilog=examples("pcp profile show",
                                             "pcp profile show --format micro_prompt"))
def profile_show(
    fmt: Annotated[str | None, typer.Option(
        "--format", "-F", help="json | markdown | micro_prompt (as `pcp export` writes them)."
    )] = None,
    as_of: AsOfOpt = None,
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show the profile (the strict v1 profile object under --json or --format json)."""
    if fmt is not None:
        fmt = {"micro-prompt": "micro_prompt", "md": "markdown"}.get(fmt, fmt)
        if fmt not in api.PROFILE_FORMATS:
            raise UsageError(f"unknown format {fmt!r}",
                             hint=f"one of: {', '.join(api.PROFILE_FORMATS)}")
        if as_json and fmt != "json":
            raise UsageError("--json and --format disagree", hint="give one of them")
        with api.open_store(store_path) as store:
            data = api.export_text(api.as_of_view(store, as_of), fmt)
        sys.stdout.write(data)
        return
    with api.open_store(store_path) as store:
        obj = api.profile_object(api.as_of_view(store, as_of))

    def human() -> None:
        if len(obj) == 1:
            text("No profile is available yet in this context store.")
            return
        for key, value in obj.items():
            if key in ("schema_version", "extensions"):
                continue
            shown = "; ".join(value) if isinstance(value, list) else value
            text(f"{key}: {shown}")
        ours = obj.get("extensions", {}).get("org.pcp-cli", {})
        if ours.get("stale_fields_left_out"):
            note(f"left out as stale: {', '.join(ours['stale_fields_left_out'])} "
                 f"({ours.get('stale_reason', '')})")

    emit(obj, as_json, human)


@profile_app.command("distill", epilog=examples("pcp profile distill --dry-run",
                                                "pcp profile distill --json"))
def profile_distill(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would change; write "
                                          "nothing.")] = False,
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """(Re)build the profile from your active, affirmed keystones, deterministically.

    Fields you set by hand with `pcp profile set` are never overwritten. The new revision
    records provenance `derive` with the keystone revisions it used.
    """
    with api.open_store(store_path) as store:
        result = api.distill_profile(store, dry_run=dry_run)

    def human() -> None:
        changed = ", ".join(result["changed"]) or "nothing"
        page = result["page_id"] or "(no profile: no usable keystones)"
        text(f"{result['status']} {page}: {changed} changed, from "
             f"{len(result['input_revision_ids'])} keystone revision(s)")

    emit(result, as_json, human)


def register(app: typer.Typer) -> None:
    app.add_typer(profile_app, name="profile")
