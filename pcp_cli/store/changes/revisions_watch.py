"""The store monitor's watch on `revisions/`: which page folders gained or lost a file.

`pcp status` needs each page's revision graph at a glance (store/graph.py), and a revision added
by hand or by `git pull` changes only its page's folder: nothing but a stat of every folder
(~0.3 s at 100,000 pages) or a watch on every folder sees it. The monitor (monitor.py)
keeps one inotify watch on `revisions/` and one on each page folder in it, and names to a
command the folders changed since its token; the command summarizes those folders only.

inotify has no recursive watch, so this costs one watch per page. The per-user limit
(`/proc/sys/fs/inotify/max_user_watches`, often 8,192 to 1,048,576) is shared by every program
the person runs, so the watch takes at most three quarters of it (`PCP_MONITOR_MAX_WATCHES`
sets another ceiling). Past that, or when the kernel refuses a watch, it gives every watch
back and says why (`refused`); from then on the monitor cannot vouch for `revisions/` and
status stats every folder, as without a monitor. Head files are watched as before either way.

Past the budget it keeps one watch, on `revisions/` itself, whose events name the entries
created, removed or renamed there (`take_top`): what the read-side damage check needs to look
at a new page folder, or a file where one must be, without listing a million names.

Events that make it unable to vouch for what came before (then `take` says `full`): the first
watch, a queue overflow, `revisions/` itself removed, moved or not there yet. Watching 100,000
folders takes a second or more, so it is done `CHUNK` folders per `take` (`busy` until done),
and the monitor keeps answering meanwhile: it cannot vouch for `revisions/` until the last one.
"""

from __future__ import annotations

import ctypes
import errno
import os
from pathlib import Path
from typing import Any

from pcp_cli.store.changes import watch as watching

_IN_CREATE, _IN_DELETE = watching._IN_CREATE, watching._IN_DELETE
_IN_MOVED_FROM, _IN_MOVED_TO = watching._IN_MOVED_FROM, watching._IN_MOVED_TO
_IN_DELETE_SELF, _IN_MOVE_SELF = watching._IN_DELETE_SELF, watching._IN_MOVE_SELF
_IN_IGNORED, _IN_ISDIR, _IN_ONLYDIR = watching._IN_IGNORED, watching._IN_ISDIR, watching._IN_ONLYDIR
# Revision files are written once and never changed: only names coming and going matter.
MASK = (_IN_CREATE | _IN_DELETE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_DELETE_SELF | _IN_MOVE_SELF
        | _IN_ONLYDIR)


CHUNK = 5000  # folders watched per take while the watches are being set


def watch_budget() -> int:
    """How many folders under `revisions/` the monitor may watch."""
    given = os.environ.get("PCP_MONITOR_MAX_WATCHES")
    if given:
        return max(0, int(given))
    try:
        with open("/proc/sys/fs/inotify/max_user_watches", encoding="ascii") as f:
            return int(f.read().strip()) * 3 // 4
    except (OSError, ValueError):
        return 8192 * 3 // 4


class RevisionsWatch:
    """Watches on `revisions/` and its page folders, in the monitor's inotify instance."""

    def __init__(self, hub: Any, revisions: Path, budget: int | None = None) -> None:
        self.hub = hub
        self.revisions = revisions
        self.budget = watch_budget() if budget is None else budget
        self.top: int | None = None  # the watch on revisions/ itself
        self.folders: dict[int, str] = {}  # wd -> page folder name
        self.names: set[str] = set()  # folders named by events since the last take
        self.full = True
        self.rewatch = True
        self.refused: str | None = None  # why revisions/ is not watched (then never vouched)
        self.todo: list[str] = []  # folders listed but not yet watched
        self.missing = False  # no revisions/ to watch at the last try (tried again each take)
        # Every name created, removed or renamed in revisions/ itself (a page folder, or a file
        # where one must be), for the read-side damage check (upkeep/damage.py): one watch,
        # kept even past the budget for page folders. `top_full`: what happened before is
        # unknown (the watch was set afresh, or lost).
        self.top_names: set[str] = set()
        self.top_full = True

    @property
    def vouching(self) -> bool:
        """Every page folder is watched: what `take` names since a take is all that changed."""
        return self.refused is None and self.top is not None and not self.busy

    @property
    def busy(self) -> bool:
        """Still setting its watches (call `take` again soon)."""
        return self.refused is None and bool(self.todo or (self.rewatch and not self.missing))

    def take(self) -> tuple[bool, set[str]]:
        """Drain the events and watch up to `CHUNK` more folders: (whether what happened before
        is now unknown: the watches were lost, or are still being set, the page folders named
        since the last take). Answers vouch only while `vouching`."""
        self.hub.drain()
        if self.rewatch and self.refused is None:
            self._watch_all()
        elif self.rewatch:
            self._watch_top()
        if self.todo and self.refused is None:
            chunk, self.todo = self.todo[:CHUNK], self.todo[CHUNK:]
            for name in chunk:
                self._add(name)
            self.hub.drain()  # events of folders watched meanwhile
        with self.hub.lock:
            full, self.full = self.full, self.busy
            names, self.names = self.names, set()
        return full, names

    def take_top(self) -> tuple[bool, set[str]]:
        """After `take`: (whether what happened in revisions/ itself before is unknown, the
        names created, removed or renamed there since the last `take_top`)."""
        with self.hub.lock:
            full = self.top_full or self.rewatch
            self.top_full = self.top is None
            names, self.top_names = self.top_names, set()
        return full, names

    def note(self, wd: int, mask: int, name: str) -> None:
        """One event (the hub's lock held)."""
        if wd == self.top:
            if mask & (_IN_IGNORED | _IN_DELETE_SELF | _IN_MOVE_SELF):
                self.rewatch = self.full = True  # revisions/ itself went: watch afresh
                self.top_full = True
            elif name:
                self.top_names.add(name)
            if self.refused is None and name and mask & _IN_ISDIR:
                if mask & (_IN_CREATE | _IN_MOVED_TO):
                    self._add(name)  # a new page folder: watched before any command lists it
                self.names.add(name)
            return
        folder = self.folders.get(wd)
        if folder is None:
            return
        if mask & _IN_IGNORED:  # the folder is gone (its parent's event named it)
            del self.folders[wd]
            self.hub.by_wd.pop(wd, None)
        self.names.add(folder)

    def _add(self, name: str) -> None:
        if self.refused is not None:
            return
        if len(self.folders) >= self.budget:
            self._refuse(f"revisions/ holds more page folders than the {self.budget:,} inotify "
                         "watches the monitor may take")
            return
        wd = self.hub.add(os.path.join(self.revisions, name), self, MASK)
        if wd >= 0:
            self.folders[wd] = name  # a folder renamed keeps its watch: the new name wins
            return
        if ctypes.get_errno() == errno.ENOSPC:
            self._refuse("the system's inotify watches are used up "
                         "(fs.inotify.max_user_watches)")
        # else it is gone again, or not a folder: its name was noted all the same

    def _watch_top(self) -> None:
        """Past the budget: the watch on revisions/ itself alone, set afresh."""
        self.rewatch = False
        with self.hub.lock:
            self.top_full = True
        if self.top is not None:
            self.hub.forget(self.top)
        top = self.hub.add(str(self.revisions), self, MASK)
        self.top = top if top >= 0 else None
        self.rewatch = top < 0

    def _watch_all(self) -> None:
        self.rewatch = False
        with self.hub.lock:
            self.full = True
            self.top_full = True
        self._forget_all()
        top = self.hub.add(str(self.revisions), self, MASK)
        self.missing = top < 0
        if top < 0:
            self.rewatch = True  # no revisions/ yet: try again at the next take
            return
        self.top = top
        try:
            with os.scandir(self.revisions) as it:
                names = [e.name for e in it if e.is_dir(follow_symlinks=False)]
        except OSError:
            self.rewatch = True
            return
        if len(names) > self.budget:
            self._refuse(f"revisions/ holds {len(names):,} page folders, more than the "
                         f"{self.budget:,} inotify watches the monitor may take")
            return
        self.todo = names

    def _refuse(self, why: str) -> None:
        """Give back every page folder's watch (keeping the one on revisions/ itself)."""
        self.refused = why + "; `pcp status` stats every revision folder instead"
        self.full = True
        for wd in self.folders:
            self.hub.forget(wd)
        self.folders.clear()
        self.todo = []

    def _forget_all(self) -> None:
        for wd in [*self.folders, *([] if self.top is None else [self.top])]:
            self.hub.forget(wd)
        self.folders.clear()
        self.top = None
        self.todo = []
