"""A folder of Markdown notes (an Obsidian vault, a notes folder) or a single `.md` file.

Each `.md` file becomes one page, keyed by its vault and its path relative to the folder
(`markdown:<path>` or `markdown@<vault>:<path>`: store/vaults.py, adapters/vaults.py):

- type `document` when the file sits under a folder named docs, documents, documentation or
  reference (at any depth), or its body is longer than DOCUMENT_CHARS characters; else `note`;
- YAML frontmatter (the store's hardened safe loader: no anchors, aliases or tags; dates stay
  strings) gives `title`,
  `tags`, `aliases`, `created`/`date`, `updated`/`modified` and `sensitivity`; every other key
  is kept under the `org.pcp-cli.frontmatter` extension;
- the title falls back to the first `# heading`, then to the file name;
- `[[wikilinks]]` (`[[Target]]`, `[[Target|shown]]`, `[[Target#heading]]`) that name another
  imported file (by path, file name or alias) become keys in `links`;
- hidden folders and files (`.obsidian`, `.git`, `.trash`, …) and symlinks are skipped.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from pcp_cli.adapters.base import (
    FRONTMATTER_EXT,
    ImportItem,
    ItemProblem,
    ParseResult,
    Progress,
    ProgressTracker,
    iso_from_text,
    not_text_problems,
    walk_folder,
)
from pcp_cli.errors import InvalidInput
from pcp_cli.model.filenames import is_text
from pcp_cli.model.vocab import SENSITIVITIES
from pcp_cli.store.frontmatter import MAX_BODY_BYTES, load_mapping
from pcp_cli.store.vaults import PLAIN

EXT_KEY = "org.pcp-cli.markdown"
DOCUMENT_CHARS = 20_000
DOCUMENT_FOLDERS = frozenset({"docs", "documents", "documentation", "reference"})
_SUFFIXES = (".md", ".markdown")
_KNOWN_KEYS = {"title", "tags", "tag", "aliases", "alias", "created", "date", "updated", "modified",
               "sensitivity"}
_WIKILINK = re.compile(r"(!?)\[\[([^\[\]|#\n]*)(#[^\[\]|\n]*)?(\|[^\[\]\n]*)?\]\]")
_CODE = re.compile(r"^(`{3,}|~{3,}).*?^\1[ \t]*$|`[^`\n]+`", re.MULTILINE | re.DOTALL)
_FRONTMATTER = "frontmatter"
_CLOSING = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
_H1 = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)


class FrontmatterError(ValueError):
    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


@dataclass
class _Parsed:
    meta: dict[str, Any]
    body: str


def iter_items(path: str | os.PathLike[str], *, progress: Progress | None = None,
               key_prefix: str = PLAIN) -> ParseResult:
    """Yield one note/document page per Markdown file, or a problem for each unreadable one.
    Each is keyed `key_prefix` + its path in the folder: its vault's keys (store/vaults.py)."""
    root = Path(path)
    files, not_text = _markdown_files(root)
    yield from not_text_problems(root, not_text)
    base = root if root.is_dir() else root.parent
    sizes = {f: f.stat().st_size for f in files}
    for file in [f for f in files if sizes[f] > MAX_BODY_BYTES]:  # never read: memory stays flat
        yield _too_big(file, base, sizes[file])
    files = [f for f in files if sizes[f] <= MAX_BODY_BYTES]
    tracker = ProgressTracker(progress, sum(sizes[f] for f in files))
    rels = [f.relative_to(base).as_posix() for f in files]
    resolver = _Resolver(rels)
    # First pass: aliases, so a link may name a note by any of its aliases. Only a note whose
    # frontmatter could name one is parsed here (the YAML parse is most of an import's CPU).
    for file, rel in zip(files, rels, strict=True):
        try:
            text = _read(file).decode("utf-8-sig")
            if not _may_have_aliases(text):
                continue
            parsed = parse_note(text)
        except (UnicodeDecodeError, FrontmatterError, OSError):
            continue
        for alias in _strings(parsed.meta.get("aliases", parsed.meta.get("alias"))):
            resolver.add_alias(alias, rel)
    for file, rel in zip(files, rels, strict=True):
        data = _read(file)
        tracker.add(len(data))
        if len(data) > MAX_BODY_BYTES:  # grew since it was listed
            yield _too_big(file, base, None)
            continue
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            yield ItemProblem(str(file), rel, f"not UTF-8 text (byte {exc.start}); skipped")
            continue
        try:
            parsed = parse_note(text)
            sensitivity = note_sensitivity(parsed.meta, text)
        except FrontmatterError as exc:
            yield ItemProblem(str(file), rel, f"bad frontmatter: {exc}", line=exc.line)
            continue
        yield _item(file, rel, parsed, resolver, sensitivity, key_prefix)


def markdown_rels(path: str | os.PathLike[str]) -> list[str]:
    """The paths in the folder (or a single note's name) of the notes an import would read."""
    root = Path(path)
    files, _ = _markdown_files(root)
    base = root if root.is_dir() else root.parent
    return [f.relative_to(base).as_posix() for f in files]


def _read(file: Path) -> bytes:
    """The note's bytes, at most one past the limit (a note that grew is never read whole)."""
    with file.open("rb") as handle:
        return handle.read(MAX_BODY_BYTES + 1)


def _too_big(file: Path, base: Path, size: int | None) -> ItemProblem:
    """`size` None: the note grew past the limit while it was read."""
    said = f"{size:,} bytes" if size is not None else "it grew while being read"
    return ItemProblem(str(file), file.relative_to(base).as_posix(),
                       f"over the {MAX_BODY_BYTES:,}-byte limit for a note ({said}; a page's "
                       "file holds at most 16 MiB); skipped: split it into smaller notes to "
                       "import it")


def _may_have_aliases(text: str) -> bool:
    """False when the note's frontmatter (found as `parse_note` finds it) cannot hold an
    `alias`/`aliases` key: there is none, or it never spells "alias" and has no escape (a
    backslash) that could spell it."""
    if not text.startswith(("---\n", "---\r")):
        return False
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    end = _CLOSING.search(text, 4)
    head = text if end is None else text[:end.start()]
    return "alias" in head or "\\" in head


def _markdown_files(root: Path) -> tuple[list[Path], list[Path]]:
    """The notes to import, and those left out because their names are not text."""
    if root.is_file():
        return ([root], []) if is_text(root.name) else ([], [root])
    return walk_folder(root, lambda name: name.lower().endswith(_SUFFIXES))


# --- frontmatter ----------------------------------------------------------------------------


def parse_note(text: str) -> _Parsed:
    """Split `---` frontmatter from the body and parse it; raise FrontmatterError if bad."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.startswith("---\n"):
        return _Parsed({}, text)
    end = re.search(r"^(?:---|\.\.\.)[ \t]*$", text[4:], re.MULTILINE)
    if end is None:
        raise FrontmatterError("the opening '---' has no closing '---'", 1)
    raw = text[4 : 4 + end.start()]
    body = text[4 + end.end() :].lstrip("\n")
    try:
        meta = load_mapping(raw, _FRONTMATTER, first_line=2)  # line 1 is the opening '---'
    except InvalidInput as exc:
        where = f"{_FRONTMATTER}:{exc.line}: " if exc.line is not None else f"{_FRONTMATTER}: "
        raise FrontmatterError(exc.message.removeprefix(where), exc.line) from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise FrontmatterError("frontmatter is not a mapping of keys to values", 2)
    return _Parsed({str(k): v for k, v in meta.items()}, body)


def note_sensitivity(meta: dict[str, Any], text: str) -> str:
    """The note's `sensitivity` (low, medium or high; any case), `low` when it says none.
    FrontmatterError (with the key's line) for any other value: a note the person marked in a
    way pcp cannot read is skipped, never served as `low`."""
    value = meta.get("sensitivity")
    if value is None:
        return "low"
    said = value.strip().lower() if isinstance(value, str) else None
    if said in SENSITIVITIES:
        return said
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # as parse_note counts lines
    found = re.search(r"^sensitivity[ \t]*:", text, re.MULTILINE)
    raise FrontmatterError(f"sensitivity: {value!r} is not one of {', '.join(SENSITIVITIES)}; "
                           "the note is not imported until it is",
                           text.count("\n", 0, found.start()) + 1 if found else None)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value.strip()] if value.strip() else []
    if isinstance(value, list):
        return [str(v).strip() for v in value if v is not None and str(v).strip()]
    return []


def parse_tags(value: Any) -> tuple[str, ...]:
    """Tags from a list, a comma or space separated string, with or without leading '#'."""
    if isinstance(value, str):
        raw = re.split(r"[,\s]+", value)
    elif isinstance(value, list):
        raw = [str(v) for v in value if v is not None]
    else:
        return ()
    tags: list[str] = []
    for tag in raw:
        tag = tag.strip().lstrip("#").strip()
        if tag and tag not in tags:
            tags.append(tag)
    return tuple(tags)


def _json_safe(value: Any) -> Any:
    if isinstance(value, datetime):
        return iso_from_text(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_json_safe(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


# --- wikilinks ------------------------------------------------------------------------------


class _Resolver:
    """Obsidian-style link resolution: by path, then file name, then alias (case-insensitive)."""

    def __init__(self, rels: list[str]) -> None:
        self.by_path: dict[str, str] = {}
        self.by_name: dict[str, str] = {}
        self.by_alias: dict[str, str] = {}
        # Shortest paths first, so an ambiguous file name resolves to the shallowest file.
        for rel in sorted(rels, key=lambda r: (r.count("/"), r)):
            stem = _strip_suffix(rel).casefold()
            self.by_path.setdefault(stem, rel)
            self.by_name.setdefault(PurePosixPath(stem).name, rel)

    def add_alias(self, alias: str, rel: str) -> None:
        self.by_alias.setdefault(alias.casefold(), rel)

    def resolve(self, target: str) -> str | None:
        wanted = _strip_suffix(target.strip().lstrip("/")).casefold()
        if not wanted:
            return None
        return (
            self.by_path.get(wanted)
            or next((r for p, r in self.by_path.items() if p.endswith("/" + wanted)), None)
            or self.by_name.get(wanted)
            or self.by_alias.get(target.strip().casefold())
        )


def _strip_suffix(name: str) -> str:
    lower = name.lower()
    for suffix in _SUFFIXES:
        if lower.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _outside_code(body: str) -> str:
    """`body` without its code blocks and code spans (the regex pass only when it has some)."""
    return _CODE.sub("", body) if "`" in body or "~~~" in body else body


def wikilink_targets(body: str) -> list[str]:
    """Targets of `[[...]]` links outside code, in order, without heading or display parts."""
    if "[" not in body:  # no link, and none can appear when code is taken out
        return []
    visible = _outside_code(body)
    return [m.group(2).strip() for m in _WIKILINK.finditer(visible) if m.group(2).strip()]


# --- building the item ----------------------------------------------------------------------


def _item(file: Path, rel: str, parsed: _Parsed, resolver: _Resolver,
          sensitivity: str, key_prefix: str) -> ImportItem:
    meta, body = parsed.meta, parsed.body
    key = key_prefix + rel
    title = meta.get("title")
    if not isinstance(title, str | int | float) or not str(title).strip():
        heading = _H1.search(_outside_code(body))
        title = heading.group(1) if heading else _strip_suffix(PurePosixPath(rel).name)
    links: list[str] = []
    unresolved: list[str] = []
    for target in wikilink_targets(body):
        found = resolver.resolve(target)
        if found is None:
            if PurePosixPath(target).suffix.lower() not in ("", *_SUFFIXES):
                continue  # an embedded image or PDF, not a note
            if target not in unresolved:
                unresolved.append(target)
        elif found != rel and key_prefix + found not in links:
            links.append(key_prefix + found)  # within its own vault
    record: dict[str, Any] = {}
    aliases = _strings(meta.get("aliases", meta.get("alias")))
    if aliases:
        record["aliases"] = aliases
    created = _first_time(meta, "created", "date")
    updated = _first_time(meta, "updated", "modified")
    if created:
        record["created_at"] = created
    if updated:
        record["updated_at"] = updated
    timestamp = updated or created
    weak = timestamp is None  # dated by the file's mtime only: touching it is no change
    if timestamp is None:
        timestamp = iso_from_text(datetime.fromtimestamp(file.stat().st_mtime, UTC))
    extensions: dict[str, Any] = {}
    unknown = {k: _json_safe(v) for k, v in meta.items() if k not in _KNOWN_KEYS}
    if unknown:
        extensions[FRONTMATTER_EXT] = unknown
    if unresolved:
        extensions[EXT_KEY] = {"unresolved_links": unresolved}
    folders = {part.casefold() for part in PurePosixPath(rel).parts[:-1]}
    is_document = bool(folders & DOCUMENT_FOLDERS) or len(body) > DOCUMENT_CHARS
    return ImportItem(
        key=key,
        kind="page",
        type="document" if is_document else "note",
        title=str(title).strip(),
        content=body if body.endswith("\n") or not body else body + "\n",
        tags=parse_tags(meta.get("tags", meta.get("tag"))),
        source_refs=(key,),
        record=record,
        extensions=extensions,
        links=tuple(links),
        timestamp=timestamp,
        weak_timestamp=weak,
        sensitivity=sensitivity,
    )


def _first_time(meta: dict[str, Any], *names: str) -> str | None:
    for name in names:
        value = meta.get(name)
        if isinstance(value, str | date | datetime) and (when := iso_from_text(value)):
            return when
    return None
