"""SearchPages as the Paged Context Protocol writes it: modes, filters, match channels, cursors.

    search_pages(store, query, mode="auto", filters={...}, scopes=[...], limit=20, cursor=...)

- `mode`: `text` (ranked full text), `exact` (the phrase or identifier literally: every page
  whose title or text contains it, case-insensitively, punctuation included), `temporal` (the
  matches ordered by observed time, oldest first; the query `*` means every page in the
  window), `graph` (the best text matches, then the pages their relations reach, both
  directions), `semantic` and `hybrid` (by meaning, and both fused: pcp_cli/query/semantic.py;
  they need the semantic extra and say how to install it without), and `auto`, which picks
  one of those and says which and why.
- `filters`: `relation_types` (pages at either end of such a relation; in graph mode, the
  relations to follow), `lifecycle_status` (never `tombstoned`), `types`, `origins`,
  `namespaces`, `observed_from` / `observed_to` (observed time, see `observed.py`), `tags`.
  Every filter is applied before ranking, and every one is reported in `filters_applied`.
- Each result says how it matched (`match_channel`), which page and revision it is, its original
  scope, its facets and the read views it offers, under `extensions["org.pcp-cli"]`.
- `cursor`: `next_cursor` continues the same request on an unchanged store (see `cursor.py`).
- `as_of`: the store as it stood then (see `asof.py`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pcp_cli.errors import UsageError
from pcp_cli.index import IndexHit
from pcp_cli.model import scopes as scope_rule
from pcp_cli.model import vocab
from pcp_cli.model.search_request import SEMANTIC_MODES, SearchFilters, SearchRequest
from pcp_cli.query import cursor as cursors
from pcp_cli.query import search as text_search
from pcp_cli.query.asof import AsOf, parse_as_of, view
from pcp_cli.query.graph import adjacency, load_relations, pages_with_relations, walk
from pcp_cli.query.observed import OBSERVED_KEYS, entry_observed, in_window

if TYPE_CHECKING:
    from pcp_cli.store.catalog import Entry
    from pcp_cli.store.store import Store

def unavailable_modes() -> tuple[str, ...]:
    from pcp_cli.semantic import installed

    return () if installed() else SEMANTIC_MODES


MATCH_CHANNELS = ("text", "exact", "temporal", "graph", "semantic", "both")
GRAPH_DEFAULT_DEPTH = 1
ALL_PAGES = "*"
_IDENTIFIER = re.compile(r"^[A-Za-z0-9]+(?:[_.\-/#@][A-Za-z0-9]+)+$")
_WORD = re.compile(r"\w+")


def choose_mode(query: str, filters: SearchFilters) -> tuple[str, str]:
    """What `auto` runs, and why (reported in filters_applied)."""
    text = query.strip()
    if text == ALL_PAGES:
        return "temporal", "the query * lists pages by observed time"
    if len(text) > 2 and text.startswith('"') and text.endswith('"') and text.count('"') == 2 \
            and _WORD.search(text):  # (punctuation alone is not looked up: read as text)
        return "exact", "the query is one quoted phrase"
    if _IDENTIFIER.match(text) and ":" not in text:
        return "exact", "the query looks like an identifier"
    if filters.observed_from or filters.observed_to:
        return "temporal", "an observed-time window was given"
    return "text", "ranked full-text search"


_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]{3,}")


def _cjk_pairs(query: str) -> str | None:
    """`A OR B OR …` of the character pairs of a query's CJK runs, None when it has none."""
    if '"' in query or ":" in query:
        return None
    pairs = [run[i:i + 2] for run in _CJK_RUN.findall(query) for i in range(len(run) - 1)]
    return " OR ".join(dict.fromkeys(pairs)) or None


def _literal(query: str) -> str:
    text = query.strip()
    if len(text) > 2 and text.startswith('"') and text.endswith('"'):
        text = text[1:-1]
    return text


class _Selector:
    """Which catalog entries a search may return: the same rules as the index filter."""

    include_unclassified = True

    def __init__(self, *, statuses: tuple[str, ...], include_sensitive: bool,
                 scopes: Sequence[str] | None, types: tuple[str, ...],
                 exclude_types: tuple[str, ...], f: SearchFilters,
                 page_ids: frozenset[str] | None, suppressed: frozenset[str],
                 window: bool) -> None:
        self.statuses, self.include_sensitive, self.scopes = statuses, include_sensitive, scopes
        self.types, self.exclude_types, self.f = types, exclude_types, f
        self.page_ids, self.suppressed, self.window = page_ids, suppressed, window
        self.tags = {t.lower() for t in f["tags"] or ()}

    def __call__(self, entry: Entry | None, *, restricted: bool = True) -> bool:
        if entry is None or entry.page_id is None or entry.problem is not None:
            return False
        f = self.f
        if entry.page_id in self.suppressed or entry.review_status != "affirmed":
            return False
        if entry.lifecycle_status not in self.statuses:
            return False
        if entry.sensitivity not in vocab.SERVED_SENSITIVITIES and not self.include_sensitive \
                and not (entry.sensitivity is None and self.include_unclassified):
            return False
        if not scope_rule.in_scopes(entry.namespace, self.scopes):
            return False
        if f["namespaces"] and entry.namespace not in f["namespaces"]:
            return False
        if (self.types and entry.type not in self.types) or entry.type in self.exclude_types:
            return False
        if f["origins"] and entry.origin not in f["origins"]:
            return False
        if self.tags and not self.tags & {t.lower() for t in entry.tags}:
            return False
        if self.window and not in_window(entry_observed(entry), f["observed_from"],
                                         f["observed_to"]):
            return False
        return not (restricted and self.page_ids is not None and entry.page_id
                    not in self.page_ids)


def search_pages(store: Store, request: SearchRequest) -> dict[str, Any]:
    """The search envelope `{schema_version, query, count, filters_applied, results,
    next_cursor}` of `request` (see the module docstring). Unclassified pages: see
    query/search.py.
    Keystones past their `stale_after` are served labelled `stale`, or with `exclude_stale`
    left out before ranking (query/staleness.py)."""
    from pcp_cli.model.staleness import day_of
    from pcp_cli.query import semantic
    from pcp_cli.query import staleness as stale_rule

    query, mode, f = request.query, request.mode, request.filters
    if mode in SEMANTIC_MODES:
        semantic.require_extra()  # never a quiet fallback to keywords
        if request.as_of is not None:
            raise UsageError(f"mode {mode} searches the store as it is now, not --as-of",
                             hint="leave out --as-of, or use --mode text")
    types = request.types
    nothing = False
    if f.types is not None:
        both = tuple(t for t in f.types if not types or t in types)
        nothing = not both  # --type and filters.types that share no type admit nothing
        types = both or f.types
        request = request.replace(types=types)
    exclude_types, scopes, suppressed = request.exclude_types, request.scopes, request.suppressed
    include_sensitive, min_score = request.include_sensitive, request.min_score
    include_unclassified = request.include_unclassified
    capped, requested = request.served, request.limit_requested
    as_of, depth = request.as_of, request.depth
    stamp = parse_as_of(as_of) if as_of is not None else None
    used, reason = (mode, "asked for") if mode != "auto" else choose_mode(query, f)
    # auto ranks a question by its words first; by meaning too only when they match weakly
    by_meaning = mode == "auto" and as_of is None and used == "text" and \
        semantic.question_like(query)
    if query.strip() == ALL_PAGES and used != "temporal":
        raise UsageError("the query * (every page) works in temporal mode only",
                         hint="add --mode temporal (and --from/--to), or search for words")
    if used == "semantic" and not query.strip():
        text_search.check_and_rewrite_query(query)  # the usual "empty query" error
    elif query.strip() != ALL_PAGES and used != "semantic":
        text_search.check_and_rewrite_query(query if used != "exact" else
                                            '"' + _literal(query).replace('"', " ") + '"')
    statuses = f.lifecycle_status or (text_search.WITH_SUPERSEDED if request.include_superseded
                                      else text_search.CURRENT)
    current = view(store, as_of)
    position = cursors.decode(request.cursor, "search", request.cursor_key(), current)
    # Staleness, against the day asked about: today, or the day of as_of
    today = day_of(stamp)
    dates = stale_rule.dated(current)
    excluded = stale_rule.stale_ids(dates, today) if request.exclude_stale else frozenset()

    # Restrictions worked out from the store itself, applied inside the index filter.
    page_ids: frozenset[str] | None = frozenset() if nothing else None
    if f.relation_types and used != "graph" and not nothing:
        page_ids = pages_with_relations(current, f.relation_types)
    window = bool(f.observed_from or f.observed_to)
    select = _Selector(statuses=tuple(statuses), include_sensitive=include_sensitive,
                       scopes=scopes, types=types, exclude_types=tuple(exclude_types), f=f,
                       page_ids=page_ids, suppressed=suppressed | excluded, window=window)
    select.include_unclassified = include_unclassified
    if window:
        in_time = frozenset(e.page_id for e in current.entries(statuses=None)
                            if e.page_id and select(e, restricted=False))
        page_ids = in_time if page_ids is None else page_ids & in_time
    # The namespaces searched, as filters_applied reports them; a scoped search hands them to
    # the index filter, which then need not resolve the scope patterns again.
    searched = [ns for ns in store.catalog.namespaces() if scope_rule.in_scopes(ns, scopes)
                and (not f.namespaces or ns in f.namespaces)]
    narrowing = _narrowing(current, f, tuple(statuses), page_ids,
                           tuple(searched) if scopes is not None else f.namespaces)
    if excluded:  # before ranking, as every filter
        narrowing = dataclasses.replace(
            narrowing, exclude_page_ids=narrowing.exclude_page_ids | excluded)

    # A query that is one page's id (`ks-001`, `pg_01J…`) finds that page first, in the modes
    # that read words; the ranking then leaves it out.
    named: list[dict[str, Any]] = []
    if used in ("text", "exact"):
        entry = _named_page(current, query, select)
        if entry is not None:
            named = [_entry_result(current, entry, "the query is this page's id")]
            _ext(named[0]).update(match_channel="id", matched_fields=["id"])
            narrowing = dataclasses.replace(
                narrowing, exclude_page_ids=narrowing.exclude_page_ids | {entry.page_id})

    def ranked(fetch: int, offset: int = 0, q: str | None = None, hits_only: bool = False,
               rank: bool = True) -> tuple[list[Any], dict[str, Any]]:
        data = text_search.search(
            store, request, query=q or query, fetch=fetch, narrowing=narrowing, offset=offset,
            hits_only=hits_only, rank=rank, current=current)
        coverage[0] = data.pop(text_search.COVERAGE, None)
        return data["results"], data["filters_applied"]

    coverage: list[float | None] = [None]

    every = max(1, store.catalog.count())
    extra: dict[str, Any] = {}
    if used == "text":
        pairs_query = _cjk_pairs(query) if mode == "auto" else None
        if pairs_query and not ranked(1)[0]:
            # A question in Chinese or Japanese is one run of characters, which the index
            # matches as a whole phrase; no page holds the whole question, so rank the pages
            # by how many of its character pairs they hold instead.
            query_used = pairs_query
            reason = "no page holds the whole phrase: ranked by its character pairs"
        else:
            query_used = query
        # a page named by its id comes first, then the ranking (without it)
        first = named if position == 0 else []
        results, base = ranked(capped + 1 - len(first), max(0, position - len(named)),
                               q=query_used)
        results = first + results
        weak = semantic.weak_words(coverage[0])
        if by_meaning and weak is not None and query_used == query:
            used, reason = semantic.by_meaning(weak)
        more = len(results) > capped
        results = results[:capped]
        for r in results:
            _ext(r).setdefault("match_channel", "text")
        next_cursor = cursors.encode("search", request.cursor_key(), position + capped,
                                     current) if more else None
    if used in SEMANTIC_MODES:
        # Ranked here, and read and decorated only for the results served (query/semantic.py).
        flt = text_search.index_filter(store, request, narrowing)
        results, matched, base = semantic.channel(
            store, current, query, used, ranked, flt, select,
            position + capped + len(suppressed) + max(text_search.SLACK, semantic.FUSION_DEPTH),
            position=position, limit=capped, suppressed=suppressed, min_score=min_score)
        next_cursor = cursors.encode("search", request.cursor_key(), position + capped,
                                     current) if matched > position + capped else None
        extra["matched"] = matched
    elif used == "exact":
        want = position + capped + 1 - len(named)
        found, base, complete = _exact(store, current, request, select, ranked, want)
        found = named + found
        results = found[position:position + capped]
        next_cursor = cursors.encode("search", request.cursor_key(), position + capped,
                                     current) if len(found) > position + capped else None
        extra["matched"] = len(found)
        extra["matched_complete"] = complete
    elif used == "temporal":
        results, base, matched = _temporal(store, current, query, select, ranked, every,
                                           position, capped)
        next_cursor = cursors.encode("search", request.cursor_key(), position + capped,
                                     current) if matched > position + capped else None
        extra["matched"] = matched
    elif used != "text":
        everything, base, extra = _graph(current, f, select, ranked, capped,
                                         depth or GRAPH_DEFAULT_DEPTH)
        results, next_cursor = cursors.page(everything, position, capped, "search",
                                            request.cursor_key(), current)
        extra["matched"] = len(everything)
    labelled = stale_rule.label(results, dates, today)
    safeguards = text_search.filters_report(
        capped=capped, requested=requested, types=types, exclude_types=exclude_types,
        lifecycle_statuses=statuses,
        include_sensitive=include_sensitive, include_unclassified=include_unclassified,
        min_score=min_score, unscored=sum("score" not in r for r in results),
        total=len(results), scopes=scopes, namespaces=searched,
        scope_filtering="before_ranking", **_unscored_terms(used, query))
    if suppressed:
        safeguards["suppressed"] = len(suppressed)
    stale_rule.report(safeguards, exclude_stale=request.exclude_stale, on=today, labelled=labelled)
    filters_applied = _report(safeguards, base, f, mode, used, reason, stamp, position,
                              current, extra)
    return {"schema_version": text_search.SCHEMA_VERSION, "query": query,
            "count": len(results), "filters_applied": filters_applied, "results": results,
            "next_cursor": next_cursor}


# -- channels ---------------------------------------------------------------------------------
def _exact(store: Store, current: Any, request: SearchRequest, select: _Selector,
           ranked: Any, want: int) -> tuple[list[dict[str, Any]], dict[str, Any], bool]:
    """The pages whose title or text holds the literal, in text-relevance order: at least
    `want` of them when there are so many, and whether every one was found.

    The index finds the pages holding the literal's words side by side (a phrase query, from
    the positions it keeps: every page holding the literal at word boundaries is among them),
    best first, `want` and a few more at a time; each is then read and checked against the
    literal text, case-insensitively, only until `want` are found. A literal with no word in
    it (only punctuation) cannot be looked up: every page the filters admit is read."""
    literal = _literal(request.query)
    needle = literal.casefold()
    words = _WORD.findall(literal)
    base: dict[str, Any] = {"exact_matching": "literal_substring_case_insensitive"}
    if not words:
        found = []
        for e in current.entries(statuses=None):
            if select(e) and needle in _page_text(current, e.page_id).casefold():
                result = _entry_result(current, e)
                _ext(result)["match_channel"] = "exact"
                found.append(result)
        return found, base, True
    phrase = '"' + " ".join(words) + '"'
    checked: dict[str, bool] = {}
    if want <= 0:
        return [], base, False
    fetch = want + text_search.SLACK
    while True:
        hits, base = ranked(fetch, q=phrase, hits_only=True)
        found = []
        for hit in hits:
            if hit.page_id not in checked:
                checked[hit.page_id] = needle in _page_text(current, hit.page_id).casefold()
            if checked[hit.page_id]:
                found.append(hit)
                if len(found) >= want:
                    break
        complete = len(hits) < fetch
        if len(found) >= want or complete:
            break
        fetch *= 4
    base = dict(base)
    base["exact_matching"] = ("pages holding its words side by side (the index's positions), "
                              "then the literal text, case-insensitively")
    results = text_search.results_for(
        store, found, query=phrase, current=current,
        body_of=lambda pid: _page_text(current, pid).split("\n", 1)[-1])
    for r in results:
        _ext(r)["match_channel"] = "exact"
    return results, base, complete and len(found) < want


def _temporal(store: Store, current: Any, query: str, select: _Selector, ranked: Any,
              every: int, position: int, limit: int
              ) -> tuple[list[dict[str, Any]], dict[str, Any], int]:
    """The matches (or, for `*`, every page the filters admit) by observed time, oldest first
    (pages without one last, then by page id): the results at `position`..`position + limit`,
    the channel's report, and how many matched. Every match is ordered, from the catalog or
    the index's hits; only the results served are read and built."""
    items: list[tuple[str | None, str, Any]]
    if query.strip() == ALL_PAGES:
        base: dict[str, Any] = {}
        items = [(entry_observed(e), e.page_id, e) for e in current.entries(statuses=None)
                 if e.page_id and select(e)]
    else:
        hits, base = ranked(every + 1, hits_only=True)
        past = isinstance(current, AsOf)
        items = [(entry_observed(current.head_entry(h.page_id)) if past else
                  h.timestamp or None, h.page_id, h) for h in hits]
    items.sort(key=lambda item: (item[0] is None, item[0] or "", item[1]))
    results = []
    for observed, _page_id, item in items[position:position + limit]:
        if isinstance(item, IndexHit):
            built = text_search.results_for(
                store, [item], query=query, current=current,
                body_of=lambda pid: _page_text(current, pid).split("\n", 1)[-1])
            if not built:
                continue
            result = built[0]
        else:
            result = _entry_result(current, item)
        _ext(result)["match_channel"] = "temporal"
        _ext(result)["observed_at"] = observed
        results.append(result)
    base = dict(base)
    base["temporal_order"] = "observed_time_oldest_first"
    return results, base, len(items)


def _graph(current: Any, f: SearchFilters, select: _Selector, ranked: Any, seeds: int,
           depth: int) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """The best `seeds` text matches, then what their relations reach within `depth` steps."""
    start, base = ranked(seeds)
    for r in start:
        _ext(r)["match_channel"] = "text"
    adj = adjacency(load_relations(current), f["relation_types"])
    reached, truncated = walk(adj, [r["id"] for r in start], depth=depth,
                              visible=lambda pid: select(current.head_entry(pid),
                                                         restricted=False))
    out = list(start)
    for node in reached:
        entry = current.head_entry(node["page_id"])
        result = _entry_result(current, entry)
        _ext(result)["match_channel"] = "graph"
        _ext(result)["graph"] = {k: node[k] for k in ("depth", "from_page_id", "relation_id",
                                                      "relation_type", "direction")}
        out.append(result)
    extra = {"graph_depth": depth, "graph_seeds": len(start),
             "graph_relation_types": list(f["relation_types"]) if f["relation_types"]
             else "all", "graph_truncated": truncated}
    return out, base, extra


# -- helpers ----------------------------------------------------------------------------------
def _narrowing(current: Any, f: SearchFilters, statuses: tuple[str, ...],
               page_ids: frozenset[str] | None,
               namespaces: tuple[str, ...] | None) -> text_search.Narrowing:
    past: dict[str, Any] = {}
    bodies: dict[str, str] = {}
    absent: frozenset[str] = frozenset()
    if isinstance(current, AsOf):
        from pcp_cli.index import IndexDoc

        current.entries(statuses=None)  # works out which pages changed since
        absent = frozenset(current.absent)
        for page_id in sorted(current.revised):
            entry = current.head_entry(page_id)
            if entry is None:
                continue
            state = current.current(page_id).state
            bodies[page_id] = state.content
            past[page_id] = IndexDoc(
                path=entry.path, page_id=page_id, revision_id=entry.revision_id or "",
                title=state.title, body=state.content, type=state.type,
                namespace=state.namespace, origin=state.origin, sensitivity=state.sensitivity,
                lifecycle_status=state.lifecycle_status, review_status=state.review_status,
                tags=tuple(state.tags), timestamp=entry.updated_at or "")
    return text_search.Narrowing(
        lifecycle_statuses=statuses, namespaces=namespaces, origins=f["origins"],
        tags=f["tags"], page_ids=page_ids, exclude_page_ids=absent, past=past,
        past_bodies=bodies)


def _ext(result: dict[str, Any]) -> dict[str, Any]:
    return result.setdefault("extensions", {}).setdefault(vocab.EXT_NS, {})


_ID_LIKE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*[0-9._-][A-Za-z0-9._-]*")


def _named_page(current: Any, query: str, select: _Selector) -> Entry | None:
    """The page whose id the whole query is, when the search may return it. Only an id with a
    digit or one of `._-` in it (`ks-001`, `pg_01J…`): a plain word such as `profile` is
    searched as a word."""
    text = _literal(query).strip()
    if not _ID_LIKE.fullmatch(text):
        return None
    entry = current.head_entry(text)
    return entry if select(entry) else None


def _page_text(current: Any, page_id: str | None) -> str:
    if page_id is None:
        return ""
    entry = current.head_entry(page_id)
    try:
        if isinstance(current, AsOf) or entry is None:
            state = current.current(page_id).state
            return f"{state.title}\n{state.content}"
        return f"{entry.title}\n{current.read_body(entry)}"
    except Exception:  # noqa: BLE001 - a page that vanished meanwhile holds nothing
        return ""


def _entry_result(current: Any, entry: Entry,
                  why: str = "found by its relations or its time, not ranked by relevance"
                  ) -> dict[str, Any]:
    """A search result for a page found without the index: built as every result is
    (query/search.py `_result`), with no score and `why` it has none."""
    assert entry.page_id is not None
    body = _page_text(current, entry.page_id).split("\n", 1)[-1]
    hit = text_search.entry_hit(entry, entry_observed(entry))
    return text_search._result(current, hit, body, [], False, entry,
                               current=current, unscored=why)


def _unscored_terms(used: str, query: str) -> dict[str, str]:
    """Why a result of this mode may have no score, and what a relevance floor applies to."""
    kept = "a result without a score is kept and labelled"
    if used == "temporal" and query.strip() == ALL_PAGES:
        return {"unscored_why": "is listed by its observed time, not ranked by relevance",
                "min_score_applies": "nothing: the query * lists pages by observed time, "
                "none has a score, so every one is kept and labelled"}
    if used == "temporal":
        return {"unscored_why": text_search.EXACT_ONLY,
                "min_score_applies": f"the text matches, before they are ordered by observed "
                f"time; {kept}"}
    if used == "graph":
        return {"unscored_why": "was reached by a relation from a match (or matched only exact "
                "fields) and is not ranked",
                "min_score_applies": "the text matches the walk starts from; the pages their "
                "relations reach have no score and are kept, labelled"}
    if used in SEMANTIC_MODES:
        return {"unscored_why": text_search.EXACT_ONLY,
                "min_score_applies": f"the {'cosine' if used == 'semantic' else 'fused'} "
                f"score; {kept}"}
    if used == "exact":
        return {"unscored_why": "holds the literal but was found by reading the pages, not "
                "ranked", "min_score_applies": f"the pages holding its words side by side; "
                f"{kept}"}
    return {"unscored_why": text_search.EXACT_ONLY}


def _report(safeguards: dict[str, Any], base: dict[str, Any], f: SearchFilters, mode: str,
            used: str, reason: str, stamp: str | None, position: int, current: Any,
            extra: dict[str, Any]) -> dict[str, Any]:
    """filters_applied: the safeguards, then what the channel that ran says of itself."""
    out = dict(safeguards)
    for key, value in base.items():
        if key == "relevance_scores" and out[key] == "present" and value != "present":
            out[key] = f"present: {value}"  # what the scores are (semantic: cosine similarity)
        elif key not in out:
            out[key] = value
    statuses = out["lifecycle_statuses"]
    out.update(
        mode=used, mode_requested=mode, mode_reason=reason,
        relation_types=list(f["relation_types"]) if f["relation_types"] else None,
        relation_matching=("pages with such a relation, either direction" if used != "graph"
                           else "relations followed from the matches") if f["relation_types"]
        else None,
        lifecycle_status=list(statuses),
        origins=list(f["origins"]) if f["origins"] else None,
        namespaces=list(f["namespaces"]) if f["namespaces"] else None,
        tags=list(f["tags"]) if f["tags"] else None,
        observed_from=f["observed_from"], observed_to=f["observed_to"],
        observed_time="record " + "|".join(OBSERVED_KEYS) + " by page type, else the page's "
        "creation for material made in the store (imports with no time of their own: none)",
        as_of=stamp, offset=position,
    )
    if isinstance(current, AsOf):
        out["as_of_revised_pages"] = len(current.revised)
        if current.revised:
            out["as_of_ranking"] = ("pages revised since as_of are scored in an index of "
                                    "their revisions then, merged by score")
    out.update(extra)
    return out
