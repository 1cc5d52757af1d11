"""The review queue: what waits for the person's word (proposed keystones, profile fields and
timeline events, from an import, `pcp propose` or an AI client), and how a proposal is accepted
(it joins the read surface; an accepted keystone supersedes the one it names) or rejected (kept
for audit, never served)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pcp_cli.api.profile import _entries, _load
from pcp_cli.errors import UsageError
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
        entries = _entries(store, page_type, scopes=scopes, include_sensitive=True,
                           review=("proposed",))
        for entry in entries:
            revision = _load(store, entry)
            if page_type == "profile":
                items.append(profile_review_item(revision))
            elif page_type == "timeline_event":
                items.append({**review_item(revision), "kind": "timeline_event",
                              "date": revision.state.record.get("date")})
            else:
                items.append({**review_item(revision), "kind": "keystone"})
    return sorted(items, key=lambda i: (i["proposed_at"], i["page_id"]))


def _proposal(store: Store, page_id: str) -> Revision:
    revision = store.current(page_id)
    state = revision.state
    if state.type not in REVIEWABLE_TYPES:
        raise UsageError(f"{page_id} is a {state.type}, not a proposal",
                         hint="`pcp review` lists the proposals")
    if state.review_status != "proposed":
        raise UsageError(f"{state.type} {page_id} is not awaiting review (it is "
                         f"{state.review_status})", hint="`pcp review` lists the proposals")
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
                    content: str | None = None, stale_after: str | None = None) -> WriteResult:
    """Affirm a proposed keystone or timeline event: it joins the read surface, with who
    accepted it and when; with `content`, the person's edited wording of it; with
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
        dated["stale_after"] = None if stale_after == "never" else staleness.check(stale_after)
    with store.locked():
        proposal = _proposal(store, page_id)
        if dated and proposal.state.type != "keystone":
            raise UsageError(f"{page_id} is a {proposal.state.type} proposal: only a keystone "
                             "has a stale_after date", hint="accept it without --stale-after")
        if proposal.state.type == "profile":
            return _accept_profile(store, proposal, actor)
        edited: dict[str, Any] = {}
        if content is not None:
            from pcp_cli.model.page import title_from

            if not content.strip():
                raise UsageError("the edited claim is empty", hint="nothing was accepted")
            edited = {"content": content.strip() + "\n", "title": title_from(content),
                      "integrity": "edited"}
        if proposal.state.type == "timeline_event":
            when = now_iso()
            return store.revise(
                page_id, changes={**edited, "review_status": "affirmed",
                                  "epistemic_status": "affirmed",
                                  "record": {"affirmed_by": actor.actor_id,
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
        category = proposal.state.record.get("category")
        result = store.revise(
            page_id,
            changes={
                **edited,
                "review_status": "affirmed",
                "epistemic_status": "affirmed",
                "instruction_policy": "advisory" if category in vocab.ADVISORY_CATEGORIES
                else "data_only",
                "record": {"last_confirmed_at": when, "affirmed_by": actor.actor_id,
                           "affirmed_at": when,
                           "last_confirmed_by": actors.actor_string(actor), **dated},
            },
            expected_revision_id=proposal.revision_id,
            actor=actor,
            note=f"accepted by {actor.actor_id}" + (" (edited)" if edited else ""),
        )
        for superseded in old:
            lifecycle.supersede(store, page_id, superseded.page_id, actor=actor)
        return result


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
