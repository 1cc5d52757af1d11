"""What an import may change on a page it wrote before (`Store.upsert_page`'s rules).

- **Sensitivity never goes down.** A page is written at least as sensitive as it is now: a
  person who raised an imported note to `high` in pcp keeps it `high` when the note's source
  changes and is imported again, and a source that stops saying `high` does not lower it
  (lowering is the person's act: `pcp revise PAGE --sensitivity low`). Unclassified counts as
  below `low` here: a source that states a class gives it to a page that had none.
- **What the person decided stays.** A page archived, superseded or tombstoned stays so when
  its source changes (an import never brings a deleted page back to life), and a rejected
  proposal stays rejected (a rejection is remembered), as `store/events.py` keeps them for
  conversations rolled up from events.
- **A file's modification time is not a change.** An importer that can only date an item by
  its file's mtime (a note without a date in its frontmatter) marks that time as weak; a
  re-import whose item differs from the last import of its key by that time alone is
  `unchanged`, and the page keeps the observed time it was first imported with. Touching the
  file, or checking the vault out afresh, changes nothing; editing it does, and the new
  revision is observed at the new mtime.
"""

from __future__ import annotations

from pcp_cli.model.page import OBSERVED_AT, PageState, Revision
from pcp_cli.model.vocab import SENSITIVITIES

_RANK = {None: -1, **{name: rank for rank, name in enumerate(SENSITIVITIES)}}


def kept(state: PageState, held: PageState) -> PageState:
    """`state` as an import may write it over `held`: raised to `held`'s sensitivity when that
    is higher, with `held`'s lifecycle when it is not active and its rejection."""
    changes: dict[str, str | None] = {}
    if _RANK.get(held.sensitivity, -1) > _RANK.get(state.sensitivity, -1):
        changes["sensitivity"] = held.sensitivity
    if held.lifecycle_status != "active":
        changes["lifecycle_status"] = held.lifecycle_status
    if held.review_status == "rejected":
        changes["review_status"] = "rejected"
    changed = {k: v for k, v in changes.items() if getattr(state, k) != v}
    return state.evolve(**changed) if changed else state


def unchanged(state: PageState, earlier: Revision, weak_observed: bool) -> bool:
    """Whether importing `state` over `earlier` (the page's head, or the revision the last
    import of the same key wrote) changes nothing: the same content once the rules above are
    applied (what `kept` keeps of `earlier`; with `weak_observed`, its observed time)."""
    written = kept(state, earlier.state)
    if written.content_hash == earlier.content_hash:
        return True
    return weak_observed and _same_but_observed(written, earlier)


def _same_but_observed(state: PageState, earlier: Revision) -> bool:
    """Whether `state` is `earlier` with only its observed time moved."""
    said = earlier.state.record
    if state.record.get(OBSERVED_AT) == said.get(OBSERVED_AT):
        return False  # then the content hashes already said whether they differ
    record = {k: v for k, v in state.record.items() if k != OBSERVED_AT}
    if OBSERVED_AT in said:
        record[OBSERVED_AT] = said[OBSERVED_AT]
    return state.evolve(record=record).content_hash == earlier.content_hash
