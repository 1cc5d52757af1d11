"""Multi-device commands: status, resolve, sync, and the hidden git merge driver `merge-file`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from pcp_cli import api
from pcp_cli.cli.editor import run_editor
from pcp_cli.cli.output import (
    JsonOpt,
    StoreOpt,
    complete_page,
    emit,
    examples,
    note,
    table,
    text,
)
from pcp_cli.errors import UsageError


def register(app: typer.Typer) -> None:
    @app.command(epilog=examples("pcp status", "pcp status --json"))
    def status(store_path: StoreOpt = None, as_json: JsonOpt = False) -> None:
        """Show what is not settled: hand edits, diverged pages, conflicts, uncommitted files."""
        with api.open_store(store_path, readonly=True, refresh=False) as store:
            data = api.sync_status(store)
        emit(data, as_json, lambda: _print_status(data))

    @app.command(epilog=examples("pcp resolve pg_01M8R7A1 --keep rev_01M8R9QX",
                                 "pcp resolve pg_01M8R7A1 --edit"))
    def resolve(
        page_id: Annotated[str, typer.Argument(
            metavar="PAGE", help="The diverged page (id, unique prefix or title).",
            autocompletion=complete_page)],
        keep: Annotated[str | None, typer.Option(
            "--keep", metavar="REV", help="Keep this revision's state.")] = None,
        edit: Annotated[bool, typer.Option(
            "--edit", help="Combine the heads' texts in $EDITOR.")] = False,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Join a diverged page's heads into one revision whose parents are all of them."""
        if keep is not None and edit:
            raise UsageError("give --keep REV or --edit, not both")
        with api.open_store(store_path) as store:
            page_id = api.find_page(store, page_id)
            content = None
            if edit:
                content = _edit(store.layout.local, api.merge_proposal(store, page_id))
            data = api.resolve_page(store, page_id, keep=keep, content=content)
        emit(data, as_json, lambda: text(
            f"{data['status']} {data['page_id']} ({data['revision_id']})"
            + (f" from {', '.join(data['parents'])}" if data["parents"] else "")))

    @app.command(epilog=examples("pcp sync", 'pcp sync -m "notes from the train"'))
    def sync(
        remote: Annotated[str | None, typer.Option(
            "--remote", help="The git remote (default: the branch's upstream, else origin).")
        ] = None,
        message: Annotated[str | None, typer.Option(
            "--message", "-m", help="Commit message for local changes.")] = None,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Record hand edits, commit, pull (merging head files), report divergence, push."""
        with api.open_store(store_path, refresh=False) as store:
            data = api.sync_store(store, remote=remote, message=message)
        emit(data, as_json, lambda: _print_sync(data))
        if data["remote"] is None:
            note("No git remote: committed locally only. Add one with `git remote add origin "
                 "URL`.")
        if not data["merge_driver"]:
            note("This clone has no pcp merge driver; sync copes without it. Run `pcp init "
                 "--git` here to register it.")
        if data["diverged"]:
            note(f"{len(data['diverged'])} page(s) diverged: see `pcp status`, then "
                 "`pcp resolve PAGE_ID --keep REV` or `--edit`.")

    @app.command("merge-file", hidden=True)
    def merge_file(
        base: Annotated[str, typer.Argument(help="%O: the common ancestor's version.")],
        ours: Annotated[str, typer.Argument(help="%A: ours; the result is written here.")],
        theirs: Annotated[str, typer.Argument(help="%B: theirs.")],
        path: Annotated[str, typer.Argument(help="%P: the path in the repository.")] = "",
    ) -> None:
        """Git merge driver for page head files (registered by `pcp init --git`)."""
        # Exit status 1 (NotMerged) tells git "conflict"; it keeps what we left in %A.
        api.merge_head_file(base, ours, theirs, path or ours)


def _edit(folder: Path, proposal: str) -> str:
    """Open $VISUAL/$EDITOR (else vi) on the proposal; return what the person saved."""
    import tempfile  # here: `pcp status` imports this module too

    folder.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix="resolve-", suffix=".md", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(proposal)
        run_editor(Path(name))
        return api.strip_merge_proposal(Path(name).read_text("utf-8"))
    finally:
        Path(name).unlink(missing_ok=True)


def _print_status(data: dict[str, Any]) -> None:
    git = data["git"]
    lines = []
    if git is None:
        lines.append("Not in a git repository (`pcp init --git` makes one).")
    else:
        where = git["branch"] or "(detached)"
        lines.append(f"On {where} in {git['repository']}"
                     + ("" if git["merge_driver"] else " (no pcp merge driver in this clone)"))
        if git["in_progress"]:
            lines.append(f"A git {git['in_progress']} is unfinished.")
    if data["clean"]:
        lines.append("Nothing to record, resolve or commit.")
    line = _monitor_line(data.get("monitor"))
    if line:
        lines.append(line)
    engine = data.get("search_engine")
    if engine:
        lines.append(f"Search engine: {engine['engine']}"
                     + ("" if engine["chosen_by"] == "default"
                        else f" (chosen by {engine['chosen_by']})")
                     + ("" if engine.get("tantivy_installed", True)
                        else " (the fast engine, tantivy, is not installed: "
                             f"{api.FAST_INSTALL})") + ".")
        index = engine.get("index") or {}
        if index.get("exists") and not index.get("usable"):
            lines.append(f"The search index needs a rebuild: {index['reason']} "
                         "(the next search or `pcp index` rebuilds it).")
        if engine.get("build"):
            lines.append(f"Running: {api.describe_build(engine['build'])}.")
    text("\n".join(lines))
    rows: list[tuple[str, str, str]] = []
    for item in data["hand_edits"]:
        rows.append(("hand edit" if item["kind"] == "edited" else "new file",
                     item["page_id"] or "", item["path"]))
    for item in data["diverged"]:
        heads = ", ".join(h["revision_id"] for h in item["heads"])
        rows.append(("diverged", item["page_id"], f"{len(item['heads'])} heads: {heads}"))
    for item in data["conflicts"]:
        rows.append(("conflict markers", item["page_id"] or "", item["path"]))
    for item in data["missing_head_files"]:
        rows.append(("missing head file", item["page_id"],
                     f"{item['revisions']} revision(s)"))
    for item in data["invalid_files"]:
        rows.append(("invalid file", item["page_id"] or "", f"{item['path']}: "
                     f"{item['problem']}"))
    for path in (git or {}).get("unmerged", []):
        rows.append(("unmerged", "", path))
    uncommitted = (git or {}).get("uncommitted", [])
    if len(uncommitted) <= UNCOMMITTED_LISTED:
        for item in uncommitted:
            rows.append(("uncommitted", item["status"], item["path"]))
    if rows:
        table(("state", "page", "detail"), rows, whole=(0, 1))
    if len(uncommitted) > UNCOMMITTED_LISTED:
        text(_uncommitted_summary(uncommitted))


# More uncommitted files than this are summarised by folder (a big import leaves thousands):
# `--json` still lists every one.
UNCOMMITTED_LISTED = 10
_GIT_STATES = {"??": "new", "A": "added", "M": "changed", "D": "deleted", "R": "renamed"}


def _uncommitted_summary(items: list[dict[str, str]]) -> str:
    """`12,408 uncommitted files:` then a line per top-level folder with its counts by state."""
    folders: dict[str, dict[str, int]] = {}
    for item in items:
        folder = item["path"].split("/", 1)[0] + ("/" if "/" in item["path"] else "")
        state = _GIT_STATES.get(item["status"], _GIT_STATES.get(item["status"][:1], "changed"))
        counts = folders.setdefault(folder, {})
        counts[state] = counts.get(state, 0) + 1
    width = max(len(folder) for folder in folders)
    lines = [f"{len(items):,} uncommitted files (`pcp sync` commits them; `pcp status --json` "
             "lists each):"]
    for folder, counts in sorted(folders.items(), key=lambda kv: -sum(kv[1].values())):
        detail = ", ".join(f"{n:,} {state}" for state, n in
                           sorted(counts.items(), key=lambda kv: -kv[1]))
        lines.append(f"  {folder:<{width}}  {detail}")
    return "\n".join(lines)


def _monitor_line(monitor: dict[str, Any] | None) -> str | None:
    """What `pcp status` says about the store monitor: nothing on a store too small to need
    one; else whether one runs, or why commands check every page file and what it costs."""
    if not monitor:
        return None
    if monitor["running"]:
        return (f"Store monitor: running (pid {monitor['pid']}): commands look only at what "
                "changed.")
    if monitor["pages"] < monitor["min_pages"] and monitor["starts"] != "marked":
        return None
    scan = monitor.get("last_scan") or {}
    cost = (f" ({scan['files']:,} files, {scan['seconds']:.2f} s the last time)"
            if scan.get("files") else "")
    if monitor["starts"] == "off":
        why = "switched off (`pcp monitor start` switches it on)"
    elif monitor.get("why_not"):
        why = f"cannot run here: {monitor['why_not']}"
    else:
        return ("Store monitor: not running; the next command starts it (it had stopped, "
                "idle or after a restart).")
    return f"Store monitor: {why}. Each command checks every page file{cost}."


def _print_sync(data: dict[str, Any]) -> None:
    lines = []
    if data["hand_edits"]:
        lines.append(f"recorded {len(data['hand_edits'])} hand edit(s)")
    if data["committed"]:
        lines.append(f"committed {', '.join(c[:10] for c in data['committed'])}")
    if data["remote"]:
        lines.append(f"merged {data['remote']}/{data['branch']}: {data['merged'] or 'new branch'}")
    if data["repaired"]:
        lines.append(f"rebuilt {len(data['repaired'])} head file(s) from the revision graph")
    if data["pushed"]:
        lines.append(f"pushed to {data['remote']}/{data['branch']}")
    for item in data["diverged"]:
        heads = ", ".join(h["revision_id"] for h in item["heads"])
        lines.append(f"diverged {item['page_id']}: {heads}")
    text("\n".join(lines) if lines else "nothing to do")
