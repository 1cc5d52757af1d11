"""Deterministic profile distillation from keystones: no model, no guessing beyond plain rules.

Which keystones feed which profile field:
- identity     -> name (only when clearly stated), profession, summary
- objective    -> primary_focus (the slot winner)
- preference   -> communication_style when about communication, tools_and_workflows when it
                  names a tool in use ("Uses Neovim", "Makes their slides in Keynote"),
                  working_style when about how they work ("Works best in the morning"),
                  else the summary (a taste in food or music is who they are, not a way of
                  working)
- rule         -> how_interacts_with_ai when about the AI/assistant, else communication_style
                  when about communication, else working_style
- constraint   -> working_style when about work, else the summary ("Is vegetarian.")
- relationship, glossary -> summary
`domain_expertise` and `values` are not derived; they keep their value.

Only current keystones are used (active, affirmed, not high-sensitivity, not superseded; see
`select`). A field listed in the current profile's `record["pinned"]` was set by hand and is
never overwritten (`summary` may be pinned too). A field with nothing to derive keeps its
current value: distillation fills and refreshes; it blanks only a field it derived earlier
from keystones that are no longer current (superseded, revised, withdrawn), which is stale.

Which keystone revisions each derived field came from is kept in the profile's
`record["distilled_from"]` (`{field: {keystone page id: digest of its claim}}`; the revision
ids are in the revision's provenance), so the renderers can tell a distilled
field that is still true from a stale one, and leave out a keystone the profile already says.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pcp_cli.model.page import Revision
from pcp_cli.render.select import (
    DISTILLED_FROM,
    category,
    claim_digest,
    clean,
    current_keystones,
    live_claims,
    slot_winner,
)

MAX_SENTENCES_PER_FIELD = 4
MAX_SUMMARY_SENTENCES = 8

_NAME_WORD = r"[A-Z][a-z]+(?:[-'’][A-Z]?[a-z]+)?"
_NAME = rf"{_NAME_WORD}(?: {_NAME_WORD}){{0,3}}"
# "Their name is …" is how `pcp propose` words "My name is …" (third person, as every claim).
_MY_NAME = re.compile(rf"^(?:my name is|their name is|i am called|call me) ({_NAME})\b",
                      re.IGNORECASE)
_ONLY_NAME = re.compile(rf"^(?:my name is|their name is|i am called|call me) {_NAME}\.?$",
                        re.IGNORECASE)
_X_IS_A = re.compile(rf"^({_NAME}) is (?:a|an) ")
# Capitalised sentence openers that are not names.
_NOT_NAMES = frozenset(
    [
        "I",
        "He",
        "She",
        "They",
        "It",
        "We",
        "You",
        "This",
        "That",
        "These",
        "Those",
        "There",
        "Here",
        "My",
        "Our",
        "Their",
        "His",
        "Her",
        "Its",
        "The",
        "A",
        "An",
        "Someone",
        "Everyone",
        "Nobody",
        "Who",
        "What",
        "Each",
        "Every",
        "Most",
        "Some",
        "Prefers",
        "Works",
    ]
)
_ROLE = re.compile(r"^(?:(?:[A-Z][\w'’-]*(?: [A-Z][\w'’-]*)* is|I am|I'm|I work as|Is) "
                   r"(an? [^;.,()]+)|Works as ((?:an? )?[^;.,()]+))")
_FOCUS = re.compile(r"^(?:[A-Z][\w'’-]*(?: [A-Z][\w'’-]*)* is|I am|I'm) ([a-z]+ing\b.*)$")
_AI_WORDS = re.compile(r"\b(ai|assistant|model|llm|chatbot|agent|you|your)\b", re.IGNORECASE)
_TOOL_CLAIM = re.compile(r"^(?:Uses|Runs|Writes (?:[A-Z]|mostly|mainly)|Their team uses|"
                         r"(?:Makes|Writes|Does|Builds|Keeps|Typesets|Draws|Drafts) their .+ "
                         r"(?:in|with|on|using) )")
_WORK_WORDS = re.compile(
    r"\b(work(?:s|ing|ed|days?|load|flow|place|space)?|job|meetings?|calls?|focus\w*|"
    r"productive|deadlines?|schedul\w*|async\w*|remote\w*|office|desk|morning person|"
    r"night owl|early riser|plan\w*|tasks?|projects?|"
    r"code|coding|review\w*|commits?|tests?|testing|ship\w*|document\w*|sketch\w*|draft\w*|"
    r"batch\w*|sprints?|emails?|notes?|journal\w*|deep work|breaks?|pomodoro|interruptions?|"
    r"colleagues?|team|clients?|research|writing|learn\w*|stud(?:y|ies|ying)|hours?|"
    r"weekends?|evenings?|mornings?|kids?|childcare|commute|budget|on call|time)\b",
    re.IGNORECASE,
)
_COMM_WORDS = re.compile(
    r"\b(concise|terse|verbose|brief|tone|hedg\w*|explain\w*|examples?|answers?|repl(?:y|ies)|"
    r"responses?|wording|jargon|bullet\w*|language|formal|informal|communicat\w*|writ\w*)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class DistillResult:
    """A distilled profile, ready for the caller to write as a revision with provenance `derive`.

    `record` is the complete new profile record (the current one's other keys, `pinned`
    included, are carried over); `summary` is the new page body; `input_revision_ids` are the
    revision ids of the keystones that contributed, sorted; `changed` names the fields whose
    value differs from the current profile.
    """

    record: dict[str, Any]
    summary: str
    input_revision_ids: tuple[str, ...]
    changed: tuple[str, ...]


def _sentence(text: str) -> str:
    text = clean(text)
    return text if not text or text[-1] in ".!?" else text + "."


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


def extract_name(text: str) -> str | None:
    """A name the text clearly states ("My name is Ada Lumen", "Ada is a …"), else None."""
    text = clean(text)
    match = _MY_NAME.match(text)
    if match:
        words = match.group(1).split(" ")
        # With re.IGNORECASE the name pattern also matches lower-case words; keep the
        # capitalised run only.
        kept: list[str] = []
        for word in words:
            if not word[:1].isupper():
                break
            kept.append(word)
        name = " ".join(kept)
        return name if kept and kept[0] not in _NOT_NAMES else None
    match = _X_IS_A.match(text)
    if match and match.group(1).split(" ")[0] not in _NOT_NAMES:
        return match.group(1)
    return None


def extract_role(text: str) -> str | None:
    """ "X is a freelance developer; …" -> "Freelance developer"."""
    match = _ROLE.match(clean(text))
    if not match:
        return None
    role = re.sub(r"^an? ", "", match.group(1) or match.group(2)).strip()
    return _capitalise(role) if role else None


def _focus(text: str) -> str:
    text = clean(text).rstrip(".")
    match = _FOCUS.match(text)
    return _capitalise(match.group(1)) if match else text


def _join(revisions: Sequence[Revision], limit: int) -> str:
    return " ".join(_sentence(rev.state.content) for rev in revisions[:limit])


def distill(keystones: Sequence[Revision], current_profile: Revision | None) -> DistillResult:
    facts = current_keystones(keystones)  # priority order, competitions resolved
    by_cat: dict[str, list[Revision]] = {}
    for rev in facts:
        by_cat.setdefault(category(rev), []).append(rev)

    current = current_profile
    old_record: dict[str, Any] = dict(current.state.record) if current is not None else {}
    old_summary = current.state.content.rstrip("\n") if current is not None else ""
    pinned_raw = old_record.get("pinned")
    pinned = (
        {p for p in pinned_raw if isinstance(p, str)}
        if isinstance(pinned_raw, (list, tuple))
        else set()
    )

    derived: dict[str, tuple[Any, list[Revision]]] = {}
    identity = by_cat.get("identity", [])

    named = [rev for rev in identity if extract_name(rev.state.content)]
    winner = slot_winner(named)
    if winner is not None:
        name = extract_name(winner.state.content) or ""
        old_name = old_record.get("name")
        # "Ada" in a keystone does not replace a fuller "Ada Lumen" already on file.
        if isinstance(old_name, str) and set(name.split()) <= set(old_name.split()):
            name = old_name
        derived["name"] = (name, [winner])

    roles = [rev for rev in identity if extract_role(rev.state.content)]
    winner = slot_winner(roles)
    if winner is not None:
        derived["profession"] = (extract_role(winner.state.content), [winner])

    winner = slot_winner(by_cat.get("objective", []))
    if winner is not None:
        derived["primary_focus"] = (_focus(winner.state.content), [winner])

    ai: list[Revision] = []
    comm: list[Revision] = []
    tools: list[Revision] = []
    work: list[Revision] = []
    personal: list[Revision] = []
    for rev in facts:
        cat = category(rev)
        text = clean(rev.state.content)
        if cat == "rule" and _AI_WORDS.search(text):
            ai.append(rev)
        elif cat in ("rule", "preference") and _COMM_WORDS.search(text):
            comm.append(rev)
        elif cat == "preference" and _TOOL_CLAIM.match(text):
            tools.append(rev)
        elif cat == "rule" or (cat in ("preference", "constraint") and _WORK_WORDS.search(text)):
            work.append(rev)
        elif cat in ("preference", "constraint"):
            personal.append(rev)
    for key, group in (
        ("how_interacts_with_ai", ai),
        ("communication_style", comm),
        ("tools_and_workflows", tools),
        ("working_style", work),
    ):
        if group:
            used = group[:MAX_SENTENCES_PER_FIELD]
            derived[key] = (_join(used, MAX_SENTENCES_PER_FIELD), used)

    # the name is the headline's; a keystone that only says it is not said again below it
    headline = {rev.page_id for key in ("profession",) if key in derived
                for rev in derived[key][1]}
    summary_sources = ([rev for rev in identity if rev.page_id not in headline
                        and not _ONLY_NAME.match(clean(rev.state.content))]
                       + by_cat.get("relationship", []) + by_cat.get("glossary", []) + personal)
    summary_sources = summary_sources[:MAX_SUMMARY_SENTENCES]
    if summary_sources:
        derived["summary"] = (_join(summary_sources, MAX_SUMMARY_SENTENCES), summary_sources)

    record = dict(old_record)
    summary = old_summary
    used_ids: set[str] = set()
    changed: list[str] = []
    old_sources = old_record.get(DISTILLED_FROM)
    sources_by_field: dict[str, dict[str, str]] = (
        {k: dict(v) for k, v in old_sources.items() if isinstance(v, dict)}
        if isinstance(old_sources, dict) else {}
    )
    for key in sorted(derived):
        value, sources = derived[key]
        if key in pinned or not value:
            continue
        used_ids.update(rev.revision_id for rev in sources)
        sources_by_field[key] = {rev.page_id: claim_digest(rev)
                                 for rev in sorted(sources, key=lambda r: r.page_id)}
        if key == "summary":
            if value != summary:
                changed.append(key)
            summary = value
        else:
            if record.get(key) != value:
                changed.append(key)
            record[key] = value
    # A field derived earlier from keystones that are no longer current, with nothing to
    # derive it from now, is stale: it is dropped, never kept as if it were still true.
    live = live_claims(keystones)
    for key in sorted(set(sources_by_field) - set(derived)):
        claims = sources_by_field[key]
        if key in pinned or all(live.get(p) == d for p, d in claims.items()):
            continue
        del sources_by_field[key]
        if key == "summary":
            if summary:
                changed.append(key)
            summary = ""
        elif record.pop(key, None) is not None:
            changed.append(key)
    for key in pinned:
        sources_by_field.pop(key, None)
    if sources_by_field:
        record[DISTILLED_FROM] = {k: sources_by_field[k] for k in sorted(sources_by_field)}
    else:
        record.pop(DISTILLED_FROM, None)
    record["pinned"] = sorted(pinned)
    return DistillResult(
        record=record,
        summary=summary,
        input_revision_ids=tuple(sorted(used_ids)),
        changed=tuple(sorted(set(changed))),
    )
