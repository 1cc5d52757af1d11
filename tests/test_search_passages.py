"""Answer at the passage: a hit in a long page names the turn that matched (its snippet and
`source_spans`), a transcript is ranked by its best turn rather than diluted by its length,
and the passage can be read back with its neighbours. Exact mode finds its pages through the
index's positions; a bare page id finds its page; a result's timestamp is the same whatever
mode found it."""

from __future__ import annotations

import pytest

from pcp_cli import api
from tests.conftest import cli
from tests.test_search_pages import add, ext, ids, run

pytestmark = pytest.mark.usefixtures("engine")

FILLER = ("We talked about the weather, the week ahead, what to cook tonight and whether the "
          "train would be late again. ")


def transcript(turns: list[tuple[str, str]]) -> str:
    return "\n\n".join(f"### {role} · 2024-05-0{1 + i % 9} 10:{i % 60:02d}\n\n{text}"
                       for i, (role, text) in enumerate(turns))


ANSWER = "We finally bought a red kayak yesterday and took the kayak out on the lake."


@pytest.fixture
def talk(store):
    turns = [("User" if i % 2 else "Assistant", FILLER * 3) for i in range(60)]
    turns[41] = ("User", ANSWER)
    turns[42] = ("Assistant", "That sounds like a lovely first paddle.")
    conv = add(store, transcript(turns), "--type", "conversation", "--title", "Catching up")
    note = add(store, "The kayak club meets by the lake on Sundays; bring a kayak and a spray "
               "skirt.", "--title", "Club")
    for i in range(8):
        add(store, f"Shopping list {i}: bread, milk, tea and some apples.", "--title", f"List {i}")
    return {"conv": conv, "note": note, "turns": turns}


def test_the_snippet_is_the_turn_that_answers_and_names_where_it_is(store, talk):
    data = run(store, "search", "when did we buy the kayak for the lake?")
    first = data["results"][0]
    assert first["id"] == talk["conv"]
    assert first["snippet"].startswith(ANSWER)
    (span,) = ext(first)["source_spans"]
    assert span["passage"] == "message" and span["message_index"] == 41
    assert span["role"] == "user"
    body = api.read_page(api.open_store(store, readonly=True), talk["conv"])["page"]["payload"]
    assert body["content"][span["start"]:span["end"]] == ANSWER


def test_a_long_transcript_is_ranked_by_its_best_turn_not_diluted(store, talk):
    # Page against page, BM25F's length normalisation puts the short note (kayak and lake in
    # a dozen words) above 60 turns of which one says "red kayak", "lake" and "yesterday";
    # that turn is the better answer.
    data = run(store, "search", "did we take the red kayak out on the lake yesterday?")
    assert ids(data)[:2] == [talk["conv"], talk["note"]]


def test_a_short_page_has_no_passage_locator_but_keeps_its_snippet(store, talk):
    data = run(store, "search", "spray skirt")
    (note,) = data["results"]
    assert note["id"] == talk["note"] and "spray skirt" in note["snippet"]
    assert "source_spans" not in ext(note)


def test_the_passage_reads_back_with_its_neighbours(store, talk):
    first = run(store, "search", "kayak lake")["results"][0]
    (span,) = ext(first)["source_spans"]
    shown = run(store, "show", first["id"], "--passage", f"{span['start']}:{span['end']}",
                "--neighbours", "1")
    passage = shown["passage"]
    assert [p["message_index"] for p in passage["passages"]] == [40, 41, 42]
    assert [p["matched"] for p in passage["passages"]] == [False, True, False]
    assert ANSWER in passage["text"] and "lovely first paddle" in passage["text"]
    assert passage["text"].startswith("### Assistant")  # whole turns, headings included
    plain = cli("show", first["id"], "--passage", f"{span['start']}:{span['end']}",
                "--neighbours", "0", "--store", str(store))
    assert plain.code == 0 and plain.stdout.strip().endswith(ANSWER)


@pytest.mark.parametrize("bad", ["12", "a:b", "5:"])
def test_a_malformed_passage_is_a_usage_error(store, talk, bad):
    out = cli("show", talk["conv"], "--passage", bad, "--store", str(store))
    assert out.code == 2 and "START:END" in out.stderr and "Traceback" not in out.stderr


def test_a_passage_outside_the_text_is_a_usage_error(store, talk):
    out = run(store, "show", talk["note"], "--passage", "5000:5001", code=2)
    assert "not inside the page's text" in out.stderr


# -- exact mode ---------------------------------------------------------------------------------
def test_exact_mode_reads_only_the_pages_holding_the_words_side_by_side(store, monkeypatch):
    for i in range(40):
        add(store, f"Window {i}: a note whose context matters, a window on the context.",
            "--title", f"Note {i}")
    holds = add(store, "Mind the Context Window: it is 8k tokens.")
    also = add(store, "A context-window limit (context window) bites.")
    from pcp_cli.query import pages

    read: list[str] = []
    real = pages._page_text

    def counting(current, page_id):
        read.append(page_id)
        return real(current, page_id)

    monkeypatch.setattr(pages, "_page_text", counting)
    with api.open_store(store) as opened:
        data = api.search(opened, '"context window"', mode="exact")
    assert set(ids(data)) == {holds, also}
    assert {ext(r)["match_channel"] for r in data["results"]} == {"exact"}
    assert len(read) <= 4  # the two, not the forty that hold both words apart


def test_exact_mode_finds_what_reading_every_page_finds(store):
    texts = ["Call parse_frontmatter(text) -> dict first.", "parse frontmatter text",
             "PARSE_FRONTMATTER(TEXT) -> DICT, shouted.", "parse_frontmatter(text)->dict tight",
             "text parse_frontmatter", "the frontmatter parse of text"]
    made = {add(store, t): t for t in texts}
    for literal in ("parse_frontmatter(text) ->", "frontmatter", "parse frontmatter",
                    "(text)", "Text"):
        with api.open_store(store) as opened:
            data = api.search(opened, literal, mode="exact", limit=25)
        holding = {pid for pid, t in made.items() if literal.casefold() in
                   f"Note\n{t}".casefold() or literal.casefold() in t.casefold()}
        assert set(ids(data)) == holding, literal


def test_exact_mode_pages_with_a_cursor(store):
    made = [add(store, f"The phrase blue heron appears here, note {i}.") for i in range(7)]
    first = run(store, "search", "blue heron", "--mode", "exact", "--limit", "3")
    second = run(store, "search", "blue heron", "--mode", "exact", "--limit", "3",
                 "--cursor", first["next_cursor"])
    third = run(store, "search", "blue heron", "--mode", "exact", "--limit", "3",
                "--cursor", second["next_cursor"])
    assert sorted(ids(first) + ids(second) + ids(third)) == sorted(made)
    assert third["next_cursor"] is None


# -- #34: a bare id, one timestamp ---------------------------------------------------------------
def test_a_bare_page_id_finds_that_page_in_every_mode_that_reads_words(example):
    for mode in ("text", "auto", "exact"):
        data = run(example, "search", "ks-001", "--mode", mode)
        assert ids(data)[0] == "ks-001", mode
        assert ext(data["results"][0])["match_channel"] == "id"
        assert ids(data).count("ks-001") == 1
    # a plain word that is also an id is searched as a word
    assert ext(run(example, "search", "profile")["results"][0])["match_channel"] == "text"


def test_a_timeline_events_timestamp_is_the_same_whatever_mode_found_it(example):
    stamps = set()
    for args in (("newsletter Salt Signal",), ("Salt Signal", "--mode", "exact"),
                 ("*", "--mode", "temporal", "--type", "timeline_event"),
                 ("newsletter", "--mode", "graph"), ("tl-003",)):
        data = run(example, "search", *args, "--limit", "25")
        stamps |= {r.get("timestamp") for r in data["results"] if r["id"] == "tl-003"}
    assert stamps == {"2021-08"}


def test_auto_never_reads_every_page_for_a_phrase_of_punctuation(store):
    add(store, "An arrow -> points right.")
    data = run(store, "search", '"->"', "--mode", "auto")
    assert data["filters_applied"]["mode"] == "text" and data["results"] == []
    # asked for by name, exact mode still reads the pages for it (it cannot use the index)
    with api.open_store(store) as opened:
        assert api.search(opened, "->", mode="exact")["count"] == 1


def test_the_snippet_is_cut_from_the_passage_source_spans_names(store):
    long_reply = ("Here is a longer answer about kayak storage, kayak racks, kayak trailers and "
                  "every kayak accessory you might want for the lake, " * 3)
    body = transcript([("User", "Should I buy a kayak rack?"), ("Assistant", long_reply),
                       ("User", "Thanks, noted.")])
    page = add(store, body, "--type", "conversation", "--title", "Racks")
    with api.open_store(store) as opened:
        (hit,) = api.search(opened, "kayak rack buy", mode="text")["results"]
        text = api.read_page(opened, page)["page"]["payload"]["content"]
    (span,) = ext(hit)["source_spans"]
    shown = hit["snippet"].lstrip("…").split(" — ")[0].rstrip("…")
    assert shown and shown in " ".join(text[span["start"]:span["end"]].split())
