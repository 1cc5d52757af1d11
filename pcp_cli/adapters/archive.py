"""Import Portable Context Protocol v1 files: a `pcp.full-archive`, a bare profile, a keystone
list or a timeline list, v1.1 or v1.2.

The whole file is checked before anything is written: every object against the published v1.2
schemas (a v1.1 object is a valid v1.2 one; the v1.2 fields a v1.1 export of pcp's kept under
`extensions["org.pcp-cli.v1.2"]` are put back first, render/versions.py), plus what the store
itself requires (ids unique in the file, namespaced extension keys, values the store can hold).
An invalid file is refused as a whole with every error listed as `path/inside/json: reason`,
and nothing is written.

Then each object becomes one page, written with `Store.upsert_page` under the importer actor:
- the v1 id is kept as the page id when it is a safe id (and not already taken by a page of
  another type); otherwise the page gets a deterministic id derived from the v1 id, and the v1
  id is kept in the page's `record["v1_id"]` so that export gives it back;
- unknown (namespaced) `extensions` are kept as they are, nested values included;
- the object's hash is kept in `record["v1_import"]`: importing the same file again creates
  nothing, even after the person revised a page locally; an object that changed in the file
  revises its page.

Keystones imported from an archive stay affirmed. An archive is the person's own export of
curated, already affirmed claims, so sending them back through the review queue would ask the
person to re-approve their own data; the review queue is for claims that *other* importers and
AI clients propose. Keystones whose v1 status is `deleted` are not imported (they are counted
as skipped).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from pcp_cli.errors import InvalidInput
from pcp_cli.model import jsonlimit, vocab
from pcp_cli.model.filenames import shown
from pcp_cli.model.ids import is_safe_id
from pcp_cli.model.page import (
    ARCHIVE_EXTENSIONS,
    PROFILE_PAGE_ID,
    V1_ID,
    V1_SOURCE,
    V1_SUPERSEDES,
    Actor,
    PageState,
    canonical_json,
    title_from,
)
from pcp_cli.render.versions import restore
from pcp_cli.store.store import Store, page_id_for_key

ACTOR = Actor("tool", "pcp-import-archive")
KIND = "pcp.full-archive"
IMPORT_HASH = "v1_import"
STATUS_TO_LIFECYCLE = {"active": "active", "superseded": "superseded"}
PROFILE_STRING_FIELDS = (
    "name",
    "profession",
    "primary_focus",
    "communication_style",
    "working_style",
    "tools_and_workflows",
    "how_interacts_with_ai",
)
PROFILE_LIST_FIELDS = ("domain_expertise", "values")
MAX_ERRORS = 1000


def summary_shape(dry_run: bool) -> dict[str, Any]:
    return {"format": "archive", "dry_run": dry_run, "created": 0, "revised": 0,
            "unchanged": 0, "skipped": 0, "failed": 0, "problems": []}


def read_archive(path: str | Path) -> Any:
    """The parsed JSON of `path`, or InvalidInput naming why it cannot be read."""
    where = str(path)
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise InvalidInput("no such file", path=where) from None
    except IsADirectoryError:
        raise InvalidInput("is a folder, not a file", path=where) from None
    except OSError as exc:
        raise InvalidInput(f"cannot read: {exc.strerror}", path=where) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput("not valid UTF-8", path=where,
                           details=[f"(top): not valid UTF-8 at byte {exc.start}"]) from None
    try:
        return jsonlimit.loads(text, where)
    except ValueError as exc:
        raise InvalidInput("not valid JSON", path=where,
                           details=[f"(top): not valid JSON: {exc}"]) from None


def detect(data: Any) -> str:
    """archive | profile | keystones | timeline | unknown."""
    if isinstance(data, dict):
        if "kind" in data or any(k in data for k in ("keystones", "timeline_events")):
            return "archive"
        return "profile"
    if isinstance(data, list):
        dicts = [item for item in data if isinstance(item, dict)]
        if not data or any("content" in item for item in dicts):
            return "keystones"
        if any("date" in item or "summary" in item for item in dicts):
            return "timeline"
    return "unknown"


def split_parts(data: Any) -> tuple[Any, list[Any], list[Any], str, list[str]]:
    """(profile, keystones, timeline_events, json path prefix of each list, errors)."""
    kind = detect(data)
    errors: list[str] = []
    profile: Any = None
    keystones: list[Any] = []
    events: list[Any] = []
    if kind == "archive":
        if data.get("kind") != KIND:
            errors.append(f"kind: must be {KIND!r}, not {data.get('kind')!r}")
        if data.get("schema_version") != "1.0":
            errors.append(f"schema_version: must be '1.0', not {data.get('schema_version')!r}")
        profile = data.get("profile")
        for key in ("keystones", "timeline_events"):
            if key in data and not isinstance(data[key], list):
                errors.append(f"{key}: must be a list")
        keystones = data.get("keystones") if isinstance(data.get("keystones"), list) else []
        events = (
            data.get("timeline_events") if isinstance(data.get("timeline_events"), list) else []
        )
    elif kind == "profile":
        profile = data
    elif kind == "keystones":
        keystones = data
    elif kind == "timeline":
        events = data
    else:
        errors.append(
            "(top): not a PCP v1 file: expected a pcp.full-archive object, a profile object, "
            "or a list of keystones or timeline events"
        )
    return profile, keystones, events, kind, errors


def _prefix(kind: str, part: str) -> str:
    if kind == "archive":
        return {"profile": "profile/", "keystone": "keystones/", "timeline": "timeline_events/"}[
            part
        ]
    return ""


def _schema_errors(name: str, obj: Any, where: str) -> list[str]:
    from pcp_cli.model.validate import errors_for

    found = []
    for error in errors_for(name, obj):
        inner, reason = error.split(": ", 1)
        path = where.rstrip("/") if inner == "(top)" else where + inner
        found.append(f"{path or '(top)'}: {reason}")
    return found


def _object_hash(obj: dict[str, Any]) -> str:
    return "sha256:" + hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()


class _Plan:
    """The pages a valid file becomes: (kind, v1 id, json path, PageState or None, skip reason)."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str, str, PageState | None, str | None]] = []
        self.source = ""  # whose ids these are (see source_of)


def source_of(store: Store, data: Any, path: str | Path) -> str:
    """Whose ids these are: an id in a v1 file is unique only within the file's source.

    A pcp archive names the store it was exported from (`extensions["org.pcp-cli"]
    ["store_id"]`); any other file is its own source, named by its file name, so a newer
    export saved under the same name is the same source and revises what it imported before.
    """
    if isinstance(data, dict):
        ext = data.get("extensions")
        ours = ext.get(vocab.EXT_NS) if isinstance(ext, dict) else None
        store_id = ours.get("store_id") if isinstance(ours, dict) else None
        if isinstance(store_id, str) and store_id.strip():
            return f"store:{store_id.strip()}"
    return f"file:{shown(Path(path).name)}"  # a name that is not UTF-8, escaped


class _Claims:
    """Which page each (source, kind, v1 id) was imported as, from the catalog."""

    def __init__(self, store: Store) -> None:
        self.by_source: dict[tuple[str, str, str], str] = {}
        try:  # every page id, lowercased: an id differing only in case is taken too
            self.lowered = {name.lower() for name in os.listdir(store.layout.revisions)}
        except FileNotFoundError:
            self.lowered = set()
        for entry in store.entries(types=("keystone", "timeline_event"), statuses=None,
                                   review=None):
            record = entry.record
            source = record.get(V1_SOURCE)
            if entry.page_id and isinstance(source, str):
                original = record.get(V1_ID) if isinstance(record.get(V1_ID), str) \
                    else entry.page_id
                kind = "keystone" if entry.type == "keystone" else "timeline"
                self.by_source[(source, kind, original)] = entry.page_id


def _page_ids(store: Store, objects: list[dict[str, Any]], kind: str, page_type: str,
              taken: dict[str, str], source: str, claims: _Claims) -> dict[str, str]:
    """v1 id -> page id, per source: ids from two sources never address the same page.

    In order: the page this source's id was imported as before; for the store's own export,
    the page of that id; a page of that id holding exactly this object (imported before from
    a file of another name); the id itself when it is safe, unique in the file ignoring case
    and not yet a page; otherwise an id derived from the source and the id.
    """
    own = source == f"store:{store.manifest.store_id}"
    mapping: dict[str, str] = {}
    for obj in objects:
        original = obj["id"]
        if original in mapping:
            continue
        candidate = claims.by_source.get((source, kind, original))
        if candidate is None and is_safe_id(original) and original.lower() not in taken \
                and store.page_exists(original):
            head = store.current(original).state
            same_type = head.type == page_type
            if same_type and (own or head.record.get(IMPORT_HASH) == _object_hash(obj)):
                candidate = original
        if candidate is None and is_safe_id(original) and original.lower() not in taken \
                and original.lower() not in claims.lowered:
            candidate = original
        if candidate is None:
            candidate = page_id_for_key(f"pcp-v1:{source}:{kind}:{original}")
        taken[candidate.lower()] = original
        mapping[original] = candidate
    return mapping




def plan_import(store: Store, data: Any, *, namespace: str | None = None,
                source: str = "") -> _Plan:
    """Check everything and build every page state; raise InvalidInput listing every error."""
    profile, keystones, events, kind, errors = split_parts(data)
    # v1.2 fields a v1.1 export kept under pcp's extension key go back where they belong
    keystones = [restore(obj, "keystone") if isinstance(obj, dict) else obj for obj in keystones]
    if profile is not None:
        errors += _schema_errors("v1.2/profile", profile, _prefix(kind, "profile"))
    for part, items, schema in (("keystone", keystones, "v1.2/keystone"),
                                ("timeline", events, "v1.2/timeline-event")):
        prefix = _prefix(kind, part)
        seen: dict[str, str] = {}
        for index, obj in enumerate(items):
            where = f"{prefix}{index}"
            errors += _schema_errors(schema, obj, where + "/")
            if isinstance(obj, dict) and isinstance(obj.get("id"), str):
                if obj["id"] in seen:
                    errors.append(f"{where}/id: {obj['id']!r} is used twice (also at "
                                  f"{seen[obj['id']]})")
                else:
                    seen[obj["id"]] = where
    if errors:
        raise InvalidInput(f"{source or 'the file'} is not a valid PCP v1 file "
                           f"({len(errors)} error{'s' if len(errors) != 1 else ''}); "
                           "nothing was imported",
                           details=errors[:MAX_ERRORS], hint="fix the file and import it again")

    # Which page ids the v1 ids become. A safe id already used in the store by a page of
    # another type is mapped too, so an import never overwrites a different kind of page.
    taken: dict[str, str] = {PROFILE_PAGE_ID: PROFILE_PAGE_ID}
    origin_source = source_of(store, data, source or "archive.json")
    claims = _Claims(store)
    ks_ids = _page_ids(store, keystones, "keystone", "keystone", taken, origin_source, claims)
    ev_ids = _page_ids(store, events, "timeline", "timeline_event", taken, origin_source,
                       claims)

    def resolve_target(target: str) -> str:
        """A `supersedes` target outside this file: the page this source imported it as."""
        found = claims.by_source.get((origin_source, "keystone", target))
        if found:
            return found
        if is_safe_id(target) and store.page_exists(target):
            return target
        return page_id_for_key(f"pcp-v1:{origin_source}:keystone:{target}")

    plan = _Plan()
    plan.source = origin_source
    state_errors: list[str] = []

    def add(part: str, original: str, where: str, build: Any) -> None:
        try:
            plan.items.append((part, original, where, build(), None))
        except InvalidInput as exc:
            state_errors.append(f"{where}: {exc.message}")

    envelope = envelope_extensions(data) if kind == "archive" else {}
    if profile is not None and _has_profile_content(profile):
        where = _prefix(kind, "profile").rstrip("/") or "(top)"
        add("profile", PROFILE_PAGE_ID, where,
            lambda: _profile_state(store, profile, namespace, envelope))
    elif envelope:
        plan.items.append(("extensions", "extensions", "extensions", None,
                           "the archive's own extensions are kept on the profile page, and "
                           "this file has no profile"))
    for index, obj in enumerate(keystones):
        where = f"{_prefix(kind, 'keystone')}{index}"
        if obj.get("status") == "deleted":
            plan.items.append(("keystone", obj["id"], where, None,
                               "a deleted keystone is not imported"))
            continue
        add("keystone", obj["id"], where,
            lambda obj=obj: _keystone_state(store, obj, ks_ids, namespace, origin_source,
                                            resolve_target))
    for index, obj in enumerate(events):
        where = f"{_prefix(kind, 'timeline')}{index}"
        add("timeline", obj["id"], where,
            lambda obj=obj: _timeline_state(store, obj, ev_ids, namespace, origin_source))
    if state_errors:
        raise InvalidInput(f"{source or 'the file'} holds values this store cannot keep "
                           f"({len(state_errors)}); nothing was imported",
                           details=state_errors[:MAX_ERRORS],
                           hint="fix the file and import it again")
    return plan


def _has_profile_content(profile: dict[str, Any]) -> bool:
    return any(k not in ("schema_version", "generated_at") for k in profile) and (
        any(profile.get(k) for k in (*PROFILE_STRING_FIELDS, "summary", *PROFILE_LIST_FIELDS))
        or bool(profile.get("extensions"))
    )


def _namespace_for(store: Store, page_id: str, namespace: str | None) -> str:
    if namespace:
        return namespace
    if store.page_exists(page_id):
        return store.current(page_id).state.namespace
    return store.default_namespace


def _keystone_state(store: Store, obj: dict[str, Any], ids: dict[str, str],
                    namespace: str | None, source: str,
                    resolve_target: Any) -> PageState:
    page_id = ids[obj["id"]]
    category = obj.get("category", "other")
    record: dict[str, Any] = {"category": category}
    for key in ("source", "confidence", "importance", "created_at", "last_confirmed_at",
                "generated_by", "last_confirmed_by", "stale_after"):
        if key in obj:  # v1.2's actors and staleness as the archive says them; absent: absent
            record[key] = obj[key]
    if "supersedes" in obj:
        target = obj["supersedes"]
        mapped = ids.get(target) or resolve_target(target)
        record["supersedes"] = mapped
        if mapped != target:
            record[V1_SUPERSEDES] = target
    if page_id != obj["id"]:
        record[V1_ID] = obj["id"]
    record[V1_SOURCE] = source
    record[IMPORT_HASH] = _object_hash(obj)
    source = obj.get("source")
    return store.new_state(
        obj["content"],
        page_id=page_id,
        type="keystone",
        title=title_from(obj["content"]),
        namespace=_namespace_for(store, page_id, namespace),
        lifecycle_status=_lifecycle(obj),
        sensitivity=_sensitivity(store, page_id, obj),
        origin=vocab.ORIGIN_FOR_SOURCE.get(source, "imported") if source else "imported",
        review_status="affirmed",
        epistemic_status="affirmed",
        integrity="verbatim",
        instruction_policy="advisory" if category in vocab.ADVISORY_CATEGORIES else "data_only",
        record=record,
        extensions=_extensions(obj),
    )


def _lifecycle(obj: dict[str, Any]) -> str:
    """The v1 status; with none, what a pcp export said in its extension (`archived`, which
    v1 has no word for: render/portable.py), else active."""
    if "status" in obj:
        return STATUS_TO_LIFECYCLE.get(obj["status"], "active")
    ours = (obj.get("extensions") or {}).get(vocab.EXT_NS)
    said = ours.get("lifecycle_status") if isinstance(ours, dict) else None
    return "archived" if said == "archived" else "active"


def _extensions(obj: dict[str, Any]) -> dict[str, Any]:
    """The object's extensions, less the lifecycle and sensitivity pcp's export put there (the
    page's own fields now hold them)."""
    extensions = vocab.stored_extensions(dict(obj.get("extensions") or {}))
    ours = extensions.get(vocab.EXT_NS)
    held = {"sensitivity"} | ({"lifecycle_status"} if "status" not in obj else set())
    if isinstance(ours, dict) and held & set(ours):
        rest = {k: v for k, v in ours.items() if k not in held}
        if rest:
            extensions[vocab.EXT_NS] = rest
        else:
            del extensions[vocab.EXT_NS]
    return extensions


def _sensitivity(store: Store, page_id: str, obj: dict[str, Any],
                 default: str | None = None) -> str | None:
    """What the file says (a keystone's v1 `sensitivity`; for a timeline event or profile, which
    v1 gives none, what pcp's export put in its `org.pcp-cli` extension); a file that says
    nothing keeps what the store says (the person may have classified the page since), and a
    keystone never classified stays unclassified: it is not made `low` on the way in
    (under-claim, never over-claim). `Store.upsert_page` never lowers a page's sensitivity."""
    ours = (obj.get("extensions") or {}).get(vocab.EXT_NS)
    said = obj.get("sensitivity", ours.get("sensitivity") if isinstance(ours, dict) else None)
    if said is not None:
        return str(said)
    if store.page_exists(page_id):
        return store.current(page_id).state.sensitivity
    return default


def _timeline_state(store: Store, obj: dict[str, Any], ids: dict[str, str],
                    namespace: str | None, origin_source: str) -> PageState:
    page_id = ids[obj["id"]]
    record: dict[str, Any] = {"date": obj["date"]}
    for key in ("category", "source", "confidence"):
        if key in obj:
            record[key] = obj[key]
    if page_id != obj["id"]:
        record[V1_ID] = obj["id"]
    record[V1_SOURCE] = origin_source
    record[IMPORT_HASH] = _object_hash(obj)
    source = obj.get("source")
    return store.new_state(
        obj["summary"],
        page_id=page_id,
        type="timeline_event",
        title=title_from(obj["summary"]),
        namespace=_namespace_for(store, page_id, namespace),
        sensitivity=_sensitivity(store, page_id, obj, "low"),
        origin=vocab.ORIGIN_FOR_SOURCE.get(source, "imported") if source else "imported",
        integrity="verbatim",
        epistemic_status="affirmed",
        record=record,
        extensions=_extensions(obj),
    )


def envelope_extensions(data: Any) -> dict[str, Any]:
    """The archive's own `extensions` (beside its profile, keystones and events), less pcp's
    (`org.pcp-cli` names the store the file came from: import bookkeeping, written afresh on
    every export). Kept on the profile page as `record["archive_extensions"]` and given back
    on export (v1 §6: extensions are preserved on round trip)."""
    ext = data.get("extensions") if isinstance(data, dict) else None
    if not isinstance(ext, dict):
        return {}
    return {k: v for k, v in ext.items() if k != vocab.EXT_NS}


def _profile_state(store: Store, obj: dict[str, Any], namespace: str | None,
                   envelope: dict[str, Any] | None = None) -> PageState:
    record: dict[str, Any] = {}
    for key in (*PROFILE_STRING_FIELDS, *PROFILE_LIST_FIELDS, "generated_at"):
        if key in obj:
            record[key] = list(obj[key]) if key in PROFILE_LIST_FIELDS else obj[key]
    pinned: list[str] = []
    if store.page_exists(PROFILE_PAGE_ID):
        existing = store.current(PROFILE_PAGE_ID).state.record.get("pinned")
        if isinstance(existing, list):
            pinned = [p for p in existing if isinstance(p, str)]
    record["pinned"] = pinned
    record[IMPORT_HASH] = _object_hash(obj)
    if envelope:
        record[ARCHIVE_EXTENSIONS] = envelope
        # the envelope's extensions are part of what this import brought: a change to them
        # alone revises the profile page (a file without them hashes as before)
        record[IMPORT_HASH] = _object_hash({"profile": obj, "extensions": envelope})
    return store.new_state(
        obj.get("summary", ""),
        page_id=PROFILE_PAGE_ID,
        type="profile",
        title="Profile",
        namespace=_namespace_for(store, PROFILE_PAGE_ID, namespace),
        sensitivity=_sensitivity(store, PROFILE_PAGE_ID, obj, "low"),
        origin="imported",
        integrity="verbatim",
        epistemic_status="affirmed",
        record=record,
        extensions=_extensions(obj),
    )


def import_archive(store: Store, path: str | Path, *, dry_run: bool = False,
                   namespace: str | None = None) -> dict[str, Any]:
    """Import a PCP v1 file (archive, profile, keystone list or timeline list) into `store`.

    Returns the import summary `{"format": "archive", "dry_run", "created", "revised",
    "unchanged", "skipped", "failed", "problems": [{"source", "item", "reason"}]}`. Raises
    InvalidInput (with `details`, one line per error) for an invalid file; nothing is written.
    """
    source = str(path)
    data = read_archive(path)
    summary = summary_shape(dry_run)
    if namespace is not None:
        from pcp_cli.store.layout import check_namespace

        check_namespace(namespace)
    if dry_run:
        plan = plan_import(store, data, namespace=namespace, source=source)
        for item in plan.items:
            _count(summary, source, item, _would(store, item[3]))
        return summary
    name = Path(source).name
    with store.batch():  # the pages are published in batches, all before this returns
        plan = plan_import(store, data, namespace=namespace, source=source)
        for item in plan.items:
            part, original, where, state, skip = item
            if state is None:
                _count(summary, source, item, "skipped", skip)
                continue
            status = _would(store, state)
            if status in ("created", "revised"):
                try:
                    status = store.upsert_page(state, key=f"pcp-v1:{plan.source}:{part}:{original}",
                                               actor=ACTOR, operation="import",
                                               source_note=f"imported from {shown(name)}"
                                               ).status
                except InvalidInput as exc:
                    _count(summary, source, item, "failed", exc.message)
                    continue
            _count(summary, source, item, status)
    return summary


def _would(store: Store, state: PageState | None) -> str:
    """What importing `state` does: created, revised or unchanged (skipped when None)."""
    if state is None:
        return "skipped"
    if not store.page_exists(state.page_id):
        return "created"
    head = store.current(state.page_id)
    if head.state.record.get(IMPORT_HASH) == state.record.get(IMPORT_HASH):
        return "unchanged"  # this object was imported before; later local revisions stand
    if head.content_hash == state.content_hash:
        return "unchanged"
    return "revised"


def _count(summary: dict[str, Any], source: str, item: Any, status: str,
           reason: str | None = None) -> None:
    summary[status] = summary.get(status, 0) + 1
    if reason:
        summary["problems"].append({"source": source, "item": item[1], "reason": reason})
