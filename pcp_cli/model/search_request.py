"""One search request (SearchPages), checked once, from every front end.

    request = SearchRequest("where did she move?", mode="auto", limit=5)
    api.search(store, request)

`pcp search` (its typer command and its fast path) and the MCP tool `pcp_search` build the same
`SearchRequest`; the library checks it when it is made (a request that exists is valid) and
every layer below reads it instead of passing fifteen options along. What a request may hold is
one table, `OPTIONS`: the CLI's flags and help, the fast path's argument parser and the MCP
tool's input schema are generated from it (pcp_cli/mcp/tools.py turns each `Option` into a
`Param`), so an option added here (a field of `SearchRequest` and a row of `OPTIONS`) reaches
every front end.

Options the front end decides rather than the caller — the MCP session's suppressed pages,
whether pages of unknown sensitivity are served (`include_unclassified`: the owner sees them,
an AI client only as it would a `high` page) — are fields without an `Option` row: a client
cannot set them.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pcp_cli.errors import UsageError
from pcp_cli.model import vocab

DEFAULT_LIMIT = 10
MAX_LIMIT = 25
MAX_QUERY_CHARS = 1000  # over MCP; a person on the command line is not limited
MAX_DEPTH = 5
MODES = ("auto", "text", "exact", "temporal", "graph", "semantic", "hybrid")
# The modes that need the semantic extra (pip install 'pcp-cli[semantic]').
SEMANTIC_MODES = ("semantic", "hybrid")
FILTERS = ("relation_types", "lifecycle_status", "types", "origins", "namespaces",
           "observed_from", "observed_to", "tags")
SEARCHABLE_STATUSES = ("active", "superseded", "archived")
TIME_PATTERN = r"^[0-9]{4}(-[0-9]{2}(-[0-9]{2}([T ][0-9:.]+(Z|[+-][0-9:]+)?)?)?)?$"
SCOPE_PATTERN = r"^(\*|[a-z0-9][a-z0-9_-]{0,63}(:[a-z0-9][a-z0-9._-]{0,63}){0,7}(:\*)?)$"
RELATION_PATTERN = "^(" + "|".join(vocab.RELATION_TYPES) + ")$|" + vocab.RELATION_TYPE_PATTERN
_TIME = re.compile(TIME_PATTERN)
# What a call that names no scopes reads (the MCP tools' `scopes` parameters say it).
SCOPES_WHY = ("Without it: only this client's default scopes (pcp_describe_capabilities "
              "shows them); reading across the other granted scopes is a named choice: "
              "scopes: [\"*\"] (or \"*\") for all of them, or a list of namespaces or "
              "patterns (see pcp_list_scopes)")


@dataclass(frozen=True)
class Option:
    """One thing a search request can say, as every front end offers it.

    `name` is the request's field (and the MCP parameter; a filter's key under `filters`).
    `kind` is its JSON kind: string, integer, number, boolean, list (of strings), object.
    `cli` the command-line flags (none: not on the command line), `metavar` what the flag takes;
    `mcp` False keeps it off the MCP tool. The rest are the MCP schema's constraints."""

    name: str
    kind: str
    description: str
    cli: tuple[str, ...] = ()
    mcp: bool = True
    filter: bool = False  # a key of `filters` (the CLI has a flat flag for it)
    default: Any = None
    enum: tuple[str, ...] | None = None
    pattern: str | None = None
    min_len: int | None = None
    max_len: int | None = None
    minimum: float | None = None
    maximum: float | None = None
    item_max_len: int | None = None
    unique: bool = False
    star: bool = False  # a list that may also be given as the string "*" (["*"]) over MCP
    cli_help: str | None = None  # when the command line says it differently

    @property
    def takes_value(self) -> bool:
        return self.kind != "boolean"

    @property
    def repeatable(self) -> bool:
        return self.kind == "list"

    @property
    def help(self) -> str:
        return self.cli_help or self.description


OPTIONS: tuple[Option, ...] = (
    Option("query", "string", "What to look for: words or a question as written; \"quoted "
           "phrases\", AND, OR, NOT, field:value (type:, tag:, ns: …) and prefix* where meant",
           min_len=1, max_len=MAX_QUERY_CHARS),
    Option("limit", "integer", f"Maximum results (1-{MAX_LIMIT})", cli=("--limit", "-n"),
           default=DEFAULT_LIMIT, minimum=1, maximum=MAX_LIMIT,
           cli_help=f"How many results (default {DEFAULT_LIMIT}, at most {MAX_LIMIT})."),
    Option("types", "list", "Only these page types", cli=("--type",), enum=vocab.PAGE_TYPES,
           max_len=len(vocab.PAGE_TYPES), unique=True,
           cli_help="Only this page type (repeatable)."),
    Option("exclude_types", "list", "Leave out these page types", cli=("--exclude-type",),
           enum=vocab.PAGE_TYPES, max_len=len(vocab.PAGE_TYPES), unique=True,
           cli_help="Leave out this page type (repeatable)."),
    Option("include_superseded", "boolean", "Also return superseded or archived records",
           cli=("--include-superseded",), default=False,
           cli_help="Also superseded and archived pages."),
    Option("include_sensitive", "boolean", "Also high-sensitivity and unclassified records "
           "(only if this client's grant allows it); filters_applied says which ran",
           cli=("--include-sensitive",), default=False,
           cli_help="Also high-sensitivity pages."),
    Option("min_score", "number", "Relevance floor (0-1); score-less results are kept and "
           "labelled", cli=("--min-score",), minimum=0, maximum=1,
           cli_help="Drop scored results below this relevance (0-1)."),
    Option("exclude_stale", "boolean", "Leave out keystones past their stale_after date; by "
           "default they are returned with stale: true (verify before relying on them)",
           cli=("--exclude-stale",), default=False,
           cli_help="Leave out keystones past their stale_after date (by default they are "
           "shown, marked stale)."),
    Option("scopes", "list", "Search these namespaces (within this client's grant). "
           + SCOPES_WHY + "; filters_applied.scopes names the namespaces searched",
           cli=("--scope",), pattern=SCOPE_PATTERN, min_len=1, max_len=20, item_max_len=200,
           unique=True, star=True,
           cli_help="Only these namespaces: NS, prefix:* or * (repeatable)."),
    Option("mode", "string", "auto (picks and reports which), text (ranked), exact (the "
           "phrase or identifier literally), temporal (by observed time; query * = every page "
           "in the window), graph (matches, then what their relations reach), semantic (by "
           "meaning), hybrid (words and meaning fused)", cli=("--mode",), enum=MODES,
           default="auto",
           cli_help="text (ranked), exact (the phrase or identifier literally), temporal (by "
           "observed time; the query * lists every page), graph (matches, then what their "
           "relations reach), semantic (by meaning), hybrid (words and meaning fused; both "
           "need the semantic extra), or auto (picks one and says which)."),
    Option("relation_types", "list", "Pages with such a relation (either direction); in graph "
           "mode, the relations followed", cli=("--relation-type",), filter=True,
           pattern=RELATION_PATTERN, max_len=20, item_max_len=128, unique=True,
           cli_help="Only pages with a relation of this type, either direction; in graph "
           "mode, the relations to follow (repeatable)."),
    Option("lifecycle_status", "list", "Lifecycle states (never tombstoned)", cli=("--status",),
           filter=True, enum=(*SEARCHABLE_STATUSES, "tombstoned"), min_len=1, max_len=3,
           unique=True, cli_help="Lifecycle status: active, superseded, archived (repeatable; "
           "default active)."),
    Option("types", "list", "Page types", filter=True, enum=vocab.PAGE_TYPES,
           max_len=len(vocab.PAGE_TYPES), unique=True),
    Option("origins", "list", "Origins", cli=("--origin",), filter=True, enum=vocab.ORIGINS,
           max_len=len(vocab.ORIGINS), unique=True, cli_help="Only this origin (repeatable)."),
    Option("namespaces", "list", "Exact namespaces", cli=("--namespace",), filter=True,
           pattern=vocab.NAMESPACE_PATTERN, max_len=20, item_max_len=200, unique=True,
           cli_help="Only this exact namespace (repeatable)."),
    Option("observed_from", "string", "Observed on or after (date or time)", cli=("--from",),
           filter=True, pattern=TIME_PATTERN, max_len=40,
           cli_help="Observed on or after this date or time."),
    Option("observed_to", "string", "Observed on or before (date or time)", cli=("--to",),
           filter=True, pattern=TIME_PATTERN, max_len=40,
           cli_help="Observed on or before this date or time (2024 = all of 2024)."),
    Option("tags", "list", "Any of these tags", cli=("--tag",), filter=True, max_len=20,
           item_max_len=64, unique=True,
           cli_help="Only pages with this tag (repeatable: any of them)."),
    Option("depth", "integer", f"graph mode: relation steps to follow (1-{MAX_DEPTH})",
           cli=("--depth",), minimum=1, maximum=MAX_DEPTH,
           cli_help=f"graph mode: how many relation steps to follow (1-{MAX_DEPTH}, "
           "default 1)."),
    Option("cursor", "string", "next_cursor from the previous call with the same parameters",
           cli=("--cursor",), min_len=1, max_len=400,
           cli_help="Continue a previous search (its next_cursor)."),
    Option("as_of", "string", "Answer as the store stood then: a date (the end of that day, "
           "UTC) or an ISO 8601 date and time", cli=("--as-of",), pattern=TIME_PATTERN,
           max_len=40),
)
# The top-level options (the request's fields and the MCP tool's parameters, in this order;
# `filters` is the object of the filter options) and the filter options.
TOP: tuple[Option, ...] = tuple(o for o in OPTIONS if not o.filter)
FILTER_OPTIONS: tuple[Option, ...] = tuple(o for o in OPTIONS if o.filter)
FILTERS_DESCRIPTION = "Applied before ranking, each reported in filters_applied"


def option(name: str, *, filter: bool = False) -> Option:  # noqa: A002 - the table's word
    """The row of `OPTIONS` named `name` (a filter's with `filter`)."""
    for o in OPTIONS:
        if o.name == name and o.filter == filter:
            return o
    raise KeyError(name)


@dataclass(frozen=True)
class SearchFilters:
    """SearchPages' filters, checked (absent ones None)."""

    relation_types: tuple[str, ...] | None = None
    lifecycle_status: tuple[str, ...] | None = None
    types: tuple[str, ...] | None = None
    origins: tuple[str, ...] | None = None
    namespaces: tuple[str, ...] | None = None
    observed_from: str | None = None
    observed_to: str | None = None
    tags: tuple[str, ...] | None = None

    def __getitem__(self, name: str) -> Any:
        return getattr(self, name)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def check(cls, filters: Mapping[str, Any] | SearchFilters | None) -> SearchFilters:
        if isinstance(filters, SearchFilters):
            return filters
        raw = dict(filters or {})
        unknown = sorted(set(raw) - set(FILTERS))
        if unknown:
            raise UsageError(f"unknown filter {unknown[0]!r}",
                             hint=f"filters: {', '.join(FILTERS)}")
        out: dict[str, Any] = dict.fromkeys(FILTERS)
        for name in ("relation_types", "lifecycle_status", "types", "origins", "namespaces",
                     "tags"):
            if raw.get(name) is not None:
                out[name] = _strings(name, raw[name])
        for value in out["relation_types"] or ():
            if not vocab.is_relation_type(value):
                raise UsageError(f"unknown relation type {value!r}",
                                 hint=f"one of: {', '.join(vocab.RELATION_TYPES)}, or a "
                                 "namespaced type such as com.example.reviews")
        if "tombstoned" in (out["lifecycle_status"] or ()):
            raise UsageError("tombstoned pages are never returned by a search",
                             hint=f"lifecycle_status may hold: {', '.join(SEARCHABLE_STATUSES)}")
        _enum("lifecycle status", out["lifecycle_status"] or (), SEARCHABLE_STATUSES)
        _enum("type", out["types"] or (), vocab.PAGE_TYPES)
        _enum("origin", out["origins"] or (), vocab.ORIGINS)
        for namespace in out["namespaces"] or ():
            if not re.match(vocab.NAMESPACE_PATTERN, namespace):
                raise UsageError(f"namespace {namespace!r} in filters is not a namespace",
                                 hint="e.g. project:formal-math or user:ada")
        for name in ("observed_from", "observed_to"):
            value = raw.get(name)
            if value is None:
                continue
            if not isinstance(value, str) or not _TIME.match(value):
                label = "--from" if name == "observed_from" else "--to"
                raise UsageError(f"{name} ({label}) {value!r} is not a date or time"[:200],
                                 hint="YYYY, YYYY-MM, YYYY-MM-DD or an ISO 8601 date and time")
            out[name] = value
        if out["observed_from"] and out["observed_to"] and \
                out["observed_from"] > out["observed_to"] + "\uffff":
            raise UsageError(f"observed_from {out['observed_from']} is after observed_to "
                             f"{out['observed_to']}", hint="swap them, or leave one out")
        return cls(**out)


@dataclass(frozen=True)
class SearchRequest:
    """What to search for and under which safeguards: checked when made (UsageError), so a
    request that exists is valid. `limit` is what was asked (None: the default); `served`
    the number of results a page of the answer holds (the limit, capped at `MAX_LIMIT`)."""

    query: str
    mode: str = "auto"
    limit: int | None = None
    types: tuple[str, ...] = ()
    exclude_types: tuple[str, ...] = ()
    include_superseded: bool = False
    include_sensitive: bool = False
    min_score: float | None = None
    exclude_stale: bool = False
    scopes: tuple[str, ...] | None = None  # None: every namespace; (): none
    filters: SearchFilters = field(default_factory=SearchFilters)
    depth: int | None = None
    cursor: str | None = None
    as_of: str | None = None
    # Decided by the front end, never by a client (no `Option` row):
    suppressed: frozenset[str] = frozenset()
    include_unclassified: bool = True

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if not isinstance(self.query, str):
            raise UsageError(f"the query must be text, not {self.query!r}"[:200])
        if self.mode not in MODES:
            raise UsageError(f"unknown mode {self.mode!r}", hint=f"one of: {', '.join(MODES)}")
        limit = self.limit
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                                  or limit < 1):
            raise UsageError(f"the limit must be a whole number of at least 1, not {limit!r}",
                             hint=f"the default is {DEFAULT_LIMIT}, the maximum {MAX_LIMIT}")
        set_(self, "types", tuple(self.types or ()))
        set_(self, "exclude_types", tuple(self.exclude_types or ()))
        for name, values in (("type", self.types), ("excluded type", self.exclude_types)):
            for value in values:
                if value not in vocab.PAGE_TYPES:
                    raise UsageError(f"unknown {name} {value!r}",
                                     hint=f"one of: {', '.join(vocab.PAGE_TYPES)}")
        if self.min_score is not None and (isinstance(self.min_score, bool)
                                           or not 0 <= self.min_score <= 1):
            raise UsageError(f"--min-score must be between 0 and 1, not {self.min_score}",
                             hint="scores are relevance squashed into 0-1; try 0.2")
        if self.scopes is not None:
            set_(self, "scopes", tuple(self.scopes))
        set_(self, "filters", SearchFilters.check(self.filters))
        depth = self.depth
        if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int)
                                  or not 1 <= depth <= MAX_DEPTH):
            raise UsageError(f"depth must be 1 to {MAX_DEPTH}, not {depth!r}")
        set_(self, "suppressed", frozenset(self.suppressed))
        set_(self, "include_superseded", bool(self.include_superseded))
        set_(self, "include_sensitive", bool(self.include_sensitive))
        set_(self, "exclude_stale", bool(self.exclude_stale))

    # -- what the layers below read -----------------------------------------------------------
    @property
    def served(self) -> int:
        """How many results one page of the answer holds: the limit, at most MAX_LIMIT."""
        return min(DEFAULT_LIMIT if self.limit is None else self.limit, MAX_LIMIT)

    @property
    def limit_requested(self) -> int | None:
        """The limit asked for when it was cut to MAX_LIMIT (reported), else None."""
        return self.limit if self.limit is not None and self.limit > MAX_LIMIT else None

    def replace(self, **changes: Any) -> SearchRequest:
        """A copy with `changes` (checked again)."""
        return dataclasses.replace(self, **changes)

    # -- from the front ends ------------------------------------------------------------------
    @classmethod
    def from_options(cls, values: Mapping[str, Any], **decided: Any) -> SearchRequest:
        """A request from option values keyed by `Option.name`, as a front end collects them:
        the CLI's flags (filters flat beside the rest: `--type` is `types`, `--tag` is the
        filter `tags`) or the MCP tool's arguments (filters under `filters`). Absent, None and
        empty values mean the default. `decided`: what the front end decides (`suppressed`,
        `include_unclassified`, or a `scopes` it worked out)."""
        fields: dict[str, Any] = {}
        filters: dict[str, Any] = dict(values.get("filters") or {})
        for o in OPTIONS:
            key = f"filter:{o.name}" if o.filter else o.name
            value = values.get(key)
            if value is None or value == [] or value == ():
                continue
            if o.filter:
                filters[o.name] = value
            else:
                fields[o.name] = tuple(value) if o.kind == "list" else value
        fields.update(decided)
        return cls(filters=filters, **fields)

    def as_arguments(self) -> dict[str, Any]:
        """The request as the MCP tool's arguments (what a remote PCP source is sent)."""
        out: dict[str, Any] = {}
        for o in TOP:
            value = getattr(self, o.name)
            if value is None or value == () or value is False:
                continue
            out[o.name] = list(value) if isinstance(value, tuple) else value
        filters = {k: (list(v) if isinstance(v, tuple) else v)
                   for k, v in self.filters.as_dict().items() if v is not None}
        if filters:
            out["filters"] = filters
        return out

    def cursor_key(self) -> dict[str, Any]:
        """What a cursor must find unchanged to continue this request: everything but the
        cursor itself."""
        return {"query": self.query, "mode": self.mode, "filters": self.filters.as_dict(),
                "limit": self.served, "types": list(self.types),
                "exclude_types": list(self.exclude_types),
                "include_superseded": self.include_superseded,
                "include_sensitive": self.include_sensitive,
                "include_unclassified": self.include_unclassified, "min_score": self.min_score,
                "scopes": None if self.scopes is None else sorted(self.scopes),
                "suppressed": sorted(self.suppressed), "as_of": self.as_of,
                "depth": self.depth,
                # only when asked: a cursor issued before exclude_stale existed stays valid
                **({"exclude_stale": True} if self.exclude_stale else {})}


def cli_flags() -> dict[str, tuple[Option, str]]:
    """flag -> (its option, the key `SearchRequest.from_options` reads it under): the command
    line's search flags, for a parser that reads argv itself (the CLI's fast path)."""
    out: dict[str, tuple[Option, str]] = {}
    for o in OPTIONS:
        for flag in o.cli:
            out[flag] = (o, f"filter:{o.name}" if o.filter else o.name)
    return out


def _strings(name: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"filter {name} must be a list of strings, not {value!r}"[:200])
    return tuple(dict.fromkeys(value))


def _enum(name: str, values: Sequence[str], allowed: Sequence[str]) -> None:
    for value in values:
        if value not in allowed:
            raise UsageError(f"unknown {name} {value!r} in filters",
                             hint=f"one of: {', '.join(allowed)}")
