"""The catalog: a SQLite cache under `.pcp/` of what every head file says, kept current cheaply.

It answers "which pages are there, of what type, in which scope, changed since when" without
opening every file, so `pcp ls`, stats, the micro_prompt and the search index's change scan stay
fast on large stores. A *verify* scan (`pcp doctor`, `pcp index`) also reads every file whose
stat looks unchanged and compares content hashes, catching an edit that kept the size and put
the mtime back. It is derived only from the files under `pages/` and can be deleted at any
time; a missing or corrupt catalog is rebuilt by a full scan.

Change detection: every row remembers the (mtime_ns, size) it was parsed at, and every folder
its mtime. A *full* scan stats every head file. A *fast* scan stats only the folders and rescans
those whose mtime moved (a rename into place, a new or deleted file, `git pull`); it misses a file
rewritten in place inside an unchanged folder, which the next full scan catches. `auto` (the
default) does a full scan up to `FULL_SCAN_MAX_PAGES` pages and a fast one above that.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pcp_cli.store.files import classify
from pcp_cli.store.layout import is_foreign_root

SCHEMA_VERSION = "5"
FULL_SCAN_MAX_PAGES = 20_000
PENDING = "edited = 1 OR problem LIKE 'new file%'"

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


@dataclass(frozen=True)
class Changes:
    changed: tuple[Entry, ...]
    removed: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.changed or self.removed)


# A scanner turns (store-relative path, raw bytes, mtime_ns, size) into the row's fields.
Scanner = Callable[[str, bytes], dict[str, Any]]


def digest_of(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


class Catalog:
    def __init__(self, db_path: Path, root: Path, pages_dir: Path, scan: Scanner) -> None:
        self.db_path = db_path
        self.root = root
        self.pages_dir = pages_dir
        self._scan = scan
        self._db = self._connect()

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
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row and row[0] == SCHEMA_VERSION:
                db.execute("COMMIT")
                return
            for table in ("pages", "dirs", "removed"):
                db.execute(f"DROP TABLE IF EXISTS {table}")
            db.execute(
                "CREATE TABLE pages(path TEXT PRIMARY KEY, page_id TEXT, revision_id TEXT, "
                "content_hash TEXT, type TEXT, namespace TEXT, title TEXT, "
                "lifecycle_status TEXT, review_status TEXT, origin TEXT, sensitivity TEXT, "
                "tags TEXT, record TEXT, created_at TEXT, updated_at TEXT, mtime_ns INTEGER, "
                "size INTEGER, problem TEXT, edited INTEGER, seq INTEGER, digest TEXT)"
            )
            db.execute("CREATE INDEX pages_page_id ON pages(page_id)")
            db.execute("CREATE INDEX pages_type ON pages(type)")
            db.execute("CREATE INDEX pages_seq ON pages(seq)")
            # A partial index for `pending()`: on a 100,000-page store it turns the scan every
            # writable open does (~70 ms) into a lookup (~0.05 ms). SQLite uses it only when the
            # query's WHERE is this one, so both live here.
            db.execute(f"CREATE INDEX pages_pending ON pages(path) WHERE {PENDING}")
            db.execute("CREATE TABLE dirs(path TEXT PRIMARY KEY, mtime_ns INTEGER)")
            db.execute("CREATE TABLE removed(path TEXT, page_id TEXT, seq INTEGER)")
            db.execute("DELETE FROM meta")
            db.execute("INSERT INTO meta VALUES('schema', ?)", (SCHEMA_VERSION,))
            db.execute("INSERT INTO meta VALUES('seq', '0')")
            db.execute("INSERT INTO meta VALUES('scanned', '0')")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self._db.close()

    # -- queries ------------------------------------------------------------------------------
    def entries(self, where: str = "", params: Iterable[Any] = ()) -> list[Entry]:
        sql = "SELECT * FROM pages" + (f" WHERE {where}" if where else "") + " ORDER BY path"
        return [Entry.from_row(row) for row in self._db.execute(sql, tuple(params))]

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

    def seq(self) -> int:
        return int(self._db.execute("SELECT value FROM meta WHERE key='seq'").fetchone()[0])

    def namespaces(self) -> list[str]:
        """Every namespace a readable row names (to resolve scope patterns without loading rows)."""
        return [row[0] for row in self._db.execute(
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
        """Rows changed and paths removed after `seq` (for the search index)."""
        changed = tuple(self.entries("seq > ?", (seq,)))
        removed = tuple(
            row[0]
            for row in self._db.execute("SELECT path FROM removed WHERE seq > ?", (seq,))
        )
        return Changes(changed, removed)

    # -- keeping current ----------------------------------------------------------------------
    def refresh(self, mode: str = "auto") -> Changes:
        """Bring the catalog up to date with the files; return what changed."""
        scanned = self._db.execute("SELECT value FROM meta WHERE key='scanned'").fetchone()[0]
        if mode == "verify":
            return self._full_scan(verify=True)
        if scanned == "0" or mode == "full" or (
            mode == "auto" and self.count() <= FULL_SCAN_MAX_PAGES
        ):
            return self._full_scan()
        return self._fast_scan()

    def _known(self) -> dict[str, tuple[int, int]]:
        """path -> (mtime_ns, size) of every row. Plain tuples, not sqlite3.Row: building
        Row objects was a third of a 10,000-page full scan (18 of 50 ms)."""
        cursor = self._db.cursor()
        cursor.row_factory = None
        rows = cursor.execute("SELECT path, mtime_ns, size FROM pages")
        return {path: (mtime, size) for path, mtime, size in rows}

    def _full_scan(self, *, verify: bool = False) -> Changes:
        known = self._known()
        seen_dirs: dict[str, int] = {}
        updates: list[tuple[str, os.stat_result]] = []
        unchanged: list[tuple[str, os.stat_result]] = []
        present: set[str] = set()
        for rel, stat in self._walk(self.pages_dir, seen_dirs):
            present.add(rel)
            if known.get(rel) != (stat.st_mtime_ns, stat.st_size):
                updates.append((rel, stat))
            elif verify:
                unchanged.append((rel, stat))
        if unchanged:
            updates += self._rewritten(unchanged)
        removed = [path for path in known if path not in present]
        return self._apply(updates, removed, seen_dirs, replace_dirs=True)

    def _rewritten(self, files: list[tuple[str, os.stat_result]]
                   ) -> list[tuple[str, os.stat_result]]:
        """Files whose size and mtime are what the catalog remembers but whose bytes are not
        (an edit that kept the size and restored the mtime): read and compared by hash, which
        a stat scan cannot see."""
        cursor = self._db.cursor()
        cursor.row_factory = None
        digests = dict(cursor.execute("SELECT path, digest FROM pages"))
        found = []
        for rel, stat in files:
            try:
                raw = (self.root / rel).read_bytes()
            except OSError:
                continue
            if digests.get(rel) != digest_of(raw):
                found.append((rel, stat))
        return found

    def _fast_scan(self) -> Changes:
        dirs = {row[0]: row[1] for row in self._db.execute("SELECT path, mtime_ns FROM dirs")}
        moved: list[str] = []
        gone: list[str] = []
        for rel, mtime in dirs.items():
            try:
                current = os.stat(self.root / rel).st_mtime_ns
            except OSError:
                gone.append(rel)
                continue
            if current != mtime:
                moved.append(rel)
        if not moved and not gone:
            return Changes((), ())
        known = self._known()
        seen_dirs: dict[str, int] = {}
        updates: list[tuple[str, os.stat_result]] = []
        removed: list[str] = []
        for rel_dir in moved:
            present: set[str] = set()
            folder = self.root / rel_dir
            for rel, stat in self._walk(folder, seen_dirs, recurse_into=lambda d: d not in dirs):
                present.add(rel)
                if known.get(rel) != (stat.st_mtime_ns, stat.st_size):
                    updates.append((rel, stat))
            prefix = rel_dir + "/"
            removed.extend(
                path
                for path in known
                if path.startswith(prefix) and "/" not in path[len(prefix):]
                and path not in present
            )
        for rel_dir in gone:
            prefix = rel_dir + "/"
            removed.extend(path for path in known if path.startswith(prefix))
            self._db.execute("DELETE FROM dirs WHERE path = ? OR path LIKE ?",
                             (rel_dir, prefix + "%"))
        return self._apply(updates, sorted(set(removed)), seen_dirs, replace_dirs=False)

    def _walk(
        self,
        folder: Path,
        seen_dirs: dict[str, int],
        recurse_into: Callable[[str], bool] = lambda _: True,
    ) -> Iterator[tuple[str, os.stat_result]]:
        try:
            stat = os.stat(folder)
        except OSError:
            return
        rel_folder = folder.relative_to(self.root).as_posix()
        seen_dirs[rel_folder] = stat.st_mtime_ns
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                rel_dir = f"{rel_folder}/{entry.name}"
                if is_foreign_root(Path(entry.path)):
                    continue  # another store (or repository) inside this one: never ours
                if recurse_into(rel_dir):
                    yield from self._walk(Path(entry.path), seen_dirs)
            else:
                stat, _ = classify(entry)  # symlinks and hard links are never head files
                if stat is not None:
                    yield f"{rel_folder}/{entry.name}", stat

    def _apply(
        self,
        updates: list[tuple[str, os.stat_result]],
        removed: list[str],
        seen_dirs: dict[str, int],
        *,
        replace_dirs: bool,
    ) -> Changes:
        rows = []
        for rel, stat in updates:
            try:
                raw = (self.root / rel).read_bytes()
            except OSError:
                continue
            fields = self._scan(rel, raw)
            fields.update(path=rel, mtime_ns=stat.st_mtime_ns, size=stat.st_size,
                          digest=digest_of(raw))
            rows.append(fields)
        self._db.execute("BEGIN IMMEDIATE")
        try:
            seq = self.seq()
            for fields in rows:
                seq += 1
                self._upsert(fields, seq)
            for rel in removed:
                seq += 1
                page = self._db.execute("SELECT page_id FROM pages WHERE path=?", (rel,)).fetchone()
                self._db.execute("DELETE FROM pages WHERE path=?", (rel,))
                self._db.execute("INSERT INTO removed VALUES(?,?,?)",
                                 (rel, page[0] if page else None, seq))
            if replace_dirs:
                self._db.execute("DELETE FROM dirs")
            self._db.executemany("INSERT OR REPLACE INTO dirs VALUES(?,?)", seen_dirs.items())
            self._db.execute("UPDATE meta SET value=? WHERE key='seq'", (str(seq),))
            self._db.execute("UPDATE meta SET value='1' WHERE key='scanned'")
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        changed = tuple(e for rel in (r["path"] for r in rows) for e in self.entries(
            "path = ?", (rel,)))
        return Changes(changed, tuple(removed))

    def _upsert(self, fields: dict[str, Any], seq: int) -> None:
        values = dict.fromkeys(_COLUMNS)
        values.update(fields)
        values["tags"] = json.dumps(list(values.get("tags") or ()), ensure_ascii=False)
        values["record"] = json.dumps(values.get("record") or {}, ensure_ascii=False,
                                      sort_keys=True)
        values["edited"] = int(bool(values.get("edited")))
        values["seq"] = seq
        placeholders = ",".join("?" for _ in _COLUMNS)
        self._db.execute(
            f"INSERT OR REPLACE INTO pages({','.join(_COLUMNS)}) VALUES({placeholders})",
            [values[c] for c in _COLUMNS],
        )

    def record_write(self, rel: str, fields: dict[str, Any], removed: Iterable[str] = ()) -> None:
        """Note a file pcp itself just wrote (or removed), with its folder's new mtime."""
        self.record_writes([(rel, fields, removed)])

    def record_writes(self, writes: Iterable[tuple[str, dict[str, Any], Iterable[str]]]
                      ) -> None:
        """record_write for many files (a batch of imported pages), in one transaction."""
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
                    self._note_dir((self.root / old).parent)
                if path.exists():
                    stat = path.stat()
                    seq += 1
                    self._upsert({**fields, "path": rel, "mtime_ns": stat.st_mtime_ns,
                                  "size": stat.st_size}, seq)
                    self._note_dir(path.parent)
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
                self._note_dir((self.root / rel).parent)
            self._db.execute("UPDATE meta SET value=? WHERE key='seq'", (str(seq),))
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def _note_dir(self, folder: Path) -> None:
        """Remember a folder's mtime after our own write, and its parents' (new folders)."""
        while True:
            try:
                rel = folder.relative_to(self.root).as_posix()
                mtime = os.stat(folder).st_mtime_ns
            except (OSError, ValueError):
                return
            known = self._db.execute("SELECT 1 FROM dirs WHERE path=?", (rel,)).fetchone()
            self._db.execute("INSERT OR REPLACE INTO dirs VALUES(?,?)", (rel, mtime))
            if known or folder == self.pages_dir:
                return
            folder = folder.parent
