"""`pcp retention …`: the retention policy, leases, the plan, and collecting it."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from pcp_cli import api
from pcp_cli.cli.output import JsonOpt, StoreOpt, emit, examples, note, table, text

retention_app = typer.Typer(
    help="How long tombstoned pages and replaced revisions are kept, leases that keep named "
    "ones, and removing for good what is due (plan, then collect).", no_args_is_help=True)
lease_app = typer.Typer(help="Leases: keep named pages or revisions whatever the policy says.",
                        no_args_is_help=True)

DurationHelp = "a duration: 90d, 12w, 1y, or forever"


def _policy_line(policy: dict[str, Any]) -> str:
    if not policy["configured"]:
        return "no retention policy in pcp.yaml: everything is kept forever"
    return (f"tombstoned pages kept {policy['tombstoned_pages']} after tombstoning; replaced "
            f"revisions kept {policy['superseded_revisions']} after a newer one")


def _show_policy(data: dict[str, Any]) -> None:
    text(_policy_line(data["policy"]) + "\n")
    if not data["leases"]:
        note("No leases (add one: pcp retention lease add PAGE_OR_REVISION --reason WHY).")
        return
    _lease_table(data["leases"])


def _lease_table(leases: list[dict[str, Any]]) -> None:
    table(("lease", "protects", "until", "reason", "active"),
          ((lease["lease_id"], ", ".join(lease["targets"]), lease["until"] or "released",
            lease["reason"] or "", "yes" if lease.get("active", True) else "expired")
           for lease in leases), whole=(0, 1))


@retention_app.command("show", epilog=examples("pcp retention show", "pcp retention show --json"))
def retention_show(store_path: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """The retention policy in pcp.yaml and the leases."""
    with api.open_store(store_path) as store:
        data = api.retention_policy(store)
    emit(data, as_json, lambda: _show_policy(data))


@retention_app.command("set", epilog=examples(
    "pcp retention set --tombstoned-pages 90d --superseded-revisions 1y",
    "pcp retention set --superseded-revisions forever"))
def retention_set(
    tombstoned_pages: Annotated[str | None, typer.Option(
        "--tombstoned-pages", metavar="DURATION",
        help=f"How long a tombstoned page is kept after it was tombstoned ({DurationHelp}).")
    ] = None,
    superseded_revisions: Annotated[str | None, typer.Option(
        "--superseded-revisions", metavar="DURATION",
        help=f"How long a revision is kept after a newer revision replaced it ({DurationHelp}).")
    ] = None,
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write the retention policy (pcp.yaml's `retention:` section; nothing is removed until
    you collect a plan)."""
    from pcp_cli.errors import UsageError

    if tombstoned_pages is None and superseded_revisions is None:
        raise UsageError("nothing to set",
                         hint="pass --tombstoned-pages and/or --superseded-revisions")
    with api.open_store(store_path) as store:
        data = api.set_retention_policy(store, tombstoned_pages=tombstoned_pages,
                                        superseded_revisions=superseded_revisions)
    emit(data, as_json, lambda: text(_policy_line(data["policy"]) + "\n"))


def _show_plan(data: dict[str, Any]) -> None:
    collect = data["collect"]
    text(f"plan {data['plan_id']} ({data['today']}): {_policy_line(data['policy'])}\n")
    if data.get("blocked"):
        text(f"nothing can be collected: {data['blocked']}\n")
    if collect["pages"] or collect["revisions"]:
        text(f"would remove for good: {collect['page_count']} tombstoned page(s) and "
             f"{collect['revision_count']} revision(s) in all\n")
        for page in collect["pages"]:
            text(f"  page {page['page_id']} “{page['title']}” ({len(page['revision_ids'])} "
                 f"revisions, {len(page['relation_ids'])} relations): {page['why']}\n")
        for group in collect["revisions"]:
            text(f"  {len(group['revision_ids'])} older revision(s) of {group['page_id']}: "
                 f"{group['why']}\n")
    else:
        text("nothing is due\n")
    for kept in data["kept"]:
        what = (f"page {kept['page_id']}" if kept["kind"] == "page"
                else f"revision {kept['revision_id']} of {kept['page_id']}"
                if kept["kind"] == "revision"
                else f"{len(kept['revision_ids'])} older revision(s) of {kept['page_id']}")
        text(f"  kept: {what}: {kept['why']}\n")
    policy = data["kept_by_policy"]
    if any(policy.values()):
        text(f"  kept by the policy (not yet due): {policy['tombstoned_pages']} tombstoned "
             f"page(s), {policy['superseded_revisions']} revision(s)"
             + (f"; the next is due on {data['next_due']}" if data["next_due"] else "") + "\n")
    if collect["pages"] or collect["revisions"]:
        note(f"Remove them: pcp retention collect --plan {data['plan_id']}")


@retention_app.command("plan", epilog=examples("pcp retention plan",
                                               "pcp retention plan --json"))
def retention_plan(store_path: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """What would be removed for good now, each with why, and what is kept, each with why (a
    lease, a relation, evidence, a branching history, or the policy). Changes nothing."""
    with api.open_store(store_path) as store:
        data = api.retention_plan(store)
    emit(data, as_json, lambda: _show_plan(data))


@retention_app.command("collect", epilog=examples(
    "pcp retention collect --plan plan_3f2a9c0d1e2b4a5c", "pcp retention collect"))
def retention_collect(
    plan: Annotated[str | None, typer.Option(
        "--plan", metavar="PLAN_ID", help="The plan you looked at (`pcp retention plan`): "
        "exactly what it lists is removed, and nothing if the plan has changed since.")] = None,
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Remove for good what a retention plan lists (with --plan, or after you confirm it on a
    terminal); recorded in the audit log and in an event that git carries."""
    from pcp_cli.errors import UsageError
    from pcp_cli.mcp import commands

    with api.open_store(store_path) as store:
        if plan is None:
            if not (sys.stdin.isatty() and sys.stdout.isatty()):
                raise UsageError("collecting removes files for good: name the plan you looked "
                                 "at, or run it on a terminal to confirm",
                                 hint="pcp retention plan, then pcp retention collect --plan "
                                 "PLAN_ID")
            data = api.retention_plan(store)
            _show_plan(data)
            if not data["collect"]["pages"] and not data["collect"]["revisions"]:
                return
            sys.stderr.write("Remove these for good? [y/N] ")
            sys.stderr.flush()
            if sys.stdin.readline().strip().lower() not in ("y", "yes"):
                note("Nothing removed.")
                return
            plan = data["plan_id"]
        with commands.owner_audit(store.root, "retention collect", {"plan": plan}) as audit:
            result = api.retention_collect(store, plan)
            audit["result_count"] = result["pages_removed"] + result["revisions_removed"]
    emit(result, as_json, lambda: text(
        f"removed {result['pages_removed']} page(s) and {result['revisions_removed']} "
        f"revision(s) ({result['relations_removed']} relation(s)) of plan {plan}"
        + (f"; event {result['event_id']}" if result["event_id"] else "") + "\n"))


@lease_app.command("add", epilog=examples(
    'pcp retention lease add pg_01M8R7A1 --reason "tax records, keep 7 years"',
    "pcp retention lease add rev_01M8R7A1 rev_01M8R9QX --until 2031-12-31"))
def lease_add(
    targets: Annotated[list[str], typer.Argument(
        metavar="PAGE_OR_REVISION...", help="Page ids (every revision of the page) or revision "
        "ids (rev_…).")],
    reason: Annotated[str | None, typer.Option("--reason", metavar="TEXT",
                                               help="Why (shown in the plan).")] = None,
    until: Annotated[str | None, typer.Option(
        "--until", metavar="DATE", help="Protect them to the end of this day (YYYY-MM-DD); "
        "default: until released.")] = None,
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Keep named pages or revisions whatever the policy says (committed under leases/)."""
    with api.open_store(store_path) as store:
        data = api.add_lease(store, targets, reason=reason, until=until)
    emit(data, as_json, lambda: text(f"lease {data['lease_id']} protects "
                                     f"{', '.join(data['targets'])}\n"))


@lease_app.command("list", epilog=examples("pcp retention lease list --json"))
def lease_list(store_path: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """The leases, with what each protects and until when."""
    with api.open_store(store_path) as store:
        leases = api.retention_policy(store)["leases"]
    emit(leases, as_json, lambda: _lease_table(leases) if leases else note("No leases."))


@lease_app.command("release", epilog=examples("pcp retention lease release ls_01M8R7A1"))
def lease_release(
    lease_id: Annotated[str, typer.Argument(metavar="LEASE", help="The lease id.")],
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Remove a lease: what it protected falls under the policy again."""
    with api.open_store(store_path) as store:
        data = api.release_lease(store, lease_id)
    emit(data, as_json, lambda: text(f"released {data['lease_id']}\n"))


def register(app: typer.Typer) -> None:
    retention_app.add_typer(lease_app, name="lease")
    app.add_typer(retention_app, name="retention")
