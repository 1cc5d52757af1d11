"""The profile as a Markdown document: readable, fit to commit as a file or paste into a chat.

It uses the same material as the micro_prompt (profile plus current keystones; nothing
superseded, unaffirmed or high-sensitivity) without the character budget, and adds the most
recent timeline events. Deterministic: the same inputs in any order give the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

from pcp_cli.model.page import PageState, Revision
from pcp_cli.render.select import (
    category,
    clean,
    current_keystones,
    current_timeline,
    day,
    instant,
    material_instant,
    usable_profile,
)

RECENT_EVENTS = 10
CATEGORY_HEADINGS = (
    ("identity", "Identity"),
    ("objective", "Objectives"),
    ("constraint", "Constraints"),
    ("preference", "Preferences"),
    ("rule", "Rules"),
    ("relationship", "People"),
    ("glossary", "Glossary"),
    ("other", "Other"),
)


def _text(profile: Revision | None, key: str) -> str:
    if profile is None:
        return ""
    if key == "summary":
        return profile.state.content.strip()
    value = profile.state.record.get(key)
    return clean(value) if isinstance(value, str) else ""


def _items(profile: Revision | None, key: str) -> list[str]:
    value = profile.state.record.get(key) if profile is not None else None
    if not isinstance(value, (list, tuple)):
        return []
    return [clean(v) for v in value if isinstance(v, str) and clean(v)]


def profile_markdown(
    profile: Revision | None,
    keystones: Sequence[Revision],
    timeline_states: Sequence[PageState],
) -> str:
    """A Markdown profile document ending with one newline."""
    prof = usable_profile(profile)
    facts = current_keystones(keystones)
    events = current_timeline(timeline_states)[:RECENT_EVENTS]
    name = _text(prof, "name")
    lines: list[str] = [f"# {name}" if name else "# Profile", ""]

    def section(title: str, body: list[str]) -> None:
        if body:
            lines.extend([f"## {title}", "", *body, ""])

    profession = _text(prof, "profession")
    if profession:
        lines.extend([f"*{profession}*", ""])
    summary = _text(prof, "summary")
    if summary:
        lines.extend([summary, ""])
    focus = _text(prof, "primary_focus")
    section("Focus", [focus] if focus else [])
    section("Expertise", [f"- {item}" for item in _items(prof, "domain_expertise")])
    section("Values", [f"- {item}" for item in _items(prof, "values")])
    how_i_work = [
        f"- **{label}:** {value}"
        for label, value in (
            ("Working style", _text(prof, "working_style")),
            ("Tools and workflows", _text(prof, "tools_and_workflows")),
        )
        if value
    ]
    section("How I work", how_i_work)
    with_me = [
        f"- **{label}:** {value}"
        for label, value in (
            ("With AI", _text(prof, "how_interacts_with_ai")),
            ("Communication", _text(prof, "communication_style")),
        )
        if value
    ]
    section("How to work with me", with_me)

    fact_lines: list[str] = []
    for key, heading in CATEGORY_HEADINGS:
        in_category = [rev for rev in facts if category(rev) == key]
        if in_category:
            fact_lines.extend([f"### {heading}", ""])
            fact_lines.extend(f"- {clean(rev.state.content)}" for rev in in_category)
            fact_lines.append("")
    if fact_lines:
        lines.extend(["## Key facts", "", *fact_lines])

    section(
        "Recent timeline",
        [
            f"- **{clean(ev.record.get('date')) or 'undated'}** — {clean(ev.content)}"
            for ev in events
        ],
    )

    stamps = [material_instant(rev) for rev in facts]
    if prof is not None:
        stamps.append(instant(prof.created_at))
    known = [s for s in stamps if s is not None]
    if not known and not events:
        lines.extend(["No profile is available yet in this context store.", ""])
    elif known:
        lines.extend([f"_Profile as of {day(max(known))}._", ""])
    return "\n".join(lines).rstrip("\n") + "\n"
