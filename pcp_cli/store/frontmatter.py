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
                data = yaml.load(block, Loader=strict)  # noqa: S506 - SafeLoader subclass
                shallow = _depth(data) <= MAX_DEPTH
            except RecursionError:  # nested thousands deep: the event pass says where
                shallow = False
            if shallow:
                return _mapping(data, path, first_line)
        _check_events(block, path, first_line)
        data = yaml.load(block, Loader=strict)  # noqa: S506 - a SafeLoader subclass
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
    """Deterministic YAML: top-level keys in the given order, nested mappings sorted."""
    ordered = {key: _sorted_nested(value) for key, value in data.items()}
    yaml, _, dumper = _yaml()
    return yaml.dump(
        ordered,
        Dumper=dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )


def render(frontmatter: dict[str, Any], body: str) -> str:
    return f"---\n{dump_mapping(frontmatter)}---\n{normalize_body(body)}"
