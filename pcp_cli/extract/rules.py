"""Plain first-person self-statements, as candidate keystones and timeline events.

Each rule is anchored at the start of a clause whose subject is the person ("I …", "I'm …",
"My partner …"), so "my sister lives in Lyon" or "he said I'm a natural" never match. A
sentence is skipped whole when it is a question or a hypothetical or wish ("if", "suppose",
"imagine", "would", …); one with only a hedge ("maybe", "should") or reported speech ("said",
"told", "thinks", …) in it gives just its parts free of them (`claim_pieces`). Values stop
at the end of the clause and lose their trailing hedges; first-person words in them become
third-person ("my" → "their").

English only: a sentence in another language matches no rule and yields nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from pcp_cli.extract.dates import resolve
from pcp_cli.extract.decay import Decay, decay_of
from pcp_cli.extract.fingerprint import words as _words
from pcp_cli.extract.segments import Sentence
from pcp_cli.extract.sensitive import special_category


@dataclass(frozen=True)
class Candidate:
    """One proposed fact: a keystone (`category` from the PCP v1 keystone vocabulary) or a
    timeline event (`category` from the timeline vocabulary, with `date`)."""

    kind: str  # "keystone" | "timeline_event"
    category: str
    content: str
    confidence: float
    sentence: Sentence
    # A fact of which the person has one value at a time ("residence", "employer", "role"):
    # a newer value supersedes the older one.
    slot: str | None = None
    value: str = ""  # what identifies the fact within its slot (normalized by fingerprint)
    date: str | None = None
    sensitivity: str = "medium"
    # The special category (health, religion, …) it states, if any: proposed at `high`.
    special: str | None = None
    # How long it stays fresh (extract/decay.py): `pcp propose` turns it into `stale_after`.
    decay: Decay | None = None


# -- what makes a sentence no claim -------------------------------------------------------------
_NOT_A_CLAIM = re.compile(
    r"\b(?:if|suppose|supposing|imagine|imagining|pretend|pretending|hypothetically|"
    r"let's say|lets say|what if|as if|as though|role-?play|roleplaying|my character|wish|"
    r"would|could|might|should|maybe|perhaps|probably|unless|whether|someday|one day|"
    r"fictional|(?<!my )(?<!first )(?:story|novel)|scenario|example|e\.g|sample|template|"
    r"persona)\b", re.I)
_REPORTED = re.compile(
    r"\b(?:said|says|say|told|tells|tell|(?:thinks|thought|think)(?!\s*(?:[.,;:!)]|$))|asked|"
    r"asks|wrote|writes|"
    r"claims|claimed|believes|believed|assume|assumes|assumed|joked|jokes|called me|"
    r"according to|quote|quoted)\b", re.I)

_CLAUSE_SPLIT = re.compile(
    r"(?:,\s*|\s+)(?:and|but|so|plus|also|though)\s+(?=(?:I|I'm|I've|my|My|we|We|we're|We're)\b)|"
    r",\s+but\s+|;\s*|\s+-{1,2}\s+|"
    r"\s+\u2014\s*|:\s+(?=(?:I|I'm|My)\b)|,\s+(?=I(?:'m|'ve)?\s)|,?\s+(?:and\s+)?(?=please\b)|\s*[\U0001F300-\U0001FAFF\u2600-\u27BF]+\s*")
_FILLER = re.compile(
    r"^(?:(?:(?:no|nope)[,:!.]+\s*)|(?:(?:ok|okay|oh|yeah|yes|yep|hi|hey|hello|thanks|"
    r"thank you|sure|right|cool|great|perfect|ugh|lol|haha)\b[,:!.]*\s*)|"
    r"(?:(?:also|and|but|so|well|honestly|basically|anyway|anyways|actually|btw|by the way|"
    r"fwiw|for context|for reference|for the record|as you know|just so you know|fyi|"
    r"quick context|some context|context|background|note|ps|p\.s\.|currently|these days|"
    r"right now|nowadays|at the moment|at present|today|now|lately|personally|"
    r"for what it's worth|to be honest|tbh|in general|generally|as of (?:now|today)|"
    r"i (?:already |honestly |really |just )?know(?: that)?)\b[,:!.]?\s*))+", re.I)
_LEADING_TIME = re.compile(
    r"^(?:(?:in|since|back in|around|on|during|early|late|mid|last|this)\s+[\w-]+(?:\s+[\w-]+)?"
    r"(?:\s+(?:19|20)[0-9]{2})?|(?:a|one|two|three|four|five|six|[0-9]+)\s+(?:years?|months?|"
    r"weeks?)\s+ago),\s+", re.I)

# What a clause of the person's may sit inside and still be said as true: a reason or a time
# that presupposes it ("Since I lost my job at Door Dash, …", "Now that I live in Lyon, …"),
# or a clause about it ("That reminds me that I've been wanting to …", "Reminds me how much
# I love performing", "I realised I'm a morning person"). Never "if", "when", "once": those
# may be about what is not so.
_SAID_INSIDE = re.compile(
    r"^(?:(?:ever\s+since|since|now\s+that|because|'cause|cause|after)\s+"
    r"|(?:(?:that|it|this|which|and\s+it)\s+)?(?:reminds?|reminded)\s+me\s+(?:that\s+|of\s+how\s+"
    r"much\s+|how\s+much\s+)?|I\s+(?:just\s+)?(?:realized|realised|remembered|forgot|noticed|"
    r"found out)\s+(?:that\s+|how\s+much\s+)?|(?:it\s+)?(?:goes\s+to\s+show|shows)\s+how\s+much\s+)"
    r"(?=(?:I|I'm|I've|my)\b)", re.I)

I_AM = r"(?:I'm|I am|Im)"
I_HAVE = r"(?:I've|I have)"
ADV = (r"(?:(?:really|actually|currently|now|still|also|mostly|mainly|usually|generally|always|"
       r"definitely|primarily|honestly|just|basically|pretty much|kind of|sort of|very much|"
       r"totally|absolutely|strongly|much|by far|largely|typically|normally|so|both|"
       r"officially|finally|happily|proudly|full-time|part-time|only|recently|newly|even|"
       r"already|genuinely|seriously|do|really do|sure|truly|absolutely)\s+)*")
_STOP = re.compile(
    r"\s*(?:[.;:!?,](?=\s|$)|[()\[\]]|\s{3,}|\s(?:and I|and (?:it|that|this|they|he|she|we|you|"
    r"my)\b|in the next\b|next (?:week|month|year)\b|but|so|because|since|as|"
    r"who|which|that's|where|when|while|although|though|until|unless|whereas|except|if|lol|haha)\b|$)")
_TRAILING = re.compile(
    r"(?:\s+(?:too|as well|a lot|lately|right now|these days|now|anyway|anyways|currently|"
    r"at the moment|nowadays|for now|for years|for a while|for ages|mostly|honestly|"
    r"in general|generally|though|btw|tbh|ok|okay|still))+$", re.I)
_VAGUE = re.compile(
    r"^(?:it|this|that|these|those|them|you|your|yours|the (?:idea|way|first|second|third|last|"
    r"former|latter|one|other|option|version|above|below|same|result|answer|approach|"
    r"suggestion)|how|what|when|where|why|which|who|one|some|something|anything|everything|"
    r"nothing|all|both|either|neither|here|there|to|a lot|lots|much|more|less|most)\b", re.I)
PLACE = (r"(?-i:(?:(?:a|an|the)\s+(?:[a-z-]+\s+){0,3}(?:town|village|city|suburb|area|part|"
         r"neighbou?rhood|island|region)\s+(?:near|outside|in|of|north of|south of|east of|"
         r"west of)\s+)?(?:the\s+)?[A-Z][\w'.-]*(?:(?:\s+|-)(?:de|da|do|del|di|la|le|am|an|upon|"
         r"on|sur|of|the|[A-Z][\w'.-]*))*(?:,\s*[A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*)*)?)")
ORG = r"(?-i:[A-Z0-9][\w&.'+-]*(?:\s+(?:&\s+)?[A-Z0-9][\w&.'+-]*){0,4})"
_SMALL_TAIL = re.compile(r"(?:\s+(?:de|da|do|del|di|la|le|am|an|upon|on|sur|of|the))+$")

_ROLE_WORD = re.compile(
    r"(?:er|or|ist|ian|ant|ent|ect|eur|euse|ee|ive|ef|ic|wright|smith|man|woman|nurse|lead|head|"
    r"chef|student|intern|dev|engineer|scientist|phd|candidate|teacher|major|grad|graduate|"
    r"undergrad|parent|mom|mum|dad|mother|father|owner|founder|cto|ceo|cfo|coo|vp|pm|sre|"
    r"ux|ui|qa|freelancer|contractor|analyst|architect|designer|coach|trainer|tutor|"
    r"professional|specialist|expert|veteran|officer|clerk|pilot|medic|paramedic|vet|"
    r"surgeon|dentist|pharmacist|therapist|psychologist|assistant|associate|fellow|postdoc|"
    r"staff|partner|principal|director|executive|admin|sysadmin|technician|mechanic|"
    r"electrician|plumber|carpenter|farmer|artist|photographer|musician|barista|"
    r"librarian|historian|journalist|editor|translator|interpreter|linguist|lawyer|attorney|"
    r"paralegal|accountant|auditor|economist|statistician|mathematician|physicist|chemist|"
    r"biologist|geologist|ecologist|oceanographer|researcher|professor|lecturer|academic|"
    r"scholar|homemaker|retiree|nomad|creator|youtuber|streamer|blogger|podcaster)s?$", re.I)
_NOT_ROLE = frozenset((
    "user", "users", "fan", "fans", "lover", "believer", "follower", "customer", "client",
    "subscriber", "beginner", "novice", "newbie", "newcomer", "bit", "lot", "little", "number",
    "matter", "sucker", "stickler", "worrier", "overthinker", "mess", "wreck", "speaker",
    "member", "winner", "loser", "reader", "listener", "viewer", "order", "answer", "letter",
    "paper", "power", "water", "other", "another", "big", "huge", "total", "complete", "real",
    "person", "people", "fraction", "kind", "sort", "type", "hurry", "rush", "position",
    "situation", "similar", "different", "weird", "strange", "good", "bad", "better", "worse",
    "great", "terrible", "certain", "fair", "rather", "quick", "question", "problem", "sure",
    "hard", "fast", "slow", "native", "non-native", "tester", "buyer", "seller", "renter",
    "owner-occupier", "introvert", "extrovert", "ambivert", "procrastinator", "perfectionist",
    "minimalist", "generalist", "pessimist", "optimist", "realist", "idealist",
    # what a person is, not what they do for a living
    "kid", "child", "teenager", "teen", "youngster", "adult", "grown-up", "human", "man",
    "woman", "guy", "girl", "boy", "lady", "gentleman", "sister", "brother", "daughter", "son",
    "mother", "father", "mom", "mum", "dad", "parent", "grandparent", "wife", "husband",
    "friend", "neighbour", "neighbor", "citizen", "immigrant", "expat", "local",
    "newcomer", "veteran", "survivor", "romantic", "dreamer", "believer", "lover", "nerd",
    "geek", "fanatic", "addict", "junkie", "enthusiast", "hobbyist", "amateur", "foodie",
))
_PERSONALITY = frozenset(("introvert", "extrovert", "ambivert", "procrastinator",
                          "perfectionist", "minimalist", "morning person", "night owl",
                          "early riser", "night person", "visual learner", "visual thinker"))
_KNOWN_TOOLS = frozenset((
    "vim", "neovim", "nvim", "emacs", "vscode", "python", "rust", "go", "golang", "git", "linux",
    "macos", "windows", "zsh", "bash", "fish", "tmux", "excel", "notion", "obsidian", "figma",
    "docker", "kubernetes", "terraform", "javascript", "typescript", "java", "kotlin", "swift",
    "ruby", "php", "scala", "haskell", "elixir", "clojure", "julia", "r", "sql", "postgres",
    "postgresql", "mysql", "sqlite", "react", "vue", "svelte", "angular", "django", "flask",
    "fastapi", "rails", "pandas", "numpy", "jupyter", "latex", "markdown", "ubuntu", "debian",
    "arch", "fedora", "nixos", "jetbrains", "pycharm", "intellij", "xcode", "spark", "dbt",
    "airflow", "snowflake", "bigquery", "aws", "gcp", "azure", "c", "c++", "c#", "ocaml",
    "zig", "lua", "perl", "matlab", "tableau", "powerbi", "sublime", "helix", "zed", "cursor",
))
_NUMBER_WORDS = r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|[0-9]{1,2})"
_KIN = (r"(?:(?:young|little|small|grown(?:-up)?|teenage|adult|adopted|twin|two|three)\s+)?"
        r"(?:kids?|children|child|sons?|daughters?|twins|grandchildren|grandkids|stepkids|"
        r"stepsons?|stepdaughters?|toddlers?|babies|baby|boys?|girls?|dogs?|cats?|pets?|"
        r"puppy|puppies|kittens?|rabbits?|horses?|parrots?)")
_PARTNER = r"(?:wife|husband|partner|spouse|girlfriend|boyfriend|fianc[ée]e?|fiance)"
_CHILD = r"(?:son|daughter|kids|children|baby|toddler|twins)"


def _value(text: str) -> str:
    """The value a rule captured, to the end of its clause, without trailing hedges."""
    stop = _STOP.search(text)
    value = text[:stop.start()] if stop else text
    value = _TRAILING.sub("", value.strip()).strip(" ,-")
    return value


def _third_person(text: str) -> str:
    swaps = {"my": "their", "My": "Their", "me": "them", "mine": "theirs", "myself": "themselves",
             "I": "they", "I'm": "they're", "I've": "they've", "our": "their", "us": "them",
             "we": "they", "We": "They"}
    return re.sub(r"\b(?:my|My|me|mine|myself|I'm|I've|I|our|us|we|We)\b",
                  lambda m: swaps[m.group(0)], text)


def _sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _trim_place(place: str) -> str:
    place = _SMALL_TAIL.sub("", place.strip()).strip(" ,.")
    return place


# -- the rules ---------------------------------------------------------------------------------
Rule = Callable[[re.Match[str], Sentence], Iterable["Candidate | None"]]
RULES: list[tuple[re.Pattern[str], Rule]] = []


def rule(pattern: str) -> Callable[[Rule], Rule]:
    def register(function: Rule) -> Rule:
        RULES.append((re.compile(pattern, re.I), function))
        return function
    return register


def _keystone(category: str, content: str, sentence: Sentence, confidence: float, *,
              slot: str | None = None, value: str = "", sensitivity: str = "medium",
              ) -> Candidate | None:
    """A keystone candidate; `content` in the person's words ("Likes my dogs"), made third
    person here. None when it is not self-contained (`self_contained`)."""
    whole = self_contained(content, sentence)
    if whole is None:
        return None
    special = special_category(whole)
    if special is not None:  # never a one-value slot, never served by default
        sensitivity, slot = "high", None
    text = _sentence_case(_third_person(whole)).rstrip(".") + "."
    return Candidate("keystone", category, text, confidence, sentence, slot=slot,
                     value=value or whole, sensitivity=sensitivity, special=special,
                     decay=decay_of(text, category, sentence.work))


_FUTURE = re.compile(r"\b(?:are|is|am|'re|'m)\s+(?:getting|moving|going|starting|leaving|"
                     r"relocating|joining|due|heading|off)\b|\bwill\b|\bgonna\b|"
                     r"\b(?:I|we)\s+start\b|\btomorrow\b|"
                     r"\bnext\s+(?:week|weekend|month|year|spring|summer|autumn|fall|winter)\b",
                     re.I)


def _event(category: str, summary: str, sentence: Sentence, *, announced: bool = False
           ) -> Candidate | None:
    """A timeline event dated by the sentence; `announced`: news told as it happens ("I got
    the job!"), dated by the turn's month when the sentence names no date."""
    whole = self_contained(summary, sentence)
    if whole is None:
        return None
    found = resolve(sentence.work, sentence.when, future=bool(_FUTURE.search(sentence.work)))
    date, relative, approx = found.date, found.relative, found.approx
    if date is None and announced and sentence.when and re.match(r"^[0-9]{4}-[0-9]{2}",
                                                                 sentence.when):
        date, relative = sentence.when[:7], True
    if date is None:
        return None
    special = special_category(whole)
    return Candidate("timeline_event", category,
                     _sentence_case(_third_person(whole)).rstrip(".")
                     + f" {said(date, approx)}.", 0.6 if relative else 0.8, sentence,
                     value=whole, date=date, sensitivity="high" if special else "medium",
                     special=special)


def said(date: str, approx: str = "") -> str:
    """A partial date as words: "in 2019", "in September 2024", "on 15 June 2024"; with
    `approx` (`dates.Dated`), "in the week of 1 May 2023", "on the weekend of 6 May 2023",
    "around 5 May 2023"."""
    from pcp_cli.extract.dates import MONTH_NAMES

    parts = date.split("-")
    if len(parts) == 1:
        return f"in {parts[0]}"
    month = MONTH_NAMES[int(parts[1]) - 1]
    if len(parts) == 2:
        return f"in {month} {parts[0]}"
    day = f"{int(parts[2])} {month} {parts[0]}"
    return {"week": f"in the week of {day}", "weekend": f"on the weekend of {day}",
            "about": f"around {day}"}.get(approx, f"on {day}")


# -- self-contained claims ----------------------------------------------------------------------
# Words that stand for something said elsewhere: a claim holding one from the person's sentence
# ("I love holding them" → "Likes holding them.") says nothing on its own.
_POINTING = re.compile(
    r"(?<![\w'])(?:it|its|it's|them|they|they're|their|theirs|these|those|this|he|him|his|she|"
    r"her|hers|you|your|yours|here|there|same|everything|anything|something|nothing|everyone|"
    r"anyone|someone|somebody|stuff|a ton|a lot|a bunch|that)(?![\w'])")
# "that" joining a clause to its noun ("tools that stay out of the way") points at nothing.
_THAT_JOINS = re.compile(
    r"\b(?!(?:like|likes|love|loves|do|does|did|for|with|about|to|at|of|in|on|enjoy|enjoys|"
    r"hate|hates|prefer|prefers|want|wants|is|was|be|doing|making|make|get|getting|know|all|"
    r"just|like|see|try|trying|into|and|or|but)\b)[a-z][a-z-]+\s+that\s+[a-z]")
# The same words where they point at nothing said before: a time ("this year", "these days"),
# the weather-and-time "it" ("when it's quiet", "if it rains"), a place named after "here".
_POINTS_AT_NOTHING = re.compile(
    r"(?:this|these|that)\s+(?:year|month|week|weekend|semester|term|summer|winter|spring|"
    r"autumn|fall|morning|afternoon|evening|time|days)\b|"
    r"it(?:'s|\s+is|\s+was|\s+gets)\s+(?:quiet|dark|cold|hot|warm|late|early|raining|sunny|"
    r"busy|noisy|calm|snowing|light)\b|it\s+rains\b|"
    r"(?:here|there)\s+in\s+[A-Z]")
# "their" after a plural noun of the claim itself belongs to it: "Wants to mentor young
# dancers on their dreams", "Likes dogs and their quirks" (the claim's first word, its verb,
# left out).
_OWNER_BEFORE = re.compile(
    r"\b(?!(?:is|was|has|does|this|its|his|hers|yes|always|sometimes|perhaps|less|unless|"
    r"across|thus|plus|us|as|ourselves|themselves)\b)[a-z]{2,}[^su\W]s\b|"
    r"\b(?:people|children|kids|men|women|folks|everyone)\b")
_FOR_ALL = re.compile(r"\bfor(?:\s+(?:literally|pretty much|basically|almost|nearly|just about))?"
                      r"\s*$")
_ANTECEDENT = re.compile(r"\b(?:my|our)\s+(?=([a-z-]+(?:\s+[a-z-]+){0,2}))")  # overlapping
_NOT_NOUN = frozenset(("in", "on", "at", "and", "but", "so", "to", "from", "with", "for", "is",
                       "are", "was", "were", "have", "has", "had", "that", "which", "who",
                       "when", "since", "because", "or", "of", "as", "like", "too", "a", "the"))


def _antecedents(work: str) -> list[str]:
    """The noun phrases after "my"/"our" in a sentence: "my turtles in May" → "turtles"."""
    found = []
    for match in _ANTECEDENT.finditer(work):
        words = []
        for word in match.group(1).split():
            if word in _NOT_NOUN or not word[0].isalpha():  # "my dogs - so cute"
                break
            words.append(word)
        if words:
            found.append(" ".join(words))
    return found


def _from_sentence(content: str, match: re.Match[str], work: str) -> bool:
    """Whether the pointing word at `match` in `content` came from the person's sentence
    (rather than from the rule's own wording, as "their" in "Lives with their partner")."""
    before = content[:match.start()].split()[-1:] or [""]
    after = content[match.end():].split()[:1] or [""]
    folded = " ".join(work.split()).casefold()
    word = match.group(0)
    return any(gram.strip().casefold() in folded for gram in
               (f"{before[0]} {word}", f"{word} {after[0]}") if gram.strip() != word)


def _named(work: str, plural: bool, text: str) -> set[str]:
    """The things of the person's `work` names ("my turtles") that "them" (`plural`) or "it"
    may stand for in `text`."""
    return {phrase for phrase in _antecedents(work)
            if (phrase.endswith("s") and not phrase.endswith("ss")) == plural
            and f"my {phrase}" not in text}


def self_contained(content: str, sentence: Sentence) -> str | None:
    """`content` (in the person's words) when it says what it says on its own, with "them" or
    "it" replaced by the one thing of the person's the sentence names ("I got my turtles in
    May and I love holding them" → "Likes holding my turtles"); None when a word of it points
    at something the sentence does not name ("I love holding them", "I like their work")."""
    text = content
    for _ in range(3):
        pointing = [m for m in _POINTING.finditer(text)
                    if _from_sentence(text, m, sentence.work)
                    and not (m.group(0) == "that" and _THAT_JOINS.search(
                        text[max(0, m.start() - 30):m.end() + 20]))
                    and not (m.group(0) in ("everything", "anything")  # "for everything"
                             and _FOR_ALL.search(text[:m.start()]))
                    and not _POINTS_AT_NOTHING.match(text, m.start())
                    and not (m.group(0) == "their" and _OWNER_BEFORE.search(
                        text, text.find(" ") + 1, m.start()))]
        if not pointing:
            return text
        first = pointing[0]
        word = first.group(0)
        if word not in ("them", "it"):
            return None
        plural = word == "them"
        named = _named(sentence.work, plural, text)
        if not named and plural and not _antecedents(sentence.work):
            # nothing of theirs named here: "them" from the sentence before, in the same turn,
            # when the one plural it names is theirs ("I got my turtles in May. I love
            # holding them."). Never "it": any noun of that sentence may be meant ("… teaching
            # yoga and supporting my community. I'm passionate about helping people through
            # it." is yoga).
            named = _named(sentence.before, plural, text)
            others = {m.group(0) for m in _OWNER_BEFORE.finditer(sentence.before)}
            if any(not any(word in phrase.split() for phrase in named) for word in others):
                named = set()
        if len(named) != 1:
            return None
        text = text[:first.start()] + f"my {named.pop()}" + text[first.end():]
    return None


def _short(value: str) -> str:
    """A long liked or disliked thing cut at its first "and" (the rest is often a new claim)."""
    return value.split(" and ")[0] if len(value.split()) > 6 else value


def _role_ok(role: str) -> bool:
    words = role.lower().split()
    if not words or len(words) > 6:
        return False
    if any(w in _NOT_ROLE for w in words):
        return False
    if special_category(f"Is a {role}") is not None:  # "a practising Catholic" is no role
        return False
    return bool(_ROLE_WORD.search(words[-1])) and not _VAGUE.match(role)


@rule(rf"^{I_AM}\s+{ADV}(?:working\s+as\s+)?(?P<article>an?)\s+(?P<rest>.+)")
def _i_am_a(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    rest = m.group("rest")
    lowered = rest.lower()
    for trait in _PERSONALITY:
        if lowered.startswith(trait):
            yield _keystone("preference", f"Is a{'n' if trait[0] in 'aeiou' else ''} {trait}",
                            s, 0.7)
            return
    tool = re.match(r"(?:(?:heavy|long-?time|daily|big|avid|happy|proud|longtime|devoted)\s+)?"
                    r"(?P<tool>[\w+#.-]+(?:\s+[A-Z][\w+#.-]*)?)\s+user\b", rest)
    if tool and (tool.group("tool")[0].isupper() or tool.group("tool").lower() in _KNOWN_TOOLS):
        yield _keystone("preference", f"Uses {tool.group('tool')}", s, 0.75,
                        value=f"uses {tool.group('tool')}")
        return
    role_match = re.match(rf"(?P<role>[\w/+&'-]+(?:\s+[\w/+&'-]+){{0,5}}?)"
                          rf"(?:\s+in\s+(?P<field>(?-i:[a-z][a-z-]*(?:\s+[a-z][a-z-]*){{0,3}}))"
                          rf"(?=\s+at\b))?"
                          rf"(?:\s+(?:at|for|with)\s+(?P<org>{ORG}))?"
                          rf"(?:\s+(?:in|based in|from|living in)\s+(?P<place>{PLACE}))?"
                          rf"(?=\s*(?:[,.;:!()]|\s{{3,}}|\s(?:and|but|so|because|since|who|which|"
                          rf"with|by|by trade|turned|for|at|in|on|working|based|living|"
                          rf"specializing|specialising|focused|focusing|mostly|mainly|"
                          rf"currently|now|too|myself|lol|haha|of)\b|$))", rest)
    if not role_match:
        return
    role = role_match.group("role").strip()
    if not _role_ok(role):
        if special_category(f"Is a {role}") is not None:  # "a practising Catholic": high
            yield _keystone("identity", f"Is {m.group('article')} {role}", s, 0.75)
        return
    article = m.group("article")
    org = role_match.group("org")
    field_ = role_match.group("field")
    yield _keystone("identity", f"Is {article} {role}" + (f" in {field_}" if field_ else "")
                    + (f" at {org}" if org else ""), s, 0.8, slot="role", value=role)
    if org and not re.search(r"\b(?:student|phd|candidate|undergrad|postdoc)", role, re.I):
        yield _keystone("identity", f"Works at {org}", s, 0.75, slot="employer", value=org)
    place = role_match.group("place")
    if place:
        yield _keystone("identity", f"Lives in {_trim_place(place)}", s, 0.7,
                        slot="residence", value=_trim_place(place))


@rule(rf"^{I_AM}\s+{ADV}(?P<state>retired|self-employed|unemployed|between jobs|freelancing|"
      r"a freelancer|freelance|on parental leave|on sabbatical|studying|a student)\b(?P<rest>.*)")
def _work_state(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    state = m.group("state")
    rest = _value(m.group("rest"))
    if state == "studying":
        if not rest or _VAGUE.match(rest.strip()):
            return
        yield _keystone("identity", f"Is studying {rest.strip()}", s, 0.7)
        return
    yield _keystone("identity", f"Is {state}", s, 0.75, slot="work_state", value=state)


@rule(rf"^I\s+{ADV}work(?:ing)?\s+as\s+(?:(?P<article>an?|the)\s+)?(?P<rest>.+)")
def _work_as(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    role_match = re.match(rf"(?P<role>.+?)(?:\s+(?:at|for|with)\s+(?P<org>{ORG}))?"
                          r"(?=\s*(?:[,.;:!()]|\s{3,}|\s(?:and|but|so|because|since|in|on|"
                          r"who|which|mostly|now|currently)\b|$))", m.group("rest"))
    if not role_match or not _role_ok(role_match.group("role")):
        return
    role = role_match.group("role").strip()
    article = m.group("article") or ""
    yield _keystone("identity", f"Works as {article + ' ' if article else ''}{role}", s, 0.8,
                    slot="role", value=role)
    if role_match.group("org"):
        yield _keystone("identity", f"Works at {role_match.group('org')}", s, 0.75,
                        slot="employer", value=role_match.group("org"))


@rule(rf"^(?:I\s+{ADV}work(?:ing)?|{I_AM}\s+{ADV}(?:working|employed))\s+(?:at|for)\s+"
      rf"(?P<org>{ORG})")
def _work_at(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    org = m.group("org")
    if org.lower() in ("a", "an", "the", "myself", "home", "it", "them"):
        return
    yield _keystone("identity", f"Works at {org}", s, 0.8, slot="employer", value=org)


@rule(rf"^I\s+{ADV}work\s+(?P<how>best\b.+|remotely\b.*|from home\b.*|part[- ]time\b.*|"
      r"full[- ]time\b.*|freelance\b.*|alone\b.*|async\w*\b.*|in (?:short|long|focused|"
      r"deep)\b.+|(?:early|late)\b.*|at night\b.*|in the (?:morning|evening|afternoon)s?\b.*|"
      r"in sprints\b.*|four days\b.*|4 days\b.*)")
def _work_style(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    how = _value(m.group("how"))
    if how:
        yield _keystone("preference", f"Works {how}", s, 0.7)


@rule(rf"^I\s+{ADV}work\s+in\s+(?P<field>[a-z][\w -]+)")
def _work_in(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    field_ = _value(m.group("field"))
    if field_ and not _VAGUE.match(re.sub(r"^both\s+", "", field_)) and len(field_.split()) <= 5:
        yield _keystone("identity", f"Works in {field_}", s, 0.7, slot="field", value=field_)


@rule(r"^my\s+(?:current\s+|day\s+)?(?:job|role|job title|title|position|profession|"
      r"occupation)\s+is\s+(?:(?P<article>an?|the)\s+)?(?P<role>.+)")
def _my_job(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    role = _value(m.group("role"))
    if _role_ok(role):
        yield _keystone("identity", f"Works as {role}", s, 0.8, slot="role", value=role)


@rule(rf"^(?:I\s+{ADV}(?:live|reside)|{I_AM}\s+{ADV}(?:based|living|located|settled))"
      rf"(?:\s+and\s+work)?\s+in\s+(?P<place>{PLACE})")
def _live_in(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    place = _trim_place(m.group("place"))
    if place and not _VAGUE.match(place):
        yield _keystone("identity", f"Lives in {place}", s, 0.8, slot="residence", value=place)


@rule(rf"^(?:I|We|My\s+{_PARTNER}\s+and\s+I|My\s+family\s+and\s+I)(?:'ve|\s+have)?\s+"
      rf"{ADV}(?:recently\s+|just\s+)?(?:moved|relocated|emigrated)\s+"
      rf"(?:back\s+)?(?:to|into)\s+(?P<place>{PLACE})")
def _moved(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    place = _trim_place(m.group("place"))
    if not place or _VAGUE.match(place):
        return
    event = _event("move", f"Moved to {place}", s)
    if event is not None:
        yield event
    yield _keystone("identity", f"Lives in {place}", s, 0.7, slot="residence", value=place)


@rule(rf"^(?:{I_AM}\s+(?:originally\s+)?from|I\s+grew\s+up\s+in|I\s+was\s+born\s+and\s+"
      rf"(?:raised|grew up)\s+in)\s+(?P<place>{PLACE})")
def _from(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    place = _trim_place(m.group("place"))
    if place and not _VAGUE.match(place):
        yield _keystone("identity", f"Is from {place}", s, 0.75, slot="origin", value=place)


@rule(rf"^I\s+(?:{ADV})(?:started|began)\s+(?:a\s+new\s+job|working|work|my\s+(?:new\s+)?job)"
      rf"(?:\s+as\s+(?:an?\s+)?(?P<role>[\w -]+?))?\s+(?:at|for|with)\s+(?P<org>{ORG})")
def _started_job(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    org = m.group("org")
    event = _event("job", f"Started working at {org}", s)
    if event is not None:
        yield event
    yield _keystone("identity", f"Works at {org}", s, 0.7, slot="employer", value=org)


@rule(rf"^I\s+{ADV}(?:joined|started at)\s+(?P<org>{ORG})(?:\s+as\s+(?:an?\s+)?"
      r"(?P<role>[\w -]+?))?(?=\s*(?:[,.;:!]|\s(?:in|on|last|this|back|about|around|"
      r"a|two|three|\w+ years?)\b|$))")
def _joined(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    org = m.group("org")
    role = (m.group("role") or "").strip()
    event = _event("job", f"Joined {org}" + (f" as {role}" if role else ""), s)
    if event is None and not (role and _role_ok(role)):
        return
    if event is not None:
        yield event
    if role and _role_ok(role):
        yield _keystone("identity", f"Works as {role}", s, 0.7, slot="role", value=role)
    yield _keystone("identity", f"Works at {org}", s, 0.7, slot="employer", value=org)


@rule(rf"^I\s+{ADV}(?:left|quit)\s+(?:my\s+job\s+at\s+)?(?P<org>{ORG})")
def _left(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    went = " and went freelance" if re.search(r"\bfreelanc", s.work, re.I) else ""
    event = _event("job", f"Left {m.group('org')}{went}", s)
    if event is not None:
        yield event


@rule(rf"^(?:I\s+{ADV}(?:got|was|have been|'ve been)|{I_HAVE}\s+{ADV}been)\s+{ADV}promoted\s+"
      r"to\s+(?:an?\s+|the\s+)?(?P<role>[\w -]+)")
def _promoted(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    role = _value(m.group("role"))
    if not _role_ok(role):
        return
    event = _event("job", f"Promoted to {role}", s, announced=True)
    if event is not None:
        yield event
    yield _keystone("identity", f"Works as {role}", s, 0.7, slot="role", value=role)


@rule(rf"^I\s+{ADV}(?P<what>graduated|finished my (?:phd|degree|masters?|master's|bachelor's|"
      r"studies|thesis|doctorate)|defended my (?:phd|thesis)|got my (?:phd|degree|masters?|"
      r"master's|bachelor's))(?P<rest>.*)")
def _graduated(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    where = re.match(rf"\s*(?:from|at)\s+(?P<org>{ORG})", m.group("rest"))
    summary = _sentence_case(m.group("what")) + (f" from {where.group('org')}" if where else "")
    event = _event("milestone", summary, s)
    if event is not None:
        yield event


@rule(rf"^(?:I|We)\s+{ADV}got\s+(?P<what>married|engaged|divorced)")
def _married(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    what = m.group("what").lower()
    event = _event("relationship", f"Got {what}", s)
    if event is not None:
        yield event
    yield _keystone("relationship", f"Is {what}", s, 0.7, slot="marital", value=what)


@rule(rf"^I\s+{ADV}(?:published|released|launched|shipped)\s+(?:my\s+(?:first\s+)?)"
      r"(?P<what>(?:book|paper|novel|app|album|course|game|podcast|newsletter|thesis)\b.*)")
def _published(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    what = _value(m.group("what"))
    event = _event("publication", f"Published their {what}", s)
    if event is not None:
        yield event


@rule(rf"^I\s+{ADV}prefer\s+(?P<v>.+)")
def _prefer(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    core = value[3:] if value.lower().startswith("to ") else value
    if value and core and not _VAGUE.match(core) and len(value.split()) <= 14:
        yield _keystone("preference", f"Prefers {value}", s, 0.75)


@rule(rf"^I\s+{ADV}(?P<verb>like|love|enjoy|adore)\s+(?P<v>.+)")
def _like(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _short(_value(m.group("v")))
    if value and not _VAGUE.match(value) and not value.lower().startswith("the ") \
            and len(value.split()) <= 10:
        yield _keystone("preference", f"Likes {value}", s, 0.6)


@rule(rf"^(?:I\s+{ADV}(?:hate|dislike|detest|loathe|can't stand|cannot stand|can't bear|"
      rf"(?:don't|do not|never)\s+{ADV}(?:like|enjoy)|(?:can't|cannot)\s+{ADV}(?:stand|bear))|"
      rf"{I_AM}\s+{ADV}(?:not a (?:big )?fan|"
      rf"no fan)\s+of)\s+(?P<v>.+)")
def _dislike(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _short(_value(m.group("v")))
    if value and not _VAGUE.match(value) and not value.lower().startswith("the ") \
            and len(value.split()) <= 10:
        yield _keystone("preference", f"Dislikes {value}", s, 0.65)


@rule(rf"^{I_AM}\s+{ADV}(?:a\s+)?(?:big\s+|huge\s+)?fan\s+of\s+(?P<v>.+)")
def _fan(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value and not _VAGUE.match(value) and len(value.split()) <= 8:
        yield _keystone("preference", f"Likes {value}", s, 0.6)


@rule(r"^my\s+(?:all-time\s+)?favou?rite\s+(?P<k>[\w -]{1,30}?)\s+(?:is|are)\s+(?P<v>.+)")
def _favourite(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value and not _VAGUE.match(value):
        yield _keystone("preference", f"Favourite {m.group('k').strip()}: {value}", s, 0.7)


def _tool_ok(tool: str) -> bool:
    first = tool.split()[0] if tool.split() else ""
    return bool(first) and (first[0].isupper() or first.lower().strip(",") in _KNOWN_TOOLS) \
        and not _VAGUE.match(tool)


@rule(rf"^(?:I\s+{ADV}(?:use|work with|code in|write code in|program in|develop in)|"
      rf"{I_HAVE}\s+(?:been\s+using|used|always\s+used))\s+(?P<v>.+)")
def _use(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    value = re.sub(r"\s+(?:for|since)\s+(?:about\s+)?(?:a|one|two|three|[0-9]+|many|several|"
                   r"the (?:past|last)|my|their|high school|school|university|college)\b.*$",
                   "", value)
    if value and _tool_ok(value) and len(value.split()) <= 10:
        yield _keystone("preference", f"Uses {value}", s, 0.7)


@rule(rf"^I\s+{ADV}write\s+(?P<v>(?:mostly\s+|mainly\s+)?(?-i:[A-Z][\w+#]*(?:\s+and\s+[A-Z][\w+#]*)?))"
      r"(?=\s*(?:[,.;!]|\s(?:at|for|code|scripts|day|every|most|and)\b|$))")
def _write_lang(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = m.group("v").strip()
    if value.split()[-1].lower() in _KNOWN_TOOLS:
        yield _keystone("preference", f"Writes {value}", s, 0.7)


@rule(r"^my\s+(?:main\s+|daily\s+|primary\s+|go-to\s+|usual\s+|preferred\s+|favou?rite\s+)?"
      r"(?P<k>editor|ide|language|programming language|stack|tech stack|os|operating system|"
      r"laptop|machine|setup|shell|terminal|browser|phone|note-taking app|notes app|"
      r"text editor|database|framework|distro)\s+(?:is|of choice is)\s+(?P<v>.+)")
def _my_tool(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value and _tool_ok(value):
        kind = m.group("k").lower()
        kind = kind.upper() if kind in ("ide", "os") else kind
        yield _keystone("preference", f"Uses {value} ({kind})", s, 0.75, value=f"uses {value}")


@rule(rf"^I\s+{ADV}(?P<verb>tend to|like to|prefer to|love to|always|never|usually)\s+"
      r"(?P<v>(?:work|write|code|plan|start|keep|take|read|think|learn|study|review|test|"
      r"ship|commit|document|sketch|draft|walk|run|go|avoid|use|do|get up|wake up|block|"
      r"batch|check|answer|reply|communicate|listen|journal)\b.+)")
def _habit(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    verb = m.group("verb").lower()
    lead = {"tend to": "Tends to", "like to": "Likes to", "prefer to": "Prefers to",
            "love to": "Likes to", "always": "Always", "never": "Never",
            "usually": "Usually"}[verb]
    if value and len(value.split()) <= 14:
        if verb in ("always", "never", "usually"):  # "I usually take" → "Usually takes"
            first, _, rest = value.partition(" ")
            value = f"{third_singular(first)} {rest}".strip()
        yield _keystone("preference", f"{lead} {value}", s, 0.65)


def third_singular(verb: str) -> str:
    """ "take" → "takes", "go" → "goes", "try" → "tries", "have" → "has"."""
    lowered = verb.lower()
    if lowered in ("have", "be"):
        return {"have": "has", "be": "is"}[lowered]
    if re.search(r"(?:s|sh|ch|x|z|o)$", lowered):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lowered):
        return verb[:-1] + "ies"
    return verb + "s"


@rule(rf"^{I_AM}\s+{ADV}most\s+productive\s+(?P<v>.+)")
def _productive(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value:
        yield _keystone("preference", f"Is most productive {value}", s, 0.7)


@rule(r"^I\s+(?:learn|think|focus)\s+best\s+(?P<v>.+)")
def _best(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value:
        yield _keystone("preference", f"{m.group(0).split()[1].capitalize()}s best {value}", s,
                        0.7)


@rule(rf"^{I_AM}\s+{ADV}(?P<v>allergic to .+|lactose[- ]intolerant|gluten[- ]intolerant|"
      r"vegetarian|vegan|pescatarian|colou?r[- ]?blind|deaf|hard of hearing|diabetic|celiac|"
      r"coeliac|sober|pregnant|dyslexic|on a (?:tight |limited |small )?budget.*|"
      r"not allowed to .+|only available .+|left-handed|in a wheelchair|"
      r"a wheelchair user|(?:halal|kosher))")
def _constraint_state(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value:
        yield _keystone("constraint", f"Is {value}", s, 0.8)


@rule(r"^I\s+(?:can't|cannot|can not|don't|do not|never)\s+(?P<verb>eat|drink|drive|fly)"
      r"(?P<v>\b.*)")
def _cannot(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    verb = m.group("verb").lower()
    neg = "Doesn't" if m.group(0).lower().split()[1] in ("don't", "do", "never") else "Can't"
    if value and _VAGUE.match(value):
        return
    yield _keystone("constraint", f"{neg} {verb}{' ' + value if value else ''}", s, 0.75)


@rule(r"^I\s+(?:only\s+(?:have|get)|can\s+only\s+(?:find|get))\s+time\b(?P<v>.*)")
def _time_only(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = re.sub(r"^\s*for (?:this|that|it|things like this)\b", "", _value(m.group("v")))
    if value.strip():
        yield _keystone("constraint", f"Only has time {value.strip()}", s, 0.7)


@rule(rf"^I\s+(?:only\s+have|can\s+only\s+(?:spend|give|work|do)|have\s+only)\s+"
      rf"(?P<v>(?:about\s+|around\s+)?{_NUMBER_WORDS}\s+(?:hours?|days?|evenings?|mornings?|"
      r"minutes?)\b.*)")
def _time_budget(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value:
        yield _keystone("constraint", f"Has only {value}", s, 0.7)


@rule(r"^my\s+budget\s+is\s+(?P<v>.+)")
def _budget(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value and not _VAGUE.match(value):
        yield _keystone("constraint", f"Budget is {value}", s, 0.7)


@rule(r"^I\s+(?:have|suffer from|was diagnosed with|live with|deal with)\s+(?P<v>ADHD|autism|"
      r"dyslexia|anxiety|depression|diabetes|type [12] diabetes|asthma|migraines|epilepsy|"
      r"chronic [\w ]+|long covid|tinnitus|RSI|arthritis|a (?:nut|peanut|gluten|dairy) "
      r"allergy|celiac disease|coeliac disease)\b")
def _condition(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    yield _keystone("constraint", f"Has {_value(m.group('v'))}", s, 0.75,
                    sensitivity="high")


@rule(r"^I\s+(?:don't|do not)\s+(?:have|own)\s+an?\s+(?P<v>car|tv|television|smartphone|"
      r"printer|desk|laptop|driver's licen[cs]e|driving licen[cs]e)\b")
def _lacks(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    yield _keystone("constraint", f"Doesn't have a {m.group('v')}", s, 0.7)


@rule(rf"^I\s+(?:also\s+)?have\s+(?P<n>{_NUMBER_WORDS})\s+(?P<who>{_KIN})\b(?P<rest>.*)")
def _have_kin(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    who = m.group("who")
    count = m.group("n")
    rest = m.group("rest")
    named = re.match(r",?\s+(?:named|called)\s+(?P<name>[A-Z][\w-]+(?:\s+and\s+[A-Z][\w-]+)?)",
                     rest) or re.match(r"(?-i:,\s*(?P<name>[A-Z][\w-]+(?:\s+and\s+[A-Z][\w-]+)?))"
                                       r"(?=\s*(?:[,.;!()]|\s(?:who|aged)\b|$))", rest)
    aged = re.match(r",?\s+(?:aged\s+)?(?P<age>[0-9]{1,2}(?:\s+and\s+[0-9]{1,2})?)"
                    r"(?:\s+years?\s+old)?\b", rest)
    tail = f" named {named.group('name')}" if named else (
        f" (aged {aged.group('age')})" if aged else "")
    yield _keystone("relationship", f"Has {count} {who}{tail}", s, 0.8,
                    value=f"has {count} {who}")


@rule(rf"^{I_AM}\s+{ADV}(?P<v>married|engaged|divorced|single|widowed|in a relationship|"
      r"a (?:single |proud |new |first-time )?(?:parent|mom|mum|dad|father|mother|"
      r"grandparent|grandmother|grandfather)(?: of (?:a |an |one |two |three |four |[0-9] )?"
      r"[\w-]+(?: [\w-]+)?)?)\b")
def _family_state(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = m.group("v")
    slot = "marital" if value.split()[0] in ("married", "engaged", "divorced", "single",
                                             "widowed", "in") else None
    yield _keystone("relationship", f"Is {value}", s, 0.8, slot=slot, value=value)


@rule(rf"^my\s+(?P<who>{_PARTNER})(?:,?\s+(?P<name>(?-i:[A-Z][a-z]+))(?=[\s,.]))?")
def _partner(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    who = m.group("who").lower()
    name = m.group("name")
    if name in ("And", "Is", "Was", "Has", "Works", "Lives", "Thinks", "Said"):
        name = None
    yield _keystone("relationship", f"Has a {who}" + (f", {name}" if name else ""), s, 0.7,
                    slot="partner", value=who)


@rule(rf"^I\s+{ADV}live\s+with\s+my\s+(?P<who>{_PARTNER}|family|parents|kids|children|"
      r"roommates?|flatmates?|dog|cat)")
def _live_with(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    yield _keystone("relationship", f"Lives with their {m.group('who')}", s, 0.75)


@rule(rf"^my\s+(?P<who>{_CHILD})(?:,?\s+(?P<name>(?-i:[A-Z][a-z]+))(?=[\s,.]))?\s+(?:is|are|just|"
      r"turned|started|goes|go)\b")
def _child(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    who = m.group("who").lower()
    name = m.group("name")
    if name in ("And", "Is", "Are", "Just", "Turned", "Started"):
        name = None
    plural = who in ("kids", "children", "twins")
    yield _keystone("relationship", f"Has {'' if plural else 'a '}{who}"
                    + (f", {name}" if name else ""), s, 0.65, value=f"has {who}")


_GOAL_VERBS = (r"(?:design|teach|learn|become|switch|transition|move|get|run|finish|write|"
               r"publish|launch|start|build|buy|save|pass|earn|qualify|change|retire|quit|lose|improve|speak|"
               r"master|apply|find|grow|make|reach|complete|open|travel|visit|read|train)")


@rule(r"^my\s+(?:main\s+|big\s+|long-term\s+|ultimate\s+|current\s+|personal\s+|career\s+|"
      r"biggest\s+)?(?:goal|aim|dream|plan|objective|ambition|priority)(?:\s+(?:for|this)\s+"
      r"[\w ]{1,20}?)?\s+is\s+to\s+(?P<v>.+)")
def _goal(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value and not _VAGUE.match(value):
        yield _keystone("objective", f"Wants to {value}", s, 0.75)


@rule(rf"^{I_AM}\s+{ADV}(?:trying|hoping|planning|aiming|working|saving up|saving|studying|"
      rf"preparing)\s+(?:hard\s+)?(?:to|for|towards)\s+(?P<v>{_GOAL_VERBS}\b.+)")
def _trying(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value:
        yield _keystone("objective", f"Wants to {value}", s, 0.65)


@rule(rf"^(?:I\s+{ADV}(?:want|plan|hope|intend|aim)|I'd\s+{ADV}(?:like|love))\s+to\s+"
      r"(?P<v>(?:learn|become|switch|get better at|get fit|get back into|finish (?:my|the|a) "
      r"(?:first\s+)?(?:draft|thesis|dissertation|book|novel|degree|marathon|course)|pass my|"
      r"transition|get into|move into|move to|run a|design|teach|go back to school|"
      r"work as|work in|write a book|finish my|publish|launch my|start my own|"
      r"retire|master|speak|change careers|quit my|buy a house|save for|create a|open a|"
      r"open my|adopt a|travel to|travel the|visit|explore|expand my|grow my|mentor|"
      r"start a family|have kids|get a dog|get a puppy|get married|move abroad)\b.+)")
def _want(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value and len(value.split()) <= 12:
        yield _keystone("objective", f"Wants to {value}", s, 0.6)


@rule(rf"^{I_AM}\s+{ADV}(?:learning|teaching myself)\s+(?P<v>.+)")
def _learning(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value and not _VAGUE.match(value) and len(value.split()) <= 6 and not value.lower(
            ).startswith(("to ", "about ", "how ", "that ")):
        yield _keystone("objective", f"Is learning {value}", s, 0.65)


_NATIONALITIES = (
    "American|Argentinian|Australian|Austrian|Belgian|Brazilian|British|Bulgarian|Canadian|"
    "Chilean|Chinese|Colombian|Croatian|Czech|Danish|Dutch|Egyptian|English|Estonian|"
    "Filipino|Finnish|French|German|Ghanaian|Greek|Hungarian|Icelandic|Indian|Indonesian|"
    "Iranian|Irish|Israeli|Italian|Japanese|Kenyan|Korean|Latvian|Lebanese|Lithuanian|"
    "Mexican|Moroccan|Nigerian|Norwegian|Pakistani|Peruvian|Polish|Portuguese|Romanian|"
    "Russian|Scottish|Serbian|Slovak|Slovenian|South African|Spanish|Swedish|Swiss|Taiwanese|"
    "Thai|Turkish|Ukrainian|Venezuelan|Vietnamese|Welsh")


@rule(rf"^{I_AM}\s+{ADV}(?:half[- ])?(?P<nat>(?-i:{_NATIONALITIES}))\b")
def _nationality(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    yield _keystone("identity", f"Is {m.group('nat')}", s, 0.75, slot="nationality",
                    value=m.group("nat"))


@rule(rf"^{I_AM}\s+{ADV}on[- ]call\b(?P<v>.*)")
def _on_call(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    yield _keystone("constraint", f"Is on call{' ' + value if value else ''}", s, 0.75)


@rule(rf"^(?:we|my team|our team)\s+{ADV}(?:use|work with|run|are on)\s+(?P<v>.+)")
def _we_use(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = re.sub(r"\s+(?:yeah|yes|yep|btw)$", "", _list_value(m.group("v")))
    if value and _tool_ok(value) and len(value.split()) <= 10:
        yield _keystone("preference", f"Their team uses {value}", s, 0.6,
                        value=f"uses {value}")


def _list_value(text: str) -> str:
    """A value that may be a list ("docker, dbt, and neovim"): to the end of the clause."""
    stop = re.search(r"\s*(?:[.;:!?](?=\s|$)|[()\[\]]|\s{3,}|\s(?:but|so|because|since|which|"
                     r"while|although|though|if|lol|haha)\b|$)", text)
    value = text[:stop.start()] if stop else text
    return _TRAILING.sub("", value.strip()).strip(" ,-")


@rule(rf"^I\s+{ADV}run\s+(?P<v>.+)")
def _run_tools(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _list_value(m.group("v"))
    first = value.split()[0].lower().strip(",") if value.split() else ""
    if first in _KNOWN_TOOLS or first in ("docker", "arch", "nixos", "linux"):
        yield _keystone("preference", f"Runs {value}", s, 0.65, value=f"uses {value}")


@rule(rf"^{I_HAVE}\s+been\s+(?:on|using|running)\s+(?P<v>(?-i:[A-Z][\w+#.-]*(?:\s+[A-Z][\w+#.-]*)?))"
      r"(?P<rest>.*)")
def _been_on(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    yield _keystone("preference", f"Uses {m.group('v')}", s, 0.7, value=f"uses {m.group('v')}")


@rule(rf"^{I_AM}\s+{ADV}(?:not|never)\s+going\s+back\s+to\s+(?P<v>.+)")
def _not_back(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value and not _VAGUE.match(value):
        yield _keystone("preference", f"Won't go back to {value}", s, 0.65)


@rule(rf"^{I_HAVE}\s+{ADV}lived\s+in\s+(?P<place>{PLACE})\s+(?P<how>since|for)\b")
def _lived_since(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    place = _trim_place(m.group("place"))
    if not place or _VAGUE.match(place):
        return
    if m.group("how").lower() == "since":
        event = _event("move", f"Moved to {place}", s)
        if event is not None:
            yield event
    yield _keystone("identity", f"Lives in {place}", s, 0.8, slot="residence", value=place)


@rule(r"^my\s+(?P<lang>(?-i:[A-Z][a-z]+))\s+is\s+(?:(?:only|about|at|at a|around|a|"
      r"solid|weak|strong|decent)\s+)*(?P<level>(?-i:[ABC][12])\b(?:\s+level)?|native|fluent|"
      r"basic|conversational|rusty|intermediate|beginner level|advanced)")
def _language_level(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    yield _keystone("identity", f"Their {m.group('lang')} is {m.group('level')}", s, 0.75,
                    value=f"{m.group('lang')} level")


@rule(r"^I\s+(?:also\s+)?speak\s+(?P<v>(?-i:[A-Z][a-z]+)(?:(?:,\s*|\s+and\s+)(?-i:[A-Z][a-z]+))*"
      r"(?:\s+(?:fluently|natively|well))?)")
def _speak(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    yield _keystone("identity", f"Speaks {m.group('v')}", s, 0.75)


@rule(r"^I\s+(?:have|bring)\s+(?P<n>(?:over\s+|about\s+|almost\s+|nearly\s+)?\S+)\s+years?\s+"
      r"(?:of\s+)?(?:(?P<what>[\w -]{1,30}?)\s+)?experience(?P<rest>.*)")
def _experience(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    what = m.group("what")
    yield _keystone("identity", f"Has {m.group('n')} years of {what + ' ' if what else ''}"
                    "experience", s, 0.75, slot=None)


@rule(rf"^{I_HAVE}\s+(?:been\s+)?(?P<verb>taught|teaching|worked|working|coded|coding|"
      r"designed|designing|programmed|programming|written|writing|been)\s+(?P<v>[\w ,&/+-]+?)"
      r"\s+for\s+(?P<dur>(?:over\s+|about\s+|almost\s+|nearly\s+|more than\s+)?\S+\s+years?)")
def _for_years(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    verb = m.group("verb").lower()
    past = {"teaching": "taught", "working": "worked", "coding": "coded",
            "designing": "designed", "programming": "programmed", "writing": "written"}
    value = m.group("v").strip()
    if verb == "been" and not _role_ok(re.sub(r"^(?:an?|the)\s+", "", value)):
        return
    yield _keystone("identity", f"Has {past.get(verb, verb)} {value} for {m.group('dur')}", s,
                    0.75)


@rule(rf"^I\s+{ADV}teach\s+(?P<v>.+)")
def _teach(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value and not _VAGUE.match(value) and len(value.split()) <= 10:
        yield _keystone("identity", f"Teaches {value}", s, 0.75, slot="teaches", value=value)


@rule(r"^(?:we|I)\s+(?:want|need|have|plan)\s+to\s+stay\s+(?P<v>(?:under|below|within)\s+.+)")
def _stay_under(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if re.search(r"[0-9$€£]", value):
        yield _keystone("constraint", f"Budget: {value}", s, 0.65)


@rule(r"^(?:my\s+)?(?:\w+\s+)?budget\s+is\s+(?P<v>.+)")
def _budget_any(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if re.search(r"[0-9$€£]", value):
        yield _keystone("constraint", f"Budget is {value}", s, 0.7)


@rule(r"^no\s+(?P<v>(?:calls|meetings|work|emails|messages|slack)\s+(?:before|after|on|during)"
      r"\s+[\w: ]+?)(?:\s+for me)?(?=\s*(?:[,.;!]|\s(?:for me|please)\b|$))")
def _no_calls(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    yield _keystone("constraint", f"No {m.group('v')}", s, 0.65)


@rule(r"^(?:please\s+)?(?P<v>(?:skip|no|avoid|don't use|never use|drop)\s+(?:the\s+)?"
      r"(?:preamble|intros?|introductions?|emojis?|fluff|small talk|filler|exclamation marks|"
      r"disclaimers|jargon|pleasantries)\b(?:(?:,\s*|\s+)(?:ever|always|please|at all))*)")
def _style_rule(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    yield _keystone("rule", _sentence_case(m.group("v").rstrip(", ")), s, 0.6)


@rule(rf"^{I_AM}\s+(?P<age>[1-9][0-9])(?:\s+years?\s+old)?(?=\s*(?:[,.;!]|\s+(?:and|but|so|now|"
      r"this)\b|$))")
def _age(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    yield _keystone("identity", f"Is {m.group('age')}", s, 0.7, slot="age",
                    value=m.group("age"))


@rule(r"^I\s+(?:can't|cannot|can not)\s+(?:spend|afford|pay)\s+(?P<v>(?:more than|over|"
      r"above)\s+.+)")
def _spend_limit(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if re.search(r"[0-9$€£]", value):
        yield _keystone("constraint", f"Can't spend {value}", s, 0.75)


@rule(rf"^I\s+{ADV}(?:moved|switched|migrated|went)\s+(?:over\s+)?from\s+(?P<old>.+?)\s+to\s+"
      rf"(?P<new>(?-i:[A-Z][\w.+#-]*(?:\s+[A-Z][\w.+#-]*)?))(?P<rest>.*)")
def _switched(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    old, new = m.group("old").strip(), m.group("new").strip()
    tools = {t.replace(" ", "") for t in (old.lower(), new.lower())}
    if tools & (_KNOWN_TOOLS | {"vscode", "vs", "sublimetext"}):
        yield _keystone("preference", f"Uses {new} (moved from {old})", s, 0.75,
                        value=f"uses {new}")
        return
    place = _trim_place(new)
    event = _event("move", f"Moved from {old} to {place}", s)
    if event is not None:
        yield event
    yield _keystone("identity", f"Lives in {place}", s, 0.7, slot="residence", value=place)


@rule(rf"^{I_AM}\s+{ADV}(?:a\s+(?:bit|little)\s+)?(?P<how>obsessive|picky|particular|pedantic|"
      r"fussy|strict)\s+about\s+(?P<v>.+)")
def _particular(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    value = _value(m.group("v"))
    if value and not _VAGUE.match(value):
        yield _keystone("preference", f"Is {m.group('how')} about {value}", s, 0.65)


# Rules read anywhere in a sentence the person wrote, whatever its mood: naming one's partner
# ("Sanna (my wife) thinks …") says they have one even in a question or a wish.
ANYWHERE: list[tuple[re.Pattern[str], Rule]] = []


def _named_partner(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    who = m.group("who").lower()
    yield _keystone("relationship", f"Has a {who}, {m.group('name')}", s, 0.75, slot="partner",
                    value=who)


ANYWHERE.append((re.compile(rf"(?-i:\b(?P<name>[A-Z][a-z\u00e0-\u00ff]+))\s*\((?i:my)\s+"
                            rf"(?P<who>{_PARTNER})\)", re.I), _named_partner))
ANYWHERE.append((re.compile(rf"\bmy\s+(?P<who>{_PARTNER}),?\s+(?-i:(?P<name>[A-Z][a-z\u00e0-\u00ff]+))"
                            r"(?=[\s,.)])", re.I), _named_partner))


def _here_in(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    place = _trim_place(m.group("place"))
    if place and not _VAGUE.match(place):
        yield _keystone("identity", f"Lives in {place}", s, 0.6, slot="residence", value=place)


def _getting_married(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    name = m.group("name")
    event = _event("relationship", f"Getting married to {name}", s)
    if event is not None:
        yield event
    yield _keystone("relationship", f"Is engaged to {name}", s, 0.7, slot="partner",
                    value="partner")


def _my_home(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    place = _trim_place(m.group("place"))
    if place and not _VAGUE.match(place):
        yield _keystone("identity", f"Lives in {place}", s, 0.65, slot="residence", value=place)


def _named_person(m: re.Match[str], s: Sentence) -> Iterator[Candidate]:
    yield _keystone("relationship", f"Their {m.group('who').lower()} is {m.group('name')}", s,
                    0.7, value=f"{m.group('who').lower()} {m.group('name')}")


ANYWHERE.append((re.compile(r"\bmy\s+(?P<who>supervisor|advisor|adviser|manager|boss|mentor|"
                            r"co-?founder|business partner)\s+(?-i:(?P<name>[A-Z][a-z]+"
                            r"(?:\s+[A-Z][a-z]+)?))(?=[\s,.)])", re.I), _named_person))

CLAIM_ANYWHERE: list[tuple[re.Pattern[str], Rule]] = [
    (re.compile(rf"^my\s+(?:flat|apartment|house|place|home|studio)\s+in\s+(?P<place>{PLACE})",
                re.I), _my_home),
    (re.compile(rf"^I\b[^.]*?\bhere\s+in\s+(?P<place>{PLACE})"), _here_in),
    (re.compile(r"^(?-i:(?P<name>[A-Z][a-z\u00e0-\u00ff]+))\s+and\s+I\s+(?:are|'re)\s+"
                r"(?:getting|gonna get|going to get)\s+married\b", re.I), _getting_married),
]


# -- sentences to candidates --------------------------------------------------------------------
# What people put before a claim that makes it no question, no report and no hedge: "What
# can I say, I love turtles." A wh-word or "say" there opens an exclamation, not a question.
_PREAMBLE = re.compile(
    r"^(?:(?:oh|ah|wow|well|yeah|yes|haha|lol|omg|gosh|man)[,!.]?\s+)*"
    r"(?:what can I say|what else can I say|what I can say is|guess what|you know what|"
    r"believe it or not|funny enough|funnily enough|fun fact|truth be told|(?:the )?truth is|"
    r"I (?:have|had|gotta|got to|must|need to) (?:say|admit)|(?:I'll|I will|I can|I gotta) "
    r"(?:say|admit|tell you)|I admit|let me tell you|I can't lie|not gonna lie|ngl|"
    r"needless to say|safe to say|I'd say|I would say|I'll be honest|to tell the truth|"
    r"what a (?:day|week|year|ride|journey|time)|how cool is that|how about that|"
    r"(?:like|as) I (?:said|mentioned|told you)|as you know)"
    r"(?:\s*[,:!.\u2014-]+\s*|\s+(?=I\b))", re.I)
# A clause said without its "I": "Lost my job as a cashier yesterday", "Started running
# last week", "Been doing some gardening lately".
_ELIDED = re.compile(
    r"^(?:(?:just|finally|recently|also|even|still)\s+)?(?P<verb>lost|started|got|took|went|"
    r"moved|adopted|bought|joined|left|quit|had|made|signed|opened|launched|picked up|began|"
    r"finished|been|love|loved|hate|hated|enjoy|enjoyed|miss|missed|working|starting|planning|"
    r"heading|getting|learning|reading|taking|trying|off to|living|studying|training|"
    r"preparing|saving|looking)\b(?!\s+(?:is|are|was|were|has|have|can|will)\b)", re.I)
_ELIDED_AS = {"been": "I've ", "off to": "I'm "}
_FINITE = re.compile(r"\b(?:is|are|was|were|takes|took|makes|made|can|could|has|have|feels|"
                     r"seems|requires|needs|gives|brings|means|helps|keeps|gets|will)\b", re.I)


# A question tagged onto a statement asks nothing: "I started my own store - pretty cool, huh?"
_TAG = re.compile(
    r"(?:\s*[,\u2014-]+\s*|\s+)(?:(?:pretty|so|how|really|super)\s+)?(?:cool|awesome|crazy|"
    r"wild|great|nice|amazing|fun|neat|exciting|sweet)?,?\s*(?:huh|right|eh|yeah|no|isn't it|"
    r"aren't they|don't you think|you know|ya know|wouldn't you say|innit|can you believe it)"
    r"\s*[?!]+$", re.I)


def spoken(work: str) -> str:
    """A sentence without what people put before a claim ("What can I say, …") or a question
    tagged after it ("…, huh?")."""
    text = _PREAMBLE.sub("", work.strip(), count=1)
    if not text.endswith(("?", "!")):  # a tag ends in one: the search is the costly part
        return text
    untagged = _TAG.sub(".", text)
    return untagged if "?" not in untagged else text


def clauses(work: str) -> list[str]:
    """The clauses of a sentence that may state something of the person, fillers stripped; a
    clause said without its "I" is read with it too."""
    found = []
    for part in _CLAUSE_SPLIT.split(work):
        if not part:
            continue
        part = part.strip()
        for _ in range(3):
            stripped = _LEADING_TIME.sub("", _FILLER.sub("", _SAID_INSIDE.sub("", spoken(part))))
            if stripped == part:
                break
            part = stripped
        if part:
            found.append(part)
            elided = _ELIDED.match(part)
            if elided and elided.group("verb").lower().endswith("ing") and _FINITE.search(
                    part, elided.end()):
                elided = None  # "Starting a podcast takes nerve": a gerund, the subject
            if elided and not re.match(r"^(?:I|I'm|I've|we)\b", part):
                verb = elided.group("verb").lower()
                lead = _ELIDED_AS.get(verb, "I'm " if verb.endswith("ing") else "I ")
                found.append(lead + part[:1].lower() + part[1:])
    return found


def is_claim(sentence: Sentence) -> bool:
    """False for a question, a hypothetical or wish, reported speech, or a fragment."""
    return _is_claim(spoken(sentence.work))


def _is_claim(work: str) -> bool:
    if not work or work.endswith("?") or "?" in work:
        return False
    if len(work) > 400:  # a run-on paragraph without stops: pasted, or a list
        return False
    return not (_NOT_A_CLAIM.search(work) or _REPORTED.search(work))


_SCOPED = re.compile(
    r"\b(?:if|suppose|supposing|imagine|imagining|pretend|pretending|hypothetically|let's say|"
    r"lets say|what if|as if|as though|role-?play|roleplaying|my character|wish|would|could|"
    r"unless|whether|someday|one day|fictional|(?<!my )(?<!first )(?:story|novel)|scenario|"
    r"example|e\.g|sample|template|persona|quote|quoted)\b", re.I)
_PIECES = re.compile(r",?\s+(?:but|so|and|because)\s+(?=I\b|I'm\b|I've\b|my\b)|;\s+|"
                     r"\s+[\u2014-]{1,2}\s+", re.I)


def claim_pieces(sentence: Sentence, work: str | None = None) -> list[str]:
    """The parts of a sentence that state something of the person. A whole claim, or, when
    only a hedge or someone else's words ("my friend says I should …, but I …") keep it from
    being one, its parts after a "but", "so", "and", "because" (before "I" or "my"), ";" or a
    dash that are claims themselves. Nothing of a
    question or a hypothetical ("if", "imagine", "would") is a claim, in any part."""
    work = spoken(sentence.work) if work is None else work
    if _is_claim(work):
        return [work]
    if not work or "?" in work or len(work) > 400 or _SCOPED.search(work):
        return []
    return [piece for piece in _PIECES.split(work)
            if piece.strip() and not (_NOT_A_CLAIM.search(piece) or _REPORTED.search(piece))]


def extract_sentences(sentences: Iterable[Sentence]) -> list[Candidate]:
    """Every candidate the rules find in `sentences`, in order (each once)."""
    found: list[Candidate] = []
    for sentence in sentences:
        here: list[Candidate | None] = []
        for pattern, function in ANYWHERE:
            for match in pattern.finditer(sentence.work):
                here.extend(function(match, sentence))
        work = spoken(sentence.work)
        pieces = claim_pieces(sentence, work)
        if pieces:
            if len(pieces) == 1 and pieces[0] == work:
                whole = _FILLER.sub("", pieces[0])
                for pattern, function in CLAIM_ANYWHERE:
                    match = pattern.search(whole)
                    if match:
                        here.extend(function(match, sentence))
            for clause in (c for piece in pieces for c in clauses(piece)):
                for pattern, function in RULES:
                    match = pattern.match(clause)
                    if match:
                        here.extend(function(match, sentence))
        found.extend(_fullest(here))
    return found


def _fullest(candidates: Iterable[Candidate | None]) -> list[Candidate]:
    """Each claim of one sentence once, and not also as a part of a fuller one of the same
    kind and category ("Has dogs." beside "Has cats, Miso and Tofu.")."""
    kept: list[Candidate] = []
    seen: set[tuple[str, str]] = set()
    for candidate in candidates:
        if candidate is not None and (candidate.kind, candidate.content) not in seen:
            seen.add((candidate.kind, candidate.content))
            kept.append(candidate)
    favourites = {c.content.split(": ", 1)[1].casefold() for c in kept
                  if c.content.startswith("Favourite ") and ": " in c.content}
    kept = [c for c in kept if not (c.content.startswith("Likes ")  # "Favourite book: Dune."
                                    and c.content[6:].casefold() in favourites)]
    words = {id(c): set(_words(c.content)) for c in kept}
    return [c for c in kept if not any(
        o is not c and o.kind == c.kind and o.category == c.category
        and words[id(c)] < words[id(o)] for o in kept)]
