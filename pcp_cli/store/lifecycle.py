"""Relations between pages, and a page's lifecycle: archive, supersede, delete.

A relation is an immutable file under `relations/` naming two revisions (`link` writes one;
the folder's reads, `relations` and `find_relation`, are the store's: folder.py). A
supersession and a delete each take several writes, ordered so that `pcp doctor --fix` can
finish one a crash cut short (`finish_supersede`, `finish_delete`).

These functions sit above the Store (their first argument): they write revisions through
`Store.revise` and files through the write engine's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pcp_cli.errors import StorageFailed, UsageError
from pcp_cli.model import vocab
from pcp_cli.model.ids import new_id
from pcp_cli.model.page import Actor, Relation, file_json, now_iso
from pcp_cli.store.atomic import is_temp_name, remove_file, write_new
from pcp_cli.store.store import Store, WriteResult


def set_lifecycle(store: Store, page_id: str, status: str, *, actor: Actor | None = None,
                  note: str | None = None) -> WriteResult:
    if status not in vocab.LIFECYCLE_STATUSES:
        raise UsageError(f"unknown lifecycle status {status!r}")
    return store.revise(page_id, changes={"lifecycle_status": status}, actor=actor,
                        note=note)


def link(
    store: Store,
    from_page_id: str,
    relation_type: str,
    to_page_id: str,
    *,
    actor: Actor | None = None,
    note: str | None = None,
    from_revision_id: str | None = None,
    to_revision_id: str | None = None,
    pinned: Sequence[str] = (),
) -> Relation:
    """LinkPages: a typed edge between two revisions (page ids resolve to their heads).
    `pinned`: the ends ("from", "to") the person named by their revision id."""
    if not vocab.is_relation_type(relation_type):
        raise UsageError(
            f"unknown relation type {relation_type!r}",
            hint=f"one of: {', '.join(vocab.RELATION_TYPES)}, or a namespaced type such "
            "as com.example.reviews",
        )
    with store.locked():
        store.writes.flush_for(None)  # an open batch first: the relation may name its pages
        source = store.get(from_page_id, from_revision_id)
        target = store.get(to_page_id, to_revision_id)
        existing = store.find_relation(relation_type, source.revision_id,
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
            created_by=actor or store.user,
            note=note,
            pinned=tuple(end for end in ("from", "to") if end in pinned),
        )
        write_new(store.layout.relation_path(relation.relation_id),
                  file_json(relation.to_dict()))
        store.remember_relation(relation)  # we hold the writer lock: the folder's only change
        return relation


def supersede(store: Store, new_page_id: str, old_page_id: str, *,
              actor: Actor | None = None) -> None:
    """NEW (just written) supersedes OLD. A write the disk refuses keeps NEW and says so:
    `pcp doctor --fix` finishes the supersession."""
    try:
        finish_supersede(store, new_page_id, old_page_id, actor=actor)
    except StorageFailed as exc:
        raise StorageFailed(
            f"{exc.message.split('; ')[0]}; keystone {new_page_id} is written but does not "
            f"supersede {old_page_id} yet",
            hint="check the disk, then `pcp doctor --fix` finishes the supersession",
        ) from exc


def finish_supersede(store: Store, new_page_id: str, old_page_id: str, *,
                     actor: Actor | None = None, note: str | None = None) -> Relation:
    """The second half of "NEW supersedes OLD": OLD's superseded revision, then the relation.

    Steps already done are skipped, so `pcp doctor --fix` can finish a supersession that a
    crash cut short (the relation is written last and marks it as complete).
    """
    with store.locked():
        new = store.current(new_page_id)
        old = store.current(old_page_id)
        superseded = old.revision_id
        if old.state.lifecycle_status == "active":
            store.revise(
                old_page_id,
                changes={"lifecycle_status": "superseded",
                         "record": {"superseded_by": new_page_id}},
                actor=actor,
                note=f"superseded by {new_page_id}",
                input_revision_ids=(new.revision_id,),
            )
        elif old.parent_revision_id and old.state.record.get("superseded_by") == new_page_id:
            superseded = old.parent_revision_id
        return link(store, new_page_id, "supersedes", old_page_id, actor=actor,
                    to_revision_id=superseded, note=note)


def delete(store: Store, page_id: str, *, actor: Actor | None = None) -> dict[str, Any]:
    """DeletePage: remove the head file, every revision and every relation touching it.

    The `page_deleted` event is written first and names every file to remove, so a delete
    interrupted part way is finished by `pcp doctor --fix` instead of leaving half a page.
    """
    with store.locked():
        store.writes.flush_for(None)
        store.writes.forget_listing()
        head = store.current(page_id)
        relations = store.relations(page_id)
        revision_ids = store.revision_ids(page_id)
        event = store.record_event(
            "page_deleted",
            {"page_id": page_id, "namespace": head.state.namespace,
             "revisions_removed": len(revision_ids), "relations_removed": len(relations),
             "revision_ids": revision_ids,
             "relation_ids": [relation.relation_id for relation in relations]},
            actor=actor,
        )
        try:
            finish_delete(store, page_id, revision_ids,
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


def finish_delete(store: Store, page_id: str, revision_ids: Sequence[str],
                  relation_ids: Sequence[str]) -> None:
    """Remove what a delete names (what is already gone is skipped). Takes the lock."""
    with store.locked():
        for relation_id in relation_ids:
            remove_file(store.layout.relation_path(relation_id))
        entries = store.catalog.by_page_id(page_id)
        for entry in entries:
            remove_file(store.root / entry.path)
        for revision_id in revision_ids:
            remove_file(store.layout.revision_path(page_id, revision_id))
        folder = store.layout.revision_dir(page_id)
        for leftover in folder.iterdir() if folder.exists() else ():
            if is_temp_name(leftover.name):
                leftover.unlink()
        if folder.exists() and not any(folder.iterdir()):
            folder.rmdir()
        store.catalog.record_removal(entry.path for entry in entries)
