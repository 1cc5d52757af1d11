"""The generation handling both engines share: an index folder holds `meta.json` (engine,
format version, current generation, built flag, doc count, the size of every file of the
generation, the caller's key/values), a WRITELOCK, and `g-<hex>/` folders, one per build; a
rebuild writes a new generation beside the old one and switches meta.json atomically.
`GenerationIndex` is that shape (open, lock, rebuild, write); each engine's SearchIndex adds
what only it knows.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from pcp_cli.errors import IndexNeedsRebuild, IndexUnavailable, PcpError, UsageError
from pcp_cli.index.types import IndexDoc

META = "meta.json"
LOCK = "WRITELOCK"


def atomic_write(path: Path, data: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def check_files(directory: Path, meta: dict[str, Any]) -> str | None:
    """Why the generation `meta` names cannot be trusted (a file missing or of another size
    than was written), or None."""
    gen = directory / str(meta.get("generation"))
    files = meta.get("files")
    if not isinstance(files, dict) or not gen.is_dir():
        return "its files are missing"
    for name, size in files.items():
        try:
            actual = (gen / name).stat().st_size
        except OSError:
            return f"its file {name} is missing"
        if actual != size:
            return f"its file {name} has {actual} bytes where {size} were written"
    return None


def file_sizes(directory: Path, generation: str) -> dict[str, int]:
    """name -> size of every file of a generation, for meta.json: locks (an engine's own
    come and go with its writers) and dot files left out."""
    gen = directory / generation
    return {
        p.name: p.stat().st_size
        for p in gen.iterdir()
        if p.is_file() and not p.name.endswith(".lock") and p.name != LOCK
        and not p.name.startswith(".")
    }


def remove_other_generations(directory: Path, keep: str) -> None:
    """Remove everything in the index folder but meta.json, the lock, dot files and `keep`."""
    for p in directory.iterdir():
        if p.name in (META, LOCK, keep) or p.name.startswith("."):
            continue
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                p.unlink()


# ------------------------------------------------------------------------------- locking
class FileLock:
    """An exclusive, non-blocking flock on the index folder's WRITELOCK."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: Any = None

    def acquire(self) -> bool:
        fh = open(self.path, "a+b")  # noqa: SIM115 - held until release()
        try:
            if os.name == "nt":  # pragma: no cover - exercised on Windows only
                import msvcrt

                msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
            else:
                import fcntl

                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            return False
        self._fh = fh
        return True

    def release(self) -> None:
        if self._fh is not None:
            self._fh.close()  # closing the file releases the lock
            self._fh = None


def fatal(exc: BaseException) -> bool:
    """Whether an exception must propagate as is, never be read as a damaged index (tantivy's
    Rust panics arrive as a BaseException, pyo3's PanicException: a damaged index)."""
    return isinstance(exc, KeyboardInterrupt | SystemExit | GeneratorExit)


def writer_busy() -> IndexUnavailable:
    """What an engine raises when its own writer lock is taken (another process writes)."""
    return IndexUnavailable("The search index is being written by another process.",
                            hint="Wait for it to finish and try again.")


def built_by(meta: dict[str, Any]) -> str:
    """The engine that wrote an index's meta.json (whoosh's before it named itself)."""
    return str(meta.get("engine") or "whoosh")


# ------------------------------------------------------------------------------- the shape
class GenerationIndex:
    """What both engines' SearchIndex share: opening the folder (meta.json, its checks, the
    orphans of killed rebuilds), the write lock, a rebuild into a new generation switched in
    atomically, and updates under the lock. An engine supplies `ENGINE`, `FORMAT` (what its
    meta.json's format_version must be) and the parts only it knows: `_open`, `_build`,
    `_apply`, `_count`, `close`.

    `needs_rebuild` is None for a healthy index, or the reason it cannot be trusted; a search
    raises `IndexNeedsRebuild` while it is set, and `rebuild` clears it.
    """

    ENGINE: str = ""
    FORMAT: Any = None

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.needs_rebuild: str | None = None
        self.created = False
        self._meta: dict[str, Any] = {}
        self._ix: Any = None
        self._meta_stat: tuple[int, int, int] | None = None

    @staticmethod
    def _check_search(sort: str, limit: int) -> None:
        """UsageError for a search neither engine can run: `sort` is "relevance", "newest" or
        "oldest", `limit` at least 1."""
        if sort not in ("relevance", "newest", "oldest"):
            raise UsageError(f"Unknown sort {sort!r}.", hint="Use relevance, newest or oldest.")
        if limit < 1:
            raise UsageError("The limit must be at least 1.")

    # -- what an engine supplies
    def _open(self, generation: Path) -> tuple[Any, int]:
        """Open one generation: (the engine's index object, how many documents it holds)."""
        raise NotImplementedError

    def _build(self, generation: Path, docs: Iterable[IndexDoc],
               progress: Callable[[int], None] | None, tuned: bool) -> tuple[int, int]:
        """Write `docs` into the new, empty generation folder: (indexed, held). Raise on any
        failure (the caller removes the folder and keeps the old generation)."""
        raise NotImplementedError

    def _apply(self, docs: Iterable[IndexDoc], paths: Iterable[str]) -> int:
        """Replace `docs` (by path), delete `paths`, commit: how many documents changed."""
        raise NotImplementedError

    def _count(self) -> int:
        """How many documents the open generation holds now (after `_apply`)."""
        raise NotImplementedError

    def close(self) -> None:
        self._ix = None

    # -- opening
    @classmethod
    def open_or_create(cls, directory: str | os.PathLike[str]) -> Any:
        """Open the index in `directory`, creating an empty one if there is none.

        Never raises for a damaged index: check `needs_rebuild` (a new, empty index also needs
        a first `rebuild`). Raises IndexUnavailable only if the folder cannot be created.
        """
        self = cls(Path(directory))
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise IndexUnavailable(
                f"Cannot create the search index folder {self.directory}: {exc.strerror}",
                hint="Check the permissions of the store's .pcp folder.",
            ) from exc
        self._load()
        self._remove_orphan_generations()
        return self

    def _stat_meta(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.directory / META)
        except OSError:
            return None
        return st.st_ino, st.st_mtime_ns, st.st_size

    def _remove_orphan_generations(self) -> None:
        """Remove `g-*` folders left by killed rebuilds: neither current nor being built (a
        rebuild holds the write lock while it builds, so they are left alone then)."""
        current = self._meta.get("generation")
        try:
            if not any(p.name.startswith("g-") and p.name != current
                       for p in self.directory.iterdir()):
                return
        except OSError:
            return
        lock = FileLock(self.directory / LOCK)
        if not lock.acquire():
            return
        try:
            meta = json.loads((self.directory / META).read_text(encoding="utf-8"))
            current = meta.get("generation") if isinstance(meta, dict) else None
        except (OSError, ValueError):
            current = None
        try:
            for p in self.directory.iterdir():
                if p.name.startswith("g-") and p.name != current and p.is_dir():
                    shutil.rmtree(p, ignore_errors=True)
        except OSError:
            pass
        finally:
            lock.release()

    def _load(self, retry: bool = True) -> None:
        self.close()
        self._meta_stat = self._stat_meta()
        meta_path = self.directory / META
        if not meta_path.exists():
            self._meta = {"engine": self.ENGINE, "format_version": self.FORMAT, "built": False,
                          "user": {}}
            self.created = True
            self.needs_rebuild = "the index has not been built yet"
            return
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            if not isinstance(meta, dict):
                raise ValueError("not an object")
        except (OSError, ValueError) as exc:
            self.needs_rebuild = f"its meta file is unreadable ({exc})"
            return
        self._meta = meta
        self.needs_rebuild = mismatch(meta, self.ENGINE, self.FORMAT)
        if self.needs_rebuild:
            return
        problem = check_files(self.directory, meta)
        if problem and retry:  # a writer may have committed between our two reads
            time.sleep(0.05)
            return self._load(retry=False)
        if problem:
            self.needs_rebuild = problem
            return
        try:
            ix, count = self._open(self.directory / meta["generation"])
        except BaseException as exc:  # whoosh raises anything from EOFError to pickle errors
            if fatal(exc):
                raise
            self.needs_rebuild = f"it is damaged ({type(exc).__name__}: {exc})"
            return
        self._ix = ix
        if count != meta.get("doc_count"):
            self.close()
            self.needs_rebuild = (
                f"it holds {count} documents where {meta.get('doc_count')} were written"
            )
            return
        self.needs_rebuild = None

    # -- meta
    @property
    def meta(self) -> dict[str, Any]:
        """The caller's key/values (e.g. the last applied change sequence). A copy."""
        return dict(self._meta.get("user", {}))

    def set_meta(self, **values: Any) -> None:
        with self._write_lock():
            self._meta.setdefault("user", {}).update(values)
            self._save_meta()

    def _save_meta(self) -> None:
        atomic_write(self.directory / META, json.dumps(self._meta, sort_keys=True, indent=1))
        self._meta_stat = self._stat_meta()

    # -- writing
    @contextlib.contextmanager
    def _write_lock(self, timeout: float = 2.0) -> Iterator[None]:
        lock = FileLock(self.directory / LOCK)
        deadline = time.monotonic() + timeout
        while not lock.acquire():
            if time.monotonic() >= deadline:
                raise IndexUnavailable(
                    "The search index is being written by another pcp process.",
                    hint="Wait for it to finish and try again.",
                )
            time.sleep(0.05)
        try:
            yield
        finally:
            lock.release()

    def rebuild(
        self,
        docs: Iterable[IndexDoc],
        *,
        progress: Callable[[int], None] | None = None,
        meta: dict[str, Any] | None = None,
        tuned: bool = True,
    ) -> int:
        """Replace the whole index with `docs`; returns how many were indexed.

        Writes a new generation beside the old one and switches to it only when complete, so a
        reader keeps a working index meanwhile and a crash leaves the old one in place.
        `meta` replaces the caller's key/values. `progress(n)` is called every 1,000 docs.
        `tuned=False` uses the engine's default writer settings (for benchmarks).
        """
        with self._write_lock(timeout=10.0):
            generation = f"g-{time.time_ns():x}"
            gen_dir = self.directory / generation
            gen_dir.mkdir()
            try:
                n, count = self._build(gen_dir, docs, progress, tuned)
            except BaseException:
                shutil.rmtree(gen_dir, ignore_errors=True)
                raise
            if progress is not None:
                progress(n)
            self.close()
            self._meta = {
                "engine": self.ENGINE,
                "format_version": self.FORMAT,
                "generation": generation,
                "built": True,
                "doc_count": count,
                "files": file_sizes(self.directory, generation),
                "user": dict(meta or {}),
            }
            self._save_meta()
            remove_other_generations(self.directory, generation)
        self._load()
        if self.needs_rebuild:
            raise IndexUnavailable(
                f"The search index could not be rebuilt: {self.needs_rebuild}",
                hint=f"Check free disk space and permissions under {self.directory}.",
            )
        self.created = False
        return n

    def update(self, docs: Iterable[IndexDoc], *, meta: dict[str, Any] | None = None) -> int:
        """Add or replace documents by `path`. `meta` is merged into the caller's key/values
        after the documents are committed (so a crash in between only repeats work)."""
        return self._write(docs, (), meta)

    def delete(self, paths: Iterable[str], *, meta: dict[str, Any] | None = None) -> int:
        """Remove documents by `path`; unknown paths are ignored. Returns how many went."""
        return self._write((), paths, meta)

    def _write(
        self, docs: Iterable[IndexDoc], paths: Iterable[str], meta: dict[str, Any] | None
    ) -> int:
        self._require()
        with self._write_lock():
            self._reload_if_changed()  # another process may have rebuilt or updated
            self._require()
            n = self._apply(docs, paths)
            self._meta["doc_count"] = self._count()
            self._meta["files"] = file_sizes(self.directory, self._meta["generation"])
            if meta:
                self._meta.setdefault("user", {}).update(meta)
            self._save_meta()
        return n

    def _reload_if_changed(self) -> None:
        """Another process (or another SearchIndex on this folder) wrote: read what it wrote.
        (meta.json is replaced on every write, so its inode and mtime say so.)"""
        if self._stat_meta() != self._meta_stat:
            self._load()

    # -- reading
    def _require(self) -> None:
        if self.needs_rebuild or self._ix is None:
            raise IndexNeedsRebuild(self.needs_rebuild or "the index is closed")

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """Around a read of the index: pcp's own errors and fatal ones pass as they are;
        anything else the engine raises means the index cannot be trusted (IndexNeedsRebuild,
        and the index is closed until rebuilt)."""
        try:
            yield
        except PcpError:
            raise
        except BaseException as exc:
            if fatal(exc):
                raise
            raise self._broken(exc) from exc

    def _broken(self, exc: BaseException) -> IndexNeedsRebuild:
        self.needs_rebuild = f"it is damaged ({type(exc).__name__}: {exc})"
        self.close()
        return IndexNeedsRebuild(self.needs_rebuild)

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def mismatch(meta: dict[str, Any], engine: str, fmt: Any) -> str | None:
    """Why the index `meta` describes is not one `engine` (writing format `fmt`) can read, or
    None: the other engine's index is named as such, never as "another format"."""
    by = built_by(meta)
    if by != engine:
        return f"it was built by the {by} engine, and this device uses {engine}"
    if meta.get("format_version") != fmt:
        return (f"it was written in format {meta.get('format_version')!r}, "
                f"this pcp uses {fmt!r}")
    if not meta.get("built"):
        return "a previous build did not finish"
    return None
