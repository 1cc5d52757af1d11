"""The micro_prompt: the compact profile a client loads at every cold start (spec §4.1).

Contract (each point has its own test in tests/render/test_micro_prompt.py):
- at most `LIMIT` (1,400) characters, always, ending with `(profile as of YYYY-MM-DD)`, the date
  of the newest material actually used; when what it says was said earlier than it was last
  affirmed (a claim accepted from a conversation two years old), the line says that too:
  `(profile as of 2026-12-05; said between 2023-01-20 and 2023-08-10)`;
- identity and role first, then current focus and workflow, then how to work with the person;
- only the profile and current keystones (active, affirmed, not high-sensitivity, not
  superseded); competing claims resolved by `select` (newest high-authority wins);
- nothing usable gives exactly `EMPTY`;
- byte-identical output for the same inputs in any order.

Voice: third person ("Ada Lumen — …", "How to work with Ada: …"). The stored claims are written
about the person ("Ada is…", "Prefers…"), and rewriting them into the first person would mean
editing user-stated text by guesswork; third person also keeps the text honest as *data about*
the user, which is what a reading client should take it as.

Trimming: the text is built from units (one sentence, or one list item), each with a priority.
Units are admitted in priority order while the whole still fits; a unit that does not fit is
dropped whole. Only a top-tier unit (the headline, the current focus, how to work with the
person) is shortened instead, at a word boundary with an ellipsis, and only when enough room is
left for that to be useful. The currency line is reserved before anything else.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from pcp_cli.model.page import OBSERVED_AT, Revision
from pcp_cli.render.select import (
    DISTILLED_FROM,
    authority,
    category,
    clean,
    competition_key,
    current_keystones,
    day,
    distilled_pages,
    fingerprint,
    fresh_profile,
    instant,
    material_instant,
    usable_profile,
)

LIMIT = 1400
EMPTY = "No profile is available yet in this context store."
ELLIPSIS = "…"
# Below this much room a top-tier unit is dropped rather than shortened to a stub.
MIN_USEFUL_ROOM = 60
# More keystones than this cannot fit in 1,400 characters anyway; bounding keeps the work small.
MAX_KEYSTONE_UNITS = 120

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'“‘(\[]?[A-Z0-9])")
# Words after which a full stop does not end a sentence ("Dr. Okonkwo", "J. Smith").
_ABBREVIATIONS = frozenset(
    [
        "dr",
        "mr",
        "mrs",
        "ms",
        "mx",
        "prof",
        "st",
        "sr",
        "jr",
        "vs",
        "etc",
        "inc",
        "ltd",
        "co",
        "no",
        "fig",
        "e.g",
        "i.e",
        "approx",
        "dept",
        "univ",
    ]
)


@dataclass(frozen=True)
class _Unit:
    section: int  # 0 identity/role, 1 environment/workflow, 2 collaboration
    group: int  # display order of the group inside its section
    label: str  # group label ("Current focus:"), "" for plain sentences
    list_item: bool  # joined with "; " and closed with "." instead of as sentences
    order: tuple[object, ...]  # display order inside the group
    priority: tuple[object, ...]  # admission order: smaller first
    text: str
    seconds: float | None  # when this material was last known true
    top_tier: bool = False
    from_profile: bool = False
    # When it was said, where the keystones record it (`observed_at`: a claim `pcp propose`
    # drew from a conversation keeps the time of its sentence when it is accepted); for a
    # distilled profile field, of the keystones it was distilled from.
    said: tuple[float, ...] = ()


def _sentence(text: str) -> str:
    text = clean(text)
    if text and text[-1] not in ".!?…\"'”’)":
        text += "."
    return text


def _split_sentences(text: str) -> list[str]:
    """Sentences of `text`, not split after abbreviations or initials."""
    text = clean(text)
    parts: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        last_word = text[start : match.start()].rsplit(" ", 1)[-1].rstrip(".").casefold()
        if last_word in _ABBREVIATIONS or len(last_word) == 1:
            continue
        parts.append(text[start : match.start()])
        start = match.end()
    parts.append(text[start:])
    return [s for s in (_sentence(part) for part in parts) if s]


def _strip_end(text: str) -> str:
    return clean(text).rstrip(" .;")


def _field(profile: Revision, key: str) -> str:
    if key == "summary":
        value: object = profile.state.content.rstrip("\n")
    else:
        value = profile.state.record.get(key)
    return clean(value) if isinstance(value, str) else ""


def _list_field(profile: Revision, key: str) -> list[str]:
    value = profile.state.record.get(key)
    if not isinstance(value, (list, tuple)):
        return []
    items: list[str] = []
    seen: set[str] = set()
    for item in value:
        text = _strip_end(item) if isinstance(item, str) else ""
        if text and fingerprint(text) not in seen:
            seen.add(fingerprint(text))
            items.append(text)
    return items


def _first_name(name: str) -> str:
    return name.split(" ")[0] if name else ""


# Where each keystone category goes: (section, group, label, tier).
_KEYSTONE_PLACES = {
    "identity": (0, 1, "", 1),
    "objective": (1, 1, "", 1),
    "constraint": (1, 4, "Constraints:", 2),
    "relationship": (1, 5, "People:", 3),
    "glossary": (1, 6, "Terms:", 4),
    "rule": (2, 2, "Rules:", 1),
    "preference": (2, 3, "Preferences:", 2),
    "other": (2, 6, "Also:", 4),
}


def _said(revision: Revision) -> tuple[float, ...]:
    seconds = instant(revision.state.record.get(OBSERVED_AT))
    return () if seconds is None else (seconds,)


def _said_of_fields(profile: Revision, keystones: Sequence[Revision]
                    ) -> dict[str, tuple[float, ...]]:
    """Per distilled field, when the keystones it was distilled from were said."""
    by_page = {rev.page_id: _said(rev) for rev in keystones}
    sources = profile.state.record.get(DISTILLED_FROM)
    if not isinstance(sources, dict):
        return {}
    return {key: tuple(t for page in claims for t in by_page.get(page, ()))
            for key, claims in sources.items() if isinstance(claims, dict)}


def _units(profile: Revision | None, keystones: list[Revision],
           said_of: dict[str, tuple[float, ...]] | None = None) -> list[_Unit]:
    units: list[_Unit] = []
    name = ""
    said_of = said_of or {}
    if profile is not None:
        seconds = instant(profile.created_at)
        name = _field(profile, "name")
        profession = _strip_end(_field(profile, "profession"))

        def add(
            section: int,
            group: int,
            label: str,
            text: str,
            tier: int,
            pos: int = 0,
            list_item: bool = False,
            key: str = "",
        ) -> None:
            if text:
                units.append(
                    _Unit(
                        section,
                        group,
                        label,
                        list_item,
                        (pos,),
                        (tier, section, group, pos),
                        text,
                        seconds,
                        tier == 0,
                        from_profile=True,
                        said=said_of.get(key, ()),
                    )
                )

        def prose(section: int, group: int, label: str, key: str, tier: int) -> None:
            # The first sentence carries the field; later ones are one tier less important.
            for pos, sentence in enumerate(_split_sentences(_field(profile, key))):
                add(section, group, label, sentence, tier if pos == 0 else tier + 1, pos,
                    key=key)

        headline = " — ".join(part for part in (name, profession) if part)
        add(0, 0, "", _sentence(headline), 0, key="profession")
        for pos, sentence in enumerate(_split_sentences(_field(profile, "summary"))):
            add(0, 2, "", sentence, 5, pos, key="summary")
        for pos, item in enumerate(_list_field(profile, "domain_expertise")):
            add(0, 3, "Expertise:", item, 4, pos, list_item=True)
        prose(1, 0, "Current focus:", "primary_focus", 0)
        prose(1, 2, "Tools and workflow:", "tools_and_workflows", 2)
        prose(1, 3, "Working style:", "working_style", 2)
        who = _first_name(name)
        work_with = f"How to work with {who}:" if who else "How to work with this person:"
        prose(2, 0, work_with, "how_interacts_with_ai", 0)
        prose(2, 1, "Communication:", "communication_style", 1)
        for pos, item in enumerate(_list_field(profile, "values")):
            add(2, 5, "Values:", item, 3, pos, list_item=True)

    for rank, rev in enumerate(keystones[:MAX_KEYSTONE_UNITS]):
        section, group, label, tier = _KEYSTONE_PLACES[category(rev)]
        units.append(
            _Unit(
                section,
                group,
                label,
                False,
                (rank,),
                (tier, section, group, rank),
                _sentence(rev.state.content),
                material_instant(rev),
                said=_said(rev),
            )
        )
    return units


def _render_body(units: Sequence[_Unit]) -> str:
    paragraphs: list[str] = []
    for section in range(3):
        in_section = sorted(
            (u for u in units if u.section == section), key=lambda u: (u.group, u.order)
        )
        groups: list[str] = []
        for group in sorted({u.group for u in in_section}):
            members = [u for u in in_section if u.group == group]
            first = members[0]
            if first.list_item:
                body = "; ".join(u.text for u in members) + "."
            else:
                body = " ".join(u.text for u in members)
            groups.append(f"{first.label} {body}" if first.label else body)
        if groups:
            paragraphs.append(" ".join(groups))
    return "\n\n".join(paragraphs)


def _shorten(text: str, room: int) -> str:
    """The longest word-boundary prefix of `text` plus an ellipsis within `room` characters."""
    if room <= len(ELLIPSIS):
        return ""
    cut = text[: room - len(ELLIPSIS)]
    if len(text) > len(cut) and not text[len(cut)].isspace() and " " in cut:
        cut = cut[: cut.rfind(" ")]
    cut = cut.rstrip(" ,;:—-")
    return cut + ELLIPSIS if cut else ""


_WORD = re.compile(r"[^\W_]{3,}")
_STOPWORDS = frozenset(
    "the and for with that this from about into over are was were has have had her his its "
    "their they them who what when where which while than then also very most more".split()
)
# A keystone whose words the profile mostly says already is left out: the profile's "Current
# focus" and the objective keystone it was distilled from say one thing. Keystones are never
# judged against each other (two claims that share most words can still say different things).
# Short claims are never judged redundant: a few shared words prove nothing.
REDUNDANT_SHARE = 0.6
REDUNDANT_MIN_WORDS = 6


def _words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.casefold()) if w not in _STOPWORDS)


def _redundant(unit: _Unit, kept: Sequence[_Unit]) -> bool:
    if unit.from_profile:
        return False
    words = _words(unit.text)
    if len(words) < REDUNDANT_MIN_WORDS:
        return False
    return any(
        len(words & _words(other.text)) >= REDUNDANT_SHARE * len(words)
        for other in kept
        if other.from_profile
    )


def _currency(units: Sequence[_Unit]) -> str:
    """`(profile as of DAY)`, and when the material was said before it was affirmed, when it
    was said: "(profile as of 2026-12-05; said between 2023-01-20 and 2023-08-10)"."""
    known = [u.seconds for u in units if u.seconds is not None]
    when = day(max(known)) if known else "unknown date"
    said = sorted(day(t) for u in units for t in u.said)
    if not said or said[-1] == when:
        return f"(profile as of {when})"
    if said[0] == said[-1]:
        return f"(profile as of {when}; said on {said[0]})"
    return f"(profile as of {when}; said between {said[0]} and {said[-1]})"


def _said_earlier(units: Sequence[_Unit]) -> bool:
    return any(u.seconds is not None and day(t) != day(u.seconds) for u in units for t in u.said)


# Categories that hold one current value: the newest highest-authority claim is what is true
# now, and the others are what it contradicts (the profile's "Current focus" is one thing).
SINGLE_VALUED = ("objective",)


def truest_claims(keystones: Sequence[Revision]) -> list[Revision]:
    """Current keystones the compact view may print, in their priority order.

    Within a category the claims are weighed in the v1 authority order (Appendix A:
    user_stated > approved > imported > generated > inferred, newer before older within a
    level): a single-valued category keeps only its winner; in the others a claim is left out
    when a claim of higher authority mostly repeats it. Only as many claims as could be
    printed are judged (MAX_KEYSTONE_UNITS), each against the stronger claims of its category.
    """
    current = current_keystones(keystones)
    winners: dict[str, Revision] = {}
    # category -> authority level -> the claims at that level; their words are worked out only
    # when a weaker claim is judged against them.
    levels: dict[str, dict[int, list[Revision]]] = {}
    for rev in current:
        cat = category(rev)
        if cat in SINGLE_VALUED:
            held = winners.get(cat)
            if held is None or competition_key(rev) < competition_key(held):
                winners[cat] = rev
        else:
            levels.setdefault(cat, {}).setdefault(authority(rev.state.origin), []).append(rev)
    words_of: dict[int, frozenset[str]] = {}

    def words(rev: Revision) -> frozenset[str]:
        found = words_of.get(id(rev))
        if found is None:
            found = words_of[id(rev)] = _words(rev.state.content)
        return found

    kept: list[Revision] = []
    for rev in current:
        if len(kept) >= MAX_KEYSTONE_UNITS:
            break
        cat = category(rev)
        if cat in SINGLE_VALUED:
            if winners[cat] is rev:
                kept.append(rev)
            continue
        level, own = authority(rev.state.origin), words(rev)
        need = REDUNDANT_SHARE * len(own)
        if own and any(len(own & words(other)) >= need
                       for stronger, claims in levels[cat].items() if stronger < level
                       for other in claims):
            continue
        kept.append(rev)
    return kept


def micro_prompt(profile: Revision | None, keystones: Sequence[Revision]) -> str:
    """The §4.1 compact profile: ≤ 1,400 characters, ending with a `(profile as of …)` line.

    A distilled profile field built from a keystone that is no longer current is stale and
    left out (`select.fresh_profile`); a keystone a distilled field already says is not said
    again.
    """
    return micro_prompt_explained(profile, keystones)[0]


def _unit_name(unit: _Unit, pages: Sequence[Revision]) -> dict[str, str | None]:
    if unit.from_profile:
        return {"page_id": None, "what": (unit.label or "profile").rstrip(":"),
                "text": unit.text}
    rank = unit.order[0]
    page = pages[rank] if isinstance(rank, int) and rank < len(pages) else None
    return {"page_id": page.page_id if page else None, "what": unit.label.rstrip(":") or
            "keystone", "text": unit.text}


def micro_prompt_explained(profile: Revision | None, keystones: Sequence[Revision]
                           ) -> tuple[str, list[dict[str, str | None]]]:
    """The micro_prompt, and what was left out of it and why: `[{page_id (None for a
    profile field), what, text, reason}]` (the console shows it beside the text)."""
    left_out: list[dict[str, str | None]] = []
    fresh, stale = fresh_profile(usable_profile(profile), keystones)
    for key in stale:
        left_out.append({"page_id": None, "what": key, "text": "",
                         "reason": "stale: distilled from a keystone that is no longer current"})
    said = distilled_pages(fresh)
    truest = truest_claims(keystones)
    truest_ids = {rev.page_id for rev in truest}
    for rev in current_keystones(keystones):
        if rev.page_id not in truest_ids:
            left_out.append({"page_id": rev.page_id, "what": category(rev),
                             "text": rev.state.content.strip(),
                             "reason": "a newer or stronger claim of its category says it"})
    claims = []
    for rev in truest:
        if rev.page_id in said:
            left_out.append({"page_id": rev.page_id, "what": category(rev),
                             "text": rev.state.content.strip(),
                             "reason": "the profile already says it (distilled from it)"})
        else:
            claims.append(rev)
    units = _units(fresh, claims, _said_of_fields(fresh, keystones) if fresh else None)
    if not units:
        return EMPTY, left_out
    # The currency line has a fixed length whatever the date, so reserve it first (its longer
    # form only where some material was said before it was affirmed).
    longest = ("(profile as of unknown date; said between YYYY-MM-DD and YYYY-MM-DD)"
               if _said_earlier(units) else "(profile as of unknown date)")
    budget = LIMIT - len("\n\n" + longest)
    kept: list[_Unit] = []
    for unit in sorted(units, key=lambda u: u.priority):
        if _redundant(unit, kept):
            left_out.append({**_unit_name(unit, claims),
                             "reason": "the profile mostly says it already"})
            continue
        trial = kept + [unit]
        length = len(_render_body(trial))
        if length <= budget:
            kept = trial
            continue
        room = budget - (length - len(unit.text))
        if unit.top_tier and (room >= MIN_USEFUL_ROOM or not kept):
            short = _shorten(unit.text, room)
            trial = kept + [replace(unit, text=short)]
            if short and len(_render_body(trial)) <= budget:
                kept = trial
                left_out.append({**_unit_name(unit, claims),
                                 "reason": f"shortened to fit {LIMIT} characters"})
                continue
        left_out.append({**_unit_name(unit, claims),
                         "reason": f"did not fit in {LIMIT} characters (lower priority)"})
    if not kept:
        return EMPTY, left_out
    return f"{_render_body(kept)}\n\n{_currency(kept)}", left_out
