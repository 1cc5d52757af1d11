"""The MCP backend over a real store folder, through `pcp_cli.api` only.

Each worker thread the SDK runs calls on keeps one read-only store open (no SQLite connection is
shared between threads) and refreshes it at the start of every read call: `Store.refresh` is the
one judge of what changed, so a page the CLI wrote while the server runs is visible to the next
call. Opening the store afresh per call cost more than most calls' own work. The kept store is
reopened when `pcp.yaml` or the catalog file is replaced (a rebuilt catalog is a new file). Write
tools open a writable store for the one call.

The grant is applied before anything is ranked or read: the api functions get the grant's scopes,
the session's suppressed pages and the grant's sensitivity switch, so what is outside the grant
is never a candidate, never counted and never named in an error. Search filters sensitivity in
the index, and reads check each page's catalog row; only the tools whose api functions take no
sensitivity switch (timeline, stats, scopes, related) get a `hidden` set of the high-sensitivity
pages, cached per catalog state. Results are then checked again against the grant (defence
in depth): a page that should not be visible is dropped, and a count that names a namespace
outside the grant fails the call closed instead of leaking.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pcp_cli import api
from pcp_cli.errors import NotFound, PcpError, RevisionConflict, StoreDamaged
from pcp_cli.mcp.grants import Grant, scope_allows
from pcp_cli.mcp.session import NotPermitted
from pcp_cli.model.search_request import SearchRequest

# Sensitivities served without an opt-in; unclassified pages are withheld like `high`.
SERVED = api.SERVED_SENSITIVITIES

JSON = dict[str, Any]
# Origins of what an AI client writes: its pages are derivations, its keystones guesses.
WRITE_ORIGIN = "generated"
KEYSTONE_SOURCE = "inferred"
# Statuses a page read by id may have (tombstoned pages are gone from reads; history is kept).
READABLE_STATUSES = ("active", "superseded", "archived")
# The page types a profile rendering reads.
PROFILE_MATERIAL = ("profile", "keystone", "timeline_event")
# Namespaces may only be checked against a grant's scopes after the store has said them.
UNEXPECTED_SCOPE = "the store answered outside this client's grant; the answer was withheld"


class GrantViolation(PcpError):
    """A library answer named something outside the grant: fail closed, say nothing of it."""

    code = "internal"


def _narrowed(grant: Grant, scopes: Sequence[str]) -> Grant:
    return dataclasses.replace(grant, scopes=tuple(scopes))


class StoreBackend:
    """`Backend` over the store at `root` (see `pcp_cli.mcp.backend`)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self._local = threading.local()  # per worker thread: (store, files stamp)

    # -- opening ------------------------------------------------------------------------------
    @contextmanager
    def _reading(self) -> Iterator[api.Store]:
        yield self._kept_store()

    def _files_stamp(self) -> tuple[int, int, int]:
        """Changes when pcp.yaml is edited or replaced, or the catalog file is replaced."""
        def of(path: Path) -> tuple[int, int]:
            try:
                stat = os.stat(path)
            except OSError:
                return -1, -1
            return stat.st_ino, stat.st_mtime_ns

        return (*of(self.root / "pcp.yaml"), of(self.root / ".pcp" / "catalog.sqlite")[0])

    def _kept_store(self) -> api.Store:
        """This thread's read-only store, refreshed now (reopened if its files were replaced)."""
        local = self._local
        kept: tuple[api.Store, tuple[int, int, int]] | None = getattr(local, "kept", None)
        stamp = self._files_stamp()
        if kept is not None and kept[1] != stamp:
            kept[0].close()
            kept = local.kept = None
        store = kept[0] if kept else api.open_store(self.root, readonly=True, refresh=False)
        try:
            store.refresh()
        except BaseException:
            store.close()
            local.kept = None
            raise
        local.kept = (store, self._files_stamp())
        return store

    def close(self) -> None:
        """Close this thread's kept store (the others close with their threads)."""
        kept = getattr(self._local, "kept", None)
        if kept is not None:
            kept[0].close()
            self._local.kept = None

    @contextmanager
    def _writing(self) -> Iterator[api.Store]:
        store = api.open_store(self.root)
        try:
            yield store
        finally:
            store.close()

    # -- the grant, applied ------------------------------------------------------------------
    @staticmethod
    def _scopes(grant: Grant) -> list[str]:
        # Never None (which the api reads as "every namespace"): an empty grant sees nothing.
        return list(grant.scopes)

    @staticmethod
    def _sensitivities(grant: Grant) -> tuple[str, ...] | None:
        """The sensitivities this grant is shown (None: all, unclassified pages included): a
        filter of the catalog query or the index, never a list of pages built in Python."""
        return None if grant.allow_sensitive else SERVED

    @staticmethod
    def _report_own(data: JSON, suppressed: frozenset[str]) -> JSON:
        """filters_applied may count what was left out: count only what the client suppressed,
        never the sensitive pages left out for the grant's sake (that count is itself a leak)."""
        filters = data.get("filters_applied")
        if isinstance(filters, dict) and "suppressed" in filters:
            value = filters["suppressed"]
            filters["suppressed"] = sorted(suppressed) if isinstance(value, list) else len(
                suppressed)
        return data

    def _visible_entry(self, store: api.Store, grant: Grant, page_id: str,
                       hidden: frozenset[str]) -> api.Entry | None:
        """The head entry of `page_id` if this grant may read it; None otherwise (and for pages
        that do not exist). A head file that cannot be read is returned only when its folder is
        inside the grant, so the caller can say it is damaged."""
        if page_id in hidden:
            return None
        entry = api.page_entry(store, page_id)
        if entry is None:
            return None
        if entry.problem is not None:
            namespace = api.entry_folder_namespace(entry) or store.default_namespace
            return entry if scope_allows(grant, namespace) else None
        if entry.namespace is None or not scope_allows(grant, entry.namespace):
            return None
        if entry.lifecycle_status not in READABLE_STATUSES or entry.review_status != "affirmed":
            return None
        if entry.sensitivity not in SERVED and not grant.allow_sensitive:
            return None
        return entry

    def _check_namespaces(self, grant: Grant, namespaces: Any) -> None:
        for namespace in namespaces or ():
            if not isinstance(namespace, str) or not scope_allows(grant, namespace):
                raise GrantViolation(UNEXPECTED_SCOPE, hint="report this as a bug in pcp")

    def visible_page_ids(
        self, grant: Grant, ids: tuple[str, ...], *, suppressed: frozenset[str]
    ) -> frozenset[str]:
        with self._reading() as store:
            hidden = frozenset(suppressed)  # sensitivity: each entry is checked
            return frozenset(
                i for i in ids
                if (e := self._visible_entry(store, grant, i, hidden)) is not None
                and e.problem is None
            )

    # -- read-only query profile -------------------------------------------------------------
    def get_profile(self, grant: Grant, *, format: str, suppressed: frozenset[str],
                    as_of: str | None = None) -> JSON:
        # A fresh clone (no catalog yet): the profile from its own head files, not after a
        # catalog of every page (the usual first call of a session). Suppressed pages are
        # looked up in the catalog, so a session that suppressed any takes the catalog path.
        if as_of is None and not suppressed and format in api.PROFILE_FORMATS:
            early = api.profile_without_catalog(self.root, format, scopes=self._scopes(grant))
            if early is not None:
                return early if isinstance(early, dict) else {"format": format,
                                                              "text": str(early)}
        with self._reading() as opened:
            store = api.as_of_view(opened, as_of)
            # The api's profile never uses a high-sensitivity or unclassified page; only pages
            # the client suppressed need the renderers fed by hand (looked up by id, not by
            # listing the profile material).
            if self._suppresses_profile_material(store, grant, suppressed):
                rendered = self._profile_without(store, grant, format, frozenset(suppressed))
            else:
                rendered = api.profile_text(store, format, scopes=self._scopes(grant))
        if format == "json":
            assert isinstance(rendered, dict)
            return rendered
        return {"format": format, "text": str(rendered)}

    @staticmethod
    def _suppresses_profile_material(store: api.Store, grant: Grant,
                                     suppressed: frozenset[str]) -> bool:
        for page_id in suppressed:
            entry = api.page_entry(store, page_id)
            if entry is not None and entry.type in PROFILE_MATERIAL and scope_allows(
                    grant, entry.namespace or ""):
                return True
        return False

    def _profile_without(self, store: api.Store, grant: Grant, format: str,
                         hidden: frozenset[str]) -> JSON | str:
        """The same renderers as `api.profile_text`, over the profile material minus the pages
        this session may not see (suppressed, or sensitive for this grant)."""
        from pcp_cli import render

        def revisions(page_type: str) -> list[Any]:
            return [
                api.require_page(store, e.page_id)
                for e in api.list_pages(store, types=(page_type,))
                if e.page_id and e.page_id not in hidden and scope_allows(grant, e.namespace or "")
                and e.sensitivity in SERVED  # as in api.profile_text, whatever the grant
            ]

        profiles = revisions("profile")
        preferred = [p for p in profiles if p.page_id == api.PROFILE_PAGE_ID] or profiles
        profile = preferred[0] if preferred else None
        if format == "json":
            return render.profile_json(profile)
        keystones = revisions("keystone")
        if format == "micro_prompt":
            return render.micro_prompt(profile, keystones)
        events = [r.state for r in revisions("timeline_event")]
        return render.profile_markdown(profile, keystones, events)

    def search(self, grant: Grant, request: SearchRequest) -> JSON:
        if request.scopes is None:  # never wider than the grant
            request = request.replace(scopes=grant.scopes)
        narrowed = _narrowed(grant, request.scopes or ())
        # Sensitivity has its own switch here, checked again whatever the session decided; an
        # AI client sees an unclassified page only as it would a `high` one.
        sensitive = request.include_sensitive and grant.allow_sensitive
        request = request.replace(include_sensitive=sensitive, include_unclassified=sensitive
                                  and request.include_unclassified)
        with self._reading() as store:
            data = api.search(store, request)
            results = data.get("results") or []
            statuses = tuple(data.get("filters_applied", {}).get("lifecycle_statuses") or ())
            hidden = request.suppressed
            kept = [
                r for r in results
                if isinstance(r, dict) and isinstance(r.get("id"), str)
                and self._searchable(store, narrowed, r["id"], hidden,
                                     request.include_superseded or "superseded" in statuses,
                                     past=request.as_of is not None)
            ]
        data["results"] = kept
        data["count"] = len(kept)
        return self._report_own(data, request.suppressed)

    def _searchable(self, store: api.Store, grant: Grant, page_id: str, hidden: frozenset[str],
                    include_superseded: bool, *, past: bool = False) -> bool:
        entry = self._visible_entry(store, grant, page_id, hidden)
        if entry is None or entry.problem is not None:
            return False
        # As of a past moment the page's lifecycle then was filtered by the search itself.
        return past or include_superseded or entry.lifecycle_status == "active"

    def get_timeline(
        self,
        grant: Grant,
        *,
        from_: str | None,
        to: str | None,
        query: str | None,
        limit: int,
        suppressed: frozenset[str],
        cursor: str | None = None,
        as_of: str | None = None,
        include_sensitive: bool = False,
    ) -> JSON:
        # As in search: the grant permits AND the call asks; unclassified events go with high.
        sensitive = include_sensitive and grant.allow_sensitive
        with self._reading() as store:
            hidden = frozenset(suppressed)  # sensitivity: in the catalog query, and each entry
            data = api.timeline(store, from_=from_, to=to, query=query, limit=limit,
                                scopes=self._scopes(grant), suppressed=hidden, cursor=cursor,
                                as_of=as_of, include_sensitive=sensitive,
                                include_unclassified=sensitive)
            events = [
                e for e in data.get("events") or []
                if isinstance(e, dict) and isinstance(e.get("id"), str)
                and self._visible_entry(store, grant, e["id"], hidden) is not None
            ]
        data["events"] = events
        data["count"] = len(events)
        return self._report_own(data, suppressed)

    def stats(self, grant: Grant, *, suppressed: frozenset[str],
              as_of: str | None = None, include_sensitive: bool = False) -> JSON:
        sensitive = include_sensitive and grant.allow_sensitive  # as in search
        with self._reading() as store:
            # only what the client may read: a tombstoned page is withdrawn, not counted, nor
            # a page of a sensitivity the call does not show (counted in SQL)
            data = api.stats(store, scopes=self._scopes(grant), suppressed=frozenset(suppressed),
                             as_of=as_of, statuses=READABLE_STATUSES,
                             include_sensitive=sensitive, include_unclassified=sensitive)
        self._check_namespaces(grant, data.get("by_namespace"))
        return data

    # -- Paged Context Protocol reads ---------------------------------------------------------
    def describe_capabilities(self, grant: Grant, *,
                              operations: Sequence[str] | None = None) -> JSON:
        with self._reading() as store:
            data = api.capabilities(store, operations=operations)
        from pcp_cli.render.versions import protocols

        data["protocols"] = protocols(grant.pcp_version)  # what this client is served
        # The store's default namespace is the owner's own: not for a client granted elsewhere.
        default = data.get("default_namespace")
        if isinstance(default, str) and not scope_allows(grant, default):
            del data["default_namespace"]
        return data

    def list_scopes(self, grant: Grant, *, suppressed: frozenset[str], limit: int | None = None,
                    cursor: str | None = None) -> JSON:
        def permissions(namespace: str) -> dict[str, bool]:
            return {"read": True, "write": grant.allow_write and scope_allows(grant, namespace),
                    "sensitive": grant.allow_sensitive}

        with self._reading() as store:
            # Counts of what this session can actually read: without suppressed pages, nor
            # those of a sensitivity the grant does not show (in the same SQL pass).
            data = api.list_scopes(store, scopes=self._scopes(grant), permissions=permissions,
                                   limit=limit, cursor=cursor, suppressed=frozenset(suppressed),
                                   sensitivities=self._sensitivities(grant))
            rows = [r for r in data.get("scopes") or [] if isinstance(r, dict)]
            self._check_namespaces(grant, [r.get("namespace") for r in rows])
        data["scopes"] = rows
        return data

    def read_pages(
        self,
        grant: Grant,
        *,
        ids: tuple[str, ...],
        views: tuple[str, ...],
        suppressed: frozenset[str],
        as_of: str | None = None,
    ) -> JSON:
        pages: list[JSON] = []
        not_found: list[str] = []
        with self._reading() as opened:
            store = api.as_of_view(opened, as_of)
            hidden = frozenset(suppressed)  # sensitivity: each entry (and revision) is checked
            for asked in ids:
                page_id, revision_id = asked, None
                if not store.page_exists(asked):  # a revision id: its page, that revision
                    owner = opened.page_of_revision(asked)
                    if owner is not None:
                        page_id, revision_id = owner, asked
                entry = self._visible_entry(store, grant, page_id, hidden)
                if entry is None:
                    not_found.append(asked)
                    continue
                if entry.problem is not None:
                    # Not the parser's words: they may quote the file, and this page may be
                    # one the grant would not show (its sensitivity is unreadable too).
                    raise StoreDamaged(
                        f"page {page_id} cannot be read: its file in the store is damaged",
                        hint="ask the person to run `pcp doctor` or fix the file; read the "
                        "other pages without this id",
                    )
                try:
                    page = self._read_one(store, grant, page_id, views, hidden, revision_id)
                except NotFound:
                    page = None  # as of then, it did not exist yet
                if page is None:
                    not_found.append(asked)
                else:
                    pages.append(page)
        data: JSON = {"pages": pages, "not_found": not_found}
        if as_of is not None:
            data["as_of"] = store.as_of
        return data

    def _read_one(self, store: api.Store, grant: Grant, page_id: str,
                  views: tuple[str, ...], hidden: frozenset[str],
                  revision_id: str | None = None) -> JSON | None:
        """The page's head (as of then), or the revision `revision_id` of it: the page must be
        readable now (the caller checked) and the revision itself must pass every check a
        head does (scope, sensitivity, lifecycle, affirmed), so an older revision that was
        high-sensitivity, a proposal or withdrawn is never served through its id."""
        manifest = api.read_page(store, page_id, revision_id=revision_id, view="manifest")
        head = manifest["manifest"]
        # The revision itself must be inside the grant too (a head file edited by hand could
        # say otherwise until the edit is recorded).
        if not scope_allows(grant, head.get("namespace", "")) or (
            head.get("sensitivity") not in SERVED and not grant.allow_sensitive
        ):
            return None
        if revision_id is not None and (
            head.get("lifecycle_status") not in READABLE_STATUSES
            or head.get("review_status") != "affirmed"
        ):
            return None
        page: JSON = {
            "page_id": page_id,
            "revision_id": manifest["revision_id"],
            "is_head": manifest["is_head"],
            "heads": manifest["heads"],
        }
        if "head_revision_id" in manifest:
            page["head_revision_id"] = manifest["head_revision_id"]
        for view in views:
            if view == "manifest":
                page["manifest"] = head
                continue
            data = api.read_page(store, page_id, revision_id=manifest["revision_id"], view=view)
            if view == "payload":
                page["payload"] = data["payload"]["content"]
                page["media_type"] = data["payload"]["media_type"]
            elif view == "relations":
                page["relations"] = [
                    rel for rel in data["relations"]
                    if self._visible_entry(store, grant, _other_end(rel, page_id), hidden)
                    is not None
                ]
            elif view in ("source_spans", "facets"):
                page[view] = self._visible_spans(store, grant, view, data[view], hidden)
            else:
                page[view] = data[view]
        return page

    def _visible_spans(self, store: api.Store, grant: Grant, view: str, data: JSON,
                       hidden: frozenset[str]) -> JSON:
        """The evidence a proposal was accepted with quotes other pages (`page_id`): only the
        spans of pages this grant may read are shown (event spans name no page)."""
        spans = data.get("spans" if view == "source_spans" else "source_spans")
        if not isinstance(spans, list):
            return data
        kept = [span for span in spans
                if not isinstance(span, dict) or not isinstance(span.get("page_id"), str)
                or self._visible_entry(store, grant, span["page_id"], hidden) is not None]
        return {**data, ("spans" if view == "source_spans" else "source_spans"): kept}

    def related_pages(self, grant: Grant, *, page_id: str, relation_types: tuple[str, ...],
                      depth: int, suppressed: frozenset[str], as_of: str | None = None) -> JSON:
        """`api.related` inside the grant: the start page must be readable, and the walk never
        enters (nor passes through) a page the grant does not show."""
        with self._reading() as opened:
            store = api.as_of_view(opened, as_of)
            hidden = frozenset(suppressed)  # sensitivity: each entry the walk meets is checked
            entry = self._visible_entry(store, grant, page_id, hidden)
            if entry is None or entry.problem is not None:
                raise NotFound(f"page {page_id} not found",
                               hint="use pcp_search to find the ids of pages you can read")
            data = api.related(store, page_id, types=relation_types, depth=depth,
                               scopes=list(grant.scopes), include_superseded=True,
                               include_sensitive=grant.allow_sensitive,
                               include_unclassified=grant.allow_sensitive, suppressed=hidden)
            data["pages"] = [p for p in data["pages"] if self._visible_entry(
                store, grant, p["page_id"], hidden) is not None]
            data["count"] = len(data["pages"])
            self._check_namespaces(grant, [p["namespace"] for p in data["pages"]])
        data["filters_applied"]["scopes"] = list(grant.scopes)
        return data

    # -- writes ------------------------------------------------------------------------------
    @staticmethod
    def _actor(grant: Grant) -> api.Actor:
        return api.Actor(grant.actor, grant.client_id or "anonymous")

    def _target_namespace(self, store: api.Store, grant: Grant, namespace: str | None) -> str:
        target = namespace or store.default_namespace
        if not scope_allows(grant, target):
            raise NotPermitted(
                f"namespace {target} is outside this client's grant",
                hint=f"pass a namespace inside: {', '.join(grant.scopes) or 'nothing'}",
            )
        return target

    def _written(self, store: api.Store, result: Any) -> JSON:
        manifest = api.read_page(store, result.page_id, view="manifest")["manifest"]
        return {**result.to_dict(), "manifest": manifest}

    def write_page(
        self,
        grant: Grant,
        *,
        content: str,
        title: str | None,
        type: str,
        namespace: str | None,
        tags: tuple[str, ...],
        idempotency_key: str | None,
        derived_from: tuple[str, ...] = (),
    ) -> JSON:
        with self._writing() as store:
            target = self._target_namespace(store, grant, namespace)
            hidden: frozenset[str] = frozenset()  # sensitivity: each entry is checked
            for source in derived_from:  # only pages this client may read can be inputs
                if self._visible_entry(store, grant, source, hidden) is None:
                    raise NotFound(f"page {source} not found",
                                   hint="use pcp_search to find the ids of pages you can read")
            # Keys are per client: another client's key can never return (or reveal) its page.
            key = f"mcp:{grant.client_id}:{idempotency_key}" if idempotency_key else None
            result = api.add_page(
                store, content, page_type=type, title=title, namespace=target,
                origin=WRITE_ORIGIN, tags=tags, idempotency_key=key, actor=self._actor(grant),
                derived_from=derived_from,
            )
            return self._written(store, result)

    def revise_page(
        self,
        grant: Grant,
        *,
        page_id: str,
        expected_revision_id: str,
        content: str | None,
        title: str | None,
    ) -> JSON:
        with self._writing() as store:
            if api.persons_page(store, page_id):
                return _proposed(api.propose_change(
                    store, "revise", page_id, actor=self._actor(grant), content=content,
                    title=title, expected_revision_id=expected_revision_id), "revise", page_id)
            try:
                result = api.revise_page(
                    store, page_id, content=content, title=title,
                    expected_revision_id=expected_revision_id, actor=self._actor(grant),
                    origin=WRITE_ORIGIN if content is not None else None,
                    note=f"revised by MCP client {grant.client_id}",
                )
            except RevisionConflict as exc:
                raise RevisionConflict(
                    f"page {page_id} is at revision {exc.current}, not {expected_revision_id}",
                    expected=expected_revision_id, current=exc.current,
                    hint=f"read {page_id} again with pcp_read_pages and revise revision "
                    f"{exc.current}",
                ) from None
            return self._written(store, result)

    def link_pages(self, grant: Grant, *, from_id: str, relation_type: str, to_id: str) -> JSON:
        with self._writing() as store:
            # a revision id names its page here: supersession acts on pages (api.link)
            target, source = api.link_end(store, to_id)[0], api.link_end(store, from_id)[0]
            if relation_type in api.RETIRING_RELATIONS and api.persons_page(store, target):
                return _proposed(api.propose_change(
                    store, "supersede", target, actor=self._actor(grant), from_page_id=source,
                    relation_type=relation_type), "supersede", target)
            return api.link_pages(store, from_id, relation_type, to_id,
                                  actor=self._actor(grant),
                                  note=f"linked by MCP client {grant.client_id}")

    def tombstone_page(self, grant: Grant, *, page_id: str, reason: str | None) -> JSON:
        with self._writing() as store:
            if api.persons_page(store, page_id):
                return _proposed(api.propose_change(
                    store, "tombstone", page_id, actor=self._actor(grant), reason=reason),
                    "tombstone", page_id)
            result = api.set_lifecycle(store, page_id, "tombstoned", actor=self._actor(grant),
                                       reason=reason or f"tombstoned by MCP client "
                                       f"{grant.client_id}")
            return {**result.to_dict(), "lifecycle_status": "tombstoned"}

    def propose_keystone(
        self, grant: Grant, *, content: str, category: str | None, confidence: float | None,
        stale_after: str | None = None,
    ) -> JSON:
        with self._writing() as store:
            target = self._target_namespace(store, grant, None)
            result = api.add_keystone(
                store, content, category=category or "other", confidence=confidence,
                source=KEYSTONE_SOURCE, proposed=True, namespace=target, actor=self._actor(grant),
                stale_after=stale_after,
            )
            return {**result.to_dict(), "review_status": "proposed",
                    "note": "waits for the person's review; not served until affirmed"}


    def ingest_event(self, grant: Grant, *, event: JSON) -> JSON:
        with self._writing() as store:
            # Keys and conversation ids are per client: another client's key can never return
            # (or reveal) its event, nor add to its conversation.
            return api.ingest_event(
                store, event, source=f"mcp:{grant.client_id or 'anonymous'}",
                actor=self._actor(grant), origin=WRITE_ORIGIN,
                allow_namespace=lambda namespace: self._target_namespace(store, grant,
                                                                         namespace),
            )


def _proposed(result: api.WriteResult, action: str, page_id: str) -> JSON:
    """What a write tool answers when its change to the person's material became a proposal."""
    return {"proposed": True, "page_id": result.page_id, "revision_id": result.revision_id,
            "status": result.status, "review_status": "proposed", "action": action,
            "target": page_id,
            "note": f"{page_id} is the person's own material: this {action} waits for their "
                    "review (pcp review) and changes nothing until they accept it"}


def _other_end(relation: JSON, page_id: str) -> str:
    ends = (relation.get("from_page_id"), relation.get("to_page_id"))
    other = ends[1] if ends[0] == page_id else ends[0]
    return other if isinstance(other, str) else ""
