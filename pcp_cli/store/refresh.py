"""The catalog kept current with the head files, and what a person changed by hand recorded.

The catalog (store/catalog.py) finds the head files that are new, changed or gone; `scan` gives
it the fields of one (a head file that cannot be read is served from its page's newest
revision meanwhile). A writable Store then records what it found (`refresh`): a head file
edited by hand becomes a new revision, a Markdown file dropped under `pages/` is adopted as a
new page (`ADOPTER`'s, claiming no more than the file says). Before the write path revises a
page it records a pending hand edit of it first (`record_pending_edit`), so no edit is
overwritten.

These are functions of the Store (their first argument), bound as its methods in store.py
(`Store.refresh`, `Store.check_head_file`); they write only through the Store's own write path
(`Store._new_revision`, `Store._publish`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcp_cli.errors import InvalidInput, PcpError
from pcp_cli.model import vocab
from pcp_cli.model.ids import is_safe_id, page_id_for_key
from pcp_cli.model.page import OBSERVED_AT, Actor, PageState
from pcp_cli.store.catalog import Changes, entry_fields
from pcp_cli.store.headfile import ParsedHead, parse_head, title_from_body

if TYPE_CHECKING:  # the Store binds these functions as its methods (see store.py)
    from pcp_cli.store.store import Store

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


@dataclass(frozen=True)
class HandEdit:
    """A head file that was recorded as a new revision (or adopted as a new page)."""

    path: str
    page_id: str
    revision_id: str
    adopted: bool


def scan(store: Store, rel: str, raw: bytes) -> dict[str, Any]:
    """Catalog fields for one head file (called by the catalog for new or changed files)."""
    name = rel.rsplit("/", 1)[-1][:-3]
    file_page_id = name if is_safe_id(name) else None
    folder_ns = ":".join(rel.split("/")[1:-1]) or store.default_namespace
    try:
        parsed = _parse_head(store, raw, rel, file_page_id, folder_ns)
    except InvalidInput as exc:
        return _served_from_revision(store, file_page_id, raw, exc.message)
    if parsed.state is None:
        return {"page_id": None, "problem": "new file: not yet adopted as a page",
                "title": str(parsed.frontmatter.get("title") or name)}
    state = parsed.state
    stored_hash = parsed.frontmatter.get("content_hash")
    state_hash = parsed.state_hash or state.content_hash
    fields = entry_fields(state)
    fields.update(
        revision_id=parsed.revision_id,
        content_hash=state_hash,
        created_at=parsed.frontmatter.get("created_at"),
        updated_at=parsed.frontmatter.get("updated_at"),
        edited=stored_hash != state_hash,
    )
    if state.namespace != folder_ns:
        fields["edited"] = True
    return fields


def _served_from_revision(store: Store, page_id: str | None, raw: bytes,
                          problem: str) -> dict[str, Any]:
    """Catalog fields for a head file that cannot be read: the page's newest revision
    (listed, searched and shown from it, the problem kept for doctor and the warnings),
    unless the file holds git conflict markers (never served) or the page has none."""
    fields: dict[str, Any] = {"page_id": page_id, "problem": problem}
    if page_id is None or b"<<<<<<<" in raw or not store.revision_ids(page_id):
        return fields
    try:
        head = store.graph_heads(page_id)[-1]
    except PcpError:
        return fields
    if _claims_more_sensitivity(raw, head.state.sensitivity):
        return fields  # the broken file may be marking the page more sensitive: hide it
    fields.update(entry_fields(head.state), problem=problem,
                  revision_id=head.revision_id, content_hash=head.content_hash,
                  created_at=head.page_created_at, updated_at=head.created_at)
    return fields


def _parse_head(store: Store, raw: bytes, rel: str, file_page_id: str | None,
                folder_ns: str) -> ParsedHead:
    """parse_head, knowing the store: a file named after an existing page but without
    frontmatter is that page's head file edited, never a new page. Emptied, it is refused
    (doctor --fix rewrites it from the revisions); with text left, the text is the edit."""
    parsed = parse_head(raw, path=rel, file_page_id=file_page_id,
                        folder_namespace=folder_ns, owner_id=store.owner_id,
                        load_revision=store.load_revision)
    if parsed.state is not None or file_page_id is None or parsed.frontmatter or \
            not store.page_exists(file_page_id):
        return parsed
    if not parsed.body.strip():
        raise InvalidInput(
            f"the head file of page {file_page_id} is empty",
            path=rel, line=1,
            hint="`pcp doctor --fix` rewrites it from its revisions (to remove the page, "
            "`pcp delete` it)",
        )
    head = store.current(file_page_id)
    state = head.state.evolve(content=parsed.body)
    return ParsedHead({}, parsed.body, head.revision_id, state)


def refresh(store: Store, mode: str = "auto") -> Changes:
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


def record_hand_edit(store: Store, rel: str, *, note: str | None = None) -> HandEdit | None:
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
        parsed = _parse_head(store, raw, rel, name if is_safe_id(name) else None, folder_ns)
        return _record_parsed(store, rel, path, parsed, folder_ns, note=note)
    except InvalidInput as exc:
        store.problems[rel] = exc.message
        return None


def _record_parsed(store: Store, rel: str, path: Path, parsed: Any, folder_ns: str, *,
                   note: str | None = None) -> HandEdit | None:
    if parsed.state is None:
        return _adopt(store, rel, parsed.frontmatter, parsed.body, folder_ns)
    state = parsed.state
    page_id = state.page_id
    store.check_state(state)
    if not store.page_exists(page_id):
        state = _as_adopted(state, path)
        store.check_state(state)
        revision = store._new_revision(state, actor=ADOPTER, operation="write",
                                       note=f"adopted from {rel}")
        store._publish(revision, old_path=path)
        edit = HandEdit(rel, page_id, revision.revision_id, adopted=True)
    else:
        head = store.current(page_id)
        base_id = parsed.revision_id if parsed.revision_id in store.revision_ids(page_id) \
            else head.revision_id
        if state.content_hash == head.content_hash:
            # Nothing the head does not already say (only informational keys or the folder
            # changed, or this edit was recorded by a writer that died before rewriting
            # the file): rewrite the head file, record no revision.
            store._publish(head, old_path=path, new_revision=False)
            return None
        revision = store._new_revision(
            state, actor=store.user, operation="revise", parent=head,
            note=note or f"hand edit recorded from {rel}",
            input_revision_ids=(base_id,) if base_id != head.revision_id else (),
        )
        store._publish(revision, old_path=path)
        edit = HandEdit(rel, page_id, revision.revision_id, adopted=False)
    store.hand_edits.append(edit)
    return edit


def _adopt(store: Store, rel: str, data: dict[str, Any], body: str, folder_ns: str) -> HandEdit:
    # The page id and key come from the file's path and bytes, so an adoption cut short by
    # a crash (revision written, dropped file not yet removed) is finished when the file is
    # seen again, instead of adopting it a second time.
    raw = (store.root / rel).read_bytes()
    key = f"adopted:{rel}:{hashlib.sha256(raw).hexdigest()}"
    page_id = page_id_for_key(key)
    earlier = store.revisions(page_id) if store.page_exists(page_id) else []
    if earlier and earlier[0].idempotency_key == key:
        head = store.current(page_id)
        store._publish(head, old_path=store.root / rel, new_revision=False)
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
    revision = store._new_revision(state, actor=ADOPTER, operation="write",
                                   note=f"adopted from {rel}", idempotency_key=key)
    store._publish(revision, old_path=store.root / rel)
    edit = HandEdit(rel, page_id, revision.revision_id, adopted=True)
    store.hand_edits.append(edit)
    return edit


def record_pending_edit(store: Store, page_id: str) -> None:
    """Before revising a page, record a hand edit of its head file, if there is one
    (`Store.check_head_file`, for an operation that will revise it). Caller holds the lock.

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


def _claims_more_sensitivity(raw: bytes, sensitivity: str | None) -> bool:
    """Whether an unreadable head file names a sensitivity above `sensitivity` (or one that is
    not a known level), anywhere on a `sensitivity:` line."""
    levels = vocab.SENSITIVITIES
    rank = levels.index(sensitivity) if sensitivity in levels else -1
    for match in re.finditer(rb"^\s*sensitivity\s*:\s*['\"]?([^\s'\"#]*)", raw, re.MULTILINE):
        said = match.group(1).decode("utf-8", "replace").lower()
        if said not in levels or levels.index(said) > rank:
            return True
    return False
