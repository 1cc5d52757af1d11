"""The plain-word fast path ranks exactly as whoosh does, and common words follow their rule."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from pcp_cli.index import IndexFilter, SearchIndex
from pcp_cli.index import _whoosh as W

from .conftest import doc, ids

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


def whoosh_ranking(ix: SearchIndex, query: str, flt: IndexFilter, limit: int) -> list:  # type: ignore[type-arg]
    searcher = ix._get_searcher()
    results = searcher.search(ix._parse(query), limit=limit, filter=ix._allowed(searcher, flt))
    return [(hit["hit"][0], hit.score) for hit in results]


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
        ours = [(h.page_id, h.score_raw) for h in big.search(query, filter=flt, limit=limit)]
        assert ours == whoosh_ranking(big, query, flt, limit)


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
        ours = [(h.page_id, h.score_raw) for h in big.search(query, filter=flt, limit=limit)]
        assert ours == whoosh_ranking(big, query, flt, limit)


def test_a_common_word_does_not_bring_candidates_next_to_a_rarer_one(big: SearchIndex) -> None:
    hits = big.search("common rare", limit=50)
    assert hits
    rare = {h.page_id for h in big.search("rare", limit=50)}
    assert {h.page_id for h in hits} == rare
    # the common word still counts: a rare page that also has it ranks above one without
    scores = {h.page_id: h.score_raw for h in hits}
    only = {h.page_id: h.score_raw for h in big.search("rare", limit=50)}
    assert all(scores[p] >= only[p] for p in scores)
    assert any(scores[p] > only[p] for p in scores)


def test_a_repeated_common_word_does_not_hide_the_rarer_one(big: SearchIndex) -> None:
    rare = {h.page_id for h in big.search("rare", limit=50)}
    assert {h.page_id for h in big.search("common rare common", limit=50)} == rare


def test_common_words_alone_still_find_pages(big: SearchIndex) -> None:
    exact = big.search("common", limit=10)
    assert len(exact) == 10
    assert [(h.page_id, h.score_raw) for h in exact] == whoosh_ranking(
        big, "common", IndexFilter(), 10
    )


def test_common_words_beyond_the_scan_budget_sample_windows(
    big: SearchIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(W, "COMMON_SCAN", 50)
    monkeypatch.setattr(W, "WINDOW", 64)
    flt = IndexFilter(namespaces=("work",))
    hits = big.search("common", filter=flt, limit=10)
    assert len(hits) == 10
    # only documents in the sampled windows, scored as whoosh scores them
    full = dict(whoosh_ranking(big, "common", flt, 1000))
    for h in hits:
        assert h.namespace == "work" and h.lifecycle_status == "active"
        assert h.score_raw == full[h.page_id]


def test_out_of_scope_pages_are_never_candidates_on_any_path(
    big: SearchIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    flt = IndexFilter(namespaces=("personal",))
    for budget in (30_000, 10):
        monkeypatch.setattr(W, "COMMON_SCAN", budget)
        monkeypatch.setattr(W, "WINDOW", 32)
        for query in ("common", "common rare", "rare", "apple common", "fruit common"):
            for h in big.search(query, filter=flt, limit=400):
                assert h.namespace == "personal", (query, h.page_id)
                assert h.lifecycle_status == "active"


def test_deleted_and_replaced_pages(big: SearchIndex) -> None:
    assert "p004" not in ids(big.search("apple banana common", limit=400))
    top = big.search("rare lemon", limit=400)
    assert ids(top).count("p005") == 1


def test_the_index_says_when_a_ranking_was_not_exact(
    big: SearchIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    big.search("rare", limit=10)
    assert big.last_ranking == "exact"
    big.search("common rare", limit=10)
    assert big.last_ranking == W.RERANKED
    big.search("common", limit=10)
    assert big.last_ranking == "exact"  # within the scan budget: every posting scored
    monkeypatch.setattr(W, "COMMON_SCAN", 50)
    big.search("common", limit=10)
    assert big.last_ranking == W.SAMPLED
