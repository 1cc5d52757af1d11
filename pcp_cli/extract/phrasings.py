"""More phrasings of the same kinds of self-statement `rules` reads: news of a job, a signed
contract or a finished draft, told in the past tense with a partial date ("I got the job at
X!", "I start as a … on 7 January", "I finished my first draft in August"); where the person
lives said another way ("we're based in …", "home is …"); tools, likes and dislikes, goals,
limits and standing instructions to the assistant in more words.

Registered into `rules.RULES` on import (the package imports this module), so every rule here
is held to the same gates as the others: the clause must start with the person ("I …", "we …",
"my …"), and a question, a hypothetical, reported speech or masked text (code, quotes, pasted
documents) never reaches it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from pcp_cli.extract.rules import (
    _KIN,
    _KNOWN_TOOLS,
    _PARTNER,
    _VAGUE,
    ADV,
    I_AM,
    I_HAVE,
    ORG,
    PLACE,
    Candidate,
    _event,
    _keystone,
    _role_ok,
    _sentence_case,
    _third_person,
    _trim_place,
    _value,
    rule,
)
from pcp_cli.extract.segments import Sentence

WE = r"(?:we|my\s+(?:wife|husband|partner|spouse|girlfriend|boyfriend|family)\s+and\s+I)"
WE_ARE = r"(?:we're|we are|my\s+(?:wife|husband|partner|spouse|family)\s+and\s+I\s+are)"
ROLE = r"(?P<role>[\w/+&'-]+(?:\s+[\w/+&'-]+){0,5}?)"
_ROLE_END = (r"(?=\s*(?:[,.;:!()]|\s(?:at|for|with|in|on|from|starting|and|but|so|next|this|"
             r"last)\b|$))")


def _org_ok(org: str | None) -> bool:
    return bool(org) and org.lower() not in ("a", "an", "the", "i", "my", "it", "them", "home")


# -- jobs: news of one, a start date, a contract ----------------------------------------------
@rule(rf"^(?:I\s+)?{ADV}(?:got|landed|accepted|took|was offered|got offered|have accepted|"
      rf"'ve accepted)\s+(?:the|a|an|my)\s+(?:new\s+|dream\s+|first\s+)?(?:job|position|role|"
      rf"offer|job offer|post)\s+(?:at|with|from)\s+(?P<org>{ORG})(?:\s+as\s+(?:an?\s+|the\s+)?"
      rf"{ROLE}{_ROLE_END})?")
def _got_job(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    org = m.group("org")
    if not _org_ok(org):
        return
    role = (m.group("role") or "").strip()
    role = role if role and _role_ok(role) else ""
    event = _event("job", f"Got the job at {org}" + (f" as {role}" if role else ""), s,
                   announced=True)
    if event is not None:
        yield event
    yield _keystone("identity", f"Works at {org}", s, 0.65, slot="employer", value=org)
    if role:
        yield _keystone("identity", f"Works as {role}", s, 0.65, slot="role", value=role)


@rule(rf"^(?:I\s+{ADV}(?:start|begin)|{I_AM}\s+{ADV}(?:starting|beginning|joining)|"
      rf"I\s+will\s+{ADV}(?:start|begin|join)|I'll\s+{ADV}(?:start|begin|join))"
      rf"(?:\s+(?:my\s+new\s+job|a\s+new\s+job|work|working))?"
      rf"(?:\s+(?:at|with)\s+(?P<org>{ORG}))?"
      rf"\s+as\s+(?:an?\s+|the\s+|their\s+|a\s+new\s+)?{ROLE}{_ROLE_END}"
      rf"(?:\s+(?:at|with|for)\s+(?P<org2>{ORG}))?")
def _start_as(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    role = m.group("role").strip()
    if not _role_ok(role):
        return
    org = m.group("org") or m.group("org2")
    org = org if _org_ok(org) else None
    event = _event("job", f"Starts as {role}" + (f" at {org}" if org else ""), s)
    if event is not None:
        yield event
    yield _keystone("identity", f"Works as {role}", s, 0.65, slot="role", value=role)
    if org:
        yield _keystone("identity", f"Works at {org}", s, 0.65, slot="employer", value=org)


@rule(rf"^(?:{I_AM}\s+{ADV}(?:starting|joining)|I\s+{ADV}start)\s+(?:at|with)\s+(?P<org>{ORG})"
      r"(?=\s*(?:[,.;:!]|\s(?:on|in|next|this|from|after|and)\b|$))")
def _starting_at(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    org = m.group("org")
    if not _org_ok(org):
        return
    event = _event("job", f"Starts at {org}", s)
    if event is not None:
        yield event
        yield _keystone("identity", f"Works at {org}", s, 0.6, slot="employer", value=org)


@rule(rf"^I\s+{ADV}(?:got|was|have been|'ve been)\s+{ADV}hired\s+(?:at|by)\s+(?P<org>{ORG})"
      rf"(?:\s+as\s+(?:an?\s+|the\s+)?{ROLE}{_ROLE_END})?")
def _hired(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    org = m.group("org")
    if not _org_ok(org):
        return
    role = (m.group("role") or "").strip()
    role = role if role and _role_ok(role) else ""
    event = _event("job", f"Hired at {org}" + (f" as {role}" if role else ""), s,
                   announced=True)
    if event is not None:
        yield event
    yield _keystone("identity", f"Works at {org}", s, 0.65, slot="employer", value=org)
    if role:
        yield _keystone("identity", f"Works as {role}", s, 0.65, slot="role", value=role)


@rule(rf"^(?:(?:I|we)\s+)?{ADV}(?:signed|have signed|'ve signed)\s+(?:the|a|my|our)\s+"
      r"(?:new\s+|book\s+|publishing\s+|first\s+)?(?P<what>contract|lease|deal|book deal|"
      rf"offer|papers|agreement)\s+(?:with|for|at)\s+(?P<org>{ORG})")
def _signed(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    org = m.group("org")
    if not _org_ok(org):
        return
    event = _event("milestone", f"Signed the {m.group('what').lower()} with {org}", s,
                   announced=True)
    if event is not None:
        yield event


@rule(rf"^I\s+{ADV}(?:went|have gone|'ve gone|am going|'m going)\s+(?P<state>freelance|"
      r"self-employed|independent|part-time|full-time)\b")
def _went_freelance(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    state = m.group("state").lower()
    event = _event("job", f"Went {state}", s)
    if event is not None:
        yield event
    if state in ("freelance", "self-employed", "independent"):
        yield _keystone("identity", f"Is {state}", s, 0.65, slot="work_state", value=state)


@rule(rf"^{I_AM}\s+{ADV}(?:now\s+)?the\s+{ROLE}\s+(?:at|for|of)\s+(?P<org>{ORG})")
def _the_role_at(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    role = m.group("role").strip()
    org = m.group("org")
    if not _role_ok(role) or not _org_ok(org):
        return
    yield _keystone("identity", f"Is the {role} at {org}", s, 0.75, slot="role", value=role)
    yield _keystone("identity", f"Works at {org}", s, 0.7, slot="employer", value=org)


@rule(rf"^I\s+{ADV}(?:do|work in)\s+(?P<v>[\w -]{{2,40}}?)\s+for\s+a\s+living\b")
def _for_a_living(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = m.group("v").strip()
    if not _VAGUE.match(value):
        yield _keystone("identity", f"Does {value} for a living", s, 0.7)


@rule(rf"^{I_AM}\s+{ADV}(?:not|no longer)\s+(?:really\s+)?(?P<article>an?)\s+{ROLE}{_ROLE_END}"
      r"(?P<rest>.*)")
def _not_a(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    """"I'm not a programmer"; "I'm not a lecturer, just a tutor" says what they are."""
    role = m.group("role").strip()
    but = re.match(r"\s*,?\s*(?:(?:I'm|I am)\s+)?(?:just|only|but|merely|simply)\s+(?:an?\s+)?"
                   r"(?P<role>[\w/+&'-]+(?:\s+[\w/+&'-]+){0,4}?)(?=\s*(?:[,.;:!()]|\s(?:at|for|and|"
                   r"but|so|in)\b|$))", m.group("rest"))
    if but and _role_ok(but.group("role")):
        other = but.group("role")
        article = "an" if other[0].lower() in "aeiou" else "a"
        yield _keystone("identity", f"Is {article} {other}, not {m.group('article')} {role}", s,
                        0.7, slot="role", value=other)
        return
    if _role_ok(role):
        yield _keystone("identity", f"Is not {m.group('article')} {role}", s, 0.65)


# -- milestones: a draft finished, a degree done, a first race run ---------------------------
_MILESTONE_NOUN = (r"(?:draft|manuscript|thesis|dissertation|book|novel|chapter|degree|phd|"
                   r"masters?|master's|bachelor's|certification|certificate|exam|exams|marathon|"
                   r"half[- ]marathon|5k|10k|triathlon|race|house|flat|apartment|visa|residency|"
                   r"citizenship|driving test|driver's licen[cs]e|driving licen[cs]e|probation|"
                   r"grant|fellowship|scholarship|award|prize|funding|bootcamp|apprenticeship|"
                   r"internship|portfolio|course|qualification|defen[cs]e|viva)")


@rule(rf"^(?:I|we)\s+{ADV}(?:have\s+|'ve\s+)?{ADV}(?P<verb>finished|completed|submitted|passed|"
      r"defended|handed in|sent off|sent in|bought|ran|won|earned|received|got|was awarded|"
      r"was granted)\s+(?P<what>(?:my|our|the|a|an)\s+(?:(?:very\s+)?first\s+|second\s+|"
      r"third\s+|final\s+|new\s+|full\s+|complete\s+|whole\s+|entire\s+|rough\s+|"
      rf"[\w'-]+\s+){{0,3}}?{_MILESTONE_NOUN})\b")
def _milestone(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    verb = m.group("verb").lower()
    what = m.group("what")
    if re.search(r"\b(?:this|that|the)\s+(?:course|book|chapter)\b", what, re.I) and \
            verb in ("finished", "completed"):
        return  # "I finished the course you linked": no milestone of theirs
    event = _event("milestone", f"{_sentence_case(verb)} {what}", s)
    if event is not None:
        yield event


_NOT_HOBBY = frozenset((
    "using", "working", "thinking", "getting", "feeling", "wondering", "looking", "trying",
    "having", "doing", "going", "seeing", "noticing", "writing", "reading", "talking", "asking",
    "making", "taking", "building", "coding", "planning", "setting", "testing", "running into",
    "wanting", "needing", "worrying", "struggling", "hating", "liking", "to",
))


@rule(rf"^I\s+{ADV}(?:started|began|took up|picked up)\s+(?P<act>[a-z]+ing|[a-z]+)"
      r"(?P<rest>\b.*)")
def _took_up(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    """"I started running in January 2024", "I took up pottery two years ago": a past start
    with a date of its own (the turn's date alone says nothing of when)."""
    act = m.group("act").lower()
    took = re.search(r"\b(?:took|picked) up\b", m.group(0), re.I)
    if act in _NOT_HOBBY or not (act.endswith("ing") or took) or act in (
            "a", "an", "the", "my", "it", "this", "that", "at", "as", "with", "on", "in"):
        return
    if not re.search(r"\b(?:19|20)[0-9]{2}\b|\bago\b|\blast\b|\bin\s+[A-Z]", s.work):
        return
    what = re.split(r"\s+(?:in|on|last|back|about|around|since|when|after|before|ago|at|"
                    r"[0-9]+|a|one|two|three|four|five|six|this|and|but)\b", m.group("rest"))[0]
    what = _value(what) if act.endswith("ing") else ""
    if what and (len(what.split()) > 4 or _VAGUE.match(what)):
        what = ""
    event = _event("milestone", f"Started {act}" + (f" {what}" if what else ""), s)
    if event is not None:
        yield event


@rule(r"^(?:my|our)\s+(?:first\s+|new\s+|latest\s+|workshop\s+|conference\s+|journal\s+)?"
      r"(?P<what>paper|article|book|chapter|abstract|talk|submission|poster|essay|short story)"
      r"\s+(?:got|was|has been|just got|finally got|is)\s+(?:finally\s+)?(?P<verb>accepted|"
      rf"published|approved|funded)\b(?:\s+(?:at|to|in|by|for)\s+(?P<venue>{ORG}))?")
def _accepted(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    venue = m.group("venue")
    summary = (f"Their {m.group('what').lower()} was {m.group('verb').lower()}"
               + (f" at {venue}" if venue and _org_ok(venue) else ""))
    event = _event("publication", summary, s, announced=True)
    if event is not None:
        yield event


@rule(rf"^I\s+{ADV}got\s+(?:my\s+)?(?:first\s+)?(?:a\s+)?(?P<what>paper|article|abstract|talk|"
      rf"poster)\s+accepted\b(?:\s+(?:at|to|in|by|for)\s+(?P<venue>{ORG}))?")
def _got_accepted(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    venue = m.group("venue")
    summary = (f"Got their {m.group('what').lower()} accepted"
               + (f" at {venue}" if venue and _org_ok(venue) else ""))
    event = _event("publication", summary, s, announced=True)
    if event is not None:
        yield event


# -- where they live ----------------------------------------------------------------------
@rule(rf"^(?:{WE}\s+{ADV}(?:live|reside)|{WE_ARE}\s+{ADV}(?:based|living|settled|located))"
      rf"\s+in\s+(?P<place>{PLACE})")
def _we_live(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    place = _trim_place(m.group("place"))
    if place and not _VAGUE.match(place):
        yield _keystone("identity", f"Lives in {place}", s, 0.75, slot="residence", value=place)


@rule(rf"^(?:(?:my\s+)?home\s+(?:is|these days is|base is)|I\s+{ADV}call)\s+"
      rf"(?P<place>{PLACE})(?:\s+home)?(?=\s*(?:[,.;:!]|\s(?:now|these|and|but|since|for)\b|$))")
def _home_is(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    place = _trim_place(m.group("place"))
    if place and not _VAGUE.match(place) and place.lower() not in ("home", "my"):
        yield _keystone("identity", f"Lives in {place}", s, 0.65, slot="residence", value=place)


@rule(rf"^(?:I|{WE})\s+{ADV}(?:live|'re based|am based|are based)\s+(?:just\s+)?(?:outside|near|"
      rf"close to|on the outskirts of)\s+(?P<place>{PLACE})")
def _live_near(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    place = _trim_place(m.group("place"))
    if place and not _VAGUE.match(place):
        yield _keystone("identity", f"Lives near {place}", s, 0.65, slot="residence",
                        value=place)


@rule(rf"^(?:{I_AM}|{WE_ARE}|we're|I'm)\s+{ADV}(?:moving|relocating)\s+(?:back\s+)?to\s+"
      rf"(?P<place>{PLACE})")
def _moving(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    place = _trim_place(m.group("place"))
    if not place or _VAGUE.match(place):
        return
    event = _event("move", f"Moves to {place}", s)
    if event is not None:
        yield event


@rule(rf"^(?:I\s+{ADV}(?:have\s+|'ve\s+)?{ADV}(?:relocated|emigrated)|{WE}\s+{ADV}(?:have\s+|"
      rf"'ve\s+)?{ADV}(?:relocated|moved|emigrated))\s+(?:over\s+)?"
      rf"from\s+(?P<old>{PLACE})\s+to\s+(?P<new>{PLACE})")
def _relocated_from(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    old, new = _trim_place(m.group("old")), _trim_place(m.group("new"))
    if not new or _VAGUE.match(new):
        return
    event = _event("move", f"Moved from {old} to {new}", s)
    if event is not None:
        yield event
    yield _keystone("identity", f"Lives in {new}", s, 0.7, slot="residence", value=new)


# -- tools, likes, dislikes -------------------------------------------------------------------
@rule(rf"^(?:{I_AM}\s+{ADV}using|{I_AM}\s+{ADV}on|I\s+{ADV}(?:switched|"
      rf"migrated|changed)\s+(?:over\s+)?to|{I_HAVE}\s+{ADV}(?:switched|migrated)\s+"
      rf"(?:over\s+)?to|I\s+{ADV}swear\s+by|I\s+{ADV}rely\s+on)\s+(?P<v>(?-i:[A-Z][\w+#.-]*"
      r"(?:\s+[A-Z][\w+#.-]*)?)|[a-z][\w+#.-]*)(?P<rest>.*)")
def _using_now(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    tool = m.group("v").strip(" .,")
    if tool.lower() not in _KNOWN_TOOLS and not re.search(
            r"\b(?:now|these days|full[- ]time|for everything|daily|every day|as my)\b",
            m.group("rest"), re.I):
        return
    if _VAGUE.match(tool) or tool.lower() in ("a", "an", "the", "my", "it", "call", "board"):
        return
    yield _keystone("preference", f"Uses {tool}", s, 0.7, value=f"uses {tool}")


@rule(rf"^(?-i:(?P<tool>[A-Z][\w+#.-]*(?:\s+[A-Z][\w+#.-]*)?))\s+is\s+{ADV}my\s+"
      r"(?:main\s+|daily\s+|primary\s+|go-to\s+|usual\s+|preferred\s+|favou?rite\s+|default\s+)+"
      r"(?P<k>editor|ide|language|shell|terminal|browser|tool|os|distro|framework|database|"
      r"notes app|note-taking app|app|stack)\b")
def _tool_is_my(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    tool = m.group("tool")
    if tool.lower() in ("it", "this", "that", "which", "what"):
        return
    yield _keystone("preference", f"Uses {tool} ({m.group('k').lower()})", s, 0.7,
                    value=f"uses {tool}")


@rule(rf"^(?:{I_AM}\s+{ADV}(?:really\s+|very\s+|big\s+|hugely\s+)?into|I\s+{ADV}(?:really\s+)?dig)"
      r"\s+(?P<v>.+)")
def _into(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value and not _VAGUE.match(value) and len(value.split()) <= 8 and not \
            value.lower().startswith(("the ", "it", "this", "that")):
        yield _keystone("preference", f"Likes {value}", s, 0.6)


@rule(rf"^(?:{I_AM}\s+{ADV}(?:not\s+(?:big|great|keen)\s+on|not\s+into|sick of|tired of|"
      rf"fed up with)|"
      rf"I\s+{ADV}(?:avoid|can't deal with|cannot deal with))\s+(?P<v>.+)")
def _not_into(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value and not _VAGUE.match(value) and len(value.split()) <= 8 and not \
            value.lower().startswith(("the ", "it", "this", "that", "your")):
        lead = "Avoids" if "avoid" in m.group(0).lower().split(value)[0] else "Dislikes"
        yield _keystone("preference", f"{lead} {value}", s, 0.6)


@rule(r"^I'd\s+(?:much\s+)?rather\s+(?P<v>(?!not\b)[a-z][\w' -]+?)\s+than\s+(?P<w>[\w' -]+)")
def _rather(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value, other = _value(m.group("v")), _value(m.group("w"))
    if value and other and not _VAGUE.match(value) and len(value.split()) <= 8:
        yield _keystone("preference", f"Would rather {value} than {other}", s, 0.6)


@rule(rf"^I\s+{ADV}(?P<verb>make|write|do|build|keep|typeset|draw|draft)\s+(?:all\s+)?my\s+"
      r"(?P<what>[a-z][\w -]{1,30}?)\s+(?:in|with|on|using)\s+(?P<tool>(?-i:[A-Z][\w+#.-]*"
      r"(?:\s+[A-Z][\w+#.-]*)?)|[a-z][\w+#.-]*)")
def _make_in(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    tool = m.group("tool")
    if tool.lower() not in _KNOWN_TOOLS and not tool[0].isupper():
        return
    if _VAGUE.match(tool) or tool in ("I", "My"):
        return
    verb = m.group("verb").lower()
    verbs = {"make": "Makes", "write": "Writes", "do": "Does", "build": "Builds",
             "keep": "Keeps", "typeset": "Typesets", "draw": "Draws", "draft": "Drafts"}
    yield _keystone("preference", f"{verbs[verb]} their {m.group('what').strip()} in {tool}", s,
                    0.7, value=f"uses {tool}")


# -- goals, limits, their work ------------------------------------------------------------------
_TASK = re.compile(r"\b(?:this|that|it|these|those|the|my)\s+(?:[\w-]+\s+)?(?:script|function|"
                   r"module|code|bug|query|test|tests|file|class|page|component|endpoint|"
                   r"pipeline|migration|refactor|PR|pull request|branch|notebook|cell|regex|"
                   r"formula|spreadsheet|email|message|slide|slides)\b|\bthis\b", re.I)


@rule(r"^(?:the\s+|main\s+|big\s+|the\s+main\s+)?(?:goal|aim|target)"
      r"(?:\s+(?:for|this)\s+[\w ]{1,20}?)?"
      r"\s*(?:is|:)\s+(?P<v>(?:a|an|to)\s+.+)")
def _goal_is(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value_to_clause_end(m.group("v"))
    if not value or _VAGUE.match(re.sub(r"^(?:a|an|to)\s+", "", value)):
        return
    if len(value.split()) > 14 or _TASK.search(value):
        return
    if value.lower().startswith("to "):
        yield _keystone("objective", f"Wants to {value[3:]}", s, 0.65)
    else:
        yield _keystone("objective", f"Wants {value}", s, 0.65)


def _value_to_clause_end(text: str) -> str:
    """A goal may carry its deadline: "a first draft by the summer holidays"."""
    stop = re.search(r"\s*(?:[.;!?](?=\s|$)|[()\[\]]|\s{3,}|,\s+(?:and|but|so)\b|\s(?:but|so that|"
                     r"because|which|although|though|lol|haha)\b|$)", text)
    value = text[:stop.start()] if stop else text
    return value.strip(" ,-")


_AIMS = (r"(?:finish|complete|submit|pass|get|run|build|save|earn|hit|reach|move|lose|read|"
         r"write|publish|launch|ship|learn|become|land|find|go|stop|quit|cut|reduce|spend|"
         r"improve|start|switch|transition|retire|buy|pay off|sleep|exercise|train|qualify|"
         r"defend|apply|grow|double|raise|increase|keep|stick)")


@rule(rf"^(?:I\s+{ADV}(?:want|need|hope|plan|intend|aim|mean|have)\s+to|I'd\s+(?:really\s+)?"
      rf"(?:like|love)\s+to|{I_AM}\s+{ADV}(?:trying|hoping|planning|aiming|determined|desperate|"
      rf"keen|going)\s+to|{I_AM}\s+{ADV}(?:working|aiming|saving)\s+(?:towards?|for))\s+"
      rf"(?P<v>{_AIMS}\b.+?\bby\s+(?:the\s+end\s+of\s+)?(?:the\s+)?(?:[A-Z]\w+|next\s+\w+|"
      r"this\s+\w+|(?:spring|summer|autumn|fall|winter|christmas|easter)\b[\w ]*|[0-9]{4}|"
      r"[0-9]{1,2}\s+\w+)\b.*)")
def _aim_by(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value_to_clause_end(m.group("v"))
    if value and len(value.split()) <= 16 and not _TASK.search(value):
        yield _keystone("objective", f"Wants to {value}", s, 0.65)


@rule(rf"^{I_AM}\s+{ADV}(?:trying|hoping|planning|aiming|working|determined)\s+(?:hard\s+)?"
      r"to\s+(?P<v>(?:get better at|get fit|get in shape|be more|eat|sleep|exercise|cut down|"
      r"spend less|stop|keep up|stick to|go part-time|go freelance|get back into|get a job|"
      r"land a|find a (?:new )?job|get promoted|run a|run my first|save)\b.+)")
def _trying_more(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value and len(value.split()) <= 12:
        yield _keystone("objective", f"Wants to {value}", s, 0.6)


@rule(r"^(?:my|our|the)\s+(?P<what>thesis|dissertation|paper|essay|book|manuscript|article|"
      r"report|application|proposal|chapter|talk)\s+(?:has|have|has got)\s+(?:a|an)\s+"
      r"(?P<kind>(?:hard\s+|strict\s+)?(?:word|page|character|time)\s+(?:limit|cap|count|maximum))"
      r"\s+of\s+(?P<n>[0-9][0-9,.]*\s*(?:k|words|pages|minutes|characters)?)")
def _limit(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    what = m.group("what").lower()
    yield _keystone("constraint", f"Their {what} has a {m.group('kind').lower()} of "
                    f"{m.group('n').strip()}", s, 0.7)


@rule(r"^(?:(?:my|the)\s+|(?:there's|there is|I have|I've got|it has)\s+an?\s+)(?:hard\s+|"
      r"strict\s+)?(?P<kind>word|page)\s+(?:limit|count|cap)\s+(?:is\s+|of\s+)(?:about\s+)?"
      r"(?P<n>[0-9][0-9,.]*[0-9]\s*k?|[0-9]+\s*k?)")
def _limit_is(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    yield _keystone("constraint", f"Has a {m.group('kind').lower()} limit of {m.group('n')}", s,
                    0.65)


@rule(rf"^(?:I\s+{ADV}charge|my\s+(?:hourly\s+|day\s+|daily\s+|usual\s+)?rate\s+is)\s+"
      r"(?P<v>(?:about\s+|around\s+|roughly\s+)?[$€£]?\s?[0-9][0-9,.]*\s*(?:[$€£]|k|dollars|euros|"
      r"pounds|CAD|USD|EUR|GBP|SEK|kr)?(?:\s*(?:/|an?|per)\s*(?:hour|hr|h|day|word|project|"
      r"month))?)")
def _rate(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = m.group("v").strip()
    if re.search(r"[0-9]", value):
        yield _keystone("other", f"Charges {value}", s, 0.65)


@rule(r"^(?:my|our)\s+(?:phd|research|thesis|dissertation|work|masters?|master's|project|"
      r"postdoc|startup|company|book|paper|workshop paper|podcast|newsletter)\s+(?:is|'s)\s+"
      r"(?:on|about|focused on|all about)\s+(?P<v>.+)")
def _work_on(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value and not _VAGUE.match(value) and len(value.split()) <= 12:
        subject = m.group(0).split()[1].lower()
        yield _keystone("other", f"Their {subject} is on {value}", s, 0.6)


@rule(rf"^I\s+{ADV}(?:research|study|work on)\s+(?P<v>[a-z][\w -]+)")
def _research(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value and not _VAGUE.match(value) and 1 <= len(value.split()) <= 10 and not \
            re.match(r"(?:a|an|the|this|that|it|my|your|at|in|on|with|for|from|under|hard|late|"
                     r"early|weekends?|weekdays|mornings?|evenings?|nights?|days?|full-time|"
                     r"part-time|remotely|alone|best|together|every|each|most|mostly|"
                     r"sometimes|often)\b", value, re.I):
        verb = m.group(0).split()[-len(m.group("v").split()) - 1].lower()
        lead = {"research": "Researches", "study": "Studies"}.get(verb, "Works on")
        yield _keystone("other", f"{lead} {value}", s, 0.6)


@rule(rf"^I\s+(?:did|got|completed|finished|studied for)\s+my\s+(?P<what>undergrad(?:uate)?"
      rf"(?:\s+degree)?|bachelor'?s(?:\s+degree)?|master'?s(?:\s+degree)?|masters|phd|degree|"
      rf"BSc|MSc|BA|MA|MBA)\s+(?:in\s+(?P<field>(?-i:[a-z][\w -]+?))\s+)?(?:in|at)\s+"
      rf"(?P<place>{PLACE})")
def _studied_at(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    place = _trim_place(m.group("place"))
    if not place or _VAGUE.match(place):
        return
    field_ = f" in {m.group('field').strip()}" if m.group("field") else ""
    yield _keystone("identity", f"Did their {m.group('what')}{field_} in {place}", s, 0.7)


@rule(r"^I\b.*?\b(?:since|during|in|from|after|before)\s+my\s+(?P<what>undergrad(?:uate)?(?:\s+degree)?|"
      rf"bachelor'?s|master'?s|masters|phd|BSc|MSc|BA|MA)\s+(?:in|at)\s+(?P<place>{PLACE})")
def _since_my_degree(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    place = _trim_place(m.group("place"))
    if place and not _VAGUE.match(place):
        yield _keystone("identity", f"Did their {m.group('what')} in {place}", s, 0.65)


# -- people and pets ---------------------------------------------------------------------------
@rule(rf"^we\s+(?:also\s+)?(?:have|'ve got|have got)\s+(?P<n>a|an|one|two|three|four|"
      rf"[0-9])\s+(?P<who>{_KIN})\s*,\s*(?P<name>(?-i:[A-Z][a-z\u00e0-\u00ff]+)(?:\s+and\s+"
      r"(?-i:[A-Z][a-z\u00e0-\u00ff]+))?)(?=\s*(?:[,.;!()]|\s(?:who|and|aged)\b|$))")
def _kin_named(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    yield _keystone("relationship", f"Has {m.group('n')} {m.group('who')}, {m.group('name')}", s,
                    0.75, value=f"has {m.group('n')} {m.group('who')}")


@rule(rf"^my\s+(?P<n>two\s+|three\s+|four\s+)?(?P<who>{_KIN})\s*,?\s+(?P<name>(?-i:[A-Z][a-z\u00e0-\u00ff]+)"
      r"(?:\s+and\s+(?-i:[A-Z][a-z\u00e0-\u00ff]+))?)(?=\s*(?:[,.;!()]|\s(?:is|are|who|and|has|have|"
      r"turned|just|was|were|loves?|hates?|goes|go)\b|$))")
def _my_kin_named(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    who = m.group("who").lower()
    name = m.group("name")
    if name.split()[0] in ("And", "Is", "Are", "Just", "Was", "Has"):
        return
    count = (m.group("n") or "").strip()
    article = count or ("" if who.endswith("s") or " and " in name else "a")
    yield _keystone("relationship", f"Has {article + ' ' if article else ''}{who}, {name}", s,
                    0.7, value=f"has {who}")


@rule(rf"^(?:my\s+(?P<who>{_PARTNER})\s+and\s+I\b)")
def _partner_and_i(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    yield _keystone("relationship", f"Has a {m.group('who').lower()}", s, 0.65, slot="partner",
                    value=m.group("who").lower())


# -- standing instructions to the assistant ---------------------------------------------------
@rule(r"^(?:please\s+)?(?:always|from now on,?|in general,?|going forward,?)\s+(?P<v>(?:use|give|"
      r"answer|reply|write|respond|include|cite|show|keep|add|point out|tell|explain|format|"
      r"put|stick to|spell)\b.+)")
def _always_do(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value and len(value.split()) <= 14 and not re.search(r"\b(?:this|that|it)\b$", value):
        yield _keystone("rule", f"Always {value}", s, 0.6)


@rule(r"^(?:please\s+)?(?:don't|do not|never)\s+(?:ever\s+)?(?P<verb>rewrite|change|edit|touch|"
      r"reword|rephrase|translate|summari[sz]e|simplify|correct|fix|shorten)\s+(?P<v>my\s+[\w -]+)")
def _dont_touch(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value:
        yield _keystone("rule", f"Don't {m.group('verb').lower()} {_third_person(value)}", s,
                        0.6)


@rule(r"^(?:please\s+)?(?:use|write in|stick to)\s+(?P<v>(?:British|American|Canadian|"
      r"Australian|UK|"
      r"US|Oxford)\s+(?:English\s+)?(?:spelling|english|conventions))")
def _spelling(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    yield _keystone("rule", f"Use {m.group('v')}", s, 0.65)


@rule(r"^I\s+(?:always\s+)?(?:want|need|prefer|like)\s+(?:(?:my|the)\s+\w+\s+"
      r"(?:in|to use|to be in)\s+|"
      r"to\s+use\s+)?"
      r"(?P<v>(?:British|American|Canadian|Australian|UK|US|Oxford)\s+(?:English\s+)?spelling)")
def _want_spelling(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    yield _keystone("preference", f"Wants {m.group('v')}", s, 0.65)




# -- more of the same: how long somewhere, leaving, family news, limits on time --------------
@rule(rf"^{I_HAVE}\s+{ADV}been\s+(?:working\s+)?(?:at|with)\s+(?P<org>{ORG})\s+"
      r"(?P<how>since|for)\b")
def _been_at(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    org = m.group("org")
    if not _org_ok(org):
        return
    if m.group("how").lower() == "since":
        event = _event("job", f"Joined {org}", s)
        if event is not None:
            yield event
    yield _keystone("identity", f"Works at {org}", s, 0.75, slot="employer", value=org)


@rule(rf"^I\s+{ADV}(?:(?P<verb>left|quit)\s+my\s+(?:old\s+|day\s+|last\s+)?(?:job|position|role)"
      rf"(?:\s+at\s+(?P<org>{ORG}))?|(?:was|got)\s+(?P<laid>laid off|made redundant|let go)"
      rf"(?:\s+(?:from|at|by)\s+(?P<org2>{ORG}))?|(?P<retired>retired))\b")
def _left_job(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    org = m.group("org") or m.group("org2")
    org = org if _org_ok(org) else None
    if m.group("retired"):
        summary = "Retired"
    elif m.group("laid"):
        summary = f"Was {m.group('laid').lower()}" + (f" from {org}" if org else "")
    else:
        summary = "Left their job" + (f" at {org}" if org else "")
    event = _event("job", summary, s)
    if event is not None:
        yield event


@rule(rf"^(?:(?:we|I)\s+{ADV}had\s+(?:a|our|my)\s+(?:first\s+|second\s+)?(?P<baby>baby(?:\s+"
      rf"(?:girl|boy))?|son|daughter)|my\s+(?P<child>son|daughter|baby)(?:,?\s+(?-i:[A-Z][a-z]+),?)?"
      r"\s+was\s+born)\b")
def _baby(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    who = (m.group("baby") or m.group("child")).lower()
    event = _event("relationship", f"Their {who} was born", s, announced=True)
    if event is not None:
        yield event
    yield _keystone("relationship", f"Has a {who.split()[-1] if who != 'baby' else 'baby'}", s,
                    0.65, value=f"has {who}")


@rule(r"^I\s+(?:just\s+)?turned\s+(?P<age>[1-9][0-9])\b")
def _turned(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    event = _event("milestone", f"Turned {m.group('age')}", s, announced=True)
    if event is not None:
        yield event
    yield _keystone("identity", f"Is {m.group('age')}", s, 0.65, slot="age",
                    value=m.group("age"))


@rule(r"^I\s+(?:can't|cannot|can not|don't|do not|never)\s+(?P<what>work|do calls|take calls|"
      r"do meetings|meet|travel|work late)\s+(?P<v>(?:on|at|after|before|during|in|past|over)\s+"
      r"(?:the\s+)?(?:weekends?|evenings?|nights?|mornings?|fridays?|mondays?|weekdays|"
      r"[0-9]{1,2}(?::[0-9]{2})?\s*(?:am|pm)?|school holidays|holidays)\b)")
def _cant_when(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    neg = "Doesn't" if m.group(0).lower().split()[1] in ("don't", "do", "never") else "Can't"
    yield _keystone("constraint", f"{neg} {m.group('what')} {m.group('v')}", s, 0.7)


@rule(r"^I\s+(?:have to|need to|must|'ve got to|have got to)\s+(?P<v>(?:pick up|collect|"
      r"drop off)\s+"
      r"(?:my|the)\s+(?:kids?|children|son|daughter)\b.*|(?:leave|log off|stop work|be home)\s+"
      r"(?:by|at|before)\s+[0-9].*)")
def _must_by(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value:
        yield _keystone("constraint", f"Has to {value}", s, 0.65)


@rule(r"^(?:my|our)\s+(?:hard\s+|final\s+|submission\s+|thesis\s+)?deadline\s+is\s+(?P<v>.+)")
def _deadline(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value and not _VAGUE.match(value) and len(value.split()) <= 8:
        yield _keystone("constraint", f"Deadline is {value}", s, 0.65)


@rule(rf"^{I_AM}\s+{ADV}(?P<verb>applying|preparing|studying|training|revising)\s+for\s+"
      r"(?P<v>(?:my|the|a|an)\s+.+)")
def _preparing(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value and len(value.split()) <= 10 and not re.search(
            r"\b(?:this|that|it|your|the (?:meeting|call|interview question))\b", value, re.I):
        yield _keystone("objective", f"Is {m.group('verb').lower()} for {value}", s, 0.6)


@rule(rf"^I\s+{ADV}find\s+(?P<v>[\w' -]{{2,40}}?)\s+(?:really\s+|very\s+|super\s+|so\s+|"
      r"incredibly\s+)?(?P<how>distracting|exhausting|draining|stressful|annoying|overwhelming|"
      r"relaxing|calming|motivating|energi[sz]ing|helpful|useful)\b")
def _find(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = m.group("v").strip()
    if _VAGUE.match(value) or value.lower().startswith(("the ", "your ", "this ", "that ")):
        return
    yield _keystone("preference", f"Finds {value} {m.group('how').lower()}", s, 0.6)


@rule(rf"^{I_AM}\s+{ADV}(?:more\s+of\s+)?an?\s+(?P<v>(?-i:[A-Z][\w+#.-]*)|cat|dog|tea|coffee|"
      r"morning|night|mac|linux|windows|vim|emacs|pen-and-paper|paper|spreadsheet)\s+person\b")
def _person(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = m.group("v")
    article = "an" if value[0].lower() in "aeiou" else "a"
    yield _keystone("preference", f"Is {article} {value} person", s, 0.65)


@rule(rf"^(?:just|finally|officially|recently)?\s*(?:moved|relocated)\s+(?:back\s+)?to\s+"
      rf"(?P<place>{PLACE})")
def _moved_no_subject(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    """"Moved to Porto in September!": the person's own turn, told without "I"."""
    place = _trim_place(m.group("place"))
    if not place or _VAGUE.match(place):
        return
    event = _event("move", f"Moved to {place}", s)
    if event is not None:
        yield event
    yield _keystone("identity", f"Lives in {place}", s, 0.65, slot="residence", value=place)


@rule(rf"^(?:just|finally|officially)?\s*(?P<verb>finished|completed|submitted|passed|defended|"
      rf"handed in|sent off)\s+(?P<what>(?:my|our)\s+(?:(?:very\s+)?first\s+|final\s+|full\s+|"
      rf"complete\s+|rough\s+|[\w'-]+\s+){{0,3}}?{_MILESTONE_NOUN})\b")
def _milestone_no_subject(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    event = _event("milestone", f"{_sentence_case(m.group('verb').lower())} {m.group('what')}",
                   s, announced=True)
    if event is not None:
        yield event


@rule(rf"^(?:{I_AM}|I'm)\s+{ADV}based\s+out\s+of\s+(?P<place>{PLACE})")
def _based_out_of(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    place = _trim_place(m.group("place"))
    if place and not _VAGUE.match(place):
        yield _keystone("identity", f"Lives in {place}", s, 0.7, slot="residence", value=place)


@rule(r"^(?:please\s+)?keep\s+(?:your\s+|the\s+)?(?P<what>answers|replies|responses|"
      r"explanations|summaries)\s+(?P<how>short|brief|concise|simple|to the point|under\s+[0-9]+\s+"
      r"\w+)\b")
def _keep_answers(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    yield _keystone("rule", f"Keep {m.group('what').lower()} {m.group('how')}", s, 0.6)


@rule(r"^(?:please\s+)?(?:answer|reply|respond|talk to me)\s+(?:to me\s+)?in\s+"
      r"(?P<lang>(?-i:[A-Z][a-z]+))(?:\s+(?:please|only|from now on))?(?=\s*(?:[,.;!]|$))")
def _answer_in(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    lang = m.group("lang")
    if lang in ("Markdown", "Bullet", "Bullets", "Code", "Detail", "Full", "Short"):
        return
    yield _keystone("rule", f"Answer in {lang}", s, 0.6)


@rule(rf"^{I_AM}\s+{ADV}an?\s+(?:big\s+|firm\s+|strong\s+|huge\s+|great\s+)?believer\s+in\s+"
      r"(?P<v>.+)")
def _believer(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value and not _VAGUE.match(value) and len(value.split()) <= 10:
        yield _keystone("preference", f"Believes in {value}", s, 0.6)
