"""The review queue: what waits for the person's word (proposed keystones, profile fields and
timeline events, from an import, `pcp propose` or an AI client), and how a proposal is accepted
(it joins the read surface; an accepted keystone supersedes the one it names) or rejected (kept
for audit, never served), and how a decision is taken back (`pcp review undo`, `withdraw`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pcp_cli.api import changes as model_changes
from pcp_cli.api.profile import entries_in_scope, head_of_entry
from pcp_cli.errors import PcpError, UsageError
from pcp_cli.model import vocab
from pcp_cli.model.page import PROFILE_PAGE_ID, Actor, Revision, now_iso
from pcp_cli.store import lifecycle
from pcp_cli.store.store import Store, WriteResult


# -- the review queue -------------------------------------------------------------------------
def review_item(revision: Revision) -> dict[str, Any]:
    """The JSON shape of one proposal in `pcp review --json` (internal: not a v1 object)."""
    state = revision.state
    record = state.record
    return {
        "page_id": state.page_id,
        "revision_id": revision.revision_id,
        "content": state.content.rstrip("\n"),
        "category": record.get("category", "other"),
        "confidence": record.get("confidence"),
        "importance": record.get("importance"),
        "source": record.get("source"),
        "origin": state.origin,
        "sensitivity": state.sensitivity,
        "namespace": state.namespace,
        "supersedes": record.get("supersedes"),
        # v1.2: who wrote the claim, and the day it would go stale once accepted
        "generated_by": record.get("generated_by"),
        "stale_after": record.get("stale_after"),
        "proposed_at": revision.created_at,
        "proposed_by": revision.created_by.to_dict(),
        "review_status": state.review_status,
        "extensions": dict(state.extensions),
        # The sentences a proposal came from (pcp propose): page, revision, span and text.
        "source_spans": list(state.facets.get("source_spans") or []),
    }


# Page types an importer, `pcp propose` or an AI client may propose; every one is reviewable
# in `pcp review`.
REVIEWABLE_TYPES = ("keystone", "profile", "timeline_event")


def profile_review_item(revision: Revision) -> dict[str, Any]:
    """The review shape of a profile proposal: the fields it would set on your profile."""
    item = review_item(revision)
    record = revision.state.record
    fields = {k: record[k] for k in vocab.PROFILE_FIELDS if k != "summary" and record.get(k)}
    item.update(kind="profile", category="profile", fields=fields,
                content="; ".join(f"{k}: {v}" for k, v in fields.items())
                or item["content"])
    return item


def review_queue(store: Store, *, scopes: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Everything proposed and awaiting review (keystones and profile proposals), oldest
    first: exactly what an import counts as `proposals`."""
    items = []
    for page_type in REVIEWABLE_TYPES:
        entries = entries_in_scope(store, page_type, scopes=scopes, include_sensitive=True,
                           review=("proposed",))
        for entry in entries:
            revision = head_of_entry(store, entry)
            if page_type == "profile":
                items.append(profile_review_item(revision))
            elif page_type == "timeline_event":
                items.append({**review_item(revision), "kind": "timeline_event",
                              "date": revision.state.record.get("date")})
            else:
                items.append({**review_item(revision), "kind": "keystone"})
    items += _change_items(store, scopes)
    return sorted(items, key=lambda i: (i["proposed_at"], i["page_id"]))


def rejected_proposals(store: Store, *, scopes: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The proposals the person rejected, oldest first (`pcp review --all`): kept for audit,
    never served, never proposed again. Each is the queue's shape, with its `review_status`,
    when it was proposed and rejected, and the reason given (`rejection_reason`, or null)."""
    items = []
    for page_type in REVIEWABLE_TYPES:
        for entry in entries_in_scope(store, page_type, scopes=scopes, include_sensitive=True,
                              review=("rejected",)):
            revision = head_of_entry(store, entry)
            item = profile_review_item(revision) if page_type == "profile" else {
                **review_item(revision), "kind": page_type}
            item.update(proposed_at=revision.page_created_at, rejected_at=revision.created_at,
                        rejection_reason=revision.state.record.get("rejection_reason"))
            items.append(item)
    return sorted(items, key=lambda i: (i["proposed_at"], i["page_id"]))


def _change_items(store: Store, scopes: Sequence[str]) -> list[dict[str, Any]]:
    """The changes models proposed to the person's material (api/changes.py)."""
    items = []
    for entry in entries_in_scope(store, "note", scopes=scopes, include_sensitive=True,
                          review=("proposed",), include_unclassified=True):
        revision = head_of_entry(store, entry)
        if model_changes.is_change(revision):
            items.append({**review_item(revision), **model_changes.review_item(revision)})
    return items


def _proposal(store: Store, page_id: str) -> Revision:
    revision = store.current(page_id)
    state = revision.state
    if state.type not in REVIEWABLE_TYPES and not model_changes.is_change(revision):
        raise UsageError(f"{page_id} is a {state.type}, not a proposal",
                         hint="`pcp review` lists the proposals")
    if state.review_status != "proposed":
        raise UsageError(f"{state.type} {page_id} is not awaiting review (it is "
                         f"{state.review_status})",
                         hint=f"`pcp review withdraw {page_id}` takes the decision back"
                         if state.review_status in ("affirmed", "rejected")
                         else "`pcp review` lists the proposals")
    if state.lifecycle_status != "active":
        raise UsageError(f"{state.type} {page_id} is {state.lifecycle_status}")
    return revision


def _authority_rank(origin: str) -> int:
    order = vocab.ORIGIN_AUTHORITY
    return order.index(origin) if origin in order else order.index("generated")


def _accept_profile(store: Store, proposal: Revision, actor: Actor) -> WriteResult:
    """A profile proposal accepted: its fields go onto your profile page (`profile`), approved
    by you and pinned so distillation never overwrites them; the proposal itself is kept,
    affirmed and superseded by the profile, linked to it."""
    record = proposal.state.record
    fields = {k: record[k] for k in vocab.PROFILE_FIELDS if k != "summary" and record.get(k)}
    if not fields:
        raise UsageError(f"profile proposal {proposal.page_id} sets no profile field",
                         hint=f"reject it: `pcp review reject {proposal.page_id}`")
    when = now_iso()
    note = f"accepted profile proposal {proposal.page_id} ({', '.join(fields)})"
    if store.page_exists(PROFILE_PAGE_ID):
        current = store.current(PROFILE_PAGE_ID)
        pinned = sorted(set(current.state.record.get("pinned") or []) | set(fields))
        # The page holds one origin: the weaker of what it was and `approved` (under-claim:
        # fields a distillation generated do not become approved by accepting a name).
        origin = max(current.state.origin, "approved", key=_authority_rank)
        profile = store.revise(PROFILE_PAGE_ID, changes={
            "record": {**fields, "pinned": pinned}, "origin": origin,
            "lifecycle_status": "active", "review_status": "affirmed"},
            actor=actor, note=note, input_revision_ids=(proposal.revision_id,))
    else:
        state = store.new_state("", page_id=PROFILE_PAGE_ID, type="profile", title="Profile",
                                origin="approved", epistemic_status="affirmed",
                                sensitivity=proposal.state.sensitivity or "medium",
                                record={**fields, "pinned": sorted(fields)})
        profile = store.write_page(state, actor=actor, source_note=note,
                                   input_revision_ids=(proposal.revision_id,))
    store.revise(proposal.page_id, changes={
        "review_status": "affirmed", "lifecycle_status": "superseded",
        "record": {"affirmed_by": actor.actor_id, "affirmed_at": when,
                   "superseded_by": PROFILE_PAGE_ID}},
        expected_revision_id=proposal.revision_id, actor=actor,
        note=f"accepted into {PROFILE_PAGE_ID} by {actor.actor_id}")
    lifecycle.link(store, PROFILE_PAGE_ID, "derived_from", proposal.page_id, actor=actor,
               to_revision_id=proposal.revision_id)
    return profile


def accept_proposal(store: Store, page_id: str, *, actor: Actor | None = None,
                    content: str | None = None, category: str | None = None,
                    sensitivity: str | None = None, date: str | None = None,
                    stale_after: str | None = None) -> WriteResult:
    """Affirm a proposed keystone or timeline event: it joins the read surface, with who
    accepted it and when; with `content`, the person's edited wording of it, and with
    `category`, `sensitivity` or (a timeline event's) `date`, those edited too; with
    `stale_after`, the day the keystone goes stale ("never": none, whatever was proposed).
    Only the person accepts (v1.2 §3.2.1: publication needs human affirmation); the keystone
    records them as `last_confirmed_by`.

    If the proposal supersedes an affirmed keystone, that one becomes superseded now. A
    proposal is `data_only` while it waits; an accepted rule or preference becomes `advisory`,
    as one the person adds by hand.
    """
    from pcp_cli.model import actors, staleness

    actor = actor or store.user
    if actor.actor_type != "user":
        raise UsageError(f"a {actor.actor_type} cannot accept a proposal",
                         hint="the person accepts proposals in `pcp review`")
    dated: dict[str, Any] = {}
    if stale_after is not None:
        dated["stale_after"] = staleness.setting(stale_after)
    with store.locked():
        proposal = _proposal(store, page_id)
        if dated and proposal.state.type != "keystone":
            raise UsageError(f"{page_id} is a {proposal.state.type} proposal: only a keystone "
                             "has a stale_after date", hint="accept it without --stale-after")
        if proposal.state.type == "profile":
            return _accept_profile(store, proposal, actor)
        if model_changes.is_change(proposal):
            if content is not None:
                raise UsageError("a proposed change is accepted as it is",
                                 hint=f"reject it: `pcp review reject {page_id}`")
            return model_changes.accept(store, proposal, actor)
        edited: dict[str, Any] = {}
        if content is not None:
            from pcp_cli.model.page import title_from

            if not content.strip():
                raise UsageError("the edited claim is empty", hint="nothing was accepted")
            edited = {"content": content.strip() + "\n", "title": title_from(content),
                      "integrity": "edited"}
        edited.update(_edited_fields(proposal, category, sensitivity, date))
        fields = edited.pop("record", {})
        if proposal.state.type == "timeline_event":
            when = now_iso()
            return store.revise(
                page_id, changes={**edited, "review_status": "affirmed",
                                  "epistemic_status": "affirmed",
                                  "record": {**fields, "affirmed_by": actor.actor_id,
                                             "affirmed_at": when}},
                expected_revision_id=proposal.revision_id, actor=actor,
                note=f"accepted by {actor.actor_id}" + (" (edited)" if edited else ""))
        old: list[Revision] = []
        target = proposal.state.record.get("supersedes")
        if isinstance(target, str) and target and store.page_exists(target):
            candidate = store.current(target)
            if candidate.state.type == "keystone" and candidate.state.lifecycle_status == "active":
                old.append(candidate)
        # `pcp link PROPOSAL supersedes X` waited for this acceptance too (api.link)
        for relation in store.relations(page_id):
            if relation.relation_type == "supersedes" and relation.from_page_id == page_id \
                    and store.page_exists(relation.to_page_id) \
                    and all(o.page_id != relation.to_page_id for o in old):
                candidate = store.current(relation.to_page_id)
                if candidate.state.lifecycle_status == "active":
                    old.append(candidate)
        when = now_iso()
        category = fields.get("category", proposal.state.record.get("category"))
        result = store.revise(
            page_id,
            changes={
                **edited,
                "review_status": "affirmed",
                "epistemic_status": "affirmed",
                "instruction_policy": "advisory" if category in vocab.ADVISORY_CATEGORIES
                else "data_only",
                "record": {**fields, "last_confirmed_at": when,
                           "affirmed_by": actor.actor_id, "affirmed_at": when,
                           "last_confirmed_by": actors.actor_string(actor), **dated},
            },
            expected_revision_id=proposal.revision_id,
            actor=actor,
            note=f"accepted by {actor.actor_id}" + (" (edited)" if edited else ""),
        )
        for superseded in old:
            lifecycle.supersede(store, page_id, superseded.page_id, actor=actor)
        return result


def _edited_fields(proposal: Revision, category: str | None, sensitivity: str | None,
                   date: str | None) -> dict[str, Any]:
    """The changes of an accept that edits the category, sensitivity or date (checked)."""
    import re

    kind = proposal.state.type
    changes: dict[str, Any] = {}
    record: dict[str, Any] = {}
    if category is not None and category != proposal.state.record.get("category"):
        allowed = vocab.TIMELINE_CATEGORIES if kind == "timeline_event" \
            else vocab.KEYSTONE_CATEGORIES
        if category not in allowed:
            raise UsageError(f"{category!r} is not a {kind.replace('_', ' ')} category",
                             hint=f"one of: {', '.join(allowed)}")
        record["category"] = category
    if sensitivity is not None and sensitivity != proposal.state.sensitivity:
        if sensitivity not in vocab.SENSITIVITIES:
            raise UsageError(f"{sensitivity!r} is not a sensitivity",
                             hint=f"one of: {', '.join(vocab.SENSITIVITIES)}")
        changes["sensitivity"] = sensitivity
    if date is not None and date != proposal.state.record.get("date"):
        if kind != "timeline_event":
            raise UsageError(f"{proposal.page_id} is a {kind}: only a timeline event has "
                             "a date")
        if not re.match(vocab.PARTIAL_DATE_PATTERN, date):
            raise UsageError(f"{date!r} is not a date", hint="YYYY, YYYY-MM or YYYY-MM-DD")
        record["date"] = date
    if record:
        changes["record"] = record
    if changes:
        changes["integrity"] = "edited"
    return changes


def reject_proposal(store: Store, page_id: str, *, reason: str | None = None,
                    actor: Actor | None = None) -> WriteResult:
    """Reject a proposed keystone: kept (with the reason) for audit, never served."""
    actor = actor or store.user
    with store.locked():
        proposal = _proposal(store, page_id)
        record: dict[str, Any] = {"rejected_by": actor.actor_id, "rejected_at": now_iso()}
        if reason:
            record["rejection_reason"] = reason
        note = f"rejected by {actor.actor_id}" + (f": {reason}" if reason else "")
        return store.revise(
            page_id,
            changes={"review_status": "rejected", "record": record},
            expected_revision_id=proposal.revision_id,
            actor=actor,
            note=note,
        )


# -- undo for real: the decisions taken, and taking one back ------------------------------------
# A decision (accepting or rejecting a proposal) is a revision of the proposal's page; so is
# taking it back. Withdrawing a decision writes a new revision whose state is the proposal as it
# waited (its wording, category, sensitivity, record, `review_status: proposed`): the history
# keeps both, and the proposal is in the queue again, to be accepted or rejected anew. An
# accepted keystone that superseded another gives that one back its place (a new revision of
# it, active again); the `supersedes` relation file stays, as history, and no longer takes
# effect (`model.lifecycle.supersedes_now` wants an affirmed source). What a decision is, is
# read from the pages themselves (`record.affirmed_at` / `record.rejected_at`, which only the
# review writes), so every device sees the same list.


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
    catalog (no page file is opened), only the rows whose record says a decision: the
    thousands of keystones affirmed otherwise (imported, added) are not read after every
    decision in the console (~0.45 s of CPU at 18,000 of them)."""
    found = []
    for entry in store.entries(types=REVIEWABLE_TYPES, review=("affirmed", "rejected"),
                               statuses=("active", "superseded", "archived"),
                               record_keys=("affirmed_at", "rejected_at")):
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
        if model_changes.is_change(head) and state.review_status != "proposed":
            change = state.record[model_changes.CHANGE_KEY]
            raise UsageError(f"{page_id} was a client's proposed {change['action']} of "
                             f"{change['page_id']}, and the decision on it is kept: a change "
                             "made is not taken back from the review queue",
                             hint=f"`pcp history {change['page_id']}` shows it; revise, link "
                             "or archive that page by hand")
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
