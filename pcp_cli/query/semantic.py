"""The semantic channel of SearchPages (pcp_cli/query/pages.py), and how `hybrid` and `auto`
combine it with text.

- `semantic`: the pages whose best passage is nearest the query's embedding (cosine, clipped
  into [0, 1]), among the pages the filter admits (the vector index never scores another row).
- `hybrid`: text and semantic rankings fused by reciprocal rank fusion, k = 60: a page scores
  sum(1 / (k + rank)) over the channels that found it, divided by the best possible (first in
  both), so scores stay in [0, 1]; a page first in one channel only scores 0.5.
- `auto`: hybrid for a question-like query (a question mark, or three or more words that start
  with a question word, or five or more plain words) when the semantic extra is installed;
  otherwise what pages.choose_mode picks. `filters_applied` says which ran and why.
"""

from __future__ import annotations

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
    if _SYNTAX.search(query):
        return False  # operators, fields or phrases: the person wrote a keyword query
    words = query.split()
    if query.rstrip().endswith("?") and len(words) >= 2:
        return True
    return (len(words) >= 3 and words[0].lower() in QUESTION_WORDS) or len(words) >= 5


def require_extra() -> None:
    from pcp_cli.semantic import INSTALL_HINT, SemanticUnavailable, installed

    if not installed():
        raise SemanticUnavailable(
            "semantic and hybrid search need the 'semantic' extra, which is not installed",
            hint=INSTALL_HINT)


def embedding_query(query: str) -> str:
    return " ".join(query_words(query)) if _SYNTAX.search(query) else query.strip()


def vector_hits(store: Store, query: str, flt: IndexFilter,
                limit: int) -> tuple[list[Candidate], VectorReport, str]:
    """The semantic channel's ranking, after bringing the vectors up to date."""
    from pcp_cli.query.vector_sync import catch_up, open_vectors

    with open_vectors(store) as (vix, embedder):
        report = catch_up(store, vix, embedder)
        text = embedding_query(query)
        hits = vix.search(embedder.embed_query(text), flt, limit) if text else []
    return ([Candidate(h.hit, h.hit.score, "semantic", (h.start, h.end)) for h in hits],
            report, embedder.name)


def channel(store: Store, current: Any, query: str, used: str, ranked: Any, flt: IndexFilter,
            select: Any, depth: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """SearchPages' `semantic` and `hybrid` modes: every result, best first, as search-result
    dicts with `match_channel`, and the filters the text side reported.

    The vector index applies the authorization filters (scopes, lifecycle, sensitivity, review
    status, types) before scoring; the SearchPages filters it does not hold (origins, tags,
    relation types, observed time) are applied with the same `select` as every other mode."""
    from pcp_cli.errors import UsageError as _Usage
    from pcp_cli.query import search as text_search

    text: list[dict[str, Any]] = []
    try:
        text, base = ranked(depth if used == "hybrid" else 1)
    except _Usage:  # semantic mode takes any text; the text filters report only
        if used == "hybrid":
            raise
        base = {}
    if used == "semantic":
        text = []
    vectors, report, model = vector_hits(store, query, flt, depth * 2)
    vectors = [c for c in vectors if select(current.head_entry(c.hit.page_id))][:depth]
    words = query_words(query)
    by_id: dict[str, dict[str, Any]] = {r["id"]: r for r in text}
    spans: dict[str, tuple[int, int]] = {}
    for cand in vectors:
        pid = cand.hit.page_id
        assert cand.span is not None
        spans[pid] = cand.span
        if pid in by_id:
            continue
        body = text_search._body(store, cand.hit)
        if body is None:
            continue
        result = text_search._result(store, cand.hit, body, words, True)
        start, end = cand.span
        snippet, marks = text_search.make_snippet(body[start:end], words,
                                                  text_search.SNIPPET_CHARS)
        result["snippet"] = snippet or body[start:end][:text_search.SNIPPET_CHARS]
        result["score"] = round(cand.score or 0.0, 4)
        result["extensions"][EXT]["highlights"] = [list(m) for m in marks]
        by_id[pid] = result
    if used == "semantic":
        order = [(c.hit.page_id, c.score or 0.0) for c in vectors if c.hit.page_id in by_id]
    else:
        order = _fused([r["id"] for r in text], [c.hit.page_id for c in vectors])
    out = []
    text_ids = {r["id"] for r in text}
    for pid, score in order:
        result = by_id.get(pid)
        if result is None:
            continue
        ext = result["extensions"][EXT]
        channel_name = ("both" if pid in text_ids and pid in spans
                        else "text" if pid in text_ids else "semantic")
        ext["match_channel"] = channel_name
        if pid in spans:
            ext["source_spans"] = [{"field": "body", "start": spans[pid][0],
                                    "end": spans[pid][1]}]
        if used == "hybrid" and not (channel_name == "text" and "score" not in result):
            result["score"] = round(min(1.0, score), 4)
        out.append(result)
    base = dict(base)
    base["semantic_model"] = model
    if used == "hybrid":
        base["fusion"] = (f"reciprocal rank fusion (k={RRF_K}) of text and semantic rankings, "
                          "scaled so that first in both = 1")
    else:
        base["relevance_scores"] = "cosine similarity of the best passage, clipped to 0-1"
    if report.stale:
        base["vectors"] = "stale: another process was updating them; read as they stood"
    return out, base


EXT = "org.pcp-cli"


def _fused(text: list[str], semantic: list[str]) -> list[tuple[str, float]]:
    best = 2 / (RRF_K + 1)
    total: dict[str, float] = {}
    for ranking in (text, semantic):
        for rank, pid in enumerate(dict.fromkeys(ranking)):
            total[pid] = total.get(pid, 0.0) + 1 / (RRF_K + rank + 1)
    return sorted(((p, s / best) for p, s in total.items()), key=lambda x: (-x[1], x[0]))


def auto(query: str, used: str, reason: str) -> tuple[str, str]:
    """`auto`'s choice once semantic search exists: hybrid for a question-like query that
    pages.choose_mode would run as text."""
    from pcp_cli.semantic import installed

    if used != "text" or not question_like(query):
        return used, reason
    if not installed():
        return "text", "a question, but the semantic extra is not installed"
    return "hybrid", "a question-like query"
