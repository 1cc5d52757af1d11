"""The Store: the write API of a context store folder (`Store(StoreFolder)`), on top of the
folder's reads (folder.py).

WritePage (`write_page`), the importers' `upsert_page`, RevisePage (`revise`) and pcp's own
events (`record_event`) check what they are given, make the revision and hand it to the write
engine (writes.py: the revision file first, the head file second, both atomically, then the
catalog; in batches under `batch()`). Before a page is revised, a hand edit of its head file is
recorded first (refresh.py), so no edit is overwritten; `refresh` records the hand edits and
dropped files a person made. Relations, supersession and deletion sit above the Store
(lifecycle.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pcp_cli.store.refresh as refreshing
from pcp_cli.errors import (
    IdempotencyConflict,
    PcpError,
    RevisionConflict,
    UsageError,
)
from pcp_cli.model.ids import check_id, new_id, page_id_for_key
from pcp_cli.model.page import (
    Actor,
    Event,
    PageState,
    Revision,
    file_json,
    now_iso,
)
from pcp_cli.store import reimport
from pcp_cli.store.atomic import write_new
from pcp_cli.store.catalog import Changes
from pcp_cli.store.folder import StoreFolder
from pcp_cli.store.writes import new_revision


@dataclass(frozen=True)
class WriteResult:
    page_id: str
    revision_id: str
    status: str  # created | revised | unchanged

    def to_dict(self) -> dict[str, str]:
        return {"page_id": self.page_id, "revision_id": self.revision_id, "status": self.status}


class Store(StoreFolder):
    """An open store folder (its reads: `StoreFolder`) and the writes of pages to it."""

    # -- the catalog kept current, hand edits recorded: store/refresh.py ---------------------
    def refresh(self, mode: str = "auto") -> Changes:
        """Bring the catalog up to date and, when writable, record hand edits it found."""
        return refreshing.refresh(self, mode)

    # -- writing ------------------------------------------------------------------------------
    @contextmanager
    def batch(self) -> Iterator[None]:
        """Hold the writer lock and publish the pages written meanwhile in batches: see
        `writes.Writer.batch` (an import writes its pages under one)."""
        with self.locked(), self.writes.batch():
            yield

    def write_page(
        self,
        state: PageState,
        *,
        actor: Actor | None = None,
        operation: str = "write",
        idempotency_key: str | None = None,
        source_note: str | None = None,
        input_revision_ids: Sequence[str] = (),
        input_event_ids: Sequence[str] = (),
    ) -> WriteResult:
        """WritePage: a new page. The same idempotency key again returns the same ids."""
        actor = actor or self.user
        with self.locked():
            page_id = state.page_id or (
                page_id_for_key(idempotency_key) if idempotency_key else new_id("page")
            )
            check_id(page_id, "page id")
            self.writes.flush_for(page_id)
            return self._write_page(
                state.evolve(page_id=page_id), actor=actor, operation=operation,
                idempotency_key=idempotency_key, source_note=source_note,
                input_revision_ids=input_revision_ids, input_event_ids=input_event_ids)

    def _write_page(self, state: PageState, *, actor: Actor, operation: str,
                    idempotency_key: str | None, source_note: str | None,
                    input_revision_ids: Sequence[str] = (), input_event_ids: Sequence[str] = (),
                    absent: bool = False) -> WriteResult:
        """write_page with the page id set and the batch flushed; `absent`: the caller has just
        seen that the page has no published revision (so the folder is not listed again)."""
        page_id = state.page_id
        self.check_state(state)
        # A revision folder without a published revision is a write killed before its
        # revision file was renamed into place: nothing was published, so write afresh.
        if not absent and self.revision_ids(page_id):
            first = self.revisions(page_id)[0]
            if idempotency_key and first.idempotency_key == idempotency_key:
                if first.content_hash != state.content_hash:
                    raise IdempotencyConflict(
                        f"idempotency key {idempotency_key!r} was used for page {page_id} "
                        "with different content",
                        page_id=page_id,
                        current=self.current(page_id).revision_id,
                        hint=f"a repeat must send what the first write sent; revise "
                        f"{page_id} to change it, or use a new key for a new page",
                    )
                return WriteResult(page_id, first.revision_id, "unchanged")
            raise RevisionConflict(
                f"page {page_id} already exists",
                expected="(none)",
                current=self.current(page_id).revision_id,
                hint="revise it with `pcp revise`, or choose another id",
            )
        self.writes.check_case_unique(page_id)
        revision = new_revision(
            state, actor=actor, operation=operation, idempotency_key=idempotency_key,
            note=source_note, input_revision_ids=input_revision_ids,
            input_event_ids=input_event_ids,
        )
        self.writes.publish(revision, batched=True)
        return WriteResult(page_id, revision.revision_id, "created")

    def upsert_page(
        self,
        state: PageState,
        *,
        key: str,
        actor: Actor,
        operation: str = "import",
        source_note: str | None = None,
        weak_observed: bool = False,
    ) -> WriteResult:
        """Importers: create the page for `key`, revise it if its content changed, else nothing.

        "Changed" is judged against the last revision written for `key`, so a page the person
        edited after an import keeps the edit while the source stays the same. A page whose
        revision was published but whose head file never was (a killed import) gets its head
        file now. A revision never lowers the page's sensitivity nor undoes the person's
        lifecycle or rejection, and with `weak_observed` (`record.observed_at` is only a
        file's mtime) a changed observed time alone is no change (store/reimport.py).
        """
        with self.locked():
            page_id = state.page_id or page_id_for_key(key)
            self.writes.flush_for(page_id)
            state = state.evolve(page_id=page_id)
            if not self.revision_ids(page_id):  # no page, or one whose first write was killed
                return self._write_page(state, actor=actor, operation=operation,
                                        idempotency_key=key, source_note=source_note,
                                        absent=True)
            refreshing.record_pending_edit(self, page_id)  # a hand edit first, as revise() does
            status, head = self._upsert_plan(page_id, state, key, weak_observed)
            if status == "created":
                return self._write_page(state, actor=actor, operation=operation,
                                        idempotency_key=key, source_note=source_note)
            assert head is not None
            if status == "unchanged":
                if self._head_missing(head):
                    self.writes.publish(head, new_revision=False, batched=True)
                    status = "revised" if head.parent_revision_id else "created"
                return WriteResult(page_id, head.revision_id, status)
            revision = new_revision(reimport.kept(state, head.state),
                                    actor=actor, operation=operation, parent=head,
                                    idempotency_key=key, note=source_note)
            self.writes.publish(revision, batched=True)
            return WriteResult(page_id, revision.revision_id, "revised")

    def plan_upsert(self, state: PageState, *, key: str, weak_observed: bool = False) -> str:
        """What `upsert_page` would answer (created, revised, unchanged), writing nothing."""
        page_id = state.page_id or page_id_for_key(key)
        status, head = self._upsert_plan(page_id, state.evolve(page_id=page_id), key,
                                         weak_observed)
        if status == "unchanged" and head is not None and self._head_missing(head):
            return "revised" if head.parent_revision_id else "created"
        return status

    def _upsert_plan(self, page_id: str, state: PageState, key: str,
                     weak_observed: bool = False) -> tuple[str, Revision | None]:
        if not self.revision_ids(page_id):  # no page, or one whose first write was killed
            return "created", None
        head = self.current(page_id)
        if reimport.unchanged(state, head, weak_observed):
            return "unchanged", head
        if head.idempotency_key != key:  # edited since: compare with the last keyed write
            keyed = [rev for rev in self.revisions(page_id) if rev.idempotency_key == key]
            if keyed and reimport.unchanged(state, keyed[-1], weak_observed):
                return "unchanged", head
        return "revised", head

    def _head_missing(self, head: Revision) -> bool:
        return not self.catalog.by_page_id(head.page_id) and not self.layout.head_path(
            head.state.namespace, head.page_id).exists()

    def revise(
        self,
        page_id: str,
        *,
        changes: dict[str, Any],
        expected_revision_id: str | None = None,
        actor: Actor | None = None,
        operation: str = "revise",
        note: str | None = None,
        input_revision_ids: Sequence[str] = (),
        merged_revision_ids: Sequence[str] = (),
    ) -> WriteResult:
        """RevisePage: a new revision with `changes` applied to the head's state."""
        actor = actor or self.user
        with self.locked():
            self.writes.flush_for(None)  # an open batch first: this write must see its pages
            refreshing.record_pending_edit(self, page_id)
            head = self.current(page_id)
            if expected_revision_id is not None and expected_revision_id != head.revision_id:
                raise RevisionConflict(
                    f"page {page_id} is at revision {head.revision_id}, not "
                    f"{expected_revision_id}",
                    expected=expected_revision_id,
                    current=head.revision_id,
                    hint=f"read the current revision (`pcp show {page_id}`) and revise on top "
                    "of it",
                )
            state = _apply_changes(head.state, changes)
            self.check_state(state)
            if state.content_hash == head.content_hash and not merged_revision_ids:
                return WriteResult(page_id, head.revision_id, "unchanged")
            revision = new_revision(
                state, actor=actor, operation=operation, parent=head, note=note,
                input_revision_ids=input_revision_ids, merged=tuple(merged_revision_ids),
            )
            self.writes.publish(revision)
            return WriteResult(page_id, revision.revision_id, "revised")

    def record_event(
        self,
        kind: str,
        data: dict[str, Any],
        *,
        actor: Actor | None = None,
        occurred_at: str | None = None,
        source_refs: Sequence[str] = (),
    ) -> Event:
        """An immutable event file of pcp's own (e.g. `page_deleted`). Events from clients, with
        their idempotency keys, go through store/events.py's `ingest`, which refuses a key
        re-used with other content."""
        with self.locked():
            self.writes.flush_for(None)  # an event may record what an open batch wrote
            recorded = now_iso()
            event = Event(
                event_id=new_id("event"),
                kind=kind,
                occurred_at=occurred_at or recorded,
                recorded_at=recorded,
                actor=actor or self.user,
                data=data,
                source_refs=tuple(source_refs),
            )
            write_new(self.layout.event_path(event.event_id, event.recorded_at),
                      file_json(event.to_dict()))
            return event


def _apply_changes(state: PageState, changes: dict[str, Any]) -> PageState:
    """A copy of `state` with `changes`; `content` and `record`/`extensions` merge sensibly."""
    data = state.to_dict()
    for key, value in changes.items():
        if key == "content":
            data["payload"] = {**data["payload"], "content": value}
        elif key == "media_type":
            data["payload"] = {**data["payload"], "media_type": value}
        elif key in ("record", "extensions", "facets"):
            merged = {**data[key], **value}
            data[key] = {k: v for k, v in merged.items() if v is not None}
        elif key in ("page_id", "owner_id"):
            raise UsageError(f"{key} cannot be changed by a revision")
        elif key in data:
            data[key] = list(value) if isinstance(value, tuple) else value
        else:
            raise UsageError(f"unknown page field {key!r}")
    try:
        return PageState.from_dict(data)
    except (KeyError, TypeError) as exc:  # pragma: no cover - guarded by check_state
        raise PcpError(f"cannot apply changes: {exc}") from None
