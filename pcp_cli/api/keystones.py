"""Keystones: how one is added (and supersedes another), confirmed, edited, proposed and listed;
who wrote and who stands behind each (PCP v1.2 actors, model/actors.py), and when it goes stale
(model/staleness.py).

How a proposed keystone is accepted or rejected: `pcp_cli.api.review`.
"""

from __future__ import annotations

from typing import Any

from pcp_cli.api.checks import check_enum, given_id
from pcp_cli.errors import UsageError
from pcp_cli.model import actors, staleness, vocab
from pcp_cli.model.page import Actor, Revision, now_iso, title_from
from pcp_cli.store import lifecycle
from pcp_cli.store.catalog import Entry
from pcp_cli.store.refresh import record_pending_edit
from pcp_cli.store.store import Store, WriteResult


def add_keystone(
    store: Store,
    content: str,
    *,
    category: str = "other",
    confidence: float | None = None,
    importance: float | None = None,
    source: str = "user_stated",
    sensitivity: str = "low",
    supersedes: str | None = None,
    page_id: str | None = None,
    namespace: str | None = None,
    proposed: bool = False,
    actor: Actor | None = None,
    origin: str | None = None,
    extensions: dict[str, Any] | None = None,
    created_at: str | None = None,
    last_confirmed_at: str | None = None,
    idempotency_key: str | None = None,
    stale_after: str | None = None,
) -> WriteResult:
    """A keystone page; with `supersedes`, the old keystone becomes superseded and is linked.

    `stale_after` (YYYY-MM-DD): the day the claim goes stale (v1.2 §3.2.2). The record says who
    wrote it (`generated_by`: `actor`, else the person) and, unless it is a proposal, who
    stands behind it (`last_confirmed_by`): model/actors.py.
    """
    check_enum("category", category, vocab.KEYSTONE_CATEGORIES)
    check_enum("source", source, vocab.KEYSTONE_SOURCES)
    check_enum("sensitivity", sensitivity, vocab.SENSITIVITIES)
    for name, value in (("confidence", confidence), ("importance", importance)):
        if value is not None and not 0 <= value <= 1:
            raise UsageError(f"{name} must be between 0 and 1, not {value}")
    if not content.strip():
        raise UsageError("a keystone needs content")
    if not proposed and actor is not None and actor.actor_type != "user":
        # v1.2 §3.2.1: reaching the read surface needs the person's affirmation
        raise UsageError(f"a {actor.actor_type} cannot publish a keystone",
                         hint="propose it instead; the person accepts it in `pcp review`")
    record: dict[str, Any] = {"category": category, "source": source}
    if confidence is not None:
        record["confidence"] = confidence
    if importance is not None:
        record["importance"] = importance
    if supersedes is not None:
        record["supersedes"] = supersedes
    if created_at:
        record["created_at"] = created_at
    if last_confirmed_at:
        record["last_confirmed_at"] = last_confirmed_at
    if stale_after is not None:
        record["stale_after"] = staleness.check(stale_after)
    origin = origin or vocab.ORIGIN_FOR_SOURCE[source]
    with store.locked():
        writer = actors.actor_string(actor or store.user)
        record["generated_by"] = writer
        if not proposed:
            record["last_confirmed_by"] = writer
        old: Revision | None = None
        if supersedes is not None:
            record_pending_edit(store, supersedes)
            old = store.current(supersedes)
            if old.state.type != "keystone":
                raise UsageError(f"{supersedes} is a {old.state.type}, not a keystone")
            if old.state.lifecycle_status != "active":
                raise UsageError(f"keystone {supersedes} is already {old.state.lifecycle_status}")
        state = store.new_state(
            content,
            page_id=given_id(page_id),
            type="keystone",
            title=title_from(content),
            namespace=store.default_namespace if namespace is None else namespace,
            sensitivity=sensitivity,
            origin=origin,
            review_status="proposed" if proposed else "affirmed",
            epistemic_status="asserted" if proposed else "affirmed",
            # A proposal is data until the person accepts it (api/review.py, accept_proposal);
            # what a model or an importer says is data (the Paged seed: model-derived material
            # is data); what the person states about how to work may guide a model.
            instruction_policy="advisory" if category in vocab.ADVISORY_CATEGORIES
            and not proposed and (actor is None or actor.actor_type == "user") else "data_only",
            record=record,
            extensions=dict(extensions or {}),
        )
        result = store.write_page(state, actor=actor, idempotency_key=idempotency_key)
        # A proposal changes nothing about the keystone it would replace until it is accepted
        # (api/review.py, accept_proposal does the superseding then).
        if old is not None and result.status == "created" and not proposed:
            lifecycle.supersede(store, result.page_id, old.page_id, actor=actor)
        return result


def confirm_keystone(store: Store, page_id: str, *, actor: Actor | None = None) -> WriteResult:
    """Re-affirm a published keystone: `last_confirmed_at` now, `last_confirmed_by` the actor.

    Only the person publishes (v1.2 §3.2.1): a keystone awaiting review is accepted in review,
    never confirmed; a machine's re-affirmation refreshes a published keystone (its time and
    actor) without making it the person's affirmation (the epistemic status is left as it is).
    """
    actor = actor or store.user
    with store.locked():
        revision = store.current(page_id)
        state = revision.state
        if state.type != "keystone":
            raise UsageError(f"{page_id} is a {state.type}, not a keystone")
        if state.review_status != "affirmed":
            raise UsageError(
                f"keystone {page_id} is {state.review_status}, not published: confirming "
                "refreshes a published keystone and never publishes one",
                hint=f"the person accepts a proposal: `pcp review accept {page_id}`")
        changes: dict[str, Any] = {"record": {
            "last_confirmed_at": now_iso(), "last_confirmed_by": actors.actor_string(actor)}}
        if actor.actor_type == "user":
            changes["epistemic_status"] = "affirmed"
        return store.revise(page_id, changes=changes, actor=actor, note="re-affirmed",
                            expected_revision_id=revision.revision_id)


def edit_keystone(store: Store, page_id: str, *, stale_after: str | None = None,
                  expected_revision_id: str | None = None,
                  actor: Actor | None = None) -> WriteResult:
    """Set (or, with "never", clear) a keystone's `stale_after` date (v1.2 §3.2.2). Editing
    is not re-affirming: who last stood behind the claim, and when, stay as they were."""
    if stale_after is None:
        raise UsageError("nothing to edit", hint="pass --stale-after DATE (or never)")
    value = staleness.setting(stale_after)
    with store.locked():
        revision = store.current(page_id)
        if revision.state.type != "keystone":
            raise UsageError(f"{page_id} is a {revision.state.type}, not a keystone")
        return store.revise(page_id, changes={"record": {"stale_after": value}},
                            expected_revision_id=expected_revision_id, actor=actor,
                            note="stale_after cleared" if value is None
                            else f"stale after {value}")


def is_stale(record: dict[str, Any], on: str | None = None) -> bool:
    """Is a keystone record (or v1.2 keystone object) past its `stale_after` on day `on`
    (default today)?"""
    return staleness.is_stale(record, on)


def keystone_entries(store: Store, *, include_all: bool = False) -> list[Entry]:
    if include_all:
        return store.entries(types=("keystone",), review=None)
    return store.entries(types=("keystone",), statuses=("active",))


def propose_keystone(store: Store, content: str, *, actor: Actor | None = None,
                     **options: Any) -> WriteResult:
    """A keystone that waits in the review queue until the person accepts it.

    Takes the options of `add_keystone`. A proposal that names `supersedes` changes nothing
    about the old keystone until it is accepted.
    """
    return add_keystone(store, content, proposed=True, actor=actor, **options)
