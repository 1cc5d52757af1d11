"""Self-statements as people say them in conversation, not as they would write a bio.

- names given beside the thing named: "Oscar, my guinea pig", "my cats Miso and Tofu",
  "I have a guinea pig named Oscar", "we adopted a kitten called Mochi";
- the favourite said back to front: "Harry Potter is my favorite book", "Cardamom is my go-to
  spice", "Lentil soup is one of my favorites";
- the role said in passing: "As a writer, I …", "my job as a nurse", "I lost my job as a
  cashier", "I work at a hospital", "I run my own pottery studio";
- where they are from and where they are off to: "my home country, Sweden", "I'm off to
  Ireland for a semester";
- what they love, said of the thing: "Climbing makes me so happy", "The sea is my happy place",
  "I'm passionate about dancing";
- a family or pets counted or named in passing: "with my three cats", "my sister Ana".

The sentence gates of `rules` hold here too: a clause rule (`@rule`) reads only a claim the
person makes (no question, hypothetical or report), from the start of a clause; the
`ANYWHERE` rules read a name or a count given in passing, which says the dog or the sister
exists whatever the sentence does with them ("Should Oscar, my guinea pig, eat kale?"), and
nothing in masked text (quotes, code, pasted mail). Each claim must be self-contained
(`rules.self_contained`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from pcp_cli.extract.rules import (
    _VAGUE,
    ADV,
    ANYWHERE,
    CLAIM_ANYWHERE,
    I_AM,
    ORG,
    PLACE,
    Candidate,
    _event,
    _keystone,
    _role_ok,
    _sentence_case,
    _trim_place,
    _value,
    rule,
)
from pcp_cli.extract.segments import Sentence
from pcp_cli.extract.sensitive import special_category

_NAME = r"(?-i:[A-Z][a-z\u00e0-\u00ff]+(?:-[A-Z][a-z]+)?)"
_NAMES = rf"{_NAME}(?:(?:,\s*|,?\s+and\s+|\s*&\s*){_NAME}){{0,5}}"
PETS = (r"(?:dogs?|pups?|puppy|puppies|pooch(?:es)?|doggos?|cats?|kitt(?:y|ies|ens?)|"
        r"guinea pigs?|hamsters?|rabbits?|bunn(?:y|ies)|turtles?|tortoises?|snakes?|lizards?|"
        r"geckos?|iguanas?|parrots?|budgies?|parakeets?|cockatiels?|goldfish|ferrets?|"
        r"horses?|ponies|pony|chickens?|hens?|goats?|gerbils?|chinchillas?|hedgehogs?|"
        r"fur bab(?:y|ies)|furry friends?|fur kids)")
FAMILY = (r"(?:sons?|daughters?|twins|stepsons?|stepdaughters?|grandsons?|granddaughters?|"
          r"grandkids|grandchildren|sisters?|brothers?|siblings?|nieces?|nephews?)")
PARENTS = (r"(?:mom|mum|mother|dad|father|grandma|grandmother|granny|grandpa|grandfather|"
           r"aunt|uncle|stepmom|stepdad|mother-in-law|father-in-law)")
PARTNER = (r"(?:wife|husband|partner|spouse|girlfriend|boyfriend|fianc[ée]e?|fiance|"
           r"hubby|other half)")
_KIN = rf"(?:{PETS}|{FAMILY}|kids|children)"
# "my late grandmother", "my childhood dog", "my future kids": not someone the person has now.
_NOT_NOW = (r"(?:late|childhood|former|ex|ex-|future|dream|imaginary|previous|deceased|old|"
            r"first|last|neighbou?r'?s|friend'?s|sister'?s|brother'?s)")
_NUMBER_WORD = {"2": "two", "3": "three", "4": "four", "5": "five", "6": "six", "7": "seven",
                "8": "eight", "9": "nine", "10": "ten"}
_COUNT = (r"(?:two|three|four|five|six|seven|eight|nine|ten|2|3|4|5|6|7|8|9|10)")
_SIZE = r"(?:(?:little|young|baby|big|older|younger|twin|new|adopted|rescue|sweet|lovely)\s+)*"


def _has(who: str, *, count: str = "", names: str = "") -> str:
    """ "Has three cats", "Has a guinea pig, Oscar", "Has cats, Miso and Tofu"."""
    plural = who.endswith(("s", "ies", "children", "twins", "grandkids", "fish"))
    article = count or ("" if plural else ("an" if who[0] in "aeiou" else "a"))
    return f"Has {article + ' ' if article else ''}{who}" + (f", {names}" if names else "")


def _kin_words(text: str) -> str:
    return " ".join(text.lower().split())


def _names_ok(names: str) -> bool:
    first = names.split()[0].strip(",")
    return first not in ("And", "Is", "Are", "Just", "Was", "Has", "The", "My", "I", "We", "He",
                         "She", "They", "It", "This", "That", "Who", "So", "But", "Our", "Their")


# -- names and counts given in passing (any mood) ---------------------------------------------
def _named_after(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "Oscar, my guinea pig, …" """
    if not _names_ok(m.group("name")):
        return
    who = _kin_words(m.group("who"))
    yield _keystone("relationship", _has(who, names=m.group("name")), s, 0.7,
                    value=f"{who} {m.group('name')}")


ANYWHERE.append((re.compile(rf"(?<![\w,] )(?<!\w)(?P<name>{_NAME}),\s+my\s+(?!{_NOT_NOW}\b)"
                            rf"{_SIZE}(?P<who>{PETS}|{FAMILY}|son|daughter|{PARENTS})\b(?=\s*[,.;!?)]|$)",
                            re.I), _named_after))


def _my_named(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "my guinea pig Oscar", "my cats, Miso, Tofu and Nori", "my sister Ana" """
    names = m.group("names")
    if not _names_ok(names):
        return
    who = _kin_words(m.group("who"))
    count = (m.group("count") or "").lower()
    several = "," in names or " and " in names or "&" in names
    if several != (who.endswith("s") or who in ("children", "twins", "grandkids")):
        return  # "my cats Miso" or "my cat Miso and Tofu": not one reading
    yield _keystone("relationship", _has(who, count=count, names=names), s, 0.7,
                    value=f"{who} {names}")


ANYWHERE.append((re.compile(
    rf"\bmy\s+(?!{_NOT_NOW}\b)(?P<count>{_COUNT}\s+)?{_SIZE}(?P<who>{PETS}|{FAMILY}|kids|"
    rf"children|{PARENTS}),?\s+(?P<names>{_NAMES})(?=\s*[,.;:!?)\u2014-]|\s+(?:is|are|was|were|has|"
    r"have|who|and|just|loves?|hates?|turned|got|gets)\b|\s*$)", re.I), _my_named))


def _my_counted(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "with my three cats", "my two kids" """
    who = _kin_words(m.group("who"))
    count = m.group("count").lower()
    # one count at a time: "my three cats" and "my three dogs" are one fact, and a later "my
    # five dogs" is newer news of it
    slot = "pets" if re.fullmatch(PETS, who, re.I) else (
        "children" if re.fullmatch(r"kids|children|sons|daughters|twins", who) else None)
    yield _keystone("relationship", _has(who, count=count), s, 0.65, slot=slot,
                    value=_NUMBER_WORD.get(count, count))


ANYWHERE.append((re.compile(rf"\bmy\s+(?P<count>{_COUNT})\s+{_SIZE}(?P<who>{_KIN})\b(?!\s*{_NAME})",
                            re.I), _my_counted))


def _have_named(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "I have a guinea pig named Oscar", "we adopted a kitten called Mochi" """
    who = _kin_words(m.group("who"))
    name = m.group("name")
    if not _names_ok(name):
        return
    verb = m.group("verb").lower()
    yield _keystone("relationship", f"Has a {who} named {name}", s, 0.75,
                    value=f"{who} {name}")
    if verb not in ("have", "'ve got", "have got", "own"):
        event = _event("relationship", f"Adopted a {who} named {name}", s, announced=True)
        if event is not None:
            yield event


ANYWHERE.append((re.compile(
    rf"\b(?:I|we)\s+(?:(?:just|recently|finally|also|even|now)\s+)*(?P<verb>have|'ve got|"
    rf"have got|own|adopted|got|rescued|brought home|welcomed)\s+(?:a|an|another|our|my|"
    rf"a new|one)\s+{_SIZE}(?:[a-z-]+\s+)?(?P<who>{PETS})\s+(?:(?:named|called)\s+|"
    rf"(?:from [\w ]{{2,30}}?\s+)?and\s+named\s+(?:him|her|it|them)\s+)(?P<name>{_NAME})\b",
    re.I), _have_named))


def _parent_died(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    who = _kin_words(m.group("who"))
    event = _event("relationship", f"My {who} died", s)
    if event is not None:
        yield event


ANYWHERE.append((re.compile(rf"\bmy\s+(?P<who>{PARENTS}|{FAMILY}|{PARTNER}|{PETS})\s+"
                            r"(?:(?:just|sadly|recently)\s+)*(?:passed away|passed|died)\b",
                            re.I), _parent_died))


def _home_country(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    place = _trim_place(m.group("place"))
    if place and not _VAGUE.match(place):
        yield _keystone("identity", f"Is from {place}", s, 0.7, slot="origin", value=place)


ANYWHERE.append((re.compile(
    rf"\bmy\s+(?:home\s*country|home\s*town|hometown|native\s+country|country\s+of\s+origin|"
    rf"birthplace)(?:,\s*|\s+of\s+|\s+(?:is|was)\s+)(?P<place>{PLACE})", re.I), _home_country))


# -- claims: the person's own clause ---------------------------------------------------------
@rule(r"^as\s+(?:an?\s+)(?P<role>[\w/+&'-]+(?:\s+[\w/+&'-]+){0,4}?)\s*(?:,|$|(?=\s+I\b))")
def _as_a(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "As a writer, I …" """
    role = m.group("role").strip()
    if re.match(r"(?:former|ex|retired|future|aspiring|wannabe|kid|child|teen)\b", role, re.I):
        return
    if re.match(r"(?:single\s+|proud\s+|new\s+|first-time\s+)?(?:parent|mom|mum|dad|mother|"
                r"father)(?:\s+of\b.*)?$", role, re.I):
        yield _keystone("relationship", f"Is a {role}", s, 0.7, value=role)
        return
    role = re.sub(r"^fellow\s+", "", role, flags=re.I)
    if _role_ok(role):
        article = "an" if role[0].lower() in "aeiou" else "a"
        yield _keystone("identity", f"Is {article} {role}", s, 0.7, slot="role", value=role)


_JOB_END = (r"(?=\s*(?:[,.;:!?()\u2014-]|\s(?:at|for|with|in|yesterday|today|last|this|and|but|so|"
            r"because|is|was|has|had|keeps|kept|pays|paid|means|meant|takes|took|gives|gave|"
            r"involves|requires|can|could|will|would)\b|$))")


def _my_job_as(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "my job as a nurse", "lost my job as a cashier", "my new job at Brightwell" """
    role = (m.group("role") or "").strip()
    org = m.group("org") or m.group("org2")
    org = org if org and org.lower() not in ("a", "an", "the", "home") else None
    if role and not _role_ok(role):
        role = ""
    if not role and not org:
        return
    article = m.group("article") or ""
    what = " ".join(p for p in (f"as {article}{role}" if role else "", f"at {org}" if org else "")
                    if p)
    lost = m.group("lost")
    if lost:
        verb = {"lost": "Lost", "left": "Left", "quit": "Quit"}.get(lost.lower(), "Left")
        event = _event("job", f"{verb} my job {what}", s)
        if event is not None:
            yield event
        return
    if m.group("was"):
        return  # "my old job", "my job used to be": no more
    if role:
        yield _keystone("identity", f"Works as {article}{role}", s, 0.7, slot="role",
                        value=role)
    if org:
        yield _keystone("identity", f"Works at {org}", s, 0.7, slot="employer", value=org)


CLAIM_ANYWHERE.append((re.compile(
    rf"(?:\b(?P<lost>lost|left|quit)\s+)?\bmy\s+(?P<was>old\s+|last\s+|previous\s+|former\s+)?"
    rf"(?:new\s+|current\s+|day\s+|full-time\s+|part-time\s+|secure\s+|first\s+)?"
    rf"(?:9-5\s+|nine-to-five\s+)?job\s+(?:(?:as\s+(?P<article>an?\s+)?(?P<role>[\w/+&'-]+"
    rf"(?:\s+[\w/+&'-]+){{0,3}}?){_JOB_END})(?:\s+at\s+(?P<org>{ORG}))?|at\s+(?P<org2>{ORG}))",
    re.I), _my_job_as))


_WORKPLACE = (r"(?:hospital|clinic|school|primary school|high school|university|college|"
              r"library|museum|bank|bakery|cafe|café|coffee shop|restaurant|bar|hotel|"
              r"store|shop|bookstore|supermarket|pharmacy|startup|start-up|company|firm|"
              r"law firm|agency|studio|lab|laboratory|factory|warehouse|nonprofit|non-profit|"
              r"charity|newspaper|magazine|publisher|publishing house|gym|salon|vet|"
              r"animal shelter|shelter|daycare|nursery|care home|nursing home|hospice|farm|"
              r"garage|call center|call centre|tech company|consultancy|bank branch|"
              r"government agency|council|ministry|church|theatre|theater|radio station)")


@rule(rf"^(?:I\s+{ADV}work(?:ing)?|{I_AM}\s+{ADV}(?:working|employed))\s+(?:at|in|for)\s+"
      rf"(?P<org>(?:an?|the)\s+(?:[a-z-]+\s+){{0,2}}{_WORKPLACE})\b(?!\s+(?:of|on|near)\b)")
def _work_at_a(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "I work at a hospital" """
    org = m.group("org")
    yield _keystone("identity", f"Works at {org}", s, 0.7, slot="employer", value=org)


_BUSINESS = (r"(?:dance\s+studio|studio|business|company|store|shop|online store|boutique|"
             r"bakery|cafe|café|restaurant|bar|practice|firm|agency|clinic|brand|label|"
             r"clothing line|clothing store|salon|gym|yoga studio|school|startup|start-up|"
             r"podcast|channel|YouTube channel|blog|newsletter|band|nonprofit|non-profit|"
             r"charity|farm|food truck|shelter)")


@rule(rf"^(?:I\s+{ADV}(?:run|own|manage|have)|{I_AM}\s+{ADV}(?:running|managing))\s+"
      rf"(?:my\s+own|an?|my)\s+(?P<what>(?:[\w-]+\s+){{0,2}}?{_BUSINESS})\b")
def _run_own(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "I run my own pottery studio", "I own a bakery" """
    what = m.group("what")
    if re.match(r"(?:favou?rite|local|go-to)\b", what, re.I):
        return
    yield _keystone("identity", f"Runs their own {what}", s, 0.7, value=f"runs {what}")


@rule(rf"^I\s+{ADV}(?:love|like|enjoy)\s+(?:running|owning|having)\s+my\s+own\s+"
      rf"(?P<what>(?:[\w-]+\s+){{0,2}}?{_BUSINESS})\b")
def _love_running_own(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    yield _keystone("identity", f"Runs their own {m.group('what')}", s, 0.65,
                    value=f"runs {m.group('what')}")


@rule(rf"^(?:{I_AM}|I've\s+been|I\s+have\s+been)\s+{ADV}(?:starting|opening|launching|setting\s+up|"
      rf"building|creating|growing)\s+(?:up\s+)?(?P<what>(?:a|an|my)\s+(?:own\s+)?(?:new\s+)?"
      rf"(?:[\w-]+\s+){{0,2}}?{_BUSINESS})\b")
def _starting_business(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "I'm starting a pottery studio" """
    yield _keystone("objective", f"Is starting {m.group('what')}", s, 0.65)


@rule(rf"^I\s+{ADV}(?:started|opened|launched|set up|founded)\s+(?P<what>(?:a|an|my)\s+"
      rf"(?:own\s+)?(?:new\s+)?(?:[\w-]+\s+){{0,2}}?{_BUSINESS})\b")
def _started_business(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    what = m.group("what")
    event = _event("job", f"Started {what}", s)  # a start told later is often a recap
    if event is not None:
        yield event
    own = re.sub(r"^(?:a|an|my)\s+(?:own\s+)?(?:new\s+)?", "", what, flags=re.I)
    yield _keystone("identity", f"Runs their own {own}", s, 0.6, value=f"runs {own}")


@rule(rf"^I\s+{ADV}(?:started|began|got|landed|accepted)\s+(?:a|my)\s+(?:new\s+)?job\s+as\s+"
      rf"(?:an?\s+)?(?P<role>[\w/+&'-]+(?:\s+[\w/+&'-]+){{0,3}}?){_JOB_END}"
      rf"(?:\s+at\s+(?P<org>{ORG}))?")
def _new_job_as(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "I started a new job as a data analyst last week" """
    role, org = m.group("role").strip(), m.group("org")
    if not _role_ok(role):
        return
    article = "an " if role[0].lower() in "aeiou" else "a "
    event = _event("job", f"Started a new job as {article}{role}" + (f" at {org}" if org
                                                                      else ""), s,
                   announced=True)
    if event is not None:
        yield event
    yield _keystone("identity", f"Works as {article}{role}", s, 0.7, slot="role", value=role)
    if org:
        yield _keystone("identity", f"Works at {org}", s, 0.65, slot="employer", value=org)


_PERIOD = (r"(?:a|an|one|two|three|four|five|six|[0-9]{1,2}|a few|a couple of)\s+"
           r"(?:semesters?|terms?|years?|months?|weeks?|summer|winter)")


@rule(rf"^(?:{I_AM}|we're|we are)\s+{ADV}(?:off|heading|going|moving|flying|relocating)\s+"
      rf"(?:back\s+)?to\s+(?P<place>{PLACE})\s+for\s+(?P<period>(?:the\s+)?{_PERIOD}|the\s+"
      r"(?:semester|term|summer|winter|year))\b(?P<rest>.*)")
def _off_to(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "I'm off to Ireland for a semester" """
    place = _trim_place(m.group("place"))
    if not place or _VAGUE.match(place):
        return
    why = re.match(r"\s+(?:to|for)\s+(?P<why>(?:study|work|teach|do|an?|my)\b[\w ]{2,30}?)"
                   r"(?=\s*(?:[,.;!]|$))", m.group("rest"))
    yield _keystone("identity", f"Is going to {place} for {m.group('period')}"
                    + (f" ({why.group('why')})" if why else ""), s, 0.65,
                    value=f"away {place}")


# -- likes said of the thing ----------------------------------------------------------------
_THING = (r"(?P<v>(?!(?:it|this|that|these|those|they|he|she|you|your|there|here|what|which|"
          r"who)\b)[\w'&+-]+(?:\s+[\w'&+-]+){0,5}?)")


_COMMON = frozenset((
    "my", "our", "nature", "music", "art", "books", "food", "travel", "animals", "dogs", "cats",
    "pets", "sports", "yoga", "coffee", "tea", "dance", "family", "friends", "movies", "films",
    "photography", "gardening", "cooking", "baking", "reading", "writing", "painting", "hiking",
    "poetry", "theatre", "theater", "fashion", "history", "science", "math", "maths", "games",
    "chocolate", "wine", "beer", "camping", "fishing", "sunsets", "flowers", "plants",
))


@rule(rf"^{_THING}\s+(?:(?:is|are|has always been|has been|have always been)\s+{ADV}"
      r"(?:my|one of my)\s+(?:biggest\s+|true\s+|real\s+|greatest\s+)?(?:passions?|happy place|"
      r"stress[- ]buster|escape|therapy|thing|jam|comfort food|guilty pleasure|favou?rites?|"
      r"faves?|top pick|go-to)\b(?!\s+\w)|(?:always\s+|really\s+|just\s+|truly\s+|honestly\s+)?"
      r"(?:makes?\s+me\s+(?:so\s+|really\s+|super\s+|very\s+|feel\s+)?(?:happy|happier|alive|"
      r"calm|relaxed|grateful|at peace)|cheers?\s+me\s+up|brings?\s+me\s+(?:so\s+much\s+|"
      r"a lot of\s+|great\s+)?(?:joy|peace|happiness)|means?\s+(?:so\s+much|a lot|everything|"
      r"the world)\s+to\s+me|helps?\s+me\s+(?:relax|unwind|de-?stress|recharge))\b)")
def _liked_thing(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """What they love, said of the thing: "Pottery is my passion", "Lentil soup is one of my
    favorites", "Climbing makes me so happy", "The sea always cheers me up"."""
    value = m.group("v").strip()
    if not value or _VAGUE.match(value) or len(value.split()) > 6 or re.search(
            r"\b(?:I|I'm|I've|we|we're)\b", value):
        return  # "I'm passionate about dancing and it brings me joy": no thing named
    first = value.split()[0]
    if first[:1].isupper() and not first.isupper() and (
            first.lower() in _COMMON or first.lower().endswith("ing")
            or first in ("The", "A", "An")) and (
            len(value.split()) == 1 or not value.split()[1][:1].isupper()):
        value = value[0].lower() + value[1:]  # "Climbing makes me happy": not a name
    yield _keystone("preference", f"Likes {value}", s, 0.6)


@rule(rf"^{_THING}\s+(?:is|are|was|has always been)\s+{ADV}my\s+(?:all-time\s+|absolute\s+)?"
      r"(?:favou?rite|fave|go-to|top)\s+(?P<k>[\w -]{1,30}?)(?=\s*(?:[,.;:!)]|\s(?:and|but|so|"
      r"because|since|ever|of all time|to)\b|$))")
def _x_is_my_favourite(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "Harry Potter is my favorite book", "Cardamom is my go-to spice" """
    value, kind = m.group("v").strip(), m.group("k").strip()
    if not value or _VAGUE.match(value) or len(value.split()) > 6 or kind.lower() in (
            "part", "thing", "one", "ones", "bit", "pick") or re.match(
            r"(?:for|to|when|if|of|in)\b", kind, re.I):
        return
    if re.match(r"(?:editor|ide|language|shell|terminal|browser|tool|os|distro|framework|"
                r"database|notes app|note-taking app|app|stack)$", kind, re.I):
        return  # "Typst is my go-to editor": a tool in use (phrasings._tool_is_my)
    yield _keystone("preference", f"Favourite {kind}: {value}", s, 0.7)


@rule(rf"^{I_AM}\s+{ADV}(?:so\s+|really\s+|super\s+|very\s+|deeply\s+)?(?:passionate\s+about|"
      r"obsessed\s+with|crazy\s+about|in\s+love\s+with|a\s+huge\s+fan\s+of|hooked\s+on|"
      r"(?:fascinated|awed|amazed|enchanted|captivated)\s+by|in\s+awe\s+of|drawn\s+to)\s+(?P<v>.+)")
def _passionate(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "I'm passionate about dancing", "I'm fascinated by birds"; not "I'm in awe of people
    who climb mountains" (what is liked is what they do, cut off at "who")."""
    if not _RELATIVE.match(m.group("v"), len(_value(m.group("v")))):
        yield _liked(_value(m.group("v")), s, words=8, confidence=0.65)


_RELATIVE = re.compile(r"\s+(?:who|that|which|whose|whom)\b", re.I)  # restrictive: no comma


def _liked(value: str, s: Sentence, *, words: int, confidence: float = 0.6) -> Candidate | None:
    """ "Likes VALUE", when VALUE names something (not "it", not a whole paragraph)."""
    if value and not _VAGUE.match(value) and len(value.split()) <= words:
        return _keystone("preference", f"Likes {value}", s, confidence)
    return None


@rule(rf"^(?:I've|I have)\s+{ADV}(?:always\s+)?(?:loved|liked|enjoyed|been into|been\s+"
      r"(?:(?:so\s+|really\s+)?(?:fascinated|awed|amazed|enchanted|captivated)\s+by|in\s+awe\s+of|"
      r"drawn\s+to|obsessed\s+with|passionate\s+about|crazy\s+about))\s+(?P<v>.+)")
def _always_loved(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "I've always loved pottery"; not "the …" (often "the way you explained it")."""
    value = _value(m.group("v"))
    if not value.lower().startswith("the ") and not _RELATIVE.match(m.group("v"), len(value)):
        yield _liked(value, s, words=8)


_INSTRUMENTS = (r"(?:guitar|piano|violin|viola|cello|drums|bass|flute|saxophone|sax|trumpet|"
                r"ukulele|harp|clarinet|keyboard|banjo|harmonica)")
_SPORTS = (r"(?:tennis|football|soccer|basketball|volleyball|golf|hockey|rugby|cricket|"
           r"baseball|badminton|squash|chess|poker|padel|pickleball|video games|board games|"
           r"the guitar|the piano|the violin|the drums)")


@rule(rf"^I\s+{ADV}(?:play|practi[cs]e)\s+(?P<v>(?:the\s+)?{_INSTRUMENTS}|{_SPORTS})\b")
def _play(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "I play the guitar" """
    yield _keystone("preference", f"Plays {m.group('v')}", s, 0.65)


_ACTIVITIES = (r"(?:yoga|pilates|karate|judo|jiu-?jitsu|taekwondo|boxing|kickboxing|crossfit|"
               r"ballet|salsa|tai chi|meditation|archery|fencing|rowing|parkour)")


@rule(rf"^I\s+{ADV}(?P<verb>do|practi[cs]e|teach)\s+(?P<v>{_ACTIVITIES})\b")
def _do_activity(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "I do yoga every morning", "I teach yoga" """
    if m.group("verb").lower() == "teach":
        yield _keystone("identity", f"Teaches {m.group('v')}", s, 0.7, slot="teaches",
                        value=m.group("v"))
        return
    yield _keystone("preference", f"Does {m.group('v')}", s, 0.65)


@rule(r"^my\s+name\s+is\s+(?P<name>(?-i:[A-Z][a-z\u00e0-\u00ff]+"
      r"(?:[- ][A-Z][a-z\u00e0-\u00ff]+){0,2}))(?=\s*(?:[,.;!]|$|\s(?:and|but|by the way)\b))")
def _my_name(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "My name is Ada Lumen" """
    yield _keystone("identity", f"My name is {m.group('name')}", s, 0.8, slot="name",
                    value=m.group("name"))


@rule(rf"^{I_AM}\s+{ADV}(?P<a>an?\s+)?(?P<v>[\w' -]{{2,40}}?)(?=\s*(?:[,.;:!)]|$|\s(?:and|but|so|"
      r"because|since|now|too)\b))")
def _i_am_special(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "I'm Catholic", "I'm bisexual", "I'm a practising Muslim": said, and kept `high`."""
    value = m.group("v").strip()
    if special_category(f"Is {value}") is not None:
        yield _keystone("identity", f"Is {m.group('a') or ''}{value}", s, 0.75)


@rule(rf"^(?:I\s+{ADV})?(?:still\s+)?(?:following|pursuing|living|chasing|sharing|found|"
      r"follow|pursue|share)\s+my\s+(?:passion|love)\s+(?:for|of)\s+(?P<v>.+)")
def _my_passion(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "Still following my passion for pottery" """
    yield _liked(_value(m.group("v")), s, words=6)


@rule(rf"^my\s+(?:own\s+)?(?:new\s+)?(?P<what>(?:[\w-]+\s+){{0,2}}?{_BUSINESS})\s+is\s+"
      r"(?:finally\s+|now\s+|officially\s+)?(?:open|live|launched|up and running)\b")
def _business_open(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "My pottery studio is open!" """
    what = m.group("what")
    event = _event("job", f"Opened their {what}", s, announced=True)
    if event is not None:
        yield event
    yield _keystone("identity", f"Runs their own {what}", s, 0.6, value=f"runs {what}")


@rule(rf"^I\s+{ADV}(?:got|was|have been|'ve been)\s+{ADV}accepted\s+(?:for|into|to|on)\s+"
      r"(?P<what>(?:a|an|the|my)\s+(?:[\w-]+\s+){0,3}?(?:internship|program|programme|course|"
      r"school|university|college|fellowship|residency|position|job|role|apprenticeship|"
      r"bootcamp|team|master'?s|phd|degree))\b")
def _accepted_for(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "I just got accepted for a design internship!" """
    event = _event("job", f"Got accepted for {m.group('what')}", s, announced=True)
    if event is not None:
        yield event


@rule(rf"^(?:I|we)\s+{ADV}(?:got|found|moved into|rented)\s+(?:a|an|my|our)\s+"
      r"(?:new\s+)?(?P<what>place|apartment|flat|house|home|condo)\b(?P<rest>.*)")
def _new_place(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "I got a new place with a garden!" """
    if not re.search(r"\bnew\b|\bmoved\b", m.group(0), re.I):
        return
    event = _event("move", f"Got a new {m.group('what')}", s, announced=True)
    if event is not None:
        yield event


@rule(r"^(?:I've|I have)\s+been\s+(?:really\s+)?(?:wanting|meaning|hoping|planning|dying|"
      r"itching)\s+to\s+(?P<v>.+)")
def _been_wanting(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "I've been wanting to try sailing" """
    value = _value(m.group("v"))
    if value and not _VAGUE.match(value) and len(value.split()) <= 10 and not re.match(
            r"(?:for|to|a|an|the|it|this|that|in|on|at|with)\b", value, re.I):
        yield _keystone("objective", f"Wants to {value}", s, 0.6)


@rule(rf"^(?:I've\s+been|I\s+have\s+been|{I_AM})\s+{ADV}(?:really\s+)?getting\s+(?:really\s+)?"
      r"into\s+(?P<v>.+)")
def _getting_into(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "I've been getting into baking more" """
    yield _liked(re.sub(r"\s+(?:more|lately|recently)\b", "", _value(m.group("v"))), s, words=6)


@rule(rf"^(?:I|we)\s+{ADV}(?:adopted|rescued|got|brought home)\s+(?:a|an|another|our|my)\s+"
      rf"(?:new\s+|first\s+|second\s+|third\s+)?(?:[a-z-]+\s+)?(?P<who>{PETS})\b"
      rf"(?!\s+(?:named|called|and named|toy|bed|food|collar|sweater)\b)")
def _adopted(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "I recently adopted a kitten from a shelter." """
    who = _kin_words(m.group("who"))
    if not re.search(r"\b(?:adopted|rescued|brought home|new|another)\b", m.group(0), re.I):
        return  # "I got a dog" may be a toy, a picture; adopting is having
    event = _event("relationship", f"Adopted a {who}", s, announced=True)
    if event is not None:
        yield event
    yield _keystone("relationship", _has(who), s, 0.6, value=f"has {who}")


_SOUGHT = (r"(?:place|apartment|flat|house|home|spot|location|job|position|dog|puppy|pup|pet|"
           r"partner|roommate|flatmate|school|studio|investors?|venue|space|car|neighbou?rhood)")


@rule(rf"^{I_AM}\s+{ADV}(?:on the hunt for|searching for|looking for|hunting for|house-hunting for)"
      rf"\s+(?P<v>(?:an?|the|my|some)\s+(?:[\w-]+\s+){{0,3}}?{_SOUGHT}\b(?:\s+(?:for|in|near)\s+"
      r"(?:my|a|an|the)?\s*[\w -]{2,30}?)?)(?=\s*(?:[,.;:!]|$|\s(?:and|but|so|that|which)\b))")
def _looking_for(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "I'm on the hunt for a quiet flat near the river" """
    yield _keystone("objective", f"Is looking for {m.group('v')}", s, 0.6)


@rule(rf"^{I_AM}\s+{ADV}(?:thinking (?:of|about)|considering|planning on)\s+"
      r"(?P<v>(?:getting|adopting|moving|opening|starting|buying|learning|working with|"
      r"switching to|going back to|applying)\b.+)")
def _thinking_of(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "I'm thinking of applying to art school" """
    from pcp_cli.extract.phrasings import _TASK

    value = _value(m.group("v"))
    if value and len(value.split()) <= 12 and not _TASK.search(value):
        yield _keystone("objective", f"Is thinking of {value}", s, 0.6)


# -- what points back at what they said before -------------------------------------------------
_MY_KIN = re.compile(rf"\bmy\s+(?!{_NOT_NOW}\b)(?:{_COUNT}\s+)?{_SIZE}(?P<who>{_KIN}|{PARTNER})\b",
                     re.I)
_HIS = re.compile(r"^(?:sons?|brothers?|nephews?|grandsons?|stepsons?|husband|boyfriend|"
                  r"hubby|fiance)$", re.I)
_HERS = re.compile(r"^(?:daughters?|sisters?|nieces?|granddaughters?|stepdaughters?|wife|"
                   r"girlfriend|fianc[ée]e)$", re.I)


def _plural(who: str) -> bool:
    return who.endswith(("s", "ies", "children", "twins", "grandkids", "fish")) and \
        not who.endswith(("ss", "fianc\u00e9e"))


def said_before(s: Sentence, *, plural: bool, pronoun: str = "") -> str | None:
    """The one thing of the person's (a pet, a child, a sibling, a partner: "my dogs") that
    a "their" or "his" in `s` can stand for: named in `s` or in what they said just before
    (`Sentence.earlier`), of the right number (and, for "his"/"her", not the other).
    None when there is none or more than one: a guess is no claim."""
    found = set()
    for text in (*s.earlier, s.work):
        for match in _MY_KIN.finditer(text):
            who = _kin_words(match.group("who"))
            if _plural(who) != plural:
                continue
            if (pronoun == "his" and _HERS.match(who)) or (pronoun == "her" and _HIS.match(who)):
                continue
            found.add(who[:-1] if plural and who.endswith("s") else who)
    if len(found) != 1:
        return None
    only = found.pop()
    return next(w for text in (*s.earlier, s.work) for m in _MY_KIN.finditer(text)
                if (w := _kin_words(m.group("who"))).startswith(only)
                and _plural(w) == plural)


@rule(rf"^(?P<pronoun>their|his|her)\s+names?\s+(?:are|is|'s)\s+(?P<names>{_NAMES})"
      r"(?=\s*[,.;!)]|\s*$|\s+(?:and\s+(?:they|he|she)|too)\b)")
def _their_names(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "I got new collars for my dogs. … Their names are Pepper, Precious and Panda." """
    names = m.group("names")
    if not _names_ok(names):
        return
    several = "," in names or " and " in names or "&" in names
    pronoun = m.group("pronoun").lower()
    if several and pronoun != "their":
        return
    who = said_before(s, plural=several, pronoun=pronoun)
    if who is None:
        return
    yield _keystone("relationship", _has(who, names=names), s, 0.65, value=f"{who} {names}")


# -- a business of theirs, named in passing ----------------------------------------------------
_SHOP = (r"(?:store|shop|boutique|bakery|restaurant|studio|salon|food truck|clothing line|"
         r"brand|business|startup|start-up)")
# "my local store", "my favourite shop", "my dream studio": not one they have.
_NOT_MINE = (r"(?:local|favou?rite|fave|usual|nearest|neighbou?rhood|corner|grocery|go-to|"
             r"regular|old|former|dream|future|ex|coffee|friend'?s|mom'?s|dad'?s|parents'?|"
             r"family|funny|monkey)")
_NOT_YET = re.compile(
    r"\b(?:open|opening|start|starting|launch|launching|build|building|set up|setting up|"
    r"want|wanted|wants|hope|hoping|dream|dreaming|plan|planning|find|finding|search|"
    r"searching|looking|hunt|hunting|mind)\s+(?:\w+\s+){0,2}$", re.I)


def _my_shop(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "…an ad campaign for my clothing store", "a new piece for my store": they have one.
    Not "open my own studio" (a plan: `_looking_for`, the objective rules), not "my local
    shop" or "my business trip"."""
    before = s.work[:m.start()]
    if _NOT_YET.search(before):
        return
    what = " ".join(m.group("what").lower().split())
    if m.group("own"):
        yield _keystone("identity", f"Runs their own {what}", s, 0.6, value=f"runs {what}")
    else:
        article = "an" if what[0] in "aeiou" else "a"
        yield _keystone("identity", f"Has {article} {what}", s, 0.55, value=f"runs {what}")


CLAIM_ANYWHERE.append((re.compile(
    rf"(?<!\bof )\bmy\s+(?P<own>own\s+)?(?!{_NOT_MINE}\b)(?P<what>(?:(?!{_NOT_MINE}\b)"
    rf"[a-z][a-z-]*\s+){{0,2}}?{_SHOP})(?=\s*[,.;:!?)]|\s*$|\s+(?:is|are|was|were|has|and|for|in|"
    r"on|at|"
    r"to|with|since|because|but|so|lately|now|today|this|these|last|going|doing)\b)", re.I),
    _my_shop))


# -- what they do with their time ------------------------------------------------------------
@rule(rf"^(?:I\s+{ADV}volunteer|{I_AM}\s+{ADV}volunteering|(?:I've|I\s+have)\s+{ADV}been\s+"
      rf"{ADV}volunteering)\s+(?:at|with|for)\s+(?P<v>(?:an?|the|my|our)\s+(?:[\w'-]+\s+){{0,3}}?"
      rf"(?:shelter|hospital|school|library|food bank|charity|centre|center|clinic|church|"
      rf"kitchen|home|garden|museum|zoo|sanctuary|organi[sz]ation|nonprofit|non-profit|group|"
      rf"club|camp)|{ORG})(?=\s*(?:[,.;:!)]|$|\s(?:and|but|so|since|because|every|on|twice|"
      r"once|for|in|this|last|lately|now|a|each)\b))")
def _volunteer(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "I've been volunteering at the animal shelter" """
    yield _keystone("identity", f"Volunteers at {m.group('v')}", s, 0.65)


_ACTIVE = (r"(?:run|swim|cycle|bike|climb|boulder|hike|dance|train|surf|skate|ski|row|box|"
           r"meditate|paint|draw|sketch|knit|sew|bake|cook|garden|journal|sing|"
           r"(?:play|practi[cs]e)\s+(?:the\s+)?[a-z]+|go\s+(?:to\s+(?:the\s+gym|yoga|pilates|"
           r"dance class|the pool)|[a-z]+ing))")
_OFTEN = (r"(?:(?:once|twice|(?:[2-9]|two|three|four|five|six|seven|a\s+few|several)\s+times)\s+"
          r"(?:a|per|every)\s+(?:week|month|day)|every\s+(?:single\s+)?(?:day|morning|evening|"
          r"night|week|weekend|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|daily|"
          r"weekly|most\s+(?:days|mornings|evenings|weekends)|on\s+(?:the\s+)?weekends)")
_THIRD = {"go": "goes", "box": "boxes", "do": "does"}


@rule(rf"^I\s+{ADV}(?P<act>{_ACTIVE})\s+(?P<often>{_OFTEN})\b")
def _often(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """ "I run 3 times a week", "I go climbing every weekend", "I play chess daily": a habit
    (a verb of activity with how often), not "I check my email 5 times a day"."""
    verb, _, rest = " ".join(m.group("act").split()).partition(" ")
    verb = _THIRD.get(verb.lower(), verb.lower() + "s")
    yield _keystone("preference", f"{_sentence_case(verb)} {rest + ' ' if rest else ''}"
                    f"{' '.join(m.group('often').split())}", s, 0.65)


_ONGOING = (r"(?:learning|practi[cs]ing|taking\s+(?:(?:\w+\s+){0,2}(?:classes|lessons|courses?)\b)|"
            r"volunteering|training\s+for|studying|keeping\s+up\s+with|"
            r"working\s+on\s+(?:my|our|a|an)\b|teaching|coaching|mentoring|collecting|"
            r"saving\s+(?:up\s+)?for|building|writing\s+(?:my|a|an)\b)")


@rule(rf"^(?:(?:I've|I\s+have|{I_AM})\s+{ADV}(?:been\s+)?|I\s+{ADV}(?P<start>started|began)\s+)"
      rf"{ADV}(?P<act>{_ONGOING})\s*(?P<v>.*)")
def _ongoing(m: re.Match[str], s: Sentence) -> Iterator[Candidate | None]:
    """What they have been doing for a while, a verb of activity: "I've been learning Spanish",
    "I've been taking pottery classes", "(I've) just been keeping up with fashion trends",
    "I'm working on my novel", "I started taking pottery classes". Not "I've been feeling
    tired" (no activity), and not what
    another rule says better ("volunteering at …": `_volunteer`)."""
    act = " ".join(m.group("act").split())
    value = _value(m.group("v"))
    if act == "volunteering" and re.match(r"(?:at|with|for)\b", value, re.I):
        return
    whole = f"{act} {value}".strip() if value else act
    if (not value and not act.startswith("taking")) or _VAGUE.match(value or "x") or \
            len(whole.split()) > 9 or re.match(r"(?:on|it|this|that|to|for|about|real|really|"
                                               r"so|very|hard|non-stop|like crazy)\b", value, re.I):
        return  # "studying real hard": how, not what
    if m.group("start"):
        if re.search(r"\b(?:19|20)[0-9]{2}\b|\bago\b|\blast\b|\bin\s+[A-Z]", s.work):
            return  # a start with its date: a timeline event (phrasings._took_up)
        been = "Started"
    elif re.match(rf"{I_AM}\b", m.group(0), re.I) and "been" not in m.group(0):
        been = "Is"
    else:
        been = "Has been"
    yield _keystone("preference", f"{been} {whole}", s, 0.6)

