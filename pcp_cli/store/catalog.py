"""The catalog: a SQLite cache under `.pcp/` of what every head file says, kept current cheaply.

It answers "which pages are there, of what type, in which scope, changed since when" without
opening every file, so `pcp ls`, stats, the micro_prompt and the search index's change scan stay
fast on large stores. It is derived only from the files under `pages/` and can be deleted at
any time; a missing or corrupt catalog is rebuilt by a full scan.

Change detection: every row remembers the stat it was read at (mtime, size, ctime, inode) and
the SHA-256 of the bytes. Every refresh stats every head file, at every size: a file rewritten
in place (same inode, same folder mtime: how many editors save) is seen by the next search. The
stats are folded into 4,096 bucket fingerprints (bucket = CRC-32 of the path), so an unchanged
store loads no rows at all and a changed file costs the rows of its bucket, not of its folder.
The ctime catches an edit that kept the size and put the mtime back (`touch -r`); a row read
within one timestamp tick of the file's last change is *racy* (a same-size rewrite in that tick
would leave every stat field as it was), and the next scan compares its content hash. A
*verify* scan (`pcp doctor`, `pcp index`) compares the content hash of every file.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
import time
import uuid
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcp_cli.store.files import FileStat, head_files, head_stat

if TYPE_CHECKING:
    from pcp_cli.model.page import PageState

SCHEMA_VERSION = "8"
BUCKETS = 4096  # a power of two: bucket = crc32(path) & (BUCKETS - 1)
# A file changed this close to the moment its content was read may be rewritten again within
# the same timestamp tick, leaving its stat as it was. Linux file systems keep nanoseconds but
# step them by a clock tick (at most 10 ms); a whole-second timestamp means a coarse file
# system (FAT: 2 s, some network file systems: 1 s).
RACY_FINE_NS = 50_000_000
RACY_COARSE_NS = 2_000_000_000
APPLY_CHUNK = 2_000  # files read by a scan that are parsed and written in one transaction
PENDING = "edited = 1 OR problem LIKE 'new file%'"
# Rows `pcp status` lists (hand edits, new, conflicted and invalid files): a partial index, so
# that status at 100,000 pages looks up its few rows instead of scanning the table (~140 ms).
UNSETTLED = "problem IS NOT NULL OR edited = 1"

# `pcp ls`'s order, newest first: what `sorted(key=(updated_at or "", page_id or ""),
# reverse=True)` gives over rows in path order (a stable sort keeps equal keys in path order).
RECENT_ORDER = "COALESCE(updated_at, '') DESC, COALESCE(page_id, '') DESC, path"
# Indexes added after schema 6 shipped: built once on a catalog that lacks them.
_LATE_INDEXES = {
    # `pcp status` looks up its few rows instead of scanning the table (~140 ms at 100k)
    "pages_unsettled": f"CREATE INDEX IF NOT EXISTS pages_unsettled ON pages(path) "
                       f"WHERE {UNSETTLED}",
    # `pcp ls --limit N` reads N rows in RECENT_ORDER instead of sorting every row
    # (walked backwards: `path DESC` in the index is RECENT_ORDER's `path` ascending)
    "pages_recent": "CREATE INDEX IF NOT EXISTS pages_recent ON pages("
                    "COALESCE(updated_at, ''), COALESCE(page_id, ''), path DESC)",
    # `namespaces()` (every search resolves its scopes with it) steps from one namespace to
    # the next in this index instead of scanning the table (~100 ms at 100k pages -> 0.1 ms).
    # Partial, so that only a query naming a namespace can use it: the whole-table GROUP BY
    # namespace of `pcp stats` keeps its plans (with a plain index SQLite walked it instead).
    "pages_namespace": "CREATE INDEX IF NOT EXISTS pages_namespace ON pages(namespace) "
                       "WHERE namespace IS NOT NULL",
}
# Indexes of schema 7 (built once, like the late ones, on a schema-7 catalog that lacks one).
_INDEXES_7 = {
    # `pcp timeline list` shows every event: `details` of them read from this index alone, in
    # path order (a look-up of each row in the table was two thirds of the query at 100k)
    "pages_timeline": "CREATE INDEX IF NOT EXISTS pages_timeline ON pages(type, path, page_id, "
                      "revision_id, namespace, lifecycle_status, review_status, sensitivity, "
                      "origin, edited, problem, record, detail) WHERE type = 'timeline_event'",
    # and its `type_stamp` from this small one (0.6 ms instead of 9 ms over the one above)
    "pages_timeline_stamp": "CREATE INDEX IF NOT EXISTS pages_timeline_stamp ON pages(type, "
                            "seq, edited) WHERE type = 'timeline_event'",
}


# Schema 8: what `pcp stats`, `pcp_stats` and ListScopes show, without a pass over the rows
# (at 100k pages that pass was 60-90 ms of every call, at 1M over a second).
# - `tally`: how many readable rows (problem IS NULL, a page id) there are of each (namespace,
#   type, origin, lifecycle_status, review_status, sensitivity), kept by triggers as rows are
#   inserted, updated and deleted, so it is right whichever code path wrote the row. A key is
#   the JSON array of those six values (NULL kept as null).
# - two indexes that end in a time, so that the earliest or newest time of one such group is
#   one seek (`bound`): there are tens of groups, not a row per page.
_TALLIED = "{0}.problem IS NULL AND {0}.page_id IS NOT NULL"
_TALLY_KEY = ("json_array({0}.namespace, {0}.type, {0}.origin, {0}.lifecycle_status, "
              "{0}.review_status, {0}.sensitivity)")
_TALLY = (
    "CREATE TABLE IF NOT EXISTS tally(key TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID",
    f"CREATE TRIGGER IF NOT EXISTS tally_insert AFTER INSERT ON pages "
    f"WHEN {_TALLIED.format('NEW')} BEGIN "
    f"INSERT INTO tally VALUES({_TALLY_KEY.format('NEW')}, 1) "
    f"ON CONFLICT(key) DO UPDATE SET n = n + 1; END",
    f"CREATE TRIGGER IF NOT EXISTS tally_delete AFTER DELETE ON pages "
    f"WHEN {_TALLIED.format('OLD')} BEGIN "
    f"UPDATE tally SET n = n - 1 WHERE key = {_TALLY_KEY.format('OLD')}; END",
    f"CREATE TRIGGER IF NOT EXISTS tally_update AFTER UPDATE OF namespace, type, origin, "
    f"lifecycle_status, review_status, sensitivity, problem, page_id ON pages BEGIN "
    f"UPDATE tally SET n = n - 1 WHERE {_TALLIED.format('OLD')} "
    f"AND key = {_TALLY_KEY.format('OLD')}; "
    f"INSERT INTO tally SELECT {_TALLY_KEY.format('NEW')}, 1 WHERE {_TALLIED.format('NEW')} "
    f"ON CONFLICT(key) DO UPDATE SET n = n + 1; END",
)
_TALLY_FILL = ("INSERT INTO tally SELECT " + _TALLY_KEY.format("pages") + ", COUNT(*) FROM pages "
               "WHERE " + _TALLIED.format("pages") + " GROUP BY 1")
# A row's activity: its newest time, `updated_at`, else `created_at` (ListScopes'
# `last_activity`).
ACTIVITY = "COALESCE(NULLIF(updated_at, ''), NULLIF(created_at, ''))"
_INDEXES_8 = {
    "pages_observed_at": "CREATE INDEX IF NOT EXISTS pages_observed_at ON pages(namespace, "
                         "review_status, lifecycle_status, sensitivity, observed) WHERE "
                         "problem IS NULL AND page_id IS NOT NULL AND observed IS NOT NULL",
    "pages_activity": f"CREATE INDEX IF NOT EXISTS pages_activity ON pages(namespace, "
                      f"review_status, lifecycle_status, sensitivity, {ACTIVITY}) WHERE "
                      f"problem IS NULL AND page_id IS NOT NULL",
}


# `SELECT DISTINCT namespace FROM pages WHERE namespace IS NOT NULL ORDER BY 1` as a skip scan:
# each step is one seek in pages_namespace, so it costs the number of namespaces, not of rows
# (without the index, each step would scan the table: the plain query is used then).
_NAMESPACES_SKIP_SCAN = (
    "WITH RECURSIVE ns(name) AS ("
    " SELECT MIN(namespace) FROM pages WHERE namespace IS NOT NULL"
    " UNION ALL SELECT (SELECT MIN(namespace) FROM pages WHERE namespace > ns.name)"
    " FROM ns WHERE ns.name IS NOT NULL)"
    " SELECT name FROM ns WHERE name IS NOT NULL")

_COLUMNS = (
    "path",
    "page_id",
    "revision_id",
    "content_hash",
    "type",
    "namespace",
    "title",
    "lifecycle_status",
    "review_status",
    "origin",
    "sensitivity",
    "tags",
    "record",
    "created_at",
    "updated_at",
    "mtime_ns",
    "size",
    "problem",
    "edited",
    "seq",
    "digest",
)
# Columns only the change scan reads (not part of an Entry).
_STAT_COLUMNS = ("ctime_ns", "ino", "bucket", "racy")
# Columns of schema 7, derived from a row's other fields when it is written (not part of an
# Entry): `observed`, the page's observed time (`OBSERVED_SQL` as the row is written: what
# stats' time range spans); `detail`, JSON of what a read shows beyond the row without opening
# the page (a timeline event's content and extensions, `_detail` below); NULL when not
# known.
_SHOWN_COLUMNS = ("observed", "detail")
_SELECT = "SELECT " + ",".join(_COLUMNS) + " FROM pages"
_MASK64 = (1 << 64) - 1


@dataclass(frozen=True)
class Entry:
    """What one head file said when it was last scanned."""

    path: str
    page_id: str | None
    revision_id: str | None
    content_hash: str | None
    type: str | None
    namespace: str | None
    title: str
    lifecycle_status: str | None
    review_status: str | None
    origin: str | None
    sensitivity: str | None
    tags: tuple[str, ...]
    record: dict[str, Any]
    created_at: str | None
    updated_at: str | None
    mtime_ns: int
    size: int
    problem: str | None  # why the file could not be read as a page, if it could not
    edited: bool  # the file differs from its recorded revision (a hand edit not yet recorded)
    seq: int
    digest: str | None  # SHA-256 of the file's bytes when scanned (what a verify scan compares)

    @property
    def is_current(self) -> bool:
        return (
            self.problem is None
            and self.lifecycle_status == "active"
            and self.review_status == "affirmed"
        )

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Entry:
        data = dict(row)
        data["tags"] = tuple(json.loads(data["tags"] or "[]"))
        data["record"] = json.loads(data["record"] or "{}")
        data["edited"] = bool(data["edited"])
        data["title"] = data["title"] or ""
        return cls(**data)


class Changes:
    """What a refresh found: the rows it wrote (`changed`) and the paths it removed.

    A scan's rows are read back from the catalog when `changed` is first asked for (`load`,
    with `count` rows): the first scan of a million-page store writes a million rows that its
    caller seldom looks at, and need not hold them all."""

    __slots__ = ("_changed", "_count", "_load", "removed")

    def __init__(self, changed: Iterable[Entry] = (), removed: Iterable[str] = (), *,
                 load: Callable[[], Iterable[Entry]] | None = None, count: int = 0) -> None:
        self._changed = tuple(changed) if load is None else None
        self._load = load
        self._count = count if self._changed is None else len(self._changed)
        self.removed = tuple(removed)

    @property
    def changed(self) -> tuple[Entry, ...]:
        if self._changed is None:
            assert self._load is not None
            self._changed, self._load = tuple(self._load()), None
        return self._changed

    def __bool__(self) -> bool:
        return bool(self._count or self.removed)


# A scanner turns (store-relative path, raw bytes, mtime_ns, size) into the row's fields.
Scanner = Callable[[str, bytes], dict[str, Any]]


def digest_of(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def entry_fields(state: PageState) -> dict[str, Any]:
    """The catalog fields a page state gives (the revision's ids and times come beside it)."""
    return {
        "page_id": state.page_id,
        "type": state.type,
        "namespace": state.namespace,
        "title": state.title,
        "lifecycle_status": state.lifecycle_status,
        "review_status": state.review_status,
        "origin": state.origin,
        "sensitivity": state.sensitivity,
        "tags": state.tags,
        "record": state.record,
        "problem": None,
        "detail": _detail(state),
    }


def _detail(state: PageState) -> dict[str, Any] | None:
    """What the catalog keeps of a page beyond its row's fields (`detail`), so that a read
    shows it without opening the page: a timeline event's content and extensions (`pcp
    timeline list` shows every event)."""
    if state.type != "timeline_event":
        return None
    return {"content": state.content, "extensions": state.extensions}


@dataclass(frozen=True)
class TallyFilter:
    """Which groups of the tally a read counts: the lifecycle and review states and the
    sensitivities it serves (None: any; an empty sequence of states: any, of sensitivities:
    none; None among the sensitivities: unclassified pages too). The same rule as the SQL
    filter reads use (store.py's `_entry_filter`)."""

    statuses: Sequence[str] | None
    review: Sequence[str] | None
    sensitivities: Sequence[str | None] | None

    def selects(self, key: Sequence[Any]) -> bool:
        """Whether a tally key (namespace, type, origin, lifecycle_status, review_status,
        sensitivity, ...) is counted."""
        return ((not self.statuses or key[3] in self.statuses)
                and (not self.review or key[4] in self.review)
                and (self.sensitivities is None or key[5] in self.sensitivities))


class Catalog:
    def __init__(self, db_path: Path, root: Path, pages_dir: Path, scan: Scanner) -> None:
        self.db_path = db_path
        self.root = root
        self.pages_dir = pages_dir
        self._scan = scan
        self._db = self._connect()
        self.walked = 0  # head files the last full scan found

    # -- connection ---------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        for attempt in range(2):
            try:
                db = sqlite3.connect(self.db_path, timeout=30, isolation_level=None)
                db.row_factory = sqlite3.Row
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                self._ensure_schema(db)
                return db
            except sqlite3.DatabaseError:
                if attempt:
                    raise
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{self.db_path}{suffix}").unlink(missing_ok=True)
        raise AssertionError("unreachable")

    def _ensure_schema(self, db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)")
        row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if row and row[0] == SCHEMA_VERSION:
            # Added after schema 6 shipped: built once on a catalog that lacks it (a no-op
            # read of the schema otherwise). Not now if another process holds the catalog's
            # write lock: queries work without it, a later open builds it.
            present = {row[0] for row in db.execute(
                "SELECT name FROM sqlite_master WHERE type='index'")}
            for name, sql in {**_LATE_INDEXES, **_INDEXES_7, **_INDEXES_8}.items():
                if name in present:
                    continue
                try:
                    db.execute("PRAGMA busy_timeout=100")
                    db.execute(sql)
                except sqlite3.OperationalError:
                    pass
                finally:
                    db.execute("PRAGMA busy_timeout=30000")
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row and row[0] == SCHEMA_VERSION:
                db.execute("COMMIT")
                return
            if row and row[0] in ("5", "6", "7"):
                if row[0] == "5":
                    self._upgrade_from_5(db)
                if row[0] in ("5", "6"):
                    self._upgrade_from_6(db)
                self._upgrade_from_7(db)
            else:
                self._create(db)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    @staticmethod
    def _create(db: sqlite3.Connection) -> None:
        for table in ("pages", "dirs", "removed"):
            db.execute(f"DROP TABLE IF EXISTS {table}")
        db.execute(
            "CREATE TABLE pages(path TEXT PRIMARY KEY, page_id TEXT, revision_id TEXT, "
            "content_hash TEXT, type TEXT, namespace TEXT, title TEXT, "
            "lifecycle_status TEXT, review_status TEXT, origin TEXT, sensitivity TEXT, "
            "tags TEXT, record TEXT, created_at TEXT, updated_at TEXT, mtime_ns INTEGER, "
            "size INTEGER, problem TEXT, edited INTEGER, seq INTEGER, digest TEXT, "
            "ctime_ns INTEGER, ino INTEGER, bucket INTEGER, racy INTEGER, observed TEXT, "
            "detail TEXT)"
        )
        db.execute("CREATE INDEX pages_page_id ON pages(page_id)")
        db.execute("CREATE INDEX pages_type ON pages(type)")
        db.execute("CREATE INDEX pages_seq ON pages(seq)")
        # A partial index for `pending()`: on a 100,000-page store it turns the scan every
        # writable open does (~70 ms) into a lookup (~0.05 ms). SQLite uses it only when the
        # query's WHERE is this one, so both live here.
        db.execute(f"CREATE INDEX pages_pending ON pages(path) WHERE {PENDING}")
        Catalog._add_scan_indexes(db)
        for sql in (*_INDEXES_7.values(), *_INDEXES_8.values(), *_TALLY):
            db.execute(sql)
        db.execute("CREATE TABLE removed(path TEXT, page_id TEXT, seq INTEGER)")
        db.execute("DELETE FROM meta")
        db.execute("INSERT INTO meta VALUES('schema', ?)", (SCHEMA_VERSION,))
        db.execute("INSERT INTO meta VALUES('seq', '0')")
        db.execute("INSERT INTO meta VALUES('scanned', '0')")

    @staticmethod
    def _add_scan_indexes(db: sqlite3.Connection) -> None:
        db.execute("CREATE INDEX pages_bucket ON pages(bucket)")
        for sql in _LATE_INDEXES.values():
            db.execute(sql)
        db.execute("CREATE INDEX pages_racy ON pages(path) WHERE racy = 1")

    @staticmethod
    def _upgrade_from_5(db: sqlite3.Connection) -> None:
        """Schema 5 lacked ctime, inode, bucket and racy: add them empty, keeping every row,
        its sequence and the catalog's identity (so the search index follows on). The next
        scan finds no bucket fingerprints, compares every row and, where only the stat is
        unknown, the content hash: files are read once, never re-parsed."""
        for column in _STAT_COLUMNS:
            db.execute(f"ALTER TABLE pages ADD COLUMN {column} INTEGER")
        Catalog._add_scan_indexes(db)
        db.execute("DROP TABLE IF EXISTS dirs")
        db.execute("UPDATE meta SET value=? WHERE key='schema'", (SCHEMA_VERSION,))

    @staticmethod
    def _upgrade_from_6(db: sqlite3.Connection) -> None:
        """Schema 6 lacked `observed` and `detail`: both are added, `observed` filled in SQL
        (`OBSERVED_SQL`, the same rule) without reading a file; `detail` stays NULL until a
        row is written again or a read fills it (`set_details`). Rows and sequence are kept."""
        for column in _SHOWN_COLUMNS:
            db.execute(f"ALTER TABLE pages ADD COLUMN {column} TEXT")
        db.execute(f"UPDATE pages SET observed = (SELECT CASE WHEN substr(o, 1, 4) GLOB "
                   f"'[0-9][0-9][0-9][0-9]' THEN o END FROM (SELECT {OBSERVED_SQL} AS o))")
        for sql in _INDEXES_7.values():
            db.execute(sql)

    @staticmethod
    def _upgrade_from_7(db: sqlite3.Connection) -> None:
        """Schema 7 counted stats and ListScopes with a pass over the rows: the tally and its
        triggers are added and filled in one pass (rows, sequence and identity are kept, so the
        search index follows on), and the indexes it replaces are dropped."""
        db.execute("DROP TABLE IF EXISTS tally")
        for sql in (*_TALLY, _TALLY_FILL, *_INDEXES_8.values()):
            db.execute(sql)
        for name in ("pages_groups", "pages_observed"):
            db.execute(f"DROP INDEX IF EXISTS {name}")
        db.execute("UPDATE meta SET value=? WHERE key='schema'", (SCHEMA_VERSION,))

    def close(self) -> None:
        self._db.close()

    # -- queries ------------------------------------------------------------------------------
    def entries(self, where: str = "", params: Iterable[Any] = ()) -> list[Entry]:
        sql = _SELECT + (f" WHERE {where}" if where else "") + " ORDER BY path"
        return [Entry.from_row(row) for row in self._db.execute(sql, tuple(params))]

    def each_entry(self, where: str = "", params: Iterable[Any] = (), *, batch: int = 1000
                   ) -> Iterator[Entry]:
        """`entries`, one at a time: what reads every row (an index rebuild) holds a batch of
        them, not the store's (a million Entries are over a gigabyte). Its own cursor, so the
        catalog can answer other queries meanwhile."""
        cursor = self._db.execute(_SELECT + (f" WHERE {where}" if where else "")
                                  + " ORDER BY path", tuple(params))
        while rows := cursor.fetchmany(batch):
            yield from (Entry.from_row(row) for row in rows)

    def window(self, where: str, params: Iterable[Any], limit: int, offset: int = 0
               ) -> list[Entry]:
        """At most `limit` rows `where` selects, newest first (`RECENT_ORDER`), from `offset`
        on: what a listing shows, without loading the rest."""
        sql = (_SELECT + (f" WHERE {where}" if where else "")
               + f" ORDER BY {RECENT_ORDER} LIMIT ? OFFSET ?")
        return [Entry.from_row(row) for row in self._db.execute(
            sql, (*tuple(params), limit, offset))]

    def details(self, type_: str, where: str, params: Iterable[Any] = ()
                ) -> list[tuple[Any, ...]]:
        """(path, page_id, revision_id, namespace, record, origin, detail, edited, problem) of
        the rows of type `type_` that `where` selects, in path order, as stored (record and
        detail are JSON text, detail None where not known): what a read that shows every row
        needs, without an Entry per row."""
        if not type_.isidentifier():
            raise ValueError(f"not a page type: {type_!r}")
        cursor = self._db.cursor()
        cursor.row_factory = None
        # The type is written into the statement, not bound: only then can SQLite use a
        # partial index on it (`pages_timeline`).
        return cursor.execute(
            "SELECT path, page_id, revision_id, namespace, record, origin, detail, edited, "
            f"problem FROM pages WHERE type = '{type_}' AND {where} ORDER BY path",
            tuple(params)).fetchall()

    def set_details(self, details: Iterable[tuple[str, str, Any]]) -> None:
        """Keep `detail` for rows that lack it, each given as (path, revision_id, detail): only
        where the row still names that revision and is neither edited nor unreadable. What a
        read found for rows written before `detail` existed, so the next read need not; a
        catalog that cannot be written keeps nothing."""
        rows = [(json.dumps(detail, ensure_ascii=False, sort_keys=True), path, revision_id)
                for path, revision_id, detail in details]
        if not rows:
            return
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(
                    "UPDATE pages SET detail = ? WHERE path = ? AND revision_id = ? "
                    "AND detail IS NULL AND edited = 0 AND problem IS NULL", rows)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        except sqlite3.Error:
            pass

    def unsettled(self) -> list[Entry]:
        """Head files that differ from the graph: hand edits, new files, unreadable files."""
        return self.entries(UNSETTLED)

    def groups(self, where: str = "", params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows `where` selects, counted per (namespace, type, origin, lifecycle_status):
        tuples of those four and the count (the plain SQL pass; `served_groups` counts the
        readable rows from the tally instead)."""
        return self._db.execute(
            "SELECT namespace, type, origin, lifecycle_status, COUNT(*) FROM pages"
            + (f" WHERE {where}" if where else "") + " GROUP BY 1, 2, 3, 4",
            tuple(params)).fetchall()

    def served_groups(self, wanted: TallyFilter, exclude: Sequence[str], where: str,
                      params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """`groups` of what a read serves: the readable rows `wanted` selects, from the tally
        less the pages in `exclude`, and the rows `where` selects (the few unreadable ones
        served from their revision) counted in SQL."""
        counts: dict[tuple[Any, ...], int] = {}
        for sign, rows in ((1, self.tally()), (-1, self.counted(exclude) if exclude else [])):
            for *key, n in rows:
                if wanted.selects(key):
                    group = (key[0], key[1], key[2], key[3])
                    counts[group] = counts.get(group, 0) + sign * n
        for *group, n in self.groups(where, params):
            counts[tuple(group)] = counts.get(tuple(group), 0) + n
        return [(*group, n) for group, n in counts.items() if n > 0]

    def served_ranges(self, wanted: TallyFilter, excluding: tuple[str, Sequence[Any]],
                      where: str, params: Sequence[Any]
                      ) -> list[tuple[Any, str | None, str | None]]:
        """`observed_ranges` of what a read serves: per namespace, the earliest and latest
        observed time of the readable rows `wanted` selects (`excluding` is the clause and
        parameters that leave a reader's suppressed pages out), two seeks per group of the
        tally, and of the rows `where` selects in SQL."""
        ranges: dict[Any, list[str | None]] = {}
        for group in {(k[0], k[4], k[3], k[5]) for *k, n in self.tally() if wanted.selects(k)}:
            low = self.bound("observed", group, newest=False, excluding=excluding)
            high = self.bound("observed", group, newest=True, excluding=excluding)
            row = ranges.setdefault(group[0], [None, None])
            row[0], row[1] = _oldest(row[0], low), _newest(row[1], high)
        for namespace, low, high in self.observed_ranges(where, params):
            row = ranges.setdefault(namespace, [None, None])
            row[0], row[1] = _oldest(row[0], low), _newest(row[1], high)
        return [(namespace, low, high) for namespace, (low, high) in ranges.items()]

    def served_namespaces(self, sensitivities: Sequence[str | None] | None,
                          exclude: Sequence[str], excluding: tuple[str, Sequence[Any]],
                          rest: tuple[str, Sequence[Any], str, Sequence[Any]]
                          ) -> list[tuple[Any, ...]]:
        """`namespace_counts` of the affirmed pages a read serves, per namespace: (namespace,
        active pages, their newest activity over every page, active pages one reader may read
        (`sensitivities`, less `exclude`; `excluding` is that as an SQL clause), their newest
        non-empty `updated_at`). The readable rows from the tally and one seek per group; the
        rows `rest` selects (where, params, readable, readable params: the few served from a
        revision) in SQL."""
        reader = TallyFilter(("active",), ("affirmed",), sensitivities)
        found: dict[Any, list[Any]] = {}
        groups: set[tuple[Any, ...]] = set()
        for sign, rows in ((1, self.tally()), (-1, self.counted(exclude) if exclude else [])):
            for *key, n in rows:
                if key[4] != "affirmed":
                    continue
                row = found.setdefault(key[0], [key[0], 0, None, 0, None])
                if sign > 0 and key[3] == "active":
                    row[1] += n
                if reader.selects(key):
                    row[3] += sign * n
                if sign > 0:
                    groups.add((key[0], key[4], key[3], key[5]))
        for group in groups:
            row = found[group[0]]
            row[2] = _newest(row[2], self.bound(ACTIVITY, group, newest=True))
            if reader.selects((None, None, None, group[2], group[1], group[3])):
                row[4] = _newest(row[4], self.bound(
                    ACTIVITY, group, newest=True, excluding=excluding,
                    where="NULLIF(updated_at, '') IS NOT NULL"))
        for namespace, active, activity, readable, updated in self.namespace_counts(*rest):
            row = found.setdefault(namespace, [namespace, 0, None, 0, None])
            row[1] += active
            row[2] = _newest(row[2], activity)
            row[3] += readable
            row[4] = _newest(row[4], updated)
        return [tuple(row) for row in found.values()]

    def observed_ranges(self, where: str = "", params: Iterable[Any] = ()
                        ) -> list[tuple[Any, str | None, str | None]]:
        """(namespace, earliest, latest) observed time of the rows `where` selects, in SQL
        (no Entry is built). Imported material with no time of its own has none."""
        return self._db.execute(
            "SELECT namespace, MIN(observed), MAX(observed) FROM pages WHERE observed IS NOT NULL"
            + (f" AND {where}" if where else "") + " GROUP BY 1", tuple(params)).fetchall()

    def namespace_counts(self, where: str, params: Iterable[Any], readable: str,
                         readable_params: Iterable[Any]) -> list[tuple[Any, ...]]:
        """Per namespace of the rows `where` selects, in one pass: (namespace, active rows,
        their newest `updated_at`-else-`created_at` over every row, active rows that also match
        `readable`, the newest non-empty `updated_at` of those)."""
        found: dict[Any, list[Any]] = {}
        for namespace, is_readable, active, activity, updated in self._db.execute(
                f"SELECT namespace, ({readable}), SUM(lifecycle_status = 'active'), "
                "MAX(COALESCE(NULLIF(updated_at, ''), NULLIF(created_at, ''))), "
                "MAX(CASE WHEN lifecycle_status = 'active' THEN NULLIF(updated_at, '') END) "
                "FROM pages" + (f" WHERE {where}" if where else "") + " GROUP BY 1, 2",
                (*readable_params, *params)):
            row = found.setdefault(namespace, [namespace, 0, None, 0, None])
            row[1] += active
            row[2] = _newest(row[2], activity)
            if is_readable:
                row[3] += active
                row[4] = _newest(row[4], updated)
        return [tuple(row) for row in found.values()]

    def tally(self) -> list[tuple[Any, ...]]:
        """(namespace, type, origin, lifecycle_status, review_status, sensitivity, count) of
        the readable rows (no problem, a page id), from the table the triggers keep (schema
        8): tens of rows, whatever the store's size."""
        found = []
        for key, n in self._db.execute("SELECT key, n FROM tally WHERE n > 0"):
            found.append((*json.loads(key), n))
        return found

    def counted(self, page_ids: Sequence[str]) -> list[tuple[Any, ...]]:
        """`tally`'s shape for the readable rows of these pages only (what a reader's
        suppressed pages take out of the counts)."""
        found: dict[tuple[Any, ...], int] = {}
        for start in range(0, len(page_ids), 500):
            chunk = list(page_ids[start:start + 500])
            for row in self._db.execute(
                    "SELECT namespace, type, origin, lifecycle_status, review_status, "
                    "sensitivity FROM pages WHERE problem IS NULL AND page_id IN "
                    f"({','.join('?' * len(chunk))})", chunk):
                found[tuple(row)] = found.get(tuple(row), 0) + 1
        return [(*key, n) for key, n in found.items()]

    def bound(self, column: str, group: tuple[Any, ...], *, newest: bool,
              excluding: tuple[str, Sequence[Any]] = ("", ()), where: str = "") -> str | None:
        """The earliest (or `newest`) `column` (`observed` or `ACTIVITY`: the last column of
        an index of schema 8) of the readable rows of one group (namespace, review_status,
        lifecycle_status, sensitivity) that `where` also selects, less what `excluding` (an
        ` AND page_id NOT IN` clause and its parameters) leaves out: one seek in that index,
        whatever the group's size."""
        if column not in ("observed", ACTIVITY):
            raise ValueError(f"no index ends in {column!r}")
        clause, params = excluding
        row = self._db.execute(
            f"SELECT {column} FROM pages WHERE namespace IS ? AND review_status IS ? "
            f"AND lifecycle_status IS ? AND sensitivity IS ? AND problem IS NULL "
            f"AND page_id IS NOT NULL AND {column} IS NOT NULL{clause}"
            + (f" AND {where}" if where else "")
            + f" ORDER BY {column} {'DESC' if newest else 'ASC'} LIMIT 1",
            (*group, *params)).fetchone()
        return None if row is None else row[0]

    def removed_since(self, seq: int) -> list[tuple[str, str | None]]:
        """(path, page id) of the rows removed after change number `seq`."""
        return [(row[0], row[1]) for row in self._db.execute(
            "SELECT path, page_id FROM removed WHERE seq > ?", (seq,))]

    def pending(self) -> list[Entry]:
        """Head files edited by hand, or new files, not yet recorded as revisions."""
        return self.entries(PENDING)

    def by_page_id(self, page_id: str) -> list[Entry]:
        return self.entries("page_id = ?", (page_id,))

    def page_ids(self) -> set[str]:
        """The page id of every row that has one (`pcp status`: which pages have a head file)."""
        return {row[0] for row in self._db.execute(
            "SELECT page_id FROM pages WHERE page_id IS NOT NULL")}

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM pages").fetchone()[0])

    def tagged(self, tags: Iterable[str]) -> frozenset[str]:
        """The page ids of the rows holding any of `tags`, compared case-insensitively (what a
        search's tag filter admits), without loading the rows."""
        wanted = {t.lower() for t in tags}
        return frozenset(
            pid for pid, raw in self._db.execute(
                "SELECT page_id, tags FROM pages WHERE page_id IS NOT NULL "
                "AND tags IS NOT NULL AND tags != '[]'")
            if wanted & {str(t).lower() for t in json.loads(raw or "[]")})

    def record_values(self, type_: str, key: str) -> dict[str, Any]:
        """page id -> `record[key]` of every row of `type_` whose record holds `key` (a
        keystone's `stale_after`), without loading the rows."""
        return {pid: value for pid, value in self._db.execute(
            "SELECT page_id, json_extract(record, ?) FROM pages WHERE type = ? "
            "AND page_id IS NOT NULL AND record LIKE ?",
            (f"$.{key}", type_, f'%"{key}"%')) if value is not None}

    def seq(self) -> int:
        return int(self._db.execute("SELECT value FROM meta WHERE key='seq'").fetchone()[0])

    def type_stamp(self, types: Iterable[str]) -> tuple[int, int, bool]:
        """(rows of these types, the newest `seq` among them, whether any is edited by hand):
        changes whenever a row of these types is added, changed or removed, or a row changes
        to or from one of them. A written row always takes a `seq` above every other, so a
        row added or changed raises the newest, and a removal alone lowers the count."""
        wanted = tuple(types)
        if len(wanted) == 1 and wanted[0].isidentifier():  # written in: a partial index fits
            where, params = f"type = '{wanted[0]}'", ()
        else:
            where, params = f"type IN ({','.join('?' * len(wanted))})", wanted
        count, newest, edited = self._db.execute(
            f"SELECT COUNT(*), MAX(seq), MAX(edited) FROM pages WHERE {where}", params).fetchone()
        return int(count), int(newest or 0), bool(edited)

    def namespaces(self) -> list[str]:
        """Every namespace a readable row names (to resolve scope patterns without loading rows)."""
        indexed = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE name='pages_namespace'").fetchone()
        return [row[0] for row in self._db.execute(
            _NAMESPACES_SKIP_SCAN if indexed else
            "SELECT DISTINCT namespace FROM pages WHERE namespace IS NOT NULL ORDER BY 1")]

    def identity(self) -> str:
        """A random id minted with this catalog: a rebuilt catalog restarts its sequence, and a
        follower (the search index) that remembers only a number could not tell."""
        row = self._db.execute("SELECT value FROM meta WHERE key='catalog_id'").fetchone()
        if row:
            return str(row[0])
        self._db.execute("INSERT OR IGNORE INTO meta VALUES('catalog_id', ?)", (uuid.uuid4().hex,))
        return str(self._db.execute("SELECT value FROM meta WHERE key='catalog_id'").fetchone()[0])

    def changes_since(self, seq: int) -> Changes:
        """Rows changed and paths removed after `seq` (for the search index and the vectors).

        Sorted here, not by SQL: `ORDER BY path` makes SQLite walk every row in path order
        instead of the few newer ones through the `seq` index (150 ms at 100k pages for one
        edit, paid by each follower's catch-up)."""
        changed = tuple(sorted(
            (Entry.from_row(row) for row in self._db.execute(
                _SELECT + " WHERE seq > ?", (seq,))), key=lambda e: e.path))
        removed = tuple(
            row[0]
            for row in self._db.execute("SELECT path FROM removed WHERE seq > ?", (seq,))
        )
        return Changes(changed, removed)

    # -- keeping current ----------------------------------------------------------------------
    def refresh(self, mode: str = "auto") -> Changes:
        """Bring the catalog up to date with the files; return what changed.

        `auto` and `full` are the same scan, a stat of every head file at any size (`full` is
        kept for callers that want to say so); `verify` also compares every file's content
        hash (an edit that kept size, mtime and ctime, which only a clock change can do);
        `safety` is `full` for a watching process's background scan, which never makes a
        concurrent refresh wait for it."""
        if mode not in ("auto", "full", "verify", "safety"):
            raise ValueError(f"unknown catalog refresh mode {mode!r}")
        # A long-lived process may watch the folders (store/changes/watch.py): then the scan
        # runs only when something under pages/ moved. Never imported here unless someone watches.
        watch = sys.modules.get("pcp_cli.store.changes.watch")
        watched = watch.watching(self.pages_dir) if watch is not None else None
        if mode == "verify":
            return self._scan_files(verify=True)
        if watched is None:
            return self._refresh_with_monitor("full" if mode == "safety" else mode)
        if mode == "safety":
            # The watch's safety net (watch.keep_scanning): a full scan for what events may
            # have missed, run beside the calls, never holding the watch's lock: a call's own
            # refresh looks at what its events named meanwhile and does not wait for a scan
            # of every file (seconds at a million pages). Rows both write are written from
            # the file as it is then, so either order leaves them right.
            started = time.monotonic()
            changes = self._scan_files()
            watched.scanned(started)
            return changes
        with watched.lock:
            started = time.monotonic()
            paths = watched.pending()
            if mode == "full":
                paths = None  # asked for by name (the watch's safety net, sync, doctor)
            try:
                if paths is not None and self._db.execute(
                        "SELECT 1 FROM meta WHERE key='fingerprints'").fetchone():
                    changes = self.scan_paths(paths) if paths else Changes((), ())
                    watched.scanned(started, full=False)
                    return changes
                if paths is None and mode != "full" and not watched.scanned_at:
                    # This process's first refresh: a store monitor, when one runs, vouches
                    # for what it saw as it does for every command (a full scan otherwise), so
                    # `pcp serve`'s first call on a big store does not stat every file.
                    changes = self._refresh_with_monitor(mode)
                else:
                    changes = self._scan_files()
            except BaseException:
                watched.failed()
                raise
            watched.scanned(started)
            return changes

    def _refresh_with_monitor(self, mode: str) -> Changes:
        """Ask the store monitor, when one runs (store/changes/monitor.py), which head files
        changed since this catalog's last refresh, and look at those only; scan everything when no
        monitor answers or it cannot vouch for the token."""
        from pcp_cli.store.changes import monitor

        row = self._db.execute("SELECT value FROM meta WHERE key='monitor_token'").fetchone()
        answer = monitor.ask(self.root, row[0] if row else None)
        if answer is None:
            started = time.monotonic()
            changes = self._scan_files()
            # a big store gets a monitor for the commands after this one (or says why not)
            monitor.after_scan(self.root, self.walked, time.monotonic() - started)
            return changes
        token, paths = answer
        if paths is not None and mode != "full" and self._db.execute(
                "SELECT 1 FROM meta WHERE key='fingerprints'").fetchone():
            changes = self.scan_paths(paths)
        else:
            changes = self._scan_files()
        # Stored only now, after the files were looked at: a token taken before the scan can
        # only name too much to the next command, never too little.
        if row is None or row[0] != token:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES('monitor_token', ?)", (token,))
        return changes

    def scan_paths(self, rels: Iterable[str]) -> Changes:
        """The change scan for these store-relative head-file paths only (what a watch named),
        and the rows still marked racy: each is stat'ed, and read where its stat moved (a path
        gone, or no longer a head file, is removed). The buckets' fingerprints are left as they
        were: the next full scan finds their buckets changed and compares their rows again."""
        racy = self._rows("racy = 1")
        wanted = sorted(set(rels) | set(racy))
        known = {**racy, **self._rows_in("path", wanted)}
        updates: list[tuple[str, FileStat, bytes, int]] = []
        restats: list[tuple[str, FileStat, int]] = []
        removed: list[str] = []
        for rel in wanted:
            row = known.get(rel)
            st = head_stat(self.root / rel)
            if st is None:
                if row is not None:
                    removed.append(rel)
                continue
            key = (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)
            if row is not None and row[:4] == key and not row[5]:
                continue
            self._compare(rel, st, row, updates, restats)  # unread: the next full scan's
        if not updates and not restats and not removed:
            return Changes((), ())
        return self._apply(updates, restats, removed, None)

    def _scan_files(self, *, verify: bool = False) -> Changes:
        walked_at = time.time_ns()
        files = self._walk()
        self.walked = len(files)
        crc32 = zlib.crc32
        mask = BUCKETS - 1
        sums = [0] * BUCKETS
        groups: list[list[tuple[str, FileStat]]] = [[] for _ in range(BUCKETS)]
        for item in files:
            rel, st = item
            c = crc32(rel.encode())
            sums[c & mask] += hash((c, st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino))
            groups[c & mask].append(item)
        sums = [x & _MASK64 for x in sums]
        stored = self._fingerprints()
        if verify or stored is None:
            check = set(range(BUCKETS))
        else:
            check = {b for b in range(BUCKETS) if sums[b] != stored[b]}
        racy = self._rows("racy = 1")
        check.update(crc32(rel.encode()) & mask for rel in racy)
        if not check:
            return Changes((), ())
        if len(check) > BUCKETS // 8:
            known = self._rows()
        else:
            known = {**racy, **self._rows_in("bucket", sorted(check))}
        updates: list[tuple[str, FileStat, bytes, int]] = []
        restats: list[tuple[str, FileStat, int]] = []
        unread: set[int] = set()  # buckets with a file that could not be read: rechecked
        present: set[str] = set()
        first_seq, written = self.seq(), 0
        for b in check:
            for rel, st in groups[b]:
                present.add(rel)
                row = known.get(rel)
                key = (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)
                if row is not None and row[:4] == key and not row[5] and not verify:
                    continue
                if not self._compare(rel, st, row, updates, restats):
                    unread.add(b)
                if len(updates) >= APPLY_CHUNK:
                    # Written a chunk at a time, so a first scan holds one chunk's bytes, not
                    # the store's. Safe to stop between chunks: the bucket fingerprints are
                    # written last, so the next scan compares these buckets' rows again.
                    written += self._apply(updates, restats, [], None)._count
                    updates, restats = [], []
        # A row the walk did not meet may be a file another process created after the walk
        # began (a hand edit it adopted, a page it wrote): that one is the next scan's.
        removed = sorted(path for path in known if path not in present
                         and not self._born_since(path, walked_at))
        for b in unread:
            sums[b] = (sums[b] + 1) & _MASK64  # never equal to what the files say: look again
        if not written and not updates and not restats and not removed and sums == stored:
            return Changes((), ())
        last = self._apply(updates, restats, removed, sums)
        if not written:
            return last
        upto = self.seq()
        return Changes(removed=last.removed, count=written + last._count,
                       load=lambda: self._written(first_seq, upto))

    def _born_since(self, rel: str, moment: int) -> bool:
        try:
            st = os.lstat(self.root / rel)
        except OSError:
            return False
        return st.st_ctime_ns >= moment - RACY_FINE_NS

    def _fingerprints(self) -> array[int] | None:
        row = self._db.execute("SELECT value FROM meta WHERE key='fingerprints'").fetchone()
        if row is None or not isinstance(row[0], bytes):
            return None
        sums = array("Q")
        sums.frombytes(row[0])
        return sums if len(sums) == BUCKETS else None

    def _rows(self, where: str = "", params: Iterable[Any] = ()
              ) -> dict[str, tuple[Any, ...]]:
        """path -> (mtime_ns, size, ctime_ns, ino, digest, racy) of the rows `where` selects.
        Plain tuples, not sqlite3.Row: building Row objects was a third of a scan."""
        cursor = self._db.cursor()
        cursor.row_factory = None
        rows = cursor.execute(
            "SELECT path, mtime_ns, size, ctime_ns, ino, digest, racy FROM pages"
            + (f" WHERE {where}" if where else ""), tuple(params))
        return {row[0]: row[1:] for row in rows}

    def _compare(self, rel: str, st: FileStat, row: tuple[Any, ...] | None,
                 updates: list[tuple[str, FileStat, bytes, int]],
                 restats: list[tuple[str, FileStat, int]]) -> bool:
        """Read a head file whose stat moved from its row's: the same bytes are a restat (only
        when the stat or the racy mark changed), other bytes an update. False when it cannot be
        read."""
        read_at = time.time_ns()
        try:
            raw = (self.root / rel).read_bytes()
        except OSError:
            return False
        if row is not None and row[4] == digest_of(raw):
            is_racy = _racy(st, read_at)
            if row[:4] != (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino) \
                    or bool(row[5]) != is_racy:
                restats.append((rel, st, is_racy))
        else:
            updates.append((rel, st, raw, read_at))
        return True

    def _rows_in(self, column: str, values: Sequence[Any]) -> dict[str, tuple[Any, ...]]:
        """`_rows` of the rows whose `column` is one of `values` (500 per statement, under
        SQLite's limit on parameters)."""
        found: dict[str, tuple[Any, ...]] = {}
        for i in range(0, len(values), 500):
            chunk = values[i:i + 500]
            found.update(self._rows(f"{column} IN ({','.join('?' * len(chunk))})", chunk))
        return found

    def _walk(self) -> list[tuple[str, FileStat]]:
        """(store-relative path, lstat) of every head file under pages/ (files.head_files)."""
        return head_files(self.pages_dir, self.pages_dir.relative_to(self.root).as_posix())

    def _apply(
        self,
        updates: list[tuple[str, FileStat, bytes, int]],
        restats: list[tuple[str, FileStat, int]],
        removed: list[str],
        sums: list[int] | None,
    ) -> Changes:
        rows = []
        for rel, stat, raw, read_at in updates:
            fields = self._scan(rel, raw)
            fields.update(path=rel, digest=digest_of(raw), **_stat_fields(stat, read_at))
            rows.append(fields)
        self._db.execute("BEGIN IMMEDIATE")
        try:
            seq = first = self.seq()
            for fields in rows:
                seq += 1
                self._upsert(fields, seq)
            self._db.executemany(
                "UPDATE pages SET mtime_ns=?, size=?, ctime_ns=?, ino=?, bucket=?, racy=? "
                "WHERE path=?",
                [(st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino, _bucket(rel),
                  int(is_racy), rel) for rel, st, is_racy in restats])
            for rel in removed:
                seq += 1
                page = self._db.execute("SELECT page_id FROM pages WHERE path=?", (rel,)).fetchone()
                self._db.execute("DELETE FROM pages WHERE path=?", (rel,))
                self._db.execute("INSERT INTO removed VALUES(?,?,?)",
                                 (rel, page[0] if page else None, seq))
            if sums is not None:  # None: a targeted scan, which leaves them as they were
                self._db.execute("INSERT OR REPLACE INTO meta VALUES('fingerprints', ?)",
                                 (array("Q", sums).tobytes(),))
            self._db.execute("UPDATE meta SET value=? WHERE key='seq'", (str(seq),))
            self._db.execute("UPDATE meta SET value='1' WHERE key='scanned'")
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return Changes(removed=removed, count=len(rows),
                       load=lambda: self._written(first, first + len(rows)))

    def _written(self, after: int, upto: int) -> list[Entry]:
        """The rows written with a `seq` in (after, upto] and still holding it."""
        return sorted((Entry.from_row(row) for row in self._db.execute(
            _SELECT + " WHERE seq > ? AND seq <= ?", (after, upto))), key=lambda e: e.path)

    def _upsert(self, fields: dict[str, Any], seq: int) -> None:
        values = dict.fromkeys(_COLUMNS + _STAT_COLUMNS)
        values.update(fields)
        values["bucket"] = _bucket(values["path"])
        values["racy"] = int(bool(values.get("racy")))
        values["tags"] = json.dumps(list(values.get("tags") or ()), ensure_ascii=False)
        values["record"] = json.dumps(values.get("record") or {}, ensure_ascii=False,
                                      sort_keys=True)
        values["edited"] = int(bool(values.get("edited")))
        values["seq"] = seq
        detail = values.get("detail")
        values["detail"] = None if detail is None else json.dumps(
            detail, ensure_ascii=False, sort_keys=True)
        self._db.execute(_UPSERT, [values[c] for c in _WRITTEN_COLUMNS])

    def record_write(self, rel: str, fields: dict[str, Any], removed: Iterable[str] = ()) -> None:
        """Note a file pcp itself just wrote (with the digest of its bytes in `fields`), or
        removed. Written a moment ago, it is racy: the next scan compares its content."""
        self.record_writes([(rel, fields, removed)])

    def record_writes(self, writes: Iterable[tuple[str, dict[str, Any], Iterable[str]]]
                      ) -> None:
        """record_write for many files (a batch of imported pages), in one transaction."""
        known_at = time.time_ns()
        self._db.execute("BEGIN IMMEDIATE")
        try:
            seq = self.seq()
            for rel, fields, removed in writes:
                path = self.root / rel
                for old in removed:
                    seq += 1
                    self._db.execute("DELETE FROM pages WHERE path=?", (old,))
                    self._db.execute("INSERT INTO removed VALUES(?,?,?)",
                                     (old, fields.get("page_id"), seq))
                try:
                    stat = os.lstat(path)
                except FileNotFoundError:
                    continue
                seq += 1
                self._upsert({**fields, "path": rel, **_stat_fields(stat, known_at)}, seq)
            self._db.execute("UPDATE meta SET value=? WHERE key='seq'", (str(seq),))
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def record_removal(self, rels: Iterable[str]) -> None:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            seq = self.seq()
            for rel in rels:
                seq += 1
                page = self._db.execute("SELECT page_id FROM pages WHERE path=?", (rel,)).fetchone()
                self._db.execute("DELETE FROM pages WHERE path=?", (rel,))
                self._db.execute("INSERT INTO removed VALUES(?,?,?)",
                                 (rel, page[0] if page else None, seq))
            self._db.execute("UPDATE meta SET value=? WHERE key='seq'", (str(seq),))
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def stat_changed(self, rel: str) -> bool:
        """True when the file at `rel` may differ from its row (another stat, or a racy row
        whose bytes differ): a cheap check before a write that must not overwrite a hand
        edit."""
        row = self._rows("path = ?", (rel,)).get(rel)
        try:
            st = os.lstat(self.root / rel)
        except FileNotFoundError:
            return row is not None
        if row is None or row[:4] != (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino):
            return True
        if not row[5]:
            return False
        try:
            return digest_of((self.root / rel).read_bytes()) != row[4]
        except OSError:
            return True


def _stated(key: str) -> str:
    """A record key's value when it is a non-blank string (as `model.page.source_time` reads)."""
    return (f"CASE WHEN json_type(record, '$.{key}') = 'text' AND "
            f"trim(json_extract(record, '$.{key}')) <> '' "
            f"THEN json_extract(record, '$.{key}') END")


# `model.page.observed_time` as an SQL expression over a row. A second copy of that rule, kept
# because it is measured: stats' time range at 20,000 pages takes 476 ms running the Python
# accessor per row (json.loads of each record) and this in SQLite's JSON functions a fraction
# of that; tests/test_truth_facts.py checks that both give the same range.
OBSERVED_SQL = (
    f"COALESCE({_stated('observed_at')}, CASE type "
    f"WHEN 'timeline_event' THEN {_stated('date')} "
    f"WHEN 'keystone' THEN {_stated('created_at')} "
    f"WHEN 'conversation' THEN COALESCE({_stated('updated_at')}, {_stated('started_at')}) "
    f"ELSE COALESCE({_stated('updated_at')}, {_stated('created_at')}) END, "
    "CASE WHEN origin IN ('imported', 'recorded') THEN NULL ELSE NULLIF(created_at, '') END)"
)


# A page's observed time as its row is written: `OBSERVED_SQL` over the written values, kept
# only when it starts with a year (what stats' time range has always counted).
_OBSERVED_OF_ROW = (f"(SELECT CASE WHEN substr(o, 1, 4) GLOB '[0-9][0-9][0-9][0-9]' THEN o END "
                    f"FROM (SELECT {OBSERVED_SQL} AS o))")
_WRITTEN_COLUMNS = (*_COLUMNS, *_STAT_COLUMNS, "detail")
# An upsert, not INSERT OR REPLACE: a replaced row fires no delete trigger, and the tally's
# triggers must see the row it replaces (`WHERE true` is SQLite's parsing rule for an upsert
# of a SELECT).
_UPSERT = (f"INSERT INTO pages({','.join(_WRITTEN_COLUMNS)}, observed) "
           f"SELECT *, {_OBSERVED_OF_ROW} FROM (SELECT "
           + ", ".join(f"? AS {c}" for c in _WRITTEN_COLUMNS) + ") WHERE true "
           "ON CONFLICT(path) DO UPDATE SET "
           + ", ".join(f"{c} = excluded.{c}" for c in (*_WRITTEN_COLUMNS, "observed")
                       if c != "path"))


def _oldest(a: str | None, b: str | None) -> str | None:
    return b if a is None or (b is not None and b < a) else a


def _newest(a: str | None, b: str | None) -> str | None:
    return b if a is None or (b is not None and b > a) else a


def _bucket(rel: str) -> int:
    return zlib.crc32(rel.encode()) & (BUCKETS - 1)


def _racy(st: FileStat | os.stat_result, known_at: int) -> bool:
    """Could the file be rewritten after `known_at` (when its content was read or written)
    and keep every stat field? Only within the timestamp tick of its last change."""
    changed = max(st.st_mtime_ns, st.st_ctime_ns)
    tick = RACY_COARSE_NS if st.st_mtime_ns % 1_000_000_000 == 0 else RACY_FINE_NS
    return known_at < changed + tick


def _stat_fields(st: FileStat | os.stat_result, known_at: int) -> dict[str, Any]:
    return {"mtime_ns": st.st_mtime_ns, "size": st.st_size, "ctime_ns": st.st_ctime_ns,
            "ino": st.st_ino, "racy": _racy(st, known_at)}
