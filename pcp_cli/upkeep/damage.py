"""Damage to the store's folders that reads must not answer as "nothing".

A file where a folder must be hides everything that folder held: `pages/` (every head file), a
namespace folder under it (the head files of that namespace) or a page's revision folder (its
history). Listing such a store would answer "0 pages"; instead reads raise StoreDamaged naming
the path, and `pcp doctor` reports each as a `not_a_folder` finding (never fixable: the folder
must come back from git or a backup, where the missing files are).

The scan is one listing of `revisions/` and a set difference with the catalog, remembered
while clean and then brought up to date from what changed (`folder_damage`), so reads pay
little for it; a page whose head file is missing for another reason (a write killed between
revision and head file) is an interrupted write, left to doctor.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field, replace
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

    `remembered` (reads): after a check that found nothing (`.pcp/folder-check`), a read looks
    only at what changed since. While `revisions/` is as it was, a catalog that changed is
    checked from what it removed (a namespace folder replaced by a file removes its pages'
    rows, and each removed row's folders are looked at), with the few pages the last listing
    found with revisions but no row. When `revisions/` changed (a page added, or a folder
    replaced by a file), the store monitor, when one runs, names the entries created or
    removed there since the check's token, and only those are looked at; else it is listed
    again. So a write costs the next read a look at what it added and removed, not a listing
    of every page (~0.15 s of CPU at 100k pages, 1.5 s at a million)."""
    layout = store.layout
    replaced = layout.not_folders()
    if replaced:
        return [Damage(layout.rel(path), "not a folder: a file is where the store needs one; "
                       "put the folder back (from git or a backup)") for path in replaced]
    key = _state_key(store) if remembered else None
    if key is None:
        return _listed_damage(store)[0]
    kept = _remembered_clean(store)
    if kept is not None and kept.identity == key.identity and kept.seq <= key.seq:
        if kept.revisions == key.revisions:
            if kept.seq == key.seq:
                return []
            found = _removed_since(store, kept.seq, kept.unlisted)
            if not found:
                _remember_clean(store, replace(key, top=kept.top), kept.unlisted)
            return found
        named = _monitor_named(store, kept.top) if kept.top is not None else None
        if named is not None and named[1] is not None:
            token, names = named
            found, unlisted = _named_damage(store, names)
            found += _removed_since(store, kept.seq, kept.unlisted)
            if not found:
                _remember_clean(store, replace(key, top=token),
                                sorted({*kept.unlisted, *unlisted}))
            return found
    token = _monitor_named(store, None)  # taken before the listing: it names later changes
    found, unlisted = _listed_damage(store)
    if not found:
        _remember_clean(store, replace(key, top=token[0] if token else None), unlisted)
    return found


def _monitor_named(store: Store, token: str | None) -> tuple[str, list[str] | None] | None:
    """(the monitor's token now, the entries of `revisions/` created, removed or renamed since
    `token`); the names are None when it cannot vouch (for a None token, always), and the
    whole is None when no monitor answers (or none was asked: no token kept)."""
    from pcp_cli.store.changes import monitor

    if token is None and not os.path.exists(monitor.socket_path(store.root)):
        return None
    answer = monitor.ask_top(store.root, token)
    if answer is None or (token is not None and answer[1] is None):
        return None
    return answer


def _named_damage(store: Store, names: list[str]) -> tuple[list[Damage], list[str]]:
    """The whole check for the entries of `revisions/` the monitor named: each one a file
    where a page folder must be, or a page folder with no row whose namespace folder is a
    file. Also the head-file folders of the pages found with revisions but no row."""
    layout = store.layout
    found: list[Damage] = []
    blocked: dict[Path, list[str]] = {}
    unlisted: list[str] = []
    for name in sorted(set(names)):
        if name.startswith(".") or not is_safe_id(name):
            continue
        path = layout.revisions / name
        if not os.path.lexists(path):
            continue  # removed: a deleted page, or a folder moved away
        if not path.is_dir() or path.is_symlink():
            found.append(_revision_damage(name))
            continue
        if not store.catalog.by_page_id(name):
            _unlisted(store, name, unlisted, blocked)
    found += [_namespace_damage(layout, folder, ids) for folder, ids in sorted(blocked.items())]
    return found, unlisted


def _revision_damage(page_id: str) -> Damage:
    return Damage(f"revisions/{page_id}", f"not a folder: a file is where page {page_id}'s "
                  "revisions must be; its history cannot be read (put the folder back from git "
                  "or a backup)", (page_id,))


def _unlisted(store: Store, page_id: str, unlisted: list[str],
              blocked: dict[Path, list[str]]) -> None:
    """A page with revisions but no catalog row: its head file joins `unlisted`, and the
    page joins the folder that blocks its head file, if one does."""
    head = _head_of(store, page_id)
    if head is None:
        return
    unlisted.append(store.layout.rel(head))
    folder = _blocking_folder(store.layout.pages, head)
    if folder is not None:
        blocked.setdefault(folder, []).append(page_id)


def _head_of(store: Store, page_id: str) -> Path | None:
    """Where the head file of a page with revisions belongs (from its newest head), or None
    for a folder with no revision yet (a first write cut short: doctor's to finish)."""
    try:
        heads = store.graph_heads(page_id)
        if not heads:
            return None
        return store.layout.head_path(heads[-1].state.namespace, page_id)
    except PcpError:
        return None


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
            found.append(_revision_damage(item.name))
    listed = store.catalog.page_ids()
    blocked: dict[Path, list[str]] = {}
    unlisted: list[str] = []
    for page_id in with_revisions:
        if page_id not in listed and is_safe_id(page_id):
            _unlisted(store, page_id, unlisted, blocked)
    found += [_namespace_damage(layout, folder, ids) for folder, ids in sorted(blocked.items())]
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
    revisions: str  # revisions/ (mtime, inode)
    identity: str  # the catalog's identity
    seq: int  # the catalog's change number
    top: str | None = None  # the monitor's token for revisions/ (None: none ran)


def _state_key(store: Store) -> _State | None:
    try:
        st = os.stat(store.layout.revisions)
    except OSError:
        return None
    catalog = store.catalog
    return _State(f"{st.st_mtime_ns}:{st.st_ino}", catalog.identity(), catalog.seq())


@dataclass(frozen=True)
class _Kept(_State):
    unlisted: list[str] = field(default_factory=list)  # see _listed_damage


def _remembered_clean(store: Store) -> _Kept | None:
    try:
        data = json.loads((store.layout.local / _CHECK_FILE).read_text(encoding="utf-8"))
        top = data.get("top")
        return _Kept(str(data["revisions"]), str(data["identity"]), int(data["seq"]),
                     top if isinstance(top, str) else None,
                     [str(rel) for rel in data["unlisted"]])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # none, damaged, or an older pcp's: list again


def _remember_clean(store: Store, key: _State, unlisted: list[str]) -> None:
    if len(unlisted) > _MAX_UNLISTED:
        return
    target = store.layout.local / _CHECK_FILE
    temp = target.with_name(f".{_CHECK_FILE}.{os.getpid()}.tmp")
    try:
        temp.write_text(json.dumps({"revisions": key.revisions, "identity": key.identity,
                                    "seq": key.seq, "top": key.top,
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
