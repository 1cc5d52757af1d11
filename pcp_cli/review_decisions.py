"""Undo for real: the decisions taken on proposals, and taking one back.

A decision (accepting or rejecting a proposal, `profile_ops.accept_proposal` and
`reject_proposal`) is a revision of the proposal's page; so is taking it back. Withdrawing a
decision writes a new revision whose state is the proposal as it waited (its wording, category,
sensitivity, record, `review_status: proposed`): the history keeps both, and the proposal is in
the queue again, to be accepted or rejected anew. An accepted keystone that superseded another
gives that one back its place (a new revision of it, active again); the `supersedes` relation
file stays, as history, and no longer takes effect (`model.lifecycle.supersedes_now` wants an
affirmed source).

What a decision is, is read from the pages themselves (`record.affirmed_at` /
`record.rejected_at`, which only the review writes), so every device sees the same list.
"""

from __future__ import annotations

import re
from typing import Any

from pcp_cli.errors import PcpError, UsageError
from pcp_cli.model.page import Actor, Revision
from pcp_cli.store.store import Store, WriteResult

REVIEWABLE_TYPES = ("keystone", "profile", "timeline_event")
# Record keys a decision adds (cleared when it is withdrawn).
DECISION_KEYS = ("affirmed_by", "affirmed_at", "last_confirmed_at", "rejected_by", "rejected_at",
                 "rejection_reason", "superseded_by")


def _decision(record: dict[str, Any], review_status: str) -> tuple[str, str, str] | None:
    """(decision, when, by) of a page the review decided, or None."""
    if review_status == "affirmed" and isinstance(record.get("affirmed_at"), str):
        return "accepted", record["affirmed_at"], str(record.get("affirmed_by") or "")
    if review_status == "rejected" and isinstance(record.get("rejected_at"), str):
        return "rejected", record["rejected_at"], str(record.get("rejected_by") or "")
    return None


def review_decisions(store: Store, *, limit: int | None = 20) -> list[dict[str, Any]]:
    """The decisions taken on proposals, newest first: `{page_id, decision (accepted |
    rejected), decided_at, decided_by, kind, category, title, lifecycle_status}`. Read from the
    catalog (no page file is opened)."""
    found = []
    for entry in store.entries(types=REVIEWABLE_TYPES, review=("affirmed", "rejected"),
                               statuses=("active", "superseded", "archived")):
        if not entry.page_id:
            continue
        record = entry.record or {}
        decided = _decision(record, entry.review_status)
        if decided is None:
            continue
        found.append({"page_id": entry.page_id, "decision": decided[0], "decided_at": decided[1],
                      "decided_by": decided[2], "kind": entry.type,
                      "category": record.get("category", "other"), "title": entry.title,
                      "lifecycle_status": entry.lifecycle_status})
    found.sort(key=lambda d: (d["decided_at"], d["page_id"]), reverse=True)
    return found if limit is None else found[:limit]


def _proposed_revision(store: Store, page_id: str) -> Revision | None:
    """The newest revision of the page that was still waiting for review."""
    for revision in reversed(store.revisions(page_id)):
        if revision.state.review_status == "proposed":
            return revision
    return None


def withdraw_decision(store: Store, page_id: str, *, actor: Actor | None = None
                      ) -> dict[str, Any]:
    """Take back the decision on `page_id`: an accepted proposal is withdrawn from the read
    surface, a rejected one reconsidered; either way it waits in the review queue again.
    `{page_id, revision_id, withdrawn (accepted | rejected), restored: [page ids given back
    their place]}`."""
    actor = actor or store.user
    with store.locked():
        head = store.current(page_id)
        state = head.state
        if state.type not in REVIEWABLE_TYPES:
            raise UsageError(f"{page_id} is a {state.type}, not a proposal",
                             hint="`pcp review undo` takes back the last decision")
        if state.review_status == "proposed":
            raise UsageError(f"{state.type} {page_id} awaits review: there is no decision to "
                             "take back", hint=f"`pcp review accept {page_id}` or "
                             f"`pcp review reject {page_id}`")
        decided = _decision(state.record, state.review_status)
        proposal = _proposed_revision(store, page_id)
        if decided is None or proposal is None:
            raise UsageError(f"{state.type} {page_id} was never a proposal, so there is no "
                             "review decision to take back",
                             hint=f"`pcp archive {page_id}` takes it off the read surface")
        if state.type == "profile" or state.record.get("superseded_by") == "profile":
            raise UsageError(f"profile proposal {page_id} was accepted into your profile; its "
                             "fields are your profile's now",
                             hint="change them with `pcp profile set FIELD VALUE`")
        if state.lifecycle_status != "active":
            by = state.record.get("superseded_by")
            raise UsageError(f"{state.type} {page_id} is {state.lifecycle_status}"
                             + (f" by {by}" if by else "") + "; only a current decision can "
                             "be taken back", hint=f"take back {by}'s first" if by else None)
        old = proposal.state
        record = {key: None for key in state.record if key not in old.record}
        record.update(old.record)
        changes: dict[str, Any] = {
            "content": old.content, "title": old.title, "review_status": "proposed",
            "epistemic_status": old.epistemic_status,
            "instruction_policy": old.instruction_policy, "integrity": old.integrity,
            "sensitivity": old.sensitivity, "record": record,
        }
        note = (f"{decided[0]} on {decided[1][:10]}, taken back by {actor.actor_id}: "
                "waiting for review again")
        result = store.revise(page_id, changes=changes, expected_revision_id=head.revision_id,
                              actor=actor, note=note)
        restored = []
        if decided[0] == "accepted":
            restored = _give_back(store, page_id, result, actor)
    return {"page_id": page_id, "revision_id": result.revision_id, "withdrawn": decided[0],
            "restored": restored}


def _give_back(store: Store, page_id: str, result: WriteResult, actor: Actor) -> list[str]:
    """The keystones the accepted proposal superseded, active again."""
    restored = []
    for relation in store.relations(page_id):
        if relation.relation_type != "supersedes" or relation.from_page_id != page_id \
                or not store.page_exists(relation.to_page_id):
            continue
        old = store.current(relation.to_page_id)
        if old.state.lifecycle_status == "superseded" and \
                old.state.record.get("superseded_by") == page_id:
            store.revise(old.page_id, changes={"lifecycle_status": "active",
                                               "record": {"superseded_by": None}},
                         expected_revision_id=old.revision_id, actor=actor,
                         note=f"{page_id} withdrawn: current again",
                         input_revision_ids=(result.revision_id,))
            restored.append(old.page_id)
    return restored


def undo_decision(store: Store, *, actor: Actor | None = None) -> dict[str, Any]:
    """Take back the newest decision (`pcp review undo`)."""
    latest = review_decisions(store, limit=1)
    if not latest:
        raise UsageError("no review decision to take back",
                         hint="`pcp review` lists what awaits review")
    return withdraw_decision(store, latest[0]["page_id"], actor=actor)


def queue_groups(items: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The review queue as the person sees it (`pcp review`, the console): grouped by
    category (a timeline event's as `timeline: CATEGORY`), groups in name order, oldest first
    within one. The position in this order is a proposal's number in the queue (`#3`)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        label = item["category"] if item.get("kind") != "timeline_event" \
            else f"timeline: {item['category']}"
        groups.setdefault(str(label), []).append(item)
    return [(label, groups[label]) for label in sorted(groups)]


# A transcript's turn heading (`### User · 2024-05-01 10:02`, as the importers write them).
TURN = re.compile(r"^### (User|Assistant|System|Note|Tool)\b(?: · ([^\n]*))?[ \t]*$", re.M)


def evidence_sources(store: Store, items: list[dict[str, Any]]) -> None:
    """Name where each proposal's evidence comes from, as a person knows it: every span in
    `source_spans` gets `title` (its page's) and `date` (its turn's day in a transcript, else
    the page's observed day); a page no longer in the store gets neither."""
    pages: dict[tuple[str, str], tuple[str, str, str] | None] = {}
    for item in items:
        for span in item.get("source_spans") or []:
            key = (str(span.get("page_id") or ""), str(span.get("revision_id") or ""))
            if key not in pages:
                try:
                    revision = store.get(key[0], key[1] or None)
                    pages[key] = (revision.state.title or key[0], revision.state.content,
                                  (revision.observed_at or revision.created_at or "")[:10])
                except PcpError:  # deleted since, or a revision not on this device
                    pages[key] = None
            found = pages[key]
            if found is None:
                continue
            title, body, day = found
            start = span.get("start")
            turn = None
            if isinstance(start, int):
                turn = next((m for m in reversed(list(TURN.finditer(body, 0, start)))), None)
            span["title"] = title
            span["date"] = (turn.group(2) or "")[:10] if turn and turn.group(2) else day
