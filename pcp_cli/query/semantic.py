"""The semantic channel of SearchPages (pcp_cli/query/pages.py), and how `hybrid` and `auto`
combine it with text.

- `semantic`: the pages whose best passage is nearest the query's embedding (cosine, clipped
  into [0, 1]), among the pages the filter admits (the vector index never scores another row).
- `hybrid`: text and semantic rankings fused by reciprocal rank fusion, k = 60: a page scores
  sum(1 / (k + rank)) over the channels that found it, divided by the best possible (first in
  both), so scores stay in [0, 1]; a page first in one channel only scores 0.5.
- `auto`: text, and hybrid instead for a question-like query (a question mark, or three or
  more words that start with a question word, or five or more plain words) whose best text
  match holds at most a third of its words, when the semantic extra is installed
  (`COVERAGE_FLOOR`). `filters_applied` says which ran and why.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pcp_cli.index import IndexFilter, IndexHit, query_words

if TYPE_CHECKING:
    from pcp_cli.query.vector_sync import VectorReport
    from pcp_cli.store.store import Store

RRF_K = 60
# How deep each channel's ranking goes before fusion: a page ranked 40th by text and 3rd by
# meaning should still win over one ranked 10th by text alone.
FUSION_DEPTH = 50
QUESTION_WORDS = frozenset(
    "who whom whose what where when why how which is are was were does do did can could should "
    "would will has have had any".split())
_SYNTAX = re.compile(r'[":()]|\b(AND|OR|NOT)\b')


@dataclass
class Candidate:
    hit: IndexHit
    score: float | None  # None: matched only unranked exact fields
    channel: str  # "text", "semantic" or "both"
    span: tuple[int, int] | None = None  # the best passage, when the semantic channel found it


def question_like(query: str) -> bool:
    from pcp_cli.index.text import plain_words

    words = plain_words(query)
    if words is None:
        return False  # operators, fields, phrases or a prefix: the person wrote a keyword query
    if query.rstrip().endswith("?") and len(words) >= 2:
        return True
    return (len(words) >= 3 and words[0].lower() in QUESTION_WORDS) or len(words) >= 5


def require_extra() -> None:
    from pcp_cli.errors import SemanticUnavailable
    from pcp_cli.semantic import INSTALL_HINT, installed

    if not installed():
        raise SemanticUnavailable(
            "semantic and hybrid search need the 'semantic' extra, which is not installed",
            hint=INSTALL_HINT)


def embedding_query(query: str) -> str:
    return " ".join(query_words(query)) if _SYNTAX.search(query) else query.strip()


def vector_hits(store: Store, query: str, flt: IndexFilter,
                limit: int) -> tuple[list[Candidate], VectorReport, str]:
    """The semantic channel's ranking, after bringing the vectors up to date: the `limit` best
    pages among those `flt` admits (every filter is applied before scoring)."""
    from pcp_cli.query.vector_sync import catch_up, open_vectors

    with open_vectors(store) as (vix, embedder):
        report = catch_up(store, vix, embedder)
        text = embedding_query(query)
        hits = vix.search(embedder.embed_query(text), flt, limit) if text else []
    return ([Candidate(h.hit, h.hit.score, "semantic", (h.start, h.end)) for h in hits],
            report, embedder.name)


def vector_filter(store: Store, flt: IndexFilter, suppressed: frozenset[str]) -> IndexFilter:
    """`flt` as the vector index applies it: tags (which it does not hold) become the pages
    that carry them, and suppressed pages are excluded, so that nothing is filtered after
    ranking and a filtered search is never short."""
    page_ids, tags = flt.page_ids, flt.tags
    if tags is not None:
        tagged = store.catalog.tagged(tags)
        page_ids = tagged if page_ids is None else page_ids & tagged
    return dataclasses.replace(flt, tags=None, page_ids=page_ids,
                               exclude_page_ids=flt.exclude_page_ids | suppressed)


def channel(store: Store, current: Any, query: str, used: str, ranked: Any, flt: IndexFilter,
            select: Any, depth: int, *, position: int, limit: int,
            suppressed: frozenset[str] = frozenset(),
            min_score: float | None = None) -> tuple[list[dict[str, Any]], int,
                                                     dict[str, Any]]:
    """SearchPages' `semantic` and `hybrid` modes: the results at `position`..`position +
    limit` of the ranking, best first, as search-result dicts with `match_channel`; how many
    pages matched in all; and the filters the text side reported.

    Each channel ranks `depth` pages: text through the text index, meaning through the vector
    index, which applies every filter of the search (scopes, lifecycle, sensitivity, review
    status, types, namespaces, origins, tags, relation types, observed time, suppression) before
    it scores a row. The two rankings are fused, and pages are read and snippets made only for
    the results served."""
    from pcp_cli.errors import UsageError as _Usage

    text: list[IndexHit] = []
    try:
        # semantic mode asks the text side for its filters report only, no text search
        text, base = ranked(depth, hits_only=True, rank=used == "hybrid")
    except _Usage:  # semantic mode takes any text; the text filters report only
        if used == "hybrid":
            raise
        base = {}
    vectors, report, model = vector_hits(store, query, vector_filter(store, flt, suppressed),
                                         depth)
    text_hits = {h.page_id: h for h in text}
    vector_by_id = {c.hit.page_id: c for c in vectors}
    if used == "semantic":
        order = [(c.hit.page_id, c.score or 0.0) for c in vectors]
    else:
        order = _fused(list(text_hits), list(vector_by_id))
    ranking: list[tuple[str, float | None]] = []
    for pid, score in order:
        hit = text_hits.get(pid)
        # a text hit that matched only exact fields keeps no score when text alone found it
        final = None if (hit is not None and pid not in vector_by_id and hit.score_raw <= 0
                         and used == "hybrid") else round(min(1.0, score), 4)
        if min_score is not None and final is not None and final < min_score:
            continue
        ranking.append((pid, final))
    words = query_words(query)
    served: list[dict[str, Any]] = []
    dropped = 0
    for pid, final in ranking:
        if len(served) >= limit:
            break
        result = _served(store, current, select, pid, final, text_hits.get(pid),
                         vector_by_id.get(pid), words, build=position <= 0)
        if result is None:
            dropped += 1  # deleted since the indexes caught up, or no longer admitted
        elif position > 0:
            position -= 1
        else:
            served.append(result)
    base = dict(base)
    base["semantic_model"] = model
    if used == "hybrid":
        base["fusion"] = (f"reciprocal rank fusion (k={RRF_K}) of text and semantic rankings, "
                          "scaled so that first in both = 1")
    else:
        base["relevance_scores"] = "cosine similarity of the best passage, clipped to 0-1"
    base["semantic_filtering"] = "before_ranking"
    if report.stale:
        base["vectors"] = "stale: another process was updating them; read as they stood"
    return served, len(ranking) - dropped, base


def _served(store: Store, current: Any, select: Any, pid: str, score: float | None,
            text: IndexHit | None, vector: Candidate | None, words: list[str],
            build: bool) -> dict[str, Any] | None:
    """One fused candidate as a search result (None when its page is gone or, found by
    meaning only, no longer admitted: the vector rows lag a concurrent writer at most).
    With `build` False only whether it is still a result is checked (a page before the
    cursor's position)."""
    from pcp_cli.query import search as text_search

    if text is None and (vector is None or not select(current.head_entry(pid))):
        return None
    hit = text if text is not None else vector.hit  # type: ignore[union-attr]
    body = text_search._body(store, hit)
    if body is None:
        return None
    if not build:
        return {}
    result = text_search._result(store, hit, body, words, text is None or hit.score_raw > 0)
    ext = result["extensions"][EXT]
    if text is None:
        assert vector is not None and vector.span is not None
        start, end = vector.span
        snippet, marks = text_search.make_snippet(body[start:end], words,
                                                  text_search.SNIPPET_CHARS)
        result["snippet"] = snippet or body[start:end][:text_search.SNIPPET_CHARS]
        ext["highlights"] = [list(m) for m in marks]
    if vector is not None:
        assert vector.span is not None
        ext["source_spans"] = [{"field": "body", "start": vector.span[0],
                                "end": vector.span[1]}]
    ext["match_channel"] = ("both" if text is not None and vector is not None
                            else "text" if text is not None else "semantic")
    if score is not None:
        result["score"] = score
    return result


EXT = "org.pcp-cli"


def _fused(text: list[str], semantic: list[str]) -> list[tuple[str, float]]:
    best = 2 / (RRF_K + 1)
    total: dict[str, float] = {}
    for ranking in (text, semantic):
        for rank, pid in enumerate(dict.fromkeys(ranking)):
            total[pid] = total.get(pid, 0.0) + 1 / (RRF_K + rank + 1)
    return sorted(((p, s / best) for p, s in total.items()), key=lambda x: (-x[1], x[0]))


# auto fuses in meaning only when the best text match holds at most this share of the
# question's words (those that say what it is about; query/passages.content_stems). Decided
# on the development set (LoCoMo conv-30 and conv-44, bench/memory_search.py): text ranked at
# least as well as hybrid at every share above a third (hybrid lost 77 questions and won 15
# there); at a third or less, or with no match at all, the words are not what the question
# shares with its answer.
COVERAGE_FLOOR = 1 / 3


def weak_words(coverage: float | None) -> str | None:
    """Why a text ranking whose best match holds `coverage` of the query's words (None:
    nothing matched) is weak, or None when it is not."""
    if coverage is None:
        return "no page holds its words"
    if coverage <= COVERAGE_FLOOR:
        return f"the best match holds {coverage:.0%} of its words"
    return None


def by_meaning(weak: str) -> tuple[str, str]:
    """What `auto` runs for a question whose words matched weakly (`weak` says how)."""
    from pcp_cli.semantic import installed

    if not installed():
        return "text", f"a question, {weak}; the semantic extra is not installed"
    return "hybrid", f"a question, {weak}: words and meaning fused"
