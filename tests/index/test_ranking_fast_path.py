"""The plain-word and AND paths rank exactly as whoosh's own BM25F does, common words too."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from pcp_cli.index import IndexFilter, SearchIndex
from pcp_cli.index import _whoosh as W

from .conftest import assert_exact_top, doc, ids, whoosh_reference


@pytest.fixture(autouse=True)
def _whoosh(monkeypatch: pytest.MonkeyPatch) -> None:
    """whoosh's own ranking internals: its index, though tantivy is the default engine (a test
    that runs on both engines asks for the `engine` fixture, which overrides this)."""
    monkeypatch.setenv("PCP_INDEX_ENGINE", "whoosh")

# 40 words, a few per page: each is in well under half of the pages (not "common").
WORDS = [f"{a}{b}" for a in ("apple", "lemon", "olive", "peach") for b in "abcdefghij"] + [
    "apple",
    "banana",
    "lemon",
    "olive",
    "peach",
    "plum",
    "berry",
]


def corpus(n: int = 300, seed: int = 3) -> list:  # type: ignore[type-arg]
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        words = rng.choices(WORDS, k=rng.randint(1, 6)) * rng.randint(1, 3)
        # "common" is in every page but a few; "rare" in a handful, most of them in scope.
        if i % 50:
            words += ["common"] * rng.randint(1, 4)
        if i % 37 == 0:
            words.append("rare")
        docs.append(
            doc(
                f"p{i:03d}",
                " ".join(words),
                namespace="work" if i % 3 else "personal",
                tags=("fruit",) if i % 7 == 0 else (),
                lifecycle_status="superseded" if i % 11 == 0 else "active",
            )
        )
    return docs


@pytest.fixture
def big(tmp_path: Path):  # type: ignore[no-untyped-def]
    ix = SearchIndex.open_or_create(tmp_path / "ix")
    ix.rebuild(corpus())
    # a second segment with a replaced and a deleted page: deletions must be honoured
    ix.update([doc("p005", "apple apple rare lemon", namespace="work")])
    ix.delete(["pages/work/p004.md"])
    yield ix
    ix.close()


def ranked(ix: SearchIndex, query: str, flt: IndexFilter, limit: int) -> list:  # type: ignore[type-arg]
    return [(h.page_id, h.score_raw) for h in ix.search(query, filter=flt, limit=limit)]


@pytest.mark.parametrize(
    "query",
    ["apple", "apple banana", "olive peach plum", "rare", "fruit", "lemon rare berry", "applec"],
)
@pytest.mark.parametrize(
    "flt", [IndexFilter(), IndexFilter(namespaces=("work",)), IndexFilter.everything()]
)
def test_plain_words_rank_exactly_as_whoosh(big: SearchIndex, query: str, flt: IndexFilter) -> None:
    assert W._plain_terms(big._parse(query)) is not None
    for limit in (1, 10, 400):
        assert_exact_top(ranked(big, query, flt, limit), whoosh_reference(big, query, flt), limit)


@pytest.mark.parametrize(
    "query",
    ["apple AND banana", "(apple OR lemon) AND olive", "rare AND fruit", "plum AND nothing"],
)
@pytest.mark.parametrize("flt", [IndexFilter(), IndexFilter(namespaces=("work",))])
def test_and_of_words_ranks_exactly_as_whoosh(
    big: SearchIndex, query: str, flt: IndexFilter
) -> None:
    assert W._plain_groups(big._parse(query)) is not None
    for limit in (1, 10, 400):
        assert_exact_top(ranked(big, query, flt, limit), whoosh_reference(big, query, flt), limit)


def test_a_common_word_beside_a_rarer_one_loses_no_page(big: SearchIndex) -> None:
    # was: the common word only re-ranked the rarer word's pages, and the rest were lost
    rare = {h.page_id for h in big.search("rare", limit=400)}
    common = {h.page_id for h in big.search("common", limit=400)}
    for query in ("common rare", "rare common", "common rare common", "common OR rare"):
        assert {h.page_id for h in big.search(query, limit=400)} == rare | common
        for limit in (1, 5, 10, 50):
            reference = whoosh_reference(big, query, IndexFilter())
            assert_exact_top(ranked(big, query, IndexFilter(), limit), reference, limit)


def test_common_words_alone_rank_exactly(big: SearchIndex) -> None:
    for flt in (IndexFilter(), IndexFilter(namespaces=("work",))):
        for limit in (1, 10, 400):
            reference = whoosh_reference(big, "common", flt)
            assert_exact_top(ranked(big, "common", flt, limit), reference, limit)


def test_out_of_scope_pages_are_never_candidates_on_any_path(
    big: SearchIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    flt = IndexFilter(namespaces=("personal",))
    for boosted in (W.BOOSTED, 1):
        monkeypatch.setattr(W, "BOOSTED", boosted)
        for query in ("common", "common rare", "rare", "apple common", "fruit common"):
            for h in big.search(query, filter=flt, limit=400):
                assert h.namespace == "personal", (query, h.page_id)
                assert h.lifecycle_status == "active"


def test_deleted_and_replaced_pages(big: SearchIndex) -> None:
    assert "p004" not in ids(big.search("apple banana common", limit=400))
    top = big.search("rare lemon", limit=400)
    assert ids(top).count("p005") == 1


@pytest.mark.parametrize("query", ["tag:fruit apple", "apple tag:fruit common", "tag:fruit",
                                   "tag:fruit OR rare", "type:note tag:fruit lemon",
                                   'tag:fruit "apple apple"'])
@pytest.mark.parametrize("flt", [IndexFilter(), IndexFilter(namespaces=("work",))])
def test_a_tag_beside_words_ranks_exactly_on_the_fast_path(
    big: SearchIndex, query: str, flt: IndexFilter, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `tag:x` among words narrows them and adds nothing to the score (an unscored leaf that
    # every result must hold; with OR written out, its pages match with score 0). Such a query
    # used to go through whoosh's own matchers (twice the time of the words alone).
    def no_whoosh(*args: object, **kwargs: object) -> None:
        raise AssertionError("whoosh's matchers were used")

    monkeypatch.setattr(W, "_whoosh_top", no_whoosh)
    for limit in (1, 10, 400):
        assert_exact_top(ranked(big, query, flt, limit), whoosh_reference(big, query, flt), limit)
    tagged = {h.page_id for h in big.search("tag:fruit", filter=flt, limit=400)}
    found = {h.page_id for h in big.search(query, filter=flt, limit=400)}
    assert (tagged <= found) if " OR " in query else (found <= tagged)


@pytest.mark.parametrize("flt", [
    IndexFilter(),  # lifecycle:active AND review:affirmed AND sensitivity: most pages
    IndexFilter(namespaces=("work",)),
    IndexFilter(lifecycle_statuses=("superseded",)),  # few pages: read from its own postings
    IndexFilter(lifecycle_statuses=("active", "superseded"), sensitivities=("low",)),
    IndexFilter(types=("note",), since="2026-01-01"),  # a range: whoosh's own matchers
])
def test_a_filter_read_from_its_other_side_admits_the_same_pages(
        big: SearchIndex, flt: IndexFilter) -> None:
    """A filter admitting most pages is read as every live page less the few others
    (`_outside`), across both segments, the deleted and the replaced page; the same set."""
    from pcp_cli.index.query import filter_query

    searcher = big._get_searcher()
    constraint, _ = filter_query(flt)
    got = W._docset(searcher, constraint)
    if got is not None:
        assert got == set(searcher.docs_for_query(constraint))
    if flt == IndexFilter():
        assert W._outside(searcher, W.Q.Term("lifecycle", "active")) is not None


def test_a_page_without_a_value_keeps_a_filter_on_its_admitted_side(tmp_path: Path) -> None:
    """The other side is read only where every page has a value: an empty one has no term,
    and must not be admitted as if it held the value asked for."""
    ix = SearchIndex.open_or_create(tmp_path / "ix")
    ix.rebuild([*corpus(60), doc("blank", "apple", lifecycle_status=None)])
    try:
        searcher = ix._get_searcher()
        q = W.Q.Term("lifecycle", "active")
        assert W._outside(searcher, q) is None
        assert W._docset(searcher, q) == set(searcher.docs_for_query(q))
        assert "blank" not in ids(ix.search("apple", limit=100))
    finally:
        ix.close()
