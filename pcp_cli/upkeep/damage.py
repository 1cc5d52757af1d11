"""Damage to the store's folders that reads must not answer as "nothing".

A file where a folder must be hides everything that folder held: `pages/` (every head file), a
namespace folder under it (the head files of that namespace) or a page's revision folder (its
history). Listing such a store would answer "0 pages"; instead reads raise StoreDamaged naming
the path, and `pcp doctor` reports each as a `not_a_folder` finding (never fixable: the folder
must come back from git or a backup, where the missing files are).

The scan is one listing of `revisions/` and a set difference with the catalog, so reads pay
little for it; a page whose head file is missing for another reason (a write killed between
revision and head file) is an interrupted write, left to doctor.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

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

    `remembered` (reads): skip the listing of `revisions/` while neither that folder nor the
    catalog changed since a listing found nothing (`.pcp/folder-check`): a revision folder
    replaced by a file changes `revisions/`, a namespace folder replaced by a file removes its
    pages' catalog rows. So a read costs a stat here, not a listing of every page."""
    layout = store.layout
    replaced = layout.not_folders()
    if replaced:
        return [Damage(layout.rel(path), "not a folder: a file is where the store needs one; "
                       "put the folder back (from git or a backup)") for path in replaced]
    key = _state_key(store) if remembered else None
    if key is not None and _remembered_clean(store) == key:
        return []
    found: list[Damage] = []
    with_revisions: list[str] = []
    try:
        scan = list(os.scandir(layout.revisions)) if layout.revisions.exists() else []
    except OSError:
        scan = []
    for item in scan:
        if not is_safe_id(item.name) or item.name.startswith("."):
            continue
        if item.is_dir(follow_symlinks=False):
            with_revisions.append(item.name)
        else:
            found.append(Damage(f"revisions/{item.name}", f"not a folder: a file is where "
                                f"page {item.name}'s revisions must be; its history cannot be "
                                "read (put the folder back from git or a backup)",
                                (item.name,)))
    listed = store.catalog.page_ids()
    blocked: dict[Path, list[str]] = {}
    for page_id in with_revisions:
        if page_id in listed:
            continue
        try:
            heads = store.graph_heads(page_id)
            if not heads:
                continue  # a first write cut short before its revision: doctor's to finish
            head = layout.head_path(heads[-1].state.namespace, page_id)
        except PcpError:
            continue
        for parent in reversed(head.relative_to(layout.pages).parents[:-1]):
            folder = layout.pages / parent
            if os.path.lexists(folder) and not folder.is_dir():
                blocked.setdefault(folder, []).append(page_id)
                break
    for folder, page_ids in sorted(blocked.items()):
        namespace = ":".join(folder.relative_to(layout.pages).parts)
        found.append(Damage(layout.rel(folder), f"not a folder: a file is where the folder of "
                            f"namespace {namespace} must be, so {len(page_ids)} page(s) in it "
                            "cannot be read (put the folder back from git or a backup)",
                            tuple(sorted(page_ids))))
    if key is not None and not found:
        _remember_clean(store, key)
    return found


_CHECK_FILE = "folder-check"


def _state_key(store: Store) -> str | None:
    try:
        st = os.stat(store.layout.revisions)
    except OSError:
        return None
    catalog = store.catalog
    return f"{st.st_mtime_ns}:{st.st_ino}:{catalog.identity()}:{catalog.seq()}"


def _remembered_clean(store: Store) -> str | None:
    try:
        return (store.layout.local / _CHECK_FILE).read_text(encoding="ascii").strip()
    except (OSError, ValueError):
        return None


def _remember_clean(store: Store, key: str) -> None:
    target = store.layout.local / _CHECK_FILE
    temp = target.with_name(f".{_CHECK_FILE}.{os.getpid()}.tmp")
    try:
        temp.write_text(key + "\n", encoding="ascii")
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
