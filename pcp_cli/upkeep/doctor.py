"""`pcp doctor`: find what an interrupted writer, an editor or a merge left behind, and mend it.

Every check is read-only unless `fix` is set. Fixes only ever roll a page forward to what its
revisions already say; nothing a person wrote is thrown away (a head file that cannot be read
and holds no conflict markers is reported, never overwritten).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pcp_cli.errors import PcpError
from pcp_cli.model.filenames import shown
from pcp_cli.model.ids import is_safe_id
from pcp_cli.model.lifecycle import supersedes_now
from pcp_cli.store import lifecycle
from pcp_cli.store.atomic import is_temp_name, remove_file, writer_alive
from pcp_cli.store.files import odd_files
from pcp_cli.store.frontmatter import has_conflict_markers
from pcp_cli.store.layout import is_foreign_root
from pcp_cli.store.refresh import record_hand_edit
from pcp_cli.store.store import Store


@dataclass
class Finding:
    kind: str
    path: str
    message: str
    page_id: str | None = None
    fixed: bool = False
    fixable: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


KINDS = {
    "temp_file": "a temporary file left by an interrupted write",
    "unfinished_write": "a head file one revision behind its page's newest revision",
    "missing_revision": "a head file naming a revision whose file is missing (--fix records the "
    "head's text as a new revision: it may be the only copy of the newest text)",
    "missing_head_file": "a page with revisions but no head file",
    "hand_edit": "a head file edited by hand, not yet recorded as a revision",
    "new_file": "a Markdown file dropped under pages/, not yet adopted as a page",
    "conflict_markers": "a head file holding git conflict markers",
    "invalid_file": "a head file that cannot be read as a page",
    "oversized_frontmatter": "a head file whose frontmatter is over the 262,144-byte limit "
    "(--fix rewrites one exactly as earlier versions of pcp wrote it for a long conversation)",
    "emptied_head_file": "a page's head file emptied (--fix rewrites it from its revisions)",
    "diverged": "a page whose revision graph has more than one head",
    "broken_revision": "a revision file that cannot be read",
    "empty_revision_folder": "a revision folder with no revisions",
    "dangling_relation": "a relation naming a revision that does not exist",
    "unfinished_delete": "a page whose delete was interrupted part way",
    "symlink": "a symlink under pages/ (never followed: it may point outside the store)",
    "hard_link": "a file under pages/ with more than one hard link (never adopted or written "
    "through)",
    "not_text": "a file or folder under pages/ whose name is not valid UTF-8 (never adopted: "
    "rename it)",
    "invalid": "a file `pcp validate` rejects (fix it by hand)",
    "audit_log": "the MCP audit log's hash chain is broken: a record was removed or changed",
    "unfinished_supersede": "a keystone that supersedes another, without the supersession "
    "recorded (the old keystone's revision or the relation is missing)",
    "unfinished_collect": "a `pcp retention collect` was interrupted: --fix removes the rest of "
    "what its event lists (and nothing else)",
    "unfinished_ingest": "ingested events stored, but their conversation page was not written "
    "(an interrupted `pcp ingest` or session import)",
    "not_a_folder": "one of the store's folders (pages/, revisions/, relations/, events/), a "
    "namespace folder under pages/ or a page's revision folder replaced by a file: put it back "
    "from git or a backup (with pages/, revisions/, relations/ or events/ nothing else is "
    "checked until it is back)",
}


def check(store: Store, *, fix: bool = False) -> list[Finding]:
    """Everything `pcp validate` reports, plus what only doctor sees (and can repair)."""
    replaced = [Finding("not_a_folder", store.layout.rel(path),
                        "not a folder: move it aside and put the folder back (from git or a "
                        "backup)", fixable=False)
                for path in store.layout.not_folders()]
    if replaced:
        return replaced
    from pcp_cli.upkeep.damage import folder_damage

    findings: list[Finding] = []
    findings += _temp_files(store, fix)
    findings += _odd_files(store)
    store.catalog.refresh("verify")  # content hashes, not only sizes and mtimes
    damaged = folder_damage(store)  # after the refresh: it compares with the catalog
    blocked = {page_id for damage in damaged for page_id in damage.page_ids}
    findings += [Finding("not_a_folder", damage.path, damage.message,
                         damage.page_ids[0] if len(damage.page_ids) == 1 else None,
                         fixable=False) for damage in damaged]
    events = _stored_events(store)  # read once, for the three checks that look at events
    deletes = _unfinished_deletes(store, fix, events) + _unfinished_collects(store, fix, events)
    if fix and deletes:
        store.catalog.refresh("full")
    deleting = {f.page_id for f in deletes}
    later = _head_files(store, fix) + _revision_graphs(store, fix, blocked) + _relations(store)
    later += _unfinished_supersedes(store, fix) + _unfinished_ingests(store, fix, events)
    findings += deletes + [f for f in later if f.page_id not in deleting | blocked
                           or f.page_id is None]
    if fix:
        store.catalog.refresh("full")
    return findings + _validation(store, findings, events)


def _stored_events(store: Store) -> list[tuple[Path, Any]]:
    """Every event file (temporary files aside), in name order, with its parsed JSON, or the
    error that kept it from being read or parsed."""
    events = store.layout.events
    found: list[tuple[Path, Any]] = []
    for path in sorted(events.glob("*/*/*.json")) if events.exists() else []:
        if is_temp_name(path.name):
            continue
        try:
            found.append((path, json.loads(path.read_bytes())))
        except (ValueError, OSError) as exc:
            found.append((path, exc))
    return found


def _validation(store: Store, findings: list[Finding],
                events: list[tuple[Path, Any]]) -> list[Finding]:
    """The problems `pcp validate` reports that no finding above already covers: one set of
    checks, so doctor never calls a store clean that validate rejects."""
    from pcp_cli.upkeep.validate import validate_store

    covered = {f.path for f in findings}
    extra = []
    for problem in validate_store(store.root, events=events):
        if problem.path in covered or "temporary file" in problem.message:
            continue  # temp files: doctor's own scan, which knows a live writer's from a dead one
        message = f"line {problem.line}: {problem.message}" if problem.line else problem.message
        extra.append(Finding("invalid", problem.path, message, fixable=False))
    return extra


def _odd_files(store: Store) -> list[Finding]:
    """Symlinks and hard-linked files under pages/: never adopted, read or written through."""
    return [Finding(odd.kind, shown(store.layout.rel(odd.path)), odd.message, fixable=False)
            for odd in odd_files(store.layout.pages)]


def _temp_files(store: Store, fix: bool) -> list[Finding]:
    """Temporary files of interrupted writes anywhere in the store's own folders (pages,
    revisions, relations, events, leases, vaults, …), as `pcp validate` looks for them."""
    found = []
    root = store.root
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".pcp", ".git")
                       and (dirpath == str(root) or not is_foreign_root(Path(dirpath) / d))]
        for name in filenames:
            if is_temp_name(name) and not writer_alive(name):
                path = Path(dirpath) / name
                finding = Finding("temp_file", store.layout.rel(path), KINDS["temp_file"])
                if fix:
                    with store.locked():
                        remove_file(path)
                    finding.fixed = True
                found.append(finding)
    return found


def _unfinished_deletes(store: Store, fix: bool,
                        events: list[tuple[Path, Any]]) -> list[Finding]:
    """`page_deleted` events whose page still has some of the files the delete named."""
    found = []
    for path, event in events:
        try:
            data = event["data"] if event.get("kind") == "page_deleted" else None
        except (KeyError, TypeError, AttributeError):
            continue
        if not isinstance(data, dict):
            continue
        page_id, revision_ids = data.get("page_id"), data.get("revision_ids")
        relation_ids = data.get("relation_ids") or []
        if not (is_safe_id(page_id) and isinstance(revision_ids, list)
                and all(is_safe_id(r) for r in [*revision_ids, *relation_ids])):
            continue  # an event from before deletes named their files
        remaining = set(store.revision_ids(page_id))
        if remaining and not remaining <= set(revision_ids):
            continue  # a new page with the same id was written since
        left = (
            remaining
            or store.catalog.by_page_id(page_id)
            or store.layout.revision_dir(page_id).exists()
            or any(store.layout.relation_path(r).exists() for r in relation_ids)
        )
        if not left:
            continue
        finding = Finding("unfinished_delete", store.layout.rel(path),
                          f"the delete of {page_id} was interrupted; --fix finishes it", page_id)
        if fix:
            lifecycle.finish_delete(store, page_id, revision_ids, relation_ids)
            finding.fixed = True
        found.append(finding)
    return found


def _unfinished_collects(store: Store, fix: bool,
                         events: list[tuple[Path, Any]]) -> list[Finding]:
    """`retention_collected` events whose files are not all gone: a `pcp retention collect`
    cut short. --fix removes the rest of what the event lists, and nothing else."""
    from pcp_cli.store import retention

    found = []
    for path, data in retention.collected_events(store.root, events):
        if not retention.left_to_remove(store, data):
            continue
        finding = Finding("unfinished_collect", store.layout.rel(path),
                          KINDS["unfinished_collect"])
        if fix:
            retention.finish(store, data)
            finding.fixed = True
        found.append(finding)
    return found


def _unfinished_ingests(store: Store, fix: bool,
                        events: list[tuple[Path, Any]]) -> list[Finding]:
    """Ingested events that their page does not list: the events are stored before the page
    is written, so a kill in between leaves them unlisted. --fix rolls the page up again from
    the stored events, as sending them again would; a page not written at all is rolled up
    only when its events say its namespace (else the person re-sends them: the namespace the
    ingest was given is not recorded)."""
    from pcp_cli.model.ingest import EventInput
    from pcp_cli.model.page import Actor
    from pcp_cli.store.events import ingest, page_key
    from pcp_cli.store.store import page_id_for_key

    deleted: dict[str, str] = {}  # page id -> when it was last deleted
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}  # (source, page key) -> events
    for path, event in events:
        try:
            kind, data, source = event["kind"], event["data"], event.get("source")
        except (KeyError, TypeError, AttributeError):
            continue
        if not isinstance(data, dict):
            continue
        if kind == "page_deleted" and isinstance(data.get("page_id"), str):
            when = str(event.get("recorded_at", ""))
            deleted[data["page_id"]] = max(when, deleted.get(data["page_id"], ""))
            continue
        if not isinstance(source, str) or not isinstance(event.get("idempotency_key"), str):
            continue  # a store operation's record, not an ingested event
        cid = data.get("conversation_id")
        key = page_key(source, cid) if isinstance(cid, str) else \
            f"events:{source}:note:{event.get('event_id')}"
        groups.setdefault((source, key), []).append({**event, "_path": path})
    found = []
    for (source, key), members in sorted(groups.items()):
        page_id = page_id_for_key(key)
        since = deleted.get(page_id, "")
        members = [e for e in members if str(e.get("recorded_at", "")) > since]
        listed = _listed_events(store, page_id, key)
        missing = [e for e in members if e.get("event_id") not in listed]
        if not missing:
            continue
        head = store.current(page_id) if store.page_exists(page_id) else None
        namespace = head.state.namespace if head is not None else next(
            (e["data"]["namespace"] for e in missing
             if isinstance(e["data"].get("namespace"), str)), None)
        finding = Finding(
            "unfinished_ingest", store.layout.rel(missing[0]["_path"]),
            f"{len(missing)} event(s) of {source} stored but not on their page {page_id}"
            + ("" if namespace else "; send them again (`pcp ingest` or `pcp import` of the "
               "same file, with the same --namespace) to write the page"),
            page_id, fixable=namespace is not None)
        if fix and namespace is not None:
            actor = missing[0].get("actor") or {}
            inputs = [EventInput(type=e["kind"], data=e["data"],
                                 idempotency_key=e["idempotency_key"], key_given=True,
                                 content_hash=e.get("content_hash") or "",
                                 occurred_at=e.get("occurred_at"),
                                 source_ref=(e.get("source_refs") or [None])[0])
                      for e in missing]
            ingest(store, inputs, source=source,
                   actor=Actor(actor.get("actor_type", "system"),
                               actor.get("actor_id", "pcp-doctor")),
                   origin=head.state.origin if head is not None else "recorded",
                   namespace=namespace, strict=False,
                   note=f"rolled up by `pcp doctor --fix` from {len(missing)} stored event(s)")
            finding.fixed = True
        found.append(finding)
    return found


def _listed_events(store: Store, page_id: str, key: str) -> set[str]:
    """The event ids a page's roll-ups list (its source spans), in any of its revisions."""
    if not store.page_exists(page_id):
        return set()
    listed: set[str] = set()
    try:
        revisions = store.revisions(page_id)
    except PcpError:
        return set()
    for revision in revisions:
        spans = revision.state.facets.get("source_spans")
        for span in spans if isinstance(spans, list) else []:
            if isinstance(span, dict) and isinstance(span.get("event_id"), str):
                listed.add(span["event_id"])
    return listed


def _unfinished_supersedes(store: Store, fix: bool) -> list[Finding]:
    """Keystones naming the keystone they supersede, without the `supersedes` relation (written
    last by `keystone add --supersedes`)."""
    found = []
    linked = {(r.from_page_id, r.to_page_id) for r in store.relations()
              if r.relation_type == "supersedes"}
    # proposals supersede nothing until accepted
    for entry in store.catalog.entries(
            "type = 'keystone' AND problem IS NULL AND review_status = 'affirmed'"):
        old_id = entry.record.get("supersedes")
        if not (entry.page_id and is_safe_id(old_id) and store.page_exists(old_id)):
            continue
        if (entry.page_id, old_id) in linked:
            continue
        try:
            old = store.current(old_id)
        except PcpError:
            continue
        # unfinished: the old keystone is still active, or was superseded by this one but the
        # relation is missing (superseded by another, or archived: not this operation's to do)
        if old.state.lifecycle_status != "active" and \
                old.state.record.get("superseded_by") != entry.page_id:
            continue
        finding = Finding("unfinished_supersede", entry.path,
                          f"{entry.page_id} supersedes {old_id}, but that was not recorded "
                          "(an interrupted `keystone add --supersedes`)", entry.page_id)
        if fix:
            lifecycle.finish_supersede(store, entry.page_id, old_id)
            finding.fixed = True
        found.append(finding)
    return found + _unapplied_supersede_relations(store, fix)


def _unapplied_supersede_relations(store: Store, fix: bool) -> list[Finding]:
    """`supersedes` relations that should have superseded their target and did not (a relation
    file written by hand or brought by another copy of the store): what api.link does, done.
    Only while the target is still the revision the relation names: a target revised since
    (restored by hand, say) is the person's word and stands."""
    found = []
    for relation in store.relations():
        if relation.relation_type != "supersedes":
            continue
        try:
            new, old = store.current(relation.from_page_id), store.current(relation.to_page_id)
        except PcpError:
            continue
        if old.revision_id != relation.to_revision_id or old.state.lifecycle_status != "active" \
                or not supersedes_now(new, old):
            continue
        path = store.layout.rel(store.layout.relation_path(relation.relation_id))
        finding = Finding("unfinished_supersede", path,
                          f"{new.page_id} supersedes {old.page_id} ({relation.relation_id}), "
                          f"but {old.page_id} is still active", new.page_id)
        if fix:
            lifecycle.finish_supersede(store, new.page_id, old.page_id)
            finding.fixed = True
        found.append(finding)
    return found


def _head_files(store: Store, fix: bool) -> list[Finding]:
    found = []
    for entry in store.catalog.entries():
        if entry.problem is None and not entry.edited:
            continue
        path = store.root / entry.path
        if entry.problem and entry.problem.startswith("new file"):
            kind = "new_file"
        elif entry.problem and entry.problem.endswith(" is empty") and entry.page_id:
            kind = "emptied_head_file"
        elif entry.problem and "frontmatter is over the" in entry.problem and entry.page_id:
            found.append(_oversized(store, entry.path, entry.page_id, fix))
            continue
        elif entry.problem:
            try:
                conflicted = has_conflict_markers(path.read_text("utf-8", errors="replace"))
            except OSError:
                conflicted = False
            kind = "conflict_markers" if conflicted else "invalid_file"
        else:
            kind = "hand_edit"
        finding = Finding(kind, entry.path, entry.problem or KINDS[kind], entry.page_id,
                          fixable=kind != "invalid_file")
        if fix and finding.fixable:
            finding.fixed = _fix_head(store, kind, entry.path, entry.page_id)
            if not finding.fixed and entry.path in store.problems:
                finding.message = store.problems[entry.path]
                finding.fixable = False
        found.append(finding)
    return found


def _fix_head(store: Store, kind: str, rel: str, page_id: str | None) -> bool:
    with store.locked():
        if kind in ("new_file", "hand_edit"):
            record_hand_edit(store, rel)
            return rel not in store.problems
        if kind in ("conflict_markers", "emptied_head_file") and page_id and \
                store.page_exists(page_id):
            heads = store.graph_heads(page_id)
            store.writes.write_head(heads[-1], old_path=store.root / rel)
            return True
    return False


def _revision_graphs(store: Store, fix: bool, blocked: set[str]) -> list[Finding]:
    """`blocked`: pages behind a replaced folder (reported as not_a_folder), left alone."""
    found = []
    folder = store.layout.revisions
    names = sorted(os.listdir(folder)) if folder.exists() else []
    for page_id in names:
        page_dir = folder / page_id
        if page_id in blocked or not page_dir.is_dir():
            continue
        rel_dir = store.layout.rel(page_dir)
        if not store.revision_ids(page_id):
            finding = Finding("empty_revision_folder", rel_dir, KINDS["empty_revision_folder"],
                              page_id)
            if fix:
                with store.locked():
                    if not any(page_dir.iterdir()):
                        page_dir.rmdir()
                        finding.fixed = True
            found.append(finding)
            continue
        try:
            revisions = store.revisions(page_id)
        except PcpError as exc:
            found.append(Finding("broken_revision", rel_dir, exc.message, page_id,
                                 fixable=False))
            continue
        heads = store.graph_heads(page_id, revisions)
        if len(heads) > 1:
            found.append(Finding(
                "diverged", rel_dir,
                f"{len(heads)} heads: {', '.join(h.revision_id for h in heads)} "
                f"(run `pcp resolve {page_id}`)", page_id, fixable=False))
        entries = store.catalog.by_page_id(page_id)
        if not entries:
            finding = Finding("missing_head_file", rel_dir, KINDS["missing_head_file"], page_id)
            if fix:
                finding.fixed = _roll_forward(store, page_id)
            found.append(finding)
            continue
        entry = entries[0]
        head_ids = {h.revision_id for h in heads}
        if entry.problem is None and not entry.edited and entry.revision_id and \
                entry.revision_id not in store.revision_ids(page_id):
            found.append(_missing_revision(store, entry.path, page_id, entry.revision_id,
                                           heads[-1].revision_id, fix))
            continue
        if entry.problem is None and not entry.edited and entry.revision_id not in head_ids \
                and len(heads) == 1:
            finding = Finding("unfinished_write", entry.path,
                              f"names {entry.revision_id}, newest is {heads[0].revision_id}",
                              page_id)
            if fix:
                finding.fixed = _roll_forward(store, page_id)
            found.append(finding)
    return found


def _oversized(store: Store, rel: str, page_id: str, fix: bool) -> Finding:
    """A head file whose frontmatter is over the limit. Earlier versions of pcp wrote every
    event of a conversation into it (facets.source_spans); such a file, exactly as pcp rendered
    it for a revision, is rewritten without them (they stay in the revision). Anything else is
    a hand edit, left for the person."""
    import re

    from pcp_cli.store.headfile import render_head

    path = store.root / rel
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return Finding("oversized_frontmatter", rel, f"cannot read: {exc.strerror}", page_id,
                       fixable=False)
    named = re.search(rb"^revision_id: (\S+)$", raw[:4096], re.MULTILINE)
    revision = None
    if named and named.group(1).decode("ascii", "replace") in store.revision_ids(page_id):
        revision = store.load_revision(page_id, named.group(1).decode("ascii"))
    pristine = revision is not None and render_head(revision, spans=True).encode("utf-8") == raw
    limit = "frontmatter over the 262,144-byte limit"
    message = (f"{limit}, as earlier versions of pcp wrote a long conversation's head file; "
               "--fix rewrites it without the per-event source_spans (the revision keeps them)"
               if pristine else
               f"{limit} and not as pcp wrote it: shorten it by hand (or move it aside and run "
               "`pcp doctor --fix` to rewrite it from its revisions)")
    finding = Finding("oversized_frontmatter", rel, message, page_id, fixable=pristine)
    if fix and pristine:
        with store.locked():
            heads = store.graph_heads(page_id)
            store.writes.write_head(heads[-1], old_path=path)
        finding.fixed = True
    return finding


def _missing_revision(store: Store, rel: str, page_id: str, named: str, newest: str,
                      fix: bool) -> Finding:
    """A head file naming a revision whose file is gone. pcp writes the revision before the
    head, so this is damage, not an interrupted write, and the head may hold the only copy of
    the page's newest text: --fix records that text as a new revision after the newest one
    left (never rolls the head back over it)."""
    finding = Finding(
        "missing_revision", rel,
        f"names {named}, whose revision file is missing (newest left is {newest}); --fix "
        "records the head file's text as a new revision, so nothing is lost", page_id)
    if fix:
        with store.locked():
            note = f"recovered by `pcp doctor --fix` from {rel}: it named {named}, lost"
            edit = record_hand_edit(store, rel, note=note)
            finding.fixed = rel not in store.problems
            if edit is not None:
                finding.message += f" (recorded as {edit.revision_id})"
    return finding


def _roll_forward(store: Store, page_id: str) -> bool:
    """Write a page's head file from its one graph head, read again under the lock: a writer
    may have moved the page on since the check looked, and an older head must not win."""
    with store.locked():
        heads = store.graph_heads(page_id)
        if not heads:
            return False
        entries = store.catalog.by_page_id(page_id)
        if not (entries and entries[0].revision_id == heads[-1].revision_id):
            store.writes.write_head(heads[-1])
    return True


def _relations(store: Store) -> list[Finding]:
    found = []
    for relation in store.relations():
        for page_id, revision_id in ((relation.from_page_id, relation.from_revision_id),
                                     (relation.to_page_id, relation.to_revision_id)):
            if not store.layout.revision_path(page_id, revision_id).exists():
                found.append(Finding(
                    "dangling_relation", store.layout.rel(store.layout.relation_path(
                        relation.relation_id)),
                    f"names {page_id}/{revision_id}, which does not exist", page_id,
                    fixable=False))
                break
    for rel, message in sorted(store.problems.items()):
        if rel.startswith("relations/"):
            found.append(Finding("broken_revision", rel, message, fixable=False))
    return found
