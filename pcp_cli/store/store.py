"""The Store facade: every read and write of a context store folder goes through here.

Writes take the store-wide lock, publish the immutable revision file first and the head file
second (both atomically), then note the change in the catalog. Importers write in batches
(`Store.batch()`): the same order, per batch instead of per page — every revision file of the
batch published and durable, then every head file, then the catalog — so a batch costs a few
rounds of fsyncs instead of five per page. Readers never lock. A head file a
person edited, or a Markdown file they dropped under `pages/`, is recorded as a new revision by
the next writable Store that looks at it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
from pcp_cli.model import vocab
from pcp_cli.model.check import FieldError, check_fields
from pcp_cli.model.ids import check_id, is_safe_id, new_id
from pcp_cli.model.page import (
    OBSERVED_AT,
    Actor,
    Event,
    PageState,
    ProvenanceStep,
    Relation,
    Revision,
    file_json,
    now_iso,
)
from pcp_cli.store.atomic import FileBatch, is_temp_name, remove_file, write_atomic, write_new
from pcp_cli.store.catalog import Catalog, Changes, Entry, digest_of
from pcp_cli.store.headfile import ParsedHead, parse_head, render_head, title_from_body
from pcp_cli.store.layout import Layout, check_namespace, enclosing_store, nested_store
from pcp_cli.store.local import heal as heal_local
from pcp_cli.store.lock import writer_lock
from pcp_cli.store.manifest import Manifest, read_manifest, write_manifest

# Catalog rows listed and searched: readable head files, and unreadable ones served from the
# page's newest revision meanwhile (Store._served_from_revision gives those a revision_id).
SERVED = "(problem IS NULL OR revision_id IS NOT NULL)"
# The catalog's file under `.pcp/`.
CATALOG_FILE = "catalog.sqlite"
# Relation types that say the same read either way round.
SYMMETRIC_RELATIONS = ("related_to",)

REVISION_FIELDS = frozenset(
    (
        "revision_id",
        "parent_revision_id",
        "merged_revision_ids",
        "created_at",
        "created_by",
        "page_created_at",
        "provenance",
        "idempotency_key",
        "content_hash",
        "payload",
    )
)


@dataclass(frozen=True)
class WriteResult:
    page_id: str
    revision_id: str
    status: str  # created | revised | unchanged

    def to_dict(self) -> dict[str, str]:
        return {"page_id": self.page_id, "revision_id": self.revision_id, "status": self.status}


@dataclass(frozen=True)
class HandEdit:
    """A head file that was recorded as a new revision (or adopted as a new page)."""

    path: str
    page_id: str
    revision_id: str
    adopted: bool


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


def page_id_for_key(key: str) -> str:
    """The page id a keyed write gets when no id is given: the same key, the same page."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    # The first 26 base32 characters come from the first 17 bytes (base64's encoder is pure
    # Python, so it is given only the 20 bytes of its first four 5-byte groups).
    return "pg_" + base64.b32encode(digest[:20]).decode("ascii")[:26]


class Store:
    def __init__(self, root: Path, *, readonly: bool = False) -> None:
        self.layout = Layout(root)
        self.root = root
        self.readonly = readonly
        heal_local(self.layout.local)
        self.manifest: Manifest = read_manifest(self.layout.manifest)
        self._catalog: Catalog | None = None
        self._lock_depth = 0
        # Lowercased page id -> the page ids spelled that way; kept only while this Store holds
        # the writer lock (no other writer can add a page then), so that a batch of creations
        # lists the revisions folder once instead of once per page.
        self._case_index: dict[str, set[str]] | None = None
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
            try:
                yield
                self.flush()
            except BaseException:
                self._pending = None  # what is staged is dropped; what is publishing finishes
                self._settle()
                raise
            finally:
                self._pending = None

    def flush(self, *, background: bool = False) -> None:
        """Publish the open batch: every new revision file (written, fsynced together, renamed,
        each folder fsynced once), then every head file the same way, then the catalog in one
        transaction. A refused write raises StorageFailed with none of the batch's pages
        changed. `background`: the files are published by a thread (see `batch`); the batch
        before it is always finished first, so batches reach the disk in order. Caller holds
        the lock."""
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
        revisions = FileBatch()
        for page in staged:
            if page.revision_file is not None:
                revisions.add(self.layout.revision_path(page.revision.page_id,
                                                        page.revision.revision_id),
                              page.revision_file, new=True)
        revisions.publish()
        heads = FileBatch()
        for page in staged:
            revision = page.revision
            heads.add(self.layout.head_path(revision.state.namespace, revision.page_id),
                      page.head)
        try:
            heads.publish()
        except StorageFailed as exc:
            try:
                self._take_back([p.revision for p in staged if p.revision_file is not None])
                state = "no page of the batch changed"
            except (OSError, StorageFailed):
                state = ("the batch's revisions were published but not their head files: "
                         "`pcp doctor --fix` finishes the write")
            raise StorageFailed(f"{exc.message.split('; ')[0]}; {state}", hint=exc.hint) from exc

    def _record_batch(self, staged: list[_Staged]) -> None:
        writes = [self._head_written(page.revision, page.head) for page in staged]
        self.catalog.record_writes(writes)

    def _take_back(self, revisions: Sequence[Revision]) -> None:
        """Remove revision files published by a batch whose head files were refused."""
        for revision in revisions:
            path = self.layout.revision_path(revision.page_id, revision.revision_id)
            remove_file(path)
            if not self.revision_ids(revision.page_id):
                with suppress(OSError):
                    path.parent.rmdir()

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
        """The entries `entries` would give (less the pages in `exclude`), counted in SQL by
        (namespace, type, origin, lifecycle_status): see `Catalog.groups`."""
        where, params = _entry_filter(None, None, statuses, review, sensitivities)
        clause, more = _not_in(exclude)
        return self.catalog.groups(where + clause, params + more)

    def observed_ranges(
        self,
        *,
        statuses: Sequence[str] | None = None,
        sensitivities: Sequence[str | None] | None = None,
        exclude: Iterable[str] = (),
    ) -> list[tuple[Any, str | None, str | None]]:
        """Per namespace, the earliest and latest observed time of the affirmed entries
        `entry_groups` counts (`Catalog.observed_ranges`)."""
        where, params = _entry_filter(None, None, statuses, ("affirmed",), sensitivities)
        clause, more = _not_in(exclude)
        return self.catalog.observed_ranges(where + clause, params + more)

    def namespace_counts(
        self,
        *,
        sensitivities: Sequence[str | None] | None = None,
        exclude: Iterable[str] = (),
    ) -> list[tuple[Any, ...]]:
        """Per namespace of the affirmed readable pages, in one SQL pass (`Catalog.
        namespace_counts`): active pages and newest activity, and the same for one reader,
        who sees only `sensitivities` and not the pages in `exclude`."""
        where, params = _entry_filter(None, None, None, ("affirmed",), None)
        readable, readable_params = _entry_filter(None, None, None, None, sensitivities)
        clause, more = _not_in(exclude)
        return self.catalog.namespace_counts(where, params, f"({readable}{clause})",
                                             readable_params + more)

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

    # -- scanning head files --------------------------------------------------------------------
    def _scan(self, rel: str, raw: bytes) -> dict[str, Any]:
        """Catalog fields for one head file (called by the catalog for new or changed files)."""
        name = rel.rsplit("/", 1)[-1][:-3]
        file_page_id = name if is_safe_id(name) else None
        folder_ns = ":".join(rel.split("/")[1:-1]) or self.default_namespace
        try:
            parsed = self._parse_head(raw, rel, file_page_id, folder_ns)
        except InvalidInput as exc:
            return self._served_from_revision(file_page_id, raw, exc.message)
        if parsed.state is None:
            return {"page_id": None, "problem": "new file: not yet adopted as a page",
                    "title": str(parsed.frontmatter.get("title") or name)}
        state = parsed.state
        stored_hash = parsed.frontmatter.get("content_hash")
        state_hash = parsed.state_hash or state.content_hash
        fields = _entry_fields(state)
        fields.update(
            revision_id=parsed.revision_id,
            content_hash=state_hash,
            created_at=parsed.frontmatter.get("created_at"),
            updated_at=parsed.frontmatter.get("updated_at"),
            edited=stored_hash != state_hash,
        )
        if state.namespace != folder_ns:
            fields["edited"] = True
        return fields

    def _served_from_revision(self, page_id: str | None, raw: bytes,
                              problem: str) -> dict[str, Any]:
        """Catalog fields for a head file that cannot be read: the page's newest revision
        (listed, searched and shown from it, the problem kept for doctor and the warnings),
        unless the file holds git conflict markers (never served) or the page has none."""
        fields: dict[str, Any] = {"page_id": page_id, "problem": problem}
        if page_id is None or b"<<<<<<<" in raw or not self.revision_ids(page_id):
            return fields
        try:
            head = self.graph_heads(page_id)[-1]
        except PcpError:
            return fields
        if _claims_more_sensitivity(raw, head.state.sensitivity):
            return fields  # the broken file may be marking the page more sensitive: hide it
        fields.update(_entry_fields(head.state), problem=problem,
                      revision_id=head.revision_id, content_hash=head.content_hash,
                      created_at=head.page_created_at, updated_at=head.created_at)
        return fields

    def _parse_head(self, raw: bytes, rel: str, file_page_id: str | None,
                    folder_ns: str) -> ParsedHead:
        """parse_head, knowing the store: a file named after an existing page but without
        frontmatter is that page's head file edited, never a new page. Emptied, it is refused
        (doctor --fix rewrites it from the revisions); with text left, the text is the edit."""
        parsed = parse_head(raw, path=rel, file_page_id=file_page_id,
                            folder_namespace=folder_ns, owner_id=self.owner_id,
                            load_revision=self.load_revision)
        if parsed.state is not None or file_page_id is None or parsed.frontmatter or \
                not self.page_exists(file_page_id):
            return parsed
        if not parsed.body.strip():
            raise InvalidInput(
                f"the head file of page {file_page_id} is empty",
                path=rel, line=1,
                hint="`pcp doctor --fix` rewrites it from its revisions (to remove the page, "
                "`pcp delete` it)",
            )
        head = self.current(file_page_id)
        state = head.state.evolve(content=parsed.body)
        return ParsedHead({}, parsed.body, head.revision_id, state)

    def refresh(self, mode: str = "auto") -> Changes:
        """Bring the catalog up to date and, when writable, record hand edits it found."""
        changes = self.catalog.refresh(mode)
        if self.readonly:
            return changes
        pending = self.catalog.pending()
        if not pending:
            return changes
        with self.locked():
            for entry in pending:
                self._record_hand_edit(entry.path)
        recorded = {edit.page_id for edit in self.hand_edits}
        extra = tuple(e for pid in sorted(recorded) for e in self.catalog.by_page_id(pid))
        return Changes(extra + changes.changed, changes.removed)

    def _record_hand_edit(self, rel: str, *, note: str | None = None) -> HandEdit | None:
        """Turn an edited or new head file into a revision (with `note`, else the hand-edit
        note). Caller holds the lock."""
        path = self.root / rel
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        name = path.name[:-3]
        folder_ns = self.layout.namespace_of(path) or self.default_namespace
        try:
            parsed = self._parse_head(raw, rel, name if is_safe_id(name) else None, folder_ns)
            return self._record_parsed(rel, path, parsed, folder_ns, note=note)
        except InvalidInput as exc:
            self.problems[rel] = exc.message
            return None

    def _record_parsed(self, rel: str, path: Path, parsed: Any, folder_ns: str, *,
                       note: str | None = None) -> HandEdit | None:
        if parsed.state is None:
            return self._adopt(rel, parsed.frontmatter, parsed.body, folder_ns)
        state = parsed.state
        page_id = state.page_id
        self.check_state(state)
        if not self.page_exists(page_id):
            state = _as_adopted(state, path)
            self.check_state(state)
            revision = self._new_revision(state, actor=ADOPTER, operation="write",
                                          note=f"adopted from {rel}")
            self._publish(revision, old_path=path)
            edit = HandEdit(rel, page_id, revision.revision_id, adopted=True)
        else:
            head = self.current(page_id)
            base_id = parsed.revision_id if parsed.revision_id in self.revision_ids(page_id) \
                else head.revision_id
            if state.content_hash == head.content_hash:
                # Nothing the head does not already say (only informational keys or the folder
                # changed, or this edit was recorded by a writer that died before rewriting
                # the file): rewrite the head file, record no revision.
                self._publish(head, old_path=path, new_revision=False)
                return None
            revision = self._new_revision(
                state, actor=self.user, operation="revise", parent=head,
                note=note or f"hand edit recorded from {rel}",
                input_revision_ids=(base_id,) if base_id != head.revision_id else (),
            )
            self._publish(revision, old_path=path)
            edit = HandEdit(rel, page_id, revision.revision_id, adopted=False)
        self.hand_edits.append(edit)
        return edit

    def _adopt(self, rel: str, data: dict[str, Any], body: str, folder_ns: str) -> HandEdit:
        # The page id and key come from the file's path and bytes, so an adoption cut short by
        # a crash (revision written, dropped file not yet removed) is finished when the file is
        # seen again, instead of adopting it a second time.
        raw = (self.root / rel).read_bytes()
        key = f"adopted:{rel}:{hashlib.sha256(raw).hexdigest()}"
        page_id = page_id_for_key(key)
        earlier = self.revisions(page_id) if self.page_exists(page_id) else []
        if earlier and earlier[0].idempotency_key == key:
            head = self.current(page_id)
            self._publish(head, old_path=self.root / rel, new_revision=False)
            edit = HandEdit(rel, page_id, head.revision_id, adopted=True)
            self.hand_edits.append(edit)
            return edit
        fallback = Path(rel).stem
        state_data = {k: v for k, v in data.items() if k not in REVISION_FIELDS}
        state_data.update(
            page_id=page_id,
            namespace=data.get("namespace", folder_ns),
            owner_id=data.get("owner_id", self.owner_id),
            type=data.get("type", "note"),
            title=data.get("title") or title_from_body(body, fallback),
            payload={"media_type": "text/markdown", "content": body},
        )
        state = _as_adopted(PageState.from_dict(state_data), self.root / rel)
        self.check_state(state)
        revision = self._new_revision(state, actor=ADOPTER, operation="write",
                                      note=f"adopted from {rel}", idempotency_key=key)
        self._publish(revision, old_path=self.root / rel)
        edit = HandEdit(rel, page_id, revision.revision_id, adopted=True)
        self.hand_edits.append(edit)
        return edit

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

    def set_lifecycle(self, page_id: str, status: str, *, actor: Actor | None = None,
                      note: str | None = None) -> WriteResult:
        if status not in vocab.LIFECYCLE_STATUSES:
            raise UsageError(f"unknown lifecycle status {status!r}")
        return self.revise(page_id, changes={"lifecycle_status": status}, actor=actor,
                           note=note)

    def link(
        self,
        from_page_id: str,
        relation_type: str,
        to_page_id: str,
        *,
        actor: Actor | None = None,
        note: str | None = None,
        from_revision_id: str | None = None,
        to_revision_id: str | None = None,
    ) -> Relation:
        """LinkPages: a typed edge between two revisions (page ids resolve to their heads)."""
        if not vocab.is_relation_type(relation_type):
            raise UsageError(
                f"unknown relation type {relation_type!r}",
                hint=f"one of: {', '.join(vocab.RELATION_TYPES)}, or a namespaced type such "
                "as com.example.reviews",
            )
        with self.locked():
            self._flush_for(None)  # an open batch first: the relation may name its pages
            source = self.get(from_page_id, from_revision_id)
            target = self.get(to_page_id, to_revision_id)
            existing = self.find_relation(relation_type, source.revision_id,
                                          target.revision_id)
            if existing is not None:
                return existing  # a relation is idempotent: the same edge is stored once
            relation = Relation(
                relation_id=new_id("relation"),
                relation_type=relation_type,
                from_page_id=source.page_id,
                from_revision_id=source.revision_id,
                to_page_id=target.page_id,
                to_revision_id=target.revision_id,
                created_at=now_iso(),
                created_by=actor or self.user,
                note=note,
            )
            write_new(self.layout.relation_path(relation.relation_id),
                      file_json(relation.to_dict()))
            # We hold the writer lock, so this is the folder's only change: keep the index.
            index = self._relations_seen[1] if self._relations_seen else None
            if index is not None:
                index[(relation_type, source.revision_id, target.revision_id)] = relation
                self._relations_seen = (os.stat(self.layout.relations).st_mtime_ns, index)
            return relation

    def find_relation(self, relation_type: str, from_revision_id: str,
                      to_revision_id: str) -> Relation | None:
        """The stored relation of this type between these two revisions, if there is one
        (either direction for the symmetric `related_to`)."""
        ends = [(from_revision_id, to_revision_id)]
        if relation_type in SYMMETRIC_RELATIONS:
            ends.append((to_revision_id, from_revision_id))
        index = self._relation_index()
        for pair in ends:
            relation = index.get((relation_type, *pair))
            if relation is not None:
                return relation
        return None

    def _relation_index(self) -> dict[tuple[str, str, str], Relation]:
        """(type, from revision, to revision) -> relation, re-read when the folder changes."""
        try:
            stamp = os.stat(self.layout.relations).st_mtime_ns
        except FileNotFoundError:
            return {}
        if self._relations_seen is None or self._relations_seen[0] != stamp:
            index = {(r.relation_type, r.from_revision_id, r.to_revision_id): r
                     for r in self.relations()}
            self._relations_seen = (stamp, index)
        return self._relations_seen[1]

    def supersede(self, new_page_id: str, old_page_id: str, *,
                  actor: Actor | None = None) -> None:
        """NEW (just written) supersedes OLD. A write the disk refuses keeps NEW and says so:
        `pcp doctor --fix` finishes the supersession."""
        try:
            self.finish_supersede(new_page_id, old_page_id, actor=actor)
        except StorageFailed as exc:
            raise StorageFailed(
                f"{exc.message.split('; ')[0]}; keystone {new_page_id} is written but does not "
                f"supersede {old_page_id} yet",
                hint="check the disk, then `pcp doctor --fix` finishes the supersession",
            ) from exc

    def finish_supersede(self, new_page_id: str, old_page_id: str, *,
                         actor: Actor | None = None, note: str | None = None) -> Relation:
        """The second half of "NEW supersedes OLD": OLD's superseded revision, then the relation.

        Steps already done are skipped, so `pcp doctor --fix` can finish a supersession that a
        crash cut short (the relation is written last and marks it as complete).
        """
        with self.locked():
            new = self.current(new_page_id)
            old = self.current(old_page_id)
            superseded = old.revision_id
            if old.state.lifecycle_status == "active":
                self.revise(
                    old_page_id,
                    changes={"lifecycle_status": "superseded",
                             "record": {"superseded_by": new_page_id}},
                    actor=actor,
                    note=f"superseded by {new_page_id}",
                    input_revision_ids=(new.revision_id,),
                )
            elif old.parent_revision_id and old.state.record.get("superseded_by") == new_page_id:
                superseded = old.parent_revision_id
            return self.link(new_page_id, "supersedes", old_page_id, actor=actor,
                             to_revision_id=superseded, note=note)

    def relations(self, page_id: str | None = None) -> list[Relation]:
        """Relations touching `page_id` (either end), or all of them; oldest first."""
        found: list[Relation] = []
        try:
            names = sorted(os.listdir(self.layout.relations))
        except FileNotFoundError:
            return []
        for name in names:
            if not name.endswith(".json") or is_temp_name(name):
                continue
            path = self.layout.relations / name
            try:
                relation = Relation.from_dict(json.loads(path.read_bytes()))
            except (ValueError, KeyError, TypeError, OSError):
                self.problems[self.layout.rel(path)] = "unreadable relation file"
                continue
            if page_id is None or page_id in (relation.from_page_id, relation.to_page_id):
                found.append(relation)
        return sorted(found, key=lambda r: (r.created_at, r.relation_id))

    def delete(self, page_id: str, *, actor: Actor | None = None) -> dict[str, Any]:
        """DeletePage: remove the head file, every revision and every relation touching it.

        The `page_deleted` event is written first and names every file to remove, so a delete
        interrupted part way is finished by `pcp doctor --fix` instead of leaving half a page.
        """
        with self.locked():
            self._flush_for(None)
            self._case_index = None
            head = self.current(page_id)
            relations = self.relations(page_id)
            revision_ids = self.revision_ids(page_id)
            event = self.record_event(
                "page_deleted",
                {"page_id": page_id, "namespace": head.state.namespace,
                 "revisions_removed": len(revision_ids), "relations_removed": len(relations),
                 "revision_ids": revision_ids,
                 "relation_ids": [relation.relation_id for relation in relations]},
                actor=actor,
            )
            try:
                self.finish_delete(page_id, revision_ids,
                                   [relation.relation_id for relation in relations])
            except StorageFailed as exc:
                raise StorageFailed(
                    f"{exc.message.split('; ')[0]}; the delete of {page_id} is recorded "
                    "(its page_deleted event) but not finished",
                    hint="check the disk, then `pcp doctor --fix` finishes the delete",
                ) from exc
            return {
                "page_id": page_id,
                "revisions_removed": len(revision_ids),
                "relations_removed": len(relations),
                "event_id": event.event_id,
            }

    def finish_delete(self, page_id: str, revision_ids: Sequence[str],
                      relation_ids: Sequence[str]) -> None:
        """Remove what a delete names (what is already gone is skipped). Takes the lock."""
        with self.locked():
            for relation_id in relation_ids:
                remove_file(self.layout.relation_path(relation_id))
            entries = self.catalog.by_page_id(page_id)
            for entry in entries:
                remove_file(self.root / entry.path)
            for revision_id in revision_ids:
                remove_file(self.layout.revision_path(page_id, revision_id))
            folder = self.layout.revision_dir(page_id)
            for leftover in folder.iterdir() if folder.exists() else ():
                if is_temp_name(leftover.name):
                    leftover.unlink()
            if folder.exists() and not any(folder.iterdir()):
                folder.rmdir()
            self.catalog.record_removal(entry.path for entry in entries)

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

    def check_head_file(self, page_id: str) -> None:
        """Before an operation that will revise `page_id`: record a pending hand edit of its head
        file, or raise InvalidInput if the file cannot be read. Caller holds the lock."""
        self._record_pending_edit(page_id)

    # -- internals ----------------------------------------------------------------------------
    def _record_pending_edit(self, page_id: str) -> None:
        """Before revising a page, record a hand edit of its head file, if there is one.

        A head file that cannot be read stops the write: revising would overwrite it and lose
        what the person wrote there.
        """
        for entry in self.catalog.by_page_id(page_id):
            if not (self.root / entry.path).exists():
                continue
            if entry.edited or self.catalog.stat_changed(entry.path):
                self.catalog.refresh("full")
                self._record_hand_edit(entry.path)
        for entry in self.catalog.by_page_id(page_id):
            if entry.problem is not None and (self.root / entry.path).exists():
                conflicted = "conflict markers" in entry.problem
                raise InvalidInput(
                    entry.problem,
                    hint="`pcp doctor --fix` rebuilds it from its revisions (or resolve the "
                    "conflict by hand)" if conflicted else "fix the file by hand (`pcp "
                    "validate` lists what is wrong), or `pcp doctor` to see the store's "
                    "problems",
                )

    def _check_case_unique(self, page_id: str) -> None:
        """Refuse an id that differs from an existing page id only in case. Caller holds the lock.

        The revisions folder is listed once per lock hold, then the new id is remembered.
        """
        if self._case_index is None:
            try:
                names = os.listdir(self.layout.revisions)
            except FileNotFoundError:
                names = []
            index: dict[str, set[str]] = {}
            for name in names:
                index.setdefault(name.lower(), set()).add(name)
            self._case_index = index
        spellings = self._case_index.setdefault(page_id.lower(), set())
        for name in spellings:
            if name != page_id:
                raise InvalidInput(
                    f"page id {page_id!r} differs from existing page {name!r} only in case",
                    hint="ids must stay distinct on case-insensitive file systems",
                )
        spellings.add(page_id)

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


# Who records a file found under `pages/` that no pcp command wrote: pcp itself, on nobody's
# word. (A hand edit of an existing page is the owner's, and recorded as the user.)
ADOPTER = Actor("system", "pcp-adopt")
# Authority a dropped file may not give itself: only the person's own pcp commands (and their
# hand edits of pages they already own) are `user_stated` or `approved`.
_OWN_WORD = ("user_stated", "approved")


def _as_adopted(state: PageState, path: Path) -> PageState:
    """A page adopted from a dropped file, claiming no more than is known about it.

    Origin: what its frontmatter says, but never `user_stated`/`approved`, and `generated`
    (the spec's "cannot be classified: under-claim") when it says nothing. Integrity and
    epistemic status `unknown` unless stated. Sensitivity as stated, else unclassified (None).
    Observed time: the file's own date (`record.observed_at`, else its modification time).
    """
    origin = state.origin if state.origin not in _OWN_WORD else "generated"
    record = dict(state.record)
    if state.source_observed_at is None:
        try:
            mtime = path.stat().st_mtime
        except OSError:
            mtime = None
        if mtime is not None:
            from datetime import UTC, datetime

            stamp = datetime.fromtimestamp(mtime, UTC)
            record[OBSERVED_AT] = stamp.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    return state.evolve(origin=origin, record=record)


def _claims_more_sensitivity(raw: bytes, sensitivity: str | None) -> bool:
    """Whether an unreadable head file names a sensitivity above `sensitivity` (or one that is
    not a known level), anywhere on a `sensitivity:` line."""
    levels = vocab.SENSITIVITIES
    rank = levels.index(sensitivity) if sensitivity in levels else -1
    for match in re.finditer(rb"^\s*sensitivity\s*:\s*['\"]?([^\s'\"#]*)", raw, re.MULTILINE):
        said = match.group(1).decode("utf-8", "replace").lower()
        if said not in levels or levels.index(said) > rank:
            return True
    return False


def _entry_fields(state: PageState) -> dict[str, Any]:
    return {
        "page_id": state.page_id,
        "type": state.type,
        "namespace": state.namespace,
        "title": state.title,
        "lifecycle_status": state.lifecycle_status,
        "review_status": state.review_status,
        "origin": state.origin,
        "sensitivity": state.sensitivity,
        "tags": state.tags,
        "record": state.record,
        "problem": None,
    }


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
                  sensitivities: Sequence[str | None] | None) -> tuple[str, list[Any]]:
    clauses = [SERVED, "page_id IS NOT NULL"]
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
