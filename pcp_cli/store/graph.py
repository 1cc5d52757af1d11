"""How many revisions and graph heads each page has, without reading every revision file.

`pcp status` needs, for every page, whether its revision graph has more than one head (it has
diverged) and whether it has revisions at all (a head file may be missing). Reading every
revision file for that took over a minute at 100,000 pages. The answer only changes when a file
is added to or removed from the page's revision folder (revision files are immutable, and git
replaces a file by unlinking it), which changes the folder's mtime. So the counts are kept per
folder mtime in `.pcp/graph.sqlite` (derived, like the catalog: delete it and it is rebuilt)
and a folder is listed and its revisions read again only when its mtime moved.

Every folder is still statted on every call (nothing else sees a file added to it), but the
(name, mtime) pairs fold into 4,096 bucket fingerprints, as the catalog does for head files:
an unchanged store loads no rows at all, only those of the few pages whose graph is not a
single head (diverged, or an empty folder) through a partial index, and a changed folder costs
the rows of its bucket. The folders are statted relative to an open descriptor of `revisions/`
where the platform allows it (one path component to resolve instead of the whole path).

A folder whose mtime is within `RACY_NS` of the time it was summarized is not remembered: a
file added in the same clock tick would not move the mtime (git's "racily clean" problem); it
is listed as pending and looked at again next time. Where `.pcp/` cannot be written, every
folder is read each time: slower, never stale.

With the store monitor running (store/changes/monitor.py), no folder is statted but those it names:
`summaries` asks it which page folders gained or lost a file since the token kept in
`graph.sqlite`, looks at those and the pending ones only, and keeps the new token. Whenever
the monitor cannot vouch (none running, restarted, too many folders to watch, an overflow),
every folder is statted as above. Either way the rows and fingerprints stay what a full pass
would leave, so the two can take turns.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat
import time
import zlib
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pcp_cli.errors import PcpError
from pcp_cli.store.atomic import is_temp_name

if TYPE_CHECKING:
    from pcp_cli.store.store import Store

DB_NAME = "graph.sqlite"
SCHEMA = "2"
RACY_NS = 2_000_000_000
BUCKETS = 4096  # a power of two: bucket = crc32(page id) & (BUCKETS - 1)
_MASK64 = (1 << 64) - 1
# What a row is unless its page has exactly one head: what `Graphs.unsettled` lists.
UNSETTLED = "heads != 1"


@dataclass(frozen=True)
class PageGraph:
    page_id: str
    revisions: int  # revision files in the page's folder
    heads: int  # revisions no other revision names as a parent; -1 when one cannot be read


@dataclass(frozen=True)
class Graphs:
    """The revision folders at a glance: which pages have revisions, and the few whose graph
    is not a single head (`heads` 0 for an empty folder, 2+ diverged, -1 unreadable)."""

    page_ids: frozenset[str] | None  # folders holding at least one revision
    unsettled: tuple[PageGraph, ...]  # sorted by page id; every folder with heads != 1
    # Names every folder and its mtime when all of them are remembered (none too recent to
    # trust): equal tokens, same folders with the same files. None: no such promise.
    token: str | None = None
    # When the monitor vouched (no folder was listed): None, and `empty` names the folders
    # holding no revision; `without_head_file` lists revisions/ if it needs the names.
    empty: frozenset[str] = frozenset()


def summaries(store: Store) -> Graphs:
    """Every page folder under `revisions/`: those holding at least one revision, and the
    summaries of those whose graph is not one head."""
    from pcp_cli.store.changes import monitor

    db = _open(store.layout.local / DB_NAME)
    answer = None
    if db is not None:
        # Asked before any folder is looked at: a change made meanwhile is named again.
        answer = monitor.ask_revisions(store.root, _meta(db, "monitor_token"))
        if answer is not None and answer[1] is not None and _fingerprints(db) is not None:
            named = _named(store, db, answer[1], answer[0])
            if named is not None:
                return named
    return _every_folder(store, db, None if answer is None else answer[0])


def _every_folder(store: Store, db: sqlite3.Connection | None,
                  monitor_token: str | None) -> Graphs:
    """`summaries` by a stat of every folder; `monitor_token` (taken before) is kept for the
    next call."""
    listed = _list_folders(store.layout.revisions)
    if listed is None:
        if db is not None:
            db.close()
        return Graphs(frozenset(), ())
    mask = BUCKETS - 1
    sums = [0] * BUCKETS
    keyed: list[tuple[str, int, int]] = []  # (name, mtime_ns, bucket)
    crc32, adler32 = zlib.crc32, zlib.adler32
    for name, mtime in listed:
        raw = name.encode()
        c = crc32(raw)
        b = c & mask
        sums[b] += hash((c, adler32(raw), mtime))
        keyed.append((name, mtime, b))
    sums = [x & _MASK64 for x in sums]
    stored = _fingerprints(db)
    if stored is None:
        check = set(range(BUCKETS))
    else:
        check = {b for b in range(BUCKETS) if sums[b] != stored[b]}
    known: dict[str, tuple[int, int, int]] = {}
    unsettled: dict[str, tuple[int, int]] = {}
    if db is not None:
        if len(check) > BUCKETS // 8:
            check = set(range(BUCKETS))  # many changed: compare every folder with its row
            known = _rows(db)
        else:
            ordered = sorted(check)
            for i in range(0, len(ordered), 500):
                chunk = ordered[i:i + 500]
                known.update(_rows(db, f"bucket IN ({','.join('?' * len(chunk))})", chunk))
        # The settled majority is never loaded: only rows whose graph is not one head.
        unsettled = {name: (revisions, heads) for name, (_m, revisions, heads)
                     in _rows(db, UNSETTLED).items()}
    now = time.time_ns()
    fresh: list[tuple[str, int, int, int, int]] = []
    present: set[str] = set()
    stale: list[str] = []
    empty: set[str] = set()
    pending: list[str] = []
    for name, mtime, b in keyed:
        if b not in check:
            continue
        present.add(name)
        cached = known.get(name)
        if cached is not None and cached[0] == mtime:
            revisions, heads = cached[1], cached[2]
        else:
            revisions, heads = _summarize(store, name)
            if heads >= 0 and now - mtime > RACY_NS:
                fresh.append((name, mtime, revisions, heads, b))
            else:
                pending.append(name)
                if cached is not None:
                    stale.append(name)  # its row is out of date and not replaced: dropped
        unsettled.pop(name, None)
        if heads != 1:
            unsettled[name] = (revisions, heads)
    gone = [name for name in known if name not in present]
    for name in gone:
        unsettled.pop(name, None)
    for name, (revisions, _heads) in unsettled.items():
        if not revisions:
            empty.add(name)
    token = None
    if db is not None:
        kept = _stored_sums(sums, check, keyed, fresh, known, stored)
        if kept == sums:
            token = hashlib.sha256(array("Q", sums).tobytes()).hexdigest()
        _save(db, fresh, gone + stale, kept, pending, monitor_token)
    names = frozenset(name for name, _m in listed if name not in empty)
    return Graphs(names, tuple(PageGraph(name, revisions, heads) for name, (revisions, heads)
                               in sorted(unsettled.items()) if revisions), token)


def _named(store: Store, db: sqlite3.Connection, named: list[str], monitor_token: str
           ) -> Graphs | None:
    """`summaries` when the monitor vouched that only the folders `named` changed since the
    kept token: those and the pending ones are looked at, the rest is the table's. The rows,
    fingerprints and pending list are left as a full pass would leave them. None when the
    table cannot say (then the caller stats every folder)."""
    try:
        pending = json.loads(_meta(db, "pending") or "[]")
        stored = _fingerprints(db)
        unsettled = {name: (revisions, heads) for name, (_m, revisions, heads)
                     in _rows(db, UNSETTLED).items()}
    except (sqlite3.Error, ValueError):
        return None
    if stored is None or not isinstance(pending, list):
        return None
    check = sorted({*named, *(str(p) for p in pending)})
    known: dict[str, tuple[int, int, int]] = {}
    for i in range(0, len(check), 500):
        chunk = check[i:i + 500]
        known.update(_rows(db, f"page_id IN ({','.join('?' * len(chunk))})", chunk))
    sums = [int(x) for x in stored]
    folder = store.layout.revisions
    now = time.time_ns()
    fresh: list[tuple[str, int, int, int, int]] = []
    gone: list[str] = []
    still: list[str] = []
    for name in check:
        cached = known.get(name)
        b = zlib.crc32(name.encode()) & (BUCKETS - 1)
        if cached is not None:
            sums[b] -= _folder_hash(name, cached[0])
        unsettled.pop(name, None)
        try:
            st = os.lstat(folder / name)
        except OSError:
            st = None
        if st is None or not stat.S_ISDIR(st.st_mode):
            if cached is not None:
                gone.append(name)
            continue
        mtime = st.st_mtime_ns
        # Read again even when its mtime did not move: the monitor saw a name come or go.
        revisions, heads = _summarize(store, name)
        if heads >= 0 and now - mtime > RACY_NS:
            fresh.append((name, mtime, revisions, heads, b))
            sums[b] += _folder_hash(name, mtime)
        else:
            still.append(name)
            if cached is not None:
                gone.append(name)
        if heads != 1:
            unsettled[name] = (revisions, heads)
    sums = [x & _MASK64 for x in sums]
    token = None if still else hashlib.sha256(array("Q", sums).tobytes()).hexdigest()
    _save(db, fresh, gone, sums, still, monitor_token)
    empty = frozenset(name for name, (revisions, _h) in unsettled.items() if not revisions)
    return Graphs(None, tuple(PageGraph(name, revisions, heads) for name, (revisions, heads)
                              in sorted(unsettled.items()) if revisions), token, empty)


def _folder_hash(name: str, mtime: int) -> int:
    """One folder's part of its bucket's fingerprint (as `summaries` sums them)."""
    raw = name.encode()
    return hash((zlib.crc32(raw), zlib.adler32(raw), mtime))


def _meta(db: sqlite3.Connection, key: str) -> str | None:
    try:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    except sqlite3.Error:
        return None
    return None if row is None else str(row[0])


def without_head_file(store: Store, graphs: Graphs) -> list[str]:
    """The page ids (sorted) whose folder holds revisions but which have no catalog row (no
    head file), for a catalog refreshed just before. Remembered per (catalog identity and
    position, folders' token): listing the catalog's 100,000 page ids costs ~70 ms, and both
    sides change only when one of those does."""
    catalog = store.catalog
    key = None if graphs.token is None else \
        f"{catalog.identity()}:{catalog.seq()}:{graphs.token}"
    db = _open(store.layout.local / DB_NAME) if key is not None else None
    if db is not None:
        try:
            row = db.execute("SELECT value FROM meta WHERE key='without_head'").fetchone()
            if row is not None:
                saved = json.loads(row[0])
                if saved.get("key") == key:
                    db.close()
                    return [str(page_id) for page_id in saved["page_ids"]]
        except (sqlite3.Error, ValueError, TypeError, KeyError):
            pass
    page_ids = graphs.page_ids
    if page_ids is None:  # the monitor vouched: the folders' names, without a stat of each
        page_ids = frozenset(name for name, _m in _list_folders(store.layout.revisions,
                                                                 mtimes=False) or ()
                             if name not in graphs.empty)
    found = sorted(page_ids - catalog.page_ids())
    if db is not None:
        try:
            db.execute("INSERT OR REPLACE INTO meta VALUES('without_head', ?)",
                       (json.dumps({"key": key, "page_ids": found}),))
        except sqlite3.Error:
            pass
        finally:
            db.close()
    return found


def revision_count(store: Store, page_id: str) -> int:
    """How many revision files the page's folder holds (as `summaries` counts them)."""
    try:
        names = os.listdir(store.layout.revisions / page_id)
    except OSError:
        return 0
    return sum(1 for n in names if n.endswith(".json") and not is_temp_name(n))


def _list_folders(folder: Path, *, mtimes: bool = True) -> list[tuple[str, int]] | None:
    """(name, mtime_ns) of every folder in `folder`, None if it does not exist (`mtimes=False`:
    the names only, each with mtime 0, from the listing alone)."""
    if not mtimes:
        try:
            with os.scandir(folder) as it:
                return [(e.name, 0) for e in it if e.is_dir(follow_symlinks=False)]
        except FileNotFoundError:
            return None
    try:
        if os.scandir in os.supports_fd:
            fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            try:  # DirEntry.stat() resolves the name relative to the open folder
                with os.scandir(fd) as it:
                    return [(e.name, e.stat(follow_symlinks=False).st_mtime_ns)
                            for e in it if e.is_dir(follow_symlinks=False)]
            finally:
                os.close(fd)
        with os.scandir(folder) as it:
            return [(e.name, e.stat(follow_symlinks=False).st_mtime_ns)
                    for e in it if e.is_dir(follow_symlinks=False)]
    except FileNotFoundError:  # (a file where the folder must be is StoreDamaged upstream)
        return None


def _summarize(store: Store, page_id: str) -> tuple[int, int]:
    try:
        names = os.listdir(store.layout.revisions / page_id)
    except OSError:
        return 0, 0
    count = sum(1 for n in names if n.endswith(".json") and not is_temp_name(n))
    if count <= 1:
        return count, count  # one revision is its own head: nothing to read
    try:
        return count, len(store.graph_heads(page_id))
    except PcpError:  # a damaged or foreign folder: counted, never remembered
        return count, -1


def _open(path: Path) -> sqlite3.Connection | None:
    for attempt in range(2):
        try:
            db = sqlite3.connect(path, isolation_level=None, timeout=5)
            db.execute("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)")
            row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None or row[0] != SCHEMA:
                db.execute("DROP TABLE IF EXISTS graph")
                db.execute("DELETE FROM meta")
                db.execute("INSERT INTO meta VALUES('schema', ?)", (SCHEMA,))
            db.execute("CREATE TABLE IF NOT EXISTS graph(page_id TEXT PRIMARY KEY, "
                       "mtime_ns INTEGER, revisions INTEGER, heads INTEGER, bucket INTEGER)")
            db.execute("CREATE INDEX IF NOT EXISTS graph_bucket ON graph(bucket)")
            db.execute(f"CREATE INDEX IF NOT EXISTS graph_unsettled ON graph(page_id) "
                       f"WHERE {UNSETTLED}")
            return db
        except sqlite3.DatabaseError:  # not a database (any more): derived, so start afresh
            if attempt:
                return None
            try:
                path.unlink(missing_ok=True)
            except OSError:
                return None
        except (sqlite3.Error, OSError):  # a read-only .pcp/: no memory, read every folder
            return None
    return None


def _rows(db: sqlite3.Connection, where: str = "", params: tuple[int, ...] | list[int] = ()
          ) -> dict[str, tuple[int, int, int]]:
    """page id -> (mtime_ns, revisions, heads) of the rows `where` selects."""
    return {row[0]: (row[1], row[2], row[3]) for row in db.execute(
        "SELECT page_id, mtime_ns, revisions, heads FROM graph"
        + (f" WHERE {where}" if where else ""), tuple(params))}


def _fingerprints(db: sqlite3.Connection | None) -> array[int] | None:
    if db is None:
        return None
    try:
        row = db.execute("SELECT value FROM meta WHERE key='fingerprints'").fetchone()
    except sqlite3.Error:
        return None
    if row is None or not isinstance(row[0], bytes):
        return None
    sums = array("Q")
    sums.frombytes(row[0])
    return sums if len(sums) == BUCKETS else None


def _stored_sums(sums: list[int], check: set[int], keyed: list[tuple[str, int, int]],
                 fresh: list[tuple[str, int, int, int, int]],
                 known: dict[str, tuple[int, int, int]], stored: array[int] | None
                 ) -> list[int]:
    """The fingerprints of what the table will hold after this call: a checked bucket's sum
    counts only the folders remembered (a folder not remembered, too recent or unreadable,
    keeps its bucket looked at next time)."""
    remembered = {name: mtime for name, mtime, *_ in fresh}
    out = list(sums) if stored is None else [int(x) for x in stored]
    mask = BUCKETS - 1
    crc32, adler32 = zlib.crc32, zlib.adler32
    for b in check:
        out[b] = 0
    for name, mtime, b in keyed:
        if b not in check:
            continue
        cached = known.get(name)
        if name in remembered or (cached is not None and cached[0] == mtime):
            raw = name.encode()
            c = crc32(raw)
            out[c & mask] += hash((c, adler32(raw), mtime))
    return [x & _MASK64 for x in out]


def _save(db: sqlite3.Connection, fresh: list[tuple[str, int, int, int, int]],
          gone: list[str], sums: list[int], pending: list[str],
          monitor_token: str | None) -> None:
    """Keep what a pass found: rows, fingerprints, the folders not yet remembered (looked at
    again next time) and the monitor's token taken before the pass (None: no monitor; the
    next pass that has one stats every folder)."""
    try:
        row = db.execute("SELECT value FROM meta WHERE key='fingerprints'").fetchone()
        blob = array("Q", sums).tobytes()
        listed = json.dumps(sorted(pending))
        if not fresh and not gone and row is not None and row[0] == blob and \
                (_meta(db, "pending") or "[]") == listed and \
                _meta(db, "monitor_token") == monitor_token:
            return
        db.execute("BEGIN IMMEDIATE")
        db.executemany("INSERT OR REPLACE INTO graph VALUES(?, ?, ?, ?, ?)", fresh)
        db.executemany("DELETE FROM graph WHERE page_id = ?", [(name,) for name in gone])
        db.execute("INSERT OR REPLACE INTO meta VALUES('fingerprints', ?)", (blob,))
        db.execute("INSERT OR REPLACE INTO meta VALUES('pending', ?)", (listed,))
        if monitor_token is None:
            db.execute("DELETE FROM meta WHERE key = 'monitor_token'")
        else:
            db.execute("INSERT OR REPLACE INTO meta VALUES('monitor_token', ?)",
                       (monitor_token,))
        db.execute("COMMIT")
    except sqlite3.Error:
        pass  # memory only: the next run reads those folders again
    finally:
        db.close()
