"""Raising a page's sensitivity to what it holds, never lowering it, never overruling the person.

A conversation in which the person says "I have depression." may have been imported at `low`:
the claim `pcp propose` draws from it is `high` (extract/sensitive.py), but the turn itself would
still be served by default search and to every grant without sensitive access. `raise_to`
classifies such a page at least as high as its most sensitive passage, as one revision with a
note saying why, unless

- the page is already that high or higher (nothing is ever lowered here), or
- the person set the page's sensitivity themselves: some revision by the owner (a `pcp edit`,
  a hand edit of the head file, `pcp revise --sensitivity`) changed it to the level it has
  now. Their choice stands; the caller says so instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from pcp_cli.model.page import Actor
from pcp_cli.store.store import Store

RANK = {"low": 0, "medium": 1, "high": 2}


@dataclass(frozen=True)
class Raised:
    """What became of one page: `status` raised | would_raise | kept (the person's choice) |
    already (as high or higher)."""

    page_id: str
    status: str
    was: str | None
    to: str
    why: str

    def to_dict(self) -> dict[str, str | None]:
        return {"page_id": self.page_id, "status": self.status, "was": self.was, "to": self.to,
                "why": self.why}


def rank(level: str | None) -> int:
    return RANK.get(level or "", 1)


def set_by_person(store: Store, page_id: str) -> bool:
    """Whether the page's present sensitivity was set by its owner: a revision by a `user`
    actor that changed it to the level the page has now (and nothing changed it since)."""
    revisions = store.revisions(page_id)
    by_id = {r.revision_id: r for r in revisions}
    current = store.current(page_id)
    level = current.state.sensitivity
    revision = current
    while revision is not None:
        parent = by_id.get(revision.parent_revision_id or "")
        if revision.state.sensitivity != level:
            return False
        changed = parent is None or parent.state.sensitivity != revision.state.sensitivity
        if changed:
            return revision.created_by.actor_type == "user" and parent is not None
        revision = parent
    return False


def raise_to(store: Store, page_id: str, level: str, *, why: str, actor: Actor,
             dry_run: bool = False) -> Raised:
    """Classify `page_id` at least `level` (see the module docstring)."""
    current = store.current(page_id)
    was = current.state.sensitivity
    if rank(was) >= rank(level):
        return Raised(page_id, "already", was, level, why)
    if set_by_person(store, page_id):
        return Raised(page_id, "kept", was, level, why)
    if not dry_run:
        store.revise(page_id, changes={"sensitivity": level},
                     expected_revision_id=current.revision_id, actor=actor,
                     note=f"sensitivity raised from {was} to {level}: {why}")
    return Raised(page_id, "would_raise" if dry_run else "raised", was, level, why)
