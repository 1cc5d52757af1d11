"""More phrasings of the self-statements `pcp propose` reads, and the traps beside each.

A practice set written for the extractor (issue #21), not taken from the bench corpus: each
case is a sentence a person might write in a turn dated 2024-11-03, and the proposals it must
give (content and, for a timeline event, its date), or none at all.
"""

from __future__ import annotations

import pytest

from pcp_cli.extract import extract_sentences, person_sentences


def _found(sentence: str, when: str = "2024-11-03") -> list[tuple[str, str | None]]:
    body = f"### User · {when} 10:00\n\n{sentence}\n"
    return [(c.content, c.date) for c in extract_sentences(person_sentences(body,
                                                                            "conversation"))]


def _contents(sentence: str) -> set[str]:
    return {content for content, _ in _found(sentence)}


@pytest.mark.parametrize(("sentence", "expected"), [
    # jobs: news, start dates, promotions, contracts (the turn is dated 2024-11-03)
    ("I got the job at Lindqvist Labs!", {("Got the job at Lindqvist Labs in November 2024.",
                                           "2024-11"), ("Works at Lindqvist Labs.", None)}),
    ("I accepted the offer from Brightwell as a staff engineer.",
     {("Got the job at Brightwell as staff engineer in November 2024.", "2024-11"),
      ("Works at Brightwell.", None), ("Works as staff engineer.", None)}),
    ("I start as a curriculum designer on 7 January.",
     {("Starts as curriculum designer on 7 January 2025.", "2025-01-07"),
      ("Works as curriculum designer.", None)}),
    ("I'm starting at Fjordline as a backend developer next month.",
     {("Starts as backend developer at Fjordline in December 2024.", "2024-12"),
      ("Works as backend developer.", None), ("Works at Fjordline.", None)}),
    ("I just got promoted to engineering manager.",
     {("Promoted to engineering manager in November 2024.", "2024-11"),
      ("Works as engineering manager.", None)}),
    ("I signed the contract with Hedmark Press in October.",
     {("Signed the contract with Hedmark Press in October 2024.", "2024-10")}),
    ("I got hired at Quayside Health as a nurse.",
     {("Hired at Quayside Health as nurse in November 2024.", "2024-11"),
      ("Works at Quayside Health.", None), ("Works as nurse.", None)}),
    ("I started at Norrsken as a product designer.",
     {("Works as product designer.", None), ("Works at Norrsken.", None)}),
    ("I'm now the lead designer at Kestrel Health.",
     {("Is the lead designer at Kestrel Health.", None), ("Works at Kestrel Health.", None)}),
    ("I went freelance in May 2023.",
     {("Went freelance in May 2023.", "2023-05"), ("Is freelance.", None)}),
    ("I've been a nurse for 12 years.", {("Has been a nurse for 12 years.", None)}),
    ("I'm not a lecturer, just a tutor.", {("Is a tutor, not a lecturer.", None)}),
    ("I'm not a programmer, I hack things together.", {("Is not a programmer.", None)}),
    # milestones and publications, with partial and relative dates
    ("I finished my first draft in August.",
     {("Finished their first draft in August 2024.", "2024-08")}),
    ("I submitted my thesis last month.",
     {("Submitted their thesis in October 2024.", "2024-10")}),
    ("We bought a house in March 2022.", {("Bought a house in March 2022.", "2022-03")}),
    ("I ran my first marathon last spring.",
     {("Ran their first marathon in 2023.", "2023")}),
    ("I started climbing in January 2024.", {("Started climbing in January 2024.", "2024-01")}),
    ("I took up pottery two years ago.", {("Started pottery in 2022.", "2022")}),
    ("My paper got accepted at EMNLP!",
     {("Their paper was accepted at EMNLP in November 2024.", "2024-11")}),
    ("I got my first paper accepted.",
     {("Got their paper accepted in November 2024.", "2024-11")}),
    # where they live
    ("We're based in Aarhus.", {("Lives in Aarhus.", None)}),
    ("My partner and I live in Ghent.", {("Lives in Ghent.", None), ("Has a partner.", None)}),
    ("Home is Valparaíso these days.", {("Lives in Valparaíso.", None)}),
    ("I live just outside Utrecht.", {("Lives near Utrecht.", None)}),
    ("We relocated from Leeds to Bristol in 2021.",
     {("Moved from Leeds to Bristol in 2021.", "2021"), ("Lives in Bristol.", None)}),
    ("We're moving to Porto in September.", {("Moves to Porto in September 2025.", "2025-09")}),
    ("I did my undergrad in Nairobi.", {("Did their undergrad in Nairobi.", None)}),
    ("I've used Emacs since my undergrad in Nairobi.",
     {("Did their undergrad in Nairobi.", None), ("Uses Emacs.", None)}),
    # tools, likes, dislikes
    ("I switched to Neovim.", {("Uses Neovim.", None)}),
    ("I'm using Helix these days.", {("Uses Helix.", None)}),
    ("Typst is my go-to editor.", {("Uses Typst (editor).", None)}),
    ("I make all my slides in Keynote.", {("Makes their slides in Keynote.", None)}),
    ("I can't really stand open offices.", {("Dislikes open offices.", None)}),
    ("I don't really enjoy intervals.", {("Dislikes intervals.", None)}),
    ("I'm really into bouldering.", {("Likes bouldering.", None)}),
    ("I'm not big on meetings.", {("Dislikes meetings.", None)}),
    ("I'd rather walk than drive.", {("Would rather walk than drive.", None)}),
    # goals, limits, what they work on
    ("Goal is a complete first draft by the summer holidays.",
     {("Wants a complete first draft by the summer holidays.", None)}),
    ("I'm trying to get better at public speaking.",
     {("Wants to get better at public speaking.", None)}),
    ("I want to finish the thesis by June.", {("Wants to finish the thesis by June.", None)}),
    ("My thesis has a word limit of 80,000.",
     {("Their thesis has a word limit of 80,000.", None)}),
    ("I charge $95/hour.", {("Charges $95/hour.", None)}),
    ("My research is on soil microbes in peatlands.",
     {("Their research is on soil microbes in peatlands.", None)}),
    ("I have a cat, Miso, who is 4.", {("Has a cat named Miso.", None)}),
    ("My daughters Alma and Vera are 7 and 9.", {("Has daughters, Alma and Vera.", None)}),
    ("We have two kids, Ada and Sam.", {("Has two kids, Ada and Sam.", None)}),
    # standing instructions
    ("Please always cite sources with author and year.",
     {("Always cite sources with author and year.", None)}),
    ("Please don't rewrite my prose.", {("Don't rewrite their prose.", None)}),
    ("Use British spelling.", {("Use British spelling.", None)}),
    ("I want the thesis to use British spelling.", {("Wants British spelling.", None)}),
    # a hedge or someone else's words before "but" do not hide the person's own claim
    ("My coach says I should do intervals, but I really don't enjoy intervals.",
     {("Dislikes intervals.", None)}),
])
def test_phrasing_is_read(sentence: str, expected: set[tuple[str, str | None]]) -> None:
    assert set(_found(sentence)) == expected


@pytest.mark.parametrize("sentence", [
    # other people's facts
    "My sister started at Google as an intern.",
    "My brother got the job at Spotify!",
    "My brother just got promoted to director.",
    "Our neighbours relocated from Leeds to Bristol in 2021.",
    "She signed the contract with Hedmark Press in October.",
    "My friend is really into bouldering.",
    "My sister's thesis has a word limit of 80,000.",
    # hypotheticals, wishes, plans that are only maybe
    "If I moved to Porto I'd miss Berlin.",
    "If I got the job at Lindqvist Labs, I'd start in March.",
    "Imagine I start as a curriculum designer on 7 January, but then hate it.",
    "I might switch to Neovim.",
    "Maybe I'll go freelance next year.",
    "Suppose I finished my first draft in August.",
    "I wish I lived in Lisbon.",
    # questions
    "Should I switch to Neovim?",
    "Did I sign the contract with Hedmark Press in October?",
    "Am I really into bouldering, or is it a phase?",
    "Is Typst my go-to editor now?",
    # reported speech
    "My manager said I got the job at Lindqvist Labs.",
    "He thinks I'm the lead designer at Kestrel Health.",
    # things that are not the person's milestone or tool
    "I finished the course you linked.",
    "I started using it yesterday.",
    "I started thinking about it in January 2024.",
    "I switched to the other branch.",
    "I'm using the second approach.",
    "I'm into it.",
    "I moved to the new laptop.",
    "I switched to Spanish for the meeting.",
])
def test_trap_gives_nothing(sentence: str) -> None:
    assert _found(sentence) == []


@pytest.mark.parametrize("sentence", [
    "> I got the job at Lindqvist Labs!",
    "`I switched to Neovim.`",
    'She wrote: "I finished my first draft in August."',
])
def test_quoted_or_code_gives_nothing(sentence: str) -> None:
    assert _found(sentence) == []


def test_assistant_turns_give_nothing() -> None:
    body = ("### User · 2024-11-03 10:00\n\nThanks.\n\n### Assistant · 2024-11-03 10:01\n\n"
            "Congratulations! I got the job at Lindqvist Labs is what you'd say. I'm based in "
            "Aarhus and I switched to Neovim.\n")
    assert extract_sentences(person_sentences(body, "conversation")) == []


def test_a_month_without_a_year_is_the_last_one_of_that_name() -> None:
    assert _found("I finished my first draft in December.", when="2024-03-10") == [
        ("Finished their first draft in December 2023.", "2023-12")]


@pytest.mark.parametrize(("sentence", "expected"), [
    ("I've been at Kestrel Health since 2021.",
     {("Joined Kestrel Health in 2021.", "2021"), ("Works at Kestrel Health.", None)}),
    ("I quit my job in March.", {("Left their job in March 2024.", "2024-03")}),
    ("I was laid off from Brightwell last month.",
     {("Was laid off from Brightwell in October 2024.", "2024-10")}),
    ("We had a baby girl!", {("Their baby girl was born in November 2024.", "2024-11"),
                             ("Has a girl.", None)}),
    ("I just turned 40.", {("Turned 40 in November 2024.", "2024-11"), ("Is 40.", None)}),
    ("I can't work on weekends.", {("Can't work on weekends.", None)}),
    ("I have to pick up my kids at 3.", {("Has to pick up their kids at 3.", None)}),
    ("My deadline is 15 March.", {("Deadline is 15 March.", None)}),
    ("I'm preparing for the IELTS exam.", {("Is preparing for the IELTS exam.", None)}),
    ("I find open-plan offices exhausting.", {("Finds open-plan offices exhausting.", None)}),
    ("I'm more of a tea person.", {("Is a tea person.", None)}),
])
def test_more_phrasing_is_read(sentence: str, expected: set[tuple[str, str | None]]) -> None:
    assert set(_found(sentence)) == expected


@pytest.mark.parametrize("sentence", [
    "My colleague has been at Kestrel Health since 2021.",
    "My dad retired in 2020.",
    "If I quit my job in March, what happens to my pension?",
    "My sister had a baby girl!",
    "He just turned 40.",
    "My boss can't work on weekends.",
    "I find this really helpful.",
    "I'm preparing for the meeting.",
    "Her deadline is 15 March.",
])
def test_more_traps_give_nothing(sentence: str) -> None:
    assert _found(sentence) == []


@pytest.mark.parametrize(("sentence", "expected"), [
    ("Got the job at Lindqvist Labs!", {("Got the job at Lindqvist Labs in November 2024.",
                                         "2024-11"), ("Works at Lindqvist Labs.", None)}),
    ("Moved to Porto in September!", {("Moved to Porto in September 2024.", "2024-09"),
                                      ("Lives in Porto.", None)}),
    ("Finally submitted my thesis!", {("Submitted their thesis in November 2024.", "2024-11")}),
    ("I finished the first draft of my novel in August.",
     {("Finished the first draft in August 2024.", "2024-08")}),
    ("I live in Tartu, so I should probably get winter tyres.", {("Lives in Tartu.", None)}),
])
def test_said_without_i_or_beside_a_hedge(sentence: str,
                                          expected: set[tuple[str, str | None]]) -> None:
    assert set(_found(sentence)) == expected


@pytest.mark.parametrize("sentence", [
    "Moved to Porto? Not yet.",
    "She moved to Porto in September.",
    "Got the job at Lindqvist Labs, if the reference check passes.",
    "It's a story about a woman who moved to Porto in September.",
    "If I live in Tartu, so I should get winter tyres.",
])
def test_subjectless_traps_give_nothing(sentence: str) -> None:
    assert _found(sentence) == []


@pytest.mark.parametrize(("sentence", "expected"), [
    ("I'm based out of Rotterdam.", {("Lives in Rotterdam.", None)}),
    ("Please keep answers short.", {("Keep answers short.", None)}),
    ("Answer in English please.", {("Answer in English.", None)}),
    ("I'm a big believer in test-driven development.",
     {("Believes in test-driven development.", None)}),
    ("I'd like to get better at Spanish.", {("Wants to get better at Spanish.", None)}),
    ("I want to finish my thesis.", {("Wants to finish their thesis.", None)}),
])
def test_style_goals_and_places(sentence: str, expected: set[tuple[str, str | None]]) -> None:
    assert set(_found(sentence)) == expected


@pytest.mark.parametrize("sentence", [
    "My team is based out of Rotterdam.",
    "Would you keep answers short?",
    "My mum is a big believer in homeopathy.",
    "I'd like to know why this fails.",
    "Answer in Markdown.",
])
def test_style_goal_place_traps(sentence: str) -> None:
    assert _found(sentence) == []


@pytest.mark.parametrize("sentence", [
    "I work on weekends.",
    "I study at Edinburgh.",
    "The goal is to make this function faster.",
    "I want to finish the script by Friday.",
    "Goal is to fix the failing tests.",
])
def test_a_task_or_a_schedule_is_no_goal_or_field(sentence: str) -> None:
    assert all(c.category not in ("objective", "other") for c in extract_sentences(
        person_sentences(f"### User · 2024-11-03 10:00\n\n{sentence}\n", "conversation")))


def test_what_was_started_is_kept() -> None:
    assert _found("I started learning Rust in 2023.") == [("Started learning Rust in 2023.",
                                                           "2023")]
