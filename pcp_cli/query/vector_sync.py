"""Keeping the vector index (`.pcp/vectors/`) in step with the store, like the text index.

The same change detection as `index_sync`: the catalog notes every pcp write, and
`Store.refresh()` notices hand edits, new files, deletions and `git pull`; `catch_up` applies
`catalog.changes_since(seq)` (the catalog position the vectors last reached, kept in their meta
with the catalog's identity) and re-embeds only the pages whose title or body changed.

When: before every semantic or hybrid search, after `pcp import` when vectors exist, and by
`pcp index` when the semantic extra is installed. A plain write never loads the model.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcp_cli.errors import IndexUnavailable
from pcp_cli.query.index_sync import CATALOG_KEY, INDEXABLE, SEQ_KEY, to_doc

if TYPE_CHECKING:
    from pcp_cli.index import IndexDoc
    from pcp_cli.semantic.embedder import Embedder
    from pcp_cli.semantic.vectors import VectorIndex
    from pcp_cli.store.store import Store

# Compact when more than this share of the rows are replaced passages, and more than this many.
COMPACT_SHARE = 0.5
COMPACT_MIN_ROWS = 5000


def vector_dir(store: Store) -> Path:
    return store.layout.local / "vectors"


@dataclass
class VectorReport:
    rebuilt: bool = False
    reason: str | None = None
    embedded: int = 0  # pages whose passages were embedded (again)
    fields_only: int = 0  # pages whose filter fields changed, text unchanged: not re-embedded
    removed: int = 0
    stale: bool = False
    documents: int | None = None
    chunks: int | None = None
    model: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"rebuilt": self.rebuilt, "reason": self.reason, "embedded": self.embedded,
                "fields_only": self.fields_only, "removed": self.removed, "stale": self.stale,
                "documents": self.documents, "chunks": self.chunks, "model": self.model}


@dataclass
class _Open:
    index: VectorIndex
    lock: threading.Lock


_OPEN: dict[Path, _Open] = {}
_OPEN_LOCK = threading.Lock()


class open_vectors:  # noqa: N801 - a context manager that reads like a function
    """`with open_vectors(store) as (vix, embedder):` the store's vector index and the model,
    each loaded once per process. Raises SemanticUnavailable without the extra."""

    def __init__(self, store: Store) -> None:
        self.directory = vector_dir(store).resolve()

    def __enter__(self) -> tuple[VectorIndex, Embedder]:
        from pcp_cli.semantic.embedder import load_embedder
        from pcp_cli.semantic.vectors import VectorIndex

        embedder = load_embedder()
        with _OPEN_LOCK:
            slot = _OPEN.get(self.directory)
            if slot is None:
                slot = _OPEN[self.directory] = _Open(
                    VectorIndex(self.directory, embedder.name, embedder.dim), threading.Lock())
        slot.lock.acquire()
        self._slot = slot
        return slot.index, embedder

    def __exit__(self, *exc: object) -> None:
        self._slot.lock.release()


def close_all() -> None:
    with _OPEN_LOCK:
        for slot in _OPEN.values():
            with slot.lock:
                slot.index.close()
        _OPEN.clear()


def vectors_exist(store: Store) -> bool:
    return (vector_dir(store) / "current.json").exists()


def disk_bytes(store: Store) -> int:
    return sum(p.stat().st_size for p in vector_dir(store).glob("*") if p.is_file())


def _docs(store: Store) -> Iterator[IndexDoc]:
    for entry in store.catalog.each_entry(INDEXABLE):
        yield to_doc(store, entry)


def rebuild(store: Store, vix: VectorIndex, embedder: Embedder, *, reason: str,
            progress: Callable[[int], None] | None = None) -> VectorReport:
    catalog = store.catalog
    seq, ident = catalog.seq(), catalog.identity()
    n = vix.rebuild(_docs(store), embedder, meta={SEQ_KEY: seq, CATALOG_KEY: ident},
                    progress=progress)
    return VectorReport(rebuilt=True, reason=reason, embedded=n)


def catch_up(store: Store, vix: VectorIndex, embedder: Embedder, *, force_rebuild: bool = False,
             progress: Callable[[int], None] | None = None,
             count: bool = False) -> VectorReport:
    """Apply what the catalog recorded since the vectors last caught up; rebuild if they must.
    When another process is writing them, they are read as they stand (`stale`). `count`
    fills in the page and passage counts (a scan: `pcp index` asks, a search does not)."""
    try:
        report = _catch_up(store, vix, embedder, force_rebuild, progress)
    except IndexUnavailable:
        if force_rebuild or vix.needs_rebuild:
            raise
        report = VectorReport(stale=True)
    report.model = embedder.name
    if count:
        counts = vix.counts()
        report.documents, report.chunks = counts["documents"], counts["chunks"]
    return report


def _catch_up(store: Store, vix: VectorIndex, embedder: Embedder, force_rebuild: bool,
              progress: Callable[[int], None] | None) -> VectorReport:
    if force_rebuild:
        return rebuild(store, vix, embedder, reason="asked for", progress=progress)
    why = vix.needs_rebuild
    if why:
        return rebuild(store, vix, embedder, reason=why, progress=progress)
    catalog = store.catalog
    meta = vix.meta
    seq, ident = catalog.seq(), catalog.identity()
    applied = meta.get(SEQ_KEY)
    if meta.get(CATALOG_KEY) != ident or not isinstance(applied, int) or applied > seq:
        return rebuild(store, vix, embedder, reason="the catalog it followed was replaced",
                       progress=progress)
    if applied == seq:
        return VectorReport()
    changes = catalog.changes_since(applied)
    docs = [to_doc(store, e) for e in changes.changed
            if e.page_id is not None and e.problem is None]
    paths = {d.path for d in docs}
    gone = [e.path for e in changes.changed if e.page_id is None or e.problem is not None]
    gone += [p for p in changes.removed if p not in paths]
    embedded, fields_only = vix.update(docs, gone, embedder, meta={SEQ_KEY: seq})
    report = VectorReport(embedded=embedded, fields_only=fields_only, removed=len(gone))
    dead, rows = vix.dead_rows()
    if rows and dead / rows > COMPACT_SHARE and dead > COMPACT_MIN_ROWS:
        vix.compact()  # only after a write, never on a search that changed nothing
    return report
