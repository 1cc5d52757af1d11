"""Proposals from the person's own words (`pcp propose`): candidates from the extractor
(pcp_cli/extract/) into the review queue.

It reads the person's pages (conversations and sessions, notes), asks the rules (or a model,
`extract/llm.py`) for candidates, and merges them with what the store already holds:

- the same fact twice (one fingerprint, `extract/fingerprint.py`) is one proposal with every
  sentence as evidence; a pending proposal of it gets the new evidence, not a twin;
- a fact already held by a keystone or timeline event, current or superseded, accepted or
  only proposed, is not proposed again; a rejected one never is (its fingerprint is kept);
- a one-value fact (where the person lives, works, their role) with a new value supersedes
  the current keystone of that slot, but only when the new sentence is newer than it; of two
  values in one run, the newer one is proposed.

Each proposal is a keystone or timeline_event page with `review_status: proposed`,
`origin: inferred`, `instruction_policy: data_only`, `record.source: inferred`, its
confidence, `record.proposal` (fingerprint, extractor, slot) and `facets.source_spans` (page,
revision, start, end and text of each sentence); its revision's provenance names the
evidence revisions. It is served nowhere until accepted (api/review.py, `accept_proposal`).

It imports no other api module: it writes through the Store, like the importers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pcp_cli.errors import UsageError
from pcp_cli.extract import EXTRACTOR_ID, Candidate, extract_sentences, person_sentences
from pcp_cli.extract.fingerprint import fingerprint, normalize, same_fact, slot_of, words
from pcp_cli.extract.segments import HEADING, READ_LIMIT, Sentence, over_limit
from pcp_cli.model import vocab
from pcp_cli.model.actors import actor_string
from pcp_cli.model.page import Actor, title_from
from pcp_cli.store.store import Store

PROPOSE_ACTOR = Actor("tool", "pcp-propose")
PROPOSE_TYPES = ("conversation", "note")
PROPOSAL_KEY = "proposal"  # record key: {fingerprint, extractor, slot?, value?}
EVIDENCE_TEXT_LIMIT = 400
MAX_EVIDENCE = 50  # evidence kept per proposal (the first ones); the count says how many more
_SENSITIVITY_RANK = {"low": 0, "medium": 1, "high": 2}


@dataclass
class Source:
    """One page the extractor reads."""

    page_id: str
    revision_id: str
    type: str
    body: str
    observed_at: str | None
    sensitivity: str | None


@dataclass
class Proposal:
    kind: str
    category: str
    content: str
    confidence: float
    fingerprint: str
    slot: str | None
    value: str
    date: str | None
    sensitivity: str
    evidence: list[dict[str, Any]] = field(default_factory=list)
    # The newest evidence's "date|page observed|offset" (what decides between a slot's values)
    newest: str = ""
    supersedes: str | None = None
    id: str | None = None
    status: str = "new"  # new | evidence_added
    special: str | None = None  # the special category it states (extract/sensitive.py)
    decay: Any = None  # how long it stays fresh, from its newest sentence (extract/decay.py)

    @property
    def said_at(self) -> str | None:
        """The day its newest sentence was written (YYYY-MM-DD), when known."""
        day = self.newest[:10]
        return day if len(day) == 10 and day[4] == "-" else None

    @property
    def stale_after(self) -> str | None:
        from pcp_cli.extract.decay import stale_after

        return stale_after(self.decay, self.said_at)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "kind": self.kind, "category": self.category,
            "content": self.content, "date": self.date, "confidence": self.confidence,
            "supersedes": self.supersedes, "evidence": self.evidence, "status": self.status,
            "sensitivity": self.sensitivity, "fingerprint": self.fingerprint,
            "said_at": self.said_at, "stale_after": self.stale_after,
        }


# -- reading ----------------------------------------------------------------------------------
def _since_ok(observed: str | None, since: str | None) -> bool:
    if since is None:
        return True
    return bool(observed) and observed[:len(since)] >= since


def sources(store: Store, pages: Sequence[str] = (), *, types: Sequence[str] = PROPOSE_TYPES,
            since: str | None = None) -> list[Source]:
    """The active, affirmed pages of `types` to read (or the `pages` named), oldest first."""
    for page_type in types:
        if page_type not in PROPOSE_TYPES:
            raise UsageError(f"pcp propose reads {' and '.join(PROPOSE_TYPES)} pages, not "
                             f"{page_type}", hint="--type conversation or --type note")
    if since is not None:
        import re

        if not re.match(vocab.PARTIAL_DATE_PATTERN, since):
            raise UsageError(f"--since {since} is not YYYY, YYYY-MM or YYYY-MM-DD")
    if pages:
        wanted = []
        for page_id in pages:
            revision = store.current(page_id)
            if revision.state.type not in PROPOSE_TYPES:
                raise UsageError(f"{page_id} is a {revision.state.type}: pcp propose reads "
                                 f"{' and '.join(PROPOSE_TYPES)} pages")
            wanted.append(revision)
        revisions = wanted
    else:
        entries = store.entries(types=tuple(types), statuses=("active",))
        revisions = [store.current(e.page_id) for e in entries if e.page_id]
    found = []
    for revision in revisions:
        state = revision.state
        observed = revision.observed_at
        if not _since_ok(observed, since) and not any(
                _since_ok(m.group(2), since) for m in HEADING.finditer(state.content)):
            continue
        found.append(Source(state.page_id, revision.revision_id, state.type, state.content,
                            observed, state.sensitivity))
    return sorted(found, key=lambda s: (s.observed_at or "", s.page_id))


def rule_candidates(source: Source) -> list[Candidate]:
    return extract_sentences(person_sentences(source.body, source.type))


# -- merging ----------------------------------------------------------------------------------
def _evidence(source: Source, sentence: Sentence) -> dict[str, Any]:
    text = sentence.text
    if len(text) > EVIDENCE_TEXT_LIMIT:
        text = text[:EVIDENCE_TEXT_LIMIT].rstrip() + "…"
    return {"page_id": source.page_id, "revision_id": source.revision_id,
            "start": sentence.start, "end": sentence.end, "text": text}


def _when(source: Source, sentence: Sentence) -> str:
    return sentence.when or (source.observed_at or "")[:10]


def _raise(sensitivity: str | None, other: str | None) -> str:
    a, b = sensitivity or "medium", other or "medium"
    return a if _SENSITIVITY_RANK.get(a, 1) >= _SENSITIVITY_RANK.get(b, 1) else b


def merge(found: Sequence[tuple[Source, Candidate]]) -> list[Proposal]:
    """One proposal per fingerprint, evidence in order; of a slot's values, the newest."""
    by_key: dict[str, Proposal] = {}
    for source, candidate in found:
        key = fingerprint(candidate.kind, candidate.content, slot=candidate.slot,
                          value=candidate.value, date=candidate.date)
        evidence = _evidence(source, candidate.sentence)
        # sorts by the turn's date, then the page's, then place on the page
        when = (f"{_when(source, candidate.sentence)}|{source.observed_at or ''}|"
                f"{candidate.sentence.start:09d}")
        proposal = by_key.get(key)
        if proposal is None:
            proposal = by_key[key] = Proposal(
                candidate.kind, candidate.category, candidate.content, candidate.confidence,
                key, candidate.slot, candidate.value, candidate.date,
                _raise(candidate.sensitivity, source.sensitivity), newest=when,
                special=candidate.special, decay=candidate.decay)
        else:
            proposal.confidence = max(proposal.confidence, candidate.confidence)
            proposal.sensitivity = _raise(_raise(proposal.sensitivity, source.sensitivity),
                                          candidate.sensitivity)
            proposal.special = proposal.special or candidate.special
            if when > proposal.newest:  # said again: fresh from the newest sentence
                proposal.decay = candidate.decay
            proposal.newest = max(proposal.newest, when)
        if not any(_same_span(evidence, e) for e in proposal.evidence):
            proposal.evidence.append(evidence)
    merged = _fold_general(list(by_key.values()))
    for proposal in merged:  # said again and again: a little surer, never certain
        proposal.confidence = round(min(0.95, proposal.confidence
                                        + 0.05 * (len(proposal.evidence) - 1)), 2)
    newest: dict[str, Proposal] = {}
    for proposal in merged:
        if proposal.slot and proposal.kind == "keystone":
            held = newest.get(proposal.slot)
            if held is None or proposal.newest > held.newest:
                newest[proposal.slot] = proposal
    return [p for p in merged
            if not p.slot or p.kind != "keystone" or newest[p.slot] is p]


def _fold_general(merged: list[Proposal]) -> list[Proposal]:
    """A slot value whose words are all in a more specific value of the same slot ("designer"
    and "UX designer") is the same fact: its evidence goes to the specific one."""
    kept: list[Proposal] = []
    for proposal in merged:
        if proposal.slot and proposal.kind == "keystone":
            mine = set(words(proposal.value))
            wider = next((o for o in merged if o is not proposal and o.slot == proposal.slot
                          and o.kind == proposal.kind and mine < set(words(o.value))), None)
            if wider is not None:
                wider.evidence.extend(e for e in proposal.evidence
                                      if not any(_same_span(e, w) for w in wider.evidence))
                wider.newest = max(wider.newest, proposal.newest)
                continue
        kept.append(proposal)
    return kept


def _same_span(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(a.get(k) == b.get(k) for k in ("page_id", "revision_id", "start", "end"))


@dataclass
class _Known:
    """What the store already holds, as the merge needs it."""

    rejected: set[str] = field(default_factory=set)
    held: set[str] = field(default_factory=set)  # fingerprints of pages not rejected
    held_words: list[tuple[str, set[str], str | None]] = field(default_factory=list)
    pending: dict[str, str] = field(default_factory=dict)  # fingerprint -> page id
    current_slots: dict[str, tuple[str, str, str]] = field(default_factory=dict)


def _known(store: Store) -> _Known:
    known = _Known()
    for page_type in ("keystone", "timeline_event"):
        for entry in store.entries(types=(page_type,), review=None,
                                   statuses=("active", "superseded", "archived")):
            if not entry.page_id:
                continue
            record = entry.record or {}
            marks = record.get(PROPOSAL_KEY) if isinstance(record.get(PROPOSAL_KEY), dict) \
                else {}
            content = store.read_body(entry).strip() or entry.title
            date = record.get("date") if page_type == "timeline_event" else None
            prints = {fingerprint(page_type, content, date=date if isinstance(date, str)
                                  else None)}
            if isinstance(marks.get("fingerprint"), str):
                prints.add(marks["fingerprint"])
            slot = slot_of(content) if page_type == "keystone" else None
            if slot:
                prints.add(fingerprint(page_type, content, slot=slot[0], value=slot[1]))
            if entry.review_status == "rejected":
                known.rejected |= prints
                continue
            known.held |= prints
            known.held_words.append((page_type, set(words(content)),
                                     date[:4] if isinstance(date, str) else None))
            if entry.review_status == "proposed" and entry.lifecycle_status == "active":
                for value in prints:
                    known.pending[value] = entry.page_id
            if (page_type == "keystone" and slot and entry.review_status == "affirmed"
                    and entry.lifecycle_status == "active"):
                since = str(record.get("created_at") or entry.created_at or "")
                known.current_slots[slot[0]] = (entry.page_id, normalize(slot[1]), since)
    return known


def _held(proposal: Proposal, known: _Known) -> bool:
    if proposal.fingerprint in known.held:
        return True
    mine = words(proposal.content)
    year = (proposal.date or "")[:4] or None
    return any(kind == proposal.kind and same_fact(mine, have)
               and (kind == "keystone" or year == have_year)
               for kind, have, have_year in known.held_words)


# -- proposing --------------------------------------------------------------------------------
def propose(store: Store, pages: Sequence[str] = (), *, types: Sequence[str] = PROPOSE_TYPES,
            since: str | None = None, dry_run: bool = False,
            extractor: Callable[[list[Source]], tuple[list[tuple[Source, Candidate]],
                                                      dict[str, int]]] | None = None,
            progress: Callable[[int, int], None] | None = None,
            ) -> dict[str, Any]:
    """Run the extractor over the person's pages and file what is new in the review queue.

    Returns `{"proposals": [...], "counts": {...}}`: each proposal as `Proposal.to_dict`
    (`id` None for a new one under `dry_run`), the counts of pages read, candidates found and
    what became of them. `progress(done, total)` is told the pages read, every 50 and at the
    end (the offline rules; a model's extractor reports its own plan).
    """
    with store.locked():
        read = sources(store, pages, types=types, since=since)
        if extractor is None:
            found = []
            for done, source in enumerate(read, 1):
                found += [(source, c) for c in rule_candidates(source)]
                if progress is not None and (done % 50 == 0 or done == len(read)):
                    progress(done, len(read))
            extra: dict[str, int] = {}
        else:
            found, extra = extractor(read)
        cut = sum(over_limit(source.body, source.type) for source in read)
        if cut:
            extra = {**extra, "turns_cut": cut, "read_limit": READ_LIMIT}
        if since is not None:  # what was said before `since` (a turn's date, else the page's)
            found = [(source, c) for source, c in found
                     if _since_ok(_when(source, c.sentence), since)]
        merged = merge(found)
        known = _known(store)
        counts = {"pages_read": len(read), "candidates": len(found), "proposals": 0,
                  "evidence_added": 0, "already_known": 0, "rejected_before": 0,
                  "older_than_current": 0, **extra}
        kept: list[Proposal] = []
        for proposal in merged:
            if proposal.fingerprint in known.rejected:
                counts["rejected_before"] += 1
                continue
            pending = known.pending.get(proposal.fingerprint)
            if pending is not None:
                added = _add_evidence(store, pending, proposal, dry_run=dry_run)
                if added:
                    proposal.id, proposal.status = pending, "evidence_added"
                    counts["evidence_added"] += 1
                    kept.append(proposal)
                else:
                    counts["already_known"] += 1
                continue
            if _held(proposal, known):
                counts["already_known"] += 1
                continue
            if proposal.slot and proposal.kind == "keystone":
                current = known.current_slots.get(proposal.slot)
                if current is not None:
                    page_id, value, since_ = current
                    said = proposal.newest[:10]
                    if said and since_ and said < since_[:10]:
                        counts["older_than_current"] += 1
                        continue
                    if value != normalize(proposal.value):
                        proposal.supersedes = page_id
            kept.append(proposal)
        if not dry_run:
            with store.batch():
                for proposal in kept:
                    if proposal.status == "new":
                        proposal.id = _write(store, proposal)
        raised = _classify_sources(store, kept, dry_run=dry_run)
        counts["proposals"] = sum(1 for p in kept if p.status == "new")
        return {"proposals": [p.to_dict() for p in kept], "counts": counts,
                "dry_run": dry_run, "sensitivity": raised}


def _classify_sources(store: Store, kept: Sequence[Proposal], *, dry_run: bool,
                      ) -> list[dict[str, Any]]:
    """Each page a special-category proposal came from, raised to `high` (store/sensitivity.py):
    what became of it, for the notice `pcp propose` prints."""
    from pcp_cli.store.sensitivity import raise_to

    done: dict[str, dict[str, Any]] = {}
    for proposal in kept:
        if not proposal.special or proposal.sensitivity != "high":
            continue
        for page_id in dict.fromkeys(e["page_id"] for e in proposal.evidence):
            if page_id in done:
                continue
            why = f"it holds a passage about {proposal.special}" + (
                f" (proposal {proposal.id})" if proposal.id else "")
            result = raise_to(store, page_id, "high", why=why, actor=PROPOSE_ACTOR,
                              dry_run=dry_run)
            if result.status != "already":
                done[page_id] = result.to_dict()
    return list(done.values())


def _add_evidence(store: Store, page_id: str, proposal: Proposal, *, dry_run: bool) -> bool:
    revision = store.current(page_id)
    spans = list(revision.state.facets.get("source_spans") or [])
    new = [e for e in proposal.evidence if not any(_same_span(e, s) for s in spans)]
    if not new:
        return False
    proposal.evidence = new
    if dry_run:
        return True
    room = max(0, MAX_EVIDENCE - len(spans))
    confidence = revision.state.record.get("confidence")
    total = len(spans) + len(new)
    changes: dict[str, Any] = {"facets": {"source_spans": spans + new[:room]},
                               "record": {PROPOSAL_KEY: {
                                   **(revision.state.record.get(PROPOSAL_KEY) or {}),
                                   "evidence_count": total}}}
    said = revision.state.record.get("observed_at")
    if proposal.said_at and (not isinstance(said, str) or proposal.said_at > said[:10]):
        changes["record"]["observed_at"] = proposal.said_at  # said again since
        if proposal.kind == "keystone" and proposal.stale_after:
            changes["record"]["stale_after"] = proposal.stale_after
    if isinstance(confidence, (int, float)):
        changes["record"]["confidence"] = round(min(0.95, max(confidence, proposal.confidence)
                                                    + 0.05 * len(new)), 2)
        proposal.confidence = changes["record"]["confidence"]
    store.revise(page_id, changes=changes, expected_revision_id=revision.revision_id,
                 actor=PROPOSE_ACTOR, note=f"{len(new)} more evidence from pcp propose",
                 input_revision_ids=tuple(sorted({e["revision_id"] for e in new})))
    return True


def _write(store: Store, proposal: Proposal) -> str:
    marks: dict[str, Any] = {"fingerprint": proposal.fingerprint, "extractor": EXTRACTOR_ID,
                             "evidence_count": len(proposal.evidence)}
    if proposal.slot:
        marks.update(slot=proposal.slot, value=proposal.value)
    record: dict[str, Any] = {"category": proposal.category, "source": "inferred",
                              "confidence": proposal.confidence, PROPOSAL_KEY: marks,
                              "generated_by": actor_string(PROPOSE_ACTOR)}  # pcp/<version>
    if proposal.kind == "timeline_event":
        record["date"] = proposal.date
    if proposal.said_at:  # when it was said: kept beside when it is affirmed (accept)
        record["observed_at"] = proposal.said_at
    if proposal.kind == "keystone" and proposal.stale_after:
        record["stale_after"] = proposal.stale_after
    if proposal.supersedes:
        record["supersedes"] = proposal.supersedes
    state = store.new_state(
        proposal.content, type=proposal.kind, title=title_from(proposal.content),
        origin="inferred", review_status="proposed", epistemic_status="asserted",
        instruction_policy="data_only", sensitivity=proposal.sensitivity, record=record,
        facets={"source_spans": proposal.evidence[:MAX_EVIDENCE]},
    )
    pages = sorted({e["page_id"] for e in proposal.evidence})
    result = store.write_page(
        state, actor=PROPOSE_ACTOR,
        source_note=f"proposed by pcp propose from {len(proposal.evidence)} sentence(s) in "
        f"{', '.join(pages[:5])}" + (" …" if len(pages) > 5 else ""),
        input_revision_ids=tuple(sorted({e["revision_id"] for e in proposal.evidence})),
    )
    return result.page_id


def llm_extractor(url: str, *, model: str | None = None, api_key: str | None = None,
                  max_calls: int = 50, timeout: float = 60.0, on_plan: Any = None) -> Any:
    """The `extractor` for `propose` that asks a model behind an OpenAI-compatible endpoint
    (pcp_cli/extract/llm.py); `on_plan` is told the calls and input size before the first."""
    from pcp_cli.extract.llm import LlmSettings, model_extractor

    return model_extractor(LlmSettings(url=url, model=model or "default", api_key=api_key,
                                       max_calls=max_calls, timeout=timeout), on_plan=on_plan)
