"""What a person changed by hand, recorded: a head file edited by hand becomes a new revision,
a Markdown file dropped under `pages/` is adopted as a new page (`ADOPTER`'s, claiming no more
than the file says).

The catalog (store/catalog.py) finds the head files that are new, changed or gone, and
`folder.scan` gives it the fields of one; a writable Store then records what it found
(`refresh`). Before the write path revises a page it records a pending hand edit of it first
(`record_pending_edit`), so no edit is overwritten. These functions take the store folder and
write through the write engine (`store.writes`, writes.py), below the Store's write API.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pcp_cli.errors import InvalidInput
from pcp_cli.model.ids import is_safe_id, page_id_for_key
from pcp_cli.model.page import OBSERVED_AT, Actor, PageState
from pcp_cli.store.catalog import Changes
from pcp_cli.store.folder import HandEdit, StoreFolder, parse_head_file
from pcp_cli.store.headfile import title_from_body
from pcp_cli.store.writes import new_revision

# Frontmatter keys of a dropped file that are not page state (an adopted page gets revision
# fields of its own, and its payload is the file's body).
REVISION_FIELDS = frozenset(
    (
        "revision_id",
        "parent_revision_id",
        "merged_revision_ids",
        "created_at",
        "created_by",
        "page_created_at",
        "provenance",
        "idempotency_key",
        "content_hash",
        "payload",
    )
)


def refresh(store: StoreFolder, mode: str = "auto") -> Changes:
    """Bring the catalog up to date and, when writable, record hand edits it found."""
    changes = store.catalog.refresh(mode)
    if store.readonly:
        return changes
    pending = store.catalog.pending()
    if not pending:
        return changes
    with store.locked():
        for entry in pending:
            record_hand_edit(store, entry.path)
    recorded = {edit.page_id for edit in store.hand_edits}
    extra = tuple(e for pid in sorted(recorded) for e in store.catalog.by_page_id(pid))
    return Changes(extra + changes.changed, changes.removed)


def record_hand_edit(store: StoreFolder, rel: str, *, note: str | None = None) -> HandEdit | None:
    """Turn an edited or new head file into a revision (with `note`, else the hand-edit
    note). Caller holds the lock."""
    path = store.root / rel
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    name = path.name[:-3]
    folder_ns = store.layout.namespace_of(path) or store.default_namespace
    try:
        parsed = parse_head_file(store, raw, rel, name if is_safe_id(name) else None, folder_ns)
        return _record_parsed(store, rel, path, parsed, folder_ns, note=note)
    except InvalidInput as exc:
        store.problems[rel] = exc.message
        return None


def _record_parsed(store: StoreFolder, rel: str, path: Path, parsed: Any, folder_ns: str, *,
                   note: str | None = None) -> HandEdit | None:
    if parsed.state is None:
        return _adopt(store, rel, parsed.frontmatter, parsed.body, folder_ns)
    state = parsed.state
    page_id = state.page_id
    store.check_state(state)
    if not store.page_exists(page_id):
        state = _as_adopted(state, path)
        store.check_state(state)
        revision = new_revision(state, actor=ADOPTER, operation="write",
                                       note=f"adopted from {rel}")
        store.writes.publish(revision, old_path=path)
        edit = HandEdit(rel, page_id, revision.revision_id, adopted=True)
    else:
        head = store.current(page_id)
        base_id = parsed.revision_id if parsed.revision_id in store.revision_ids(page_id) \
            else head.revision_id
        if state.content_hash == head.content_hash:
            # Nothing the head does not already say (only informational keys or the folder
            # changed, or this edit was recorded by a writer that died before rewriting
            # the file): rewrite the head file, record no revision.
            store.writes.publish(head, old_path=path, new_revision=False)
            return None
        revision = new_revision(
            state, actor=store.user, operation="revise", parent=head,
            note=note or f"hand edit recorded from {rel}",
            input_revision_ids=(base_id,) if base_id != head.revision_id else (),
        )
        store.writes.publish(revision, old_path=path)
        edit = HandEdit(rel, page_id, revision.revision_id, adopted=False)
    store.hand_edits.append(edit)
    return edit


def _adopt(store: StoreFolder, rel: str, data: dict[str, Any], body: str,
           folder_ns: str) -> HandEdit:
    # The page id and key come from the file's path and bytes, so an adoption cut short by
    # a crash (revision written, dropped file not yet removed) is finished when the file is
    # seen again, instead of adopting it a second time.
    raw = (store.root / rel).read_bytes()
    key = f"adopted:{rel}:{hashlib.sha256(raw).hexdigest()}"
    page_id = page_id_for_key(key)
    earlier = store.revisions(page_id) if store.page_exists(page_id) else []
    if earlier and earlier[0].idempotency_key == key:
        head = store.current(page_id)
        store.writes.publish(head, old_path=store.root / rel, new_revision=False)
        edit = HandEdit(rel, page_id, head.revision_id, adopted=True)
        store.hand_edits.append(edit)
        return edit
    fallback = Path(rel).stem
    state_data = {k: v for k, v in data.items() if k not in REVISION_FIELDS}
    state_data.update(
        page_id=page_id,
        namespace=data.get("namespace", folder_ns),
        owner_id=data.get("owner_id", store.owner_id),
        type=data.get("type", "note"),
        title=data.get("title") or title_from_body(body, fallback),
        payload={"media_type": "text/markdown", "content": body},
    )
    state = _as_adopted(PageState.from_dict(state_data), store.root / rel)
    store.check_state(state)
    revision = new_revision(state, actor=ADOPTER, operation="write",
                                   note=f"adopted from {rel}", idempotency_key=key)
    store.writes.publish(revision, old_path=store.root / rel)
    edit = HandEdit(rel, page_id, revision.revision_id, adopted=True)
    store.hand_edits.append(edit)
    return edit


def record_pending_edit(store: StoreFolder, page_id: str) -> None:
    """Before revising a page, record a hand edit of its head file, if there is one
    (for an operation that will revise it). Caller holds the lock.

    A head file that cannot be read stops the write (InvalidInput): revising would overwrite
    it and lose what the person wrote there.
    """
    for entry in store.catalog.by_page_id(page_id):
        if not (store.root / entry.path).exists():
            continue
        if entry.edited or store.catalog.stat_changed(entry.path):
            store.catalog.refresh("full")
            record_hand_edit(store, entry.path)
    for entry in store.catalog.by_page_id(page_id):
        if entry.problem is not None and (store.root / entry.path).exists():
            conflicted = "conflict markers" in entry.problem
            raise InvalidInput(
                entry.problem,
                hint="`pcp doctor --fix` rebuilds it from its revisions (or resolve the "
                "conflict by hand)" if conflicted else "fix the file by hand (`pcp "
                "validate` lists what is wrong), or `pcp doctor` to see the store's "
                "problems",
            )


# Who records a file found under `pages/` that no pcp command wrote: pcp itself, on nobody's
# word. (A hand edit of an existing page is the owner's, and recorded as the user.)
ADOPTER = Actor("system", "pcp-adopt")
# Authority a dropped file may not give itself: only the person's own pcp commands (and their
# hand edits of pages they already own) are `user_stated` or `approved`.
_OWN_WORD = ("user_stated", "approved")


def _as_adopted(state: PageState, path: Path) -> PageState:
    """A page adopted from a dropped file, claiming no more than is known about it.

    Origin: what its frontmatter says, but never `user_stated`/`approved`, and `generated`
    (the spec's "cannot be classified: under-claim") when it says nothing. Integrity and
    epistemic status `unknown` unless stated. Sensitivity as stated, else unclassified (None).
    Observed time: the file's own date (`record.observed_at`, else its modification time).
    """
    origin = state.origin if state.origin not in _OWN_WORD else "generated"
    record = dict(state.record)
    if state.source_observed_at is None:
        try:
            mtime = path.stat().st_mtime
        except OSError:
            mtime = None
        if mtime is not None:
            from datetime import UTC, datetime

            stamp = datetime.fromtimestamp(mtime, UTC)
            record[OBSERVED_AT] = stamp.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    return state.evolve(origin=origin, record=record)
