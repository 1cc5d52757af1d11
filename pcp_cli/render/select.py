"""Which material the compact renderings may use, and in what order: filtering and ranking.

Shared by the micro_prompt, the Markdown profile and distillation so all three agree on what is
current, what is allowed, and which of two competing claims wins. A keystone past its
`stale_after` (today) is not current here: it is served, labelled, by search and listings, never
by these views.

Two keystones *compete* when
- they are revisions of the same page (only the newest revision counts), or
- one names the other in `record["supersedes"]` (the superseded one is dropped even if its own
  lifecycle still says `active`: a stale fact must never be served as current), or
- they say the same thing (same category and the same text once case, whitespace and trailing
  punctuation are ignored), or
- they are candidates for a slot that holds one value (a profile field such as `name` or
  `primary_focus`; see `slot_winner`).
The winner is the one with the highest origin authority (user_stated > approved > recorded >
imported > generated > inferred; unknown counts as generated), then the newest
(`last_confirmed_at`, else `created_at`), then the higher importance, then the smaller page id.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from pcp_cli.model.page import PageState, Revision
from pcp_cli.model.staleness import is_stale
from pcp_cli.model.vocab import KEYSTONE_CATEGORIES, ORIGIN_AUTHORITY

ALLOWED_SENSITIVITIES = ("low", "medium")
# The profile record key naming, per distilled field, the keystone revisions it came from.
DISTILLED_FROM = "distilled_from"
DEFAULT_IMPORTANCE = 0.5
_WS = re.compile(r"\s+")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def instant(value: Any) -> float | None:
    """An ISO 8601 timestamp or date as UTC epoch seconds; None when absent or unreadable."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def day(seconds: float) -> str:
    """UTC calendar date (YYYY-MM-DD) of an instant."""
    stamp = datetime.fromtimestamp(seconds, UTC)
    return f"{stamp.year:04d}-{stamp.month:02d}-{stamp.day:02d}"  # strftime won't pad year 999


def rfc3339(value: Any) -> str | None:
    """A timestamp normalised to RFC 3339 UTC (`…Z`), or None when it cannot be read."""
    seconds = instant(value)
    if seconds is None:
        return None
    stamp = datetime.fromtimestamp(seconds, UTC)
    text = f"{day(seconds)}T{stamp:%H:%M:%S}"
    if stamp.microsecond:
        text += f".{stamp.microsecond:06d}".rstrip("0")
    return text + "Z"


def clean(text: Any) -> str:
    """One line of plain text: control characters removed, whitespace collapsed."""
    if not isinstance(text, str):
        return ""
    return _WS.sub(" ", _CONTROL.sub(" ", text)).strip()


def fingerprint(text: str) -> str:
    return clean(text).casefold().rstrip(" .;:!?")


def authority(origin: str) -> int:
    """Lower is stronger. Unknown origins count as `generated` (under-claim, never over-claim)."""
    if origin in ORIGIN_AUTHORITY:
        return ORIGIN_AUTHORITY.index(origin)
    return ORIGIN_AUTHORITY.index("generated")


def is_usable(state: PageState, page_type: str) -> bool:
    """Active, affirmed, not high-sensitivity, of the expected type, and (a keystone) not past
    its `stale_after` today: fit for a compact view, which has no room to label a stale claim
    (PCP v1.2 §4.1), nor a distilled field drawn from one."""
    return (
        state.type == page_type
        and state.lifecycle_status == "active"
        and state.review_status == "affirmed"
        and state.sensitivity in ALLOWED_SENSITIVITIES
        and not (page_type == "keystone" and is_stale(state.record))
    )


def importance(revision: Revision) -> float:
    value = revision.state.record.get("importance")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1:
        return float(value)
    return DEFAULT_IMPORTANCE


def category(revision: Revision) -> str:
    value = revision.state.record.get("category")
    return value if value in KEYSTONE_CATEGORIES else "other"


def material_instant(revision: Revision) -> float | None:
    """When a piece of material was last known true: confirmed, else observed (see
    `Revision.observed_at`), else unknown (None). Storage time never decides freshness: an
    imported claim with no time of its own is not made fresh by the day it was imported."""
    record = revision.state.record
    stamps = [instant(record.get("last_confirmed_at")),
              instant(revision.state.source_observed_at)]
    known = [s for s in stamps if s is not None]
    if known:
        return max(known)
    return instant(revision.observed_at)


def _newest_first(seconds: float | None) -> float:
    return -seconds if seconds is not None else float("inf")


def competition_key(revision: Revision) -> tuple[Any, ...]:
    """Sort key: the first in this order wins a competition."""
    return (
        authority(revision.state.origin),
        _newest_first(material_instant(revision)),
        -importance(revision),
        revision.page_id,
        revision.revision_id,
    )


def priority_key(revision: Revision) -> tuple[Any, ...]:
    """Sort key for display and trimming inside a category: most important first."""
    return (
        -importance(revision),
        authority(revision.state.origin),
        _newest_first(material_instant(revision)),
        revision.page_id,
        revision.revision_id,
    )


def _latest_per_page(revisions: Iterable[Revision]) -> list[Revision]:
    latest: dict[str, Revision] = {}
    for rev in revisions:
        held = latest.get(rev.page_id)
        if held is None or _revision_order(rev) > _revision_order(held):
            latest[rev.page_id] = rev
    return [latest[key] for key in sorted(latest)]


def _revision_order(rev: Revision) -> tuple[float, str]:
    seconds = instant(rev.created_at)
    return (seconds if seconds is not None else float("-inf"), rev.revision_id)


def current_keystones(keystones: Sequence[Revision]) -> list[Revision]:
    """The keystones a compact view may use, competitions resolved, in priority order.

    Filters defensively even when the caller already did: only the newest revision of each
    page; only active, affirmed, low/medium-sensitivity keystones with text; nothing that an
    affirmed keystone supersedes; one of each set of duplicates.
    """
    latest = _latest_per_page(keystones)
    superseded = _superseded_targets(latest)
    usable = [
        rev
        for rev in latest
        if is_usable(rev.state, "keystone")
        and rev.page_id not in superseded
        and clean(rev.state.content)
    ]
    chosen: dict[tuple[str, str], Revision] = {}
    for rev in sorted(usable, key=competition_key):
        chosen.setdefault((category(rev), fingerprint(rev.state.content)), rev)
    return sorted(chosen.values(), key=priority_key)


def claim_digest(revision: Revision) -> str:
    """A short digest of what a keystone says (its text, case and spacing ignored)."""
    import hashlib

    return hashlib.sha256(fingerprint(revision.state.content).encode()).hexdigest()[:16]


def live_claims(keystones: Sequence[Revision]) -> dict[str, str]:
    """page id -> claim digest of every keystone that is true now: the newest revision of
    each page, usable, not superseded. A profile field distilled from anything else is stale."""
    latest = _latest_per_page(keystones)
    superseded = _superseded_targets(latest)
    return {
        rev.page_id: claim_digest(rev) for rev in latest
        if is_usable(rev.state, "keystone") and rev.page_id not in superseded
    }


def _superseded_targets(latest: Sequence[Revision]) -> set[str]:
    superseded: set[str] = set()
    for rev in latest:
        state = rev.state
        target = state.record.get("supersedes")
        if (
            isinstance(target, str)
            and target != rev.page_id
            and state.review_status == "affirmed"
            and state.lifecycle_status in ("active", "superseded")
        ):
            superseded.add(target)
    return superseded


def _sources(profile: Revision) -> dict[str, dict[str, str]]:
    raw = profile.state.record.get(DISTILLED_FROM)
    if not isinstance(raw, dict):
        return {}
    return {key: {p: d for p, d in value.items() if isinstance(d, str)}
            for key, value in raw.items() if isinstance(value, dict)}


def fresh_profile(profile: Revision | None, keystones: Sequence[Revision]
                  ) -> tuple[Revision | None, list[str]]:
    """The profile without its stale distilled fields, and the names of the fields left out.

    A field is stale when `record["distilled_from"]` names a keystone that is no longer
    current (superseded, archived, withdrawn) or no longer says what it said: what the field
    says may be what a superseded claim said, and superseded material must never be served.
    Pinned fields (set by hand) are never stale.
    """
    if profile is None:
        return None, []
    sources = _sources(profile)
    if not sources:
        return profile, []
    record = dict(profile.state.record)
    pinned = record.get("pinned") if isinstance(record.get("pinned"), list) else []
    live = live_claims(keystones)
    stale = sorted(
        key for key, claims in sources.items()
        if key not in pinned and any(live.get(p) != d for p, d in claims.items())
    )
    if not stale:
        return profile, []
    content = profile.state.content
    for key in stale:
        if key == "summary":
            content = ""
        else:
            record.pop(key, None)
    record[DISTILLED_FROM] = {k: v for k, v in sources.items() if k not in stale}
    from dataclasses import replace

    state = profile.state.evolve(record=record, content=content)
    return replace(profile, state=state, content_hash=state.content_hash), stale


def distilled_pages(profile: Revision | None) -> set[str]:
    """Page ids of the keystones the profile's distilled fields (those with a value) say."""
    if profile is None:
        return set()
    record = profile.state.record
    found: set[str] = set()
    for key, claims in _sources(profile).items():
        value = profile.state.content if key == "summary" else record.get(key)
        if value:
            found.update(claims)
    return found


def slot_winner(candidates: Sequence[Revision]) -> Revision | None:
    """The one claim that fills a single-valued slot: newest high-authority first."""
    return min(candidates, key=competition_key) if candidates else None


def usable_profile(profile: Revision | None) -> Revision | None:
    if profile is None or not is_usable(profile.state, "profile"):
        return None
    return profile


def current_timeline(states: Sequence[PageState]) -> list[PageState]:
    """Usable timeline events, newest date first (ties by id)."""
    seen: dict[str, PageState] = {}
    for state in states:
        if is_usable(state, "timeline_event") and clean(state.content):
            held = seen.get(state.page_id)
            if held is None or state.content_hash > held.content_hash:
                seen[state.page_id] = state
    events = sorted(seen.values(), key=lambda s: s.page_id)
    return sorted(events, key=lambda s: str(s.record.get("date", "")), reverse=True)
