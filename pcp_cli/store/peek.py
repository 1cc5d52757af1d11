"""The pages of a few types, read from their head files without the catalog.

A fresh clone has no `.pcp/`, and building the catalog reads and parses every head file (at
100,000 pages: most of a minute and hundreds of megabytes). The micro_prompt needs only the
profile and the keystones, so `HeadPeek` reads only the start of each head file, decides from
the frontmatter's `type:` line whether the file can be one of those types, and parses in full
(with the catalog's own scanner, `folder.scan`) only the files that can, and the files whose
frontmatter is too unusual to decide from a line. A file is skipped only when the full parse
could not make it a page of a wanted type; everything else gives the very entries the catalog
would hold, so what is rendered from them is what the catalog path renders.

It writes nothing: no catalog rows (a half catalog that later commands would trust), no
revisions. Where the catalog path would first change the store or needs the catalog to answer
(a head file edited by hand or a new file dropped in, to be recorded; a head file that names a
revision that is not there), it raises `CatalogNeeded`, and the caller takes the catalog path.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcp_cli.model.filenames import is_text
from pcp_cli.model.ids import is_safe_id
from pcp_cli.model.page import Revision
from pcp_cli.store.catalog import Entry
from pcp_cli.store.files import classify
from pcp_cli.store.folder import scan
from pcp_cli.store.layout import is_foreign_root

if TYPE_CHECKING:
    from pcp_cli.store.store import Store

# How much of a head file is read first; the frontmatter pcp writes is well under this.
FIRST_READ = 4096
_BOM = b"\xef\xbb\xbf"
# Every line of a frontmatter block decided from its lines: a top-level key at column 0 that is
# a plain name followed by a colon and a space, a tab or the end of the line; or a line inside
# the value above (indented, or a list item at column 0); or a comment; or blank. Quoted keys,
# `? key`, merge keys (`<<`), flow mappings, directives and document markers are not among them,
# and make the file undecidable from its lines.
_DECIDABLE = re.compile(rb"(?:(?:[A-Za-z_][A-Za-z0-9_]*:(?:[ \t][^\n]*)?|[ \t#-][^\n]*|)\n)*")
# Blank and comment lines before the first key.
_LEADING = re.compile(rb"(?:(?:[ \t]*|#[^\n]*)\n)*")
_TYPE_KEY = re.compile(rb"^type:(?:[ \t]|$)", re.MULTILINE)
# The one form of the type line decided from the line alone: `type: word`, not continued on an
# indented next line (YAML would join the two into one value).
_TYPE_LINE = re.compile(rb"^type: +([A-Za-z_]+) *\n(?![ \t])", re.MULTILINE)
# Characters YAML also takes as line breaks (CR, NEL, LINE and PARAGRAPH SEPARATOR): with any of
# them, a line of the file is not a line of the YAML.
_OTHER_BREAKS = (b"\r", "\u0085".encode(), "\u2028".encode(), "\u2029".encode())
# Plain words YAML reads as something other than text (`type: null` is no type name).
_NOT_TEXT = frozenset(("null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE"))
_FIELDS = tuple(Entry.__dataclass_fields__)


class CatalogNeeded(Exception):
    """What was asked needs the catalog (or a write the catalog path makes first)."""


def frontmatter_type(raw: bytes) -> str | None:
    """The `type` the frontmatter of these head-file bytes gives, read from its lines.

    "" when the frontmatter has no `type:` line (the page is a note), None when the lines
    cannot decide it (no frontmatter, an unusual YAML layout, several `type:` lines, ...): the
    file must then be parsed in full. `raw` may be only the start of the file; None too when
    the frontmatter's closing line is not in it.
    """
    if raw.startswith(_BOM):
        raw = raw[len(_BOM):]
    if not raw.startswith(b"---\n"):
        return None
    end = raw.find(b"\n---\n", 3)
    if end == -1:
        return None
    block = raw[4:end + 1]
    if any(mark in block for mark in _OTHER_BREAKS):
        return None
    if _DECIDABLE.fullmatch(block) is None:
        return None
    lead = _LEADING.match(block)
    first = block[lead.end():lead.end() + 1] if lead else b""
    if first in (b" ", b"\t", b"-"):
        return None  # the top-level mapping is not at column 0 (or is no mapping)
    if not first:
        return None  # no key at all: the head file of an existing page, edited, or a new file
    keys = len(_TYPE_KEY.findall(block))
    if keys == 0:
        return ""
    found = _TYPE_LINE.findall(block)
    if keys > 1 or len(found) != 1:
        return None  # a duplicate key, or a type written another way: the full parse decides
    value = found[0].decode("ascii")
    return None if value in _NOT_TEXT else value


class HeadPeek:
    """A read-only view of a store without its catalog, holding the pages of `types` only.

    It has the Store's read methods the profile renderings use (`entries`, `load_revision`,
    `current`); asking for another type, or for anything the catalog would be needed for,
    raises `CatalogNeeded`.
    """

    def __init__(self, store: Store, types: Sequence[str]) -> None:
        self.store = store
        self.types = frozenset(types)
        self._entries = self._scan_heads()

    def _scan_heads(self) -> list[Entry]:
        store = self.store
        root = str(store.root) + os.sep
        found: list[Entry] = []
        for path, stat in _head_files(store.layout.pages):
            try:
                raw, page_type = _read_type(path, self.types)
            except OSError:
                continue  # unreadable: the catalog skips it too
            if page_type is not None and page_type not in self.types:
                continue
            if page_type is None and _no_keys(raw):
                name = os.path.basename(path)[:-3]
                if is_safe_id(name) and store.page_exists(name):
                    raise CatalogNeeded(f"{path} is a page's head file without frontmatter")
                continue  # a new file without frontmatter: adopted as a note
            rel = path[len(root):].replace(os.sep, "/")
            entry = _entry(rel, scan(store, rel, raw), stat.st_mtime_ns, stat.st_size)
            if entry.page_id is not None and entry.type not in self.types:
                continue  # another type, or a file the catalog lists as a problem
            if entry.edited or (entry.problem or "").startswith("new file"):
                raise CatalogNeeded(f"{rel} is waiting to be recorded as a revision")
            found.append(entry)
        found.sort(key=lambda e: e.path)
        return found

    # -- the Store's read methods -------------------------------------------------------------
    def entries(
        self,
        *,
        types: Sequence[str] | None = None,
        namespaces: Sequence[str] | None = None,
        statuses: Sequence[str] | None = None,
        review: Sequence[str] | None = ("affirmed",),
    ) -> list[Entry]:
        """As `Store.entries`, for the types this view holds."""
        if not types or not self.types.issuperset(types):
            raise CatalogNeeded(f"entries of types {types!r}")
        return [
            e for e in self._entries
            if e.problem is None and e.page_id is not None and e.type in types
            and (not namespaces or e.namespace in namespaces)
            and (not statuses or e.lifecycle_status in statuses)
            and (not review or e.review_status in review)
        ]

    def load_revision(self, page_id: str, revision_id: str) -> Revision:
        return self.store.load_revision(page_id, revision_id)

    def current(self, page_id: str) -> Revision:
        raise CatalogNeeded(f"the current revision of {page_id}")


def _head_files(folder: Path) -> Iterator[tuple[str, os.stat_result]]:
    """(path, stat) of every head file under `folder`: the files the catalog's scan and
    `files.walk_pages` take as head files (same `classify`, same skipped folders), as strings,
    unsorted."""
    try:
        found = list(os.scandir(folder))
    except OSError:
        return
    for entry in found:
        if entry.name.startswith("."):
            continue
        if entry.is_dir(follow_symlinks=False):
            if is_text(entry.name) and not is_foreign_root(Path(entry.path)):
                yield from _head_files(Path(entry.path))
            continue
        stat, _ = classify(entry)
        if stat is not None:
            yield entry.path, stat


def _read_type(path: str, wanted: frozenset[str]) -> tuple[bytes, str | None]:
    """(the file's bytes, its `frontmatter_type`). When the start of the file already shows a
    type that is not `wanted`, only that start is read: the file will not be parsed."""
    fd = os.open(path, os.O_RDONLY)
    try:
        raw = os.read(fd, FIRST_READ)
        page_type = frontmatter_type(raw)
        if len(raw) < FIRST_READ or (page_type is not None and page_type not in wanted):
            return raw, page_type
        rest = [raw]
        while chunk := os.read(fd, 1 << 20):
            rest.append(chunk)
        raw = b"".join(rest)
        return raw, page_type if page_type is not None else frontmatter_type(raw)
    finally:
        os.close(fd)


def _no_keys(raw: bytes) -> bool:
    """Whether the head file has no frontmatter, or one of blank and comment lines only, as
    `frontmatter.split` sees it (after a byte order mark; CRLF or LF). Such a file named after
    an existing page is that page's head file edited; otherwise a new file, adopted as a note."""
    text = raw.removeprefix(_BOM).replace(b"\r\n", b"\n")
    if not text.startswith(b"---\n"):
        return True
    end = text.find(b"\n---\n", 3)
    if end == -1:
        return False  # unclosed: the full parse says what is wrong
    block = text[4:end + 1]
    return _LEADING.fullmatch(block) is not None and not any(m in block for m in _OTHER_BREAKS)


def _entry(rel: str, fields: dict[str, Any], mtime_ns: int, size: int) -> Entry:
    """The Entry the catalog would give back for these scanned fields (tags and record go
    through the same JSON round trip as a catalog row)."""
    values: dict[str, Any] = dict.fromkeys(_FIELDS)
    values.update((k, v) for k, v in fields.items() if k in values)  # not `detail`: no Entry's
    values.update(path=rel, mtime_ns=mtime_ns, size=size, seq=0)
    values["tags"] = tuple(json.loads(json.dumps(list(values.get("tags") or ()),
                                                 ensure_ascii=False)))
    values["record"] = json.loads(json.dumps(values.get("record") or {}, ensure_ascii=False,
                                             sort_keys=True))
    values["edited"] = bool(values.get("edited"))
    values["title"] = values.get("title") or ""
    return Entry(**values)
