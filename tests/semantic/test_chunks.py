"""Passages: exact offsets, in order, covering the text, never longer than MAX (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pcp_cli.semantic.chunks import MAX, embedding_text, split

WORDS = st.sampled_from(["tide", "gauge", "sensor.", "Porto", "river!", "达尔文", "x" * 30,
                         "y" * 1700, "\n", "\n\n", " ", "  \n \n", "。"])
BODIES = st.lists(WORDS, max_size=400).map(" ".join) | st.text(max_size=5000)


@settings(max_examples=200, deadline=None)
@given(BODIES)
def test_passages_cover_the_body_with_exact_offsets(body: str) -> None:
    chunks = split(body)
    covered = 0
    last_end = 0
    for chunk in chunks:
        assert body[chunk.start:chunk.end] == chunk.text
        assert chunk.text == chunk.text.strip() and chunk.text
        assert chunk.start >= last_end  # in order, no overlap
        assert chunk.end - chunk.start <= MAX
        last_end = chunk.end
        covered += sum(not c.isspace() for c in chunk.text)
    assert covered == sum(not c.isspace() for c in body)


def test_a_short_page_is_one_passage_and_the_title_leads_it() -> None:
    [only] = split("Moved to Porto in 2024.\n")
    assert (only.start, only.end) == (0, 23)
    assert embedding_text("Home", only, True) == "Home\nMoved to Porto in 2024."
    assert embedding_text("Home", only, False) == "Moved to Porto in 2024."
    assert split("  \n\n ") == []


def test_a_transcript_is_cut_at_turns() -> None:
    turns = [f"**User:** question {i} " + "about the tide chart " * 20 for i in range(30)]
    body = "\n\n".join(turns)
    chunks = split(body)
    assert len(chunks) > 5
    assert all(c.text.startswith("**User:**") for c in chunks)  # no turn cut in the middle
