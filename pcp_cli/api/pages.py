"""Pages: listing, finding, reading, writing, revising, linking and editing them by hand.

Each function takes an open Store, does one thing, and returns model objects or the JSON-able
dicts that `--json` and the MCP tools print. Nothing here prints or exits. The rules of the
page types of their own live beside this: `keystones`, `timeline_events`, `profile`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pcp_cli.api.checks import check_enum, given_id
from pcp_cli.errors import InvalidInput, NotFound, UsageError
from pcp_cli.model import vocab
from pcp_cli.model.lifecycle import supersedes_now
from pcp_cli.model.page import Actor, Relation, Revision, observed_time, title_from
from pcp_cli.store import lifecycle
from pcp_cli.store.catalog import Entry
from pcp_cli.store.store import Store, WriteResult
from pcp_cli.upkeep.damage import refuse_damaged

SERVED_SENSITIVITIES = vocab.SERVED_SENSITIVITIES
READ_VIEWS = ("manifest", "payload", "relations", "history", "facets", "source_spans")


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
    sensitivities: Sequence[str | None] | None = None,
) -> tuple[list[Entry], str | None]:
    """`pcp ls --limit N [--cursor C]`: one window of `list_pages`, and the next cursor.
    `sensitivities`: the values let through (None: unclassified pages), before the window is
    cut (the console's newest pages leave high sensitivity out and still show `limit`)."""
    from pcp_cli.query import cursor as cursors

    if limit is not None and (isinstance(limit, bool) or limit < 1):
        raise UsageError(f"the limit must be at least 1, not {limit}")
    request = {"types": list(types), "namespaces": list(namespaces), "statuses": list(statuses),
               "include_proposed": include_proposed, "limit": limit,
               "as_of": getattr(store, "as_of", None)}
    if sensitivities is not None:  # (absent otherwise: `pcp ls` cursors stay as they were)
        request["sensitivities"] = list(sensitivities)
    position = cursors.decode(cursor, "ls", request, store)
    if limit is not None and isinstance(store, Store):
        # The window alone, in SQL (one row more tells whether there is a next page): the
        # same rows in the same order as sorting every entry (list_pages), at any store size.
        _check_listing(types, statuses)
        refuse_damaged(store)  # a replaced folder is damage, never "0 pages"
        rows = store.entry_window(
            limit=limit + 1, offset=position, types=types or None,
            namespaces=namespaces or None, statuses=statuses or None,
            review=None if include_proposed else ("affirmed",), sensitivities=sensitivities)
        more = len(rows) > limit
        return rows[:limit], (cursors.encode("ls", request, position + limit, store)
                              if more else None)
    entries = list_pages(store, types=types, namespaces=namespaces, statuses=statuses,
                         include_proposed=include_proposed)
    if sensitivities is not None:
        entries = [e for e in entries if e.sensitivity in sensitivities]
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
        check_enum("type", value, vocab.PAGE_TYPES)
    for value in statuses:
        check_enum("status", value, vocab.LIFECYCLE_STATUSES)


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
def record_edit(store: Store, session: Any, text: str) -> WriteResult:
    """Write the edited text over the head file and record it as a hand edit (status
    "revised", or "unchanged" when it says nothing new); then drop the draft."""
    from pcp_cli.store.editing import finish, record

    result = record(store, session, text)
    finish(session)
    return result


# -- reading ----------------------------------------------------------------------------------
def read_page(store: Store, page_id: str, *, revision_id: str | None = None,
              view: str | None = None, as_of: str | None = None) -> dict[str, Any]:
    """ReadPages for one page: the whole revision, or one view of it. Says which revision.
    With `as_of`, the page as it stood then (its head revision then, its relations then)."""
    from pcp_cli.query.asof import present
    from pcp_cli.query.asof import view as as_of_view

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
    check_enum("view", view, READ_VIEWS)
    data["view"] = view
    if view == "manifest":
        data["manifest"] = revision.manifest()
    elif view == "payload":
        data["payload"] = revision.to_dict()["payload"]
    elif view == "relations":
        data["relations"] = [relation_view(store, rel) for rel in store.relations(page_id)]
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


# -- writing ----------------------------------------------------------------------------------

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
    check_enum("type", page_type, vocab.PAGE_TYPES)
    check_enum("sensitivity", sensitivity, vocab.SENSITIVITIES)
    check_enum("origin", origin, vocab.ORIGINS)
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
        page_id=given_id(page_id),
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
        check_enum("sensitivity", sensitivity, vocab.SENSITIVITIES)
        changes["sensitivity"] = sensitivity
    if tags is not None:
        changes["tags"] = list(dict.fromkeys(tags))
    if not changes:
        raise UsageError("nothing to change", hint="give new text, --title or --sensitivity")
    if origin is not None:
        check_enum("origin", origin, vocab.ORIGINS)
        changes["origin"] = origin
    return store.revise(page_id, changes=changes, expected_revision_id=expected_revision_id,
                        actor=actor, note=note)


def link_pages(store: Store, from_id: str, relation_type: str, to_id: str, *,
               note: str | None = None, actor: Actor | None = None) -> dict[str, Any]:
    """LinkPages between two pages' current revisions, or the revisions named by their ids
    (`rev_…`, pinned); returns the relation object."""
    return link(store, from_id, relation_type, to_id, note=note, actor=actor)[0].to_dict()


def relation_view(store: Any, relation: Relation) -> dict[str, Any]:
    """A relation as the relations view shows it: the stored object, and for each end pinned
    to a revision, whether that revision is its page's head now (`pinned_now`)."""
    data = relation.to_dict()
    for end in relation.pinned:
        page_id, revision_id = (relation.from_page_id, relation.from_revision_id) if \
            end == "from" else (relation.to_page_id, relation.to_revision_id)
        head = store.head_entry(page_id)
        now = head.revision_id if head is not None else None
        data.setdefault("pinned_now", {})[end] = {"revision_id": revision_id,
                                                  "is_head": now == revision_id,
                                                  "head_revision_id": now}
    return data


def link_end(store: Store, ref: str) -> tuple[str, str | None]:
    """(page id, revision id or None) of one end of a link: a page id names the page's head
    now; a revision id (`rev_…`, as relations and history name them) names that revision, to
    which the relation is then pinned. NotFound when it is neither."""
    if ref.startswith("rev_") and not store.page_exists(ref):
        owner = store.page_of_revision(ref)
        if owner is None:
            raise NotFound(f"revision {ref} does not exist",
                           hint="`pcp history PAGE` lists a page's revisions")
        return owner, ref
    return ref, None


def link_ref(store: Store, ref: str) -> str:
    """What `pcp link` takes for an end: a revision id as it is, else a page reference (an id,
    a unique prefix of one, a unique title) resolved to its page id."""
    from pcp_cli.store.refs import resolve

    if not ref.startswith("rev_") or store.page_exists(ref):
        return resolve(store, ref)
    if store.page_of_revision(ref):
        return ref
    try:
        return resolve(store, ref)  # a page titled so, however unlikely
    except NotFound:
        raise NotFound(f"no revision or page {ref}",
                       hint="`pcp history PAGE` lists a page's revisions") from None


def link(store: Store, from_id: str, relation_type: str, to_id: str, *,
         note: str | None = None, actor: Actor | None = None) -> tuple[Relation, bool]:
    """LinkPages; returns the relation and whether it is new.

    Each end is a page id (its current revision) or a revision id, which pins the relation to
    that revision: `pcp link rev_A depends_on rev_B` says A as it was then depends on B as it
    was then, whatever either page says later (`Relation.pinned`).

    A `supersedes` relation that takes effect now (model/lifecycle.supersedes_now) supersedes
    its target as `keystone add --supersedes` does: a new revision of the target, superseded
    by the source, then the relation (model/lifecycle.py says why that is the one notion).
    Supersession acts on pages: a revision id there must be its page's head.
    """
    with store.locked():
        (from_page, from_rev), (to_page, to_rev) = link_end(store, from_id), link_end(store,
                                                                                 to_id)
        source, target = store.get(from_page, from_rev), store.get(to_page, to_rev)
        pinned = tuple(end for end, rev in (("from", from_rev), ("to", to_rev)) if rev)
        if relation_type == "supersedes" and pinned:
            heads = {"from": store.current(from_page).revision_id,
                     "to": store.current(to_page).revision_id}
            named = {"from": from_rev, "to": to_rev}
            older = [end for end in pinned if named[end] != heads[end]]
            if older:
                raise UsageError(
                    f"supersedes acts on a page's current revision, and "
                    f"{named[older[0]]} is not the head of "
                    f"{from_page if older[0] == 'from' else to_page}",
                    hint="name the pages (or their head revisions) to supersede; link an "
                    "older revision with another relation type")
            pinned = ()
        if relation_type == "supersedes" and supersedes_now(source, target):
            # the relation names the revision that was superseded (the parent, if done before)
            old = target.revision_id if target.state.lifecycle_status == "active" else \
                target.parent_revision_id or target.revision_id
            before = store.find_relation(relation_type, source.revision_id, old)
            relation = lifecycle.finish_supersede(store, source.page_id, target.page_id,
                                                  actor=actor, note=note)
            return relation, before is None
        before = store.find_relation(relation_type, source.revision_id, target.revision_id)
        relation = lifecycle.link(store, source.page_id, relation_type, target.page_id,
                                  note=note, actor=actor, from_revision_id=source.revision_id,
                                  to_revision_id=target.revision_id, pinned=pinned)
        return relation, before is None


def set_lifecycle(store: Store, page_id: str, status: str, *, reason: str | None = None,
                  actor: Actor | None = None) -> WriteResult:
    return lifecycle.set_lifecycle(store, page_id, status, actor=actor, note=reason)


def require_page(store: Store, page_id: str) -> Revision:
    try:
        return store.current(page_id)
    except InvalidInput:
        raise NotFound(f"page {page_id!r} does not exist") from None
