"""Quoted phrases are ranked by pcp's own phrase path (`_rank_phrases`), and it finds exactly
what whoosh's own phrase matcher finds, with whoosh's scores, in whoosh's order.

The property tests build small random indexes (two segments: a replaced and a deleted page)
from a handful of words repeated often, so that pages hold a phrase's words both side by side
and apart, words repeated in a row ("very very"), and CJK runs that become overlapping
character pairs ("海潮池" is the phrase 海潮 潮池). They compare with whoosh's PhraseQuery run
through whoosh's searcher and BM25F scorer with nothing pruned.
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
FILTERS = [IndexFilter(), ALL, IndexFilter(namespaces=("work",))]
# Few words, so that phrases of them occur by chance; CJK runs share characters.
WORDS = ["very", "tide", "pool", "reef", "kelp", "海潮", "潮池", "海潮池", "池海"]
WEIGHTS = [6, 5, 4, 3, 1, 2, 2, 1, 1]


def _phrase_spy(mp: pytest.MonkeyPatch) -> list[int]:
    """Counts the calls of the phrase path (so a test knows it ran, not whoosh's matcher)."""
    calls: list[int] = []
    original = W._rank_phrases

    def spy(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        calls.append(1)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    mp.setattr(W, "_rank_phrases", spy)
    return calls


@st.composite
def stores(draw: st.DrawFn) -> list:  # type: ignore[type-arg]
    n = draw(st.integers(min_value=3, max_value=30))
    rnd = draw(st.randoms(use_true_random=False))
    pages = []
    for i in range(n):
        words = rnd.choices(WORDS, weights=WEIGHTS, k=rnd.randint(1, 14))
        if rnd.random() < 0.3:  # a run of one word: "very very very"
            words[rnd.randrange(len(words)):0] = ["very"] * rnd.randint(2, 4)
        title = " ".join(rnd.choices(WORDS[:5], k=rnd.randint(1, 3)))
        pages.append(doc(f"p{i:03d}", " ".join(words), title=title,
                         type="note" if i % 4 else "keystone",
                         namespace="work" if i % 3 else "personal",
                         lifecycle_status="superseded" if i % 7 == 6 else "active"))
    return pages


def _build(directory: Path, pages: list) -> SearchIndex:  # type: ignore[type-arg]
    ix = SearchIndex.open_or_create(directory)
    ix.rebuild(pages)
    first = pages[0]  # a second segment: one page replaced, one deleted
    ix.update([doc(first.page_id, "very very tide pool 海潮池 kelp", namespace=first.namespace)])
    ix.delete([pages[1].path])
    return ix


phrases = st.lists(st.sampled_from(WORDS[:5]), min_size=2, max_size=3).map(" ".join) | \
    st.sampled_from(["very very", "very very very", "海潮池", "海潮池海", "潮池 tide",
                     "tide 海潮"])


def _check(ix: SearchIndex, query: str, flt: IndexFilter, limit: int) -> None:
    reference = whoosh_reference(ix, query, flt)
    everything = ids(ix.search(query, filter=flt, limit=1000))
    assert sorted(everything) == sorted(p for p, _ in reference), query  # the same pages
    top = [(h.page_id, h.score_raw) for h in ix.search(query, filter=flt, limit=limit)]
    assert_exact_top(top, reference, limit)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pages=stores(), phrase=phrases, other=st.sampled_from(WORDS),
       limit=st.integers(min_value=1, max_value=20), flt=st.sampled_from(FILTERS))
def test_phrases_find_and_rank_what_whoosh_phrase_query_does(
    pages: list, phrase: str, other: str, limit: int, flt: IndexFilter  # type: ignore[type-arg]
) -> None:
    queries = [
        f'"{phrase}"',
        f'"{phrase}" {other}',  # a phrase OR a word
        f'"{phrase}" "{other} {phrase.split()[0]}"',  # two phrases
        f'"{phrase}" NOT {other}',
        f'type:note "{phrase}"',  # a field term and a phrase
        f'type:note "{phrase}" NOT {other}',
        f'"{phrase}" AND {other}',  # the AND path, a phrase in a group
        f'title:"{phrase}"',
    ]
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        calls = _phrase_spy(mp)
        ix = _build(Path(tmp) / "ix", pages)
        try:
            for query in queries:
                _check(ix, query, flt, limit)
        finally:
            ix.close()
        assert calls  # the phrase path ran


def test_a_phrase_query_takes_the_phrase_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                              ) -> None:
    # 60 pages hold "tide" and "pool", 20 of them side by side; whoosh's span matcher
    # compares positions on all 60, the phrase path only until the top is certain.
    docs = []
    for i in range(60):
        body = "tide pool reef" if i % 3 == 0 else "pool reef tide kelp" + " kelp" * (i % 5)
        docs.append(doc(f"p{i:02d}", body))
    calls = _phrase_spy(monkeypatch)
    with SearchIndex.open_or_create(tmp_path / "ix") as ix:
        ix.rebuild(docs)
        for query in ('"tide pool"', '"tide pool" NOT kelp', 'type:note "tide pool"',
                      '"tide pool" reef'):
            for limit in (1, 5, 25):
                top = [(h.page_id, h.score_raw) for h in ix.search(query, filter=ALL,
                                                                    limit=limit)]
                assert_exact_top(top, whoosh_reference(ix, query, ALL), limit)
        assert len(ids(ix.search('"tide pool"', filter=ALL, limit=100))) == 20
        assert len(ids(ix.search('"pool tide"', filter=ALL, limit=100))) == 0
    assert len(calls) == 14


def test_repeated_words_and_cjk_phrases(tmp_path: Path) -> None:
    docs = [doc("twice", "it was very very good"), doc("once", "very good, very"),
            doc("thrice", "very very very"), doc("zh", "物竞天择，即适者生存。"),
            doc("zh2", "适者 即适")]
    with SearchIndex.open_or_create(tmp_path / "ix") as ix:
        ix.rebuild(docs)
        assert sorted(ids(ix.search('"very very"', filter=ALL))) == ["thrice", "twice"]
        assert ids(ix.search('"very very very"', filter=ALL)) == ["thrice"]
        assert ids(ix.search("即适者", filter=ALL)) == ["zh"]  # 即适 适者, side by side
        for query in ('"very very"', '"very very very"', "即适者", '"very good"'):
            assert_exact_top([(h.page_id, h.score_raw) for h in ix.search(query, filter=ALL)],
                             whoosh_reference(ix, query, ALL), 10)


@pytest.mark.usefixtures("engine")
def test_a_phrase_at_either_end_of_and_and_a_title_phrase(tmp_path: Path) -> None:
    # The query check read `"tide pool" AND kelp` as ending in AND (it skipped the phrase) and
    # refused `title:"tide pool"` as a field without a value.
    docs = [doc("both", "tide pool kelp", title="reef"), doc("apart", "pool tide kelp"),
            doc("titled", "notes", title="Tide pool notes"), doc("none", "tide pool")]
    with SearchIndex.open_or_create(tmp_path / "ix") as ix:
        ix.rebuild(docs)
        assert ids(ix.search('"tide pool" AND kelp', filter=ALL)) == ["both"]
        assert ids(ix.search('kelp AND "tide pool"', filter=ALL)) == ["both"]
        assert ids(ix.search('title:"tide pool"', filter=ALL)) == ["titled"]
        assert ids(ix.search('title:"pool tide"', filter=ALL)) == []
