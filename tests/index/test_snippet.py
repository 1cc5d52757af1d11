from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pcp_cli.index import make_snippet, query_words


def marked(snippet: str, spans: list[tuple[int, int]]) -> list[str]:
    return [snippet[s:e] for s, e in spans]


def test_window_is_cut_around_the_match() -> None:
    text = "filler words here. " * 50 + "The running dog barked. " + "more filler text. " * 50
    snippet, spans = make_snippet(text, ["run"], max_chars=120)
    assert len(snippet) <= 120
    assert snippet.startswith("…") and snippet.endswith("…")
    assert marked(snippet, spans) == ["running"]
    assert "The running dog barked." in snippet


def test_stemmed_matches_are_highlighted() -> None:
    snippet, spans = make_snippet("He runs. She ran. They are running.", ["running"])
    assert snippet == "He runs. She ran. They are running."
    assert marked(snippet, spans) == ["runs", "running"]


def test_prefers_the_window_with_most_distinct_terms() -> None:
    text = "apple " + "x " * 300 + "banana cherry apple " + "y " * 300
    snippet, spans = make_snippet(text, ["apple", "banana", "cherry"], max_chars=80)
    assert set(marked(snippet, spans)) == {"apple", "banana", "cherry"}


def test_cjk_snippet() -> None:
    text = "这是一段很长的中文文本。" * 40 + "物竞天择，即适者生存。" + "其他内容。" * 40
    snippet, spans = make_snippet(text, ["生存"], max_chars=60)
    assert len(snippet) <= 60
    assert marked(snippet, spans) == ["生存"]
    ja, ja_spans = make_snippet("子供のころ、よくしりとりをして遊びました。", ["しりとり"])
    assert marked(ja, ja_spans) == ["しりとり"]
    ko, ko_spans = make_snippet("저는 서울에서 일하고 있습니다.", ["서울"])
    assert marked(ko, ko_spans) == ["서울"]


def test_no_match_gives_the_start() -> None:
    snippet, spans = make_snippet("First line.\n\nSecond   line. " + "z " * 500, ["absent"], 50)
    assert snippet.startswith("First line. Second line.")
    assert snippet.endswith("…") and len(snippet) <= 50
    assert spans == []


def test_whitespace_is_collapsed_and_short_text_kept_whole() -> None:
    snippet, spans = make_snippet("  a\n\ttidy   text ", ["tidy"])
    assert snippet == "a tidy text"
    assert marked(snippet, spans) == ["tidy"]


def test_query_words_drop_operators_and_filters() -> None:
    assert query_words('"quick fox" AND NOT lazy type:note title:Pasta (生存 OR run*)') == [
        "quick",
        "fox",
        "lazy",
        "Pasta",
        "生存",
        "run",
    ]


@given(st.text(max_size=2000), st.lists(st.text(min_size=1, max_size=12), max_size=4))
def test_snippet_is_capped_and_spans_are_inside(text: str, words: list[str]) -> None:
    snippet, spans = make_snippet(text, words, max_chars=100)
    assert len(snippet) <= 100
    for s, e in spans:
        assert 0 <= s < e <= len(snippet)


def test_snippet_never_starts_inside_a_word():
    text = "Left a marine-biology PhD program to pursue data work."
    snippet, _ = make_snippet(text, ["work"], max_chars=240)
    assert snippet == text
    long = ("x" * 30 + " ") * 4 + "Averyveryverylongwordwithoutspaces then the match word here."
    snippet, _ = make_snippet(long, ["match"], max_chars=60)
    first = snippet.lstrip("…").split(" ")[0]
    assert first in long.split(" ")
