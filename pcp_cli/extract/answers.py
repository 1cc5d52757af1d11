"""Short answers, read with the question they answer.

In a conversation people say much of who they are in reply to a question, and a reply leaves
out what the question said: "What's your favourite style?" — "Contemporary is my top pick."
"Where do you live?" — "Just outside Lyon." "What do you do?" — "Nurse, at the city
hospital." "Do you have any pets?" — "Yes, two cats!" "What do you do for fun?" — "Hiking
and painting, mostly." The rules here read the person's
sentence together with `Sentence.asked`, the question the other side asked just before their
turn (`segments.person_sentences`), and take from the question only what the answer leaves
out (the kind of favourite; that a place is where they live). The claim still comes from the
person's words: the question alone proposes nothing, and an answer to another question
(or none) is not read as one.

Each answer rule reads only the first sentence of the turn (where an answer is), and the
sentence gates of `rules` hold (no question, hypothetical or report).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from pcp_cli.extract.rules import (
    _VAGUE,
    ADV,
    I_AM,
    ORG,
    PLACE,
    Candidate,
    _keystone,
    _role_ok,
    _trim_place,
    rule,
)
from pcp_cli.extract.segments import Sentence
from pcp_cli.extract.spoken import _COUNT, FAMILY, PETS, _has, _kin_words

_SHORT = r"(?=.{1,80}$)"  # an answer is short: a long clause is given up at once
_OPENER = r"(?:(?:oh|well|yeah|yes|yep|yup|sure|definitely|hmm|haha|lol|ah|so)[,!.]*\s+)*"


def _answers(s: Sentence, question: re.Pattern[str]) -> re.Match[str] | None:
    """The question's match when `s` opens the person's reply to such a question."""
    if s.before or not s.asked:
        return None
    return question.search(s.asked)


# -- "What's your favourite X?" -----------------------------------------------------------------
_FAVOURITE_Q = re.compile(
    r"\b(?:favou?rite|fave|go-to|top)\s+(?P<k>[a-z]+(?:\s+[a-z]+)?)\s*(?:\?|\bof\b|\bto\b|"
    r"\bthese\b|\bright now\b|\bat the moment\b)", re.I)


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


@rule(rf"^(?P<v>(?!(?:it|this|that|these|those|they|he|she|you|your|there|here|what|which|who|"
      rf"I|mine|all|both)\b)[\w'&+-]+(?:\s+[\w'&+-]+){{0,4}}?)\s+(?:is|are|has to be|would be|"
      rf"'s)\s+{ADV}(?:my|the)\s+(?:absolute\s+|all-time\s+)?(?:top pick|favou?rite|fave|"
      r"number one|go-to|pick)\s*(?:[.!]|$)")
def _favourite_answer(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "Got any fave styles?" — "I love all dances, but contemporary is my top pick." """
    asked = _FAVOURITE_Q.search(s.asked) if s.asked else None
    value = m.group("v").strip()
    if asked is None or _VAGUE.match(value):
        return
    kind = " ".join(_singular(w) for w in asked.group("k").lower().split())
    if kind in ("thing", "one", "part", "way", "kind", "type", "pick"):
        return
    yield _keystone("preference", f"Favourite {kind}: {value}", s, 0.65)


# -- "Where do you live?" -------------------------------------------------------------------------
_WHERE_Q = re.compile(r"\bwhere\s+(?:do|are)\s+you\s+(?P<what>live|living|based|from|come\s+from|"
                      r"grow\s+up|call\s+home)\b", re.I)


@rule(rf"^{_SHORT}{_OPENER}(?:(?:I\s+live|I'm|I\s+am|we\s+live|we're)\s+)?"
      rf"(?:(?:in|near|just\s+outside|outside|right\s+in|originally\s+from|from)\s+)?"
      rf"(?P<place>{PLACE})(?:,?\s+(?:now|"
      r"these days|for now|at the moment|originally))?\s*[.!]*$")
def _where_answer(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "Where do you live?" — "Just outside Lyon." """
    asked = _answers(s, _WHERE_Q)
    place = _trim_place(m.group("place"))
    if asked is None or not place or _VAGUE.match(place) or place in ("I", "Yes", "No"):
        return
    if re.match(r"(?:from|come\s+from|grow\s+up)", asked.group("what"), re.I):
        yield _keystone("identity", f"Is from {place}", s, 0.6, value=f"from {place}")
    else:
        yield _keystone("identity", f"Lives in {place}", s, 0.6, slot="residence", value=place)


# -- "What do you do?" ----------------------------------------------------------------------------
_WORK_Q = re.compile(r"\bwhat\s+(?:do\s+you\s+do(?:\s+for\s+(?:work|a\s+living))?\s*\?|"
                     r"(?:is|'s)\s+your\s+(?:job|profession|line\s+of\s+work|day\s+job)|"
                     r"kind\s+of\s+work\s+do\s+you\s+do)", re.I)


@rule(rf"^{_SHORT}{_OPENER}(?:{I_AM}\s+)?(?:(?P<article>an?)\s+)?"
      rf"(?P<role>[a-z][\w-]*(?:\s+[a-z][\w-]*){{0,3}}?)"
      rf"(?:,?\s+(?:at|for|with|in)\s+(?P<org>{ORG}|(?:an?|the)\s+[\w' -]{{2,40}}?))?"
      r"(?:,?\s+(?:now|these days|mostly|by trade))?\s*[.!]*$")
def _work_answer(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "What do you do?" — "Nurse, at the city hospital." / "A counselor now." """
    if _answers(s, _WORK_Q) is None:
        return
    role = m.group("role").strip()
    role = role if role.isupper() else role.lower()
    if not _role_ok(role):
        return
    article = m.group("article") or ("an" if role[0].lower() in "aeiou" else "a")
    org = m.group("org")
    yield _keystone("identity", f"Is {article} {role}" + (f" at {org}" if org else ""), s, 0.65,
                    slot="role", value=role)


# -- "Do you have any pets?" ----------------------------------------------------------------------
_HAVE_Q = re.compile(rf"\b(?:do|did)\s+you\s+(?:have|own|got)\s+(?:any\s+)?(?:pets?|animals|"
                     rf"{PETS}|{FAMILY}|kids|children)\b", re.I)


@rule(rf"^{_SHORT}{_OPENER}(?:(?:I|we)\s+(?:have|'ve got|have got|got)\s+)?"
      rf"(?P<count>an?|one|{_COUNT})\s+"
      rf"(?:(?:little|young|grown-up|adult|teenage|sweet|lovely|rescue|adopted)\s+)*"
      rf"(?P<who>{PETS}|{FAMILY}|kids|children)\b(?P<rest>.*)")
def _have_answer(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "Do you have any pets?" — "Yes, two cats!" (what "I have two cats" says; a bare count
    is read only as an answer to that question)."""
    if _answers(s, _HAVE_Q) is None or re.match(r"\s*(?:named|called)\b", m.group("rest")):
        return  # "… named X": the names-in-passing rules say it, with the names
    who = _kin_words(m.group("who"))
    count = m.group("count").lower()
    yield _keystone("relationship", _has(who, count="" if count in ("a", "an", "one") else count),
                    s, 0.6, value=f"has {who}")


# -- "What do you do for fun?" --------------------------------------------------------------------
_FUN_Q = re.compile(r"\bwhat\s+(?:else\s+)?do\s+you\s+(?:like\s+to\s+)?do\s+(?:for\s+fun|in\s+"
                    r"your\s+(?:free|spare|down)\s*time|to\s+(?:relax|unwind|de-?stress))|"
                    r"\b(?:any|your|other)\s+hobbies\b|\bwhat\s+are\s+you\s+into\b", re.I)


@rule(rf"^{_SHORT}{_OPENER}(?:mostly\s+|mainly\s+|probably\s+|lots\s+of\s+|a\s+lot\s+of\s+)?"
      r"(?P<v>(?!(?:nothing|something|anything|everything|thing)\b)[a-z]{3,}ing\b"
      r"(?:\s+[\w'-]+){0,5}?)"
      r"(?:,?\s+(?:mostly|mainly|these days|lately|for sure))?\s*[.!]*$")
def _fun_answer(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "What do you do for fun?" — "Hiking and painting, mostly." """
    if _answers(s, _FUN_Q) is None:
        return
    value = m.group("v")
    yield _keystone("preference", f"Likes {value[0].lower() + value[1:]}", s, 0.6)
