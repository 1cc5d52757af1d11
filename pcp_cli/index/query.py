"""The query language both engines share: whoosh's query parser and query tree, pcp's rewrites
of it, the index filter as filter terms, and score normalization.

Both engines parse with whoosh's parser (a core dependency) into whoosh's query objects; the
whoosh engine runs them, the tantivy engine translates them. Nothing here opens an index.
Importing this module imports whoosh.query, without urllib.request (see
`import_whoosh_compat`).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterable
from typing import Any


def _urlretrieve(*args: Any, **kwargs: Any) -> Any:
    from urllib.request import urlretrieve

    return urlretrieve(*args, **kwargs)


def import_whoosh_compat() -> None:
    """Import whoosh.compat without loading urllib.request (http.client, email, ssl: ~12 ms
    of every `pcp search`), which whoosh.compat imports only to re-export `urlretrieve`.

    For the duration of that one import, `urllib.request` is a stand-in module whose
    `urlretrieve` imports and calls the real one; it is removed straight after, so any later
    `import urllib.request` anywhere loads the real module. Nothing is patched when
    urllib.request or whoosh.compat is already loaded.
    """
    if "urllib.request" in sys.modules or "whoosh.compat" in sys.modules:
        return
    import urllib

    stub = types.ModuleType("urllib.request")
    stub.urlretrieve = _urlretrieve  # type: ignore[attr-defined]
    sys.modules["urllib.request"] = stub
    try:
        import whoosh.compat  # noqa: F401
    finally:
        if sys.modules.get("urllib.request") is stub:
            del sys.modules["urllib.request"]
        if getattr(urllib, "request", None) is stub:
            del urllib.request


import_whoosh_compat()

from whoosh import query as Q  # noqa: E402
from whoosh.qparser.plugins import (  # noqa: E402
    BoostPlugin,
    EveryPlugin,
    FieldsPlugin,
    RangePlugin,
    WildcardPlugin,
)
from whoosh.qparser.syntax import GroupNode  # noqa: E402

from pcp_cli.errors import UsageError  # noqa: E402
from pcp_cli.index.text import QUERY_FIELDS, TEXT_FIELDS, read_query  # noqa: E402
from pcp_cli.index.types import IndexFilter, filter_axes, time_bounds  # noqa: E402

# The fields plain words search, and the ones a hit can report as matched.
DEFAULT_FIELDS = ("body", "tag")
HIT_FIELDS = ("title", "body", "tag")


class ExactFieldsUnscored:
    """A query parser plugin: a `field:value` term the person wrote on an exact-value field
    (`id:`, `type:`, `tag:`, `namespace:` ...) matches but adds nothing to the score. It marks
    such terms with a boost of 0, which `_unscored` then makes a real zero score.

    Such a term says which pages qualify, not how relevant they are: whoosh would otherwise
    give every match the same made-up score (1.0 on an ID field; BM25 over a page's few tags),
    which `--min-score` then used to drop an exact id match. Words, and `title:`/`body:`
    terms, are scored as before. Runs after whoosh applies the explicit field names (filter
    priority 100) and before plain words are spread over the default fields (110), so a plain
    word that also searches `tag` keeps its score.
    """

    def taggers(self, parser: Any) -> list[Any]:
        return []

    def filters(self, parser: Any) -> list[Any]:
        return [(self._unscore, 105)]

    def _unscore(self, parser: Any, group: Any) -> Any:
        for node in group:
            if isinstance(node, GroupNode):
                self._unscore(parser, node)
            elif (
                getattr(node, "has_fieldname", False)
                and node.fieldname is not None
                and node.fieldname not in TEXT_FIELDS
            ):
                node.set_boost(0.0)
        return group


class _StarOnly(WildcardPlugin):  # type: ignore[misc]
    """Wildcards are a `*` only: a `?` is text (a question mark), never one character."""

    qmarks = ""
    expr = "(?P<text>[*])"


def configure_parser(parser: Any) -> Any:
    """Set up whoosh's parser (`MultifieldParser` over the default fields, OR-grouped) to know
    only pcp's query syntax (index/text.py): the fields pcp names, at the start of a word;
    `*` wildcards; no ranges, boosts or `*:*`. Plain words still search the default fields,
    exact-value fields add no score (`ExactFieldsUnscored`)."""
    names = "|".join(sorted(QUERY_FIELDS, key=len, reverse=True))
    parser.remove_plugin_class(WildcardPlugin)
    parser.remove_plugin_class(RangePlugin)
    parser.remove_plugin_class(BoostPlugin)
    parser.remove_plugin_class(EveryPlugin)
    parser.remove_plugin_class(FieldsPlugin)
    parser.add_plugin(FieldsPlugin(expr=rf"(?<![^\s(])(?P<text>{names}):"))
    parser.add_plugin(_StarOnly())
    parser.add_plugin(ExactFieldsUnscored())
    return parser


def parse(parser: Any, query: str) -> Q.Query:
    """The query tree for `query` (read as index/text.read_query reads it), with `restrict`
    applied unless the person wrote OR themselves. Raises UsageError only for an empty
    query: a query that is only NOT clauses (`NOT draft`) is searched as its words, and
    one with nothing searchable in it is NullQuery (no results)."""
    text = read_query(query)
    try:
        parsed = parser.parse(text) if text else Q.NullQuery
        return parsed if explicit_or(text) else restrict(parsed)
    except UsageError:  # only NOT clauses: nothing to look for but what they exclude
        text = read_query(query, syntax=False)
        return parser.parse(text) if text else Q.NullQuery


def explicit_or(text: str) -> bool:
    return any(" OR " in f" {part} " for part in text.split('"')[::2])


def restrict(q: Q.Query) -> Q.Query:
    """Plain words are OR-ranked, but `field:value` terms and NOT clauses restrict.

    whoosh's OR grouping would read `budget type:keystone` as "budget, or any keystone" and
    `fox NOT jumps` as "fox, or anything without jumps". Unless the person wrote OR themselves,
    exact-value field terms (`tag:` too: plain words also search the tags, but a `tag:x` the
    person wrote is exact) become required and NOT clauses become exclusions.
    """
    if not isinstance(q, Q.Or):
        if isinstance(q, Q.Not):
            raise UsageError(
                "A query needs at least one word or field term besides NOT.",
                hint="Add what to look for, as in: budget NOT draft",
            )
        return q
    required: list[Q.Query] = []
    excluded: list[Q.Query] = []
    optional: list[Q.Query] = []
    for child in q.subqueries:
        if isinstance(child, Q.Not):
            excluded.append(child.query)
        elif isinstance(child, Q.Term) and (child.fieldname not in HIT_FIELDS
                                            or child.boost == 0.0):
            required.append(child)  # an exact field, or `tag:x` as written (ExactFieldsUnscored)
        else:
            optional.append(child)
    if not required and not excluded:
        return q
    if optional:
        required.append(optional[0] if len(optional) == 1 else q.__class__(optional))
    if not required:
        raise UsageError(
            "A query needs at least one word or field term besides NOT.",
            hint="Add what to look for, as in: budget NOT draft",
        )
    positive = required[0] if len(required) == 1 else Q.And(required)
    if not excluded:
        return positive
    return Q.AndNot(positive, excluded[0] if len(excluded) == 1 else Q.Or(excluded))


def any_of(field: str, values: Iterable[str]) -> Q.Query:
    terms = [Q.Term(field, v) for v in values]
    return terms[0] if len(terms) == 1 else Q.Or(terms)


def filter_query(f: IndexFilter) -> tuple[Q.Query | None, Q.Query | None] | None:
    """(must-match constraint, must-not-match), or None when the filter admits nothing."""
    parts: list[Q.Query] = []
    for field, allowed in filter_axes(f):
        if allowed is None:
            continue
        if not allowed:
            return None
        parts.append(any_of(field, allowed))
    bounds = time_bounds(f)
    if bounds is not None:
        parts.append(Q.TermRange("timestamp", *bounds))
    constraint = None if not parts else parts[0] if len(parts) == 1 else Q.And(parts)
    excluded = any_of("type", f.exclude_types) if f.exclude_types else None
    return constraint, excluded


def ns_tree(namespace: str) -> str:
    parts = namespace.split(":")
    return ",".join(":".join(parts[: i + 1]) for i in range(len(parts)))
