"""`pcp edit`: a person edits a copy of a page's head file, and the edit is recorded as a hand edit.

The copy (a *draft*, under `.pcp/edits/`) is what the editor opens, so a half-typed or broken
file never sits in `pages/` where another pcp process would try to record it. When the editor
exits, the draft is checked like a head file (errors name the head file's path and line, which
the draft shares), then written over the head file and recorded through the same path as any
hand edit (`refresh.record_pending_edit`: provenance "hand edit recorded from pages/…"). A
draft that was not recorded stays where it is, and the next `pcp edit` of that page resumes from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pcp_cli.errors import InvalidInput, PcpError, RevisionConflict, StoreDamaged
from pcp_cli.store.atomic import write_atomic
from pcp_cli.store.headfile import parse_head
from pcp_cli.store.layout import check_namespace
from pcp_cli.store.refresh import record_pending_edit
from pcp_cli.store.store import Store, WriteResult

DRAFTS = "edits"


@dataclass(frozen=True)
class EditSession:
    page_id: str
    rel: str  # the head file, store-relative: what error messages name
    original: str  # the head file's text when the edit began
    draft: Path  # the copy the editor opens
    resumed: bool  # the draft is an earlier edit that was not recorded


def drafts_dir(store: Store) -> Path:
    return store.layout.local / DRAFTS


def begin(store: Store, page_id: str) -> EditSession:
    """Record any pending hand edit of the page, then give the draft to open in an editor."""
    store.current(page_id)  # NotFound for an unknown page
    with store.locked():
        record_pending_edit(store, page_id)  # a pending hand edit first; InvalidInput if unreadable
    entries = [e for e in store.catalog.by_page_id(page_id) if (store.root / e.path).is_file()]
    if not entries:
        raise StoreDamaged(f"page {page_id} has no head file to edit",
                           hint="`pcp doctor --fix` rebuilds it from its revisions")
    rel = entries[0].path
    original = (store.root / rel).read_text("utf-8")
    draft = drafts_dir(store) / f"{page_id}.md"
    resumed = False
    try:
        earlier = draft.read_text("utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        earlier = None
    if earlier is not None and earlier != original:
        resumed = True
    else:
        write_atomic(draft, original)
    return EditSession(page_id, rel, original, draft, resumed)


def check(store: Store, session: EditSession, text: str) -> None:
    """Raise InvalidInput (naming the head file and line) if `text` is not a valid head file
    for this page."""
    raw = text.encode("utf-8")
    folder_ns = ":".join(session.rel.split("/")[1:-1]) or store.default_namespace
    parsed = parse_head(raw, path=session.rel, file_page_id=session.page_id,
                        folder_namespace=folder_ns, owner_id=store.owner_id)
    if parsed.state is None:
        raise InvalidInput("the frontmatter no longer names the page (page_id is gone)",
                           path=session.rel, line=1,
                           hint=f"put back `page_id: {session.page_id}`")
    check_namespace(parsed.state.namespace)
    store.check_state(parsed.state)


def record(store: Store, session: EditSession, text: str) -> WriteResult:
    """Write `text` over the head file and record it as a hand edit ("unchanged" when it says
    nothing new). RevisionConflict if the head file changed since the edit began."""
    path = store.root / session.rel
    with store.locked():
        try:
            current = path.read_text("utf-8")
        except (FileNotFoundError, UnicodeDecodeError):
            current = None
        if current != session.original:
            head = store.current(session.page_id)
            raise RevisionConflict(
                f"page {session.page_id} changed while you were editing it",
                expected="", current=head.revision_id,
                hint=f"your text is kept in {store.layout.rel(session.draft)}; `pcp edit "
                f"{session.page_id}` opens it again on top of the new head",
            )
        if text == session.original:
            return WriteResult(session.page_id, store.current(session.page_id).revision_id,
                               "unchanged")
        before = len(store.hand_edits)
        write_atomic(path, text)
        try:
            record_pending_edit(store, session.page_id)
        except PcpError:
            write_atomic(path, session.original)
            raise
        recorded = [e for e in store.hand_edits[before:] if e.page_id == session.page_id]
        head = store.current(session.page_id)
    return WriteResult(session.page_id, head.revision_id, "revised" if recorded else "unchanged")


def finish(session: EditSession) -> None:
    """The edit is recorded (or abandoned on purpose): drop the draft."""
    session.draft.unlink(missing_ok=True)


def new_draft(store: Store) -> Path:
    """An empty draft for `pcp add` without text (kept if the add fails)."""
    import os

    folder = drafts_dir(store)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"new-{os.getpid()}.md"
    write_atomic(path, "")
    return path
