"""How many revisions and graph heads each page has, without reading every revision file.

`pcp status` needs, for every page, whether its revision graph has more than one head (it has
diverged) and whether it has revisions at all (a head file may be missing). Reading every
revision file for that took over a minute at 100,000 pages. The answer only changes when a file
is added to or removed from the page's revision folder (revision files are immutable, and git
replaces a file by unlinking it), which changes the folder's mtime. So the counts are kept per
folder mtime in `.pcp/graph.sqlite` (derived, like the catalog: delete it and it is rebuilt)
and a folder is listed and its revisions read again only when its mtime moved.

A folder whose mtime is within `RACY_NS` of the time it was summarized is not remembered: a
file added in the same clock tick would not move the mtime (git's "racily clean" problem).
Where `.pcp/` cannot be written, every folder is read each time: slower, never stale.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pcp_cli.errors import PcpError
from pcp_cli.store.atomic import is_temp_name

if TYPE_CHECKING:
    from pcp_cli.store.store import Store

DB_NAME = "graph.sqlite"
SCHEMA = "1"
RACY_NS = 2_000_000_000


@dataclass(frozen=True)
class PageGraph:
    page_id: str
    revisions: int  # revision files in the page's folder
    heads: int  # revisions no other revision names as a parent; -1 when one cannot be read


def summaries(store: Store) -> list[PageGraph]:
    """Every page folder under `revisions/` that holds at least one revision, sorted by id."""
    folder = store.layout.revisions
    try:
        with os.scandir(folder) as it:
            dirs = [(e.name, e.stat().st_mtime_ns) for e in it if e.is_dir()]
    except FileNotFoundError:
        return []
    db = _open(store.layout.local / DB_NAME)
    known: dict[str, tuple[int, int, int]] = {}
    if db is not None:
        known = {row[0]: (row[1], row[2], row[3])
                 for row in db.execute("SELECT page_id, mtime_ns, revisions, heads FROM graph")}
    now = time.time_ns()
    fresh: list[tuple[str, int, int, int]] = []
    found: list[PageGraph] = []
    for name, mtime in sorted(dirs):
        cached = known.get(name)
        if cached is not None and cached[0] == mtime:
            revisions, heads = cached[1], cached[2]
        else:
            revisions, heads = _summarize(store, name)
            if heads >= 0 and now - mtime > RACY_NS:
                fresh.append((name, mtime, revisions, heads))
        if revisions:
            found.append(PageGraph(name, revisions, heads))
    if db is not None:
        _save(db, fresh, {name for name, _ in dirs}, known)
    return found


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
                db.execute("INSERT OR REPLACE INTO meta VALUES('schema', ?)", (SCHEMA,))
            db.execute("CREATE TABLE IF NOT EXISTS graph(page_id TEXT PRIMARY KEY, "
                       "mtime_ns INTEGER, revisions INTEGER, heads INTEGER)")
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


def _save(db: sqlite3.Connection, fresh: list[tuple[str, int, int, int]], present: set[str],
          known: dict[str, tuple[int, int, int]]) -> None:
    gone = [(name,) for name in known if name not in present]
    if not fresh and not gone:
        db.close()
        return
    try:
        db.execute("BEGIN IMMEDIATE")
        db.executemany("INSERT OR REPLACE INTO graph VALUES(?, ?, ?, ?)", fresh)
        db.executemany("DELETE FROM graph WHERE page_id = ?", gone)
        db.execute("COMMIT")
    except sqlite3.Error:
        pass  # memory only: the next run reads those folders again
    finally:
        db.close()
