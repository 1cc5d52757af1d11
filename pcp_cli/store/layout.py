"""Where everything lives in a store folder. The only place that turns ids into paths."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from pcp_cli.errors import InvalidInput
from pcp_cli.model.ids import check_id
from pcp_cli.model.vocab import NAMESPACE_PATTERN

MANIFEST = "pcp.yaml"
PAGES = "pages"
REVISIONS = "revisions"
RELATIONS = "relations"
EVENTS = "events"
LOCAL = ".pcp"

_NAMESPACE = re.compile(NAMESPACE_PATTERN)
# Folders that mark another store or repository: nothing of pcp's crosses into them.
FOREIGN_MARKERS = (MANIFEST, ".git")
# How many folders `pcp init` looks through for a store below the new one.
NEST_SCAN_MAX_DIRS = 20_000


def is_foreign_root(folder: Path) -> bool:
    """True when `folder` holds its own `pcp.yaml` or `.git`: another store (or repository)
    that a scan of the enclosing store must not cross into."""
    return any(os.path.lexists(os.path.join(folder, m)) for m in FOREIGN_MARKERS)


def enclosing_store(folder: Path) -> Path | None:
    """The nearest store folder strictly above `folder` (None if there is none)."""
    for parent in folder.parents:
        if (parent / MANIFEST).is_file():
            return parent
    return None


def nested_store(folder: Path) -> Path | None:
    """A store folder somewhere below `folder` (None if none within NEST_SCAN_MAX_DIRS)."""
    if not folder.is_dir():
        return None
    for seen, (dirpath, dirnames, filenames) in enumerate(os.walk(folder), start=1):
        if seen > NEST_SCAN_MAX_DIRS:
            return None
        if dirpath != str(folder) and MANIFEST in filenames:
            return Path(dirpath)
        dirnames[:] = [d for d in dirnames if d not in (LOCAL, ".git")]
    return None


def check_namespace(namespace: object) -> str:
    if not isinstance(namespace, str) or not _NAMESPACE.match(namespace) or ".." in namespace:
        raise InvalidInput(
            f"namespace {str(namespace)[:80]!r} is not valid",
            hint="a namespace is lowercase segments joined by ':', e.g. 'user:ada' or "
            "'project:tidewatch'",
        )
    return namespace


@dataclass(frozen=True)
class Layout:
    root: Path

    @cached_property
    def manifest(self) -> Path:
        return self.root / MANIFEST

    @cached_property
    def pages(self) -> Path:
        return self.root / PAGES

    @cached_property
    def revisions(self) -> Path:
        return self.root / REVISIONS

    @cached_property
    def relations(self) -> Path:
        return self.root / RELATIONS

    @cached_property
    def events(self) -> Path:
        return self.root / EVENTS

    @cached_property
    def local(self) -> Path:
        return self.root / LOCAL

    def not_folders(self) -> list[Path]:
        """The store's own folders (pages/, revisions/, relations/, events/) that something
        else, e.g. a file, has replaced: nothing in them can be read or written."""
        found = []
        for path in (self.pages, self.revisions, self.relations, self.events):
            try:
                if not path.is_dir() and (path.exists() or path.is_symlink()):
                    found.append(path)
            except OSError:
                found.append(path)
        return found

    def namespace_dir(self, namespace: str) -> Path:
        return self.pages.joinpath(*check_namespace(namespace).split(":"))

    def head_path(self, namespace: str, page_id: str) -> Path:
        return self.namespace_dir(namespace) / f"{check_id(page_id, 'page id')}.md"

    def namespace_of(self, head_path: Path) -> str:
        """The namespace a head file's folder stands for (`pages/user/ada/x.md` -> `user:ada`)."""
        return ":".join(head_path.parent.relative_to(self.pages).parts)

    def revision_dir(self, page_id: str) -> Path:
        return self.revisions / check_id(page_id, "page id")

    def revision_path(self, page_id: str, revision_id: str) -> Path:
        return self.revision_dir(page_id) / f"{check_id(revision_id, 'revision id')}.json"

    def relation_path(self, relation_id: str) -> Path:
        return self.relations / f"{check_id(relation_id, 'relation id')}.json"

    def event_path(self, event_id: str, timestamp: str) -> Path:
        year, month = timestamp[:4], timestamp[5:7]
        if not (year.isdigit() and month.isdigit()):
            year, month = "0000", "00"
        return self.events / year / month / f"{check_id(event_id, 'event id')}.json"

    def rel(self, path: Path) -> str:
        """A store-relative POSIX path, as shown to people and stored in the catalog."""
        return path.relative_to(self.root).as_posix()
