"""Retention before irreversible delete: the policy, leases, the plan and the collection.

The Paged Context Protocol lets only the person's authority and a retention policy control an
irreversible delete (不可恢复删除必须受用户权限和保留策略控制). In pcp:

- **The policy** is `pcp.yaml`'s `retention:` section: how long a tombstoned page is kept after
  it was tombstoned (`tombstoned_pages`) and how long a revision is kept after a newer revision
  of its page replaced it (`superseded_revisions`); `<n>d`, `<n>w`, `<n>y` or `forever` (the
  default of both: with no section nothing is ever due).
- **Leases** (`leases/<lease_id>.json`, committed, synced by git) protect named pages (every
  revision of them) or revisions, until a date or until released. A lease file that cannot be
  read blocks every collection until it is mended (what it protects is unknown).
- **The plan** lists what is due, each with why, and what is kept, each with why: a lease, a
  relation (another page's relation names it: an irreversible delete would leave it dangling),
  evidence (a span or provenance input of a keystone, event, profile or summary names it), a
  branching history (a diverged or merged page keeps all its revisions), or the policy (not yet
  due). Its `plan_id` is a digest of exactly what it would remove.
- **Collecting** removes only what the plan with that id lists: the plan is worked out again
  under the store lock and refused (RevisionConflict) if it differs. A `retention_collected`
  event naming every file to remove is written first (committed, so every device and `pcp
  validate` know the missing revisions were collected on purpose), then the files go; a
  collection killed part way is finished by `pcp doctor --fix` from that event, and nothing it
  did not list is ever touched.

Superseded revisions are collected from the start of a page's history: the oldest ones first,
up to the first revision kept, so the history that remains is an unbroken line ending at the
head (a removed middle revision would make its parent look like a second head).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcp_cli.errors import NotFound, RevisionConflict, StorageFailed, UsageError
from pcp_cli.model.ids import is_safe_id, new_id
from pcp_cli.model.page import Actor, file_json, now_iso
from pcp_cli.model.retention import RULES, Policy, days, policy_from
from pcp_cli.store.atomic import remove_file, write_new

if TYPE_CHECKING:
    from pcp_cli.store.store import Store

LEASES = "leases"
COLLECTED = "retention_collected"
# Page types whose head revision may name other pages' revisions as evidence (source spans)
# or inputs (provenance): those revisions are kept.
EVIDENCE_TYPES = ("keystone", "timeline_event", "profile", "summary")


def _cutoff(rule: str, today: datetime.date) -> str | None:
    """The instant before which something under `rule` is due, or None (forever)."""
    n = days(rule)
    if n is None:
        return None
    return (today - datetime.timedelta(days=n)).isoformat() + "T00:00:00Z"


# -- leases -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Lease:
    lease_id: str
    targets: tuple[str, ...]  # page ids and revision ids
    reason: str | None
    until: str | None  # YYYY-MM-DD: protects to the end of that day; None: until released
    created_at: str
    created_by: Actor

    def to_dict(self) -> dict[str, Any]:
        return {"lease_id": self.lease_id, "targets": list(self.targets), "reason": self.reason,
                "until": self.until, "created_at": self.created_at,
                "created_by": self.created_by.to_dict()}

    def active(self, today: str) -> bool:
        return self.until is None or self.until >= today


def lease_folder(store: Store) -> Path:
    return store.root / LEASES


def leases(store: Store) -> list[Lease]:
    """Every lease file of the store, oldest first. A file that cannot be read is a problem
    (`store.problems`), never a silent loss of protection: the plan then collects nothing."""
    folder = lease_folder(store)
    found = []
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return []
    for name in names:
        if not name.endswith(".json") or name.startswith("."):
            continue
        path = folder / name
        try:
            data = json.loads(path.read_bytes())
            found.append(Lease(
                lease_id=data["lease_id"], targets=tuple(data["targets"]),
                reason=data.get("reason"), until=data.get("until"),
                created_at=data["created_at"],
                created_by=Actor.from_dict(data["created_by"])))
        except (OSError, ValueError, KeyError, TypeError):
            store.problems[f"{LEASES}/{name}"] = "unreadable lease file"
    return sorted(found, key=lambda lease: (lease.created_at, lease.lease_id))


def add_lease(store: Store, targets: Sequence[str], *, reason: str | None = None,
              until: str | None = None, actor: Actor | None = None) -> Lease:
    """A lease on pages (page ids) or revisions (revision ids), each of which must exist."""
    from pcp_cli.model.staleness import check as check_date

    if not targets:
        raise UsageError("a lease needs at least one page or revision",
                         hint="pcp retention lease add PAGE_OR_REVISION...")
    if until is not None:
        check_date(until)  # the same YYYY-MM-DD check
    with store.locked():
        for target in targets:
            _check_target(store, target)
        lease = Lease(lease_id=new_id("lease"), targets=tuple(dict.fromkeys(targets)),
                      reason=reason, until=until, created_at=now_iso(),
                      created_by=actor or store.user)
        folder = lease_folder(store)
        folder.mkdir(exist_ok=True)
        write_new(folder / f"{lease.lease_id}.json", file_json(lease.to_dict()))
        return lease


def release_lease(store: Store, lease_id: str) -> Lease:
    """Remove a lease: what it protected falls under the policy again."""
    with store.locked():
        found = next((lease for lease in leases(store) if lease.lease_id == lease_id), None)
        if found is None or not is_safe_id(lease_id):
            raise NotFound(f"no lease {lease_id}", hint="`pcp retention lease list` lists them")
        remove_file(lease_folder(store) / f"{lease_id}.json")
        return found


def _check_target(store: Store, target: str) -> None:
    if is_safe_id(target) and store.page_exists(target):
        return
    if target.startswith("rev_") and store.page_of_revision(target):
        return
    raise NotFound(f"no page or revision {target}",
                   hint="a lease names page ids (`pcp ls`) or revision ids (`pcp history`)")


# -- the plan ---------------------------------------------------------------------------------
@dataclass
class Plan:
    """What a collection would remove (`pages`, `revisions`), what is kept and why."""

    policy: Policy
    today: str
    pages: list[dict[str, Any]] = field(default_factory=list)  # whole tombstoned pages
    revisions: list[dict[str, Any]] = field(default_factory=list)  # a page's oldest revisions
    kept: list[dict[str, Any]] = field(default_factory=list)
    kept_by_policy: dict[str, int] = field(default_factory=lambda: dict.fromkeys(RULES, 0))
    next_due: str | None = None
    # why nothing at all may be collected now (a lease file that cannot be read)
    blocked: str | None = None

    @property
    def plan_id(self) -> str:
        listed = [(p["page_id"], tuple(p["revision_ids"]), tuple(p["relation_ids"]))
                  for p in self.pages] + [(r["page_id"], tuple(r["revision_ids"]), ())
                                          for r in self.revisions]
        digest = hashlib.sha256(json.dumps(sorted(listed)).encode()).hexdigest()
        return f"plan_{digest[:16]}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "plan_id": self.plan_id,
            "today": self.today,
            "policy": self.policy.to_dict(),
            "collect": {"pages": self.pages, "revisions": self.revisions,
                        "page_count": len(self.pages),
                        "revision_count": sum(len(p["revision_ids"]) for p in self.pages)
                        + sum(len(r["revision_ids"]) for r in self.revisions)},
            "kept": self.kept,
            "kept_by_policy": self.kept_by_policy,
            "next_due": self.next_due,
            "blocked": self.blocked,
        }


def plan(store: Store, *, today: datetime.date | None = None) -> Plan:
    """What a collection would remove now, and why everything else old enough is kept."""
    day = today or _today()
    policy = policy_from(store.manifest.retention)
    result = Plan(policy=policy, today=day.isoformat())
    if not policy.configured:
        return result
    before = dict(store.problems)
    leased_pages, leased_revisions = _leased(store, day.isoformat())
    broken = sorted(path for path in store.problems if path.startswith(f"{LEASES}/")
                    and path not in before)
    if broken:  # what a lease we cannot read protects is unknown: nothing goes
        result.blocked = (f"{broken[0]} cannot be read, so what it protects is unknown: "
                          "nothing is collected until it is mended or removed")
        return result
    tomb_cut = _cutoff(policy.tombstoned_pages, day)
    rev_cut = _cutoff(policy.superseded_revisions, day)
    relations = store.relations()
    # revision id -> the relations naming it, and page id -> the relations touching it
    named: dict[str, list[Any]] = {}
    for relation in relations:
        named.setdefault(relation.from_revision_id, []).append(relation)
        named.setdefault(relation.to_revision_id, []).append(relation)
    evidence = _Evidence(store)
    entries = [e for e in store.entries(statuses=None, review=None) if e.page_id]

    doomed: set[str] = set()
    for entry in entries:  # first the tombstoned pages due: relations between them go too
        if entry.lifecycle_status != "tombstoned":
            continue
        since = entry.updated_at or entry.created_at or ""
        if tomb_cut is None or since >= tomb_cut:
            result.kept_by_policy["tombstoned_pages"] += 1
            due = _due(since, policy.tombstoned_pages)
            if due and (result.next_due is None or due < result.next_due):
                result.next_due = due
            continue
        doomed.add(str(entry.page_id))
    # A page kept may keep another that relates to it: work it out until nothing changes.
    revisions_of = {page_id: store.revision_ids(page_id) for page_id in doomed}
    kept_why: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for page_id in sorted(doomed):
            why = _page_kept(page_id, revisions_of[page_id], leased_pages, leased_revisions,
                             named, doomed, evidence)
            if why is not None:
                kept_why[page_id] = why
                doomed.discard(page_id)
                changed = True
    result.kept += [{"kind": "page", "page_id": page_id, "why": why}
                    for page_id, why in sorted(kept_why.items())]
    for page_id in sorted(doomed):
        revision_ids = revisions_of[page_id]
        touching = {r.relation_id for rev in revision_ids for r in named.get(rev, [])}
        entry = store.head_entry(page_id)
        result.pages.append({
            "page_id": page_id, "namespace": entry.namespace if entry else None,
            "title": entry.title if entry else "", "type": entry.type if entry else None,
            "tombstoned_at": (entry.updated_at if entry else None),
            "revision_ids": revision_ids, "relation_ids": sorted(touching),
            "why": f"tombstoned before {tomb_cut[:10]} (tombstoned_pages: "
                   f"{policy.tombstoned_pages})",
        })
    collected_pages = {p["page_id"] for p in result.pages}
    kept_pages = {k["page_id"] for k in result.kept}
    for entry in entries:
        page_id = str(entry.page_id)
        if page_id in collected_pages or page_id in kept_pages:
            continue
        _old_revisions(store, page_id, rev_cut, policy, leased_pages, leased_revisions, named,
                       evidence, result)
    return result


def _today() -> datetime.date:
    from pcp_cli.model.staleness import today

    return datetime.date.fromisoformat(today())


def _due(since: str, rule: str) -> str | None:
    n = days(rule)
    if n is None or len(since) < 10:
        return None
    try:
        start = datetime.date.fromisoformat(since[:10])
    except ValueError:
        return None
    return (start + datetime.timedelta(days=n + 1)).isoformat()


def _leased(store: Store, today: str) -> tuple[dict[str, str], dict[str, str]]:
    """(page id -> lease, revision id -> lease) of the active leases."""
    pages: dict[str, str] = {}
    revisions: dict[str, str] = {}
    for lease in leases(store):
        if not lease.active(today):
            continue
        label = lease.lease_id + (f" ({lease.reason})" if lease.reason else "")
        for target in lease.targets:
            (revisions if target.startswith("rev_") and not store.page_exists(target)
             else pages).setdefault(target, label)
    return pages, revisions


class _Evidence:
    """revision id -> the page whose head names it as evidence (a source span) or an input
    (its provenance), read on the first question: a plan with nothing due old enough to ask
    about reads no revision of the evidence pages."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._found: dict[str, str] | None = None

    def _all(self) -> dict[str, str]:
        if self._found is None:
            self._found = _evidence(self._store)
        return self._found

    def get(self, revision_id: str) -> str | None:
        return self._all().get(revision_id)

    def __contains__(self, revision_id: object) -> bool:
        return revision_id in self._all()

    def __getitem__(self, revision_id: str) -> str:
        return self._all()[revision_id]


def _evidence(store: Store) -> dict[str, str]:
    """revision id -> the page whose head names it as evidence (a source span) or an input
    (its provenance)."""
    found: dict[str, str] = {}
    for entry in store.entries(types=EVIDENCE_TYPES, statuses=None, review=None):
        if not entry.page_id:
            continue
        try:
            head = store.current(entry.page_id)
        except Exception:  # noqa: BLE001 - a damaged page names nothing (doctor reports it)
            continue
        spans = head.state.facets.get("source_spans") or []
        for span in spans if isinstance(spans, list) else []:
            if isinstance(span, dict) and isinstance(span.get("revision_id"), str):
                found.setdefault(span["revision_id"], head.page_id)
        for step in head.provenance:
            for revision_id in step.input_revision_ids:
                found.setdefault(revision_id, head.page_id)
    return found


def _page_kept(page_id: str, revision_ids: Sequence[str], leased_pages: dict[str, str],
               leased_revisions: dict[str, str], named: dict[str, list[Any]],
               doomed: set[str], evidence: _Evidence) -> str | None:
    """Why a tombstoned page that is due is kept anyway, or None."""
    if page_id in leased_pages:
        return f"lease {leased_pages[page_id]}"
    for revision_id in revision_ids:
        if revision_id in leased_revisions:
            return f"lease {leased_revisions[revision_id]} on revision {revision_id}"
    for revision_id in revision_ids:
        for relation in named.get(revision_id, []):
            other = relation.from_page_id if relation.to_page_id == page_id else \
                relation.to_page_id
            if other not in doomed:
                return (f"relation {relation.relation_id} ({relation.from_page_id} "
                        f"{relation.relation_type} {relation.to_page_id})")
        holder = evidence.get(revision_id)
        if holder is not None and holder not in doomed:
            return f"evidence: {holder} names its revision {revision_id}"
    return None


def _old_revisions(store: Store, page_id: str, cutoff: str | None, policy: Policy,
                   leased_pages: dict[str, str], leased_revisions: dict[str, str],
                   named: dict[str, list[Any]], evidence: _Evidence,
                   result: Plan) -> None:
    """The oldest revisions of a page replaced before `cutoff`, up to the first one kept."""
    revision_ids = store.revision_ids(page_id)
    if len(revision_ids) < 2:
        return
    if cutoff is None:  # kept forever: no revision needs reading
        result.kept_by_policy["superseded_revisions"] += len(revision_ids) - 1
        return
    revisions = store.revisions(page_id)
    order = sorted(revisions, key=lambda r: (r.created_at, r.revision_id))
    linear = all(len(r.parent_ids) == (0 if i == 0 else 1)
                 and (i == 0 or r.parent_ids[0] == order[i - 1].revision_id)
                 for i, r in enumerate(order))
    older = order[:-1]
    if not linear:
        result.kept.append({"kind": "revisions", "page_id": page_id,
                            "revision_ids": [r.revision_id for r in older],
                            "why": "its history branches (diverged or merged): every revision "
                                   "is kept"})
        return
    if page_id in leased_pages:
        result.kept.append({"kind": "revisions", "page_id": page_id,
                            "revision_ids": [r.revision_id for r in older],
                            "why": f"lease {leased_pages[page_id]}"})
        return
    due: list[str] = []
    for position, revision in enumerate(older):
        replaced = order[position + 1].created_at
        if replaced >= cutoff:  # not due yet, nor anything newer
            result.kept_by_policy["superseded_revisions"] += len(older) - position
            when = _due(replaced, policy.superseded_revisions)
            if when and (result.next_due is None or when < result.next_due):
                result.next_due = when
            break
        why = None
        if revision.revision_id in leased_revisions:
            why = f"lease {leased_revisions[revision.revision_id]}"
        elif named.get(revision.revision_id):
            relation = named[revision.revision_id][0]
            why = (f"relation {relation.relation_id} ({relation.from_page_id} "
                   f"{relation.relation_type} {relation.to_page_id})")
        elif revision.revision_id in evidence:
            why = f"evidence: {evidence[revision.revision_id]} names it"
        if why is not None:
            result.kept.append({"kind": "revision", "page_id": page_id,
                                "revision_id": revision.revision_id, "why": why})
            break
        due.append(revision.revision_id)
    if due:
        result.revisions.append({
            "page_id": page_id, "revision_ids": due,
            "why": f"replaced before {cutoff[:10]} (superseded_revisions: "
                   f"{policy.superseded_revisions}); the oldest of the page's history",
        })


# -- collecting -------------------------------------------------------------------------------
def collect(store: Store, plan_id: str, *, actor: Actor | None = None,
            today: datetime.date | None = None) -> dict[str, Any]:
    """Remove exactly what the plan `plan_id` lists, worked out again under the lock.

    The `retention_collected` event naming every file is written first; then the files go
    (`finish`). Raises RevisionConflict, removing nothing, when the plan differs now."""
    with store.locked():
        store.writes.flush_for(None)
        now = plan(store, today=today)
        if now.plan_id != plan_id:
            raise RevisionConflict(
                f"the store's retention plan is {now.plan_id} now, not {plan_id}: nothing "
                "was removed", expected=plan_id, current=now.plan_id,
                hint="look at the plan again (`pcp retention plan`) and collect that one")
        if not now.pages and not now.revisions:
            return {"plan_id": plan_id, "event_id": None, "pages_removed": 0,
                    "revisions_removed": 0, "relations_removed": 0}
        data = {"plan_id": plan_id, "policy": now.policy.to_dict(),
                "pages": [{k: p[k] for k in ("page_id", "revision_ids", "relation_ids")}
                          for p in now.pages],
                "revisions": [{k: r[k] for k in ("page_id", "revision_ids")}
                              for r in now.revisions]}
        event = store.record_event(COLLECTED, data, actor=actor)
        try:
            finish(store, data)
        except StorageFailed as exc:
            raise StorageFailed(
                f"{exc.message.split('; ')[0]}; the collection of {plan_id} is recorded (its "
                f"{COLLECTED} event {event.event_id}) but not finished",
                hint="check the disk, then `pcp doctor --fix` finishes the collection (it "
                "removes only what the event lists)") from exc
        return {"plan_id": plan_id, "event_id": event.event_id,
                "pages_removed": len(now.pages),
                "revisions_removed": sum(len(p["revision_ids"]) for p in now.pages)
                + sum(len(r["revision_ids"]) for r in now.revisions),
                "relations_removed": sum(len(p["relation_ids"]) for p in now.pages)}


def finish(store: Store, data: Mapping[str, Any]) -> None:
    """Remove what a `retention_collected` event lists (what is gone already is skipped)."""
    from pcp_cli.store import lifecycle

    with store.locked():
        for page in data.get("pages") or []:
            lifecycle.finish_delete(store, page["page_id"], page["revision_ids"],
                                    page["relation_ids"])
        for group in data.get("revisions") or []:
            for revision_id in group["revision_ids"]:
                remove_file(store.layout.revision_path(group["page_id"], revision_id))


def collected_events(store_root: Path, events: Iterable[tuple[Path, Any]] | None = None
                     ) -> list[tuple[Path, dict[str, Any]]]:
    """The `retention_collected` events of a store (or of `events`, already read): (path, data)
    of each whose data has the expected shape."""
    if events is None:
        events = _read_events(store_root)
    found = []
    for path, event in events:
        try:
            data = event["data"] if event.get("kind") == COLLECTED else None
        except (KeyError, TypeError, AttributeError):
            continue
        if isinstance(data, dict) and _well_formed(data):
            found.append((path, data))
    return found


def _read_events(root: Path) -> list[tuple[Path, Any]]:
    from pcp_cli.store.atomic import is_temp_name

    folder = root / "events"
    found: list[tuple[Path, Any]] = []
    for path in sorted(folder.glob("*/*/*.json")) if folder.exists() else []:
        if not is_temp_name(path.name):
            try:
                found.append((path, json.loads(path.read_bytes())))
            except (OSError, ValueError):
                continue
    return found


def _well_formed(data: Mapping[str, Any]) -> bool:
    try:
        return all(is_safe_id(p["page_id"]) and all(is_safe_id(r) for r in p["revision_ids"])
                   and all(is_safe_id(r) for r in p.get("relation_ids", []))
                   for p in [*data.get("pages", []), *data.get("revisions", [])])
    except (KeyError, TypeError, AttributeError):
        return False


def collected_revision_ids(events: Iterable[tuple[Path, Any]]) -> set[str]:
    """Every revision id a `retention_collected` event names: a revision that names one of
    them as its parent lost its parent on purpose (`pcp validate` does not call it damage)."""
    out: set[str] = set()
    for _path, data in collected_events(Path("."), events):
        for group in [*data.get("pages", []), *data.get("revisions", [])]:
            out.update(group["revision_ids"])
    return out


def left_to_remove(store: Store, data: Mapping[str, Any]) -> bool:
    """Does a `retention_collected` event still name files that exist (a collection cut
    short)? A page written again since under the same id (revisions it did not list) is left
    alone."""
    for page in data.get("pages") or []:
        remaining = set(store.revision_ids(page["page_id"]))
        if remaining and not remaining <= set(page["revision_ids"]):
            continue
        if remaining or store.catalog.by_page_id(page["page_id"]) or any(
                store.layout.relation_path(r).exists() for r in page["relation_ids"]):
            return True
    for group in data.get("revisions") or []:
        if any(store.layout.revision_path(group["page_id"], r).exists()
               for r in group["revision_ids"]):
            return True
    return False


# -- pcp delete and the policy ----------------------------------------------------------------
def delete_overrides(store: Store, page_id: str, *,
                     today: datetime.date | None = None) -> list[str]:
    """The retention rules deleting `page_id` now would override, in words: a lease on it or
    one of its revisions (always); with a policy configured, also the policy (the page is not
    tombstoned, or not for long enough) and other pages' relations to it."""
    day = today or _today()
    policy = policy_from(store.manifest.retention)
    leased_pages, leased_revisions = _leased(store, day.isoformat())
    revision_ids = store.revision_ids(page_id)
    found = []
    if page_id in leased_pages:
        found.append(f"lease {leased_pages[page_id]} protects it")
    found += [f"lease {leased_revisions[r]} protects its revision {r}" for r in revision_ids
              if r in leased_revisions]
    if not policy.configured:
        return found
    entry = store.head_entry(page_id)
    cutoff = _cutoff(policy.tombstoned_pages, day)
    if entry is None or entry.lifecycle_status != "tombstoned":
        found.append("the policy deletes only tombstoned pages (`pcp tombstone` it first)")
    elif cutoff is None:
        found.append("the policy keeps tombstoned pages forever (tombstoned_pages: forever)")
    elif (entry.updated_at or "") >= cutoff:
        until = _due(entry.updated_at or "", policy.tombstoned_pages)
        found.append(f"the policy keeps it until {until} (tombstoned_pages: "
                     f"{policy.tombstoned_pages})")
    revisions = set(revision_ids)
    for relation in store.relations(page_id):
        other = relation.from_page_id if relation.to_page_id == page_id else relation.to_page_id
        if other != page_id and (relation.from_revision_id in revisions
                                 or relation.to_revision_id in revisions):
            found.append(f"relation {relation.relation_id} ({relation.from_page_id} "
                         f"{relation.relation_type} {relation.to_page_id}) names it")
    return found
