"""The store as of a moment: the head revision each page had then, lifecycle included.

`AsOf(store, stamp)` is a read-only view with the Store's read methods (`entries`, `current`,
`get`, `revisions`, `graph_heads`, `relations`, `head_entry`, `read_body`), so every reader
(listing, timeline, stats, the profile and its exports, ReadPages) answers "as of" without
knowing it. A page's head then is the newest revision (by `created_at`, then id) created at or
before the moment; a page created later does not exist then. A page deleted since is gone from
every time: its revisions were removed with it.

Only pages revised after the moment cost revision reads: for the others the catalog's head is
already the answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pcp_cli.errors import NotFound, UsageError
from pcp_cli.model.page import Relation, Revision
from pcp_cli.store.catalog import Entry

if TYPE_CHECKING:
    from pcp_cli.store.store import Store

_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
HINT = "give a date (2024-06-30: the end of that day, UTC) or a date and time " \
       "(2024-06-30T18:00:00Z, 2024-06-30T20:00+02:00)"


def parse_as_of(value: str) -> str:
    """`--as-of` / `as_of` as a UTC stamp in the store's format (`…T…:…:….mmmZ`).

    A bare date means the end of that day (UTC): "as of 2024-06-30" includes that day.
    """
    text = value.strip()
    try:
        if _DATE.match(text):
            moment = datetime.fromisoformat(text).replace(
                hour=23, minute=59, second=59, microsecond=999000, tzinfo=UTC)
        else:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
    except ValueError:
        raise UsageError(f"--as-of {value!r} is not a date or a date and time", hint=HINT) \
            from None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def stamp_key(stamp: str | None) -> str:
    """A stored time as a comparable UTC stamp (stores write `…mmmZ`; imports may not)."""
    if not stamp:
        return ""
    if len(stamp) == 24 and stamp.endswith("Z"):
        return stamp
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _entry_for(entry: Entry, revision: Revision) -> Entry:
    state = revision.state
    return replace(
        entry, revision_id=revision.revision_id, content_hash=revision.content_hash,
        type=state.type, namespace=state.namespace, title=state.title,
        lifecycle_status=state.lifecycle_status, review_status=state.review_status,
        origin=state.origin, sensitivity=state.sensitivity, tags=tuple(state.tags),
        record=dict(state.record), created_at=revision.page_created_at,
        updated_at=revision.created_at, problem=None, edited=False,
    )


class AsOf:
    """A read-only view of `store` as it stood at `stamp` (see the module docstring)."""

    def __init__(self, store: Store, stamp: str) -> None:
        self._store = store
        self.as_of = stamp
        self._entries: dict[str, Entry] | None = None
        self._revisions: dict[str, list[Revision]] = {}
        self.revision_reads = 0  # pages whose history had to be read (for filters_applied)
        self.revised: set[str] = set()  # pages whose head then is not their head now
        self.absent: set[str] = set()  # pages with a head file now that did not exist then

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    @property
    def store(self) -> Store:
        return self._store

    def locked(self) -> Any:
        raise UsageError("the store as of a past date is read-only",
                         hint="drop --as-of to change the store")

    # -- history ------------------------------------------------------------------------------
    def revisions(self, page_id: str) -> list[Revision]:
        if page_id not in self._revisions:
            self.revision_reads += 1
            self._revisions[page_id] = [
                rev for rev in self._store.revisions(page_id)
                if stamp_key(rev.created_at) <= self.as_of]
        return self._revisions[page_id]

    def graph_heads(self, page_id: str,
                    revisions: Sequence[Revision] | None = None) -> list[Revision]:
        return self._store.graph_heads(page_id, self.revisions(page_id)
                                       if revisions is None else revisions)

    def _head_then(self, page_id: str) -> Revision | None:
        revs = self.revisions(page_id)
        if not revs:
            return None
        return max(revs, key=lambda r: (stamp_key(r.created_at), r.revision_id))

    # -- the catalog, as of ---------------------------------------------------------------------
    def _all(self) -> dict[str, Entry]:
        if self._entries is None:
            found: dict[str, Entry] = {}
            for entry in self._store.catalog.entries("page_id IS NOT NULL"):
                assert entry.page_id is not None
                if entry.page_id in found:
                    continue
                if entry.problem is None and not entry.edited and entry.updated_at and \
                        stamp_key(entry.updated_at) <= self.as_of:
                    found[entry.page_id] = entry  # not revised since: the head is the answer
                    continue
                if entry.created_at and entry.problem is None and \
                        stamp_key(entry.created_at) > self.as_of:
                    self.absent.add(entry.page_id)
                    continue  # created later
                try:
                    head = self._head_then(entry.page_id)
                except NotFound:
                    head = None
                if head is None:
                    self.absent.add(entry.page_id)
                else:
                    found[entry.page_id] = _entry_for(entry, head)
                    if head.revision_id != entry.revision_id or entry.edited:
                        self.revised.add(entry.page_id)
            self._entries = found
        return self._entries

    def entries(self, *, types: Sequence[str] | None = None,
                namespaces: Sequence[str] | None = None, statuses: Sequence[str] | None = None,
                review: Sequence[str] | None = ("affirmed",),
                sensitivities: Sequence[str | None] | None = None) -> list[Entry]:
        out = []
        for entry in self._all().values():
            if (types and entry.type not in types) or (
                    namespaces and entry.namespace not in namespaces) or (
                    statuses and entry.lifecycle_status not in statuses) or (
                    review and entry.review_status not in review) or (
                    sensitivities is not None and entry.sensitivity not in sensitivities):
                continue
            out.append(entry)
        return sorted(out, key=lambda e: e.path)

    def namespaces(self) -> list[str]:
        return sorted({e.namespace for e in self._all().values() if e.namespace})

    def head_entry(self, page_id: str) -> Entry | None:
        return self._all().get(page_id)

    def page_exists(self, page_id: str) -> bool:
        return page_id in self._all()

    def current(self, page_id: str) -> Revision:
        entry = self._all().get(page_id)
        if entry is None:
            self._store.current(page_id)  # the usual errors for a bad or unknown id
            raise NotFound(f"page {page_id} did not exist as of {self.as_of}",
                           hint="try a later --as-of, or none")
        if entry.revision_id and not entry.edited and entry.updated_at and \
                stamp_key(entry.updated_at) <= self.as_of:
            try:
                return self._store.load_revision(page_id, entry.revision_id)
            except NotFound:
                pass
        head = self._head_then(page_id)
        if head is None:
            raise NotFound(f"page {page_id} did not exist as of {self.as_of}")
        return head

    def get(self, page_id: str, revision_id: str | None = None) -> Revision:
        if revision_id is None:
            return self.current(page_id)
        revision = self._store.get(page_id, revision_id)
        if stamp_key(revision.created_at) > self.as_of:
            raise NotFound(f"revision {revision_id} of {page_id} was made after {self.as_of}",
                           hint=f"`pcp history {page_id}` lists its revisions and their times")
        return revision

    def read_body(self, entry: Entry) -> str:
        assert entry.page_id
        return self.current(entry.page_id).state.content

    def relations(self, page_id: str | None = None) -> list[Relation]:
        return [rel for rel in self._store.relations(page_id)
                if stamp_key(rel.created_at) <= self.as_of]


def view(store: Store, as_of: str | None) -> Any:
    """`store` itself, or its view as of `as_of` (a `--as-of` value, parsed here)."""
    if as_of is None:
        return store
    if isinstance(store, AsOf):
        store = store.store
    return AsOf(store, parse_as_of(as_of))


def present(store: Any) -> Store:
    """The store as it is now, behind a view as of a past moment (or the store itself)."""
    return store.store if isinstance(store, AsOf) else store
