"""The profile: the profile page (`pcp profile set`), its renderings and exports (json,
markdown, micro_prompt, archive, AGENTS.md) and distillation. The review queue of proposals:
`pcp_cli.api.review`.

The renderers in `pcp_cli/render/` are pure; this module chooses what they see. Everything it
reads comes through the catalog (`Store.entries`) plus one revision file per page used, so the
micro_prompt stays fast on a large store and never needs the search index. It imports nothing
heavy (no whoosh, jsonschema or mcp).

What reaches the read surface: only *affirmed* pages. Proposed and rejected keystones are the
review queue's business and appear in no export format. High-sensitivity pages never enter the
micro_prompt or the Markdown profile, and enter `json` and the archive only with
`include_sensitive=True`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pcp_cli.api.checks import check_enum
from pcp_cli.errors import InvalidInput, NotFound, UsageError
from pcp_cli.model import vocab
from pcp_cli.model.page import (
    ARCHIVE_EXTENSIONS,
    PROFILE_PAGE_ID,
    V1_ID,
    V1_SUPERSEDES,
    Actor,
    PageState,
    Revision,
    now_iso,
)
from pcp_cli.model.scopes import in_scopes
from pcp_cli.store import kept
from pcp_cli.store.catalog import Entry
from pcp_cli.store.store import Store, WriteResult

EXPORT_FORMATS = ("json", "markdown", "micro_prompt", "archive", "agents-md")
PROFILE_FORMATS = ("json", "markdown", "micro_prompt")
DISTILL_ACTOR = Actor("system", "distill")


# -- reading ----------------------------------------------------------------------------------
def in_scope(namespace: str | None, scopes: Sequence[str]) -> bool:
    """True when no scope is given, or `namespace` matches one (see pcp_cli.model.scopes)."""
    return in_scopes(namespace, scopes or None)


def head_of_entry(store: Store, entry: Entry) -> Revision:
    """The head revision a catalog entry names (one file read), else the page's current one."""
    assert entry.page_id
    if entry.revision_id and not entry.edited:
        try:
            return store.load_revision(entry.page_id, entry.revision_id)
        except NotFound:
            pass
    return store.current(entry.page_id)


def entries_in_scope(
    store: Store,
    page_type: str,
    *,
    scopes: Sequence[str] = (),
    statuses: Sequence[str] = ("active",),
    include_sensitive: bool = False,
    review: Sequence[str] | None = ("affirmed",),
    include_unclassified: bool = False,
) -> list[Entry]:
    found = store.entries(types=(page_type,), statuses=statuses, review=review)
    return [
        e
        for e in found
        if in_scope(e.namespace, scopes)
        and (include_sensitive or e.sensitivity in vocab.SERVED_SENSITIVITIES
             or (include_unclassified and e.sensitivity is None))
    ]


def profile_page(store: Store, *, scopes: Sequence[str] = (),
                 include_sensitive: bool = False) -> Revision | None:
    """The active, affirmed profile page in scope (the page `profile` when there are several),
    without its stale distilled fields (see `profile_state`)."""
    return profile_state(store, scopes=scopes, include_sensitive=include_sensitive)[0]


def profile_state(store: Store, *, scopes: Sequence[str] = (),
                  include_sensitive: bool = False,
                  keystones: Sequence[Revision] | None = None,
                  ) -> tuple[Revision | None, list[str]]:
    """(the profile as it may be served, the distilled fields left out as stale).

    A distilled field whose keystones are no longer current (superseded since, say) is not
    served by any rendering until `pcp profile distill` derives it again.
    """
    from pcp_cli.render.select import fresh_profile

    entries = entries_in_scope(store, "profile", scopes=scopes, include_sensitive=include_sensitive)
    if not entries:
        return None, []
    preferred = [e for e in entries if e.page_id == PROFILE_PAGE_ID] or entries
    profile = _as_distilled(head_of_entry(store, preferred[0]))
    if keystones is None:
        keystones = current_keystones(store, scopes=scopes)
    return fresh_profile(profile, keystones)


def _as_distilled(revision: Revision) -> Revision:
    """An imported profile is as old as its source distilled it, not as the import.

    The renderers date a profile by its revision's `created_at` (`generated_at` in json, the
    currency line of the micro_prompt); for a revision written by an import, that is the
    `generated_at` the file gave, kept in `record["generated_at"]`. Later revisions (a hand
    edit, `profile set`, distillation) are dated as usual.
    """
    from dataclasses import replace

    from pcp_cli.render.select import rfc3339

    step = revision.provenance[0] if revision.provenance else None
    if step is None or step.operation != "import":
        return revision
    stamp = rfc3339(revision.state.record.get("generated_at"))
    return replace(revision, created_at=stamp) if stamp else revision


def current_keystones(store: Store, *, scopes: Sequence[str] = ()) -> list[Revision]:
    """Active, affirmed, not high-sensitivity keystones in scope: the micro_prompt's material."""
    return [head_of_entry(store, e) for e in entries_in_scope(store, "keystone", scopes=scopes)]


def _say_sensitivity(obj: dict[str, Any], level: str | None) -> None:
    """A timeline event's or profile's sensitivity (v1 has no field for it) in pcp's own
    extension, when it is above `low`: importing the archive keeps it (adapters/archive.py)."""
    if level in ("medium", "high"):
        ours = obj["extensions"].get(vocab.EXT_NS)
        obj["extensions"][vocab.EXT_NS] = {**(ours if isinstance(ours, dict) else {}),
                                           "sensitivity": level}


def _timeline(store: Store, *, scopes: Sequence[str] = (),
              include_sensitive: bool = False) -> list[PageState]:
    entries = entries_in_scope(store, "timeline_event", scopes=scopes,
                               include_sensitive=include_sensitive)
    return [head_of_entry(store, e).state for e in entries]


# -- export -----------------------------------------------------------------------------------
def micro_prompt_text(store: Store, *, scopes: Sequence[str] = ()) -> str:
    """The §4.1 micro_prompt (no trailing newline), or the fixed empty-store sentence.

    Kept in `.pcp/micro-prompt.json` while the catalog has not changed (its identity and
    change number), nor the code that renders it: reading every keystone's revision costs
    ~1 s at 9,000 keystones, and the text depends only on the catalog's rows and the
    immutable revision files they name. Kept only when every page was read from the revision
    its row names (no hand edit pending, no missing revision file)."""
    from pcp_cli.render.micro_prompt import micro_prompt

    return str(_kept_micro(store, scopes, _KEPT_MICRO_PROMPT, str, micro_prompt))


_KEPT_MICRO_PROMPT = "micro-prompt.json"
_KEPT_MICRO_REPORT = "micro-prompt-report.json"


def _kept_micro(store: Store, scopes: Sequence[str], name: str, kind: type,
                make: Callable[[Revision | None, list[Revision]], Any],
                variant: str = "") -> Any:
    """What `make(profile, keystones)` gives, kept in `.pcp/<name>` as `micro_prompt_text`
    says (the micro_prompt's material and code unchanged, every page read as its row names)."""
    from pcp_cli.render import micro_prompt, select  # noqa: F401 - their code is in the key

    key = _micro_prompt_key(store, scopes)
    if key is not None:
        key += variant
        cached = kept.read(store.layout.local / name, key)
        if isinstance(cached, kind):
            return cached
    entries = entries_in_scope(store, "keystone", scopes=scopes)
    keystones = [head_of_entry(store, e) for e in entries]
    profile = profile_state(store, scopes=scopes, keystones=keystones)[0]
    value = make(profile, keystones)
    profiles = entries_in_scope(store, "profile", scopes=scopes)
    named = {e.page_id: e.revision_id for e in entries + profiles if not e.edited}
    if key is not None and all(named.get(r.page_id) == r.revision_id
                               for r in [*keystones, *([profile] if profile else [])]):
        kept.keep(store.layout.local / name, key, value)
    return value


def micro_prompt_report(store: Store, *, scopes: Sequence[str] = (),
                        per_reason: int | None = None) -> dict[str, Any]:
    """The micro_prompt with what was left out of it and why (`pcp console`'s profile page):
    `{text, length, limit, left_out: [{page_id, what, text, reason}], left_out_counts:
    {reason: how many}, sensitive_keystones}` (high-sensitivity keystones never enter it:
    counted, not named). `per_reason`: name at most that many per reason (thousands of
    keystones leave thousands out); kept as the micro_prompt is."""
    from pcp_cli.render.micro_prompt import LIMIT, micro_prompt_explained

    def make(profile: Revision | None, keystones: list[Revision]) -> dict[str, Any]:
        text, left_out = micro_prompt_explained(profile, keystones)
        counts: dict[str, int] = {}
        named = []
        for item in left_out:
            reason = str(item["reason"])
            counts[reason] = counts.get(reason, 0) + 1
            if per_reason is None or counts[reason] <= per_reason:
                named.append(item)
        every = entries_in_scope(store, "keystone", scopes=scopes, include_sensitive=True)
        sensitive = len(every) - len(keystones)
        return {"text": text, "length": len(text), "limit": LIMIT, "left_out": named,
                "left_out_counts": counts, "sensitive_keystones": sensitive}

    return _kept_micro(store, scopes, _KEPT_MICRO_REPORT, dict, make, f"|{per_reason}")


def _micro_prompt_key(store: Store, scopes: Sequence[str]) -> str | None:
    """What the kept micro_prompt depends on, or None where nothing is kept (a fresh clone's
    view of the head files, a store without a catalog)."""
    if not isinstance(store, Store) or not store.has_catalog():
        return None

    from pcp_cli import __version__

    stamps = kept.code_stamps(("pcp_cli.render.micro_prompt", "pcp_cli.render.select",
                               __name__), store.root / "pcp.yaml")
    if stamps is None:
        return None
    catalog = store.catalog
    from pcp_cli.model.staleness import today

    # today: a keystone may go stale overnight without any file changing
    return "|".join([catalog.identity(), str(catalog.seq()), ",".join(sorted(scopes)),
                     __version__, today(), *stamps])


# What the micro_prompt is made of: the only pages its fresh-clone path reads.
MICRO_PROMPT_TYPES = ("profile", "keystone")


def micro_prompt_export(path: str | os.PathLike[str] | None = None, *,
                        scopes: Sequence[str] = ()) -> str:
    """`pcp export --format micro_prompt` on the store at `path`: the text and its newline.

    With a catalog, the store is refreshed (hand edits recorded) and read through it. Without
    one (a fresh clone), only the profile and keystone head files are read (`store/peek.py`):
    the same text without building the catalog of every page, and nothing is written. Where
    that needs what only the catalog path does (a hand edit to record first), it takes that
    path instead.
    """
    return _peeked(path, MICRO_PROMPT_TYPES,
                   lambda store: export_text(store, "micro_prompt", scopes=scopes))


def agents_md_export(path: str | os.PathLike[str] | None, out: str | Path, *,
                     scopes: Sequence[str] = ()) -> dict[str, Any]:
    """`pcp export --format agents-md --out FILE` on the store at `path` (`write_agents_md`),
    on a fresh clone from the profile and keystone head files only, as `micro_prompt_export`."""
    return _peeked(path, MICRO_PROMPT_TYPES,
                   lambda store: write_agents_md(store, out, scopes=scopes))


# The page types each profile rendering reads: on a fresh clone, the only head files read.
PEEK_TYPES = {"micro_prompt": MICRO_PROMPT_TYPES, "json": MICRO_PROMPT_TYPES,
              "markdown": MICRO_PROMPT_TYPES + ("timeline_event",)}


def profile_without_catalog(path: str | os.PathLike[str], fmt: str, *,
                            scopes: Sequence[str]) -> dict[str, Any] | str | None:
    """The profile rendering `fmt` (`PROFILE_FORMATS`) in `scopes` (not empty) read from the profile
    material's head files alone, when the store at `path` has no catalog yet (a fresh clone):
    what the catalog path would render. None when it has one, or when the head files need the
    catalog path (a hand edit to record first): then render through the store."""
    from pcp_cli.store.peek import CatalogNeeded, HeadPeek

    if not scopes:  # no scope is no profile here (an empty tuple means every one below)
        return None
    with Store.open(path, readonly=True) as store:
        if store.has_catalog():
            return None
        try:
            view = HeadPeek(store, PEEK_TYPES[fmt])
            if fmt == "json":
                return profile_object(view, scopes=scopes)
            if fmt == "micro_prompt":
                return micro_prompt_text(view, scopes=scopes)
            return profile_markdown_text(view, scopes=scopes)
        except CatalogNeeded:
            return None


def _peeked(path: str | os.PathLike[str] | None, types: Sequence[str], compute: Any) -> Any:
    """`compute(view)`: on a fresh clone over the head files of `types` alone, else (or when
    that needs the catalog) over the store, refreshed."""
    from pcp_cli.store.peek import CatalogNeeded, HeadPeek

    with Store.open(path) as store:
        if not store.has_catalog():
            try:
                return compute(HeadPeek(store, types))
            except CatalogNeeded:
                pass
        store.refresh()
        return compute(store)


def profile_markdown_text(store: Store, *, scopes: Sequence[str] = ()) -> str:
    from pcp_cli.render.markdown import profile_markdown

    keystones = current_keystones(store, scopes=scopes)
    return profile_markdown(
        profile_state(store, scopes=scopes, keystones=keystones)[0],
        keystones,
        _timeline(store, scopes=scopes),
    )


def profile_object(store: Store, *, scopes: Sequence[str] = (),
                   include_sensitive: bool = False) -> dict[str, Any]:
    """The strict v1 profile object (just `schema_version` when there is no profile)."""
    from pcp_cli.render.portable import profile_object as render_profile

    profile, stale = profile_state(store, scopes=scopes, include_sensitive=include_sensitive)
    obj = render_profile(profile)
    if stale:  # say what was left out, and why, where the profile is shown
        ext = obj.setdefault("extensions", {})
        ext[vocab.EXT_NS] = {**ext.get(vocab.EXT_NS, {}), "stale_fields_left_out": stale,
                             "stale_reason": "distilled from keystones that are no longer "
                             "current; run `pcp profile distill`"}
    return obj


def export_archive(
    store: Store,
    *,
    scopes: Sequence[str] = (),
    include_sensitive: bool = False,
    generated_at: str | None = None,
) -> dict[str, Any]:
    """The full archive (`pcp.full-archive`): profile, keystones and timeline events.

    Affirmed pages only. Keystones keep their history (superseded and archived ones are
    included with their `status`); tombstoned ones are left out. High-sensitivity pages only
    with `include_sensitive`. Ids a page was imported under are given back.
    """
    from pcp_cli.render.portable import archive
    from pcp_cli.render.select import instant

    # The person's own export: unclassified keystones too (the person's reads include them),
    # exported without a sensitivity, so a round trip classifies nothing (under-claim).
    keystone_entries = entries_in_scope(
        store, "keystone", scopes=scopes, include_sensitive=include_sensitive,
        statuses=("active", "superseded", "archived"), include_unclassified=True,
    )
    keystones = [head_of_entry(store, e) for e in keystone_entries]
    profile = profile_page(store, scopes=scopes, include_sensitive=include_sensitive)
    data = archive(
        profile,
        keystones,
        _timeline(store, scopes=scopes, include_sensitive=include_sensitive),
        generated_at or now_iso(),
    )
    records = {rev.page_id: rev.state.record for rev in keystones}
    given = _given_back_ids([obj["id"] for obj in data["keystones"]], records)
    for obj in data["keystones"]:
        record = records.get(obj["id"], {})
        target = obj.get("supersedes")
        if isinstance(target, str) and target in given:
            obj["supersedes"] = given[target]
        elif isinstance(record.get(V1_SUPERSEDES), str):
            obj["supersedes"] = record[V1_SUPERSEDES]
        obj["id"] = given[obj["id"]]
    data["keystones"].sort(
        key=lambda o: (instant(o.get("created_at")) or float("-inf"), o["id"])
    )
    if data["timeline_events"]:
        event_entries = [e for e in entries_in_scope(store, "timeline_event", scopes=scopes,
                                             include_sensitive=include_sensitive) if e.page_id]
        event_records = {e.page_id: e.record for e in event_entries}
        given = _given_back_ids([obj["id"] for obj in data["timeline_events"]], event_records)
        levels = {e.page_id: e.sensitivity for e in event_entries}
        for obj in data["timeline_events"]:
            _say_sensitivity(obj, levels.get(obj["id"]))
            obj["id"] = given[obj["id"]]
        data["timeline_events"].sort(key=lambda o: (o["date"], o["id"]))
    if profile is not None and data["profile"].get("extensions") is not None:
        _say_sensitivity(data["profile"], profile.state.sensitivity)
    # Who these ids belong to: importing this file elsewhere maps them per source, and
    # importing it back here finds the same pages (adapters/archive.py).
    kept = profile.state.record.get(ARCHIVE_EXTENSIONS) if profile is not None else None
    data["extensions"] = {**(kept if isinstance(kept, dict) else {}),
                          vocab.EXT_NS: {"store_id": store.manifest.store_id}}
    return data


def _given_back_ids(page_ids: Sequence[str], records: dict[str, dict[str, Any]]
                    ) -> dict[str, str]:
    """Page id -> the v1 id to export: the id it was imported under, unless two pages (from
    two sources) were imported under the same id; then the ones not holding it as their page
    id are exported under their page id, so every id in the file stays unique."""
    wanted: dict[str, str] = {}
    for page_id in page_ids:
        original = records.get(page_id, {}).get(V1_ID)
        wanted[page_id] = original if isinstance(original, str) else page_id
    holders: dict[str, list[str]] = {}
    for page_id, original in wanted.items():
        holders.setdefault(original, []).append(page_id)
    given: dict[str, str] = {}
    for original, group in holders.items():
        for page_id in group:
            if len(group) == 1 or page_id == original:
                given[page_id] = original
            else:
                given[page_id] = page_id
    used: dict[str, int] = {}
    for value in given.values():
        used[value] = used.get(value, 0) + 1
    return {pid: (value if used[value] == 1 else pid) for pid, value in given.items()}


def export_text(
    store: Store,
    fmt: str,
    *,
    scopes: Sequence[str] = (),
    include_sensitive: bool = False,
    pcp_version: str | None = None,
) -> str:
    """`pcp export --format FMT` as the exact text written (JSON formats end with a newline).
    `pcp_version` "1.1": objects valid against the v1.1 schemas (render/versions.py)."""
    import json

    from pcp_cli.render import versions

    try:
        version = versions.check(pcp_version)
    except ValueError as exc:
        raise UsageError(str(exc), hint="--pcp-version 1.2 (the default) or 1.1") from None

    if fmt == "micro_prompt":
        return micro_prompt_text(store, scopes=scopes) + "\n"
    if fmt == "markdown":
        return profile_markdown_text(store, scopes=scopes)
    if fmt == "json":
        obj = profile_object(store, scopes=scopes, include_sensitive=include_sensitive)
    elif fmt == "archive":
        obj = versions.archive_as(export_archive(store, scopes=scopes,
                                                 include_sensitive=include_sensitive), version)
    else:
        raise UsageError(f"unknown format {fmt!r}", hint=f"one of: {', '.join(EXPORT_FORMATS)}")
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def write_agents_md(store: Store, path: str | Path, *,
                    scopes: Sequence[str] = ()) -> dict[str, Any]:
    """Put the micro_prompt in the marked block of an AGENTS.md / CLAUDE.md file.

    Only the block changes on later runs; the rest of the file keeps every byte. Returns
    `{"path", "status": created|updated|unchanged}`.
    """
    from pcp_cli.render.agents_md import agents_md_block
    from pcp_cli.store.atomic import write_atomic

    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{target} is a folder", hint="give the AGENTS.md or CLAUDE.md file")
    try:
        existing: str | None = target.read_bytes().decode("utf-8")
    except FileNotFoundError:
        existing = None
    except UnicodeDecodeError:
        raise InvalidInput("not valid UTF-8", path=str(target)) from None
    new = agents_md_block(micro_prompt_text(store, scopes=scopes), existing)
    if new == existing:
        return {"path": str(target), "status": "unchanged"}
    write_atomic(target, new)
    return {"path": str(target), "status": "created" if existing is None else "updated"}


# -- distillation -----------------------------------------------------------------------------
def distill_profile(store: Store, *, actor: Actor | None = None,
                    dry_run: bool = False) -> dict[str, Any]:
    """`pcp profile distill`: (re)build the profile from the active, affirmed keystones.

    Deterministic (see render/distill.py). Pinned fields (set by hand) are never overwritten.
    The new revision has provenance `derive` naming the keystone revisions it used. Returns
    `{"page_id", "revision_id", "status", "changed", "input_revision_ids"}`; status is
    created | revised | unchanged (`would_create` / `would_revise` under dry_run).
    """
    from pcp_cli.render.distill import distill

    actor = actor or DISTILL_ACTOR
    with store.locked():
        keystones = [head_of_entry(store, e) for e in entries_in_scope(store, "keystone")]
        current = _current_profile_any_state(store)
        result = distill(keystones, current)
        fields = {k: v for k, v in result.record.items() if k != "pinned"}
        shape: dict[str, Any] = {
            "page_id": current.page_id if current is not None else None,
            "revision_id": current.revision_id if current is not None else None,
            "status": "unchanged",
            "changed": list(result.changed),
            "input_revision_ids": list(result.input_revision_ids),
        }
        if current is None and not fields and not result.summary:
            return shape  # nothing to distill from, and no profile to keep
        if current is not None and not result.changed:
            return shape
        if dry_run:
            shape["status"] = "would_create" if current is None else "would_revise"
            shape["page_id"] = shape["page_id"] or PROFILE_PAGE_ID
            return shape
        note = "distilled from keystones"
        if current is None:
            state = store.new_state(result.summary, page_id=PROFILE_PAGE_ID, type="profile",
                                    title="Profile", integrity="derived",
                                    origin="generated", record=result.record)
            written = store.write_page(state, actor=actor, operation="derive",
                                       source_note=note,
                                       input_revision_ids=result.input_revision_ids)
        else:
            # A derived revision is what it is, whatever the page held before (an imported
            # profile): generated, derived, affirmed, pointing to the keystones it came from.
            record = dict(result.record)
            dropped = [k for k in current.state.record if k not in record]
            written = store.revise(
                current.page_id,
                changes={"content": result.summary,
                         "record": {**record, **dict.fromkeys(dropped)},
                         "origin": "generated", "integrity": "derived",
                         "epistemic_status": "asserted"},
                actor=actor,
                operation="derive",
                note=note,
                input_revision_ids=result.input_revision_ids,
            )
        shape.update(written.to_dict())
        return shape


def _current_profile_any_state(store: Store) -> Revision | None:
    """The store's own profile page (`profile`), whatever its state (its pinned list must be
    honoured). Never another profile page: an importer's profile proposal is the review
    queue's, and distillation does not land on it."""
    if store.page_exists(PROFILE_PAGE_ID):
        return store.current(PROFILE_PAGE_ID)
    return None


# -- the profile page (pcp profile set, pcp_get_profile) ---------------------------------------
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
    check_enum("field", field, vocab.PROFILE_FIELDS)
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


def profile_text(store: Store, format: str = "json", *,
                 scopes: Sequence[str] | None = None) -> dict[str, Any] | str:
    """`pcp_get_profile`: the strict v1 profile (json) or the markdown / micro_prompt text.

    `scopes` None means every namespace; an empty list means none (an empty profile).
    The rendering is kept per store, format and scopes while the catalog rows of its material
    (`_profile_material`) are unchanged (`store/kept.py`, `kept_while`), so a call on an
    unchanged profile costs a look-up, not a read of every keystone.
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

    return copy.deepcopy(kept.kept_while(store, ("profile", format, chosen),
                                     _profile_material(format),
                                     lambda: _render_profile(store, format, chosen)))


def _render_profile(store: Any, format: str, scopes: tuple[str, ...]) -> dict[str, Any] | str:
    if format == "json":
        return profile_object(store, scopes=scopes)
    if format == "micro_prompt":
        return micro_prompt_text(store, scopes=scopes)
    return profile_markdown_text(store, scopes=scopes)


def _profile_material(format: str) -> tuple[str, ...]:
    """The page types a profile rendering reads (this module reads no other page): each
    rendering depends only on their catalog rows and the immutable revisions those name."""
    return ("profile", "keystone", "timeline_event") if format == "markdown" else (
        "profile", "keystone")
