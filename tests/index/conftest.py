from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pcp_cli.index import IndexDoc, IndexFilter, SearchIndex


def doc(page_id: str, body: str = "", **kw: object) -> IndexDoc:
    fields: dict[str, object] = {
        "path": f"pages/{kw.get('namespace', 'personal')}/{page_id}.md".replace(":", "/"),
        "page_id": page_id,
        "revision_id": f"rev_{page_id}_1",
        "title": f"Page {page_id}",
        "body": body,
        "type": "note",
        "namespace": "personal",
        "timestamp": "2026-01-01T00:00:00Z",
    }
    fields.update(kw)
    return IndexDoc(**fields)  # type: ignore[arg-type]


CORPUS = [
    doc("run", "She runs every morning before work.", title="Morning routine", tags=("Health",)),
    doc("cook", "Cooking pasta with garlic and olive oil.", title="Pasta", tags=("food",)),
    doc("zh", "物竞天择，即适者生存。这是进化论的核心。", title="进化论"),
    doc("ja", "子供のころ、よくしりとりをして遊びました。", title="ことば遊び"),
    doc("ko", "저는 서울에서 프로그래머로 일하고 있습니다.", title="자기소개"),
    doc(
        "ks",
        "Prefer concise answers with code first.",
        type="keystone",
        title="Answer style",
        origin="user_stated",
        tags=("style", "writing"),
    ),
    doc("phr", "the quick brown fox jumps over the lazy dog", title="Fox"),
    doc("phr2", "the brown quick fox and a dog that is lazy", title="Fox again"),
]


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    return tmp_path / ".pcp" / "index"


@pytest.fixture
def ix(index_dir: Path) -> Iterator[SearchIndex]:
    index = SearchIndex.open_or_create(index_dir)
    index.rebuild(CORPUS)
    yield index
    index.close()


def ids(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.page_id for h in hits]


def whoosh_reference(ix: SearchIndex, query: str, flt: IndexFilter) -> list[tuple[str, float]]:
    """Every document `query` matches under `flt`, scored by whoosh's own BM25F scorer and
    collector with nothing pruned (limit=None), best first, ties by docnum: the ranking any
    `limit` of pcp's search must be the top of.

    A top-level NOT is applied here as a set difference, independently of any AndNot matcher
    (whoosh's own serves excluded pages, see `_whoosh._AndNot`)."""
    from whoosh import query as Q
    from whoosh import scoring

    q = ix._parse(query)
    with ix._ix.searcher(weighting=scoring.BM25F()) as searcher:
        excluded: set[int] = set()
        if isinstance(q, Q.AndNot):
            excluded, q = set(searcher.docs_for_query(q.b)), q.a
        results = searcher.search(q, limit=None, filter=ix._allowed(searcher, flt))
        items = sorted(((h.score, h.docnum, h["hit"][0]) for h in results
                        if h.docnum not in excluded), key=lambda t: (-t[0], t[1]))
    return [(page_id, score) for score, _, page_id in items]


def close(a: float, b: float) -> bool:
    """Equal but for float sums taken in another order (whoosh's union tree vs term order)."""
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def assert_exact_top(ours: list[tuple[str, float]], reference: list[tuple[str, float]],
                     limit: int) -> None:
    """`ours` is the top `limit` of `reference`: as many results, each with its reference
    score, the same score at every rank, and the same page at every rank that is not a tie."""
    want = reference[:limit]
    assert len(ours) == len(want), (len(ours), len(want))
    assert len({p for p, _ in ours}) == len(ours)
    score_of = dict(reference)
    for i, ((page, score), (ref_page, ref_score)) in enumerate(zip(ours, want, strict=True)):
        assert page in score_of and close(score_of[page], score), (i, page)
        assert close(score, ref_score), (i, page, score, ref_page, ref_score)
        tied = [s for j, (_, s) in enumerate(reference[: limit + 1]) if j != i
                and close(s, ref_score)]
        if not tied:
            assert page == ref_page, (i, page, ref_page)
