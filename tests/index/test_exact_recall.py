"""Search never loses a match: an OR of words finds every page any of them finds, and the top N
is the true top N of whoosh's BM25F over every matching page (issue #10).

Property tests build small random indexes (two segments, a replaced and a deleted page) whose
words range from rare to "very common" (on more than half of the pages, where the ranking
takes its one shortcut), and compare with whoosh's own scorer run with nothing pruned.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcp_cli.index import IndexFilter, SearchIndex
from pcp_cli.index import _whoosh as W

from .conftest import assert_exact_top, doc, ids, whoosh_reference


@pytest.fixture(autouse=True)
def _whoosh(monkeypatch: pytest.MonkeyPatch) -> None:
    """whoosh's own ranking internals: its index, though tantivy is the default engine (a test
    that runs on both engines asks for the `engine` fixture, which overrides this)."""
    monkeypatch.setenv("PCP_INDEX_ENGINE", "whoosh")

ALL = IndexFilter.everything()
# Word i is on a page with probability about PRESENCE[i]: from nearly every page to a few.
WORDS = ["ocean", "kelp", "reef", "tide", "shell", "coral", "wave", "sand"]
PRESENCE = [0.95, 0.7, 0.55, 0.4, 0.2, 0.1, 0.05, 0.02]

FILTERS = [IndexFilter(), ALL, IndexFilter(namespaces=("work",))]


@pytest.mark.usefixtures("engine")  # sets and the first page: the same on both engines
def test_the_issue_regression_ocean_or_kelp(tmp_path: Path) -> None:
    # 12 pages say "ocean" (most of the store: a "very common" word), one says "kelp".
    docs = [doc(f"o{i:02d}", f"the ocean is deep and wide, page {i}") for i in range(12)]
    docs += [doc("kelp", "kelp forests grow tall"), doc("misc", "nothing to see")]
    with SearchIndex.open_or_create(tmp_path / "ix") as ix:
        ix.rebuild(docs)
        ocean = ids(ix.search("ocean", limit=25))
        assert len(ocean) == 12
        for query in ("ocean OR kelp", "ocean kelp", "kelp ocean", "kelp OR ocean"):
            found = ids(ix.search(query, limit=25))
            assert len(found) == 13, query
            assert set(found) == set(ocean) | {"kelp"}, query
            assert found[0] == "kelp"  # the rare word weighs more


@pytest.mark.usefixtures("engine")
@pytest.mark.parametrize("query", ["tide NOT shell", "tide AND NOT shell",
                                   '"tide pool" NOT shell', "type:note tide NOT shell"])
def test_not_never_serves_an_excluded_page(tmp_path: Path, query: str) -> None:
    # whoosh's AndNotMatcher served the first "tide" page although it says "shell", because
    # an earlier page said "shell" (it only compared the two sides' first pages when equal)
    docs = [doc("a", "shell only"), doc("b", "tide pool shell"), doc("c", "tide pool here")]
    with SearchIndex.open_or_create(tmp_path / "ix") as ix:
        ix.rebuild(docs)
        assert ids(ix.search(query, filter=ALL)) == ["c"]


def _pages(draw: st.DrawFn) -> list:  # type: ignore[type-arg]
    n = draw(st.integers(min_value=3, max_value=40))
    pages = []
    for i in range(n):
        words = []
        for word, p in zip(WORDS, PRESENCE, strict=True):
            if draw(st.floats(min_value=0, max_value=1)) < p:
                words += [word] * draw(st.integers(min_value=1, max_value=3))
        filler = draw(st.integers(min_value=0, max_value=12))
        words += ["filler"] * filler  # varies the page length, so BM25 length norms differ
        draw(st.randoms(use_true_random=False)).shuffle(words)
        pages.append(doc(f"p{i:03d}", " ".join(words) or "empty",
                         namespace="work" if i % 3 else "personal",
                         lifecycle_status="superseded" if i % 7 == 6 else "active"))
    return pages


@st.composite
def stores(draw: st.DrawFn) -> list:  # type: ignore[type-arg]
    return _pages(draw)


def _build(directory: Path, pages: list) -> SearchIndex:  # type: ignore[type-arg]
    ix = SearchIndex.open_or_create(directory)
    ix.rebuild(pages)
    # a second segment: one page replaced (new words), one deleted
    first = pages[0]
    ix.update([doc(first.page_id, "kelp ocean kelp coral", namespace=first.namespace)])
    if len(pages) > 3:
        ix.delete([pages[1].path])
    return ix


word_sets = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pages=stores(), words=word_sets, limit=st.integers(min_value=1, max_value=30),
       flt=st.sampled_from(FILTERS), boosted=st.sampled_from([W.BOOSTED, 1, 2]))
def test_an_or_query_finds_the_union_of_its_words_in_score_order(
    pages: list, words: list[str], limit: int, flt: IndexFilter, boosted: int  # type: ignore[type-arg]
) -> None:
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        # a smaller first pass makes the shortcut's bound (a left-out rarer page) matter
        mp.setattr(W, "BOOSTED", boosted)
        ix = _build(Path(tmp) / "ix", pages)
        try:
            union: set[str] = set()
            for word in set(words):
                alone = ids(ix.search(word, filter=flt, limit=1000))
                assert len(alone) == len(whoosh_reference(ix, word, flt))
                union |= set(alone)
            for query in (" ".join(words), " OR ".join(words)):
                everything = ids(ix.search(query, filter=flt, limit=1000))
                assert set(everything) == union, query  # never loses a match
                top = [(h.page_id, h.score_raw) for h in ix.search(query, filter=flt,
                                                                    limit=limit)]
                assert len(top) == min(limit, len(union))
                assert_exact_top(top, whoosh_reference(ix, query, flt), limit)
        finally:
            ix.close()


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pages=stores(), a=word_sets, b=word_sets, limit=st.integers(min_value=1, max_value=30),
       flt=st.sampled_from(FILTERS))
def test_and_and_mixed_queries_rank_as_whoosh_scores_them(
    pages: list, a: list[str], b: list[str], limit: int, flt: IndexFilter  # type: ignore[type-arg]
) -> None:
    queries = [
        f"({' OR '.join(a)}) AND ({' OR '.join(b)})",  # the AND path
        f"{a[0]} AND {b[0]}",
        f"{' '.join(a)} NOT {b[0]}" if b[0] not in a else f"{a[0]} type:note",
        f"type:note {' '.join(b)}",  # whoosh's own matchers, nothing pruned
        f'"{a[0]} {b[0]}"',
    ]
    with tempfile.TemporaryDirectory() as tmp:
        ix = _build(Path(tmp) / "ix", pages)
        try:
            for query in queries:
                top = [(h.page_id, h.score_raw) for h in ix.search(query, filter=flt,
                                                                    limit=limit)]
                assert_exact_top(top, whoosh_reference(ix, query, flt), limit)
        finally:
            ix.close()


def test_the_shortcut_is_taken_and_exact_on_a_larger_store(tmp_path: Path) -> None:
    # 400 pages, "common" on nearly all, "rare" on a few: the rarer word's pages decide the
    # top 10 and the common word's postings are not all read, yet nothing differs.
    docs = []
    for i in range(400):
        words = ["common"] * (1 + i % 4) + ["filler"] * (i % 9)
        if i % 23 == 0:
            words += ["rare"] * (1 + i % 3)
        docs.append(doc(f"p{i:03d}", " ".join(words)))
    calls: list[bool] = []
    with SearchIndex.open_or_create(tmp_path / "ix") as ix, pytest.MonkeyPatch.context() as mp:
        ix.rebuild(docs)
        original = W._rank_rarer_first

        def spy(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
            out = original(*args, **kwargs)  # type: ignore[arg-type]
            calls.append(out is not None)
            return out

        mp.setattr(W, "_rank_rarer_first", spy)
        for limit in (1, 10, 17):
            top = [(h.page_id, h.score_raw) for h in ix.search("common rare", limit=limit)]
            assert_exact_top(top, whoosh_reference(ix, "common rare", ALL), limit)
        assert calls == [True, True, True]  # proven exact without reading "common" in full
        top = [(h.page_id, h.score_raw) for h in ix.search("common rare", limit=25)]
        assert_exact_top(top, whoosh_reference(ix, "common rare", ALL), 25)
        # only 18 pages say "rare", fewer than 25: the shortcut is not even tried, and the
        # answer needs every posting
        assert calls == [True, True, True]
