"""A whole build of the catalog and the search index, and what other processes see of it.

One build at a time per store: a builder holds the flock on `.pcp/index-build.lock` for as long
as it works, and keeps `.pcp/index-build.json` saying who it is and how far it got:

    {"pid": 4242, "engine": "whoosh", "started_at": "2026-12-02T00:10:00Z",
     "phase": "catalog" | "index", "documents_done": 31000, "documents_total": 100000,
     "updated_at": "..."}

Builders are the background process the first search on a big store starts (`start_build`,
`build`) and `pcp index --engine NAME` in the foreground (`api.index_store`). The lock is the
truth: the state file of a builder that was killed stays behind, but its lock went with it, so
`current_build` reports no build and the next builder overwrites the file. A killed build leaves
nothing else that matters: a half-written index generation is an orphan the next opening of the
index removes, and the catalog is a SQLite database (a build that stopped half way leaves the
rows it committed, and the next refresh reads the rest).

`stop_build` is how an engine switch replaces a build in progress: SIGTERM to the builder (the
pid its state file names, checked against the process's command line), which unwinds (its
partial generation is removed by the rebuild's own cleanup) and lets go of the lock.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcp_cli.errors import IndexUnavailable

if TYPE_CHECKING:
    from pcp_cli.store.store import Store

BUILD_LOCK = "index-build.lock"
BUILD_LOG = "index-build.log"
BUILD_STATE = "index-build.json"
STOP_TIMEOUT_S = 60.0
_BUILDER_MARK = "pcp_cli.query.index_build"  # in the background builder's command line


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Building:
    """The build lock held by this process, and the state file it keeps up to date."""

    def __init__(self, local: Path, fd: int, engine: str) -> None:
        self.path = local / BUILD_STATE
        self.fd = fd
        self.state: dict[str, Any] = {
            "pid": os.getpid(), "engine": engine, "started_at": _now(), "phase": "catalog",
            "documents_done": 0, "documents_total": None}
        self._written = 0.0
        self._write()

    def _write(self) -> None:
        self.state["updated_at"] = _now()
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(self.state, sort_keys=True), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:  # the state is a courtesy to `pcp status`; the build goes on
            with contextlib.suppress(OSError):
                tmp.unlink()
        self._written = time.monotonic()

    def phase(self, phase: str, total: int | None = None) -> None:
        self.state.update(phase=phase, documents_total=total, documents_done=0)
        self._write()

    def progress(self, done: int) -> None:
        """The index's progress callback (every 1,000 documents): written at most twice a
        second."""
        self.state["documents_done"] = done
        if time.monotonic() - self._written >= 0.5:
            self._write()

    def release(self) -> None:
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self.fd)  # closing it lets go of the flock


def _open_lock(local: Path) -> int:
    local.mkdir(parents=True, exist_ok=True)
    return os.open(local / BUILD_LOCK, os.O_RDWR | os.O_CREAT, 0o644)


def _held(local: Path) -> bool:
    """Whether some process holds the build lock now."""
    import fcntl

    try:
        fd = os.open(local / BUILD_LOCK, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # releases the lock if we took it
    return False


@contextlib.contextmanager
def building(store: Store, engine: str, *, wait: float | None = None) -> Iterator[Building]:
    """Hold the build lock for a build with `engine`: blocking (`wait` None) or for at most
    `wait` seconds (IndexUnavailable, exit 7, when another build still holds it)."""
    import fcntl

    local = store.layout.local
    fd = _open_lock(local)
    deadline = None if wait is None else time.monotonic() + wait
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if deadline is None else fcntl.LOCK_NB))
                break
            except BlockingIOError:
                if deadline is not None and time.monotonic() >= deadline:
                    raise _busy(current_build(store)) from None
                time.sleep(0.05)
    except BaseException:
        os.close(fd)
        raise
    held = Building(local, fd, engine)
    try:
        yield held
    finally:
        held.release()


def current_build(store: Store) -> dict[str, Any] | None:
    """The build running now, as its state file says (`running: True`, plus pid, engine,
    started_at, phase, documents_done, documents_total, percent), or None when no process
    holds the build lock (a state file left by a killed builder is not a build)."""
    local = store.layout.local
    if not _held(local):
        return None
    try:
        state = json.loads((local / BUILD_STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        state = {}
    if not isinstance(state, dict):
        state = {}
    done, total = state.get("documents_done"), state.get("documents_total")
    percent = (round(100 * done / total, 1) if isinstance(done, int)
               and isinstance(total, int) and total > 0 else None)
    return {"running": True, "pid": state.get("pid"), "engine": state.get("engine"),
            "started_at": state.get("started_at"), "phase": state.get("phase"),
            "documents_done": done, "documents_total": total, "percent": percent}


def describe(build: dict[str, Any]) -> str:
    """One phrase for people: "the whoosh index build of pid 4242 (since …): 31% indexed"."""
    done, total = build.get("documents_done"), build.get("documents_total")
    where = (f"{done:,} of {total:,} pages indexed" if isinstance(done, int)
             and isinstance(total, int) and build.get("phase") == "index"
             else "reading the pages into the catalog" if build.get("phase") == "catalog"
             else "starting")
    return (f"the {build.get('engine') or 'search'} index build of pid {build.get('pid')} "
            f"(since {build.get('started_at')}): {where}")


def _busy(build: dict[str, Any] | None) -> IndexUnavailable:
    what = f": {describe(build)}" if build else ""
    return IndexUnavailable(
        f"The search index is being written by another pcp process{what}.",
        hint="Wait for it to finish (`pcp status` says how far it is), or run "
             "`pcp index --engine NAME` with the other engine to replace it.")


def _is_background_builder(pid: int) -> bool:
    """Whether `pid` is the background builder `start_build` starts (not a person's `pcp
    index` in the foreground, nor a process that reused the pid); where /proc cannot say, the
    pid is trusted (it was read from the state file of the lock's holder)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return not Path("/proc/self").exists()
    except OSError:
        return True
    return _BUILDER_MARK.encode() in cmdline


def stop_build(store: Store, *, timeout: float = STOP_TIMEOUT_S) -> dict[str, Any] | None:
    """Stop the build in progress, if any, and wait until it has let go of the lock: the build
    stopped (as `current_build` said), or None when none ran. IndexUnavailable (exit 7) when
    it cannot be signalled or does not stop within `timeout` seconds."""
    build = current_build(store)
    if build is None:
        return None
    pid = build.get("pid")
    if not isinstance(pid, int) or pid == os.getpid() or not _is_background_builder(pid):
        raise _busy(build)
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass  # it ended meanwhile
    except OSError as exc:
        raise _busy(build) from exc
    deadline = time.monotonic() + timeout
    while _held(store.layout.local):
        if time.monotonic() >= deadline:
            raise IndexUnavailable(
                f"The index build (pid {pid}) did not stop within {timeout:g} s.",
                hint="Run the command again when it has ended (`pcp status` says whether it "
                     "runs).")
        time.sleep(0.05)
    return build


# -- the background build -----------------------------------------------------------------------
def start_build(store: Store) -> str:
    """Start `build` in a process of its own unless one holds the build lock; say which."""
    import subprocess

    local = store.layout.local
    local.mkdir(parents=True, exist_ok=True)
    if _held(local):
        return "in a background process started by an earlier search"
    with open(local / BUILD_LOG, "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-c", f"import sys; from {_BUILDER_MARK} import build; "
             "sys.exit(build(sys.argv[1]))", str(store.root)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=store.root,
            start_new_session=True, close_fds=True)
    return f"in a background process (pid {proc.pid}) started now"


def _stop_on_sigterm() -> None:
    """SIGTERM unwinds the build like an exception (SystemExit), so a rebuild in progress
    removes its half-written generation and the lock and state file are let go."""
    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)


def build(root: str) -> int:
    """The background build: the catalog's first scan and the index, under the build lock
    (a second builder waits, then finds the index built). Returns an exit status."""
    from pcp_cli.errors import PcpError
    from pcp_cli.index import chosen_engine
    from pcp_cli.query.index_sync import close_all, ensure_current, index_dir, open_index
    from pcp_cli.store.store import Store

    def say(text: str) -> None:
        print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} pid {os.getpid()}: {text}", flush=True)

    _stop_on_sigterm()
    try:
        store = Store.open(root)
        try:
            engine = chosen_engine(index_dir(store))[0]
            with building(store, engine) as held:
                say(f"building the catalog and the search index ({engine})")
                t0 = time.monotonic()
                store.refresh()
                held.phase("index", store.catalog.count())
                with open_index(store) as ix:
                    report = ensure_current(store, ix, progress=held.progress)
                say(f"done in {time.monotonic() - t0:.1f} s: "
                    f"{report.documents or report.updated} documents"
                    + (f" (rebuilt: {report.reason})" if report.rebuilt else ""))
        except SystemExit:
            say("stopped (SIGTERM): another pcp process replaces this build")
            raise
        finally:
            close_all()
            store.close()
    except PcpError as exc:
        say(f"failed: {exc.message}")
        return int(exc.exit_status)
    return 0
