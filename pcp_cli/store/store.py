"""The Store facade: every read and write of a context store folder goes through here.

Writes take the store-wide lock, publish the immutable revision file first and the head file
second (both atomically), then note the change in the catalog. Importers write in batches
(`Store.batch()`): the same order, per batch instead of per page — every revision file of the
batch published and durable, then every head file, then the catalog — so a batch costs three
syncs of the file system (`atomic.GroupCommit`) instead of five fsyncs per page. Readers never
lock. A head file a person edited, or a Markdown file they dropped under `pages/`, is recorded
as a new revision by the next writable Store that looks at it.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pcp_cli.store.lifecycle as lifecycle
import pcp_cli.store.refresh as refreshing
from pcp_cli.config import resolve_store_root
from pcp_cli.errors import (
    IdempotencyConflict,
    InvalidInput,
    NotFound,
    PcpError,
    RevisionConflict,
    StorageFailed,
    StoreDamaged,
    UsageError,
)
from pcp_cli.model.check import FieldError, check_fields
from pcp_cli.model.ids import check_id, is_safe_id, new_id, page_id_for_key
from pcp_cli.model.page import (
    Actor,
    Event,
    PageState,
    ProvenanceStep,
    Relation,
    Revision,
    file_json,
    now_iso,
)
from pcp_cli.store import kept_listing
from pcp_cli.store.atomic import (
    GroupCommit,
    is_temp_name,
    remove_file,
    write_atomic,
    write_new,
)
from pcp_cli.store.catalog import Catalog, Changes, Entry, TallyFilter, digest_of
from pcp_cli.store.catalog import entry_fields as _entry_fields
from pcp_cli.store.headfile import render_head
from pcp_cli.store.layout import Layout, check_namespace, enclosing_store, nested_store
from pcp_cli.store.local import heal as heal_local
from pcp_cli.store.lock import writer_lock
from pcp_cli.store.manifest import Manifest, read_manifest, write_manifest
from pcp_cli.store.refresh import HandEdit

# Catalog rows listed and searched: readable head files, and unreadable ones served from the
# page's newest revision meanwhile (store/refresh.py gives those a revision_id).
SERVED = "(problem IS NULL OR revision_id IS NOT NULL)"
# The catalog's file under `.pcp/`.
CATALOG_FILE = "catalog.sqlite"


@dataclass(frozen=True)
class WriteResult:
    page_id: str
    revision_id: str
    status: str  # created | revised | unchanged

    def to_dict(self) -> dict[str, str]:
        return {"page_id": self.page_id, "revision_id": self.revision_id, "status": self.status}


# A batch is published when it holds this many pages or bytes (whichever comes first), so a
# crash or a refused write costs at most one batch, and memory stays bounded.
BATCH_PAGES = 256
BATCH_BYTES = 16 * 1024 * 1024


@dataclass
class _Staged:
    """A page written in a batch, not yet published: its revision (None when only its head
    file is rewritten) and its rendered head file."""

    revision: Revision
    new_revision: bool
    head: bytes
    revision_file: bytes | None


class _Pending:
    """The pages of the open batch, in the order they were written."""

    def __init__(self) -> None:
        self.pages: dict[str, _Staged] = {}
        self.bytes = 0

    def full(self) -> bool:
        return len(self.pages) >= BATCH_PAGES or self.bytes >= BATCH_BYTES


class _Publishing:
    """A full batch whose files a background thread publishes (`Store.batch`)."""

    def __init__(self, staged: list[_Staged], publish: Callable[[list[_Staged]], None]) -> None:
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


class Store:
    def __init__(self, root: Path, *, readonly: bool = False) -> None:
        self.layout = Layout(root)
        self.root = root
        self.readonly = readonly
        heal_local(self.layout.local)
        self.manifest: Manifest = read_manifest(self.layout.manifest)
        self._catalog: Catalog | None = None
        self._lock_depth = 0
        # Lowercased page id -> the page ids spelled that way; valid while this Store holds
        # the writer lock (no other writer can add a page then), so that a batch of creations
        # lists the revisions folder once instead of once per page; between holds it is kept
        # only while the folder provably has not changed (kept_listing).
        self._case_index: dict[str, tuple[str, ...]] | None = None
        self._case_kept: Any = None  # the last hold's listing, while it can vouch (kept_listing)
        self.hand_edits: list[HandEdit] = []
        self._relations_seen: tuple[int, dict[tuple[str, str, str], Relation]] | None = None
        self.problems: dict[str, str] = {}
        # The open batch (`batch()`): pages written but not yet published; and the batch a
        # background thread is publishing.
        self._pending: _Pending | None = None
        self._publishing: _Publishing | None = None

    # -- opening ------------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None, *, readonly: bool = False) -> Store:
        return cls(resolve_store_root(path), readonly=readonly)

    @classmethod
    def init(cls, root: Path, *, owner_id: str, namespace: str | None = None) -> Store:
        root = root.expanduser()
        if (root / "pcp.yaml").exists():
            raise UsageError(f"{root} is already a pcp store", hint="use it as it is")
        outer = enclosing_store(root.resolve())
        if outer is not None:
            raise UsageError(
                f"{root} is inside the pcp store {outer}: a store cannot hold another",
                hint=f"create it outside {outer}, or add pages to {outer} under a namespace",
            )
        inner = nested_store(root.resolve())
        if inner is not None:
            raise UsageError(
                f"{root} holds the pcp store {inner}: a store cannot hold another",
                hint=f"create it elsewhere, or use {inner} as it is",
            )
        manifest = Manifest.new(owner_id, namespace)
        root.mkdir(parents=True, exist_ok=True)
        layout = Layout(root.resolve())
        for folder in (layout.pages, layout.revisions, layout.relations, layout.events):
            folder.mkdir(exist_ok=True)
            keep = folder / ".gitkeep"
            if not keep.exists():
                write_atomic(keep, "")
        gitignore = layout.root / ".gitignore"
        if not gitignore.exists():
            write_atomic(gitignore, "# local, derived state: never committed\n.pcp/\n")
        write_manifest(layout.manifest, manifest)
        return cls(layout.root)

    @property
    def owner_id(self) -> str:
        return self.manifest.owner_id

    @property
    def default_namespace(self) -> str:
        return self.manifest.default_namespace

    @property
    def user(self) -> Actor:
        return Actor("user", self.owner_id)

    @property
    def catalog(self) -> Catalog:
        if self._publishing is not None:  # its files first: the catalog describes them
            self._settle()
        if self._catalog is None:
            self._catalog = Catalog(
                self.layout.local / CATALOG_FILE, self.root, self.layout.pages, self._scan
            )
        return self._catalog

    def has_catalog(self) -> bool:
        """Whether this device has a catalog of the store yet (a fresh clone has none); asking
        creates nothing."""
        return self._catalog is not None or (self.layout.local / CATALOG_FILE).exists()

    def close(self) -> None:
        if self._catalog is not None:
            self._catalog.close()
            self._catalog = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- locking ------------------------------------------------------------------------------
    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store-wide writer lock (re-entrant within this Store)."""
        if self.readonly:
            raise UsageError("this store was opened read-only")
        if self._lock_depth:
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        with writer_lock(self.layout.local / "lock"):
            self.refuse_replaced_folders()
            self._lock_depth = 1
            try:
                yield
            finally:
                self._lock_depth = 0
                self._case_index = None

    def refuse_replaced_folders(self) -> None:
        """StoreDamaged when a file (or anything else) is where one of the store's folders
        must be: nothing can be written, and the store cannot be called clean."""
        replaced = self.layout.not_folders()
        if replaced:
            raise StoreDamaged(
                f"{replaced[0]} is not a folder (a file is where the store needs one)",
                hint="move it aside and put the folder back (from git or a backup); "
                "`pcp doctor` checks the store",
            )

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Hold the writer lock and publish the pages written meanwhile in batches.

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
        with self.locked():
            if self._pending is not None:
                yield
                return
            self._pending = _Pending()
            # Listed afresh in the batch: from then on, every page the batch creates goes
            # through _check_case_unique, so `revision_ids` can answer a new page without
            # listing its (absent) folder.
            self._case_index = None
            try:
                yield
                self.flush()
            except BaseException:
                self._pending = None  # what is staged is dropped; what is publishing finishes
                self._settle()
                raise
            finally:
                self._pending = None
                # For the next batch's hold (an import's), while it can vouch (kept_listing).
                self._case_kept = kept_listing.keep(self.layout.revisions, self._case_index)

    def flush(self, *, background: bool = False) -> None:
        """Publish the open batch: every new revision file, then every head file, each step
        durable before the next (`_publish_files`), then the catalog in one transaction. A refused
        write raises StorageFailed with none of the batch's pages changed. `background`: the files
        are published by a thread (see `batch`); the batch before it is always finished first, so
        batches reach the disk in order. Caller holds the lock."""
        self._settle()
        if not self._pending or not self._pending.pages:
            return
        staged = list(self._pending.pages.values())
        self._pending = _Pending()
        if background:
            self._publishing = _Publishing(staged, self._publish_files)
            return
        self._publish_files(staged)
        self._record_batch(staged)

    def _settle(self) -> None:
        """Wait for the batch a background thread is publishing, record it in the catalog, and
        raise what refused it."""
        publishing, self._publishing = self._publishing, None
        if publishing is None:
            return
        publishing.join()
        self._record_batch(publishing.staged)

    def _publish_files(self, staged: list[_Staged]) -> None:
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

    def _record_batch(self, staged: list[_Staged]) -> None:
        writes = [self._head_written(page.revision, page.head) for page in staged]
        self.catalog.record_writes(writes)

    def _flush_for(self, page_id: str | None = None) -> None:
        """Publish the open batch (and finish the one publishing) before a write that must see
        it: any write of a page it holds, or (page_id None) any write that is not staged."""
        if self._pending and (page_id is None or page_id in self._pending.pages):
            self.flush()
        elif self._publishing and (page_id is None or page_id in self._publishing.page_ids):
            self._settle()

    # -- revisions ----------------------------------------------------------------------------
    def page_exists(self, page_id: str) -> bool:
        return is_safe_id(page_id) and self.layout.revision_dir(page_id).is_dir()

    def revision_ids(self, page_id: str) -> list[str]:
        if self._pending is not None and self._case_index is not None and \
                page_id.lower() not in self._case_index:
            return []  # the revisions folder was listed in this batch (`batch`): no such page
        folder = self.layout.revision_dir(page_id)
        try:
            names = os.listdir(folder)
        except FileNotFoundError:
            return []
        return sorted(
            name[:-5] for name in names if name.endswith(".json") and not is_temp_name(name)
        )

    def page_of_revision(self, revision_id: str) -> str | None:
        """The page a revision id (`rev_…`) belongs to, None if no page has it: one stat per
        page (revision files are named by page, not indexed by revision)."""
        if not revision_id.startswith("rev_") or not is_safe_id(revision_id):
            return None
        name = f"{revision_id}.json"
        try:
            folders = os.scandir(self.layout.revisions)
        except FileNotFoundError:
            return None
        with folders:
            for folder in folders:
                if folder.is_dir() and os.path.exists(os.path.join(folder.path, name)):
                    return folder.name
        return None

    def load_revision(self, page_id: str, revision_id: str) -> Revision:
        path = self.layout.revision_path(page_id, revision_id)
        try:
            data = json.loads(path.read_bytes())
        except FileNotFoundError:
            raise NotFound(f"revision {revision_id} of page {page_id} does not exist",
                           hint=f"`pcp history {page_id}` lists its revisions") from None
        except (ValueError, OSError) as exc:
            raise StoreDamaged(f"{self.layout.rel(path)}: unreadable revision file ({exc})",
                               hint="run `pcp doctor`") from None
        try:
            revision = Revision.from_dict(data)
        except (KeyError, TypeError, AttributeError) as exc:
            raise StoreDamaged(f"{self.layout.rel(path)}: revision file lacks {exc}",
                               hint="run `pcp validate`") from None
        if revision.page_id != page_id or revision.revision_id != revision_id:
            raise StoreDamaged(f"{self.layout.rel(path)}: ids inside do not match its path")
        return revision

    def revisions(self, page_id: str) -> list[Revision]:
        """Every revision of a page, parents before children (ties by time, then id)."""
        revs = {rid: self.load_revision(page_id, rid) for rid in self.revision_ids(page_id)}
        ordered: list[Revision] = []
        placed: set[str] = set()
        pending = sorted(revs.values(), key=lambda r: (r.created_at, r.revision_id))
        while pending:
            progress = False
            for rev in list(pending):
                if all(p in placed or p not in revs for p in rev.parent_ids):
                    ordered.append(rev)
                    placed.add(rev.revision_id)
                    pending.remove(rev)
                    progress = True
            if not progress:  # a cycle cannot be written by pcp; show what is there
                ordered.extend(pending)
                break
        return ordered

    def graph_heads(self, page_id: str, revisions: Sequence[Revision] | None = None) -> list[
        Revision
    ]:
        """Revisions no other revision names as a parent: one normally, more after divergence."""
        revs = list(revisions) if revisions is not None else self.revisions(page_id)
        parents = {p for rev in revs for p in rev.parent_ids}
        heads = [rev for rev in revs if rev.revision_id not in parents]
        return sorted(heads, key=lambda r: (r.created_at, r.revision_id))

    # -- the current page ---------------------------------------------------------------------
    def head_entry(self, page_id: str) -> Entry | None:
        entries = self.catalog.by_page_id(page_id)
        return entries[0] if entries else None

    def current(self, page_id: str) -> Revision:
        """The head revision of a page: the one its head file names, or the newest graph head."""
        check_id(page_id, "page id")
        if not self.page_exists(page_id):
            raise NotFound(f"page {page_id} does not exist",
                           hint="`pcp ls` lists pages; ids are case-sensitive")
        revs = self.revisions(page_id)
        if not revs:
            raise StoreDamaged(f"page {page_id} has a revision folder but no revisions",
                               hint="run `pcp doctor`")
        entry = self.head_entry(page_id)
        by_id = {rev.revision_id: rev for rev in revs}
        heads = self.graph_heads(page_id, revs)
        if entry and entry.revision_id in by_id and by_id[entry.revision_id] in heads:
            return by_id[entry.revision_id]
        return heads[-1]

    def get(self, page_id: str, revision_id: str | None = None) -> Revision:
        if revision_id is not None:
            check_id(revision_id, "revision id")
            if not self.page_exists(page_id):
                raise NotFound(f"page {page_id} does not exist")
            return self.load_revision(page_id, revision_id)
        return self.current(page_id)

    def entries(
        self,
        *,
        types: Sequence[str] | None = None,
        namespaces: Sequence[str] | None = None,
        statuses: Sequence[str] | None = None,
        review: Sequence[str] | None = ("affirmed",),
        sensitivities: Sequence[str | None] | None = None,
    ) -> list[Entry]:
        """Catalog entries of readable pages matching the filters (no file is opened).
        `sensitivities`: the sensitivity values let through (None in it: unclassified pages)."""
        return self.catalog.entries(*_entry_filter(types, namespaces, statuses, review,
                                                   sensitivities))

    def entry_details(
        self,
        type_: str,
        *,
        statuses: Sequence[str] | None = None,
        sensitivities: Sequence[str | None] | None = None,
    ) -> list[tuple[Any, ...]]:
        """The rows `entries(types=(type_,), …)` would give, as `Catalog.details` tuples."""
        return self.catalog.details(type_, *_entry_filter(None, None, statuses, ("affirmed",),
                                                          sensitivities))

    def entry_window(
        self,
        *,
        limit: int,
        offset: int = 0,
        types: Sequence[str] | None = None,
        namespaces: Sequence[str] | None = None,
        statuses: Sequence[str] | None = None,
        review: Sequence[str] | None = ("affirmed",),
    ) -> list[Entry]:
        """The entries `entries` would give, newest first (`pcp ls`'s order), `limit` of them
        from `offset` on, read in SQL with LIMIT (the rest are never loaded)."""
        where, params = _entry_filter(types, namespaces, statuses, review, None)
        return self.catalog.window(where, params, limit, offset)

    def entry_groups(
        self,
        *,
        statuses: Sequence[str] | None = None,
        review: Sequence[str] | None = ("affirmed",),
        sensitivities: Sequence[str | None] | None = None,
        exclude: Iterable[str] = (),
    ) -> list[tuple[Any, ...]]:
        """The entries `entries` would give (less the pages in `exclude`), counted by
        (namespace, type, origin, lifecycle_status): the readable rows from the catalog's
        tally, the few served from a revision in SQL (`Catalog.served_groups`)."""
        excluded = sorted(exclude)
        clause, more = _not_in(excluded)
        where, params = _served_parts(statuses, review, sensitivities)[1]
        return self.catalog.served_groups(
            TallyFilter(statuses, review, sensitivities), excluded, where + clause, params + more)

    def observed_ranges(
        self,
        *,
        statuses: Sequence[str] | None = None,
        sensitivities: Sequence[str | None] | None = None,
        exclude: Iterable[str] = (),
    ) -> list[tuple[Any, str | None, str | None]]:
        """Per namespace, the earliest and latest observed time of the affirmed entries
        `entry_groups` counts (`Catalog.served_ranges`)."""
        clause, more = _not_in(exclude)
        where, params = _served_parts(statuses, ("affirmed",), sensitivities)[1]
        return self.catalog.served_ranges(TallyFilter(statuses, ("affirmed",), sensitivities),
                                          (clause, more), where + clause, params + more)

    def namespace_counts(
        self,
        *,
        sensitivities: Sequence[str | None] | None = None,
        exclude: Iterable[str] = (),
    ) -> list[tuple[Any, ...]]:
        """Per namespace of the affirmed readable pages (`Catalog.served_namespaces`): active
        pages and newest activity, and the same for one reader, who sees only
        `sensitivities` and not the pages in `exclude`."""
        excluded = sorted(exclude)
        where, params = _entry_filter(None, None, None, ("affirmed",), None,
                                      served=_SERVED_PARTS[1])
        readable, readable_params = _entry_filter(None, None, None, None, sensitivities)
        clause, more = _not_in(excluded)
        return self.catalog.served_namespaces(
            sensitivities, excluded, (clause, more),
            (where, params, f"({readable}{clause})", readable_params + more))

    def read_body(self, entry: Entry) -> str:
        """The current body of a page listed in the catalog (its head file, else its revision)."""
        if entry.problem is None and not entry.edited:
            try:
                text = (self.root / entry.path).read_text("utf-8")
                end = text.find("\n---\n", 3)
                if text.startswith("---\n") and end != -1:
                    return text[end + 5:]
            except (OSError, UnicodeDecodeError):
                pass
        assert entry.page_id
        return self.current(entry.page_id).state.content

    # -- the catalog kept current, hand edits recorded: store/refresh.py ---------------------
    # This module is the write path and the reads. The refresh and the lifecycle are functions
    # taking the store, in modules of their own, bound here as its methods under their public
    # names (one signature, one docstring, in the module a reader opens for that part).
    def refresh(self, mode: str = "auto") -> Changes:
        """Bring the catalog up to date and, when writable, record hand edits it found."""
        return refreshing.refresh(self, mode)

    _scan = refreshing.scan  # the catalog's scanner of one head file
    check_head_file = refreshing.record_pending_edit
    _record_pending_edit = refreshing.record_pending_edit

    # -- writing ------------------------------------------------------------------------------
    def new_state(self, content: str, **fields: Any) -> PageState:
        """A PageState with the store's defaults filled in; raises InvalidInput on bad fields."""
        fields.setdefault("page_id", "")
        fields.setdefault("namespace", self.default_namespace)
        fields.setdefault("owner_id", self.owner_id)
        fields.setdefault("type", "note")
        check_namespace(fields["namespace"])
        state = PageState(content=content, **fields)
        self.check_state(state)
        return state

    def check_state(self, state: PageState) -> None:
        data = state.to_dict()
        data["media_type"] = data.pop("payload")["media_type"]
        if not data["page_id"]:
            data.pop("page_id")
        try:
            check_fields(data)
        except FieldError as exc:
            raise InvalidInput(str(exc)) from None

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
            self._flush_for(page_id)
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
        self._check_case_unique(page_id)
        revision = self._new_revision(
            state, actor=actor, operation=operation, idempotency_key=idempotency_key,
            note=source_note, input_revision_ids=input_revision_ids,
            input_event_ids=input_event_ids,
        )
        self._publish(revision, batched=True)
        return WriteResult(page_id, revision.revision_id, "created")

    def upsert_page(
        self,
        state: PageState,
        *,
        key: str,
        actor: Actor,
        operation: str = "import",
        source_note: str | None = None,
    ) -> WriteResult:
        """Importers: create the page for `key`, revise it if its content changed, else nothing.

        "Changed" is judged against the last revision written for `key`, so a page the person
        edited after an import keeps the edit while the source stays the same. A page whose
        revision was published but whose head file never was (a killed import) gets its head
        file now.
        """
        with self.locked():
            page_id = state.page_id or page_id_for_key(key)
            self._flush_for(page_id)
            state = state.evolve(page_id=page_id)
            if not self.revision_ids(page_id):  # no page, or one whose first write was killed
                return self._write_page(state, actor=actor, operation=operation,
                                        idempotency_key=key, source_note=source_note,
                                        absent=True)
            self._record_pending_edit(page_id)  # a hand edit first, as revise() does
            status, head = self._upsert_plan(page_id, state, key)
            if status == "created":
                return self._write_page(state, actor=actor, operation=operation,
                                        idempotency_key=key, source_note=source_note)
            assert head is not None
            if status == "unchanged":
                if self._head_missing(head):
                    self._publish(head, new_revision=False, batched=True)
                    status = "revised" if head.parent_revision_id else "created"
                return WriteResult(page_id, head.revision_id, status)
            revision = self._new_revision(state, actor=actor, operation=operation, parent=head,
                                          idempotency_key=key, note=source_note)
            self._publish(revision, batched=True)
            return WriteResult(page_id, revision.revision_id, "revised")

    def plan_upsert(self, state: PageState, *, key: str) -> str:
        """What `upsert_page` would answer (created, revised, unchanged), writing nothing."""
        page_id = state.page_id or page_id_for_key(key)
        status, head = self._upsert_plan(page_id, state.evolve(page_id=page_id), key)
        if status == "unchanged" and head is not None and self._head_missing(head):
            return "revised" if head.parent_revision_id else "created"
        return status

    def _upsert_plan(self, page_id: str, state: PageState, key: str
                     ) -> tuple[str, Revision | None]:
        if not self.revision_ids(page_id):  # no page, or one whose first write was killed
            return "created", None
        head = self.current(page_id)
        if head.content_hash == state.content_hash:
            return "unchanged", head
        if head.idempotency_key != key:  # edited since: compare with the last keyed write
            keyed = [rev for rev in self.revisions(page_id) if rev.idempotency_key == key]
            if keyed and keyed[-1].content_hash == state.content_hash:
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
            self._flush_for(None)  # an open batch first: this write must see its pages
            self._record_pending_edit(page_id)
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
            revision = self._new_revision(
                state, actor=actor, operation=operation, parent=head, note=note,
                input_revision_ids=input_revision_ids, merged=tuple(merged_revision_ids),
            )
            self._publish(revision)
            return WriteResult(page_id, revision.revision_id, "revised")

    # -- relations and lifecycle: store/lifecycle.py (bound as above) -------------------------
    set_lifecycle = lifecycle.set_lifecycle
    link = lifecycle.link
    find_relation = lifecycle.find_relation
    relations = lifecycle.relations
    supersede = lifecycle.supersede
    finish_supersede = lifecycle.finish_supersede
    delete = lifecycle.delete
    finish_delete = lifecycle.finish_delete

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
            self._flush_for(None)  # an event may record what an open batch wrote
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

    # -- internals ----------------------------------------------------------------------------
    def _check_case_unique(self, page_id: str) -> None:
        """Refuse an id that differs from an existing page id only in case. Caller holds the lock.

        The revisions folder is listed once per lock hold, then the new id is remembered.
        """
        if self._case_index is None:
            self._case_index = kept_listing.reuse(self.layout.revisions, self._case_kept)
        if self._case_index is None:
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
            self._case_index = index
        key = page_id.lower()
        spellings = self._case_index.get(key, ())
        for name in spellings:
            if name != page_id:
                raise InvalidInput(
                    f"page id {page_id!r} differs from existing page {name!r} only in case",
                    hint="ids must stay distinct on case-insensitive file systems",
                )
        if not spellings:
            self._case_index[key] = (page_id,)

    def _new_revision(
        self,
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

    def _publish(self, revision: Revision, *, old_path: Path | None = None,
                 new_revision: bool = True, batched: bool = False) -> None:
        """Revision file first, then the head file, then the catalog. Caller holds the lock.

        `batched`, inside `batch()`: staged, published with the rest of the batch (`flush`).
        Any other write publishes the open batch first, so writes reach the disk in order.
        """
        if batched and self._pending is not None and old_path is None:
            head = render_head(revision).encode("utf-8")
            body = file_json(revision.to_dict()).encode("utf-8") if new_revision else None
            self._pending.pages[revision.page_id] = _Staged(revision, new_revision, head, body)
            self._pending.bytes += len(head) + len(body or b"")
            if self._pending.full():
                self.flush(background=True)
            return
        self._flush_for(None)
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
                if not self.revision_ids(revision.page_id):
                    with suppress(OSError):
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
        self.catalog.record_write(*self._head_written(revision, rendered, old_path=old_path))

    def _head_written(self, revision: Revision, rendered: bytes, *,
                      old_path: Path | None = None) -> tuple[str, dict[str, Any], list[str]]:
        """After a head file was written: remove the page's other head files (a namespace
        move), and return what the catalog records (path, fields, removed paths)."""
        head_path = self.layout.head_path(revision.state.namespace, revision.page_id)
        removed: list[str] = []
        stale = {Path(self.root / e.path) for e in self.catalog.by_page_id(revision.page_id)}
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


def _entry_filter(types: Sequence[str] | None, namespaces: Sequence[str] | None,
                  statuses: Sequence[str] | None, review: Sequence[str] | None,
                  sensitivities: Sequence[str | None] | None,
                  served: str = f"{SERVED} AND page_id IS NOT NULL") -> tuple[str, list[Any]]:
    clauses = [served]
    params: list[Any] = []
    for column, values in (
        ("type", types),
        ("namespace", namespaces),
        ("lifecycle_status", statuses),
        ("review_status", review),
    ):
        if values:
            clauses.append(f"{column} IN ({','.join('?' for _ in values)})")
            params.extend(values)
    if sensitivities is not None:
        named = [s for s in sensitivities if s is not None]
        allowed = [f"sensitivity IN ({','.join('?' for _ in named)})"] if named else []
        if None in sensitivities:
            allowed.append("sensitivity IS NULL")
        clauses.append(f"({' OR '.join(allowed)})" if allowed else "0")
        params.extend(named)
    return " AND ".join(clauses), params


# `SERVED` rows in two parts that SQLite reads from partial indexes: the readable rows (the
# covering indexes of `Catalog.groups` and `observed_ranges`; SERVED's OR kept it scanning the
# table, 0.20 s at 100k pages), and the few unreadable ones served from a revision (through
# `pages_unsettled`; the `+` keeps SQLite off the page_id index).
_SERVED_PARTS = ("problem IS NULL AND page_id IS NOT NULL",
                 "problem IS NOT NULL AND revision_id IS NOT NULL AND +page_id IS NOT NULL")


def _served_parts(statuses: Sequence[str] | None, review: Sequence[str] | None,
                  sensitivities: Sequence[str | None] | None) -> list[tuple[str, list[Any]]]:
    return [_entry_filter(None, None, statuses, review, sensitivities, served=part)
            for part in _SERVED_PARTS]


# Up to this many page ids are excluded with one placeholder each (SQLite builds one small
# index of them); more go through one JSON parameter (json_each: slower per row).
_NOT_IN_PLACEHOLDERS = 10_000


def _not_in(exclude: Iterable[str]) -> tuple[str, list[Any]]:
    """An ` AND page_id NOT IN (...)` clause for `exclude` ("" for none), and its parameters."""
    excluded = sorted(exclude)
    if not excluded:
        return "", []
    if len(excluded) <= _NOT_IN_PLACEHOLDERS:
        return f" AND page_id NOT IN ({','.join('?' * len(excluded))})", list(excluded)
    return " AND page_id NOT IN (SELECT value FROM json_each(?))", [json.dumps(excluded)]
