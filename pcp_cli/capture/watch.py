"""`pcp watch`: keep importing what changes in a few folders, until Ctrl-C or SIGTERM.

watchdog delivers the file-system events (inotify on Linux, FSEvents on macOS,
ReadDirectoryChangesW on Windows); `--poll`, or a folder whose events cannot be had (an
inotify watch limit, some network file systems), uses its polling observer instead. This is
not `store/changes/watch.py`: that one watches the store's own `pages/` for `pcp serve`, through
inotify alone, to skip a scan; this one watches the person's source folders to import them.

- A file is imported once it is complete: its size and mtime unchanged for `settle` seconds
  (a session log still being written, a note being saved in chunks). Between events nothing
  runs: the main thread sleeps on an event, so an idle watch costs no CPU.
- A session folder (`~/.claude/projects`, `~/.codex/sessions`): each changed `.jsonl` is
  imported alone (only its new events are stored).
- A Markdown vault: a changed or new note is imported with the whole vault (its pages are
  keyed by their path in it, so unchanged notes cost a stat and a hash). Nothing is lost: a
  deleted note's page is archived with a note saying so; a renamed note's new page
  supersedes the old one (lifecycle `superseded`, a `supersedes` relation between them), however
  many notes are renamed at once, a folder of them included (`Watcher._moved`).
  Both stay in the store with their history (`pcp show`, `pcp ls --status ...`). The page id
  changes on a rename: the Markdown importer keys a page by its vault and its path in it.
  Each folder is its own vault (adapters/vaults.py), as `pcp import` names it: two watched
  folders holding the same paths never touch each other's pages.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pcp_cli.errors import PcpError, UsageError
from pcp_cli.model.filenames import NOT_TEXT, is_text, shown
from pcp_cli.model.page import Actor

SESSION_FORMATS = ("claude_code", "codex")
# Who archives a note's page when the note leaves the vault, and links a renamed one.
WATCHER = Actor("tool", "pcp-watch")


def folder_format(folder: Path, recorded: str | None = None) -> str:
    """What a watched folder holds: the format it was imported as, else what is in it, else
    (an empty folder) the agents' own folder names, else a Markdown vault."""
    if recorded:
        return recorded
    from pcp_cli.adapters import detect_format
    from pcp_cli.errors import InvalidInput

    try:
        return str(detect_format(folder))
    except InvalidInput:
        pass
    parts = folder.parts[-2:]
    if parts == (".claude", "projects"):
        return "claude_code"
    if parts == (".codex", "sessions"):
        return "codex"
    return "markdown"


class _Handler:
    """watchdog's event handler: note the paths that moved and wake the main loop."""

    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher

    # Not "opened" or "closed_no_write": an import reads the files it watches, and those
    # events would start the next import, forever.
    CHANGES = ("created", "modified", "moved", "deleted", "closed")

    def dispatch(self, event: Any) -> None:
        if event.event_type not in self.CHANGES or (
                event.is_directory and event.event_type not in ("moved", "deleted")):
            return
        paths = [Path(str(p)) for p in (event.src_path, getattr(event, "dest_path", ""))
                 if p]
        self.watcher.note(paths, moved=event.event_type == "moved" and len(paths) == 2)


class Watcher:
    def __init__(self, root: Path, folders: dict[Path, str], *, settle: float,
                 say: Callable[[str], None]) -> None:
        self.root = root
        self.folders = folders
        self.settle = settle
        self.say = say
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.pending: dict[Path, tuple[tuple[int, int] | None, float]] = {}
        self.busy = False
        self.stopping = False
        self.moves: dict[Path, Path] = {}  # a renamed file's new path -> its old one
        self.left: set[Path] = set()  # names a note held for a moment, between two renames
        self.said: set[tuple[Any, Any, Any]] = set()  # problems already named to the person
        self.vaults: dict[Path, str] = {}  # a vault folder -> its notes' key prefix

    def note(self, paths: list[Path], moved: bool = False) -> None:
        with self.lock:
            if moved:
                paths = self._moved(paths[0], paths[1])
            for path in paths:
                folder = self._folder_of(path)
                if folder is None or not _wanted(path, self._fmt(path)):
                    continue
                rel = path.relative_to(folder).as_posix()
                if not is_text(rel):  # never imported: said once, never queued
                    if path.exists():
                        self._problem({"source": shown(path), "item": shown(rel),
                                       "reason": NOT_TEXT, "outcome": "skipped"})
                    continue
                self.pending[path] = (None, time.monotonic())
        self.wake.set()

    def _moved(self, src: Path, dest: Path) -> list[Path]:
        """A rename, as the paths to look at (caller holds the lock). A note renamed within a
        vault is one change, at its new name, remembered with the name its page was imported
        under (`moves`), so the import links the two pages (`_renamed`); its old name is not a
        deletion of its own. A note renamed again before it settled keeps its first name (a
        chain a -> b -> c links c to a; renamed back, it is just a change). Renamed to a name no
        import takes (hidden, another suffix, out of the vault): its page is archived, as a
        deleted note's. Renamed from such a name: a change at its new name."""
        if self._fmt(src) in SESSION_FORMATS or self._fmt(dest) in SESSION_FORMATS:
            return [src, dest]  # a session log is imported by its content: both are looked at
        keeps = [self._keyed(p) for p in (src, dest)]
        origin = self.moves.pop(src, src)
        self.pending.pop(src, None)  # its change, if any, is the new name's now
        if keeps[0] and origin != src:
            self.left.add(src)  # a name held in passing, which an import may have seen
        if keeps[0] and keeps[1]:
            if origin != dest:
                self.moves[dest] = origin
            return [dest]
        if keeps[1]:
            return [dest]
        return [origin] if keeps[0] else []

    def _keyed(self, path: Path) -> bool:
        """Whether an import keys a page by `path`: a Markdown note in a watched vault."""
        folder = self._folder_of(path)
        return folder is not None and _wanted(path, self.folders[folder]) \
            and is_text(path.relative_to(folder).as_posix())

    def _problem(self, problem: dict[str, Any]) -> None:
        """An import's problem, named once while the watch runs (not at every import)."""
        said = (problem.get("source"), problem.get("item"), problem.get("reason"))
        if said not in self.said:
            self.said.add(said)
            self.say(f"{problem.get('outcome')}: {problem.get('source')}"
                     + (f" [{problem['item']}]" if problem.get("item") else "")
                     + f": {problem.get('reason')}")

    def _folder_of(self, path: Path) -> Path | None:
        for folder in self.folders:
            if path == folder or folder in path.parents:
                return folder
        return None

    def _fmt(self, path: Path) -> str:
        folder = self._folder_of(path)
        return self.folders[folder] if folder else ""

    def ready(self) -> list[Path]:
        """The pending paths whose size and mtime held still for `settle` seconds (or that
        are gone); the others stay pending."""
        now = time.monotonic()
        out = []
        with self.lock:
            for path, (seen, since) in list(self.pending.items()):
                try:
                    st = path.stat()
                    sig: tuple[int, int] | None = (st.st_size, st.st_mtime_ns)
                except OSError:
                    sig = None
                if sig != seen:
                    self.pending[path] = (sig, now)
                elif now - since >= self.settle:
                    del self.pending[path]
                    out.append(path)
        return out

    def import_paths(self, paths: list[Path]) -> None:
        from pcp_cli import api

        by_folder: dict[Path, list[Path]] = {}
        for path in paths:
            folder = self._folder_of(path)
            if folder is not None:
                by_folder.setdefault(folder, []).append(path)
        for folder, changed in by_folder.items():
            fmt = self.folders[folder]
            try:
                with api.open_store(self.root) as store:
                    if fmt in SESSION_FORMATS:  # a file alone, or (catching up) the folder
                        for path in changed:
                            if path.exists():
                                self._report(path, api.import_path(store, path, format=fmt))
                        continue
                    with self.lock:
                        renamed = {new: self.moves.pop(new) for new in changed
                                   if new in self.moves}
                        passed = {p for p in self.left if folder in p.parents}
                        self.left -= passed
                    gone = [p for p in changed if not p.exists()]
                    # a name held in passing that an import of the vault saw meanwhile
                    gone += [p for p in passed if not p.exists()]
                    # renamed, then deleted before it settled: its first name is gone too
                    gone += [old for new, old in renamed.items()
                             if not new.exists() and not old.exists()]
                    if any(p.exists() for p in changed):
                        summary = api.import_path(store, folder, format=fmt)
                        self.vaults[folder] = summary["vault"]["key_prefix"]
                        self._report(folder, summary)
                    for path in changed:
                        if path != folder and path.exists():
                            self._revive(store, folder, path)
                    for new, old in renamed.items():
                        if new.exists() and not old.exists():
                            self._renamed(store, folder, old, new)
                    for path in gone:
                        self._archive(store, folder, path)
            except PcpError as exc:
                self.say(f"watch: {shown(folder)}: {exc.message}")
            except Exception as exc:  # noqa: BLE001 - one folder's failure never ends the watch
                self.say(f"watch: {shown(folder)}: unexpected {type(exc).__name__}: {exc} "
                         "(tried again on its next change)")

    def _key(self, store: Any, folder: Path, path: Path) -> str:
        """The import key of the note at `path`: its vault's prefix and its path in it."""
        from pcp_cli import api

        if folder not in self.vaults:
            self.vaults[folder] = api.markdown_vault(store, folder)["key_prefix"]
        return self.vaults[folder] + path.relative_to(folder).as_posix()

    def _renamed(self, store: Any, folder: Path, old: Path, new: Path) -> None:
        """A note renamed in the vault: its new page supersedes the old one (linked, the old
        page kept with its history). The page id is the new path's: pages are keyed by their
        vault and path in it."""
        from pcp_cli import api

        old_rel, new_rel = (p.relative_to(folder).as_posix() for p in (old, new))
        if not is_text(old_rel):
            return  # its old name was never imported
        old_id = api.imported_page_id(self._key(store, folder, old))
        new_id = api.imported_page_id(self._key(store, folder, new))
        if old_id == new_id or not (store.page_exists(old_id) and store.page_exists(new_id)):
            return
        if store.current(old_id).state.lifecycle_status != "active":
            return
        api.set_lifecycle(store, old_id, "superseded", reason=f"{old_rel} was renamed to "
                          f"{new_rel} in {shown(folder)}", actor=WATCHER)
        api.link_pages(store, new_id, "supersedes", old_id, note=f"renamed from {old_rel}",
                       actor=WATCHER)
        self.say(f"{new_id} supersedes {old_id} ({old_rel} renamed to {new_rel})")

    def _archive(self, store: Any, folder: Path, path: Path) -> None:
        """A note that left the vault: its page is archived (kept, with its history)."""
        from pcp_cli import api

        rel = path.relative_to(folder).as_posix()
        page_id = api.imported_page_id(self._key(store, folder, path))
        if not store.page_exists(page_id):
            return
        if store.current(page_id).state.lifecycle_status != "active":
            return
        api.set_lifecycle(store, page_id, "archived",
                          reason=f"{rel} was deleted or renamed in {shown(folder)}",
                          actor=WATCHER)
        self.say(f"archived {page_id} ({rel} left {shown(folder)})")

    def _revive(self, store: Any, folder: Path, path: Path) -> None:
        """A note back in the vault (renamed back, restored from the trash) whose page this
        watcher retired when it left: the page is active again. A page the person archived
        or superseded themselves stays as they left it."""
        from pcp_cli import api

        rel = path.relative_to(folder).as_posix()
        page_id = api.imported_page_id(self._key(store, folder, path))
        if not store.page_exists(page_id):
            return
        if store.current(page_id).state.lifecycle_status not in ("archived", "superseded"):
            return
        retired = None  # the revision that took the page out of the active ones
        for revision in reversed(store.revisions(page_id)):
            if revision.state.lifecycle_status == "active":
                break
            retired = revision
        if retired is None or not any(step.actor_id == WATCHER.actor_id
                                      for step in retired.provenance):
            return
        api.set_lifecycle(store, page_id, "active", reason=f"{rel} is back in {shown(folder)}",
                          actor=WATCHER)
        self.say(f"{page_id} is active again ({rel} is back in {shown(folder)})")

    def _report(self, path: Path, summary: dict[str, Any]) -> None:
        counts = {k: summary.get(k, 0) for k in ("created", "revised", "failed")}
        if counts["created"] or counts["revised"] or counts["failed"]:
            self.say(f"imported {shown(path)}: {counts['created']} created, "
                     f"{counts['revised']} revised, {counts['failed']} failed")
        for problem in summary.get("problems") or []:
            self._problem(problem)

    def loop(self) -> None:
        while not self.stopping:
            with self.lock:
                waiting = bool(self.pending)
            # nothing pending: sleep until an event (no timeout, no CPU)
            self.wake.wait(self.settle / 4 if waiting else None)
            self.wake.clear()
            ready = self.ready()
            if ready:
                self.busy = True
                try:
                    self.import_paths(ready)
                finally:
                    self.busy = False


def _wanted(path: Path, fmt: str) -> bool:
    if any(part.startswith(".") for part in path.parts[-1:]):
        return False  # hidden and temporary files (editors' swap files, .obsidian)
    if fmt in SESSION_FORMATS:
        return path.suffix == ".jsonl"
    return path.suffix.lower() in (".md", ".markdown")


def _observer(poll: bool) -> Any:
    if poll:
        from watchdog.observers.polling import PollingObserver

        return PollingObserver(timeout=1.0)
    from watchdog.observers import Observer

    return Observer()


def watch_folders(root: Path, paths: list[str], *, poll: bool = False, settle: float = 2.0,
                  say: Callable[[str], None] = print) -> None:
    """Watch `paths` (default: the folders earlier imports recorded) and import what changes
    into the store at `root`, until SIGINT or SIGTERM."""
    from pcp_cli import api

    if settle < 0:
        raise UsageError("--settle must be 0 or more seconds")
    with api.open_store(root, readonly=True, refresh=False) as store:
        known = api.import_sources(store)
    if paths:
        folders = {}
        for given in paths:
            folder = Path(given).expanduser().resolve()
            if not folder.is_dir():
                raise UsageError(f"{given}: not a folder", hint="pcp watch takes folders")
            folders[folder] = folder_format(folder, (known.get(str(folder)) or {}).get("format"))
    else:
        folders = {Path(p): str(v.get("format")) for p, v in known.items() if Path(p).is_dir()}
        if not folders:
            raise UsageError("no folder to watch: no earlier import recorded one",
                             hint="name the folders: pcp watch ~/notes ~/.claude/projects")
    watcher = Watcher(root, folders, settle=settle, say=say)

    def stop(signum: int, frame: Any) -> None:
        # an import under way finishes first; a second signal does not wait (imports are
        # idempotent: the next one finishes what a stopped one began)
        again, watcher.stopping = watcher.stopping, True
        watcher.wake.set()
        if again or not watcher.busy:
            raise KeyboardInterrupt

    old = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    observer = None
    try:
        observer = _start(folders, watcher, poll, say)
        for folder, fmt in folders.items():
            say(f"watching {shown(folder)} ({fmt})")
        # catch up with what changed while nobody watched, then wait for events
        watcher.import_paths(list(folders))
        watcher.loop()
    except KeyboardInterrupt:
        pass
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
        if observer is not None:
            observer.stop()
            observer.join(timeout=5)
    say("stopped")


def _start(folders: dict[Path, str], watcher: Watcher, poll: bool,
           say: Callable[[str], None]) -> Any:
    """A started observer on every folder: events, or polling where events fail."""
    handler = _Handler(watcher)
    observer = _observer(poll)
    try:
        for folder in folders:
            observer.schedule(handler, str(folder), recursive=True)
        observer.start()
        return observer
    except OSError as exc:
        if poll:
            raise
        say(f"watch: file-system events unavailable ({exc}); polling instead")
        observer = _observer(True)
        for folder in folders:
            observer.schedule(handler, str(folder), recursive=True)
        observer.start()
        return observer
