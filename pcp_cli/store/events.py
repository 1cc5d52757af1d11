"""IngestEvent: raw events kept immutably, and the conversation pages derived from them.

An event is stored once, as `events/<yyyy>/<mm>/<event_id>.json` (the month it happened), where
`event_id` is derived from its source and idempotency key: the same key from the same source is
the same file. Sending it again with the same content changes nothing; with different content it
is an IdempotencyConflict, never a silent "unchanged" and never a second file.

Events that share a `conversation_id` roll up into one `conversation` page (a note without one
becomes a `note` page of its own). The page is derived: its text shows the messages and notes,
its `facets.source_spans` lists every event it was built from, in order (with the character
range of each shown event's text in the payload), and each revision's provenance names the
events it added. New events of the same conversation give the page a new revision; the events
stay the recoverable original.

Order of a write, under the store's writer lock: every event of the batch is checked first
(a conflict, a namespace that does not match the conversation's page, a namespace the caller may
not write) so a refused batch stores nothing; then the new event files (atomic, each published
once); then the pages (revision file, then head file). A crash between the two leaves events a
page does not list yet: sending the batch again (or re-importing the session) finishes the page.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pcp_cli.errors import IdempotencyConflict, InvalidInput, StorageFailed, StoreDamaged
from pcp_cli.model.ingest import EventInput
from pcp_cli.model.page import Actor, Event, Revision, now_iso, title_from
from pcp_cli.store.atomic import FileBatch, is_temp_name
from pcp_cli.store.layout import check_namespace
from pcp_cli.store.refresh import record_pending_edit
from pcp_cli.store.store import Store, WriteResult, page_id_for_key
from pcp_cli.store.writes import new_revision

ROLE_HEADINGS = {"user": "User", "assistant": "Assistant", "system": "System"}
# Fields of a page's head the next roll-up keeps as they are (the person's decisions).
_KEPT_FROM_HEAD = ("lifecycle_status", "review_status", "sensitivity", "visibility", "tags",
                   "instruction_policy", "epistemic_status")
# Above this many events a batch lists every stored event once instead of looking each up.
SCAN_THRESHOLD = 32
NO_TEXT_YET = ("_No message text yet: the events of this conversation so far (tool calls, tool "
               "results, reasoning) are kept as events, not shown as text._\n")


def event_id_for(source: str, key: str) -> str:
    """The id an event gets: the same source and idempotency key, the same id (and file)."""
    digest = hashlib.sha256(f"{source}\n{key}".encode()).digest()
    return "ev_" + base64.b32encode(digest).decode("ascii")[:26]


def page_key(source: str, conversation_id: str) -> str:
    """The idempotency key (and so the page id) of the page a conversation rolls up into."""
    return f"events:{source}:conversation:{conversation_id}"


class EventFiles:
    """Where stored event files are (event id -> path). Used while holding the writer lock."""

    def __init__(self, root: Path, *, scan: bool) -> None:
        self.root = root
        self.months = _month_folders(root)
        # event id -> its month folder (names only: no Path per file, a scan stays cheap)
        self._index: dict[str, Path] | None = None
        if scan:
            self._index = {}
            for folder in self.months:
                for name in os.listdir(folder):
                    if name.endswith(".json") and not is_temp_name(name):
                        self._index[name[:-5]] = folder

    def find(self, event_id: str) -> Path | None:
        if self._index is not None:
            folder = self._index.get(event_id)
            return None if folder is None else folder / f"{event_id}.json"
        for folder in self.months:
            path = folder / f"{event_id}.json"
            if path.exists():
                return path
        return None

    def add(self, event_id: str, path: Path) -> None:
        if path.parent not in self.months:
            self.months.append(path.parent)
        if self._index is not None:
            self._index[event_id] = path.parent


@dataclass
class _Member:
    """One event of a page: enough to render it and to point at it."""

    event_id: str
    kind: str
    occurred_at: str
    data: dict[str, Any]
    path: str  # store-relative


@dataclass
class _Group:
    """The events of one batch that go to one page."""

    key: str
    page_type: str  # conversation | note
    conversation_id: str | None
    namespace: str | None = None
    head: Revision | None = None
    keyed: Revision | None = None  # the newest revision the roll-up itself wrote
    members: list[_Member] = field(default_factory=list)  # the page's current events, in order
    member_ids: set[str] = field(default_factory=set)
    new: list[_Member] = field(default_factory=list)  # this batch's events the page lacks
    batch: dict[str, _Member] = field(default_factory=dict)  # every event of this batch
    received: int = 0


@dataclass
class IngestReport:
    source: str
    dry_run: bool
    received: int = 0
    stored: int = 0
    unchanged: int = 0
    pages: dict[str, int] = field(
        default_factory=lambda: {"created": 0, "revised": 0, "unchanged": 0})
    results: list[dict[str, Any]] = field(default_factory=list)
    conversations: list[dict[str, Any]] = field(default_factory=list)
    conflicts: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "dry_run": self.dry_run,
            "events": {"received": self.received, "stored": self.stored,
                       "unchanged": self.unchanged, "conflicts": len(self.conflicts)},
            "pages": dict(self.pages),
            "conversations": self.conversations,
            "results": self.results,
            "conflicts": self.conflicts,
        }


def ingest(
    store: Store,
    events: Sequence[EventInput],
    *,
    source: str,
    actor: Actor,
    origin: str = "recorded",
    namespace: str | None = None,
    allow_namespace: Callable[[str], None] | None = None,
    strict: bool = True,
    dry_run: bool = False,
    note: str | None = None,
) -> IngestReport:
    """Store `events` (from one `source`) and roll them up into their pages.

    `namespace` is where a new conversation's page goes when its events name none (default: the
    store's). `allow_namespace(ns)` raises when the caller may not write there (MCP grants).
    With `strict`, a conflicting key raises IdempotencyConflict before anything is written;
    otherwise the conflicting events are left out and listed in the report's `conflicts`.
    """
    default_ns = check_namespace(namespace or store.default_namespace)
    report = IngestReport(source=source, dry_run=dry_run, received=len(events))
    if dry_run:
        return _run(store, events, source=source, actor=actor, origin=origin,
                    default_ns=default_ns, allow_namespace=allow_namespace, strict=strict,
                    report=report, note=note)
    with store.locked():
        return _run(store, events, source=source, actor=actor, origin=origin,
                    default_ns=default_ns, allow_namespace=allow_namespace, strict=strict,
                    report=report, note=note)


def _run(store: Store, events: Sequence[EventInput], *, source: str, actor: Actor, origin: str,
         default_ns: str, allow_namespace: Callable[[str], None] | None, strict: bool,
         report: IngestReport, note: str | None) -> IngestReport:
    files = EventFiles(store.layout.events, scan=len(events) > SCAN_THRESHOLD)
    recorded = now_iso()
    seen: dict[str, EventInput] = {}
    to_write: list[Event] = []
    groups: dict[str, _Group] = {}
    placed: dict[str, _Group] = {}  # event id -> its group
    for item in events:
        event_id = event_id_for(source, item.idempotency_key)
        result: dict[str, Any] = {"event_id": event_id, "idempotency_key": item.idempotency_key,
                                  "where": item.where}
        earlier = seen.get(event_id)
        if earlier is not None:
            if earlier.content_hash != item.content_hash:
                _conflict(report, strict, item, f"the same idempotency key is used at "
                          f"{earlier.where or 'an earlier event'} with different content",
                          result)
                continue
            result["status"] = "unchanged"
            report.unchanged += 1
            report.results.append(result)
            _result_page(result, placed.get(event_id))
            continue
        stored_path = files.find(event_id)
        if stored_path is not None:
            stored = _load_event(store, stored_path)
            if stored.content_hash != item.content_hash:
                _conflict(report, strict, item, f"idempotency key {item.idempotency_key!r} was "
                          f"already used for a different event ({store.layout.rel(stored_path)})",
                          result)
                continue
            status, event, rel = "unchanged", stored, store.layout.rel(stored_path)
        else:
            occurred = item.occurred_at or recorded
            event = Event(
                event_id=event_id, kind=item.type, occurred_at=occurred, recorded_at=recorded,
                actor=actor, data=item.data,
                source_refs=(item.source_ref,) if item.source_ref else (),
                idempotency_key=item.idempotency_key, source=source,
                content_hash=item.content_hash,
            )
            path = store.layout.event_path(event_id, occurred)
            status, rel = "stored", store.layout.rel(path)
            to_write.append(event)
            files.add(event_id, path)
        seen[event_id] = item
        group = _group_for(store, groups, item, event_id, source, default_ns)
        group.received += 1
        placed[event_id] = group
        member = _Member(event_id, event.kind, event.occurred_at, event.data, rel)
        group.batch[event_id] = member
        if event_id not in group.member_ids:
            group.new.append(member)
        result["status"] = status
        report.results.append(result)
        _result_page(result, group)
        if status == "stored":
            report.stored += 1
        else:
            report.unchanged += 1
    for group in groups.values():
        if group.namespace is None:
            group.namespace = default_ns
        if allow_namespace is not None and group.new:
            allow_namespace(group.namespace)
    if report.dry_run:
        for group in groups.values():
            status = "created" if group.head is None else ("revised" if group.new else
                                                            "unchanged")
            report.pages[status] += 1
            report.conversations.append(_group_summary(group, None, status))
        return report
    _write_events(store, to_write)
    for group in groups.values():
        try:
            written = _roll_up(store, group, files, actor=actor, origin=origin, source=source,
                               note=note)
        except StorageFailed as exc:  # the events are kept: sending them again finishes
            raise StorageFailed(
                f"{exc.message.split('; ')[0]}; the events are stored ({report.stored} new) "
                f"but page {page_id_for_key(group.key)} does not hold them yet",
                hint="check the disk, then send the same events again (the same file, "
                "--source and --namespace) to finish; `pcp doctor` lists what is unfinished",
            ) from exc
        report.pages[written.status] += 1
        report.conversations.append(_group_summary(group, written, written.status))
    return report


def _conflict(report: IngestReport, strict: bool, item: EventInput, message: str,
              result: dict[str, Any]) -> None:
    if strict:
        raise IdempotencyConflict(
            f"{item.where}: {message}" if item.where else message,
            hint="send the same content to repeat an event safely, or give the new event a "
            "new idempotency_key",
        )
    report.conflicts.append({**result, "reason": message})


def _result_page(result: dict[str, Any], group: _Group | None) -> None:
    if group is not None:
        result["page_id"] = page_id_for_key(group.key)
        result["conversation_id"] = group.conversation_id


def _group_for(store: Store, groups: dict[str, _Group], item: EventInput, event_id: str,
               source: str, default_ns: str) -> _Group:
    cid = item.conversation_id
    if cid is None:  # a note on its own: a page of its own
        key, page_type = f"events:{source}:note:{event_id}", "note"
    else:
        key, page_type = page_key(source, cid), "conversation"
    group = groups.get(key)
    if group is None:
        group = _Group(key=key, page_type=page_type, conversation_id=cid)
        page_id = page_id_for_key(key)
        if store.revision_ids(page_id):
            if not store.readonly:
                # A hand edit of the head file is recorded first; a head file that cannot be
                # read stops the batch here, before any of its events is stored.
                record_pending_edit(store, page_id)
            group.head = store.current(page_id)
            group.namespace = group.head.state.namespace
            group.keyed = _keyed(store, group.head, key)
            group.members = _members_of(group.keyed)
            group.member_ids = {m.event_id for m in group.members}
        groups[key] = group
    wanted = item.namespace
    what = f"conversation {cid!r}" if cid is not None else "this note"
    if wanted is not None:
        check_namespace(wanted)
        if group.namespace is None:
            group.namespace = wanted
        elif wanted != group.namespace:
            where = f"{item.where}: " if item.where else ""
            raise InvalidInput(
                f"{where}{what} is kept in namespace {group.namespace}, not {wanted}",
                hint="leave namespace out (or give the conversation's own) for the later "
                "events of a conversation")
    return group


def _keyed(store: Store, head: Revision, key: str) -> Revision:
    """The newest revision the roll-up wrote (a person may have revised the page since)."""
    if head.idempotency_key == key:
        return head
    keyed = [rev for rev in store.revisions(head.page_id) if rev.idempotency_key == key]
    return keyed[-1] if keyed else head


def _members_of(revision: Revision) -> list[_Member]:
    spans = revision.state.facets.get("source_spans")
    members: list[_Member] = []
    for span in spans if isinstance(spans, list) else []:
        if isinstance(span, dict) and isinstance(span.get("event_id"), str):
            members.append(_Member(span["event_id"], str(span.get("kind", "")), "", {},
                                   str(span.get("path", ""))))
    return members


def _load_event(store: Store, path: Path) -> Event:
    try:
        return Event.from_dict(json.loads(path.read_bytes()))
    except (ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        raise StoreDamaged(f"{store.layout.rel(path)}: unreadable event file ({exc})",
                           hint="run `pcp validate`; the event file must be restored from a "
                           "copy (git) since events are the original record") from None


def _roll_up(store: Store, group: _Group, files: EventFiles, *, actor: Actor, origin: str,
             source: str, note: str | None) -> WriteResult:
    page_id = page_id_for_key(group.key)
    if group.head is not None and not group.new:
        if store._head_missing(group.head):  # a write killed between revision and head file
            store.writes.publish(group.head, new_revision=False)
        return WriteResult(page_id, group.head.revision_id, "unchanged")
    members = [group.batch.get(m.event_id) or _complete(store, m, files)
               for m in group.members]
    ordered = sorted(members + group.new, key=lambda m: m.occurred_at)  # stable: ties keep order
    content, spans = render(ordered, group.page_type)
    shown = [m for m in ordered if _shown(m)]
    title = _title(shown, group)
    roles = sorted({str(m.data.get("role") or m.kind) for m in shown})
    record: dict[str, Any] = {
        "source_system": source,
        "started_at": ordered[0].occurred_at,
        "updated_at": ordered[-1].occurred_at,
        "message_count": len(shown),
        "event_count": len(ordered),
        "participants": roles,
    }
    if group.conversation_id is not None:
        record["source_id"] = group.conversation_id
    refs = (f"{source}:conversation:{group.conversation_id}",) if group.conversation_id else (
        f"{source}:event:{ordered[0].event_id}",)
    fields: dict[str, Any] = {}
    if group.head is not None:
        # What the person decided about the page stays: its lifecycle (a tombstoned
        # conversation is not revived by its next events), sensitivity, tags, visibility, and a
        # title they gave it.
        held = group.head.state
        fields = {name: getattr(held, name) for name in _KEPT_FROM_HEAD}
        if group.keyed is not None and held.title != group.keyed.state.title:
            title = held.title
    state = store.new_state(
        content, page_id=page_id, type=group.page_type, title=title,
        namespace=group.namespace, origin=origin,
        integrity="derived", source_refs=refs, record=record,
        facets={"source_spans": spans}, **fields,
    )
    new_ids = [m.event_id for m in group.new]
    why = note or f"rolled up from {len(new_ids)} new event(s) of {source}"
    if group.head is None:
        return store.write_page(state, actor=actor, operation="derive", idempotency_key=group.key,
                                source_note=why, input_event_ids=new_ids)
    head = store.current(page_id)
    if head.content_hash == state.content_hash:
        return WriteResult(page_id, head.revision_id, "unchanged")
    revision = new_revision(state, actor=actor, operation="derive", parent=head,
                                   idempotency_key=group.key, note=why,
                                   input_event_ids=new_ids)
    store.writes.publish(revision)
    return WriteResult(page_id, revision.revision_id, "revised")


def _complete(store: Store, member: _Member, files: EventFiles) -> _Member:
    """A member known only from a page's spans, with its event read from its file."""
    path = store.root / member.path if member.path else None
    if path is None or not path.is_file():
        path = files.find(member.event_id)
    if path is None:
        raise StoreDamaged(f"event {member.event_id}, which a page was built from, is missing",
                           hint="restore events/ from a copy (git): events are the original "
                           "record")
    event = _load_event(store, path)
    return _Member(event.event_id, event.kind, event.occurred_at, event.data,
                   store.layout.rel(path))


def _shown(member: _Member) -> bool:
    data = member.data
    if data.get("hidden") is True or member.kind not in ("message", "note"):
        return False
    if member.kind == "message" and data.get("role") not in ROLE_HEADINGS:
        return False
    content = data.get("content")
    return isinstance(content, str) and bool(_text(content))


def _text(content: str) -> str:
    """An event's text as the page shows it: LF line ends, no trailing whitespace."""
    return content.replace("\r\n", "\n").replace("\r", "\n").rstrip()


def render(members: Sequence[_Member], page_type: str) -> tuple[str, list[dict[str, Any]]]:
    """The page body and its source spans. A shown event's span gives `start`/`end`, the
    character range of its text in the body; every other event is listed without a range."""
    parts: list[str] = []
    position = 0
    spans: list[dict[str, Any]] = []
    for member in members:
        span: dict[str, Any] = {"event_id": member.event_id, "kind": member.kind,
                                "path": member.path}
        if _shown(member):
            text = _text(str(member.data["content"]))
            if page_type == "note" and not parts:
                heading = ""
            else:
                label = ROLE_HEADINGS.get(str(member.data.get("role")), "Note") \
                    if member.kind == "message" else "Note"
                stamp = _stamp(member.occurred_at)
                heading = f"### {label} · {stamp}\n\n" if stamp else f"### {label}\n\n"
            if parts:
                parts.append("\n\n")
                position += 2
            parts.append(heading)
            position += len(heading)
            span.update(start=position, end=position + len(text))
            parts.append(text)
            position += len(text)
        spans.append(span)
    if not parts:
        return NO_TEXT_YET, spans
    return "".join(parts) + "\n", spans


def _stamp(iso: str) -> str:
    return f"{iso[:10]} {iso[11:16]}" if len(iso) >= 16 else iso


def _title(shown: Sequence[_Member], group: _Group) -> str:
    for role in ("user", None):
        for member in shown:
            if role is None or member.data.get("role") == role:
                title = title_from(_text(str(member.data["content"])))
                if title:
                    return title
    if group.conversation_id is not None:
        return f"Conversation {group.conversation_id}"[:80]
    return "Note"


def _group_summary(group: _Group, written: WriteResult | None, status: str) -> dict[str, Any]:
    return {
        "conversation_id": group.conversation_id,
        "type": group.page_type,
        "page_id": page_id_for_key(group.key),
        "revision_id": written.revision_id if written else None,
        "namespace": group.namespace,
        "status": status,
        "events": group.received,
        "new_events": len(group.new),
    }


def _event_json(event: Event) -> str:
    from pcp_cli.model.page import file_json

    return file_json(event.to_dict())


def _write_events(store: Store, events: Sequence[Event]) -> None:
    """Publish new event files as one `FileBatch`, before any page that names the events is
    written: every file written and fsynced in parallel, renamed, each folder fsynced once (it
    used to fsync each file in turn). All or nothing: a refused write leaves none of them
    (StorageFailed), and the ingest can be sent again."""
    if not events:
        return
    batch = FileBatch()
    for event in events:
        batch.add(store.layout.event_path(event.event_id, event.occurred_at), _event_json(event),
                  new=True)
    batch.publish()


def _month_folders(root: Path) -> list[Path]:
    found: list[Path] = []
    try:
        years = sorted(os.scandir(root), key=lambda e: e.name)
    except FileNotFoundError:
        return found
    for year in years:
        if not year.is_dir() or not year.name.isdigit():
            continue
        for month in sorted(os.scandir(year.path), key=lambda e: e.name):
            if month.is_dir() and month.name.isdigit():
                found.append(Path(month.path))
    return found


class ImportedFiles:
    """`.pcp/imported-sessions.json`: how each session file looked when it was last imported,
    so that a file that has not changed since (same size and modification time, and its page
    still at the revision that import left) is not read again. Local and derived: deleting it
    costs one full re-read, nothing else."""

    NAME = "imported-sessions.json"

    def __init__(self, store: Store) -> None:
        self.store = store
        self.path = store.layout.local / self.NAME
        self.changed = False
        try:
            data = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            data = {}
        self.data: dict[str, Any] = data if isinstance(data, dict) else {}

    @staticmethod
    def stamp(path: Path) -> tuple[str, int, int]:
        """The key and look of a file, taken *before* it is read (a file that grows while it
        is read then looks changed next time, never the other way round)."""
        stat = path.stat()
        return str(path.resolve()), stat.st_size, stat.st_mtime_ns

    def unchanged(self, stamp: tuple[str, int, int], fmt: str) -> int | None:
        """How many events the file held when it was imported, if it is unchanged since (its
        events are then all unchanged); None when it must be read again. A record from before
        the count was kept reads as changed, so the count reported is always true."""
        key, size, mtime_ns = stamp
        seen = self.data.get(key)
        if not isinstance(seen, dict) or (seen.get("size"), seen.get("mtime_ns"),
                                          seen.get("format")) != (size, mtime_ns, fmt):
            return None
        page_id, events = seen.get("page_id"), seen.get("events")
        entry = self.store.head_entry(page_id) if isinstance(page_id, str) else None
        if entry is None or entry.revision_id != seen.get("revision_id") or \
                not isinstance(events, int) or isinstance(events, bool):
            return None
        return events

    def record(self, stamp: tuple[str, int, int], fmt: str, page_id: str,
               revision_id: str, events: int) -> None:
        key, size, mtime_ns = stamp
        self.data[key] = {"size": size, "mtime_ns": mtime_ns, "format": fmt,
                          "page_id": page_id, "revision_id": revision_id, "events": events}
        self.changed = True

    def save(self) -> None:
        if self.changed and not self.store.readonly:
            from pcp_cli.store.atomic import write_atomic

            write_atomic(self.path, json.dumps(self.data, sort_keys=True, indent=1) + "\n")
            self.changed = False

