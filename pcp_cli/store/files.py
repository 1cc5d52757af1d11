"""Which files under `pages/` are the store's head files, and which are not what they seem.

One walk, shared by the catalog's change scan, `pcp validate` and `pcp doctor`, so the three
never disagree about what a file is. A head file is a regular `.md` file with one link, in a
folder that is not hidden and holds no store or repository of its own, named in text (a
file or folder name that is not UTF-8 is reported, never adopted: model/filenames.py). A
symlink or a file with more than one hard link is refused (it may be, or become, some other
file: pcp never reads or writes through it); a folder with its own `pcp.yaml` or `.git` is
another store's and skipped.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISDIR, S_ISLNK, S_ISREG
from typing import NamedTuple

from pcp_cli.model.filenames import is_text
from pcp_cli.store.layout import is_foreign_root


class FileStat(NamedTuple):
    """What the change scan keeps of a head file's lstat: a million os.stat_result objects
    were ~780 MB for a scan of a million-page store, these about 360 MB with their paths."""

    st_mtime_ns: int
    st_size: int
    st_ctime_ns: int
    st_ino: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileStat:
        return cls(st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)


@dataclass(frozen=True)
class OddFile:
    kind: str  # symlink | hard_link | not_text
    path: Path
    message: str


def classify(entry: os.DirEntry[str]) -> tuple[os.stat_result | None, OddFile | None]:
    """(its stat, None) for a head file; (None, why) for an odd one; (None, None) to skip.

    Called for every file on every change scan, so a plain head file costs one lstat and no
    Path object (building one per file was ~40% of a 10,000-page scan)."""
    if not entry.name.endswith(".md"):
        return None, None
    try:
        stat = entry.stat(follow_symlinks=False)
    except OSError:
        return None, None
    if not is_text(entry.name):
        return None, OddFile("not_text", Path(entry.path), "a file whose name is not valid "
                             "UTF-8: pcp cannot keep it as a page; rename it (to any name "
                             "ending in .md) and the next pcp command adopts it")
    mode = stat.st_mode
    if S_ISLNK(mode):
        try:
            target = os.path.realpath(entry.path)
        except OSError:  # pragma: no cover
            target = "?"
        return None, OddFile("symlink", Path(entry.path), f"a symlink (to {target}): pcp "
                             "never reads or writes through links under pages/; replace it "
                             "with a real file")
    if not S_ISREG(mode):
        return None, None
    if stat.st_nlink > 1:
        return None, OddFile("hard_link", Path(entry.path), f"a file with {stat.st_nlink} "
                             "hard links: it may be another file too, so pcp neither adopts "
                             "it nor writes through it; copy it (`cp FILE tmp && mv tmp "
                             "FILE`) to make it its own")
    return stat, None


def head_files(pages: Path, rel: str) -> list[tuple[str, FileStat]]:
    """(`rel`/…/name.md, lstat) of every head file under `pages` (whose store-relative path is
    `rel`): what `walk_pages` yields as a head file, in no particular order.

    The catalog's change scan runs this on every refresh, so it is `classify`'s test without
    the odd-file reports, and each folder's files are statted relative to an open descriptor
    of the folder where the platform allows it (one name to resolve, not the whole path: a
    quarter less CPU per file at 100,000 pages)."""
    found: list[tuple[str, FileStat]] = []
    by_fd = os.scandir in os.supports_fd
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)

    def visit(folder: str, rel_folder: str) -> None:
        folders: list[str] = []
        try:
            if by_fd:
                fd = os.open(folder, flags)
                try:
                    with os.scandir(fd) as it:
                        files = _heads_in(it, rel_folder, folders)
                finally:
                    os.close(fd)
            else:
                with os.scandir(folder) as it:
                    files = _heads_in(it, rel_folder, folders)
        except OSError:
            return
        found.extend(files)
        for name in folders:
            path = os.path.join(folder, name)
            if not is_foreign_root(Path(path)):  # another store: never ours
                visit(path, f"{rel_folder}/{name}")

    visit(str(pages), rel)
    return found


def _heads_in(entries: Iterable[os.DirEntry[str]], rel_folder: str, folders: list[str]
              ) -> list[tuple[str, FileStat]]:
    """The head files among one folder's entries, statted as the listing goes (while its
    descriptor is open), and the names of its folders to visit (in `folders`). No entry is
    kept: a folder of 250,000 files listed first held ~200 MB of entries and their stats."""
    found: list[tuple[str, FileStat]] = []
    append, prefix = found.append, rel_folder + "/"
    for entry in entries:
        name = entry.name
        if name[0] == ".":
            continue
        if not (name.isascii() or is_text(name)):
            continue  # never a page, nor a folder of pages: doctor and validate name it
        if name[-3:] != ".md":
            if entry.is_dir(follow_symlinks=False):
                folders.append(name)
            continue
        try:
            stat = entry.stat(follow_symlinks=False)
        except OSError:
            if entry.is_dir(follow_symlinks=False):
                folders.append(name)
            continue
        if stat.st_nlink == 1 and S_ISREG(stat.st_mode):
            append((prefix + name, FileStat(stat.st_mtime_ns, stat.st_size, stat.st_ctime_ns,
                                            stat.st_ino)))
        elif S_ISDIR(stat.st_mode):
            folders.append(name)  # a folder named like a page: its files are head files
    return found


def head_stat(path: Path) -> FileStat | None:
    """The lstat of `path` when `classify` would take it as a head file (a regular `.md` file
    with one link, not hidden), else None: for a path an event named, in a folder the walk
    visits."""
    if path.name.startswith(".") or not path.name.endswith(".md") or not is_text(str(path)):
        return None
    try:
        stat = os.lstat(path)
    except OSError:
        return None
    return FileStat.of(stat) if S_ISREG(stat.st_mode) and stat.st_nlink == 1 else None


def walk_pages(pages: Path) -> Iterator[tuple[Path, os.stat_result | None, OddFile | None]]:
    """Every candidate file under `pages/`, deepest folders last: (path, stat, odd)."""
    try:
        entries = sorted(os.scandir(pages), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_dir(follow_symlinks=False):
            if not is_text(entry.name):
                yield Path(entry.path), None, OddFile(
                    "not_text", Path(entry.path), "a folder whose name is not valid UTF-8: "
                    "pcp reads no page in it; rename it")
            elif not is_foreign_root(Path(entry.path)):
                yield from walk_pages(Path(entry.path))
            continue
        stat, odd = classify(entry)
        if stat is not None or odd is not None:
            yield Path(entry.path), stat, odd


def odd_files(pages: Path) -> list[OddFile]:
    return [odd for _, _, odd in walk_pages(pages) if odd is not None]
