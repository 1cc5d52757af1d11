"""A question is text: what a person or an assistant types is searched as written, syntax is
recognised only where it is valid, and nothing but an empty query is refused. On both engines."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcp_cli.index import IndexFilter, SearchIndex
from pcp_cli.index.text import query_words, read_query

from .conftest import doc, ids

pytestmark = pytest.mark.usefixtures("engine")

ALL = IndexFilter.everything()
PAGES = [
    doc("rome", "We spent a week in Rome in May.", title="Trip"),
    doc("csgo", "He plays CS:GO every Friday night.", title="Games"),
    doc("art", "A sketch of the harbour.", title="Art class"),
    doc("mail", "Write to me@x.com about the lease.", title="Contact"),
    doc("plain", "Nothing here but words about a lease and art.", title="Other"),
    doc("ks", "Prefer concise answers.", type="keystone", title="Style", tags=("style",)),
]


@pytest.fixture
def qx(index_dir: Path) -> SearchIndex:
    index = SearchIndex.open_or_create(index_dir)
    index.rebuild(PAGES)
    yield index
    index.close()


@pytest.mark.parametrize(("question", "words"), [
    ("Rome?", "Rome"),                  # a trailing ? was a one-character wildcard
    ("Were we in Rome?", "Were we in Rome"),
    ("CS:GO", '"CS GO"'),               # not a field: the word as written
    ("Does he still play CS:GO?", 'Does he still play "CS GO"'),
    ('the "lease', "the lease"),        # a lone double quote is text
    ("title: art?", "title art"),       # a known field with nothing after it is text
    ("email: me@x.com?", 'email "me com"'),
    ("colour: harbour", "colour harbour"),
    ("(harbour", "harbour"),            # an unclosed parenthesis
    ("harbour)", "harbour"),
    ("AND harbour", "harbour"),         # an operator joining nothing
    ("harbour OR", "harbour"),
    ("NOT harbour", "harbour"),         # only NOT clauses: its words
    ("What's [the] lease^2 about?", "What's the lease 2 about"),
])
def test_each_phrasing_is_searched_as_its_words(qx: SearchIndex, question: str,
                                                words: str) -> None:
    found = ids(qx.search(question, filter=ALL))
    assert found and found == ids(qx.search(words, filter=ALL))


def test_rome_question_finds_rome(qx: SearchIndex) -> None:
    assert ids(qx.search("Rome?", filter=ALL)) == ["rome"]
    assert ids(qx.search("CS:GO", filter=ALL)) == ["csgo"]
    assert "mail" in ids(qx.search("email: me@x.com?", filter=ALL))


def test_explicit_syntax_still_works(qx: SearchIndex) -> None:
    assert ids(qx.search('"words about"', filter=ALL)) == ["plain"]
    assert set(ids(qx.search("words about", filter=ALL))) == {"mail", "plain"}
    assert ids(qx.search("lease AND art", filter=ALL)) == ["plain"]
    assert ids(qx.search("lease NOT art", filter=ALL)) == ["mail"]
    assert set(ids(qx.search("harbour OR Rome", filter=ALL))) == {"art", "rome"}
    assert ids(qx.search("(harbour OR Rome) AND sketch", filter=ALL)) == ["art"]
    assert ids(qx.search("title:art", filter=ALL)) == ["art"]
    assert ids(qx.search('title:"art class"', filter=ALL)) == ["art"]
    assert ids(qx.search("type:keystone", filter=ALL)) == ["ks"]
    assert ids(qx.search("concise tag:style", filter=ALL)) == ["ks"]
    assert ids(qx.search("harb*", filter=ALL)) == ["art"]
    assert ids(qx.search("harb*?", filter=ALL)) == ["art"]  # a prefix, then a question mark


def test_what_is_only_punctuation_finds_nothing_and_is_not_an_error(qx: SearchIndex) -> None:
    for query in ("???", "*", "( )", "AND", "NOT", '"', "…", ":"):
        assert qx.search(query, filter=ALL) == []


def test_read_query_keeps_valid_syntax_as_written() -> None:
    assert read_query('"olive oil" AND (tag:food OR type:keystone) NOT draft') == \
        "\"olive oil\" AND ( tag:'food' OR type:'keystone' ) NOT draft"
    assert read_query("ns:project:tidewatch run*") == "namespace:'project:tidewatch' run*"
    assert read_query("id:ks-001?") == "page_id:'ks-001'"
    assert read_query("Rome?") == "Rome"


def test_snippet_words_are_the_words_read() -> None:
    assert query_words("Where is Rome?") == ["Where", "is", "Rome"]
    assert query_words('title:"art class" CS:GO type:keystone') == ["art", "class", "CS:GO"]


# -- properties -------------------------------------------------------------------------------
# Text as people and assistants write it: letters, digits, CJK, punctuation of every kind,
# curly quotes, the characters the parser knows, operator words.
_PIECES = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12),
    st.sampled_from(["AND", "OR", "NOT", "TO", "ANDNOT", "(", ")", '"', "'", "?", "*", ":",
                     "title:", "tag:", "type:", "id:", "ns:", "colour:", "^2", "[", "]", "{",
                     "}", "~", "\\", "“", "”", "’", "生存", "rome", "lease"]),
)
QUESTIONS = st.lists(_PIECES, min_size=1, max_size=10).map(" ".join).filter(
    lambda q: q.strip() != "")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(question=QUESTIONS)
def test_arbitrary_text_never_raises(qx: SearchIndex, question: str) -> None:
    hits = qx.search(question, filter=ALL, limit=5)
    assert len(hits) <= 5
    assert isinstance(query_words(question), list)


WORDS = st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
                         min_size=1, max_size=8), min_size=1, max_size=6)


@settings(max_examples=200, deadline=None)
@given(words=WORDS)
def test_plain_words_parse_as_they_always_did(words: list[str]) -> None:
    """A query of plain words reads as itself and parses to the tree whoosh's parser, set up
    as it was before questions were read as text, gives it: the same hits as before."""
    from whoosh.qparser import MultifieldParser, OrGroup

    from pcp_cli.index import _whoosh as W
    from pcp_cli.index.query import (
        DEFAULT_FIELDS,
        ExactFieldsUnscored,
        configure_parser,
        parse,
        restrict,
    )

    query = " ".join(w for w in words if w not in ("AND", "OR", "NOT", "TO", "ANDNOT",
                                                   "ANDMAYBE", "REQUIRE"))
    if not query:
        return
    assert read_query(query) == query
    before = MultifieldParser(list(DEFAULT_FIELDS), W.make_schema(), group=OrGroup)
    before.add_plugin(ExactFieldsUnscored())
    now = configure_parser(MultifieldParser(list(DEFAULT_FIELDS), W.make_schema(),
                                            group=OrGroup))
    assert parse(now, query) == restrict(before.parse(query))
