"""Head files: YAML frontmatter plus a Markdown body, parsed safely and written deterministically.

This is the only module that imports yaml, and only when a file is parsed or written: a search
whose store changed nothing never needs it (yaml's import is ~12 ms of a whole-process search).
Parsing is hardened for files a person (or a merge) may have mangled: no tags, no anchors or
aliases, bounded size and depth, no implicit dates or yes/no booleans, and every failure is an
InvalidInput naming the file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from pcp_cli.errors import InvalidInput
from pcp_cli.model.page import normalize_body

if TYPE_CHECKING:
    from types import ModuleType

MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_FRONTMATTER_BYTES = 256 * 1024
# The most an imported body may hold: with its frontmatter, its head file stays in the limit.
MAX_BODY_BYTES = MAX_FILE_BYTES - MAX_FRONTMATTER_BYTES
MAX_DEPTH = 16
MAX_NODES = 20_000

@cache
def _yaml() -> tuple[ModuleType, type, type]:
    """yaml, the strict loader and the dumper, made on first use."""
    import yaml

    loader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    dumper: type = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class StrictLoader(loader):  # type: ignore[misc, valid-type]
        """Safe loader without YAML 1.1 surprises: dates stay strings, only true/false are
        bool, and a key given twice in one mapping is an error (YAML's "last one wins" would
        let a second `sensitivity:` line silently override the first)."""

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if isinstance(node, yaml.MappingNode):
                first: dict[Any, int] = {}
                for key_node, _ in node.value:
                    key = self.construct_object(key_node, deep=True)
                    try:
                        earlier = first.get(key)
                    except TypeError:  # an unhashable key: the base class reports it
                        break
                    if earlier is not None:
                        raise yaml.constructor.ConstructorError(
                            None, None,
                            f"duplicate key {str(key)[:80]!r} (first given on line "
                            f"{{line}}{earlier})",
                            key_node.start_mark,
                        )
                    first[key] = key_node.start_mark.line + 1
            return super().construct_mapping(node, deep=deep)

    StrictLoader.yaml_implicit_resolvers = {
        first: [
            (tag, regexp)
            for tag, regexp in resolvers
            if tag not in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:bool")
        ]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    StrictLoader.add_implicit_resolver(
        "tag:yaml.org,2002:bool",
        re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
        list("tTfF"),
    )
    return yaml, StrictLoader, dumper


CONFLICT_START = re.compile(r"^<{7}( |$)", re.MULTILINE)
CONFLICT_END = re.compile(r"^>{7}( |$)", re.MULTILINE)


def has_conflict_markers(text: str) -> bool:
    """True when `text` holds a git conflict (both a `<<<<<<<` and a `>>>>>>>` line)."""
    return bool(CONFLICT_START.search(text) and CONFLICT_END.search(text))


@dataclass(frozen=True)
class HeadFile:
    frontmatter: dict[str, Any]
    body: str
    body_line: int  # 1-based line number where the body starts


def decode(raw: bytes, path: str) -> str:
    if len(raw) > MAX_FILE_BYTES:
        raise InvalidInput(
            f"file is {len(raw):,} bytes, over the {MAX_FILE_BYTES:,}-byte limit",
            path=path,
            hint="split the content into several pages",
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InvalidInput(
            f"not valid UTF-8 (byte {exc.start})", path=path, line=line,
            hint="save the file as UTF-8",
        ) from None


def split(text: str, path: str) -> HeadFile:
    """Split a head file into its frontmatter mapping and body. No frontmatter is allowed."""
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n")
    if not text.startswith("---\n"):
        return HeadFile({}, normalize_body(text), 1)
    end = text.find("\n---\n", 3)
    if end == -1:
        if text.endswith("\n---") or text.rstrip("\n").endswith("\n---"):
            end = text.rstrip("\n").rfind("\n---")
        else:
            raise InvalidInput(
                "frontmatter starts with '---' but has no closing '---' line", path=path, line=1
            )
    block = text[4 : end + 1]
    body = text[end + 5 :]
    body_line = block.count("\n") + 3
    return HeadFile(load_mapping(block, path, first_line=2), normalize_body(body), body_line)


def load_mapping(block: str, path: str, *, first_line: int = 1) -> dict[str, Any]:
    """Parse a YAML mapping safely; errors name `path` and the line within the file."""
    if len(block.encode("utf-8")) > MAX_FRONTMATTER_BYTES:
        raise InvalidInput(
            f"frontmatter is over the {MAX_FRONTMATTER_BYTES:,}-byte limit", path=path,
            line=first_line,
        )
    yaml, strict, _ = _yaml()
    try:
        if not _needs_event_check(block):
            try:
                data = _load(block)
                shallow = _depth(data) <= MAX_DEPTH
            except RecursionError:  # nested thousands deep: the event pass says where
                shallow = False
            if shallow:
                return _mapping(data, path, first_line)
        _check_events(block, path, first_line)
        data = _load(block)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = first_line + mark.line if mark else first_line
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        # a duplicate key names its first line relative to the block: make it the file's
        problem = re.sub(r"\{line\}(\d+)", lambda m: str(first_line + int(m.group(1)) - 1),
                         problem)
        raise InvalidInput(f"invalid YAML: {problem}", path=path, line=line) from None
    except yaml.YAMLError as exc:
        raise InvalidInput(f"invalid YAML: {exc}", path=path, line=first_line) from None
    return _mapping(data, path, first_line)


def _load(block: str) -> Any:
    """`yaml.load(block, Loader=<the strict loader>)`, with the common documents built here.

    The node tree comes from the loader (libyaml's parser and composer, where installed);
    mappings with string keys, sequences, strings and the implicit ints, floats, booleans and
    nulls are built from it directly (scalars other than strings by the constructor's own
    functions), which is a third of the loader's time on a typical head file. Anything else
    (a duplicate or non-string key, a merge key, another tag) is left to the constructor,
    which builds it, or refuses it with its own message, from the same tree.
    """
    yaml, strict, _ = _yaml()
    loader = strict(block)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        try:
            return _build(node, loader, yaml, 0)
        except _Unusual:
            return loader.construct_document(node)
    finally:
        loader.dispose()


_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_SCALAR_TAGS = frozenset(f"tag:yaml.org,2002:{name}" for name in ("int", "float", "bool", "null"))


def _build(node: Any, loader: Any, yaml: ModuleType, depth: int) -> Any:
    """What the strict loader's constructor builds from `node` (raise _Unusual to let it)."""
    kind = type(node)
    if kind is yaml.ScalarNode:
        if node.tag == _STR:
            return node.value
        if node.tag in _SCALAR_TAGS:
            return loader.yaml_constructors[node.tag](loader, node)
        raise _Unusual
    if depth > MAX_DEPTH:  # the constructor's recursion (or the depth check) has its say
        raise _Unusual
    if kind is yaml.MappingNode and node.tag == _MAP:
        built: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if type(key_node) is not yaml.ScalarNode or key_node.tag != _STR:
                raise _Unusual
            key = key_node.value
            if key in built:  # a duplicate: refused by the constructor, with its line
                raise _Unusual
            built[key] = _build(value_node, loader, yaml, depth + 1)
        return built
    if kind is yaml.SequenceNode and node.tag == _SEQ:
        return [_build(item, loader, yaml, depth + 1) for item in node.value]
    raise _Unusual


def _mapping(data: Any, path: str, first_line: int) -> dict[str, Any]:
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InvalidInput(
            f"frontmatter must be a mapping of keys to values, not a {_yaml_kind(data)}",
            path=path,
            line=first_line,
        )
    return data


# Where YAML could hold an anchor (&), an alias (*) or a tag (!): at the start of a token, i.e.
# at a line start or after white space or a flow/mapping indicator. A block with none of them,
# small enough that it cannot reach MAX_NODES (a node takes at least one character), can skip
# the event pass: with no aliases its loaded value is its node tree, whose depth is checked
# after loading. Anything else takes the event pass, which names the offending line.
_PROPERTY_START = re.compile(r"(?:^|[\s\[\]{},:?-])[&*!]", re.MULTILINE)
_SMALL_BLOCK = 8 * 1024


def _needs_event_check(block: str) -> bool:
    return len(block) > _SMALL_BLOCK or _PROPERTY_START.search(block) is not None


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def _check_events(block: str, path: str, first_line: int) -> None:
    depth = 0
    yaml, strict, _ = _yaml()
    for nodes, event in enumerate(yaml.parse(block, Loader=strict), start=1):
        line = first_line + event.start_mark.line
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise InvalidInput(
                "YAML anchors and aliases are not allowed", path=path, line=line,
                hint="write the value out in full",
            )
        tag = getattr(event, "tag", None)
        implicit = getattr(event, "implicit", True)
        explicit = tag is not None and (
            implicit is False or (isinstance(implicit, tuple) and not any(implicit))
        )
        if explicit:
            raise InvalidInput(f"YAML tags are not allowed ({tag})", path=path, line=line)
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise InvalidInput(
                    f"frontmatter is nested deeper than {MAX_DEPTH} levels", path=path, line=line
                )
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
        if nodes > MAX_NODES:
            raise InvalidInput(
                f"frontmatter has more than {MAX_NODES:,} YAML nodes", path=path, line=line
            )


def _yaml_kind(value: object) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    return type(value).__name__


def _sorted_nested(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted_nested(value[key]) for key in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [_sorted_nested(item) for item in value]
    return value


def dump_mapping(data: dict[str, Any]) -> str:
    """Deterministic YAML: top-level keys in the given order, nested mappings sorted.

    The text is PyYAML's (`_yaml_dump`), entry by entry: a top-level entry made only of plain
    keys, strings that need at most single quotes, ints, booleans, nulls, lists of those and
    mappings of those, on lines too short to be folded, is written by `_entry` exactly as the
    emitter writes it (tested against it, property-based); any other entry is left to PyYAML.
    Head files are written on every page write, and PyYAML's representer and resolver were a
    sixth of an import's CPU.
    """
    if not data:
        return _yaml_dump({})
    out: list[str] = []
    for key, value in data.items():
        value = _sorted_nested(value)
        mark = len(out)
        try:
            _entry(key, value, "", out)
        except _Unusual:
            del out[mark:]
            out.append(_yaml_dump({key: value}))
    return "".join(out)


def _yaml_dump(ordered: dict[str, Any]) -> str:
    yaml, _, dumper = _yaml()
    return yaml.dump(
        ordered,
        Dumper=dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )


class _Unusual(Exception):
    """An entry `_entry` leaves to PyYAML."""


_WIDTH = 100  # the emitter's best_width (`width=100` above)
_STR_TAG = "tag:yaml.org,2002:str"
# Characters both emitters (libyaml's and PyYAML's own) write as they are, in plain or single
# quoted style: printable ASCII and the printable Basic Multilingual Plane, without line
# breaks (U+2028, U+2029), the byte order mark, tabs or other control characters.
_QUOTABLE = re.compile(r"[\x20-\x7e\u00a0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]*")
# What keeps such a string from being a plain scalar in a block mapping (the emitters'
# analysis, exactly): an indicator at its start ("-", "?" and ":" only when a space or the end
# follows), a document marker, a space at either end, ": ", " #", or ":" at the end.
_INDICATORS = frozenset("#,[]{}&*!|>'\"%@` ")
_SPACED_INDICATORS = frozenset("-?:")


def _not_plain(value: str) -> bool:
    first = value[0]
    if first in _INDICATORS or value.endswith((" ", ":")) or ": " in value or " #" in value:
        return True
    if first in _SPACED_INDICATORS and (len(value) == 1 or value[1] == " "):
        return True
    return value.startswith(("---", "..."))


def _combined(resolvers: list[tuple[str, re.Pattern[str]]]) -> re.Pattern[str] | None:
    """One pattern matching where any of the resolvers' patterns matches (each is anchored,
    and keeps its own verbose flag)."""
    if any(tag == _STR_TAG for tag, _ in resolvers):  # pragma: no cover - none in PyYAML
        raise AssertionError("an implicit resolver for plain strings")
    if not resolvers:
        return None
    return re.compile("|".join(
        f"(?{'x' if regexp.flags & re.VERBOSE else ''}:{regexp.pattern})"
        for _, regexp in resolvers))


@cache
def _resolvers() -> tuple[dict[str, re.Pattern[str] | None], re.Pattern[str] | None]:
    """The representer's resolver: which plain strings YAML would read as something else (a
    number, a date, a boolean, null), by first character, each set of patterns as one (made on
    first use, like the rest of yaml)."""
    implicit = _yaml()[2].yaml_implicit_resolvers
    wildcard = implicit.get(None, [])
    by_first = {first: _combined(resolvers + wildcard)
                for first, resolvers in implicit.items() if first is not None}
    return by_first, _combined(wildcard)


# Recently written scalars and keys: most values of a page's frontmatter repeat across pages.
_SEEN: dict[tuple[str, int], str] = {}
_SEEN_MAX = 4096


def _scalar(value: Any, column: int) -> str:
    """`value` as the emitter writes it starting at `column` (raise _Unusual when that takes
    more than plain or single-quoted style on one line)."""
    kind = type(value)
    if kind is str:
        seen = _SEEN.get((value, column))
        if seen is not None:
            return seen
        if not value:
            return "''"
        if _QUOTABLE.fullmatch(value) is None:
            raise _Unusual
        if _not_plain(value) or _resolves(value):
            text = "'" + value.replace("'", "''") + "'"
        else:
            text = value
        if column + len(text) > _WIDTH and " " in text:
            raise _Unusual  # the emitter may fold it at a space
        if len(_SEEN) >= _SEEN_MAX:
            _SEEN.clear()
        _SEEN[value, column] = text
        return text
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return int.__repr__(value)
    raise _Unusual


def _resolves(value: str) -> bool:
    """True when YAML would read `value`, written plain, as something other than a string
    (the representer's resolver decides the same from the same patterns)."""
    by_first, default = _resolvers()
    pattern = by_first.get(value[0], default)
    return pattern is not None and pattern.match(value) is not None


def _key(key: Any) -> str:
    if type(key) is not str:
        raise _Unusual
    if _SEEN.get((key, -1)) is not None:
        return key
    if not key or len(key) > 80 or _QUOTABLE.fullmatch(key) is None or _not_plain(key) or (
            _resolves(key)):
        raise _Unusual
    _SEEN[key, -1] = key
    return key


def _entry(key: Any, value: Any, indent: str, out: list[str]) -> None:
    """Append `key: value` of a block mapping at `indent` as the emitter writes it."""
    name = _key(key)
    kind = type(value)
    if kind is dict:
        if not value:
            out.append(f"{indent}{name}: {{}}\n")
            return
        if len(indent) > 2 * MAX_DEPTH:
            raise _Unusual
        out.append(f"{indent}{name}:\n")
        inner = indent + "  "
        for sub, item in value.items():
            _entry(sub, item, inner, out)
    elif kind is list:
        if not value:
            out.append(f"{indent}{name}: []\n")
            return
        out.append(f"{indent}{name}:\n")
        column = len(indent) + 2
        for item in value:  # a sequence in a mapping is not indented: "- " at the key's column
            out.append(f"{indent}- {_scalar(item, column)}\n")
    else:
        out.append(f"{indent}{name}: {_scalar(value, len(indent) + len(name) + 2)}\n")


def render(frontmatter: dict[str, Any], body: str) -> str:
    return f"---\n{dump_mapping(frontmatter)}---\n{normalize_body(body)}"
