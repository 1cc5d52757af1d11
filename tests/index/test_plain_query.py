"""A query of plain words skips whoosh's parser on the tantivy engine (`plain_query_terms`):
the terms, the tantivy query and the hits are exactly what the parser's path gives."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcp_cli.index import IndexFilter, SearchIndex
from pcp_cli.index.text import plain_query_terms

from .conftest import CORPUS

tantivy = pytest.importorskip("tantivy")
from pcp_cli.index import _tantivy  # noqa: E402

WORDS = ["garden", "Garden", "GARDEN", "gardens", "running", "runs", "Runs", "the", "The", "a",
         "x", "X", "2024", "rev2", "fox", "quick", "AND", "OR", "NOT", "ANDNOT", "ANDMAYBE",
         "REQUIRE", "TO", "and", "or", "not", "to", "Or", "Not", "require", "café", "high-tide",
         "abc_def", "don't", "id:x", "fox*", '"', "(", ")", "生存", "a1", "of", "be"]
SPACES = [" ", "  ", "\t", "\n", " \r\n "]


def parsed_terms(query: str) -> list[tuple[str, str]] | None:
    """The terms of the parser's tree when it is one term or an OR of terms, else None."""
    from whoosh import query as Q

    q = _tantivy._parse(query)
    subs = [q] if type(q) is Q.Term else list(q.subqueries) if type(q) is Q.Or else None
    if subs is None or any(type(s) is not Q.Term or s.boost != 1.0 for s in subs):
        return None
    return [(s.fieldname, s.text) for s in subs]


@settings(max_examples=400, deadline=None)
@given(words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=6),
       spaces=st.lists(st.sampled_from(SPACES), min_size=7, max_size=7))
def test_the_terms_of_a_plain_query_are_the_parsers(words: list[str], spaces: list[str]) -> None:
    query = spaces[0] + "".join(w + s for w, s in zip(words, spaces[1:], strict=False))
    plain = plain_query_terms(query)
    if plain is None:
        return  # the parser's path, as before
    assert plain == parsed_terms(query)


@pytest.mark.parametrize("query", ["garden", "fox", "Quick fox", "the fox the", "a b c",
                                   "running dogs Runs", "2024 rev2", "to be or not", "x"])
def test_plain_queries_skip_the_parser(query: str) -> None:
    assert plain_query_terms(query) == parsed_terms(query)
    assert plain_query_terms(query)


@pytest.mark.parametrize("query", ["", " ", "fox AND dog", "fox OR dog", "NOT fox", "fox*",
                                   "id:x", '"quick fox"', "(fox)", "high-tide", "café",
                                   "fox ANDMAYBE dog", "生存"])
def test_anything_else_goes_through_the_parser(query: str) -> None:
    assert plain_query_terms(query) is None


@pytest.fixture
def tix(tmp_path: Path):  # type: ignore[no-untyped-def]
    index = SearchIndex.open_or_create(tmp_path / "ix", engine="tantivy")
    index.rebuild(CORPUS)
    yield index
    index.close()


QUERIES = ["fox", "quick fox", "The lazy dog", "runs", "running Health", "health",
           "pasta garlic oil", "style", "a the", "of", "concise code first", "nothing here"]


@pytest.mark.parametrize("query", QUERIES)
def test_the_tantivy_query_is_the_one_the_parse_translates_to(tix, query: str) -> None:  # type: ignore[no-untyped-def]
    plain = plain_query_terms(query)
    assert plain is not None
    direct, parsed = _tantivy._Translator(tix), _tantivy._Translator(tix)
    assert repr(direct.words(plain)) == repr(parsed(_tantivy._parse(query)))
    assert direct.asked == parsed.asked


def test_a_plain_query_finds_what_the_parsers_path_finds(
        tix, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    flt = IndexFilter.everything()
    fast = {q: tix.search(q, filter=flt, limit=20) for q in QUERIES}
    monkeypatch.setattr(_tantivy, "plain_query_terms", lambda query: None)
    for query, hits in fast.items():
        assert hits == tix.search(query, filter=flt, limit=20), query
    assert any(fast.values())
