"""Pages across devices: which have diverged, which head files need rebuilding, and resolving.

Everything here works from the revision graph, which git merges without conflict. A head file is
only ever rewritten to render a revision that already exists; a hand edit is recorded as a
revision first, so nothing a person wrote is dropped.
"""

from __future__ import annotations

import os
from typing import Any

from pcp_cli.errors import InvalidInput, NotFound, PcpError, UsageError
from pcp_cli.model.ids import check_id, is_safe_id
from pcp_cli.model.page import Revision, file_json
from pcp_cli.store.atomic import write_new
from pcp_cli.store.folder import HandEdit
from pcp_cli.store.frontmatter import has_conflict_markers
from pcp_cli.store.graph import Graphs, revision_count, summaries, without_head_file
from pcp_cli.store.headfile import parse_head
from pcp_cli.store.store import Store
from pcp_cli.store.writes import new_revision
from pcp_cli.sync.driver import classify
from pcp_cli.sync.git import Repo


def page_ids(store: Store) -> list[str]:
    """Every page with a revision folder."""
    folder = store.layout.revisions
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return []
    return [name for name in names if (folder / name).is_dir() and store.revision_ids(name)]


def chosen_head(heads: list[Revision]) -> Revision:
    """The head every device shows while a page is diverged: the newest by (created_at, id)."""
    return max(heads, key=lambda r: (r.created_at, r.revision_id))


def divergences(store: Store, graphs: Graphs | None = None) -> list[dict[str, Any]]:
    """Pages whose revision graph has more than one head (the JSON shape `pcp status` lists).
    Only pages whose summary says so (or could not tell) have their revisions read."""
    found = []
    for graph in (summaries(store) if graphs is None else graphs).unsettled:
        if graph.heads == 1:
            continue
        page_id = graph.page_id
        try:
            heads = store.graph_heads(page_id)
        except PcpError:
            continue
        if len(heads) > 1:
            found.append(divergence(page_id, heads))
    return found


def divergence(page_id: str, heads: list[Revision]) -> dict[str, Any]:
    chosen = chosen_head(heads)
    return {
        "page_id": page_id,
        "title": chosen.state.title,
        "type": chosen.state.type,
        "heads": [
            {
                "revision_id": head.revision_id,
                "created_at": head.created_at,
                "created_by": f"{head.created_by.actor_type}:{head.created_by.actor_id}",
                "lifecycle_status": head.state.lifecycle_status,
                "content_hash": head.content_hash,
            }
            for head in heads
        ],
        "shown": chosen.revision_id,
    }


def is_conflicted(store: Store, rel: str) -> bool:
    try:
        return has_conflict_markers((store.root / rel).read_text("utf-8", errors="replace"))
    except OSError:
        return False


def head_file_report(store: Store, graphs: Graphs | None = None
                     ) -> dict[str, list[dict[str, Any]]]:
    """Head files that differ from the graph: hand edits, new files, conflicts, invalid files.
    From the catalog's unsettled rows and the revision folders' summaries: no file is read
    but the unsettled ones."""
    report: dict[str, list[dict[str, Any]]] = {
        "hand_edits": [], "conflicts": [], "invalid_files": [], "missing_head_files": []}
    for entry in store.catalog.unsettled():
        item = {"path": entry.path, "page_id": entry.page_id}
        if entry.problem and entry.problem.startswith("new file"):
            report["hand_edits"].append({**item, "kind": "new_file"})
        elif entry.problem is None:
            report["hand_edits"].append({**item, "kind": "edited"})
        elif is_conflicted(store, entry.path):
            report["conflicts"].append(item)
        else:
            report["invalid_files"].append({**item, "problem": entry.problem})
    for page_id in without_head_file(store, summaries(store) if graphs is None else graphs):
        report["missing_head_files"].append(
            {"page_id": page_id, "revisions": revision_count(store, page_id)})
    return report


def record_unmerged_sides(store: Store, repo: Repo, page_id: str | None = None
                          ) -> list[dict[str, Any]]:
    """For head files git could not merge: record each side's unrecorded hand edit.

    Git keeps both sides in its index (stages 2 and 3). A side that pcp rendered names a
    revision that is already in the graph; a side edited by hand is recorded as a child of the
    revision it names, so each side's text becomes a head of its own and nothing is chosen.
    """
    recorded: list[dict[str, Any]] = []
    for rel in repo.unmerged():
        if not (rel.startswith("pages/") and rel.endswith(".md")):
            continue
        if page_id is not None and rel.rsplit("/", 1)[-1] != f"{page_id}.md":
            continue
        for stage, side in ((2, "ours"), (3, "theirs")):
            blob = repo.stage_blob(stage, rel)
            if blob is None or classify(blob, rel).kind != "edited":
                continue
            edit = record_edit(store, rel, blob, f"hand edit recorded from {rel} ({side} side "
                               "of a git merge)")
            if edit is not None:
                recorded.append({"path": rel, "page_id": edit.page_id,
                                 "revision_id": edit.revision_id, "side": side})
    return recorded


def record_edit(store: Store, rel: str, raw: bytes, note: str) -> HandEdit | None:
    """Record a hand-edited head file as a child of the revision it names (not of the newest
    head, which another device may have written meanwhile): if that revision is no longer a
    head, the page diverges visibly instead of one text silently replacing the other.
    None when there is nothing to record this way (the edit is already recorded, the file
    names no known revision, or it is not a page yet)."""
    name = rel.rsplit("/", 1)[-1][:-3]
    folder_ns = store.layout.namespace_of(store.root / rel) or store.default_namespace
    try:
        parsed = parse_head(raw, path=rel, file_page_id=name if is_safe_id(name) else None,
                            folder_namespace=folder_ns, owner_id=store.owner_id,
                            load_revision=store.load_revision)
        if parsed.state is None or not store.page_exists(parsed.state.page_id):
            return None
        state = parsed.state
        store.check_state(state)
    except InvalidInput:
        return None
    page_id = state.page_id
    if parsed.revision_id not in store.revision_ids(page_id):
        return None
    with store.locked():
        parent = store.load_revision(page_id, str(parsed.revision_id))
        if parent.content_hash == state.content_hash:
            return None
        for rev in store.revisions(page_id):
            if rev.parent_revision_id == parent.revision_id and \
                    rev.content_hash == state.content_hash:
                return None  # already recorded
        # The Store records hand edits on top of the newest head; this one must branch from
        # the revision it was made from, so it uses the Store's revision builder directly.
        revision = new_revision(state, actor=store.user, operation="revise",
                                       parent=parent, note=note)
        write_new(store.layout.revision_path(page_id, revision.revision_id),
                  file_json(revision.to_dict()))
        store.writes.write_head(revision)  # the edit is recorded: the file renders it now
        edit = HandEdit(rel, page_id, revision.revision_id, adopted=False)
        store.hand_edits.append(edit)
        return edit


def record_branching_edits(store: Store) -> list[HandEdit]:
    """Record every edited head file as a child of the revision it names (see record_edit)."""
    store.catalog.refresh("full")
    found = []
    for entry in store.catalog.entries("edited = 1"):
        try:
            raw = (store.root / entry.path).read_bytes()
        except OSError:
            continue
        edit = record_edit(store, entry.path, raw, f"hand edit recorded from {entry.path}")
        if edit is not None:
            found.append(edit)
    return found


def repair(store: Store) -> list[dict[str, Any]]:
    """Rebuild head files from the graph where they hold conflict markers, are missing, or name
    another revision than the one every device shows. Hand edits are recorded first."""
    record_branching_edits(store)
    store.refresh("full")
    repaired: list[dict[str, Any]] = []
    with store.locked():
        for page_id in page_ids(store):
            try:
                heads = store.graph_heads(page_id)
            except PcpError:
                continue
            want = chosen_head(heads)
            entries = store.catalog.by_page_id(page_id)
            reason = _needs_rewrite(store, entries, want)
            if reason is None:
                continue
            store.writes.write_head(want)
            repaired.append({"page_id": page_id, "revision_id": want.revision_id,
                             "path": store.layout.rel(store.layout.head_path(
                                 want.state.namespace, page_id)), "reason": reason})
    return repaired


def _needs_rewrite(store: Store, entries: list[Any], want: Revision) -> str | None:
    if not entries:
        return "missing_head_file"
    if any(e.problem and is_conflicted(store, e.path) for e in entries):
        return "conflict_markers"
    if any(e.problem or e.edited for e in entries):
        return None  # an invalid file or an unrecorded edit: never overwritten
    if len(entries) > 1:
        return "duplicate_head_files"
    if entries[0].revision_id != want.revision_id:
        return "not_the_chosen_head"
    return None


def resolve(store: Store, page_id: str, *, keep: str | None = None,
            content: str | None = None, repo: Repo | None = None) -> dict[str, Any]:
    """See `_resolve`; with `repo`, a head file git left unmerged is settled first: each side's
    unrecorded hand edit is recorded (so it becomes a head), and once the file is rebuilt it is
    marked resolved in git's index (`git add`), ready for `git commit`."""
    unmerged: list[str] = []
    recorded: list[dict[str, Any]] = []
    if repo is not None:
        unmerged = [rel for rel in repo.unmerged() if rel.startswith("pages/")
                    and rel.rsplit("/", 1)[-1] == f"{page_id}.md"]
        if unmerged:
            recorded = record_unmerged_sides(store, repo, page_id)
    result = _resolve(store, page_id, keep=keep, content=content)
    for rel in unmerged:
        path = f"{repo.prefix}/{rel}" if repo is not None and repo.prefix else rel
        if repo is not None:
            repo.git("add", "-A", "--", path)
    result["recorded_from_conflicts"] = recorded
    return result


def _resolve(store: Store, page_id: str, *, keep: str | None = None,
             content: str | None = None) -> dict[str, Any]:
    """Join a page's heads: a new revision whose parents are all of them.

    `keep`: the new revision has that revision's state (any revision of the page; its parent is
    `keep` when it is a head). `content`: the newest head's state with this body. Neither, on a
    page with one head: only rebuild its head file if it needs it.
    """
    check_id(page_id, "page id")
    if not store.page_exists(page_id):
        raise NotFound(f"page {page_id} does not exist", hint="`pcp status` lists diverged pages")
    if keep is not None and content is not None:
        raise UsageError("give --keep REV or --edit, not both")
    if content is not None and has_conflict_markers(content):
        raise InvalidInput("the merged text still holds conflict markers",
                           hint="edit them out, then run `pcp resolve` again")
    if content is not None and not content.strip():
        raise UsageError("the merged text is empty; nothing was recorded")
    with store.locked():
        store.refresh("full")
        heads = store.graph_heads(page_id)
        head_ids = [h.revision_id for h in heads]
        kept: Revision | None = None
        if keep is not None:
            kept = store.load_revision(page_id, check_id(keep, "revision id"))
        if len(heads) == 1:
            if kept is not None and kept.revision_id != heads[0].revision_id:
                raise UsageError(
                    f"page {page_id} has a single head ({heads[0].revision_id}); nothing to "
                    "resolve", hint=f"`pcp revise {page_id}` to publish other content")
            if content is not None:
                raise UsageError(f"page {page_id} has a single head; nothing to resolve",
                                 hint=f"`pcp revise {page_id}` to publish other content")
            entries = store.catalog.by_page_id(page_id)
            reason = _needs_rewrite(store, entries, heads[0])
            if reason:
                store.writes.write_head(heads[0])
            return {"page_id": page_id, "revision_id": heads[0].revision_id,
                    "status": "repaired" if reason else "unchanged", "parents": [],
                    "heads_before": head_ids}
        if kept is None and content is None:
            raise UsageError(
                f"page {page_id} has {len(heads)} heads: {', '.join(head_ids)}",
                hint=f"keep one with `pcp resolve {page_id} --keep REV`, or combine them with "
                f"`pcp resolve {page_id} --edit`")
        keep_a_head = kept is not None and kept.revision_id in head_ids
        parent = kept if kept is not None and keep_a_head else chosen_head(heads)
        changes: dict[str, Any] = {}
        if kept is not None and kept.revision_id != parent.revision_id:
            changes = _state_changes(parent, kept)
        if content is not None:
            changes["content"] = content
        merged = [h for h in head_ids if h != parent.revision_id]
        store.writes.write_head(parent)  # `revise` builds on the revision the head file names
        note = (f"resolved divergence: kept {kept.revision_id}" if kept is not None
                else "resolved divergence: merged by hand") + f" (heads {', '.join(head_ids)})"
        result = store.revise(page_id, changes=changes, merged_revision_ids=merged, note=note,
                              expected_revision_id=parent.revision_id)
        return {"page_id": page_id, "revision_id": result.revision_id, "status": "resolved",
                "parents": [parent.revision_id, *merged], "heads_before": head_ids}


def _state_changes(base: Revision, target: Revision) -> dict[str, Any]:
    """Changes that turn `base`'s state into exactly `target`'s."""
    old, new = base.state.to_dict(), target.state.to_dict()
    changes: dict[str, Any] = {}
    for key, value in new.items():
        if key in ("page_id", "owner_id") or old.get(key) == value:
            continue
        if key == "payload":
            changes["content"] = value["content"]
            changes["media_type"] = value["media_type"]
        elif key in ("record", "extensions", "facets"):
            changes[key] = {**{k: None for k in old.get(key, {})}, **value}
        else:
            changes[key] = value
    return changes


def merge_proposal(store: Store, page_id: str) -> str:
    """The text `pcp resolve --edit` opens: every head's body, clearly delimited."""
    heads = store.graph_heads(page_id)
    lines = [
        f"<!-- pcp resolve {page_id}: {len(heads)} heads. Edit this into the text to keep,",
        "     save and quit. Lines starting with '<!-- pcp' are removed; an empty file",
        "     cancels. Metadata comes from the newest head. -->",
        "",
    ]
    for number, head in enumerate(heads, 1):
        who = f"{head.created_by.actor_type}:{head.created_by.actor_id}"
        lines.append(f"<!-- pcp ===== head {number} of {len(heads)}: {head.revision_id} "
                     f"({head.created_at}, {who}, {head.state.lifecycle_status}) ===== -->")
        lines.append(head.state.content.rstrip("\n"))
        lines.append("")
    lines.append("<!-- pcp ===== end ===== -->")
    return "\n".join(lines) + "\n"


def strip_proposal(text: str) -> str:
    """What the person kept of a merge proposal (pcp's comment lines removed)."""
    kept: list[str] = []
    skipping = False
    for line in text.replace("\r\n", "\n").split("\n"):
        if skipping:
            skipping = "-->" not in line
            continue
        if line.startswith("<!-- pcp"):
            skipping = "-->" not in line
            continue
        kept.append(line)
    return "\n".join(kept).strip("\n") + "\n" if any(s.strip() for s in kept) else ""
