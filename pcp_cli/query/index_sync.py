"""Keeping the search index in step with the store, and keeping it open between calls.

The index follows the catalog. Every pcp write notes itself in the catalog (a row with a new
change sequence number); a page changed outside pcp (an editor, `git pull`, a deleted file) is
noticed by `Store.refresh()`, which stats every head file and re-reads only what moved.
`catch_up` then applies `catalog.changes_since(seq)` to the index, where `seq` is the catalog
position the index last reached (kept in the index's meta, with the catalog's identity so a
rebuilt catalog is never mistaken for a continued one).

When: before every search (so nothing another process or an editor did is missed), and after
`pcp import` (so a large import is not paid for by the first search). Plain writes (`pcp add`,
MCP writes) do not touch the index themselves: that would load whoosh for every small write, and
the next search applies their few catalog rows in milliseconds anyway.

A missing, damaged or other-format index is rebuilt from the catalog and the head files; if it
cannot be rebuilt, IndexUnavailable (exit status 7) says why. A search never quietly answers
from a broken index.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcp_cli.errors import IndexUnavailable, PcpError
from pcp_cli.index import IndexDoc, IndexNeedsRebuild
from pcp_cli.model import vocab
from pcp_cli.model.page import observed_time
from pcp_cli.store.catalog import Entry

if TYPE_CHECKING:
    from pcp_cli.index import SearchIndex
    from pcp_cli.store.store import Store

SEQ_KEY = "catalog_seq"
CATALOG_KEY = "catalog_id"
INDEXABLE = "(problem IS NULL OR revision_id IS NOT NULL) AND page_id IS NOT NULL"


# The full-text index holds at most this much of a page's text (the title always): indexing
# costs about 20 bytes of memory per character, so a 10 MB page took 0.2-0.4 GB. Documented in
# docs/search.md (Limits).
INDEX_BODY_CHARS = 2_000_000


def _indexable(entry: Entry) -> bool:
    """INDEXABLE, for one entry: a readable head file, or one served from its revision."""
    return entry.page_id is not None and (entry.problem is None or entry.revision_id is not None)


def index_dir(store: Store) -> Path:
    return store.layout.local / "index"


@dataclass
class SyncReport:
    """What `catch_up` did: `rebuilt` (with why), or how many documents changed; `stale` when
    another process held the index and the search read it as it was."""

    rebuilt: bool = False
    reason: str | None = None
    updated: int = 0
    removed: int = 0
    stale: bool = False
    documents: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"rebuilt": self.rebuilt, "reason": self.reason, "updated": self.updated,
                "removed": self.removed, "stale": self.stale, "documents": self.documents}


# -- open indexes, kept for the life of the process -------------------------------------------
# The MCP server is long-lived and answers on worker threads: one SearchIndex per index folder,
# used under its own lock (SearchIndex is not thread-safe), reopened when another process
# switched it to a new generation (a rebuild), which changes its meta file.
@dataclass
class _Open:
    index: SearchIndex
    meta_stat: tuple[int, int, int] | None
    lock: threading.Lock


_OPEN: dict[Path, _Open] = {}
_OPEN_LOCK = threading.Lock()


def _meta_stat(directory: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(directory / "meta.json")
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def _note_meta(slot: _Open) -> None:
    slot.meta_stat = _meta_stat(slot.index.directory)


class open_index:  # noqa: N801 - used as a context manager, reads like a function
    """`with open_index(store) as ix:` the store's SearchIndex, opened once per process."""

    def __init__(self, store: Store) -> None:
        self.directory = index_dir(store).resolve()

    def __enter__(self) -> SearchIndex:
        from pcp_cli.index import SearchIndex

        with _OPEN_LOCK:
            slot = _OPEN.get(self.directory)
            if slot is None:
                slot = _OPEN[self.directory] = _Open(
                    SearchIndex.open_or_create(self.directory), None, threading.Lock())
                _note_meta(slot)
        slot.lock.acquire()
        self._slot = slot
        try:
            if _meta_stat(self.directory) != slot.meta_stat:
                slot.index.close()
                slot.index = SearchIndex.open_or_create(self.directory)
                _note_meta(slot)
        except BaseException:
            slot.lock.release()
            raise
        return slot.index

    def __exit__(self, *exc: object) -> None:
        _note_meta(self._slot)
        self._slot.lock.release()


def close_all() -> None:
    """Close every index this process holds open (tests, shutdown)."""
    with _OPEN_LOCK:
        for slot in _OPEN.values():
            with slot.lock:
                slot.index.close()
        _OPEN.clear()


# -- documents ----------------------------------------------------------------------------------
def head_body(store: Store, entry: Entry) -> str:
    """The body of a head file as it is on disk (a hand edit included), else the revision's."""
    try:
        text = (store.root / entry.path).read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 3)
        if end != -1:
            return text[end + 5:]
    try:
        return store.read_body(entry)
    except (PcpError, OSError):  # a page whose files vanished meanwhile: index its title only
        return ""


def to_doc(store: Store, entry: Entry) -> IndexDoc:
    assert entry.page_id is not None
    return IndexDoc(
        path=entry.path,
        page_id=entry.page_id,
        revision_id=entry.revision_id or "",
        title=entry.title or "",
        body=head_body(store, entry)[:INDEX_BODY_CHARS],
        type=entry.type or "note",
        namespace=entry.namespace or store.default_namespace,
        origin=entry.origin or "generated",
        # Unclassified pages are indexed as such, so the sensitivity filter withholds them
        # with `high` unless the caller opts in (vocab.SERVED_SENSITIVITIES).
        sensitivity=entry.sensitivity or vocab.UNCLASSIFIED,
        lifecycle_status=entry.lifecycle_status or "active",
        review_status=entry.review_status or "affirmed",
        tags=tuple(entry.tags),
        # Observed time, never storage time: an import from 2024 is not "new" today.
        timestamp=observed_time(entry.type, entry.record, entry.origin, entry.created_at) or "",
        mtime_ns=entry.mtime_ns,
    )


def _all_docs(store: Store) -> Iterator[IndexDoc]:
    for entry in store.catalog.each_entry(INDEXABLE):
        yield to_doc(store, entry)


# -- catching up --------------------------------------------------------------------------------
def rebuild(store: Store, ix: SearchIndex, *, reason: str,
            progress: Callable[[int], None] | None = None) -> SyncReport:
    catalog = store.catalog
    seq, ident = catalog.seq(), catalog.identity()
    n = ix.rebuild(_all_docs(store), progress=progress,
                   meta={SEQ_KEY: seq, CATALOG_KEY: ident})
    return SyncReport(rebuilt=True, reason=reason, updated=n, documents=n)


def catch_up(store: Store, ix: SearchIndex, *, force_rebuild: bool = False,
             progress: Callable[[int], None] | None = None) -> SyncReport:
    """Apply what the catalog recorded since the index last caught up; rebuild if it must.

    The caller has refreshed the store (`Store.refresh()` / `api.open_store`), so the catalog
    already reflects the files. Raises IndexUnavailable when a rebuild is needed and cannot be
    done; when only an update is blocked by another writer, the index is left as it is and the
    report says `stale`.
    """
    if force_rebuild:
        return rebuild(store, ix, reason="asked for", progress=progress)
    if ix.needs_rebuild:
        return rebuild(store, ix, reason=ix.needs_rebuild, progress=progress)
    catalog = store.catalog
    meta = ix.meta
    seq = catalog.seq()
    ident = catalog.identity()
    applied = meta.get(SEQ_KEY)
    if meta.get(CATALOG_KEY) != ident or not isinstance(applied, int) or applied > seq:
        return rebuild(store, ix, reason="the catalog it followed was replaced",
                       progress=progress)
    if applied == seq:
        return SyncReport()
    changes = catalog.changes_since(applied)
    docs = [to_doc(store, e) for e in changes.changed if _indexable(e)]
    gone = [e.path for e in changes.changed if not _indexable(e)]
    gone += [p for p in changes.removed if p not in {d.path for d in docs}]
    report = SyncReport(updated=len(docs), removed=len(gone))
    try:
        if docs:
            ix.update(docs, meta=None if gone else {SEQ_KEY: seq})
        if gone:
            ix.delete(gone, meta={SEQ_KEY: seq})
        elif not docs:  # only rows that were never indexed changed: just move the mark
            ix.set_meta(**{SEQ_KEY: seq})
    except IndexNeedsRebuild as exc:
        return rebuild(store, ix, reason=exc.reason, progress=progress)
    except IndexUnavailable:
        if ix.needs_rebuild:
            raise
        report.stale = True  # another process is writing it; read it as it stands
    return report


def index_missing(store: Store) -> bool:
    """True when the store has no index yet (the first search will build one)."""
    return not (index_dir(store) / "meta.json").exists()


def ensure_current(store: Store, ix: SearchIndex, *,
                   progress: Callable[[int], None] | None = None) -> SyncReport:
    """`catch_up`, turning a failed rebuild into a clear IndexUnavailable."""
    try:
        return catch_up(store, ix, progress=progress)
    except IndexNeedsRebuild as exc:  # a rebuild that did not take
        raise IndexUnavailable(
            f"The search index could not be rebuilt: {exc.reason}",
            hint="Run `pcp index --rebuild`; check disk space and permissions under .pcp/.",
        ) from exc
