"""What every source parser yields, and how a source is recognised and opened.

A parser turns an export (a zip, a folder or one JSON file) into a stream of neutral
`ImportItem`s. It never touches the store: a later step writes the items through it, using
`ImportItem.key` as the idempotency key so a second import of the same export changes nothing.
A malformed item becomes an `ItemProblem` and the stream goes on.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path, PurePosixPath
from typing import IO, Any, Literal

import ijson

from pcp_cli.errors import InvalidInput
from pcp_cli.model.filenames import NOT_TEXT, is_text, shown
from pcp_cli.model.jsonlimit import TapReader, guarded_stream

Format = Literal["archive", "chatgpt", "claude", "markdown", "claude_code", "codex"]
ItemKind = Literal["page", "keystone_proposal", "profile_proposal"]
# progress(bytes_done, bytes_total): called as a parser reads; total is None when unknown.
Progress = Callable[[int, "int | None"], None]

FRONTMATTER_EXT = "org.pcp-cli.frontmatter"


@dataclass(frozen=True)
class ImportItem:
    """One thing to write: a page, or a keystone/profile proposal awaiting review."""

    # Idempotency key from the source's own ids: `chatgpt:conversation:<id>`.
    key: str
    # "page", or a "keystone_proposal"/"profile_proposal" that is stored as review_status
    # proposed and never affirmed by an import.
    kind: ItemKind
    # Page type (pcp_cli.model.vocab.PAGE_TYPES): conversation, note, document, keystone, ...
    type: str
    title: str
    # The Markdown body, ending in one newline.
    content: str
    # "recorded" for conversation transcripts, "imported" for everything else.
    origin: str = "imported"
    # None means the caller's default namespace; Claude projects use `project:<slug>`.
    namespace: str | None = None
    tags: tuple[str, ...] = ()
    # Where exactly the item came from: `claude:projects.json#project=<uuid>/doc=<uuid>`.
    source_refs: tuple[str, ...] = ()
    # Type-specific fields; conversations: source_system, source_id, started_at, updated_at,
    # message_count, participants (and model when known).
    record: dict[str, Any] = field(default_factory=dict)
    # Namespaced keys only, e.g. "org.pcp-cli.frontmatter".
    extensions: dict[str, Any] = field(default_factory=dict)
    # Keys of other items this one links to; the writer records them as related_to relations.
    links: tuple[str, ...] = ()
    # ISO 8601 (UTC, or a bare date) of the item's last change in the source, when known.
    timestamp: str | None = None
    # True when `timestamp` is only its file's modification time (a note whose frontmatter
    # gives no date): a re-import that differs by that time alone changes nothing
    # (store/reimport.py).
    weak_timestamp: bool = False
    # "medium" for anything that identifies the person (name, remembered facts).
    sensitivity: str = "low"


@dataclass
class ItemProblem:
    """Something in the export that could not be imported as it is.

    `skipped` is False for a warning about an item that was still yielded (for instance a
    ChatGPT conversation whose `current_node` was missing and whose branch was guessed).
    """

    source: str
    item: str | None
    reason: str
    line: int | None = None
    skipped: bool = True


ParseResult = Iterator[ImportItem | ItemProblem]


# --- small shared helpers -------------------------------------------------------------------


def iso_from_epoch(value: object) -> str | None:
    """Epoch seconds (ChatGPT's float times) as ISO 8601 UTC with milliseconds, else None."""
    if isinstance(value, bool) or value is None:
        return None
    if not isinstance(value, int | float):
        try:
            value = float(value)  # type: ignore[arg-type]  # Decimal or numeric string
        except (TypeError, ValueError):
            return None
    try:
        moment = datetime.fromtimestamp(float(value), UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def iso_from_text(value: object) -> str | None:
    """An ISO 8601 string, a date or a datetime, normalised to UTC ISO 8601; None if unusable."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        return value.isoformat()
    elif isinstance(value, str) and value.strip():
        text = value.strip()
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            return text
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return None
    else:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def heading_time(iso: str | None) -> str:
    """`2024-05-01 10:02` from an ISO time, for transcript headings ('' when unknown)."""
    if not iso:
        return ""
    if len(iso) == 10:
        return iso
    return f"{iso[:10]} {iso[11:16]}"


def slugify(text: str, *, fallback: str = "untitled", limit: int = 48) -> str:
    """A namespace-safe slug: lowercase ASCII letters, digits and single hyphens."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:limit].strip("-")
    return slug or fallback


def short_hash(text: str, length: int = 12) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def fence(text: str, info: str = "") -> str:
    """`text` in a fenced block whose fence is longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}{info}\n{text.rstrip()}\n{marks}"


def clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f"\n… [truncated, {len(text) - limit} more characters]"


def json_records(stream: io.BufferedReader) -> Iterator[Any]:
    """The objects of a JSON file holding either a list of them or just one, streamed.

    `stream` must come from `ProgressTracker.wrap` (or `guarded_stream`), which refuses JSON
    nested deeper than MAX_JSON_DEPTH before ijson sees it."""
    head = stream.peek(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    prefix = "" if head.startswith(b"{") else "item"
    # Not use_float: the C backend then rejects integers beyond 64 bits, which are valid JSON.
    # Non-integer numbers arrive as Decimal; iso_from_epoch accepts those.
    yield from ijson.items(stream, prefix)


# Errors a parser may hit on a structurally odd item; the item is skipped, the stream goes on.
ITEM_ERRORS = (TypeError, ValueError, AttributeError, KeyError, IndexError)


def guarded(results: ParseResult, source: str, item: str) -> ParseResult:
    """Pass `results` through, turning an unexpected shape error into an ItemProblem."""
    try:
        yield from results
    except ITEM_ERRORS as exc:
        yield ItemProblem(source, item, f"malformed item ({type(exc).__name__}: {exc})")


# --- opening a source: a zip, a folder or a single file -----------------------------------


class Source:
    """The files of an export, by POSIX relative name, whether zipped, a folder or one file.

    Hidden files and folders (a leading '.') and macOS `__MACOSX` debris are left out.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._zip: zipfile.ZipFile | None = None
        self.sizes: dict[str, int] = {}
        # files left out because their names are not text (filenames.is_text), to report
        self.not_text: list[Path] = []
        if path.is_dir():
            files, self.not_text = walk_folder(path, lambda name: True, hidden=_hidden)
            for full in files:
                self.sizes[full.relative_to(path).as_posix()] = full.stat().st_size
        elif zipfile.is_zipfile(path):
            self._zip = zipfile.ZipFile(path)
            for info in self._zip.infolist():
                parts = PurePosixPath(info.filename).parts
                if info.is_dir() or any(_hidden(p) for p in parts) or ".." in parts:
                    continue
                self.sizes[info.filename] = info.file_size
                _check_expansion(path, info)
            total = sum(self.sizes.values())
            if total > MAX_ZIP_BYTES:
                self._zip.close()
                raise InvalidInput(
                    f"expands to {total:,} bytes, over the {MAX_ZIP_BYTES:,}-byte limit for one "
                    "export", path=str(path), hint=_ZIP_HINT)
        else:
            self.sizes[path.name] = path.stat().st_size

    def not_text_problems(self) -> Iterator[ItemProblem]:
        """A skipped problem for each JSON file left out for its name (the only files an
        export's parser reads), named escaped."""
        yield from not_text_problems(self.path, [f for f in self.not_text
                                                 if f.name.lower().endswith(".json")])

    @property
    def is_zip(self) -> bool:
        return self._zip is not None

    @property
    def names(self) -> list[str]:
        return list(self.sizes)

    def label(self, name: str) -> str:
        """How a problem names a file: `export.zip!conversations.json` or a plain path."""
        if self._zip is not None:
            return f"{self.path.name}!{name}"
        if self.path.is_dir():
            return str(self.path / name)
        return str(self.path)

    def open(self, name: str) -> IO[bytes]:
        if self._zip is not None:
            return self._zip.open(name)
        if self.path.is_dir():
            return (self.path / name).open("rb")
        return self.path.open("rb")

    def close(self) -> None:
        if self._zip is not None:
            self._zip.close()

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# A zip member may expand at most MAX_ZIP_RATIO times its compressed size (members under
# 1 MiB aside), and a whole export to at most MAX_ZIP_BYTES: a zip bomb is refused before any
# of it is inflated. Real exports' JSON compresses 5-20x. zipfile itself stops reading a member
# at the size its header declares. Documented in docs/import.md (Input limits).
MAX_ZIP_RATIO = 200
MAX_ZIP_BYTES = 16 * 1024**3
_ZIP_HINT = ("a real export expands 5-20x; unpack the zip yourself and import the folder if "
             "you trust it")


def _check_expansion(path: Path, info: zipfile.ZipInfo) -> None:
    if info.file_size > 1024 * 1024 and info.file_size > MAX_ZIP_RATIO * max(
            info.compress_size, 1):
        ratio = info.file_size // max(info.compress_size, 1)
        raise InvalidInput(
            f"{info.filename} expands {ratio:,}x ({info.compress_size:,} to {info.file_size:,} "
            f"bytes), over the {MAX_ZIP_RATIO}x limit: refused before unpacking",
            path=str(path), hint=_ZIP_HINT)


def _hidden(name: str) -> bool:
    return name.startswith(".") or name == "__MACOSX"


def _dot(name: str) -> bool:
    return name.startswith(".")


def walk_folder(root: Path, wanted: Callable[[str], bool], *,
                hidden: Callable[[str], bool] = _dot) -> tuple[list[Path], list[Path]]:
    """The files under the folder `root` whose names `wanted` takes, in name order, leaving
    out hidden folders and files (`.obsidian`, `.git`, editors' swap files) and symlinks; and,
    apart, the wanted files whose path below `root` is not text (a name that is not UTF-8:
    model/filenames.py), which no importer can key, for the caller to report as skipped."""
    found: list[Path] = []
    not_text: list[Path] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not hidden(d))
        for name in sorted(names):
            full = Path(folder) / name
            if hidden(name) or not wanted(name) or full.is_symlink():
                continue
            if is_text(str(full.relative_to(root))):
                found.append(full)
            else:
                not_text.append(full)
    return found, not_text


def not_text_problems(root: Path, files: list[Path]) -> Iterator[ItemProblem]:
    """A skipped problem for each file `walk_folder` set aside for its name, named escaped."""
    base = root if root.is_dir() else root.parent
    for file in files:
        yield ItemProblem(shown(file), shown(file.relative_to(base).as_posix()), NOT_TEXT)


class ProgressTracker:
    """Turns per-chunk byte counts from several files into one running total."""

    def __init__(self, progress: Progress | None, total: int | None) -> None:
        self._progress = progress
        self.total = total
        self.done = 0

    def add(self, count: int) -> None:
        self.done += count
        if self._progress is not None:
            self._progress(self.done, self.total)

    def wrap(self, raw: IO[bytes], where: str | None = None) -> io.BufferedReader:
        """A buffered (peekable) stream over `raw` that counts what is read and refuses JSON
        nested too deep (DepthError naming `where`)."""
        return guarded_stream(TapReader(raw, lambda data: self.add(len(data))), where)


# --- recognising a format from content ------------------------------------------------------

_SNIFF_EVENTS = 20_000

_HINT = (
    "pass a ChatGPT export (.zip or conversations.json), a Claude export (.zip or its "
    "folder), a folder of Markdown notes, a PCP v1 archive/profile JSON file, or Claude Code "
    "or Codex CLI session logs (~/.claude/projects, ~/.codex/sessions, or one .jsonl)"
)


def _sniff_json(stream: IO[bytes], where: str) -> tuple[str, set[str], str | None]:
    """Look at the start of a JSON document without reading all of it.

    Returns the top-level shape ('list' | 'object' | 'scalar' | 'invalid'), the keys seen in
    the top-level object or in the first element of a top-level list, and the value of a
    top-level `kind` string if there is one.
    """
    shape = "invalid"
    keys: set[str] = set()
    kind: str | None = None
    try:
        # The guard refuses a deep document before ijson builds its events (whose prefixes
        # grow with the depth), so the sniff costs at most a buffer's worth.
        for count, (prefix, event, value) in enumerate(ijson.parse(guarded_stream(stream,
                                                                                 where))):
            if count == 0:
                shape = {"start_array": "list", "start_map": "object"}.get(event, "scalar")
                if shape == "scalar":
                    break
                continue
            if shape == "object" and prefix == "" and event == "map_key":
                keys.add(value)
            elif shape == "object" and prefix == "kind" and event == "string":
                kind = value
            elif shape == "list" and prefix == "item" and event == "map_key":
                keys.add(value)
            elif shape == "list" and prefix == "item" and event == "string":
                keys.add("<string>")
            elif shape == "list" and event in ("end_map", "end_array") and prefix in ("item", ""):
                break  # the first element, or an empty list, is over
            if count > _SNIFF_EVENTS:
                break
    except (ijson.JSONError, ijson.IncompleteJSONError, UnicodeDecodeError):
        if not keys and shape != "list":
            shape = "invalid"
    return shape, keys, kind


_CHATGPT_KEYS = {"mapping", "current_node"}
_CLAUDE_CONVERSATION_KEYS = {"chat_messages"}
_CLAUDE_OTHER_FILES = {"users.json", "projects.json", "memories.json"}
_ARCHIVE_KINDS = ("pcp.full-archive",)
_PROFILE_KEYS = {"profession", "primary_focus", "summary", "domain_expertise", "values", "name"}


def _classify_json(shape: str, keys: set[str], kind: str | None) -> Format | None:
    if shape == "object":
        if kind in _ARCHIVE_KINDS or (kind or "").startswith("pcp."):
            return "archive"
        if "schema_version" in keys and (keys & _PROFILE_KEYS or "keystones" in keys):
            return "archive"
        if keys & _CHATGPT_KEYS:
            return "chatgpt"
        if keys & _CLAUDE_CONVERSATION_KEYS:
            return "claude"
        return None
    if shape == "list":
        if keys & _CHATGPT_KEYS:
            return "chatgpt"
        if keys & _CLAUDE_CONVERSATION_KEYS:
            return "claude"
        if {"id", "content"} <= keys or {"id", "date", "summary"} <= keys:
            return "archive"
    return None


def detect_export(path: str | os.PathLike[str]) -> Format:
    """Recognise a chat export, a Markdown vault or a PCP v1 archive from what is inside it,
    not from its name (`pcp_cli.adapters.detect_format` adds the session logs).

    Raises InvalidInput with a hint when the path is none of these.
    """
    p = Path(path)
    if not p.exists():
        raise InvalidInput("no such file or folder", path=str(p), hint=_HINT)
    if p.is_file() and p.suffix.lower() in (".md", ".markdown") and not zipfile.is_zipfile(p):
        return "markdown"
    with Source(p) as source:
        verdict = _detect_in(source)
    if verdict is None:
        raise InvalidInput("not a recognised export", path=str(p), hint=_HINT)
    return verdict


def _detect_in(source: Source) -> Format | None:
    if not source.is_zip and not source.path.is_dir():
        with source.open(source.names[0]) as stream:  # one file, whatever its name
            return _classify_json(*_sniff_json(stream, source.label(source.names[0])))
    json_names = [n for n in source.names if n.lower().endswith(".json")]
    # Inside a zip or a folder: conversation files first, shallowest first.
    base = {n: PurePosixPath(n).name.lower() for n in json_names}
    candidates = sorted(json_names, key=lambda n: (n.count("/"), n))
    conversations = [n for n in candidates if base[n] == "conversations.json"]
    others = [n for n in candidates if base[n] != "conversations.json"]
    for name in conversations + others[:20]:
        with source.open(name) as stream:
            verdict = _classify_json(*_sniff_json(stream, source.label(name)))
        if verdict in ("chatgpt", "claude"):
            return verdict
    if any(base[n] in _CLAUDE_OTHER_FILES for n in json_names):
        return "claude"
    # An export with no conversations at all: ChatGPT's zip still carries its HTML viewer.
    if conversations and any(PurePosixPath(n).name == "chat.html" for n in source.names):
        return "chatgpt"
    if not source.is_zip and any(n.lower().endswith((".md", ".markdown")) for n in source.names):
        return "markdown"
    return None
