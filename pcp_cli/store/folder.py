"""An open store folder: what it is (layout, manifest), its catalog, its writer lock, its write
engine, and every read of it.

`StoreFolder` is the part of the Store that the hand-edit recorder (refresh.py) and the write
engine's users need below the Store's write API (store.py: `Store(StoreFolder)`): the reads of
revisions, head files, relations and the catalog, and the lock. The catalog (store/catalog.py)
finds the head files that are new, changed or gone; `scan` gives it the fields of one (a head
file that cannot be read is served from its page's newest revision meanwhile). Readers never
lock.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Self

from pcp_cli.config import resolve_store_root
from pcp_cli.errors import InvalidInput, NotFound, PcpError, StoreDamaged, UsageError
from pcp_cli.model import vocab
from pcp_cli.model.check import FieldError, check_fields
from pcp_cli.model.ids import check_id, is_safe_id
from pcp_cli.model.page import Actor, PageState, Relation, Revision
from pcp_cli.store.atomic import is_temp_name, write_atomic
from pcp_cli.store.catalog import Catalog, Entry, TallyFilter, entry_fields
from pcp_cli.store.headfile import ParsedHead, parse_head
from pcp_cli.store.layout import Layout, check_namespace, enclosing_store, nested_store
from pcp_cli.store.local import heal as heal_local
from pcp_cli.store.lock import Waiting, writer_lock
from pcp_cli.store.manifest import Manifest, read_manifest, write_manifest
from pcp_cli.store.writes import Writer

# Catalog rows listed and searched: readable head files, and unreadable ones served from the
# page's newest revision meanwhile (store/refresh.py gives those a revision_id).
SERVED = "(problem IS NULL OR revision_id IS NOT NULL)"
# The catalog's file under `.pcp/`.
CATALOG_FILE = "catalog.sqlite"
# Relation types that say the same read either way round.
SYMMETRIC_RELATIONS = ("related_to",)


@dataclass(frozen=True)
class HandEdit:
    """A head file that was recorded as a new revision (or adopted as a new page)."""

    path: str
    page_id: str
    revision_id: str
    adopted: bool


class StoreFolder:
    def __init__(self, root: Path, *, readonly: bool = False) -> None:
        self.layout = Layout(root)
        self.root = root
        self.readonly = readonly
        heal_local(self.layout.local)
        self.manifest: Manifest = read_manifest(self.layout.manifest)
        self._catalog: Catalog | None = None
        self._lock_depth = 0
        # Told when a write starts and stops waiting for another process's lock (store/lock.py).
        self.lock_waiting: Waiting | None = None
        self.writes = Writer(self.layout, lambda: self.catalog)
        self.hand_edits: list[HandEdit] = []
        self._relations_seen: tuple[int, dict[tuple[str, str, str], Relation]] | None = None
        self.problems: dict[str, str] = {}

    # -- opening ------------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None, *, readonly: bool = False) -> Self:
        return cls(resolve_store_root(path), readonly=readonly)

    @classmethod
    def init(cls, root: Path, *, owner_id: str, namespace: str | None = None) -> Self:
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
        if self.writes.publishing is not None:  # its files first: the catalog describes them
            self.writes.settle()
        if self._catalog is None:
            self._catalog = Catalog(
                self.layout.local / CATALOG_FILE, self.root, self.layout.pages, partial(scan, self)
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

    def __enter__(self) -> Self:
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
        with writer_lock(self.layout.local / "lock", waiting=self.lock_waiting):
            self.refuse_replaced_folders()
            self._lock_depth = 1
            try:
                yield
            finally:
                self._lock_depth = 0
                self.writes.forget_listing()

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

    # -- revisions ----------------------------------------------------------------------------
    def page_exists(self, page_id: str) -> bool:
        return is_safe_id(page_id) and self.layout.revision_dir(page_id).is_dir()

    def revision_ids(self, page_id: str) -> list[str]:
        if self.writes.listed_absent(page_id):
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
        record_keys: Sequence[str] | None = None,
    ) -> list[Entry]:
        """Catalog entries of readable pages matching the filters (no file is opened).
        `sensitivities`: the sensitivity values let through (None in it: unclassified pages).
        `record_keys`: only pages whose record has one of these keys holding a string."""
        where, params = _entry_filter(types, namespaces, statuses, review, sensitivities)
        if record_keys is not None:
            if not all(key.isidentifier() for key in record_keys):
                raise ValueError(f"not record keys: {record_keys!r}")
            where += " AND (" + (" OR ".join(f"json_type(record, '$.{key}') = 'text'"
                                             for key in record_keys) or "0") + ")"
        return self.catalog.entries(where, params)

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
        sensitivities: Sequence[str | None] | None = None,
    ) -> list[Entry]:
        """The entries `entries` would give, newest first (`pcp ls`'s order), `limit` of them
        from `offset` on, read in SQL with LIMIT (the rest are never loaded)."""
        where, params = _entry_filter(types, namespaces, statuses, review, sensitivities)
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

    # -- relations ----------------------------------------------------------------------------
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

    def remember_relation(self, relation: Relation) -> None:
        """Note a relation just written under the writer lock (lifecycle.link): the relations
        folder's only change, so the index `find_relation` reads stays valid."""
        index = self._relations_seen[1] if self._relations_seen else None
        if index is not None:
            index[(relation.relation_type, relation.from_revision_id,
                   relation.to_revision_id)] = relation
            self._relations_seen = (os.stat(self.layout.relations).st_mtime_ns, index)

    # -- page states --------------------------------------------------------------------------
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


# -- one head file, as the catalog lists it -----------------------------------------------------
def scan(store: StoreFolder, rel: str, raw: bytes) -> dict[str, Any]:
    """Catalog fields for one head file (called by the catalog for new or changed files)."""
    name = rel.rsplit("/", 1)[-1][:-3]
    file_page_id = name if is_safe_id(name) else None
    folder_ns = ":".join(rel.split("/")[1:-1]) or store.default_namespace
    try:
        parsed = parse_head_file(store, raw, rel, file_page_id, folder_ns)
    except InvalidInput as exc:
        return _served_from_revision(store, file_page_id, raw, exc.message)
    if parsed.state is None:
        return {"page_id": None, "problem": "new file: not yet adopted as a page",
                "title": str(parsed.frontmatter.get("title") or name)}
    state = parsed.state
    stored_hash = parsed.frontmatter.get("content_hash")
    state_hash = parsed.state_hash or state.content_hash
    fields = entry_fields(state)
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


def _served_from_revision(store: StoreFolder, page_id: str | None, raw: bytes,
                          problem: str) -> dict[str, Any]:
    """Catalog fields for a head file that cannot be read: the page's newest revision
    (listed, searched and shown from it, the problem kept for doctor and the warnings),
    unless the file holds git conflict markers (never served) or the page has none."""
    fields: dict[str, Any] = {"page_id": page_id, "problem": problem}
    if page_id is None or b"<<<<<<<" in raw or not store.revision_ids(page_id):
        return fields
    try:
        head = store.graph_heads(page_id)[-1]
    except PcpError:
        return fields
    if _claims_more_sensitivity(raw, head.state.sensitivity):
        return fields  # the broken file may be marking the page more sensitive: hide it
    fields.update(entry_fields(head.state), problem=problem,
                  revision_id=head.revision_id, content_hash=head.content_hash,
                  created_at=head.page_created_at, updated_at=head.created_at)
    return fields


def parse_head_file(store: StoreFolder, raw: bytes, rel: str, file_page_id: str | None,
                folder_ns: str) -> ParsedHead:
    """parse_head, knowing the store: a file named after an existing page but without
    frontmatter is that page's head file edited, never a new page. Emptied, it is refused
    (doctor --fix rewrites it from the revisions); with text left, the text is the edit."""
    parsed = parse_head(raw, path=rel, file_page_id=file_page_id,
                        folder_namespace=folder_ns, owner_id=store.owner_id,
                        load_revision=store.load_revision)
    if parsed.state is not None or file_page_id is None or parsed.frontmatter or \
            not store.page_exists(file_page_id):
        return parsed
    if not parsed.body.strip():
        raise InvalidInput(
            f"the head file of page {file_page_id} is empty",
            path=rel, line=1,
            hint="`pcp doctor --fix` rewrites it from its revisions (to remove the page, "
            "`pcp delete` it)",
        )
    head = store.current(file_page_id)
    state = head.state.evolve(content=parsed.body)
    return ParsedHead({}, parsed.body, head.revision_id, state)


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
