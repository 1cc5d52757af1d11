"""The vector index: one embedding per passage, under `.pcp/vectors/`, always rebuildable.

Layout of the folder (derived data, never committed):

    current.json          {"gen": N}: which generation readers use (replaced atomically)
    rows-N.sqlite         one row per passage: its matrix row, page, offsets and the fields the
                          search filters on; one row per page with the hash of what was embedded
    matrix-N.f32          the vectors, float32, row-major, appended to as pages change
    lock                  one writer at a time (readers never wait)

Representation, chosen by measurement (bench/RESULTS.md): brute force over a memory-mapped
float32 matrix, scored with numpy's einsum. float16 and int8 halve or quarter the disk but
numpy has no fast kernel for them, so every search would pay a conversion several times the
product's cost.

Every filter before relevance: `search` builds the candidate rows from the filter first (live
rows whose namespace, type, lifecycle, sensitivity, review status, origin, time and page pass)
and scores only those; a row outside the filter is never scored, ranked or returned, and a
filtered search is never short of pages the filter admits. Tags are not held here: the query
layer turns them into the filter's `page_ids` (query/semantic.py).

An edited page is re-embedded only when the text embedded (title and body) changed; a change of
lifecycle, sensitivity or scope alone rewrites its rows' fields. Replaced passages are marked dead
and their space reclaimed when dead rows outnumber live ones (a compaction copies the live rows,
without embedding anything).

What an edit costs is proportional to the edit: its new vectors are appended to the matrix and
its rows written with the next `seq`. The filter-field snapshot (`fields-N.npz`, a few bytes per
passage, so a new process need not read every row) is not rewritten: a reader loads it and then
reads only the rows whose `seq` is newer, which is the delta; once that delta passes
`SNAPSHOT_AFTER` rows, the reader that read it saves a fresh snapshot.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcp_cli.errors import IndexUnavailable
from pcp_cli.index.types import IndexDoc, IndexFilter, IndexHit
from pcp_cli.semantic.chunks import Chunk, embedding_text, split

if TYPE_CHECKING:
    import numpy as np

    from pcp_cli.semantic.embedder import Embedder

FORMAT = 1
FIELDS = ("namespace", "type", "lifecycle_status", "sensitivity", "review_status", "origin")
EMBED_BATCH = 512
SNAPSHOT_AFTER = 5000  # rows read from SQLite by a reader before it saves a snapshot


@dataclass(frozen=True)
class VectorHit:
    hit: IndexHit  # score = cosine clipped into [0, 1]
    start: int  # the best passage's offsets in the body
    end: int


def text_hash(doc: IndexDoc, model: str) -> str:
    return hashlib.sha256(f"{model}\0{doc.title}\0{doc.body}".encode()).hexdigest()[:32]


class VectorIndex:
    """Not thread-safe: the caller holds one per folder under a lock (query/vector_sync.py)."""

    def __init__(self, directory: Path, model: str, dim: int) -> None:
        self.directory = directory
        self.model = model
        self.dim = dim
        self._gen: int | None = None
        self._db: sqlite3.Connection | None = None
        self._cache: _Cache | None = None

    # -- opening --------------------------------------------------------------------------------
    def _current_gen(self) -> int | None:
        try:
            data = json.loads((self.directory / "current.json").read_text("utf-8"))
            return int(data["gen"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _paths(self, gen: int) -> tuple[Path, Path]:
        return self.directory / f"rows-{gen}.sqlite", self.directory / f"matrix-{gen}.f32"

    def _connect(self, path: Path) -> sqlite3.Connection:
        db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        return db

    def _open(self) -> sqlite3.Connection | None:
        """The current generation's database (reopened when another process switched it)."""
        gen = self._current_gen()
        if gen != self._gen or self._db is None:
            self.close()
            if gen is None or not self._paths(gen)[0].exists():
                return None
            self._db = self._connect(self._paths(gen)[0])
            self._gen = gen
        return self._db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
        self._db, self._gen, self._cache = None, None, None

    @property
    def meta(self) -> dict[str, Any]:
        db = self._open()
        if db is None:
            return {}
        try:
            return {k: json.loads(v) for k, v in db.execute("SELECT key, value FROM meta")}
        except sqlite3.DatabaseError:
            return {}

    @property
    def needs_rebuild(self) -> str | None:
        """Why the vectors on disk cannot be used as they are, or None."""
        db = self._open()
        if db is None:
            return "there are no vectors yet"
        meta = self.meta
        if meta.get("format") != FORMAT:
            return "they were written by another version of pcp"
        if meta.get("model") != self.model or meta.get("dim") != self.dim:
            return f"they were made by another model ({meta.get('model')})"
        assert self._gen is not None
        matrix = self._paths(self._gen)[1]
        rows = meta.get("rows", 0)
        if not matrix.exists() or matrix.stat().st_size < rows * self.dim * 4:
            return "the vector file is missing or short"
        return None

    def set_meta(self, **values: Any) -> None:
        db = self._open()
        assert db is not None
        db.executemany("INSERT OR REPLACE INTO meta VALUES(?, ?)",
                       [(k, json.dumps(v)) for k, v in values.items()])

    # -- counts ---------------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        db = self._open()
        if db is None:
            return {"documents": 0, "chunks": 0}
        pages = db.execute("SELECT COUNT(*) FROM pages").fetchone()[0]
        chunks = db.execute("SELECT COUNT(*) FROM chunks WHERE live=1").fetchone()[0]
        return {"documents": int(pages), "chunks": int(chunks)}

    # -- writing --------------------------------------------------------------------------------
    def _lock(self) -> Any:
        from filelock import FileLock, Timeout

        lock = FileLock(str(self.directory / "lock"), timeout=0.5)
        try:
            lock.acquire()
        except Timeout as exc:
            raise IndexUnavailable("The vector index is being written by another pcp process.",
                                   hint="Wait for it to finish and try again.") from exc
        return lock

    def rebuild(self, docs: Iterable[IndexDoc], embedder: Embedder, *,
                meta: dict[str, Any], progress: Callable[[int], None] | None = None) -> int:
        """Embed every document into a new generation and switch readers to it. Returns the
        number of documents."""
        self.directory.mkdir(parents=True, exist_ok=True)
        lock = self._lock()
        try:
            old = self._current_gen()
            gen = (old or 0) + 1
            db_path, matrix_path = self._paths(gen)
            for path in (db_path, matrix_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm")):
                path.unlink(missing_ok=True)
            db = self._connect(db_path)
            _schema(db)
            writer = _Writer(db, matrix_path, embedder, self.model, first_row=0, seq=1)
            n = 0
            for doc in docs:
                writer.add(doc)
                n += 1
                if progress is not None and n % 1000 == 0:
                    progress(n)
            writer.flush()
            db.executemany("INSERT OR REPLACE INTO meta VALUES(?, ?)", [
                (k, json.dumps(v)) for k, v in {
                    "format": FORMAT, "model": self.model, "dim": self.dim,
                    "rows": writer.next_row, "version": 1, **meta}.items()])
            db.close()
            _fsync(matrix_path)
            _write_current(self.directory, gen)
            if progress is not None:
                progress(n)
            self.close()
            self._save_snapshot()
            if old is not None and old != gen:
                self._remove_gen(old)
            return n
        finally:
            lock.release()

    def update(self, docs: Sequence[IndexDoc], removed: Sequence[str], embedder: Embedder, *,
               meta: dict[str, Any]) -> tuple[int, int]:
        """Apply changed documents and removed paths. Returns (re-embedded, fields-only)."""
        lock = self._lock()
        try:
            db = self._open()  # after the lock: another process may have switched generations
            if db is None:
                raise IndexUnavailable("The vector index was removed while being updated.",
                                       hint="Run `pcp index --rebuild`.")
            m = self.meta
            version = int(m.get("version", 1)) + 1
            rows = int(m.get("rows", 0))
            assert self._gen is not None
            db.execute("BEGIN IMMEDIATE")
            try:
                gone = list(removed)
                fields_only: list[IndexDoc] = []
                embed: list[IndexDoc] = []
                for doc in docs:
                    old = db.execute("SELECT hash FROM pages WHERE path=?", (doc.path,)).fetchone()
                    if old and old[0] == text_hash(doc, self.model):
                        fields_only.append(doc)
                    else:
                        gone.append(doc.path)
                        embed.append(doc)
                dead = int(m.get("dead", 0))
                for path in gone:
                    dead += db.execute("UPDATE chunks SET live=0, seq=? WHERE path=? AND live=1",
                                       (version, path)).rowcount
                    db.execute("DELETE FROM pages WHERE path=?", (path,))
                for doc in fields_only:
                    db.execute(
                        "UPDATE chunks SET page_id=?, revision_id=?, namespace=?, type=?, "
                        "lifecycle_status=?, sensitivity=?, review_status=?, origin=?, "
                        "timestamp=?, mtime_ns=?, seq=? WHERE path=? AND live=1",
                        (doc.page_id, doc.revision_id, doc.namespace, doc.type,
                         doc.lifecycle_status, doc.sensitivity, doc.review_status, doc.origin,
                         doc.timestamp, doc.mtime_ns, version, doc.path))
                writer = _Writer(db, self._paths(self._gen)[1], embedder, self.model,
                                 first_row=rows, seq=version)
                for doc in embed:
                    writer.add(doc)
                writer.flush()
                db.executemany("INSERT OR REPLACE INTO meta VALUES(?, ?)", [
                    (k, json.dumps(v)) for k, v in
                    {"rows": writer.next_row, "version": version, "dead": dead,
                     **meta}.items()])
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            # No snapshot rewrite: the rows just written are the delta a reader applies on top
            # of the last snapshot (see the module docstring).
            self._current_cache()
            return len(embed), len(fields_only)
        finally:
            lock.release()

    def compact(self) -> None:
        """Copy the live rows into a new generation (nothing is embedded again)."""
        import numpy as np

        lock = self._lock()
        try:
            db = self._open()
            if db is None or self._gen is None:
                return
            old = self._gen
            m = self.meta
            rows = int(m.get("rows", 0))
            gen = old + 1
            db_path, matrix_path = self._paths(gen)
            for path in (db_path, matrix_path):
                path.unlink(missing_ok=True)
            new = self._connect(db_path)
            _schema(new)
            source = np.memmap(self._paths(old)[1], dtype="<f4", mode="r",
                               shape=(rows, self.dim)) if rows else None
            live = [r[0] for r in db.execute("SELECT row FROM chunks WHERE live=1 ORDER BY row")]
            remap = {r: i for i, r in enumerate(live)}
            with open(matrix_path, "wb") as fh:
                for i in range(0, len(live), 65536):
                    assert source is not None
                    fh.write(np.ascontiguousarray(source[live[i:i + 65536]]).tobytes())
            cols = ("path, page_id, revision_id, start, end, namespace, type, lifecycle_status, "
                    "sensitivity, review_status, origin, timestamp, mtime_ns")
            new.execute("BEGIN")
            new.executemany(f"INSERT INTO chunks(row, {cols}, live, seq) "
                            "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,1,1)",
                            ((remap[r[0]], *r[1:]) for r in db.execute(
                                f"SELECT row, {cols} FROM chunks WHERE live=1 ORDER BY row")))
            new.executemany("INSERT INTO pages VALUES(?,?,?,?)",
                            ((p, h, remap.get(f, 0), n) for p, h, f, n in
                             db.execute("SELECT path, hash, first_row, n_rows FROM pages")))
            new.executemany("INSERT OR REPLACE INTO meta VALUES(?, ?)", [
                (k, json.dumps(v)) for k, v in
                {**m, "rows": len(live), "version": 1, "dead": 0}.items()])
            new.execute("COMMIT")
            new.close()
            _fsync(matrix_path)
            _write_current(self.directory, gen)
            self.close()
            self._save_snapshot()
            self._remove_gen(old)
        finally:
            lock.release()

    def _remove_gen(self, gen: int) -> None:
        """Delete a generation readers no longer use (one still open elsewhere keeps working on
        POSIX; where the OS refuses, the files stay until the next switch)."""
        db_path, matrix_path = self._paths(gen)
        for path in (db_path, matrix_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm"),
                     self.directory / f"fields-{gen}.npz"):
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)

    def dead_rows(self) -> tuple[int, int]:
        """(replaced passages still in the matrix, all rows), from the meta: no scan."""
        m = self.meta
        return int(m.get("dead", 0)), int(m.get("rows", 0))

    # -- searching ------------------------------------------------------------------------------
    def search(self, query: np.ndarray, flt: IndexFilter, limit: int) -> list[VectorHit]:
        """The `limit` best pages among those the filter admits, each with its best passage."""
        import numpy as np

        cache = self._current_cache()
        if cache is None or cache.rows == 0:
            return []
        candidates = cache.candidates(flt)
        if candidates.size == 0:
            return []
        matrix = cache.matrix
        query = np.ascontiguousarray(query, dtype=np.float32)
        # einsum, not `@`: numpy's own SIMD loop is 10-20x faster here than OpenBLAS's gemv,
        # which pays for starting threads on every call (bench/RESULTS.md)
        if candidates.size * 2 < cache.rows:
            scores = np.einsum("ij,j->i", matrix[candidates], query)
        else:
            scores = np.einsum("ij,j->i", matrix, query)[candidates]
        want = limit
        while True:
            k = min(candidates.size, max(want * 4, 64))
            top = np.argpartition(-scores, k - 1)[:k] if k < candidates.size \
                else np.arange(candidates.size)
            top = top[np.argsort(-scores[top], kind="stable")]
            best: dict[int, int] = {}  # page key -> position in `top` of its best passage
            for pos, i in enumerate(top):
                key = int(cache.page_key[candidates[i]])
                if key not in best:
                    best[key] = pos
                    if len(best) >= limit:
                        break
            if len(best) >= limit or k >= candidates.size:
                break
            want *= 4
        rows = [int(candidates[top[pos]]) for pos in best.values()]
        found = {r: s for r, s in zip(rows, (float(scores[top[p]]) for p in best.values()),
                                      strict=True)}
        return self._hits(found)

    def _hits(self, found: dict[int, float]) -> list[VectorHit]:
        db = self._open()
        assert db is not None
        marks = ",".join("?" * len(found))
        by_row = {r[0]: r for r in db.execute(
            "SELECT row, page_id, path, revision_id, type, namespace, origin, sensitivity, "
            f"lifecycle_status, review_status, timestamp, mtime_ns, start, end "
            f"FROM chunks WHERE row IN ({marks})", tuple(found))}
        hits = []
        for row, cos in sorted(found.items(), key=lambda kv: -kv[1]):
            r = by_row.get(row)
            if r is None:
                continue
            hits.append(VectorHit(IndexHit(
                page_id=r[1], path=r[2], revision_id=r[3], type=r[4], namespace=r[5],
                origin=r[6], sensitivity=r[7], lifecycle_status=r[8], review_status=r[9],
                timestamp=r[10] or "", mtime_ns=r[11] or 0, score_raw=cos,
                score=min(1.0, max(0.0, cos)), matched_fields=("semantic",)), r[12], r[13]))
        return hits

    def _current_cache(self) -> _Cache | None:
        db = self._open()
        if db is None:
            return None
        m = self.meta
        version, rows = int(m.get("version", 0)), int(m.get("rows", 0))
        assert self._gen is not None
        if self._cache is None or self._cache.gen != self._gen:
            self._cache = _Cache(self._gen, self._paths(self._gen)[1], self.dim)
            self._cache.load(self._snapshot_path(), rows)
        self._cache.refresh(db, version, rows)
        if self._cache.unsaved > SNAPSHOT_AFTER:
            # many rows read since the snapshot (edits since, vectors written by an older pcp,
            # a lost snapshot): leave a new one so the next process does not read them again
            with contextlib.suppress(OSError):
                self._cache.save(self._snapshot_path())
        return self._cache

    def _snapshot_path(self) -> Path:
        return self.directory / f"fields-{self._gen}.npz"

    def _save_snapshot(self) -> None:
        """After a write: the filter fields as the writer now sees them, for the next process."""
        cache = self._current_cache()
        if cache is not None:
            with contextlib.suppress(OSError):
                cache.save(self._snapshot_path())


class _Writer:
    """Embeds documents in batches, appends their vectors and writes their rows."""

    def __init__(self, db: sqlite3.Connection, matrix: Path, embedder: Embedder, model: str,
                 *, first_row: int, seq: int) -> None:
        self.db = db
        self.matrix = matrix
        self.embedder = embedder
        self.model = model
        self.next_row = first_row
        self.seq = seq
        self.pending: list[tuple[IndexDoc, list[Chunk]]] = []
        self.pending_chunks = 0

    def add(self, doc: IndexDoc) -> None:
        chunks = split(doc.body)
        if not chunks and doc.title:
            chunks = [Chunk(0, 0, "")]  # a title-only page is still findable by its title
        self.pending.append((doc, chunks))
        self.pending_chunks += len(chunks)
        if self.pending_chunks >= EMBED_BATCH:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        texts = [embedding_text(doc.title, c, i == 0)
                 for doc, chunks in self.pending for i, c in enumerate(chunks)]
        vectors = self.embedder.embed(texts) if texts else None
        rows, pages = [], []
        row = self.next_row
        for doc, chunks in self.pending:
            pages.append((doc.path, text_hash(doc, self.model), row, len(chunks)))
            for c in chunks:
                rows.append((row, doc.path, doc.page_id, doc.revision_id, c.start, c.end,
                             doc.namespace, doc.type, doc.lifecycle_status, doc.sensitivity,
                             doc.review_status, doc.origin, doc.timestamp, doc.mtime_ns,
                             self.seq))
                row += 1
        if vectors is not None:
            with open(self.matrix, "ab") as fh:
                fh.seek(self.next_row * self.embedder.dim * 4)
                fh.truncate()  # drop any tail a crashed writer left past the last row
                fh.write(vectors.astype("<f4", copy=False).tobytes())
        self.db.executemany("INSERT INTO chunks VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,1,?)", rows)
        self.db.executemany("INSERT OR REPLACE INTO pages VALUES(?,?,?,?)", pages)
        self.next_row = row
        self.pending, self.pending_chunks = [], 0


class _Cache:
    """Per-process copies of the filter fields as small integer codes, and the mapped matrix,
    refreshed from the rows changed since (`seq` > the version it last saw)."""

    def __init__(self, gen: int, matrix: Path, dim: int) -> None:
        import numpy as np

        self.gen = gen
        self.path = matrix
        self.dim = dim
        self.version = -1
        self.rows = 0
        self.codes: dict[str, dict[str, int]] = {f: {} for f in (*FIELDS, "page")}
        self.cols = {f: np.zeros(0, dtype=np.int32) for f in FIELDS}
        self.page_key = np.zeros(0, dtype=np.int32)
        self.live = np.zeros(0, dtype=bool)
        self.stamp = np.zeros(0, dtype="S32")
        self.matrix: Any = np.zeros((0, dim), dtype=np.float32)
        self.mapped = -1  # how many rows `matrix` maps
        self.unsaved = 0  # rows read from SQLite since the snapshot was loaded or saved
        self._last: tuple[Any, np.ndarray] | None = None  # (filter, version, rows), candidates
        self._lock = threading.Lock()

    def refresh(self, db: sqlite3.Connection, version: int, rows: int) -> int:
        """Apply the rows written since; returns how many were read."""
        import numpy as np

        if version == self.version and rows == self.rows and self.mapped == rows:
            return 0
        with self._lock:
            changed = db.execute(
                "SELECT row, live, page_id, timestamp, " + ", ".join(FIELDS)
                + " FROM chunks WHERE seq > ?", (self.version if self.version >= 0 else 0,)
            ).fetchall()
            if rows > self.rows:
                grow = rows - self.rows
                for f in FIELDS:
                    self.cols[f] = np.concatenate([self.cols[f], np.zeros(grow, np.int32)])
                self.page_key = np.concatenate([self.page_key, np.zeros(grow, np.int32)])
                self.live = np.concatenate([self.live, np.zeros(grow, bool)])
                self.stamp = np.concatenate([self.stamp, np.zeros(grow, "S32")])
            changed = [r for r in changed if r[0] < rows]
            if changed:
                # column by column: one numpy assignment per column, not one per cell
                columns = list(zip(*changed, strict=True))
                at = np.fromiter(columns[0], dtype=np.int64, count=len(changed))
                self.live[at] = np.fromiter(columns[1], dtype=bool, count=len(changed))
                self.page_key[at] = self._codes("page", columns[2])
                self.stamp[at] = np.array([(v or "").encode()[:32] for v in columns[3]],
                                          dtype="S32")
                for f, values in zip(FIELDS, columns[4:], strict=True):
                    self.cols[f][at] = self._codes(f, values)
            if self.mapped != rows:
                self.matrix = np.memmap(self.path, dtype="<f4", mode="r",
                                        shape=(rows, self.dim)) if rows else \
                    np.zeros((0, self.dim), dtype=np.float32)
                self.mapped = rows
            self.rows, self.version = rows, version
            self.unsaved += len(changed)
            return len(changed)

    # -- a snapshot, so that a new process does not read every row from SQLite --------------
    def save(self, path: Path) -> None:
        import numpy as np

        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp.npz")
        head = json.dumps({"version": self.version, "rows": self.rows, "codes": self.codes})
        np.savez(tmp, head=np.array(head), live=self.live, page_key=self.page_key,
                 stamp=self.stamp, **{f"col_{f}": self.cols[f] for f in FIELDS})
        os.replace(tmp, path)
        self.unsaved = 0

    def load(self, path: Path, rows: int) -> None:
        """Start from the snapshot when there is a usable one (then only later rows are read)."""
        import numpy as np

        try:
            with np.load(path, allow_pickle=False) as data:
                head = json.loads(str(data["head"]))
                if head["rows"] > rows or len(data["live"]) != head["rows"]:
                    return
                live, page_key, stamp = data["live"], data["page_key"], data["stamp"]
                cols = {f: data[f"col_{f}"] for f in FIELDS}
        except (OSError, ValueError, KeyError, json.JSONDecodeError):
            return
        self.live, self.page_key, self.stamp, self.cols = live, page_key, stamp, cols
        self.codes = head["codes"]
        self.rows, self.version = head["rows"], head["version"]

    def _codes(self, field: str, values: Sequence[str | None]) -> np.ndarray:
        import numpy as np

        table = self.codes[field]
        for value in set(values):
            table.setdefault(value or "", len(table))
        return np.fromiter((table[v or ""] for v in values), dtype=np.int32, count=len(values))

    def _pages(self, page_ids: Iterable[str]) -> np.ndarray:
        import numpy as np

        table = self.codes["page"]
        admitted = np.zeros(len(table) + 1, dtype=bool)
        admitted[[table[p] for p in page_ids if p in table]] = True
        return admitted[self.page_key]

    def candidates(self, flt: IndexFilter) -> np.ndarray:
        """The rows `flt` admits, ascending; the last answer is kept while the rows and the
        filter stay the same (most searches repeat the default filter)."""
        import numpy as np

        key = (flt, self.version, self.rows)
        if self._last is None or self._last[0] != key:
            self._last = (key, np.flatnonzero(self.mask(flt)))
        return self._last[1]

    def mask(self, flt: IndexFilter) -> np.ndarray:
        import numpy as np

        mask = self.live.copy()

        def allow(field: str, values: Iterable[str] | None, keep: bool = True) -> None:
            nonlocal mask
            if values is None:
                return
            table = self.codes[field]
            # a lookup table indexed by code: one gather, where np.isin sorts the column
            admitted = np.zeros(len(table) + 1, dtype=bool)
            admitted[[table[v] for v in values if v in table]] = True
            inside = admitted[self.cols[field]]
            mask &= inside if keep else ~inside

        if flt.namespaces is not None:
            names = set(flt.namespaces)
            if flt.namespace_subtrees:
                names |= {ns for ns in self.codes["namespace"]
                          if any(ns.startswith(g + ":") for g in flt.namespaces)}
            allow("namespace", names)
        allow("type", flt.types)
        if flt.exclude_types:
            allow("type", flt.exclude_types, keep=False)
        allow("lifecycle_status", flt.lifecycle_statuses)
        allow("sensitivity", flt.sensitivities)
        allow("review_status", flt.review_statuses)
        allow("origin", flt.origins)
        if flt.tags is not None:
            raise ValueError("the vector index holds no tags: resolve them to page_ids first")
        if flt.page_ids is not None:
            mask &= self._pages(flt.page_ids)
        if flt.exclude_page_ids:
            mask &= ~self._pages(flt.exclude_page_ids)
        if flt.since:
            mask &= self.stamp >= flt.since.encode()
        if flt.until:
            # inclusive prefix bound: "2024-05" admits every stamp that starts with it
            until = flt.until.encode()
            mask &= (self.stamp <= until) | np.char.startswith(self.stamp, until)
        return mask


def _schema(db: sqlite3.Connection) -> None:
    db.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
    db.execute(
        "CREATE TABLE chunks(row INTEGER PRIMARY KEY, path TEXT, page_id TEXT, revision_id TEXT, "
        "start INTEGER, end INTEGER, namespace TEXT, type TEXT, lifecycle_status TEXT, "
        "sensitivity TEXT, review_status TEXT, origin TEXT, timestamp TEXT, mtime_ns INTEGER, "
        "live INTEGER, seq INTEGER)")
    db.execute("CREATE INDEX chunks_path ON chunks(path) WHERE live=1")
    db.execute("CREATE INDEX chunks_seq ON chunks(seq)")
    db.execute("CREATE TABLE pages(path TEXT PRIMARY KEY, hash TEXT, first_row INTEGER, "
               "n_rows INTEGER)")


def _fsync(path: Path) -> None:
    if not path.exists():
        path.touch()
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_current(directory: Path, gen: int) -> None:
    tmp = directory / f"current.json.{os.getpid()}.tmp"
    tmp.write_text(json.dumps({"gen": gen}), encoding="utf-8")
    _fsync(tmp)
    os.replace(tmp, directory / "current.json")
