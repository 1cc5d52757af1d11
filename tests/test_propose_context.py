"""What the person says across sentences and turns (issue #30, recall on conversations nobody
tuned on): a name given after the thing it names, "them" said a sentence after "my turtles",
the answer to the other side's question, a claim said inside a reason or a "reminds me",
a business of theirs named in passing, verbs of liking and of activity. Each with the near
miss that must still give nothing."""

from __future__ import annotations

import pytest

from pcp_cli.extract import extract_sentences, person_sentences
from pcp_cli.extract.segments import person_sentences as sentences_of

TURN = "2024-05-08"


def _said(*turns: str, asked: str | None = None) -> set[str]:
    """The claims proposed from the person's `turns`, one after another (the other side
    saying "ok" between them, or `asked` before the first)."""
    body = f"### Assistant · {TURN} 09:59\n\n{asked}\n\n" if asked else ""
    for turn in turns:
        body += f"### User · {TURN} 10:00\n\n{turn}\n\n### Assistant · {TURN} 10:01\n\nok\n\n"
    return {c.content for c in extract_sentences(person_sentences(body, "conversation"))}


def _answer(question: str, answer: str) -> set[str]:
    return _said(answer, asked=question)


# -- what a sentence points back to ---------------------------------------------------------------
def test_the_names_said_after_the_pets_are_the_pets_names() -> None:
    assert "Has dogs, Pepper, Precious and Panda." in _said(
        "So I got these new collars and tags for my dogs - so cute!",
        "Sure! See them with their new collars.",
        "I've had them for 3 years! Their names are Pepper, Precious and Panda.")


@pytest.mark.parametrize("turns", [
    # two kinds of thing the names could be: no guess
    ("I love my dogs and my cats. Their names are Mo and Jo.",),
    # a son, and "her name": not his
    ("My son started school. Her name is Leo.",),
    # nothing of theirs named before
    ("Their names are Mo and Jo.",),
    # one name for several
    ("My dogs are lovely. Their name is Mo.",),
])
def test_names_that_could_be_anyones_are_not_given_to_anything(turns: tuple[str, ...]) -> None:
    assert not any(c.startswith("Has") and ("Mo" in c or "Leo" in c) for c in _said(*turns))


def test_a_son_named_in_the_sentence_after() -> None:
    assert "Has a son, Leo." in _said("My son started school this week. His name is Leo.")


def test_them_is_read_from_the_sentence_before_in_the_same_turn() -> None:
    assert "Likes holding their turtles." in _said(
        "I got my turtles in May. I love holding them.")


def test_their_after_a_plural_of_the_claim_belongs_to_it() -> None:
    assert "Likes dogs and their quirks." in _said("I love dogs and their quirks.")
    assert not any(c.startswith("Likes") for c in _said("I love their songs."))


def test_it_is_never_read_from_the_sentence_before() -> None:
    # "it" is the yoga, not the one thing called "my …"
    assert not any("community" in c for c in _said(
        "One of my goals is to keep teaching yoga and supporting my community. "
        "I'm passionate about helping people find peace and joy through it."))


def test_them_is_not_read_from_another_turn_or_from_two_things() -> None:
    assert not any("holding" in c for c in _said("I got my turtles in May.",
                                                   "I love holding them."))
    assert not any("holding" in c for c in _said(
        "I got my turtles and my lizards in May. I love holding them."))
    assert not any("holding" in c for c in _said(  # the kittens may be meant
        "I got my turtles when the neighbours had kittens. I love holding them."))


def test_the_sentences_before_are_kept_for_each_sentence() -> None:
    body = (f"### User · {TURN} 10:00\n\nA one. A two.\n\n### Assistant · {TURN} 10:01\n\n"
            f"Nice. What is your favourite style? Tell me!\n\n### User · {TURN} 10:02\n\nB one.\n")
    said = sentences_of(body, "conversation")
    assert [(s.work, s.before, s.earlier, s.asked) for s in said] == [
        ("A one.", "", (), ""),
        ("A two.", "A one.", ("A one.",), ""),
        ("B one.", "", ("A one.", "A two."), "What is your favourite style?"),
    ]


# -- the answer read with its question ------------------------------------------------------------
@pytest.mark.parametrize(("question", "answer", "expected"), [
    ("Dance is my go-to. Got any fave styles?",
     "Cool! I love all dances, but contemporary is my top pick.", "Favourite style: contemporary."),
    ("What's your favourite book?", "Dune is my favorite.", "Favourite book: Dune."),
    ("Where do you live?", "Just outside Lyon.", "Lives in Lyon."),
    ("Where are you from?", "Originally from Sweden!", "Is from Sweden."),
    ("What do you do for work?", "Nurse, at the city hospital.",
     "Is a nurse at the city hospital."),
    ("So what do you do?", "Oh, a counselor now.", "Is a counselor."),
    ("Do you have any pets?", "Yes, two cats!", "Has two cats."),
    ("What do you do for fun?", "Hiking and painting, mostly.", "Likes hiking and painting."),
])
def test_a_short_answer_is_read_with_the_question(question: str, answer: str,
                                                  expected: str) -> None:
    assert expected in _answer(question, answer)


@pytest.mark.parametrize(("question", "answer"), [
    ("Where is the party?", "In Lyon."),  # not where they live
    ("What do you do on weekends?", "Hiking."),  # no role
    ("Do you want any pets?", "Yes, two cats!"),  # a wish, not a have
    ("How are you?", "Yes, two cats!"),
    ("Nice!", "Lyon."),
    ("What did you do today?", "Hiking."),  # a day, not a pastime
    ("Any hobbies?", "Nothing much."),
])
def test_an_answer_to_another_question_is_not_read_as_one(question: str, answer: str) -> None:
    assert not any(c.startswith(("Lives", "Is a", "Has two", "Is from", "Likes")) for c in
                   _answer(question, answer))


def test_a_favourite_without_its_question_stays_a_like() -> None:
    assert _answer("Nice.", "Dune is my favorite.") == {"Likes Dune."}


# -- a claim inside a reason, a "reminds me", a "since" -------------------------------------------
@pytest.mark.parametrize(("sentence", "expected"), [
    ("That reminds me that I've been wanting to try birdwatching.",
     "Wants to try birdwatching."),
    ("Reminds me how much I love performing.", "Likes performing."),
    ("Now that I live in Lyon, I cycle everywhere.", "Lives in Lyon."),
    ("Since I'm a nurse, nights are normal for me.", "Is a nurse."),
])
def test_a_claim_said_inside_a_reason_or_a_reminder_is_read(sentence: str,
                                                            expected: str) -> None:
    assert expected in _said(sentence)


@pytest.mark.parametrize("sentence", [
    "If I lived in Lyon, I would cycle everywhere.",
    "When I was a nurse, nights were normal.",
    "That reminds me of my friend who is a nurse.",
])
def test_a_claim_under_if_or_when_or_about_someone_else_is_not(sentence: str) -> None:
    assert not any(c.startswith(("Lives", "Is a")) for c in _said(sentence))


# -- a business of theirs, named in passing -------------------------------------------------------
@pytest.mark.parametrize(("sentence", "expected"), [
    ("I just launched an ad campaign for my clothing store.", "Has a clothing store."),
    ("BTW, I found a cool new fashion piece for my store.", "Has a store."),
    ("Things at my own bakery are busy.", "Runs their own bakery."),
])
def test_a_business_of_theirs_named_in_passing(sentence: str, expected: str) -> None:
    assert expected in _said(sentence)


@pytest.mark.parametrize("sentence", [
    "I went to my local store.",
    "I'm searching for a place to open my dance studio.",
    "I want my own bakery.",
    "I'm on a business trip.",
    "That's none of my business.",
    "Should I open my own store?",
])
def test_a_store_they_use_or_only_want_is_not_theirs(sentence: str) -> None:
    assert not any(c.startswith(("Has a", "Runs")) for c in _said(sentence))


# -- verbs of liking and of activity --------------------------------------------------------------
@pytest.mark.parametrize(("sentence", "expected"), [
    ("I've always been awed by birds.", "Likes birds."),
    ("I'm fascinated by volcanoes.", "Likes volcanoes."),
    ("I run 3 times a week, mostly along the canal.", "Runs 3 times a week."),
    ("I go climbing every weekend.", "Goes climbing every weekend."),
    ("I've been learning Spanish for a year.", "Has been learning Spanish for a year."),
    ("I started taking pottery classes.", "Started taking pottery classes."),
    ("I've been volunteering at the animal shelter.", "Volunteers at the animal shelter."),
    ("I've been getting into cooking more and trying out new recipes.",
     "Likes cooking and trying out new recipes."),
    ("I really don't enjoy intervals, I like long slow runs where I can think.",
     "Likes long slow runs."),
])
def test_verbs_of_liking_and_activity(sentence: str, expected: str) -> None:
    assert expected in _said(sentence)


@pytest.mark.parametrize("sentence", [
    "I'm always in awe of people who can climb mountains.",  # what they do, not people
    "I check my email 5 times a day.",  # no activity
    "I've been feeling tired.",
    "I am writing all my plans down.",
    "Got a lot of finals coming up, so I've been studying real hard.",  # how, not what
    "I've been working on it all week.",
    "My friend thinks I should run more.",
])
def test_what_only_looks_like_a_liking_or_an_activity(sentence: str) -> None:
    found = _said(sentence)
    assert not any(c.startswith(("Likes", "Runs", "Has been", "Is writing", "Checks"))
                   for c in found), found
