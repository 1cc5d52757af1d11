"""Analysis, query syntax, filters and scores."""

from __future__ import annotations

import pytest

from pcp_cli.errors import ExitStatus, UsageError
from pcp_cli.index import IndexFilter, SearchIndex

from .conftest import doc, ids

pytestmark = pytest.mark.usefixtures("engine")

ALL = IndexFilter.everything()


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("running", "run"),  # stemming: running ~ runs
        ("cooked", "cook"),
        ("生存", "zh"),  # inside 即适者生存
        ("进化", "zh"),
        ("しりとり", "ja"),  # inside a Japanese sentence
        ("서울", "ko"),  # inside 서울에서
        ("프로그래머", "ko"),
        ("进化论", "zh"),  # title
    ],
)
def test_words_are_found_in_english_and_cjk(ix: SearchIndex, query: str, expected: str) -> None:
    assert ids(ix.search(query, filter=ALL)) == [expected]


def test_cjk_query_is_a_phrase_of_bigrams(ix: SearchIndex) -> None:
    # 生适 is made of characters that occur, but not next to each other.
    assert ix.search("生适", filter=ALL) == []
    assert ix.search("存生", filter=ALL) == []


def test_phrase_needs_the_words_in_order(ix: SearchIndex) -> None:
    assert ids(ix.search('"quick brown fox"', filter=ALL)) == ["phr"]
    assert set(ids(ix.search("quick brown fox", filter=ALL))) == {"phr", "phr2"}


def test_field_terms(ix: SearchIndex) -> None:
    assert ids(ix.search("type:keystone", filter=ALL)) == ["ks"]
    assert ids(ix.search("tag:health", filter=ALL)) == ["run"]
    assert ids(ix.search("tags:HEALTH", filter=ALL)) == ["run"]
    assert ids(ix.search("origin:user_stated", filter=ALL)) == ["ks"]
    assert ids(ix.search("title:pasta", filter=ALL)) == ["cook"]
    assert ids(ix.search("id:zh", filter=ALL)) == ["zh"]


def test_namespace_with_colons(index_dir) -> None:  # type: ignore[no-untyped-def]
    index = SearchIndex.open_or_create(index_dir)
    index.rebuild([doc("a", "alpha", namespace="work:acme"), doc("b", "alpha", namespace="work")])
    assert ids(index.search("alpha namespace:work:acme", filter=ALL)) == ["a"]
    assert ids(index.search("ns:work AND alpha", filter=ALL)) == ["b"]


def test_boolean_operators(ix: SearchIndex) -> None:
    assert set(ids(ix.search("pasta OR morning", filter=ALL))) == {"cook", "run"}
    assert ids(ix.search("fox AND NOT lazy", filter=ALL)) == []
    assert ids(ix.search("fox AND jumps", filter=ALL)) == ["phr"]
    assert ids(ix.search("fox NOT jumps", filter=ALL)) == ["phr2"]
    assert ids(ix.search("(pasta OR garlic) AND NOT fox", filter=ALL)) == ["cook"]
    assert ids(ix.search("concise type:keystone", filter=ALL)) == ["ks"]
    assert ids(ix.search("pasta type:keystone", filter=ALL)) == []
    assert set(ids(ix.search("pasta OR type:keystone", filter=ALL))) == {"cook", "ks"}
    # Only NOT clauses: nothing to look for but what they exclude, so the words are searched
    # (a question is never refused: "NOT sure about fox" is text)
    assert set(ids(ix.search("NOT fox", filter=ALL))) == {"phr", "phr2"}


def test_plain_words_are_or_ranked_by_how_many_match(ix: SearchIndex) -> None:
    hits = ids(ix.search("fox jumps pasta", filter=ALL))
    assert hits[0] == "phr"  # two of the three words
    assert set(hits) == {"phr", "phr2", "cook"}


@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
def test_an_empty_query_is_a_usage_error(ix: SearchIndex, query: str) -> None:
    with pytest.raises(UsageError) as err:
        ix.search(query, filter=ALL)
    assert err.value.exit_status == ExitStatus.USAGE
    assert err.value.hint


def test_stop_words_only_is_empty_not_an_error(ix: SearchIndex) -> None:
    assert ix.search("the", filter=ALL) == []


def test_scope_filter_excludes_even_the_best_match(index_dir) -> None:  # type: ignore[no-untyped-def]
    index = SearchIndex.open_or_create(index_dir)
    index.rebuild(
        [
            doc("secret", "salary salary salary salary", namespace="work:hr", title="salary"),
            doc("mine", "a note that mentions salary once", namespace="personal"),
            doc("sub", "salary", namespace="personal:money"),
        ]
    )
    everything = ids(index.search("salary", filter=ALL))
    assert everything[0] == "secret"
    scoped = IndexFilter(namespaces=("personal",))
    assert ids(index.search("salary", filter=scoped)) == ["mine"]
    subtree = IndexFilter(namespaces=("personal",), namespace_subtrees=True)
    assert set(ids(index.search("salary", filter=subtree))) == {"mine", "sub"}
    assert index.search("salary", filter=IndexFilter(namespaces=())) == []
    # The out-of-scope page is not a candidate at all: a limit of 1 still finds an allowed one.
    assert ids(index.search("salary", filter=scoped, limit=1)) == ["mine"]


def test_default_filter_is_current_affirmed_not_sensitive(index_dir) -> None:  # type: ignore[no-untyped-def]
    index = SearchIndex.open_or_create(index_dir)
    index.rebuild(
        [
            doc("ok", "budget"),
            doc("old", "budget", lifecycle_status="superseded"),
            doc("gone", "budget", lifecycle_status="tombstoned"),
            doc("hi", "budget", sensitivity="high"),
            doc("med", "budget", sensitivity="medium"),
            doc("prop", "budget", review_status="proposed", type="keystone"),
        ]
    )
    assert set(ids(index.search("budget"))) == {"ok", "med"}
    with_sensitive = IndexFilter(sensitivities=None)
    assert set(ids(index.search("budget", filter=with_sensitive))) == {"ok", "med", "hi"}
    history = IndexFilter(lifecycle_statuses=("active", "superseded"))
    assert set(ids(index.search("budget", filter=history))) == {"ok", "med", "old"}
    review = IndexFilter(review_statuses=None)
    assert set(ids(index.search("budget", filter=review))) == {"ok", "med", "prop"}


def test_type_filters(ix: SearchIndex) -> None:
    only = IndexFilter.everything().__class__(
        types=("keystone",), lifecycle_statuses=None, sensitivities=None, review_statuses=None
    )
    assert ids(ix.search("concise OR pasta", filter=only)) == ["ks"]
    without = IndexFilter(exclude_types=("keystone",), review_statuses=None)
    assert ids(ix.search("concise OR pasta", filter=without)) == ["cook"]


def test_date_filter_and_sort(index_dir) -> None:  # type: ignore[no-untyped-def]
    index = SearchIndex.open_or_create(index_dir)
    index.rebuild(
        [
            doc("a", "trip", timestamp="2024-03-01T10:00:00Z"),
            doc("b", "trip trip", timestamp="2025-06-01T10:00:00Z"),
            doc("c", "trip", timestamp="2026-01-01T10:00:00Z"),
        ]
    )
    f = IndexFilter(since="2025", until="2025-12-31")
    assert ids(index.search("trip", filter=f)) == ["b"]
    assert set(ids(index.search("trip", filter=IndexFilter(until="2025-06-01")))) == {"a", "b"}
    assert ids(index.search("trip", sort="newest")) == ["c", "b", "a"]
    assert ids(index.search("trip", sort="oldest")) == ["a", "b", "c"]


def test_scores_are_normalized_and_ordered(ix: SearchIndex) -> None:
    hits = ix.search("fox lazy quick brown dog jumps pasta", filter=ALL, limit=10)
    assert hits
    for h in hits:
        assert 0.0 <= h.score <= 1.0
        assert h.score_raw >= 0
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_hit_reports_fields_and_metadata(ix: SearchIndex) -> None:
    (hit,) = ix.search("style", filter=ALL)
    assert hit.page_id == "ks" and hit.type == "keystone" and hit.origin == "user_stated"
    assert hit.matched_fields == ("tag", "title")
    assert hit.revision_id == "rev_ks_1" and hit.path.endswith("ks.md")
    (hit,) = ix.search("concise", filter=ALL)
    assert hit.matched_fields == ("body",)
    (hit,) = ix.search("concise answer", filter=ALL)
    assert hit.matched_fields == ("body", "title")


def test_limit(ix: SearchIndex) -> None:
    assert len(ix.search("fox OR pasta OR morning", filter=ALL, limit=2)) == 2
    with pytest.raises(UsageError):
        ix.search("fox", limit=0)


def test_filter_with_lists_still_filters(ix: SearchIndex) -> None:
    f = IndexFilter(types=["keystone"], lifecycle_statuses=None)  # type: ignore[arg-type]
    assert ids(ix.search("concise OR pasta", filter=f)) == ["ks"]


def test_filter_cache_follows_updates(ix: SearchIndex) -> None:
    keystones = IndexFilter(types=("keystone",))
    assert ids(ix.search("concise OR pasta", filter=keystones)) == ["ks"]
    ix.update([doc("cook", "pasta again", type="keystone")])
    assert set(ids(ix.search("concise OR pasta", filter=keystones))) == {"ks", "cook"}
