"""A model's change to the person's own material: proposed, never made (issue #31).

An MCP client with a write grant may write, revise, link and tombstone pages. On its own pages
that is writing; on the person's material (what they stated, approved, recorded or imported,
or a proposal they accepted) a relation that would supersede it, a tombstone, or a revision of
its text would retire what the person affirmed, with nobody asked. Such a call makes a
*change proposal* instead: a `note` page awaiting review (`review_status: proposed`,
`record.proposed_change`), served nowhere (no search, read, walk, timeline, stats or
micro_prompt shows a proposal), listed by `pcp review` beside the proposed keystones. Accepting
it makes the change, as the person; rejecting it keeps it, rejected, and changes nothing.

`record.proposed_change`: `{action: supersede | tombstone | revise, page_id, revision_id (the
revision the model saw), title, from_page_id (supersede), relation_type, reason (tombstone),
content and new_title (revise), proposed_by}`.

It writes through the Store and `store/lifecycle.py`, like `api/proposals.py`.
"""

from __future__ import annotations

from typing import Any

from pcp_cli.errors import RevisionConflict, UsageError
from pcp_cli.model.lifecycle import supersedes_now
from pcp_cli.model.page import Actor, PageState, Revision, now_iso, title_from
from pcp_cli.store import lifecycle
from pcp_cli.store.store import Store, WriteResult

CHANGE_KEY = "proposed_change"
ACTIONS = ("supersede", "tombstone", "revise")
# Relations whose effect retires their target (model/lifecycle.py): only `supersedes` today.
RETIRING_RELATIONS = ("supersedes",)
# Material a model wrote or inferred, and nobody affirmed, is not the person's.
MODEL_ORIGINS = ("generated", "inferred")
_RANK = {"low": 0, "medium": 1, "high": 2}


def persons_material(state: PageState) -> bool:
    """Whether the person stands behind this page: they stated, approved, recorded or
    imported it, or accepted it (a proposal they affirmed keeps `origin: inferred`)."""
    return state.origin not in MODEL_ORIGINS or bool(state.record.get("affirmed_by"))


def persons_page(store: Store, page_id: str) -> bool:
    """Whether the person stands behind `page_id` (`persons_material` of its current state):
    a model's change that would retire it is proposed, not made."""
    return persons_material(store.current(page_id).state)


def is_change(revision: Revision) -> bool:
    return revision.state.type == "note" and isinstance(
        revision.state.record.get(CHANGE_KEY), dict)


def _more_sensitive(*states: PageState) -> str:
    """The highest sensitivity of `states` (unclassified counts as high: it might be)."""
    levels = [s.sensitivity if s.sensitivity in _RANK else "high" for s in states]
    return max(levels, key=_RANK.__getitem__)


def _describe(change: dict[str, Any]) -> str:
    what = f"{change['page_id']} ({change['title']!r})"
    if change["action"] == "supersede":
        return (f"Retire {what}: superseded by {change['from_page_id']} "
                f"({change['from_title']!r}).")
    if change["action"] == "tombstone":
        return f"Tombstone {what}" + (f": {change['reason']}" if change.get("reason") else ".")
    body = change.get("content")
    return (f"Revise {what}" + (f", new title {change['new_title']!r}" if change.get(
        "new_title") else "") + (f", new text:\n\n{body}" if body else "."))


def propose_change(store: Store, action: str, page_id: str, *, actor: Actor,
                   from_page_id: str | None = None, relation_type: str | None = None,
                   reason: str | None = None, content: str | None = None,
                   title: str | None = None,
                   expected_revision_id: str | None = None) -> WriteResult:
    """The change proposal for `action` on `page_id`, as `actor` asked it."""
    if action not in ACTIONS:
        raise UsageError(f"unknown change {action!r}")
    with store.locked():
        target = store.current(page_id)
        if expected_revision_id is not None and expected_revision_id != target.revision_id:
            raise RevisionConflict(
                f"page {page_id} is at revision {target.revision_id}, not "
                f"{expected_revision_id}", expected=expected_revision_id,
                current=target.revision_id,
                hint=f"read {page_id} again (pcp_read_pages) and revise revision "
                f"{target.revision_id}")
        states = [target.state]
        change: dict[str, Any] = {
            "action": action, "page_id": page_id, "revision_id": target.revision_id,
            "title": target.state.title, "proposed_by": actor.to_dict()}
        if action == "supersede":
            source = store.current(str(from_page_id))
            states.append(source.state)
            change.update(from_page_id=source.page_id, from_revision_id=source.revision_id,
                          from_title=source.state.title,
                          relation_type=relation_type or "supersedes")
        elif action == "tombstone":
            change["reason"] = reason
        else:
            change.update(content=content, new_title=title)
        description = _describe(change)
        state = store.new_state(
            description, type="note", title=title_from(description),
            namespace=target.state.namespace, origin="generated", review_status="proposed",
            epistemic_status="asserted", instruction_policy="data_only",
            sensitivity=_more_sensitive(*states), record={CHANGE_KEY: change})
        return store.write_page(
            state, actor=actor,
            source_note=f"{action} of {page_id} proposed by {actor.actor_type} "
            f"{actor.actor_id}; waits for the person's review",
            input_revision_ids=tuple(sorted({target.revision_id, *(
                [change["from_revision_id"]] if action == "supersede" else [])})))


def review_item(revision: Revision) -> dict[str, Any]:
    """The fields `pcp review` shows of a change proposal (beside `api/review.review_item`)."""
    change = revision.state.record[CHANGE_KEY]
    return {"kind": "change", "category": "change", "change": dict(change),
            "content": _describe(change)}


def accept(store: Store, proposal: Revision, actor: Actor) -> WriteResult:
    """Make the proposed change, as `actor` (the person); then the proposal is affirmed and
    archived (a record of what was decided, served as nothing)."""
    change = proposal.state.record[CHANGE_KEY]
    by = change.get("proposed_by") or {}
    note = (f"{change['action']} proposed by {by.get('actor_type', 'model')} "
            f"{by.get('actor_id', '?')} ({proposal.page_id}), accepted by {actor.actor_id}")
    with store.locked():
        target = change["page_id"]
        if change["action"] == "supersede":
            source, old = store.current(change["from_page_id"]), store.current(target)
            if supersedes_now(source, old):
                lifecycle.finish_supersede(store, source.page_id, old.page_id, actor=actor,
                                           note=note)
            else:  # the source is not (or no longer) an affirmed, active page: the edge only
                lifecycle.link(store, source.page_id, change["relation_type"], old.page_id,
                               actor=actor, note=note)
        elif change["action"] == "tombstone":
            lifecycle.set_lifecycle(store, target, "tombstoned", actor=actor, note=note)
        else:
            changes: dict[str, Any] = {"origin": "approved"}  # the model's words, approved
            if change.get("content"):
                changes["content"] = change["content"]
            if change.get("new_title"):
                changes["title"] = change["new_title"]
            elif change.get("content"):
                head = store.current(target)
                if head.state.title == title_from(head.state.content):
                    changes["title"] = title_from(change["content"])
            store.revise(target, changes=changes, expected_revision_id=change["revision_id"],
                         actor=actor, note=note)
        when = now_iso()
        return store.revise(
            proposal.page_id, changes={
                "review_status": "affirmed", "lifecycle_status": "archived",
                "record": {"affirmed_by": actor.actor_id, "affirmed_at": when}},
            expected_revision_id=proposal.revision_id, actor=actor,
            note=f"accepted by {actor.actor_id}")

