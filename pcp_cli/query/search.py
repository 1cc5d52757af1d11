"""`pcp search` / `pcp_search`: the §4.2 safeguards, enforced here for every front end.

Authorization before relevance: the caller's scopes become the exact namespaces the index may
look at, and lifecycle, review status, sensitivity and type become index filters, so a page
outside them is never a candidate. Suppressed pages (an MCP session's hidden set) are dropped
from an over-fetched ranking, so `limit` results still come back and none is counted.
`filters_applied` states what ran.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pcp_cli.errors import PcpError
from pcp_cli.index import (
    IndexDoc,
    IndexFilter,
    IndexHit,
    IndexNeedsRebuild,
    make_snippet,
    query_words,
)
from pcp_cli.index.text import check_and_rewrite_query
from pcp_cli.index.types import normalize_score
from pcp_cli.model import scopes as scope_rule
from pcp_cli.model import vocab
from pcp_cli.model.search_request import SearchRequest
from pcp_cli.query import passages, tiebreak
from pcp_cli.query.observed import entry_observed

if TYPE_CHECKING:
    from pcp_cli.store.store import Store

SCHEMA_VERSION = "1.0"
SNIPPET_CHARS = 240
SOURCE_SYSTEM = "pcp"
READ_VIEWS = ("manifest", "payload", "relations", "history", "facets", "source_spans")
CURRENT = ("active",)
# What --include-superseded adds. Tombstoned pages are withdrawn: never served by a search.
WITH_SUPERSEDED = ("active", "superseded", "archived")
# Extra hits fetched so that hits dropped after ranking (suppressed pages, a head file deleted
# since the index caught up) do not leave the answer short.
SLACK = 5


@dataclass(frozen=True)
class Narrowing:
    """What SearchPages narrows a search to beyond the classic options (all applied inside the
    index filter, before ranking). `past` holds the pages whose revision as of a past moment
    differs from their head: they are searched in a small index of those revisions instead."""

    lifecycle_statuses: tuple[str, ...] | None = None  # overrides include_superseded
    namespaces: tuple[str, ...] | None = None  # exact namespaces, within the scopes
    origins: tuple[str, ...] | None = None
    tags: tuple[str, ...] | None = None
    page_ids: frozenset[str] | None = None
    exclude_page_ids: frozenset[str] = frozenset()
    past: dict[str, IndexDoc] = field(default_factory=dict)
    past_bodies: dict[str, str] = field(default_factory=dict)


def index_filter(store: Store, request: SearchRequest,
                 narrowing: Narrowing | None = None) -> IndexFilter:
    """What the index may see of `request`: every safeguard and filter, applied before
    ranking."""
    scopes = request.scopes
    # The catalog's namespaces are only needed to resolve scope patterns (a DISTINCT over every
    # row: ~13 ms at 10k pages), so an unscoped search never asks for them.
    namespaces = None if scopes is None else scope_rule.resolve(
        scopes, narrowing.namespaces if narrowing and narrowing.namespaces is not None
        else store.catalog.namespaces())
    if narrowing and narrowing.namespaces is not None and namespaces is None:
        namespaces = sorted(narrowing.namespaces)
    statuses = lifecycle_statuses(request.include_superseded)
    if narrowing and narrowing.lifecycle_statuses is not None:
        statuses = narrowing.lifecycle_statuses
    return IndexFilter(
        namespaces=None if namespaces is None else tuple(namespaces),
        types=request.types or None,
        exclude_types=request.exclude_types,
        lifecycle_statuses=statuses,
        sensitivities=served_sensitivities(request.include_sensitive,
                                           request.include_unclassified),
        review_statuses=("affirmed",),
        origins=narrowing.origins if narrowing else None,
        tags=narrowing.tags if narrowing else None,
        page_ids=narrowing.page_ids if narrowing else None,
        exclude_page_ids=(narrowing.exclude_page_ids | frozenset(narrowing.past))
        if narrowing else frozenset(),
    )


def search(store: Store, request: SearchRequest, *, query: str | None = None,
           fetch: int | None = None, offset: int = 0, narrowing: Narrowing | None = None,
           current: Any = None,
           hits_only: bool = False, rank: bool = True) -> dict[str, Any]:
    """The text channel of SearchPages (pcp_cli/query/pages.py): the envelope `{schema_version,
    query, count, filters_applied, results}` of the ranked text matches of `request`.

    Pages whose sensitivity was never set are *unclassified*: included (and labelled) when
    `request.include_unclassified` or `include_sensitive`, else withheld with `high`.

    `query` replaces the request's query (a mode's rewrite of it); `current` is the store or
    its view as of a moment (results read their revisions from it); `narrowing` adds
    SearchPages' filters; `offset` skips that many results (a cursor's position); `fetch`
    replaces the limit and its 25 maximum for internal candidate fetches (exact, temporal and
    graph modes read every candidate, then page through their own ordering). `hits_only`: the
    results are the ranked `IndexHit`s, no page read and no snippet made (hybrid search ranks
    many candidates and makes results for the few it serves: query/semantic.py). `rank`
    False: no index search at all, only the filters report (semantic mode reports the filters
    it shares with text search)."""
    from pcp_cli.query.index_sync import ensure_current, open_index

    query = request.query if query is None else query
    capped = request.served if fetch is None else fetch
    min_score, suppressed = request.min_score, request.suppressed
    check_and_rewrite_query(query)  # a malformed query fails before any index work
    flt = index_filter(store, request, narrowing=narrowing)
    need = offset + capped + len(suppressed)
    fetch = max(need + SLACK, passages.POOL) if rank else need + SLACK
    hits: list[IndexHit] = []
    stale = False
    with contextlib.ExitStack() as still_open:
        explained = _Explained(query)
        if rank:
            ix = still_open.enter_context(open_index(store))
            report = ensure_current(store, ix)
            try:
                fetch = _fetch(ix, query, flt, fetch, need)
                hits = ix.search(query, filter=flt, limit=fetch, explain=False)
            except IndexNeedsRebuild:
                # Damage found only while reading (a truncated segment): rebuild, retry once.
                report = ensure_current(store, ix)
                fetch = _fetch(ix, query, flt, fetch, need)
                hits = ix.search(query, filter=flt, limit=fetch, explain=False)
            explained = _Explained(query, ix, hits)
            stale = report.stale
        if narrowing and narrowing.past:
            hits = _merge_past(store, hits, query, flt, narrowing, fetch)
        words = query_words(query)
        bodies: dict[str, str | None] = {}

        def body_of(hit: IndexHit) -> str | None:
            if hit.page_id not in bodies:
                body = (narrowing.past_bodies.get(hit.page_id) if narrowing and hit.page_id in
                        narrowing.past else None)
                bodies[hit.page_id] = _body(store, hit) if body is None else body
            return bodies[hit.page_id]

        best: dict[str, passages.Scored] = {}
        coverage = None
        if rank:
            hits, best, coverage = _by_passages(hits, words, body_of, suppressed)
            hits = tiebreak.order(hits, score=lambda h: h.score_raw, origin=lambda h: h.origin,
                                  observed=lambda h: h.timestamp)
        results = _results(store, hits, explained, words, body_of, best,
                           suppressed=suppressed, min_score=min_score, hits_only=hits_only,
                           offset=offset, capped=capped, current=current)
    # What this channel says of itself; the safeguards are stated once, for the results
    # served, by query/pages.py (filters_report).
    filters: dict[str, Any] = {}
    if rank:
        filters["tie_break"] = tiebreak.RULE
    if stale:
        filters["index"] = "stale: another process was updating it; read as it stood"
    return {"schema_version": SCHEMA_VERSION, "query": query, "count": len(results),
            "filters_applied": filters, "results": results, COVERAGE: coverage}


def _fetch(ix: Any, query: str, flt: IndexFilter, fetch: int, need: int) -> int:
    """How many hits to fetch so that the band of nearly tied hits holding position `need`
    is whole: a band cut by the fetch would be ordered differently by a longer fetch (the
    next cursor page). Decided on the scores alone (no stored document read), doubling the
    fetch until the band closes or `tiebreak.MAX_FETCH`: on the best `MAX_FETCH` scores
    fetched once, whose first N are the scores a fetch of N gives (an engine's top-N costs a
    pass over the matching postings, whatever N: one pass, not one per doubling)."""
    scores = ix.scores(query, filter=flt, limit=fetch)
    if len(scores) < fetch or fetch >= tiebreak.MAX_FETCH or tiebreak.settled(scores, need):
        return fetch
    scores = ix.scores(query, filter=flt, limit=tiebreak.MAX_FETCH)
    while len(scores[:fetch]) == fetch and fetch < tiebreak.MAX_FETCH and not tiebreak.settled(
            scores[:fetch], need):
        fetch = min(fetch * 2, tiebreak.MAX_FETCH)
    return fetch


class _Explained:
    """The hits of one search with their matched fields, worked out by the index (still open)
    for the hits a caller reaches only, a few at a time: a tie-break may read thousands of
    hits to serve ten. Hits the index did not give (a past revision's) are as they came. A
    hit is known by its file's path (one per page's head file): re-ranking by passages
    replaces its score, not which file it is."""

    CHUNK = 16

    def __init__(self, query: str, ix: Any = None, hits: Sequence[IndexHit] = ()) -> None:
        self.query, self.ix = query, ix
        self.waiting = {hit.path for hit in hits}
        self.done: dict[str, IndexHit] = {}

    def __call__(self, hit: IndexHit, following: Sequence[IndexHit]) -> IndexHit:
        key = hit.path
        if key in self.done or key not in self.waiting:
            return self.done.get(key, hit)
        batch = [hit, *(h for h in following if h.path in self.waiting
                        and h.path not in self.done)][:self.CHUNK]
        for before, after in zip(batch, self.ix.explain(self.query, batch), strict=True):
            self.done[before.path] = after
        return self.done[key]


def _results(store: Store, hits: list[IndexHit], explained: _Explained, words: list[str],
             body_of: Any, best: dict[str, passages.Scored], *, suppressed: frozenset[str],
             min_score: float | None, hits_only: bool, offset: int, capped: int,
             current: Any) -> list[Any]:
    """The results served from `hits` (best first): each page once, none suppressed, none
    under `min_score`, none whose file is gone, `offset` skipped, at most `capped`; a page's
    snippet at its best passage (`best`, by page id)."""
    results: list[Any] = []
    seen: set[str] = set()
    skip = offset
    for i, hit in enumerate(hits):
        # A page has one head file, but a stray copy (a diverged sync) must not show it twice.
        if hit.page_id in suppressed or hit.page_id in seen:
            continue
        seen.add(hit.page_id)
        # A hit that matched only exact fields (id:, type:, tag: ...) has no score: it is kept
        # and labelled, never dropped by the relevance floor (v1 §4.2).
        scored = hit.score_raw > 0
        if min_score is not None and scored and hit.score < min_score:
            continue
        if hits_only:
            body = ""
        else:
            body = body_of(hit)
            if body is None:
                continue
        if skip:
            skip -= 1
            continue
        hit = explained(hit, hits[i + 1:i + _Explained.CHUNK])
        if hits_only:
            results.append(hit)
        else:
            results.append(_result(store, hit, body, words, scored, _LOOK_UP,
                                   best.get(hit.page_id), current=current))
        if len(results) >= capped:
            break
    return results


# What `search` says of its best match besides the envelope (popped by query/pages.py): the
# share of the query's words it holds (None: nothing was ranked).
COVERAGE = "_best_match_coverage"


def _by_passages(hits: list[IndexHit], words: list[str], body_of: Any,
                 suppressed: frozenset[str]
                 ) -> tuple[list[IndexHit], dict[str, Any], float | None]:
    """The hits with the best `passages.POOL` of them re-ranked by their best passage (see
    query/passages.py) and the others' scores scaled as if no passage counted; the pooled
    pages' scored passages, by page id (their results' snippets); and the share of the
    query's words the best of them holds (None when nothing was pooled)."""
    import dataclasses

    if not words or not hits:
        return hits, {}, None
    pool = passages.Pool(words)
    raw: dict[str, float] = {}
    for hit in hits:
        if len(raw) >= passages.POOL:
            break
        if hit.page_id in suppressed or hit.page_id in raw or hit.score_raw <= 0:
            continue
        body = body_of(hit)
        if body is None:
            continue
        pool.add(hit.page_id, body, hit.type)
        raw[hit.page_id] = hit.score_raw
    if not raw:
        return hits, {}, None
    scored = pool.scored()
    new = passages.rerank(raw, scored)
    keep = 1 - passages.PASSAGE_WEIGHT
    out = []
    for hit in hits:
        score = new.get(hit.page_id, hit.score_raw * keep) if hit.score_raw > 0 else 0.0
        out.append(dataclasses.replace(hit, score_raw=score, score=normalize_score(score)))
    out.sort(key=lambda h: -h.score_raw)  # stable: engine order among equals
    top = next((h.page_id for h in out if h.page_id in raw), None)
    return out, scored, None if top is None else pool.coverage(top)


def results_for(store: Store, hits: list[IndexHit], *, query: str, current: Any = None,
                body_of: Any = None) -> list[dict[str, Any]]:
    """The search results of `hits` a mode chose and ordered itself (exact mode's verified
    matches), built as `search` builds its own: snippet at the best passage, source spans,
    provenance. `body_of(page_id)` reads a page's body (default: its head file). A hit whose
    page is gone since is left out."""
    words = query_words(query)
    out = []
    for hit in hits:
        body = _body(store, hit) if body_of is None else body_of(hit.page_id)
        if body is None:
            continue
        out.append(_result(store, hit, body, words, hit.score_raw > 0, current=current))
    return out


def lifecycle_statuses(include_superseded: bool) -> tuple[str, ...]:
    """The lifecycle statuses a search serves (the index filter's and the scan's)."""
    return WITH_SUPERSEDED if include_superseded else CURRENT


def served_sensitivities(include_sensitive: bool,
                         include_unclassified: bool) -> tuple[str, ...] | None:
    """The sensitivities a search serves, None for every one (the index filter's and the
    scan's): unclassified pages go with `high` unless `include_unclassified`."""
    if include_sensitive:
        return None
    if include_unclassified:
        return (*vocab.SERVED_SENSITIVITIES, vocab.UNCLASSIFIED)
    return vocab.SERVED_SENSITIVITIES


def catalog_sensitivities(include_sensitive: bool,
                          include_unclassified: bool) -> tuple[str | None, ...] | None:
    """`served_sensitivities` in the catalog's terms (None in it stands for unclassified
    pages): what the timeline and stats count and list, by the same rule as a search."""
    served = served_sensitivities(include_sensitive, include_unclassified)
    if served is None:
        return None
    return tuple(None if s == vocab.UNCLASSIFIED else s for s in served)


def sensitivity_report(include_sensitive: bool, include_unclassified: bool) -> dict[str, Any]:
    """What `filters_applied` says of sensitivity, for a search, the timeline and stats alike."""
    return {
        "include_sensitive": include_sensitive,
        "sensitivity_filtering": "all_records",
        # Pages whose sensitivity was never set might be high: they go with `high`.
        "unclassified_sensitivity": (
            "included, labelled unclassified" if include_sensitive or include_unclassified
            else "withheld with high: they might be sensitive (include_sensitive returns them)"
        ),
    }


EXACT_ONLY = "matched only exact fields (id:, type:, tag: ...), which are not ranked"


def filters_report(*, capped: int, requested: int | None, types: Sequence[str],
                   exclude_types: Sequence[str],
                   lifecycle_statuses: Sequence[str], include_sensitive: bool,
                   include_unclassified: bool, min_score: float | None,
                   unscored: int, total: int, scopes: Sequence[str] | None,
                   namespaces: Sequence[str] | None, scope_filtering: str,
                   unscored_why: str = EXACT_ONLY,
                   min_score_applies: str | None = None) -> dict[str, Any]:
    """`filters_applied` (v1 §4.2): the safeguards every search states, whatever ran it (each
    SearchPages mode and cursor page, query/pages.py; the fresh clone's scan,
    query/first_answer.py), built here only so that no path can leave one out: the limit and
    its cap, types, lifecycle, review, sensitivity, the relevance floor (and how many of the
    `total` results served, `unscored` of them without a score, it kept), scopes (`scopes`
    as requested, None for the whole store; `namespaces` the namespaces that were searched).
    Each caller adds what is its own after these (suppressed pages, the index or scan state,
    the mode)."""
    filters: dict[str, Any] = {"limit": capped}
    if requested is not None:
        filters.update(limit_requested=requested, capped=True)
    filters.update(
        types=list(types) or None,
        exclude_types=list(exclude_types) or None,
        current_only=list(lifecycle_statuses) == ["active"],
        lifecycle_statuses=list(lifecycle_statuses),
        review_status="affirmed_only",
        **sensitivity_report(include_sensitive, include_unclassified),
        min_score=min_score,
    )
    if min_score is not None:
        filters["unscored_kept"] = unscored
        filters["min_score_applied_to"] = min_score_applies or (
            "scored results; a result without a score is kept and labelled")
    filters.update(
        relevance_scores=_relevance_scores(unscored, total, unscored_why),
        scopes=None if namespaces is None else sorted(namespaces),
        scopes_requested=None if scopes is None else list(scopes),
        scope_filtering=scope_filtering,
    )
    return filters


def _relevance_scores(unscored: int, total: int, why: str = EXACT_ONLY) -> str:
    """What `filters_applied.relevance_scores` says: never "present" when a result has none."""
    if not unscored:
        return "present"
    if unscored == total:
        return f"absent: every result {why}"
    return f"partial: {unscored} of {total} results {why}; they have no score"


PAST_INDEXES = "asof-index"


def _past_index(store: Store, narrowing: Narrowing) -> Any:
    """The index of the revised pages as they were: built once per set of revisions and kept
    under `.pcp/asof-index/<key>/` (only the newest one is kept), so the next query as of the
    same moment on an unchanged store does not build it again."""
    import hashlib
    import shutil
    import tempfile
    from pathlib import Path

    from pcp_cli.index import SearchIndex

    key = hashlib.sha256("\n".join(
        f"{pid} {doc.revision_id} {doc.path}" for pid, doc in sorted(narrowing.past.items())
    ).encode()).hexdigest()[:20]
    parent = store.layout.local / PAST_INDEXES
    final = parent / key
    if not (final / "meta.json").exists():
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=parent))
        ix = SearchIndex.open_or_create(tmp)
        try:
            ix.rebuild(iter(narrowing.past.values()))
        finally:
            ix.close()
        try:
            os.rename(tmp, final)
        except OSError:  # another process published it first
            shutil.rmtree(tmp, ignore_errors=True)
        for other in parent.iterdir():
            if other.name != key and not other.name.startswith("."):
                shutil.rmtree(other, ignore_errors=True)
    return SearchIndex.open_or_create(final)


def _merge_past(store: Store, hits: list[IndexHit], query: str, flt: IndexFilter,
                narrowing: Narrowing, fetch: int) -> list[IndexHit]:
    """Hits of the current index (which left the revised pages out) merged, by score, with the
    hits of an index holding those pages as they were."""
    import dataclasses

    ix = _past_index(store, narrowing)
    try:
        past_flt = dataclasses.replace(
            flt, page_ids=frozenset(narrowing.past) if flt.page_ids is None
            else flt.page_ids & frozenset(narrowing.past),
            exclude_page_ids=narrowing.exclude_page_ids)
        past = ix.search(query, filter=past_flt, limit=fetch)
    finally:
        ix.close()
    return sorted(hits + past, key=lambda h: -h.score_raw)


def _body(store: Store, hit: IndexHit) -> str | None:
    try:
        text = (store.root / hit.path).read_text("utf-8")
    except FileNotFoundError:
        return None  # deleted since the index caught up: not a result any more
    except (OSError, UnicodeDecodeError):  # unreadable: served from its newest revision
        try:
            return store.current(hit.page_id).state.content
        except PcpError:
            return ""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 3)
        if end != -1:
            return text[end + 5:]
    return text


def _provenance(record: dict[str, Any] | None) -> dict[str, Any]:
    """v1 §5: a result carries its record's `source` and `confidence` where it has them."""
    found: dict[str, Any] = {}
    if not record:
        return found
    if isinstance(record.get("source"), str):
        found["source"] = record["source"]
    confidence = record.get("confidence")
    if isinstance(confidence, int | float) and not isinstance(confidence, bool):
        found["confidence"] = confidence
    return found


_LOOK_UP: Any = object()  # `_result`'s default: find the page's catalog entry itself


def _result(store: Store, hit: IndexHit, body: str, words: list[str],
            scored: bool, entry: Any = _LOOK_UP,
            passage: passages.Scored | None = None, *, current: Any = None,
            unscored: str = "the query matched only exact fields, which are not ranked"
            ) -> dict[str, Any]:
    """One search result, built once, whatever found it. `entry` is the page's catalog entry
    when the caller has it (None: there is none to read provenance from), else it is looked up
    here. `passage`: the page's passages scored in the ranking's pool (else they are scored
    here, on their own); the snippet is the best one, and `source_spans` locates it.
    `current`: the store or a view of it as of a moment (the revision's facets and visibility
    are read from it). `unscored`: why a result without a score has none."""
    current = store if current is None else current
    if passage is None and words:
        passage = passages.score_one(body, hit.type, words)
    chosen = passage.best_passage if passage is not None else None
    if chosen is not None:
        snippet, spans = passages.snippet(body, passage, words, SNIPPET_CHARS)
    else:
        snippet, spans = make_snippet(body, words, SNIPPET_CHARS)
    if entry is _LOOK_UP:
        entry = current.head_entry(hit.page_id)
    facets, source_refs, visibility = _revision_facts(current, hit)
    views = ["manifest", "payload", "relations", "history"]
    if facets:
        views.append("facets")
    if source_refs or facets.get("source_spans"):
        views.append("source_spans")
    ext: dict[str, Any] = {
        "page_id": hit.page_id,
        "revision_id": hit.revision_id,
        "scope": {"namespace": hit.namespace, "owner_id": store.owner_id,
                  "visibility": visibility},
        "lifecycle_status": hit.lifecycle_status,
        "observed_at": entry_observed(entry) if entry is not None else None,
        "tags": list(entry.tags) if entry is not None else [],
        "facets": facets,
        "matched_fields": list(hit.matched_fields),
        "highlights": [list(span) for span in spans],
        "read_views": views,
        "path": hit.path,
    }
    if chosen is not None and (chosen.kind == "message" or len(passage.passages) > 1):
        ext["source_spans"] = [chosen.locator()]
    if not scored:
        ext["score"] = f"absent: {unscored}"
    result: dict[str, Any] = {
        "id": hit.page_id,
        "type": hit.type,
        "origin": hit.origin if hit.origin in vocab.ORIGINS else "generated",
        "snippet": snippet,
    }
    if scored:
        result["score"] = min(1.0, max(0.0, round(hit.score, 4)))
    if hit.timestamp:
        result["timestamp"] = hit.timestamp
    if hit.sensitivity in vocab.SENSITIVITIES:
        result["sensitivity"] = hit.sensitivity
    else:  # v1 §3.4: sensitivity only "where the record is classified"
        ext["sensitivity"] = vocab.UNCLASSIFIED
    ext.update(_provenance(entry.record if entry is not None else None))
    result.update(source_system=SOURCE_SYSTEM, source_id=hit.page_id,
                  extensions={vocab.EXT_NS: ext})
    return result


def _revision_facts(current: Any, hit: IndexHit) -> tuple[dict[str, Any], tuple[str, ...], str]:
    """(facets, source_refs, visibility) of the revision a result is: what `read_views` offers
    and the original scope's visibility."""
    try:
        revision = current.get(hit.page_id, hit.revision_id or None)
    except Exception:  # noqa: BLE001 - identity stays; the facets are an aid
        return {}, (), "private"
    state = revision.state
    return dict(state.facets), tuple(state.source_refs), state.visibility


def entry_hit(entry: Any, observed: str | None) -> IndexHit:
    """An `IndexHit` for a page found without the index (by its id, its relations or its time):
    what `_result` builds every result from."""
    return IndexHit(
        page_id=entry.page_id, path=entry.path, revision_id=entry.revision_id or "",
        type=entry.type or "note", namespace=entry.namespace or "",
        origin=entry.origin or "generated",
        sensitivity=entry.sensitivity or vocab.UNCLASSIFIED,
        lifecycle_status=entry.lifecycle_status or "active",
        review_status=entry.review_status or "affirmed", timestamp=observed or "",
        mtime_ns=entry.mtime_ns, score_raw=0.0, score=0.0)
