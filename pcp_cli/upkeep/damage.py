"""Damage to the store's folders that reads must not answer as "nothing".

A file where a folder must be hides everything that folder held: `pages/` (every head file), a
namespace folder under it (the head files of that namespace) or a page's revision folder (its
history). Listing such a store would answer "0 pages"; instead reads raise StoreDamaged naming
the path, and `pcp doctor` reports each as a `not_a_folder` finding (never fixable: the folder
must come back from git or a backup, where the missing files are).

The scan is one listing of `revisions/` and a set difference with the catalog, remembered
while clean (`folder_damage`), so reads pay little for it; a page whose head file is missing for another reason (a write killed between
revision and head file) is an interrupted write, left to doctor.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcp_cli.errors import PcpError, StoreDamaged
from pcp_cli.model.ids import is_safe_id

if TYPE_CHECKING:
    from pcp_cli.store.store import Store


@dataclass(frozen=True)
class Damage:
    path: str  # store-relative
    message: str
    page_ids: tuple[str, ...] = ()


def folder_damage(store: Store, *, remembered: bool = False) -> list[Damage]:
    """Every file (or other non-folder) standing where one of the store's folders must be.

    `remembered` (reads): after a check that found nothing (`.pcp/folder-check`), a read lists
    `revisions/` again only when that folder changed (a page folder added or removed, or one
    replaced by a file). A catalog that changed since without it is checked from what it
    removed since: a namespace folder replaced by a file removes its pages' rows, and each
    removed row's folders are looked at; the few pages the last listing found with revisions
    but no row are looked at again too. So a write costs the next read a look at what that
    write removed, not a listing of every page (at 100k pages ~100 ms; at a million, a
    second)."""
    layout = store.layout
    replaced = layout.not_folders()
    if replaced:
        return [Damage(layout.rel(path), "not a folder: a file is where the store needs one; "
                       "put the folder back (from git or a backup)") for path in replaced]
    key = _state_key(store) if remembered else None
    if key is not None:
        kept = _remembered_clean(store)
        if kept is not None and kept.folders_key == key.folders_key:
            if kept.seq == key.seq:
                return []
            if kept.seq < key.seq:
                found = _removed_since(store, kept.seq, kept.unlisted)
                if not found:
                    _remember_clean(store, key, kept.unlisted)
                return found
    found, unlisted = _listed_damage(store)
    if key is not None and not found:
        _remember_clean(store, key, unlisted)
    return found


def _listed_damage(store: Store) -> tuple[list[Damage], list[str]]:
    """The whole check: a listing of `revisions/` against the catalog's page ids. Also the
    head-file folders of the pages it found with revisions but no row (usually none)."""
    layout = store.layout
    found: list[Damage] = []
    with_revisions: list[str] = []
    try:
        scan = list(os.scandir(layout.revisions)) if layout.revisions.exists() else []
    except OSError:
        scan = []
    for item in scan:
        if item.is_dir(follow_symlinks=False):
            if not item.name.startswith("."):
                with_revisions.append(item.name)
        elif is_safe_id(item.name) and not item.name.startswith("."):
            found.append(Damage(f"revisions/{item.name}", f"not a folder: a file is where "
                                f"page {item.name}'s revisions must be; its history cannot be "
                                "read (put the folder back from git or a backup)",
                                (item.name,)))
    listed = store.catalog.page_ids()
    blocked: dict[Path, list[str]] = {}
    unlisted: list[str] = []
    for page_id in with_revisions:
        if page_id in listed or not is_safe_id(page_id):
            continue
        try:
            heads = store.graph_heads(page_id)
            if not heads:
                continue  # a first write cut short before its revision: doctor's to finish
            head = layout.head_path(heads[-1].state.namespace, page_id)
        except PcpError:
            continue
        unlisted.append(layout.rel(head))
        folder = _blocking_folder(layout.pages, head)
        if folder is not None:
            blocked.setdefault(folder, []).append(page_id)
    for folder, page_ids in sorted(blocked.items()):
        found.append(_namespace_damage(layout, folder, page_ids))
    return found, unlisted


def _removed_since(store: Store, seq: int, unlisted: list[str]) -> list[Damage]:
    """The namespace folders replaced by a file among those of the head files the catalog
    removed after `seq`, and of the pages known to have revisions but no row."""
    layout = store.layout
    blocked: dict[Path, list[str]] = {}
    for rel, page_id in [*store.catalog.removed_since(seq), *((rel, None) for rel in unlisted)]:
        folder = _blocking_folder(layout.pages, store.root / rel)
        if folder is not None:
            blocked.setdefault(folder, []).append(page_id or Path(rel).stem)
    return [_namespace_damage(layout, folder, sorted(set(ids)))
            for folder, ids in sorted(blocked.items())]


def _blocking_folder(pages: Path, head: Path) -> Path | None:
    """The outermost folder between `pages` and the head file `head` that is not a folder."""
    try:
        parents = head.relative_to(pages).parents[:-1]
    except ValueError:
        return None
    for parent in reversed(parents):
        folder = pages / parent
        if os.path.lexists(folder) and not folder.is_dir():
            return folder
    return None


def _namespace_damage(layout: Any, folder: Path, page_ids: list[str]) -> Damage:
    namespace = ":".join(folder.relative_to(layout.pages).parts)
    return Damage(layout.rel(folder), f"not a folder: a file is where the folder of "
                  f"namespace {namespace} must be, so {len(page_ids)} page(s) in it "
                  "cannot be read (put the folder back from git or a backup)",
                  tuple(sorted(page_ids)))


_CHECK_FILE = "folder-check"
_MAX_UNLISTED = 200  # more pages with revisions but no row than this: list again each time


@dataclass(frozen=True)
class _State:
    folders_key: str  # revisions/ (mtime, inode) and the catalog's identity
    seq: int  # the catalog's change number
    unlisted: list[str] = field(default_factory=list)  # see _listed_damage


def _state_key(store: Store) -> _State | None:
    try:
        st = os.stat(store.layout.revisions)
    except OSError:
        return None
    catalog = store.catalog
    return _State(f"{st.st_mtime_ns}:{st.st_ino}:{catalog.identity()}", catalog.seq())


def _remembered_clean(store: Store) -> _State | None:
    try:
        data = json.loads((store.layout.local / _CHECK_FILE).read_text(encoding="utf-8"))
        return _State(str(data["folders"]), int(data["seq"]),
                      [str(rel) for rel in data["unlisted"]])
    except (OSError, ValueError, KeyError, TypeError):
        return None  # none, damaged, or an older pcp's: list again


def _remember_clean(store: Store, key: _State, unlisted: list[str]) -> None:
    if len(unlisted) > _MAX_UNLISTED:
        return
    target = store.layout.local / _CHECK_FILE
    temp = target.with_name(f".{_CHECK_FILE}.{os.getpid()}.tmp")
    try:
        temp.write_text(json.dumps({"folders": key.folders_key, "seq": key.seq,
                                    "unlisted": unlisted}) + "\n", encoding="utf-8")
        os.replace(temp, target)
    except OSError:
        with contextlib.suppress(OSError):
            temp.unlink()


def refuse_damaged(store: Store) -> None:
    """StoreDamaged naming the first damaged folder, for reads that would otherwise answer
    with less than the store holds."""
    found = folder_damage(store, remembered=True)
    if found:
        raise StoreDamaged(f"{store.root / found[0].path}: {found[0].message}",
                           hint="`pcp doctor` lists the damage; reads resume once the folder "
                           "is back")
