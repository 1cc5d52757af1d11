"""Who the person is (issue #30): the phrasings people use in conversation, claims that say
what they say on their own, special categories kept `high`, dates read against the turn,
`stale_after` on claims that decay, when a claim was said kept through acceptance, and the
bounds of what one run reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from pcp_cli.extract import extract_sentences, person_sentences
from pcp_cli.extract.segments import READ_LIMIT
from tests.conftest import cli

TURN = "2024-05-08"  # a Wednesday


def _found(sentence: str, when: str = TURN) -> set[tuple[str, str, str | None]]:
    body = f"### User · {when} 10:00\n\n{sentence}\n"
    return {(c.category, c.content, c.date)
            for c in extract_sentences(person_sentences(body, "conversation"))}


def _contents(sentence: str, when: str = TURN) -> set[str]:
    return {content for _, content, _ in _found(sentence, when)}


# -- each phrasing of the issue ---------------------------------------------------------------
@pytest.mark.parametrize(("sentence", "expected"), [
    # appositives: the name beside the thing named
    ("Oscar, my guinea pig, loves kale.", {"Has a guinea pig, Oscar."}),
    ("My cats, Miso, Tofu and Nori, love the sun.",
     {"Has cats, Miso, Tofu and Nori."}),
    ("I have a guinea pig named Oscar.", {"Has a guinea pig named Oscar."}),
    ("I love exploring new beaches with my three cats.",
     {"Has three cats.", "Likes exploring new beaches with their three cats."}),
    # the copula the other way round
    ("Harry Potter is my favorite book.", {"Favourite book: Harry Potter."}),
    ("My favorite book is Harry Potter.", {"Favourite book: Harry Potter."}),
    ("Cardamom is my go-to spice.", {"Favourite spice: Cardamom."}),
    ("Climbing makes me so happy.", {"Likes climbing."}),
    # the role said in passing
    ("As a writer, I spend a lot of time reading.", {"Is a writer."}),
    ("My job as a nurse is tiring.", {"Works as a nurse."}),
    ("I work at a hospital.", {"Works at a hospital."}),
    ("I work in marketing.", {"Works in marketing."}),
    ("I work as a nurse.", {"Works as a nurse."}),
    ("I love running my own pottery studio.",
     {"Runs their own pottery studio.", "Likes running their own pottery studio."}),
    # where they are from, and where they are off to
    ("I miss my home country, Sweden.", {"Is from Sweden."}),
    ("I'm off to Ireland for a semester.", {"Is going to Ireland for a semester."}),
    # an exclamation that starts with a wh-word is no question
    ("What can I say, I love turtles.", {"Likes turtles."}),
    # a question tagged after a statement asks nothing
    ("I started my own bike repair shop - pretty cool, huh?",
     {"Runs their own bike repair shop."}),
    # said without its "I"
    ("Lost my job as a cashier yesterday.", {"Lost their job as a cashier on 7 May 2024."}),
    ("My name is Ada Lumen.", {"Their name is Ada Lumen."}),
])
def test_phrasing_people_use_is_read(sentence: str, expected: set[str]) -> None:
    assert _contents(sentence) == expected


@pytest.mark.parametrize("sentence", [
    "What can I say?",
    "Rex, my childhood dog, loved fetch.",        # not one they have now
    "Starting a podcast takes nerve.",         # a gerund subject, not a dropped "I"
    "Harry Potter is my sister's favorite book.",
    "As a kid, I loved turtles.",                 # no role
    "My sister's dog, Rex, is huge.",
    "If I had a guinea pig named Oscar, I'd feed him kale.",
])
def test_what_only_looks_like_them_gives_nothing_of_it(sentence: str) -> None:
    contents = _contents(sentence)
    assert not any(c.startswith(("Has", "Is a", "Runs", "Favourite")) for c in contents), contents


# -- self-contained -----------------------------------------------------------------------------
@pytest.mark.parametrize("sentence", [
    "I love holding them.",
    "I want to get it on the big screen.",
    "I like their work.",
    "I'm practising with them!",
    "I love your idea.",
    "I'm working hard to get everything ready.",
])
def test_a_claim_pointing_at_something_unnamed_is_not_proposed(sentence: str) -> None:
    assert _found(sentence) == set()


def test_a_pointing_word_is_resolved_from_its_sentence() -> None:
    assert "Likes holding their turtles." in _contents(
        "I got my turtles in May and I love holding them.")


@pytest.mark.parametrize(("sentence", "expected"), [
    ("I want to run a marathon this year.", "Wants to run a marathon this year."),
    ("I prefer to work early when it's quiet.", "Prefers to work early."),
    ("I use Figma for literally everything.", "Uses Figma for literally everything."),
])
def test_the_same_words_pointing_at_nothing_are_kept(sentence: str, expected: str) -> None:
    assert expected in _contents(sentence)


def test_the_extractors_own_wording_is_not_taken_for_a_pointing_word() -> None:
    # "their" in "Lives with their partner" is the rule's, not the person's
    assert _contents("I live with my partner.") == {"Lives with their partner."}
    assert _contents("I love my work.") == {"Likes their work."}


# -- special categories -------------------------------------------------------------------------
@pytest.mark.parametrize(("sentence", "content"), [
    ("I'm a practising Catholic.", "Is a practising Catholic."),
    ("I have depression.", "Has depression."),
    ("I'm bisexual.", "Is bisexual."),
    ("I'm non-binary.", "Is non-binary."),
])
def test_a_special_category_is_proposed_high_and_in_no_slot(sentence: str, content: str) -> None:
    body = f"### User · {TURN} 10:00\n\n{sentence}\n"
    [found] = extract_sentences(person_sentences(body, "conversation"))
    assert (found.content, found.sensitivity, found.slot) == (content, "high", None)
    assert found.special


@pytest.mark.parametrize("sentence", ["I'm straight to the point.", "I take black coffee.",
                                      "I'm a black belt in judo."])
def test_an_ordinary_use_of_the_same_word_is_not_special(sentence: str) -> None:
    body = f"### User · {TURN} 10:00\n\n{sentence}\n"
    assert all(c.sensitivity != "high"
               for c in extract_sentences(person_sentences(body, "conversation")))


def _add(store: Path, body: str, *, sensitivity: str = "low") -> str:
    result = cli("add", "--type", "conversation", "--title", "chat", "--sensitivity",
                 sensitivity, "--json", "--store", str(store), "-", input=body)
    assert result.code == 0, result.stderr
    return result.json["page_id"]


def _propose(store: Path, *args: str) -> tuple[dict, str]:
    result = cli("propose", *args, "--json", "--store", str(store))
    assert result.code == 0, result.stderr
    return result.json, result.stderr


def test_a_religion_never_pushes_the_role_out(store: Path) -> None:
    _add(store, "### User · 2024-01-02 10:00\n\nI'm a writer.\n\n"
                "### User · 2024-03-02 10:00\n\nI'm a practising Catholic.\n")
    result, _ = _propose(store, "--dry-run")
    by_content = {p["content"]: p for p in result["proposals"]}
    assert by_content["Is a writer."]["sensitivity"] == "medium"
    assert by_content["Is a practising Catholic."]["sensitivity"] == "high"


def _sensitivity(store: Path, page: str) -> str:
    return cli("show", page, "--json", "--store", str(store)).json["page"]["sensitivity"]


def _hits(store: Path, query: str) -> int:
    result = cli("search", query, "--json", "--store", str(store))
    assert result.code == 0, result.stderr
    return result.json["count"]


def test_a_page_that_yields_a_high_proposal_is_raised_with_a_notice(store: Path) -> None:
    page = _add(store, f"### User · {TURN} 10:00\n\nI have depression. I live in Porto.\n")
    assert _hits(store, "depression") == 1
    dry, note = _propose(store, "--dry-run")
    assert dry["sensitivity"][0]["status"] == "would_raise" and "would raise" in note
    assert _sensitivity(store, page) == "low"
    result, note = _propose(store)
    assert result["sensitivity"] == [{"page_id": page, "status": "raised", "was": "low",
                                      "to": "high", "why": result["sensitivity"][0]["why"]}]
    assert "health" in result["sensitivity"][0]["why"]
    assert f"raised {page} from low to high" in note
    assert _sensitivity(store, page) == "high"
    assert _hits(store, "depression") == 0  # default search leaves the turn out now
    # nothing lowers it again: a second run finds it high already and says nothing
    again, note = _propose(store)
    assert again["sensitivity"] == [] and "raised" not in note


def test_the_persons_own_choice_of_sensitivity_is_kept(store: Path) -> None:
    page = _add(store, f"### User · {TURN} 10:00\n\nI have depression.\n",
                sensitivity="medium")
    assert cli("revise", page, "--sensitivity", "low", "--store", str(store)).code == 0
    result, note = _propose(store)
    assert result["sensitivity"][0]["status"] == "kept"
    assert "as you set it" in note
    assert _sensitivity(store, page) == "low"


# -- dates and staleness --------------------------------------------------------------------------
@pytest.mark.parametrize(("sentence", "expected"), [
    ("I went freelance yesterday.", ("Went freelance on 7 May 2024.", "2024-05-07")),
    ("I went freelance last week.", ("Went freelance in the week of 1 May 2024.", "2024-05-01")),
    ("I went freelance last Friday.", ("Went freelance on 3 May 2024.", "2024-05-03")),
    ("I went freelance last weekend.",
     ("Went freelance on the weekend of 4 May 2024.", "2024-05-04")),
    ("I went freelance two weeks ago.",
     ("Went freelance in the week of 24 April 2024.", "2024-04-24")),
    ("I went freelance last month.", ("Went freelance in April 2024.", "2024-04")),
])
def test_a_relative_date_is_read_against_the_turn(sentence: str,
                                                  expected: tuple[str, str]) -> None:
    events = {(content, date) for category, content, date in _found(sentence) if date}
    assert events == {expected}


def _record(store: Path, page: str) -> dict:
    return cli("show", page, "--json", "--store", str(store)).json["page"]["record"]


def test_a_claim_that_decays_is_proposed_with_stale_after(store: Path) -> None:
    _add(store, "### User · 2024-01-10 10:00\n\nI'm off to Ireland for a semester. "
                "I'm preparing for the IELTS exam. I'm from Sweden.\n")
    result, _ = _propose(store)
    stale = {p["content"]: p["stale_after"] for p in result["proposals"]}
    assert stale == {"Is going to Ireland for a semester.": "2024-07-10",
                     "Is preparing for the IELTS exam.": "2025-01-10",
                     "Is from Sweden.": None}
    ireland = next(p for p in result["proposals"] if "Ireland" in p["content"])
    assert _record(store, ireland["id"])["stale_after"] == "2024-07-10"
    sweden = next(p for p in result["proposals"] if "Sweden" in p["content"])
    assert "stale_after" not in _record(store, sweden["id"])


def test_an_accepted_claim_keeps_when_it_was_said(store: Path) -> None:
    _add(store, "### User · 2023-03-14 10:00\n\nI live in Porto. I work as a nurse.\n")
    result, _ = _propose(store)
    ids = [p["id"] for p in result["proposals"]]
    assert cli("review", "accept", *ids, "--store", str(store)).code == 0
    record = _record(store, ids[0])
    assert record["observed_at"] == "2023-03-14" and record["affirmed_at"] > "2024"
    prompt = cli("export", "--format", "micro_prompt", "--store", str(store)).stdout
    last = prompt.strip().splitlines()[-1]
    assert last.startswith("(profile as of 20") and last.endswith("; said on 2023-03-14)")
    assert "(profile as of 2023" not in last  # affirmed today, said then: both are there


# -- evidence and bounds -------------------------------------------------------------------------
def test_evidence_is_quoted_verbatim_with_curly_quotes_and_inline_code(store: Path) -> None:
    sentence = "I\u2019m a \u201cdata\u201d engineer who lives in `~/src` \u2014 I live in Porto."
    body = f"### User · {TURN} 10:00\n\n{sentence}\n"
    page = _add(store, body)
    result, _ = _propose(store, "--dry-run")
    evidence = [e for p in result["proposals"] for e in p["evidence"]]
    assert evidence and all(e["text"] == sentence and e["page_id"] == page for e in evidence)
    shown = cli("show", page, "--json", "--store", str(store)).json["page"]["payload"]["content"]
    assert all(shown[e["start"]:e["end"]] == e["text"] for e in evidence)


def test_a_huge_turn_is_read_up_to_the_limit_and_said_so(store: Path) -> None:
    filler = "Lorem ipsum dolor sit amet consectetur.\n" * (READ_LIMIT // 40 + 10)
    _add(store, f"### User · {TURN} 10:00\n\nI live in Porto.\n{filler}I work as a nurse.\n")
    result, note = _propose(store, "--dry-run")
    assert {p["content"] for p in result["proposals"]} == {"Lives in Porto."}
    assert result["counts"]["turns_cut"] == 1
    assert f"longer than {READ_LIMIT:,} characters" in note


# -- distill: each claim under its heading ---------------------------------------------------
def test_distill_files_a_food_like_nowhere_near_working_style(store: Path) -> None:
    for claim in ("Likes lentil soup.", "Works best in the morning.", "Uses Neovim.",
                  "Is vegetarian."):
        assert cli("keystone", "add", claim, "--category", "preference", "--store",
                   str(store)).code == 0
    assert cli("profile", "distill", "--store", str(store)).code == 0
    profile = cli("profile", "show", "--json", "--store", str(store)).json
    assert profile["working_style"] == "Works best in the morning."
    assert profile["tools_and_workflows"] == "Uses Neovim."
    assert "lentil soup" in profile["summary"] and "vegetarian" in profile["summary"]
    markdown = cli("profile", "show", "--format", "markdown", "--store", str(store)).stdout
    how_i_work = markdown.split("## How I work")[1].split("\n## ")[0]
    assert "Chicken" not in how_i_work


def test_a_models_special_category_claim_is_high_too() -> None:
    from collections import Counter

    from pcp_cli.extract.llm import Chunk, candidates_from

    body = f"### User · {TURN} 10:00\n\nI have depression. I'm a writer.\n"
    chunk = Chunk(None, person_sentences(body, "conversation"))
    answer = {"proposals": [
        {"kind": "keystone", "category": "constraint", "content": "Has depression.",
         "evidence": "I have depression.", "date": None, "confidence": 0.8},
        {"kind": "keystone", "category": "identity", "content": "Is a writer.",
         "evidence": "I'm a writer.", "date": None, "confidence": 0.8}]}
    found = {c.content: c for c in candidates_from(answer, chunk, Counter())}
    assert found["Has depression."].sensitivity == "high"
    assert found["Has depression."].slot is None
    assert found["Is a writer."].sensitivity == "medium"


def test_a_name_said_in_a_conversation_names_the_profile(store: Path) -> None:
    _add(store, f"### User · {TURN} 10:00\n\nMy name is Ada Lumen. I work as a nurse.\n")
    result, _ = _propose(store)
    assert cli("review", "accept", *[p["id"] for p in result["proposals"]], "--store",
               str(store)).code == 0
    assert cli("profile", "distill", "--store", str(store)).code == 0
    prompt = cli("export", "--format", "micro_prompt", "--store", str(store)).stdout
    assert prompt.split("\n\n")[0] == "Ada Lumen — Nurse."


def test_distill_keeps_workshops_out_of_working_style(store: Path) -> None:
    assert cli("keystone", "add", "Likes organizing workshops.", "--category", "preference",
               "--store", str(store)).code == 0
    assert cli("profile", "distill", "--store", str(store)).code == 0
    profile = cli("profile", "show", "--json", "--store", str(store)).json
    assert "working_style" not in profile and "workshops" in profile["summary"]


def test_a_raised_conversation_stays_high_when_its_export_is_imported_again(
        store: Path, tmp_path: Path) -> None:
    import json
    import zipfile

    conversation = {
        "id": "c-1", "conversation_id": "c-1", "title": "chat", "create_time": 1715162400.0,
        "update_time": 1715162460.0, "current_node": "n2",
        "mapping": {
            "n0": {"id": "n0", "message": None, "parent": None, "children": ["n1"]},
            "n1": {"id": "n1", "parent": "n0", "children": ["n2"], "message": {
                "id": "n1", "author": {"role": "user"}, "create_time": 1715162400.0,
                "content": {"content_type": "text", "parts": ["I have depression."]}}},
            "n2": {"id": "n2", "parent": "n1", "children": [], "message": {
                "id": "n2", "author": {"role": "assistant"}, "create_time": 1715162460.0,
                "content": {"content_type": "text", "parts": ["Thank you for telling me."]}}},
        }}
    export = tmp_path / "chatgpt.zip"
    with zipfile.ZipFile(export, "w") as archive:
        archive.writestr("conversations.json", json.dumps([conversation]))
    assert cli("import", str(export), "--store", str(store)).code == 0
    result, _ = _propose(store)
    [raised] = result["sensitivity"]
    assert raised["status"] == "raised"
    assert cli("import", str(export), "--store", str(store)).code == 0
    assert _sensitivity(store, raised["page_id"]) == "high"
    assert _hits(store, "depression") == 0
