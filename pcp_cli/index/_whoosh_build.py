"""Building a whoosh index fast: pcp's worker processes, a posting pool with compact runs, and
a field-length table for the segment writer. Used by `_whoosh.SearchIndex.rebuild` only.

Every part writes what whoosh's own writer writes, byte for byte (tests/index/
test_rebuild_workers.py compares the two); only the time and the temporary disk differ.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import Any

from pcp_cli.index._whoosh_doc import fields as _fields
from pcp_cli.index.types import IndexDoc
from pcp_cli.index.workers import Workers

# Worker processes of a large rebuild (`workers.py`): forked, so that a worker reuses the open
# index object without pickling it. Elsewhere (no fork) a rebuild runs in-process.
WORKERS = 2
# Posting-pool size of each writer, whoosh's own estimate: past it, sorted runs go to disk.
LIMIT_MB = 256
# Documents sent to a worker at a time, and postings per compressed block of a sorted run.
BATCH = 200
RUN_BLOCK = 20_000


def _segment_writer(ix: Any, *, lock: bool = True, tuned: bool = True) -> Any:
    """A whoosh SegmentWriter whose posting pool writes compact runs (`_compact_pool_class`).
    compound=False: whoosh opens a compound segment by copying each part into memory
    (BytesIO over the mmap), which made opening a 100k index take 300 ms."""
    from whoosh.writing import SegmentWriter

    if not tuned:
        return ix.writer()
    writer = SegmentWriter(ix, _lk=lock, limitmb=LIMIT_MB, compound=False)
    pool = _compact_pool_class()
    writer.pool = pool(writer._tempstorage, writer.newsegment, limitmb=LIMIT_MB)
    per_document_reader = writer.per_document_reader
    writer.per_document_reader = lambda: _WriterLengths(per_document_reader())
    return writer


class _WriterLengths:
    """The per-document reader a SegmentWriter hands `add_postings` while it writes the
    postings, with `doc_field_length` read from one table per field.

    whoosh looks each posting's field length up through a column reader (five calls and a
    file read per posting: an eighth of a rebuild's CPU). Same values: the stored length byte
    decoded by whoosh's `byte_to_length`, 0 where none is stored.
    """

    def __init__(self, reader: Any) -> None:
        self._reader = reader
        self._tables: dict[str, list[int]] = {}

    def doc_field_length(self, docnum: int, fieldname: str, default: int = 0) -> int:
        table = self._tables.get(fieldname)
        if table is None:
            table = self._tables[fieldname] = self._table(fieldname)
        if default == 0 and 0 <= docnum < len(table):
            return table[docnum]
        return int(self._reader.doc_field_length(docnum, fieldname, default))

    def _table(self, fieldname: str) -> list[int]:
        from whoosh.codec import whoosh3
        from whoosh.util.numeric import byte_to_length

        reader = self._reader
        try:
            col = reader._cached_reader(whoosh3._lenfield(fieldname), whoosh3.LENGTHS_COLUMN)
        except AttributeError:  # another codec: whoosh's own lookups
            return []
        if col is None:
            return [0] * (reader._doccount + 1)
        decoded = [byte_to_length(i) if i else 0 for i in range(256)]
        return [decoded[col[d]] for d in range(reader._doccount)]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reader, name)


@functools.cache
def _compact_pool_class() -> type:
    """whoosh.writing's PostingPool, subclassed on first use (a search never imports it)."""
    import pickle
    import struct
    import zlib

    from whoosh.writing import PostingPool

    class CompactPool(PostingPool):  # type: ignore[misc,valid-type]
        """whoosh's posting pool with its sorted runs written as zlib blocks of pickled lists.

        whoosh pickles each posting on its own (one call, ~90 bytes each): a 100k rebuild
        wrote 4.2 GB of runs for a 633 MB index, and spent much of its time in pickle calls.
        Same items, same order, same merge; only the bytes on disk differ.
        """

        def _write_run(self, f: Any, items: Iterable[Any]) -> None:
            it = iter(items)
            try:
                while block := list(islice(it, RUN_BLOCK)):
                    data = zlib.compress(pickle.dumps(block, pickle.HIGHEST_PROTOCOL), 1)
                    f.write(struct.pack("<Q", len(data)))
                    f.write(data)
            finally:
                f.close()

        def _read_run(self, path: str) -> Iterator[Any]:
            f = self._open_run(path)
            try:
                while len(head := f.read(8)) == 8:
                    (size,) = struct.unpack("<Q", head)
                    yield from pickle.loads(zlib.decompress(f.read(size)))
            finally:
                f.close()
                self._remove_run(path)

    return CompactPool


def serial(
    ix: Any, docs: Iterable[IndexDoc], progress: Callable[[int], None] | None, tuned: bool
) -> int:
    writer = _segment_writer(ix, tuned=tuned)
    n = 0
    try:
        for doc in docs:
            writer.add_document(**_fields(doc))
            n += 1
            if progress is not None and n % 1000 == 0:
                progress(n)
    except BaseException:
        writer.cancel()
        raise
    writer.commit()
    return n


def _worker(ix: Any, jobs: Any, results: Any) -> None:
    """A rebuild worker: indexes the batches it takes off `jobs` into one segment of its own,
    and puts ("ok", segment) or ("error", message) on `results`."""
    try:
        writer = _segment_writer(ix, lock=False)
        while (batch := jobs.get()) is not None:
            for fields in batch:
                writer.add_document(**fields)
        segment = writer._finalize_segment() if writer._added else None
        if segment is None:
            writer._close_segment()
        results.put(("ok", segment))
    except BaseException as exc:  # the parent turns it into an error and cleans up
        results.put(("error", f"{type(exc).__name__}: {exc}"))


def parallel(
    ix: Any, docs: Iterable[IndexDoc], progress: Callable[[int], None] | None
) -> int:
    """Index `docs` in WORKERS forked processes, one segment each, then commit them together.

    What whoosh's MpWriter(multisegment=True) does, without its job files (every document
    pickled to a file in the index folder, then read back) and with compact posting runs. The
    parent only reads the store and hands batches of documents over a pipe (`workers.py`). No
    merge at the end: merging the segments rewrote the whole index and roughly doubled the
    build, and a few plain segments open and search nearly as fast.
    """
    parent = _segment_writer(ix)  # holds the index's lock; the workers write under it
    n = 0
    try:
        with Workers(_worker, (ix,), n=WORKERS, backlog=4 * WORKERS) as pool:
            batch: list[dict[str, Any]] = []
            for doc in docs:
                batch.append(_fields(doc))
                n += 1
                if len(batch) >= BATCH:
                    pool.put(batch)
                    batch = []
                if progress is not None and n % 1000 == 0:
                    progress(n)
            if batch:
                pool.put(batch)
            pool.stop()
            segments = [got for _ in pool.procs if (got := pool.get()) is not None]
        parent._close_segment()
        parent._commit_toc(segments)
        parent._finish()
    except BaseException:
        with contextlib.suppress(Exception):
            parent.cancel()
        raise
    return n
