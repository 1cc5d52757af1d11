"""The library facade: the operations both front ends (the CLI and the MCP server) call.

It imports neither front end: serving MCP is the `pcp_cli.mcp` front end's job.

Each function takes an open Store, does one thing, and returns model objects or the JSON-able
dicts that `--json` and the MCP tools print. Nothing here prints or exits.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Sequence
from typing import Any

from pcp_cli.errors import InvalidInput, NotFound, UsageError
from pcp_cli.model import vocab
from pcp_cli.model.lifecycle import supersedes_now
from pcp_cli.model.page import (
    Actor,
    PageState,
    Relation,
    Revision,
    now_iso,
    observed_time,
    title_from,
)
from pcp_cli.model.search_request import SearchRequest
from pcp_cli.store.catalog import Entry
from pcp_cli.store.damage import refuse_damaged
from pcp_cli.store.frontmatter import MAX_FILE_BYTES
from pcp_cli.store.store import Store, WriteResult, page_id_for_key

PROFILE_PAGE_ID = "profile"
SERVED_SENSITIVITIES = vocab.SERVED_SENSITIVITIES
READ_VIEWS = ("manifest", "payload", "relations", "history", "facets", "source_spans")


def init_store(root: str | os.PathLike[str], *, owner_id: str,
               namespace: str | None = None) -> Store:
    """Create a new, empty store folder (`pcp init`)."""
    from pathlib import Path

    return Store.init(Path(root), owner_id=owner_id, namespace=namespace)


def decode_input(raw: bytes, path: str) -> str:
    """Text given to a command (a file or stdin) as str; InvalidInput when too big or not UTF-8."""
    from pcp_cli.store.frontmatter import decode

    return decode(raw, path)


def doctor_finding(kind: str, path: str, message: str, *, fixed: bool = False,
                   fixable: bool = True) -> Any:
    """A `pcp doctor` finding about something outside the store's files (the git setup)."""
    from pcp_cli.store.doctor import Finding

    return Finding(kind, path, message, fixed=fixed, fixable=fixable)


def check_store(store: Store, *, fix: bool = False) -> list[Any]:
    """`pcp doctor`: the findings (fixed ones marked) for an open store. The MCP audit log's
    hash chain is the MCP front end's to check (`pcp doctor` adds its findings)."""
    from pcp_cli.store.doctor import check

    return check(store, fix=fix)


def open_store(path: str | os.PathLike[str] | None = None, *, readonly: bool = False,
               refresh: bool = True) -> Store:
    """Open the store `path` (or PCP_STORE, or the nearest one) and bring it up to date."""
    store = Store.open(path, readonly=readonly)
    if refresh:
        store.refresh()
    return store


# -- shapes -----------------------------------------------------------------------------------
def entry_summary(entry: Entry) -> dict[str, Any]:
    """The JSON shape of one page in a listing (`pcp ls --json`)."""
    return {
        "page_id": entry.page_id,
        "revision_id": entry.revision_id,
        "type": entry.type,
        "title": entry.title,
        "namespace": entry.namespace,
        "lifecycle_status": entry.lifecycle_status,
        "review_status": entry.review_status,
        "origin": entry.origin,
        "sensitivity": entry.sensitivity,
        "tags": list(entry.tags),
        "created_at": entry.created_at,
        "updated_at": entry.updated_at,
        # When the content was created or observed (model.page.observed_time), not stored.
        "observed_at": observed_time(entry.type, entry.record, entry.origin, entry.created_at),
        "path": entry.path,
    }


def revision_summary(revision: Revision) -> dict[str, Any]:
    """One line of history: who made which revision from what, without the content."""
    return {
        "revision_id": revision.revision_id,
        "parent_revision_id": revision.parent_revision_id,
        "merged_revision_ids": list(revision.merged_revision_ids),
        "created_at": revision.created_at,
        "created_by": revision.created_by.to_dict(),
        "operation": revision.provenance[0].operation if revision.provenance else None,
        "note": revision.provenance[0].note if revision.provenance else None,
        "lifecycle_status": revision.state.lifecycle_status,
        "content_hash": revision.content_hash,
        "title": revision.state.title,
    }


# -- listing ----------------------------------------------------------------------------------
def list_page_window(
    store: Store,
    *,
    types: Sequence[str] = (),
    namespaces: Sequence[str] = (),
    statuses: Sequence[str] = ("active",),
    include_proposed: bool = False,
    limit: int | None = None,
    cursor: str | None = None,
) -> tuple[list[Entry], str | None]:
    """`pcp ls --limit N [--cursor C]`: one window of `list_pages`, and the next cursor."""
    from pcp_cli.query import cursor as cursors

    if limit is not None and (isinstance(limit, bool) or limit < 1):
        raise UsageError(f"the limit must be at least 1, not {limit}")
    request = {"types": list(types), "namespaces": list(namespaces), "statuses": list(statuses),
               "include_proposed": include_proposed, "limit": limit,
               "as_of": getattr(store, "as_of", None)}
    position = cursors.decode(cursor, "ls", request, store)
    if limit is not None and isinstance(store, Store):
        # The window alone, in SQL (one row more tells whether there is a next page): the
        # same rows in the same order as sorting every entry (list_pages), at any store size.
        _check_listing(types, statuses)
        refuse_damaged(store)  # a replaced folder is damage, never "0 pages"
        rows = store.entry_window(
            limit=limit + 1, offset=position, types=types or None,
            namespaces=namespaces or None, statuses=statuses or None,
            review=None if include_proposed else ("affirmed",))
        more = len(rows) > limit
        return rows[:limit], (cursors.encode("ls", request, position + limit, store)
                              if more else None)
    entries = list_pages(store, types=types, namespaces=namespaces, statuses=statuses,
                         include_proposed=include_proposed)
    return cursors.page(entries, position, limit or len(entries) or 1, "ls", request, store)


def list_pages(
    store: Store,
    *,
    types: Sequence[str] = (),
    namespaces: Sequence[str] = (),
    statuses: Sequence[str] = ("active",),
    include_proposed: bool = False,
) -> list[Entry]:
    _check_listing(types, statuses)
    review = None if include_proposed else ("affirmed",)
    refuse_damaged(store)  # a replaced folder is damage, never "0 pages"
    entries = store.entries(types=types or None, namespaces=namespaces or None,
                            statuses=statuses or None, review=review)
    return sorted(entries, key=lambda e: (e.updated_at or "", e.page_id or ""), reverse=True)


def _check_listing(types: Sequence[str], statuses: Sequence[str]) -> None:
    for value in types:
        _check_enum("type", value, vocab.PAGE_TYPES)
    for value in statuses:
        _check_enum("status", value, vocab.LIFECYCLE_STATUSES)


def unreadable_pages(store: Store) -> list[str]:
    """Why each head file that cannot be read (or adopted) is left out of listings."""
    found = [entry.problem for entry in store.catalog.entries(
        "problem IS NOT NULL AND revision_id IS NULL")
             if entry.problem and not entry.problem.startswith("new file")]
    for rel, message in sorted(store.problems.items()):
        if rel.startswith("pages/") and message not in found:
            found.append(message if message.startswith(rel) else f"{rel}: {message}")
    return found


def pages_served_from_revisions(store: Store) -> list[str]:
    """Why each head file that cannot be read is listed from its page's newest revision."""
    return [entry.problem for entry in store.catalog.entries(
        "problem IS NOT NULL AND revision_id IS NOT NULL") if entry.problem]


def page_entry(store: Store, page_id: str) -> Entry | None:
    """The catalog entry of a page's head file, even when the file could not be read (then
    `entry.problem` says why and `entry.namespace` is None). None if no head file names it."""
    return store.head_entry(page_id)


def entry_folder_namespace(entry: Entry) -> str | None:
    """The namespace a head file's folder stands for (`pages/project/x/p.md` -> project:x)."""
    parts = entry.path.split("/")[1:-1]
    return ":".join(parts) or None


# -- page references --------------------------------------------------------------------------
def find_page(store: Store, ref: str) -> str:
    """The page id a person's `ref` names: a whole id, a unique prefix of one (with or without
    `pg_`), or a title only one page has. UsageError listing the candidates when several match,
    NotFound when none does. Every front end that takes a typed page id resolves it here."""
    from pcp_cli.store.refs import resolve

    return resolve(store, ref)


def short_page_ids(store: Store) -> Any:
    """A function `page_id -> shortest unique prefix` (at least 8 characters after `pg_`), for
    tables; `--json` keeps whole ids."""
    from pcp_cli.store.refs import short_ids

    return short_ids(store)


def page_id_completions(store: Store, incomplete: str, *, limit: int = 200
                        ) -> list[tuple[str, str]]:
    """Shell completion of a page id: (what was typed + the rest of the id, title) for the
    ids that start with `incomplete` (pg_ optional, any case), so the shell keeps what was
    typed and adds the rest."""
    from pcp_cli.store.refs import KIND_PREFIX, page_ids

    folded = incomplete.lower()
    found: list[tuple[str, str]] = []
    for page_id in page_ids(store):
        lowered = page_id.lower()
        if lowered.startswith(folded):
            rest = page_id[len(incomplete):]
        elif lowered.startswith(KIND_PREFIX + folded):
            rest = page_id[len(KIND_PREFIX) + len(incomplete):]
        else:
            continue
        entries = store.catalog.by_page_id(page_id)
        found.append((incomplete + rest, entries[0].title if entries else ""))
        if len(found) >= limit:
            break
    return found


# -- editing a head file (pcp edit) ----------------------------------------------------------
def begin_edit(store: Store, page_id: str) -> Any:
    """Start `pcp edit`: an EditSession whose `draft` (a copy of the head file, or an earlier
    unrecorded edit when `resumed`) is what the editor opens."""
    from pcp_cli.store.editing import begin

    return begin(store, page_id)


def check_edit(store: Store, session: Any, text: str) -> None:
    """InvalidInput naming the head file and line when the edited text is not a valid head
    file for the page."""
    from pcp_cli.store.editing import check

    check(store, session, text)


def record_edit(store: Store, session: Any, text: str) -> WriteResult:
    """Write the edited text over the head file and record it as a hand edit (status
    "revised", or "unchanged" when it says nothing new); then drop the draft."""
    from pcp_cli.store.editing import finish, record

    result = record(store, session, text)
    finish(session)
    return result


def discard_edit(session: Any) -> None:
    from pcp_cli.store.editing import finish

    finish(session)


def new_page_draft(store: Store) -> Any:
    """An empty file under `.pcp/edits/` for `pcp add` to open in an editor."""
    from pcp_cli.store.editing import new_draft

    return new_draft(store)


# -- reading ----------------------------------------------------------------------------------
def read_page(store: Store, page_id: str, *, revision_id: str | None = None,
              view: str | None = None, as_of: str | None = None) -> dict[str, Any]:
    """ReadPages for one page: the whole revision, or one view of it. Says which revision.
    With `as_of`, the page as it stood then (its head revision then, its relations then)."""
    from pcp_cli.query.asof import present

    now = present(store)
    store = as_of_view(store, as_of)
    refuse_damaged(store)  # a replaced revision folder is damage, never "does not exist"
    revision = store.get(page_id, revision_id)
    # `is_head` and `heads` are about the page now, also when reading it as of a past moment:
    # a revision that has been revised since is not the head, and says which one is.
    heads = [rev.revision_id for rev in now.graph_heads(page_id)]
    data: dict[str, Any] = {
        "page_id": revision.page_id,
        "revision_id": revision.revision_id,
        "is_head": revision.revision_id in heads,
        "heads": heads,
        "observed_at": revision.observed_at,
    }
    if not data["is_head"] and heads:
        data["head_revision_id"] = heads[0]
    if as_of is not None:
        data["as_of"] = store.as_of
    if view is None:
        data["page"] = revision.to_dict()
        return data
    _check_enum("view", view, READ_VIEWS)
    data["view"] = view
    if view == "manifest":
        data["manifest"] = revision.manifest()
    elif view == "payload":
        data["payload"] = revision.to_dict()["payload"]
    elif view == "relations":
        data["relations"] = [rel.to_dict() for rel in store.relations(page_id)]
    elif view == "history":
        data["history"] = [revision_summary(rev) for rev in store.revisions(page_id)]
    elif view == "facets":
        data["facets"] = revision.state.facets
    elif view == "source_spans":
        data["source_spans"] = {
            "source_refs": list(revision.state.source_refs),
            "spans": revision.state.facets.get("source_spans", []),
        }
    return data


def passage_around(body: str, page_type: str | None, start: int, end: int,
                   neighbours: int = 1) -> dict[str, Any]:
    """The passage of `body` at `start`..`end` (a search result's `source_spans`) with
    `neighbours` passages on each side — whole turns of a conversation, headings included:
    `{start, end, text, passages: [{field, start, end, passage, message_index | paragraph_index,
    role?, matched}]}` (see pcp_cli.query.passages)."""
    from pcp_cli.query.passages import MAX_NEIGHBOURS, read_around

    for name, value in (("start", start), ("end", end), ("neighbours", neighbours)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise UsageError(f"the passage's {name} must be a whole number of at least 0, "
                             f"not {value!r}", hint="use a search result's source_spans")
    if end < start or start > len(body):
        raise UsageError(f"the passage {start}:{end} is not inside the page's text "
                         f"({len(body)} characters)", hint="use a search result's source_spans "
                         "for the page's current revision")
    if neighbours > MAX_NEIGHBOURS:
        raise UsageError(f"at most {MAX_NEIGHBOURS} neighbours on each side, not {neighbours}")
    return read_around(body, page_type, start, end, neighbours)


def read_passage(store: Store, page_id: str, start: int, end: int, *, neighbours: int = 1,
                 revision_id: str | None = None, as_of: str | None = None) -> dict[str, Any]:
    """ReadPages for one passage of a page (`pcp show ID --passage START:END`): the page's
    identity as `read_page` gives it, and `passage` (see `passage_around`)."""
    data = read_page(store, page_id, revision_id=revision_id, as_of=as_of)
    page = data.pop("page")
    data["passage"] = passage_around(page["payload"]["content"], page.get("type"), start, end,
                                     neighbours)
    return data


# -- writing ----------------------------------------------------------------------------------
def add_page(
    store: Store,
    content: str,
    *,
    page_type: str = "note",
    title: str | None = None,
    namespace: str | None = None,
    sensitivity: str = "low",
    origin: str = "user_stated",
    tags: Sequence[str] = (),
    idempotency_key: str | None = None,
    actor: Actor | None = None,
    review_status: str = "affirmed",
    record: dict[str, Any] | None = None,
    page_id: str | None = None,
    epistemic_status: str = "asserted",
    derived_from: Sequence[str] = (),
) -> WriteResult:
    """WritePage. A derived type (`summary`) must name the pages it was derived from
    (`derived_from`, page ids): it is stored as a derivation (operation `derive`, integrity
    `derived`) pointing to their current revisions, never as a derivation of nothing."""
    _check_enum("type", page_type, vocab.PAGE_TYPES)
    _check_enum("sensitivity", sensitivity, vocab.SENSITIVITIES)
    _check_enum("origin", origin, vocab.ORIGINS)
    if not content.strip():
        raise UsageError("the page has no content", hint="give TEXT, --file F, or pipe text to -")
    inputs: tuple[str, ...] = ()
    if page_type in vocab.DERIVED_TYPES:
        if not derived_from:
            raise UsageError(
                f"a {page_type} is derived from other pages: name them",
                hint="pass the page ids it summarises (`--derived-from PAGE`, or "
                "`derived_from` over MCP), or write it as a note",
            )
        inputs = tuple(store.current(pid).revision_id for pid in dict.fromkeys(derived_from))
    elif derived_from:
        raise UsageError(f"--derived-from is for derived pages ({', '.join(vocab.DERIVED_TYPES)})",
                         hint="use `pcp link` to relate other pages")
    state = store.new_state(
        content,
        page_id=_given_id(page_id),
        type=page_type,
        title=title if title is not None else title_from(content),
        namespace=store.default_namespace if namespace is None else namespace,
        sensitivity=sensitivity,
        origin=origin,
        tags=tuple(dict.fromkeys(tags)),
        review_status=review_status,
        record=record or {},
        epistemic_status=epistemic_status,
        integrity="derived" if inputs else "verbatim",
    )
    return store.write_page(state, actor=actor, idempotency_key=idempotency_key,
                            operation="derive" if inputs else "write",
                            input_revision_ids=inputs)


def revise_page(
    store: Store,
    page_id: str,
    *,
    content: str | None = None,
    title: str | None = None,
    sensitivity: str | None = None,
    tags: Sequence[str] | None = None,
    expected_revision_id: str | None = None,
    actor: Actor | None = None,
    note: str | None = None,
    origin: str | None = None,
) -> WriteResult:
    """RevisePage. `origin` re-labels who the content now comes from (an AI client's revision
    of a person's page is `generated`: under-claim, never over-claim)."""
    changes: dict[str, Any] = {}
    if content is not None:
        if not content.strip():
            raise UsageError("the new content is empty")
        changes["content"] = content
    if title is not None:
        changes["title"] = title
    elif content is not None:
        # A title derived from the old first line follows the new one; a title set by hand
        # (one that is not the old text's first line) stays.
        head = store.current(page_id)
        if head.state.title == title_from(head.state.content):
            changes["title"] = title_from(content)
    if sensitivity is not None:
        _check_enum("sensitivity", sensitivity, vocab.SENSITIVITIES)
        changes["sensitivity"] = sensitivity
    if tags is not None:
        changes["tags"] = list(dict.fromkeys(tags))
    if not changes:
        raise UsageError("nothing to change", hint="give new text, --title or --sensitivity")
    if origin is not None:
        _check_enum("origin", origin, vocab.ORIGINS)
        changes["origin"] = origin
    return store.revise(page_id, changes=changes, expected_revision_id=expected_revision_id,
                        actor=actor, note=note)


def link_pages(store: Store, from_id: str, relation_type: str, to_id: str, *,
               note: str | None = None, actor: Actor | None = None) -> dict[str, Any]:
    """LinkPages between the current revisions of two pages; returns the relation object."""
    return link(store, from_id, relation_type, to_id, note=note, actor=actor)[0].to_dict()


def link(store: Store, from_id: str, relation_type: str, to_id: str, *,
         note: str | None = None, actor: Actor | None = None) -> tuple[Relation, bool]:
    """LinkPages; returns the relation and whether it is new.

    A `supersedes` relation that takes effect now (model/lifecycle.supersedes_now) supersedes
    its target as `keystone add --supersedes` does: a new revision of the target, superseded
    by the source, then the relation (model/lifecycle.py says why that is the one notion).
    """
    with store.locked():
        source, target = store.get(from_id), store.get(to_id)
        if relation_type == "supersedes" and supersedes_now(source, target):
            # the relation names the revision that was superseded (the parent, if done before)
            old = target.revision_id if target.state.lifecycle_status == "active" else \
                target.parent_revision_id or target.revision_id
            before = store.find_relation(relation_type, source.revision_id, old)
            relation = store.finish_supersede(source.page_id, target.page_id, actor=actor,
                                              note=note)
            return relation, before is None
        before = store.find_relation(relation_type, source.revision_id, target.revision_id)
        relation = store.link(from_id, relation_type, to_id, note=note, actor=actor)
        return relation, before is None


def set_lifecycle(store: Store, page_id: str, status: str, *, reason: str | None = None,
                  actor: Actor | None = None) -> WriteResult:
    return store.set_lifecycle(page_id, status, actor=actor, note=reason)


# -- keystones --------------------------------------------------------------------------------
def add_keystone(
    store: Store,
    content: str,
    *,
    category: str = "other",
    confidence: float | None = None,
    importance: float | None = None,
    source: str = "user_stated",
    sensitivity: str = "low",
    supersedes: str | None = None,
    page_id: str | None = None,
    namespace: str | None = None,
    proposed: bool = False,
    actor: Actor | None = None,
    origin: str | None = None,
    extensions: dict[str, Any] | None = None,
    created_at: str | None = None,
    last_confirmed_at: str | None = None,
    idempotency_key: str | None = None,
) -> WriteResult:
    """A keystone page; with `supersedes`, the old keystone becomes superseded and is linked."""
    _check_enum("category", category, vocab.KEYSTONE_CATEGORIES)
    _check_enum("source", source, vocab.KEYSTONE_SOURCES)
    _check_enum("sensitivity", sensitivity, vocab.SENSITIVITIES)
    for name, value in (("confidence", confidence), ("importance", importance)):
        if value is not None and not 0 <= value <= 1:
            raise UsageError(f"{name} must be between 0 and 1, not {value}")
    if not content.strip():
        raise UsageError("a keystone needs content")
    record: dict[str, Any] = {"category": category, "source": source}
    if confidence is not None:
        record["confidence"] = confidence
    if importance is not None:
        record["importance"] = importance
    if supersedes is not None:
        record["supersedes"] = supersedes
    if created_at:
        record["created_at"] = created_at
    if last_confirmed_at:
        record["last_confirmed_at"] = last_confirmed_at
    origin = origin or vocab.ORIGIN_FOR_SOURCE[source]
    with store.locked():
        old: Revision | None = None
        if supersedes is not None:
            store.check_head_file(supersedes)
            old = store.current(supersedes)
            if old.state.type != "keystone":
                raise UsageError(f"{supersedes} is a {old.state.type}, not a keystone")
            if old.state.lifecycle_status != "active":
                raise UsageError(f"keystone {supersedes} is already {old.state.lifecycle_status}")
        state = store.new_state(
            content,
            page_id=_given_id(page_id),
            type="keystone",
            title=title_from(content),
            namespace=store.default_namespace if namespace is None else namespace,
            sensitivity=sensitivity,
            origin=origin,
            review_status="proposed" if proposed else "affirmed",
            epistemic_status="asserted" if proposed else "affirmed",
            # A proposal is data until the person accepts it (profile_ops.accept_proposal);
            # what a model or an importer says is data (the Paged seed: model-derived material
            # is data); what the person states about how to work may guide a model.
            instruction_policy="advisory" if category in vocab.ADVISORY_CATEGORIES
            and not proposed and (actor is None or actor.actor_type == "user") else "data_only",
            record=record,
            extensions=dict(extensions or {}),
        )
        result = store.write_page(state, actor=actor, idempotency_key=idempotency_key)
        # A proposal changes nothing about the keystone it would replace until it is accepted
        # (profile_ops.accept_proposal does the superseding then).
        if old is not None and result.status == "created" and not proposed:
            store.supersede(result.page_id, old.page_id, actor=actor)
        return result



def confirm_keystone(store: Store, page_id: str, *, actor: Actor | None = None) -> WriteResult:
    revision = store.current(page_id)
    if revision.state.type != "keystone":
        raise UsageError(f"{page_id} is a {revision.state.type}, not a keystone")
    return store.revise(
        page_id,
        changes={"record": {"last_confirmed_at": now_iso()}, "epistemic_status": "affirmed"},
        actor=actor,
        note="re-affirmed",
    )


def keystone_entries(store: Store, *, include_all: bool = False) -> list[Entry]:
    if include_all:
        return store.entries(types=("keystone",), review=None)
    return store.entries(types=("keystone",), statuses=("active",))


# -- timeline ---------------------------------------------------------------------------------
def add_timeline_event(
    store: Store,
    date: str,
    summary: str,
    *,
    category: str = "other",
    source: str = "user_stated",
    confidence: float | None = None,
    page_id: str | None = None,
    namespace: str | None = None,
    actor: Actor | None = None,
    extensions: dict[str, Any] | None = None,
    idempotency_key: str | None = None,
) -> WriteResult:
    import re

    from pcp_cli.model.dates import date_problem

    problem = date_problem(date)
    if problem is None and (not re.match(vocab.PARTIAL_DATE_PATTERN, date)
                            or not _valid_partial_date(date)):
        problem = "is not YYYY, YYYY-MM or YYYY-MM-DD"
    if problem is not None:
        raise UsageError(f"the date {date} {problem}", hint="a date is YYYY, YYYY-MM or "
                         "YYYY-MM-DD, e.g. 2024-02-29")
    _check_enum("category", category, vocab.TIMELINE_CATEGORIES)
    _check_enum("source", source, vocab.KEYSTONE_SOURCES)
    if confidence is not None and not 0 <= confidence <= 1:
        raise UsageError(f"confidence must be between 0 and 1, not {confidence}")
    if not summary.strip():
        raise UsageError("a timeline event needs a summary")
    record: dict[str, Any] = {"date": date, "category": category, "source": source}
    if confidence is not None:
        record["confidence"] = confidence
    state = store.new_state(
        summary,
        page_id=_given_id(page_id),
        type="timeline_event",
        title=title_from(summary),
        namespace=store.default_namespace if namespace is None else namespace,
        origin=vocab.ORIGIN_FOR_SOURCE[source],
        record=record,
        extensions=dict(extensions or {}),
    )
    return store.write_page(state, actor=actor, idempotency_key=idempotency_key)


def _valid_partial_date(value: str) -> bool:
    from datetime import date

    parts = [int(p) for p in value.split("-")]
    try:
        date(parts[0], parts[1] if len(parts) > 1 else 1, parts[2] if len(parts) > 2 else 1)
    except ValueError:
        return False
    return True


# -- profile ----------------------------------------------------------------------------------
def profile_revision(store: Store) -> Revision | None:
    """The store's profile page (affirmed, active), if there is one."""
    entries = store.entries(types=("profile",), statuses=("active",))
    if not entries:
        return None
    preferred = [e for e in entries if e.page_id == PROFILE_PAGE_ID] or entries
    page_id = preferred[0].page_id
    assert page_id
    return store.current(page_id)


def set_profile_field(store: Store, field: str, value: str, *,
                      actor: Actor | None = None) -> WriteResult:
    """`pcp profile set`: a hand-set field, pinned so distillation never overwrites it."""
    _check_enum("field", field, vocab.PROFILE_FIELDS)
    parsed: Any = value.strip()
    if field in vocab.PROFILE_LIST_FIELDS:
        parsed = [item.strip() for item in value.split(";") if item.strip()]
    with store.locked():
        current = profile_revision(store)
        if current is None:
            record = {} if field == "summary" else {field: parsed}
            record["pinned"] = [field]
            state = store.new_state(
                parsed if field == "summary" else "",
                page_id=PROFILE_PAGE_ID,
                type="profile",
                title="Profile",
                record=record,
            )
            if store.page_exists(PROFILE_PAGE_ID):
                return store.revise(PROFILE_PAGE_ID, changes={
                    "content": state.content, "record": record, "lifecycle_status": "active"},
                    actor=actor, note=f"set {field}")
            return store.write_page(state, actor=actor)
        pinned = sorted(set(current.state.record.get("pinned", [])) | {field})
        changes: dict[str, Any] = {"record": {"pinned": pinned}}
        if field == "summary":
            changes["content"] = parsed
        else:
            changes["record"][field] = parsed
        return store.revise(current.page_id, changes=changes, actor=actor, note=f"set {field}")


# -- helpers ----------------------------------------------------------------------------------
def _check_enum(name: str, value: str, options: Sequence[str]) -> None:
    if value not in options:
        raise UsageError(f"unknown {name} {value!r}", hint=f"one of: {', '.join(options)}")


def _given_id(page_id: str | None) -> str:
    """An id the caller chose (checked, so `--id ''` is refused), or '' for a new one."""
    if page_id is None:
        return ""
    from pcp_cli.model.ids import check_id

    return check_id(page_id, "page id")


def require_page(store: Store, page_id: str) -> Revision:
    try:
        return store.current(page_id)
    except InvalidInput:
        raise NotFound(f"page {page_id!r} does not exist") from None


__all__ = [
    "MAX_FILE_BYTES",
    "Actor",
    "Entry",
    "PageState",
    "Store",
    "WriteResult",
]


# -- git multi-device sync (pcp_cli/sync/) -------------------------------------------------------


# status, resolve and sync; the git logic itself lives in pcp_cli/sync/.
def sync_status(store: Store) -> dict[str, Any]:
    """`pcp status --json`: hand edits, diverged pages, conflicts, missing heads, git state."""
    from pcp_cli.sync.sync import status

    data = status(store)
    data["search_engine"] = search_engine(store)
    return data


def search_engine(store: Store) -> dict[str, Any]:
    """Which search engine this device uses for the store: `{engine, chosen_by, index}`, where
    `chosen_by` is "default", "PCP_INDEX_ENGINE" or the choice file's store-relative path, and
    `index` is what the index folder holds (`index.index_state`: which engine built it, and
    whether this one can read it), and `build` the build running now (`{running, pid,
    engine, started_at, phase, documents_done, documents_total, percent}`) or None."""
    from pcp_cli.index import chosen_engine, index_state
    from pcp_cli.query.index_build import current_build
    from pcp_cli.query.index_sync import index_dir

    name, where = chosen_engine(index_dir(store))
    if where not in ("default", "PCP_INDEX_ENGINE"):
        where = os.path.relpath(where, store.root).replace(os.sep, "/")
    return {"engine": name, "chosen_by": where, "index": index_state(index_dir(store)),
            "build": current_build(store)}


def merge_proposal(store: Store, page_id: str) -> str:
    """The text `pcp resolve --edit` opens: every head's body, clearly delimited."""
    from pcp_cli.sync.heads import merge_proposal as proposal

    store.current(page_id)
    return proposal(store, page_id)


def resolve_page(store: Store, page_id: str, *, keep: str | None = None,
                 content: str | None = None) -> dict[str, Any]:
    """`pcp resolve`: a revision whose parents are all the page's heads."""
    from pcp_cli.sync.git import find_repo
    from pcp_cli.sync.heads import resolve

    return resolve(store, page_id, keep=keep, content=content, repo=find_repo(store.root))


def sync_store(store: Store, *, remote: str | None = None,
               message: str | None = None) -> dict[str, Any]:
    """`pcp sync`: record hand edits, commit, pull with the merge driver, repair, push."""
    from pcp_cli.sync.sync import sync

    return sync(store, remote=remote, message=message)


def setup_git(store: Store, *, create: bool = False) -> dict[str, Any] | None:
    """`pcp init [--git]`: .gitignore, .gitattributes and the merge driver (None: no git)."""
    from pcp_cli.sync.setup import setup_git as setup

    return setup(store.root, create=create)


def merge_driver_problem(store: Store) -> str | None:
    """`pcp doctor`: why the git merge driver registered for this clone no longer runs (its
    venv deleted, pcp uninstalled), or None."""
    from pcp_cli.sync.setup import driver_problem

    return driver_problem(store.root)


def merge_head_file(base: str, ours: str, theirs: str, path: str) -> None:
    """`pcp merge-file %O %A %B %P`, the git merge driver: result in `ours`; NotMerged if not."""
    from pathlib import Path

    from pcp_cli.sync.driver import merge_files

    merge_files(Path(base), Path(ours), Path(theirs), path)


def strip_merge_proposal(text: str) -> str:
    """What a person kept of a `pcp resolve --edit` proposal (pcp's comment lines removed)."""
    from pcp_cli.sync.heads import strip_proposal

    return strip_proposal(text)


# -- search, timeline, stats, scopes, capabilities (pcp_cli/query/) --------------------------
def search(store: Store, request: SearchRequest | str, /, **options: Any) -> dict[str, Any]:
    """SearchPages (`pcp search` / `pcp_search`): `{schema_version, query, count,
    filters_applied, results, next_cursor}` for a `SearchRequest` (pcp_cli/model/search_request.py:
    every option, checked when the request is made), or for a query and the request's options
    as keywords (`mode` then defaults to "text").

    The §4.2 safeguards run here: limit 10 by default, capped at 25 (the cap is reported);
    current, affirmed pages only unless `include_superseded` or `filters.lifecycle_status`;
    `high` sensitivity only with `include_sensitive`; pages never classified included
    (labelled) unless `include_unclassified` is False (an AI client's read: then only with
    `include_sensitive`, as a `high` page); scopes (None = all, [] = none), types and every
    filter applied before ranking; `suppressed` page ids never returned nor counted.
    """
    from pcp_cli.query.pages import search_pages

    request = search_request(request, **options)
    refuse_damaged(store)  # a replaced folder is damage, never "no results"
    return search_pages(store, request)


def search_request(request: SearchRequest | str, /, **options: Any) -> SearchRequest:
    """`request` as a SearchRequest: itself, or one made of a query and keyword options
    (`mode` "text" unless given). Raises UsageError for an option that is not valid."""
    if isinstance(request, SearchRequest):
        if options:
            return request.replace(**options)
        return request
    options.setdefault("mode", "text")
    return SearchRequest(request, **options)


def as_of_view(store: Store, as_of: str | None) -> Any:
    """The store itself, or a read-only view of it as of `as_of` (`--as-of DATE|DATETIME`):
    every read function here accepts either."""
    from pcp_cli.query.asof import view

    return view(store, as_of)


def related(store: Store, page_id: str, *, types: Sequence[str] = (), depth: int = 1,
            scopes: Sequence[str] | None = None, include_superseded: bool = False,
            include_sensitive: bool = False, suppressed: frozenset[str] = frozenset(),
            as_of: str | None = None, include_unclassified: bool = True) -> dict[str, Any]:
    """`pcp related`: the pages PAGE's relations reach within `depth` steps, both directions.
    `include_unclassified=False` treats pages without a sensitivity as high (MCP clients)."""
    from pcp_cli.query.related import related as run

    return run(as_of_view(store, as_of), page_id, types=types, depth=depth, scopes=scopes,
               include_superseded=include_superseded, include_sensitive=include_sensitive,
               include_unclassified=include_unclassified, suppressed=suppressed)


def diff_revisions(store: Store, page_id: str, rev_a: str | None = None,
                   rev_b: str | None = None) -> dict[str, Any]:
    """`pcp diff`: what changed between two revisions (default: the head and its parent)."""
    from pcp_cli.query.related import diff_revisions as run

    return run(store, page_id, rev_a, rev_b)


def timeline(store: Store, *, from_: str | None = None, to: str | None = None,
             query: str | None = None, limit: int | None = None,
             scopes: Sequence[str] | None = None,
             suppressed: frozenset[str] = frozenset(), cursor: str | None = None,
             as_of: str | None = None, include_sensitive: bool = False,
             include_unclassified: bool = True) -> dict[str, Any]:
    """`pcp timeline list` / `pcp_get_timeline`: `{schema_version, count, filters_applied,
    events, next_cursor}`, v1 timeline_event objects ordered by (partial) date. Sensitivity as
    in `search`: `high` only with `include_sensitive`; unclassified events unless
    `include_unclassified` is False (an AI client's read)."""
    from pcp_cli.query.search import catalog_sensitivities
    from pcp_cli.query.timeline import check_request, collect_kept
    from pcp_cli.query.timeline import timeline as run

    sensitivities = catalog_sensitivities(include_sensitive, include_unclassified)

    view = as_of_view(store, as_of)
    collected = None
    if isinstance(view, Store):  # kept while the timeline events' catalog rows are unchanged
        check_request(from_, to, limit)
        chosen = (None if scopes is None else tuple(scopes),
                  None if sensitivities is None else tuple(sensitivities))
        collected = _kept_while(view, ("timeline", *chosen), ("timeline_event",),
                                lambda: collect_kept(view, scopes=scopes,
                                                     sensitivities=sensitivities))
    data = run(view, from_=from_, to=to, query=query, limit=limit,
               scopes=scopes, suppressed=suppressed, cursor=cursor,
               include_sensitive=include_sensitive,
               include_unclassified=include_unclassified, collected=collected)
    data["filters_applied"]["as_of"] = _stamp(as_of)
    return data


def stats(store: Store, *, scopes: Sequence[str] | None = None,
          suppressed: frozenset[str] = frozenset(), as_of: str | None = None,
          statuses: Sequence[str] | None = None, include_sensitive: bool = False,
          include_unclassified: bool = True) -> dict[str, Any]:
    """`pcp stats` / `pcp_stats`: counts by type, origin, namespace, lifecycle + time range
    (of pages in `statuses` only, when given), counted in SQL, with the `filters_applied` of
    what was counted. Sensitivity as in `search` and `timeline`."""
    from pcp_cli.query.stats import stats as run

    data = run(as_of_view(store, as_of), scopes=scopes, suppressed=suppressed,
               statuses=statuses, include_sensitive=include_sensitive,
               include_unclassified=include_unclassified)
    data["filters_applied"]["as_of"] = _stamp(as_of)
    return data


def _stamp(as_of: str | None) -> str | None:
    from pcp_cli.query.asof import parse_as_of

    return None if as_of is None else parse_as_of(as_of)


def list_scopes(store: Store, *, scopes: Sequence[str] | None = None,
                permissions: Any = None, limit: int | None = None,
                cursor: str | None = None, suppressed: frozenset[str] | None = None,
                sensitivities: Sequence[str | None] | None = None) -> dict[str, Any]:
    """`pcp scopes` / ListScopes: `{scopes: [{namespace, display_name, owner_id, visibility,
    permissions, pages, last_activity}], next_cursor}`, from the catalog alone (one SQL pass).
    `permissions(namespace)` gives the caller's {read, write, sensitive} (default: all).
    With `suppressed` (an MCP client's), the counts are of what that reader can read: active
    pages of `sensitivities` only, without the suppressed ones."""
    from pcp_cli.query.stats import list_scopes as run

    return run(store, scopes=scopes, permissions=permissions, limit=limit, cursor=cursor,
               suppressed=suppressed, sensitivities=sensitivities)


def capabilities(store: Store, *, operations: Sequence[str] | None = None) -> dict[str, Any]:
    """`pcp capabilities` / DescribeCapabilities. `operations`: the protocol operations the
    calling front end really offers (derived from its command or tool table)."""
    from pcp_cli.query.stats import capabilities as run

    return run(store, operations=operations)


def offered_operations(names: Sequence[str], *, front_end: str) -> list[str]:
    """The protocol operations a front end really offers, from its own command names
    (`front_end="cli"`) or tool names (`"mcp"`): capabilities never claim more."""
    from pcp_cli.query.stats import OPERATION_COMMANDS, OPERATION_TOOLS, operations_offered

    return operations_offered(names, OPERATION_TOOLS if front_end == "mcp"
                              else OPERATION_COMMANDS)


def index_store(store: Store, *, rebuild: bool = False, progress: Any = None,
                text: bool = True, vectors: bool | None = None,
                rebuild_vectors: bool | None = None,
                vector_progress: Any = None, engine: str | None = None) -> dict[str, Any]:
    """`pcp index [--rebuild] [--engine NAME]`: bring the search index and the semantic vectors
    up to date (or build them from scratch).

    `engine` ("whoosh" or "tantivy") records this device's search engine in the index folder
    and rebuilds the index with it when it is not already the one in use; UsageError for an
    unknown name, EngineUnavailable (exit status 7) when its package is not installed, both
    before anything is written. A build of the other engine in progress (the background one
    the first search on a big store starts) is stopped and replaced, and the report says so
    under `replaced_build`; while this builds, it holds the build lock and keeps the state
    `pcp status` shows (query/index_build.py).

    Returns `{rebuilt, reason, updated, removed, stale, documents, engine, vectors}`: the text
    index's
    report, and under `vectors` the vector index's `{rebuilt, reason, embedded, fields_only,
    removed, stale, documents, chunks, model}` — or `{installed: false, hint}` without the
    semantic extra, `{installed: true, skipped: true}` with it and `vectors=False`.
    `vectors=None` means "if the extra is installed"; `rebuild_vectors=None` follows `rebuild`.
    `progress(n)` / `vector_progress(n)` are called during a rebuild.
    """
    from pcp_cli.errors import IndexUnavailable
    from pcp_cli.semantic import INSTALL_HINT, installed

    replaced = None
    held: Any = contextlib.nullcontext()
    if engine is not None and text:
        from pcp_cli.index import choose_engine
        from pcp_cli.query import index_build
        from pcp_cli.query.index_sync import close_all, index_dir

        engine = choose_engine(index_dir(store), engine)
        close_all()  # an index this process holds open may be the other engine's
        # A build of the other engine in progress (the first search's, in the background) is
        # stopped and replaced; one of this engine is waited for briefly, then exit 7.
        running = index_build.current_build(store)
        if running is not None and running.get("engine") != engine:
            replaced = index_build.stop_build(store)
        held = index_build.building(store, engine, wait=10.0)
    with held as building:
        # Comparing every file's content hash, not only its stat: an edit that kept size,
        # mtime and ctime (only a clock change makes one) is picked up (and recorded) here.
        if building is not None:
            building.phase("catalog")
        store.refresh("verify")
        if building is not None:
            building.phase("index", store.catalog.count())
            progress = _both(progress, building.progress)
        data = _index_text(store, rebuild, progress) if text else {}
    if replaced is not None:
        data["replaced_build"] = {key: replaced[key] for key in
                                  ("pid", "engine", "started_at", "phase", "documents_done",
                                   "documents_total", "percent")}
    if vectors is None:
        vectors = installed()
    if not vectors:
        data["vectors"] = ({"installed": True, "skipped": True} if installed()
                           else {"installed": False, "hint": INSTALL_HINT})
        return data
    from pcp_cli.query.vector_sync import catch_up as vectors_catch_up
    from pcp_cli.query.vector_sync import open_vectors

    with open_vectors(store) as (vix, embedder):
        vreport = vectors_catch_up(store, vix, embedder,
                                   force_rebuild=rebuild if rebuild_vectors is None
                                   else rebuild_vectors, progress=vector_progress,
                                   count=True)
    if vreport.stale:
        raise IndexUnavailable("The vector index is being written by another pcp process.",
                               hint="Wait for it to finish and run `pcp index` again.")
    data["vectors"] = vreport.to_dict()
    return data


def describe_build(build: dict[str, Any]) -> str:
    """A phrase for people about a build `search_engine()["build"]` or `replaced_build`
    names."""
    from pcp_cli.query.index_build import describe

    return describe(build)


def _both(first: Any, second: Any) -> Any:
    """One progress callback calling two (the first may be None)."""
    if first is None:
        return second

    def both(done: int) -> None:
        first(done)
        second(done)
    return both


def _index_text(store: Store, rebuild: bool, progress: Any) -> dict[str, Any]:
    """The text index's part of `index_store`: its report and the engine that holds it."""
    from pcp_cli.errors import IndexUnavailable
    from pcp_cli.index import engine_of
    from pcp_cli.query.index_sync import catch_up, open_index

    with open_index(store) as ix:
        report = catch_up(store, ix, force_rebuild=rebuild, progress=progress)
        engine_used = engine_of(ix)
        if report.stale:
            raise IndexUnavailable(
                "The search index is being written by another pcp process.",
                hint="Wait for it to finish and run `pcp index` again.")
        report.documents = ix.doc_count()
    data = report.to_dict()
    data["engine"] = engine_used
    return data


def watch_files(store: Store, *, background_scan: bool = False) -> bool:
    """For a long-lived process (`pcp serve`): watch the folders under pages/ (inotify) so a
    refresh skips the stat scan of every head file while nothing moved, and looks only at the
    files named after a change. False where that cannot be trusted (not Linux, a network file
    system): every refresh then scans, as without it. `background_scan`: the once-a-minute
    full scan (the safety net) runs in a thread of its own, not in a call. See
    pcp_cli.store.watch."""
    from pcp_cli.store.watch import keep_scanning, watch

    if not watch(store.layout.pages):
        return False
    if background_scan:
        root = store.root
        keep_scanning(store.layout.pages, lambda: Store.open(root, readonly=True))
    return True


def search_before_index(store: Store, request: SearchRequest) -> dict[str, Any] | None:
    """`pcp search` on a large store with no index yet (a fresh clone): start the build in the
    background and answer from a bounded, unranked scan of the files, with every safeguard of
    `search` (see pcp_cli.query.first_answer). None when the usual `search` should run; the
    store need not be refreshed first (refresh it before that `search`)."""
    from pcp_cli.query.index_sync import index_missing as missing

    if not missing(store):  # the usual case: no need to load the scan's code
        return None
    from pcp_cli.query.first_answer import answer

    return answer(store, request)


def index_missing(store: Store) -> bool:
    """True when the store has no search index yet: the next search builds it (say so first,
    on a large store it takes a while)."""
    from pcp_cli.query.index_sync import index_missing as missing

    return missing(store)


def vectors_missing(store: Store) -> bool:
    """True when the store has no semantic vectors yet (the next semantic search embeds it)."""
    from pcp_cli.query.vector_sync import vectors_exist

    return not vectors_exist(store)


def index_pages_count(store: Store) -> int:
    """How many pages a rebuild indexes (for a progress bar's total)."""
    return store.catalog.count()


def after_import(store: Store) -> None:
    """Called by `pcp import` after it wrote: bring the search index up to date now, so the
    first search after a large import does not pay for it. Only if the index already exists
    (a store nobody searches never builds one)."""
    from pcp_cli.errors import IndexUnavailable, PcpError
    from pcp_cli.query.index_sync import catch_up, index_dir, open_index

    if (index_dir(store) / "meta.json").exists():
        try:
            with open_index(store) as ix:
                catch_up(store, ix)
        except IndexUnavailable:
            pass  # the import itself succeeded; the next search catches up (or says why not)
    from pcp_cli.query.vector_sync import vectors_exist
    from pcp_cli.semantic import installed

    if vectors_exist(store) and installed():
        from pcp_cli.query.vector_sync import catch_up as vectors_catch_up
        from pcp_cli.query.vector_sync import open_vectors

        try:
            with open_vectors(store) as (vix, embedder):
                vectors_catch_up(store, vix, embedder)
        except PcpError:
            pass  # the same: the next semantic search catches up (or says why not)


# -- import (pcp import) ----------------------------------------------------------------------
# The source parsers live in pcp_cli.adapters; the writer turns their items into pages. Both are
# imported lazily so that light commands never load ijson.
IMPORT_FORMATS = ("auto", "archive", "chatgpt", "claude", "markdown", "claude_code", "codex")


def import_path(
    store: Store,
    path: str | os.PathLike[str],
    *,
    format: str = "auto",  # noqa: A002 - mirrors the CLI's --format
    namespace: str | None = None,
    dry_run: bool = False,
    progress: Any = None,
) -> dict[str, Any]:
    """`pcp import`: import an export into `store` and return the summary (the --json shape).

    {"format", "dry_run", "created", "revised", "unchanged", "skipped", "failed",
     "problems": [{"source", "item", "reason", "outcome"}], "source", "namespace", "by_type",
     "proposals", "relations": {"created", "unchanged"}, "warnings"}

    `progress(bytes_done, bytes_total)` is called as the export is read. Raises InvalidInput
    when the path cannot be recognised or read at all; failed items are in the summary.
    """
    _check_enum("format", format, IMPORT_FORMATS)
    from pcp_cli.adapters.importer import import_source

    summary = import_source(store, path, format=format, namespace=namespace, dry_run=dry_run,
                            progress=progress)
    if not dry_run:
        from pcp_cli.store import sources

        sources.record(store.layout.local, path, summary.get("format") or format)
        _after_import(store)
    return summary


def imported_page_id(key: str) -> str:
    """The page an importer writes for the source key `key` (`markdown:<path in the vault>`)."""
    return page_id_for_key(key)


def import_sources(store: Store) -> dict[str, dict[str, Any]]:
    """The folders earlier imports read on this device: path -> {"format", "last_import"}."""
    from pcp_cli.store import sources

    return sources.recorded(store.layout.local)


def _after_import(store: Store) -> None:
    """The search layer's catch-up hook: `after_import(store)` if this build defines one.

    Every import write goes through the Store, which records it in the catalog's change
    sequence; the index follows that sequence, so without a hook it catches up on the next
    search.
    """
    hook = globals().get("after_import")
    if callable(hook):
        hook(store)


# -- IngestEvent (pcp ingest, pcp_ingest_event; pcp_cli/store/events.py) -----------------------
INGEST_SOURCE = "ingest"
_SOURCE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"


def ingest_text(
    store: Store,
    raw: bytes,
    *,
    path: str,
    source: str = INGEST_SOURCE,
    namespace: str | None = None,
    actor: Actor | None = None,
) -> dict[str, Any]:
    """`pcp ingest`: the JSON Lines events in `raw`, stored and rolled up into their pages.

    Every line is checked before anything is written: a bad line raises InvalidInput naming
    `path` and the line, a key re-used with other content raises IdempotencyConflict, and the
    store is left as it was. Returns the report (`{source, events, pages, conversations,
    results, conflicts}`).
    """
    from pcp_cli.model.ingest import parse_lines
    from pcp_cli.store.events import ingest

    _check_source(source)
    if namespace is not None:
        _check_namespace_arg(namespace)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InvalidInput(f"not valid UTF-8 (byte {exc.start})", path=path, line=line,
                           hint="save the events as UTF-8") from None
    events = list(parse_lines(text.removeprefix("\ufeff"), path))
    report = ingest(store, events, source=source, actor=actor or store.user,
                    origin="recorded", namespace=namespace,
                    note=f"rolled up from events ingested from {path}")
    _after_import(store)
    return report.to_dict()


def ingest_event(
    store: Store,
    event: Any,
    *,
    source: str,
    actor: Actor,
    origin: str = "recorded",
    allow_namespace: Any = None,
) -> dict[str, Any]:
    """IngestEvent for one event object (the MCP tool): `{event_id, status, idempotency_key,
    conversation_id, page_id, revision_id, namespace, page_status}`."""
    from pcp_cli.model.ingest import normalize_event
    from pcp_cli.store.events import ingest

    _check_source(source)
    item = normalize_event(event, path="event")
    report = ingest(store, [item], source=source, actor=actor, origin=origin,
                    allow_namespace=allow_namespace)
    _after_import(store)
    result = report.results[0]
    page = report.conversations[0] if report.conversations else {}
    return {
        "event_id": result["event_id"],
        "status": result["status"],
        "idempotency_key": result["idempotency_key"],
        "conversation_id": result.get("conversation_id"),
        "page_id": page.get("page_id"),
        "revision_id": page.get("revision_id"),
        "namespace": page.get("namespace"),
        "page_status": page.get("status"),
    }


def ingest_event_schema() -> dict[str, Any]:
    """The published schema of one ingested event (what `pcp_ingest_event` advertises)."""
    from pcp_cli.model.ingest import ingest_schema

    return ingest_schema()


def _check_source(source: str) -> None:
    import re

    if not re.match(_SOURCE_PATTERN, source):
        raise UsageError(f"source {source[:80]!r} is not a valid source name",
                         hint="lowercase letters, digits and . _ : -, e.g. 'ingest' or "
                         "'my-host'")


def _check_namespace_arg(namespace: str) -> None:
    from pcp_cli.store.layout import check_namespace

    try:
        check_namespace(namespace)
    except InvalidInput as exc:
        raise UsageError(exc.message, hint=exc.hint) from None


# -- profile operations: export, distill, review queue (pcp_cli/profile_ops.py) ---------------
from pcp_cli.profile_ops import (  # noqa: E402
    EXPORT_FORMATS,
    PROFILE_FORMATS,
    accept_proposal,
    agents_md_export,
    distill_profile,
    export_archive,
    export_text,
    micro_prompt_export,
    micro_prompt_text,
    profile_markdown_text,
    profile_object,
    profile_without_catalog,
    reject_proposal,
    review_queue,
    write_agents_md,
)

__all__ += [
    "EXPORT_FORMATS",
    "PROFILE_FORMATS",
    "accept_proposal",
    "agents_md_export",
    "distill_profile",
    "export_archive",
    "export_text",
    "micro_prompt_export",
    "micro_prompt_text",
    "profile_markdown_text",
    "profile_object",
    "profile_without_catalog",
    "propose_keystone",
    "reject_proposal",
    "review_queue",
    "write_agents_md",
]


def propose_keystone(store: Store, content: str, *, actor: Actor | None = None,
                     **options: Any) -> WriteResult:
    """A keystone that waits in the review queue until the person accepts it.

    Takes the options of `add_keystone`. A proposal that names `supersedes` changes nothing
    about the old keystone until it is accepted.
    """
    return add_keystone(store, content, proposed=True, actor=actor, **options)


# -- proposals from the person's own words (pcp_cli/propose_ops.py) -------------------------
def propose(store: Store, *args: Any, **options: Any) -> Any:
    """`pcp propose`: see `propose_ops.propose`. Imported here, not at the top: compiling the
    extractor's patterns costs ~100 ms, which no other command should pay."""
    from pcp_cli.propose_ops import propose as run

    return run(store, *args, **options)


__all__ += ["llm_extractor", "propose"]


def llm_extractor(url: str, *, model: str | None = None, api_key: str | None = None,
                  max_calls: int = 50, timeout: float = 60.0, on_plan: Any = None) -> Any:
    """The `extractor` for `propose` that asks a model behind an OpenAI-compatible endpoint
    (pcp_cli/extract/llm.py); `on_plan` is told the calls and input size before the first."""
    from pcp_cli.extract.llm import LlmSettings, model_extractor

    return model_extractor(LlmSettings(url=url, model=model or "default", api_key=api_key,
                                       max_calls=max_calls, timeout=timeout), on_plan=on_plan)


def profile_text(store: Store, format: str = "json", *,
                 scopes: Sequence[str] | None = None) -> dict[str, Any] | str:
    """`pcp_get_profile`: the strict v1 profile (json) or the markdown / micro_prompt text.

    `scopes` None means every namespace; an empty list means none (an empty profile).
    The rendering is kept per store, format and scopes while the catalog rows of its material
    (`_profile_material`) are unchanged (`_kept_while`), so a call on an unchanged profile costs
    a look-up, not a read of every keystone.
    """
    if format not in PROFILE_FORMATS:
        raise UsageError(f"unknown format {format!r}", hint=f"one of: {', '.join(PROFILE_FORMATS)}")
    if scopes is not None and not scopes:
        from pcp_cli.render import EMPTY, profile_markdown

        if format == "json":
            return {"schema_version": "1.0"}
        return EMPTY if format == "micro_prompt" else profile_markdown(None, [], [])
    chosen = tuple(scopes or ())
    if not isinstance(store, Store):  # a view as of a past moment, or a fresh clone's peek
        return _render_profile(store, format, chosen)
    import copy

    return copy.deepcopy(_kept_while(store, ("profile", format, chosen),
                                     _profile_material(format),
                                     lambda: _render_profile(store, format, chosen)))


def _kept_while(store: Store, key: tuple[Any, ...], types: tuple[str, ...],
                compute: Any) -> Any:
    """`compute()`, kept per store and `key` while the catalog rows of `types` are unchanged.

    For what depends only on those rows and the immutable revisions they name (a profile
    rendering, the timeline's events): a look-up of the catalog's change sequence when nothing
    was written, one count over the rows of `types` when something was. Not kept while a row
    of `types` is a hand edit waiting to be recorded (reading it reads the revisions folder).
    The caller must not change what is returned (copy it before handing it out).
    """
    full = (str(store.root), store.catalog.identity(), *key)
    seq = store.catalog.seq()
    with _KEPT_LOCK:
        kept = _KEPT.get(full)
    if kept is not None and kept[0] == seq:
        return kept[2]
    material = store.catalog.type_stamp(types)
    value = kept[2] if kept is not None and kept[1] == material else compute()
    with _KEPT_LOCK:
        if material[2]:
            _KEPT.pop(full, None)
        else:
            _KEPT[full] = (seq, material, value)
            while len(_KEPT) > _KEEP:
                del _KEPT[next(iter(_KEPT))]
    return value


def _render_profile(store: Any, format: str, scopes: tuple[str, ...]) -> dict[str, Any] | str:
    if format == "json":
        return profile_object(store, scopes=scopes)
    if format == "micro_prompt":
        return micro_prompt_text(store, scopes=scopes)
    return profile_markdown_text(store, scopes=scopes)


def _profile_material(format: str) -> tuple[str, ...]:
    """The page types a profile rendering reads (profile_ops reads no other page): each
    rendering depends only on their catalog rows and the immutable revisions those name."""
    return ("profile", "keystone", "timeline_event") if format == "markdown" else (
        "profile", "keystone")


# (store root, catalog identity, *key) -> (catalog seq, type stamp, value): see _kept_while.
_KEPT: dict[tuple[Any, ...], tuple[int, tuple[int, int, bool], Any]] = {}
_KEEP = 32
_KEPT_LOCK = threading.Lock()


# -- files and client grants ------------------------------------------------------------------
def write_file(path: os.PathLike[str] | str, data: str) -> None:
    """Write a file outside the store crash-safely (temp file, fsync, rename): `--out`."""
    from pathlib import Path

    from pcp_cli.store.atomic import write_atomic

    write_atomic(Path(path), data)


def client_grants(store: Store) -> dict[str, Any]:
    """The `clients` section of `pcp.yaml` as written (client id -> grant mapping)."""
    return dict(store.manifest.clients)


def set_client_grants(store: Store, clients: dict[str, Any]) -> None:
    """Replace the `clients` section of `pcp.yaml` (`pcp grant add|remove`), atomically and
    under the store's writer lock, keeping the rest of the file and its comments."""
    from pcp_cli.store.manifest import read_manifest, replace_clients

    with store.locked():
        replace_clients(store.layout.manifest, clients)
        store.manifest = read_manifest(store.layout.manifest)


# -- the PCP device registry (~/.pcp/sources.json) --------------------------------------------
from pcp_cli.registry import PLACEHOLDER as REGISTRY_PLACEHOLDER  # noqa: E402,F401


def registered_sources() -> dict[str, Any]:
    """`pcp sources`: the registry's sources, global then project-local (`pcp_cli.registry`)."""
    from pcp_cli.registry import read_sources

    return read_sources()


def register_source(store: Store, entry: dict[str, Any]) -> dict[str, Any]:
    """`pcp register`: write this store's entry into `~/.pcp/sources.json` (others kept)."""
    from pcp_cli.registry import EXT, global_path, register

    ours = {**entry, "extensions": {**(entry.get("extensions") or {}),
                                    EXT: {"store_id": store.manifest.store_id,
                                          "store": str(store.root.resolve())}}}
    return register(global_path(), ours)


def unregister_source(store: Store, source_id: str | None = None) -> dict[str, Any]:
    """`pcp unregister`: remove this store's entry from `~/.pcp/sources.json`."""
    from pcp_cli.registry import global_path, unregister

    return unregister(global_path(), store.manifest.store_id, source_id)


def source_store_id(entry: dict[str, Any]) -> str | None:
    """The store_id of the pcp store a registry entry serves (None: not written by pcp)."""
    from pcp_cli.registry import store_of

    return store_of(entry)


# -- the store monitor (store/monitor.py) -------------------------------------------------------
def monitor_status(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Whether this store's monitor runs, since when, and whether commands start it."""
    from pcp_cli.config import resolve_store_root
    from pcp_cli.store import monitor

    root = resolve_store_root(path)
    return {"store": str(root), **monitor.status(root)}


def monitor_start(path: str | os.PathLike[str] | None = None, *,
                  idle_timeout: float | None = None) -> dict[str, Any]:
    """Start the store's monitor in the background and have later commands restart it."""
    from pcp_cli.config import resolve_store_root
    from pcp_cli.errors import UsageError as Unsupported
    from pcp_cli.store import monitor

    root = resolve_store_root(path)
    why = monitor.supported(root)
    if why is not None:
        raise Unsupported(why, hint="nothing changed: commands keep scanning the store")
    if idle_timeout is not None and idle_timeout <= 0:
        raise UsageError(f"--idle-timeout must be more than 0 seconds, not {idle_timeout:g}")
    if not monitor.start(root, idle_timeout=idle_timeout):
        from pcp_cli.errors import StorageFailed

        raise StorageFailed(
            "the store monitor did not start within 10 s",
            hint=f"its log is {monitor.folder(root) / 'log'}; commands keep scanning meanwhile")
    return monitor_status(root)


def monitor_stop(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Stop the store's monitor; later commands no longer start it."""
    from pcp_cli.config import resolve_store_root
    from pcp_cli.store import monitor

    root = resolve_store_root(path)
    was_running = monitor.stop(root)
    return {**monitor_status(root), "stopped": was_running}


def monitor_run(path: str | os.PathLike[str] | None = None, *,
                idle_timeout: float | None = None) -> int:
    """Be the store's monitor in this process until idle, stopped or the store goes away."""
    from pcp_cli.config import resolve_store_root
    from pcp_cli.store import monitor

    root = resolve_store_root(path)
    why = monitor.supported(root)
    if why is not None:
        raise UsageError(why)
    return monitor.run(root, idle_timeout=idle_timeout or monitor.DEFAULT_IDLE_TIMEOUT_S)
