"""The store's write engine: how a revision and its head file reach the disk.

Every write goes one way: the immutable revision file first, then the page's head file, each
atomically, then the page's row in the catalog (`Writer.publish`). Importers write in batches
(`Writer.batch`): the same order, per batch instead of per page — every revision file of the
batch published and durable, then every head file, then the catalog — so a batch costs three
syncs of the file system (`atomic.GroupCommit`) instead of five fsyncs per page.

One `Writer` per open store (`StoreFolder.writes`), holding the open batch. Its callers hold
the store's writer lock (`StoreFolder.locked`): the Store's write API (store.py), the hand-edit
recorder (refresh.py), relations and deletion (lifecycle.py), ingest (events.py), `pcp doctor`
and sync. A revision is made by `new_revision` and published by `Writer.publish`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pcp_cli.errors import InvalidInput, StorageFailed
from pcp_cli.model.ids import new_id
from pcp_cli.model.page import Actor, PageState, ProvenanceStep, Revision, file_json, now_iso
from pcp_cli.store import kept_listing
from pcp_cli.store.atomic import GroupCommit, remove_file, write_atomic, write_new
from pcp_cli.store.catalog import Catalog, digest_of
from pcp_cli.store.catalog import entry_fields as _entry_fields
from pcp_cli.store.headfile import render_head
from pcp_cli.store.layout import Layout

# A batch is published when it holds this many pages or bytes (whichever comes first), so a
# crash or a refused write costs at most one batch, and memory stays bounded.
BATCH_PAGES = 256
BATCH_BYTES = 16 * 1024 * 1024


@dataclass
class Staged:
    """A page written in a batch, not yet published: its revision (None when only its head
    file is rewritten) and its rendered head file."""

    revision: Revision
    new_revision: bool
    head: bytes
    revision_file: bytes | None


class Pending:
    """The pages of the open batch, in the order they were written."""

    def __init__(self) -> None:
        self.pages: dict[str, Staged] = {}
        self.bytes = 0

    def full(self) -> bool:
        return len(self.pages) >= BATCH_PAGES or self.bytes >= BATCH_BYTES


class Publishing:
    """A full batch whose files a background thread publishes (`Writer.batch`)."""

    def __init__(self, staged: list[Staged], publish: Callable[[list[Staged]], None]) -> None:
        self.staged = staged
        self.page_ids = {page.revision.page_id for page in staged}
        self._publish = publish
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="pcp-publish")
        self._thread.start()

    def _run(self) -> None:
        try:
            self._publish(self.staged)
        except BaseException as exc:  # handed to the writer's thread by join()
            self._error = exc

    def join(self) -> None:
        """Wait for the files; raise what refused them (the store is then as StorageFailed
        says: the batch undone, or its revisions published for doctor to finish)."""
        self._thread.join()
        if self._error is not None:
            error, self._error = self._error, None
            raise error


def new_revision(
    state: PageState,
    *,
    actor: Actor,
    operation: str,
    parent: Revision | None = None,
    idempotency_key: str | None = None,
    note: str | None = None,
    input_revision_ids: Sequence[str] = (),
    merged: tuple[str, ...] = (),
    input_event_ids: Sequence[str] = (),
) -> Revision:
    timestamp = now_iso()
    inputs = tuple(dict.fromkeys(
        ((parent.revision_id,) if parent else ()) + merged + tuple(input_revision_ids)
    ))
    step = ProvenanceStep(
        operation=operation,
        actor_type=actor.actor_type,
        actor_id=actor.actor_id,
        timestamp=timestamp,
        input_revision_ids=inputs,
        note=note,
        input_event_ids=tuple(input_event_ids),
    )
    return Revision(
        revision_id=new_id("revision"),
        state=state,
        created_at=timestamp,
        created_by=actor,
        provenance=(step,),
        page_created_at=parent.page_created_at if parent else timestamp,
        parent_revision_id=parent.revision_id if parent else None,
        merged_revision_ids=merged,
        idempotency_key=idempotency_key,
    )


class Writer:
    """The write engine of one open store: the open batch, the batch a background thread is
    publishing, and the listing of the revisions folder a lock hold keeps."""

    def __init__(self, layout: Layout, catalog: Callable[[], Catalog]) -> None:
        self.layout = layout
        self._catalog = catalog  # the store's catalog (opened on first use)
        # The open batch (`batch()`): pages written but not yet published; and the batch a
        # background thread is publishing.
        self.pending: Pending | None = None
        self.publishing: Publishing | None = None
        # Lowercased page id -> the page ids spelled that way; valid while the store holds
        # the writer lock (no other writer can add a page then), so that a batch of creations
        # lists the revisions folder once instead of once per page; between holds it is kept
        # only while the folder provably has not changed (kept_listing).
        self.case_index: dict[str, tuple[str, ...]] | None = None
        self.case_kept: Any = None  # the last hold's listing, while it can vouch (kept_listing)

    @property
    def catalog(self) -> Catalog:
        return self._catalog()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Publish the pages written meanwhile in batches (the caller holds the writer lock).

        `write_page` and `upsert_page` stage their page instead of publishing it; the batch is
        published (`flush`) when it is full, before any other write, when a staged page is
        written again, and when the block ends, so everything written is on disk when this
        returns. A full batch's files are published by a background thread while the next
        batch is prepared (the file system calls and fsyncs release the GIL, so the two use both
        cores); it is waited for, and its catalog rows recorded, before the next batch is
        published, before anything reads the catalog or a page it holds, and before this
        returns. If the block raises, what is still staged is dropped: never published, so the
        store holds whole pages only (and a re-import writes them). Nested: the outer one
        publishes.
        """
        if self.pending is not None:
            yield
            return
        self.pending = Pending()
        # Listed afresh in the batch: from then on, every page the batch creates goes
        # through check_case_unique, so `revision_ids` can answer a new page without
        # listing its (absent) folder.
        self.case_index = None
        try:
            yield
            self.flush()
        except BaseException:
            self.pending = None  # what is staged is dropped; what is publishing finishes
            self.settle()
            raise
        finally:
            self.pending = None
            # For the next batch's hold (an import's), while it can vouch (kept_listing).
            self.case_kept = kept_listing.keep(self.layout.revisions, self.case_index)

    def flush(self, *, background: bool = False) -> None:
        """Publish the open batch: every new revision file, then every head file, each step
        durable before the next (`_publish_files`), then the catalog in one transaction. A refused
        write raises StorageFailed with none of the batch's pages changed. `background`: the files
        are published by a thread (see `batch`); the batch before it is always finished first, so
        batches reach the disk in order. Caller holds the lock."""
        self.settle()
        if not self.pending or not self.pending.pages:
            return
        staged = list(self.pending.pages.values())
        self.pending = Pending()
        if background:
            self.publishing = Publishing(staged, self._publish_files)
            return
        self._publish_files(staged)
        self._record_batch(staged)

    def settle(self) -> None:
        """Wait for the batch a background thread is publishing, record it in the catalog, and
        raise what refused it."""
        publishing, self.publishing = self.publishing, None
        if publishing is None:
            return
        publishing.join()
        self._record_batch(publishing.staged)

    def _publish_files(self, staged: list[Staged]) -> None:
        """Every new revision file of the batch, then every head file, each step durable
        before the next (`GroupCommit`: the files written, one sync, the revisions renamed,
        one sync, the heads renamed, one sync). A refused step raises StorageFailed with the
        batch undone (or, should the undo fail too, saying that doctor finishes it)."""
        commit = GroupCommit()
        revisions, heads = commit.stage(), commit.stage()
        for page in staged:
            revision = page.revision
            if page.revision_file is not None:
                revisions.add(self.layout.revision_path(revision.page_id, revision.revision_id),
                              page.revision_file, new=True)
            heads.add(self.layout.head_path(revision.state.namespace, revision.page_id),
                      page.head)
        commit.publish()

    def _record_batch(self, staged: list[Staged]) -> None:
        writes = [self.head_written(page.revision, page.head) for page in staged]
        self.catalog.record_writes(writes)

    def flush_for(self, page_id: str | None = None) -> None:
        """Publish the open batch (and finish the one publishing) before a write that must see
        it: any write of a page it holds, or (page_id None) any write that is not staged."""
        if self.pending and (page_id is None or page_id in self.pending.pages):
            self.flush()
        elif self.publishing and (page_id is None or page_id in self.publishing.page_ids):
            self.settle()

    def publish(self, revision: Revision, *, old_path: Path | None = None,
                new_revision: bool = True, batched: bool = False) -> None:
        """Revision file first, then the head file, then the catalog. Caller holds the lock.

        `batched`, inside `batch()`: staged, published with the rest of the batch (`flush`).
        Any other write publishes the open batch first, so writes reach the disk in order.
        """
        if batched and self.pending is not None and old_path is None:
            head = render_head(revision).encode("utf-8")
            body = file_json(revision.to_dict()).encode("utf-8") if new_revision else None
            self.pending.pages[revision.page_id] = Staged(revision, new_revision, head, body)
            self.pending.bytes += len(head) + len(body or b"")
            if self.pending.full():
                self.flush(background=True)
            return
        self.flush_for(None)
        revision_path = self.layout.revision_path(revision.page_id, revision.revision_id)
        if new_revision:
            write_new(revision_path, file_json(revision.to_dict()))
        try:
            self.write_head(revision, old_path=old_path)
        except StorageFailed as exc:
            if not new_revision:
                raise
            # The head file is as it was (write_atomic undid it): take the revision back too,
            # so the page is exactly as before and nothing unacknowledged stays published.
            try:
                remove_file(revision_path)
                with suppress(OSError):  # the page's folder, when it holds nothing else
                    revision_path.parent.rmdir()
                state = f"page {revision.page_id} is unchanged"
            except (OSError, StorageFailed):
                state = (f"revision {revision.revision_id} was published but its head file "
                         "was not updated: `pcp doctor --fix` finishes the write")
            raise StorageFailed(f"{exc.message.split('; ')[0]}; {state}", hint=exc.hint) from exc

    def write_head(self, revision: Revision, *, old_path: Path | None = None) -> None:
        """(Re)write a page's head file from a revision; moves it if the namespace changed."""
        head_path = self.layout.head_path(revision.state.namespace, revision.page_id)
        rendered = render_head(revision).encode("utf-8")
        write_atomic(head_path, rendered)
        self.catalog.record_write(*self.head_written(revision, rendered, old_path=old_path))

    def head_written(self, revision: Revision, rendered: bytes, *,
                     old_path: Path | None = None) -> tuple[str, dict[str, Any], list[str]]:
        """After a head file was written: remove the page's other head files (a namespace
        move), and return what the catalog records (path, fields, removed paths)."""
        head_path = self.layout.head_path(revision.state.namespace, revision.page_id)
        removed: list[str] = []
        stale = {Path(self.layout.root / e.path) for e in self.catalog.by_page_id(revision.page_id)}
        if old_path is not None:
            stale.add(old_path)
        for path in stale:
            if path != head_path and path.exists():
                remove_file(path)
                removed.append(self.layout.rel(path))
            elif path != head_path:
                removed.append(self.layout.rel(path))
        fields = _entry_fields(revision.state)
        fields.update(
            revision_id=revision.revision_id,
            content_hash=revision.content_hash,
            created_at=revision.page_created_at,
            updated_at=revision.created_at,
            edited=False,
            digest=digest_of(rendered),
        )
        return self.layout.rel(head_path), fields, removed

    def check_case_unique(self, page_id: str) -> None:
        """Refuse an id that differs from an existing page id only in case. Caller holds the lock.

        The revisions folder is listed once per lock hold, then the new id is remembered.
        """
        if self.case_index is None:
            self.case_index = kept_listing.reuse(self.layout.revisions, self.case_kept)
        if self.case_index is None:
            try:
                names = os.listdir(self.layout.revisions)
            except FileNotFoundError:
                names = []
            # Built in C (an import lists this once a lock hold: 100,000 names took 80-220 ms
            # in a Python loop); names that already collide, if any, are gathered after.
            lowered = map(str.lower, names)
            index: dict[str, tuple[str, ...]] = dict(zip(lowered, zip(names), strict=True))
            if len(index) < len(names):
                for name in names:
                    if name not in index[name.lower()]:
                        index[name.lower()] += (name,)
            self.case_index = index
        key = page_id.lower()
        spellings = self.case_index.get(key, ())
        for name in spellings:
            if name != page_id:
                raise InvalidInput(
                    f"page id {page_id!r} differs from existing page {name!r} only in case",
                    hint="ids must stay distinct on case-insensitive file systems",
                )
        if not spellings:
            self.case_index[key] = (page_id,)

    def listed_absent(self, page_id: str) -> bool:
        """True when this batch listed the revisions folder and `page_id` is not in it (so
        `revision_ids` answers a new page without listing its absent folder)."""
        return self.pending is not None and self.case_index is not None and \
            page_id.lower() not in self.case_index

    def forget_listing(self) -> None:
        """The revisions folder's listing no longer vouches (the lock was released, or a
        page is being deleted)."""
        self.case_index = None
