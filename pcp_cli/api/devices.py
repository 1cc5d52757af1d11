"""The PCP device registry (`pcp sources`, `pcp register`): `~/.pcp/sources.json`, the PCP
sources a person chose to expose on this machine, so an agent (or `pcp search --sources`) can
query across them.

The format is the Portable Context Protocol's device-registry extension (`spec/registry-v1.md`
of wearywas/portable-context-protocol; its schema ships as `model/schemas/v1/registry.schema.json`).
Only the person's own registry is read: `~/.pcp/sources.json`, or the file `PCP_REGISTRY`
names. A `./.pcp/sources.json` in the current folder (a cloned repository, say) is never read:
whoever wrote it is not the person. Nothing is ever discovered: a source is listed only because
someone wrote it in, and a stdio source runs only once the person approved its command
(`pcp_cli.api.device_approvals`).

The file belongs to the person and to every app that registers itself in it, so pcp changes
only its own entry: other entries, unknown keys and top-level content are kept as they were
(their values and order; the file is re-serialized with two-space indentation), and each write
is atomic (a temporary file renamed into place) under a lock file beside it. A file pcp cannot
parse is an error naming it and the line, and nothing is written.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcp_cli.api import device_approvals
from pcp_cli.errors import InvalidInput, NotFound, UsageError

if TYPE_CHECKING:
    from pcp_cli.store.store import Store

VERSION = "1.0"
FILE_NAME = "sources.json"
EXT = "org.pcp-cli"  # our key under an entry's `extensions`: which store the entry serves
TRANSPORTS = ("stdio", "http")
# How a header value to fill in starts (`pcp register --transport http`, `pcp mcp-config
# --http`): `<token from: pcp grant token CLIENT>`.
PLACEHOLDER = "<token from:"


def global_path() -> Path:
    """The person's registry: the file `PCP_REGISTRY` names, else `~/.pcp/sources.json`
    (`%USERPROFILE%\\.pcp\\sources.json` on Windows)."""
    named = os.environ.get("PCP_REGISTRY")
    return Path(named).expanduser() if named else Path.home() / ".pcp" / FILE_NAME


def read_file(path: Path) -> dict[str, Any] | None:
    """The registry at `path` as parsed JSON (None when there is no file). InvalidInput, with
    the file and line, for a file that is not a registry at all."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InvalidInput(f"cannot be read ({exc.strerror})", path=str(path)) from exc
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise InvalidInput("is not UTF-8 text", path=str(path)) from exc
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"is not valid JSON ({exc.msg}, column {exc.colno})",
                           path=str(path), line=exc.lineno,
                           hint="fix or move the file; pcp wrote nothing") from exc
    fix = "fix or move the file; pcp wrote nothing"
    if not isinstance(data, dict):
        raise InvalidInput("is not a PCP device registry (the top level must be an object)",
                           path=str(path), hint=fix)
    version = data.get("pcp_registry_version", VERSION)
    if version != VERSION:
        raise InvalidInput(f"has pcp_registry_version {version!r}; pcp reads {VERSION!r}",
                           path=str(path), hint=fix)
    if not isinstance(data.get("sources", []), list):
        raise InvalidInput("is not a PCP device registry (`sources` must be a list)",
                           path=str(path), hint=fix)
    return data


def usable(entry: Any) -> str | None:
    """Why `entry` cannot be queried (None: it can). Unknown keys are no reason: the file is
    shared, and other apps may add their own."""
    if not isinstance(entry, dict):
        return "an entry that is not an object"
    if not isinstance(entry.get("id"), str) or not entry["id"]:
        return "an entry without an id"
    transport = entry.get("transport")
    if transport not in TRANSPORTS:
        return f"source {entry['id']!r}: transport {transport!r} is not stdio or http"
    need = "command" if transport == "stdio" else "url"
    if not isinstance(entry.get(need), str) or not entry[need]:
        return f"source {entry['id']!r}: a {transport} source needs a {need}"
    # what decides how it is launched or called must be what the schema says: a guess at a
    # malformed `args` would run something else (anything else unknown is no reason: PCP
    # v1.2 §7.2, a reader tolerates the fields and values it does not know)
    args = entry.get("args")
    if args is not None and not (isinstance(args, list)
                                 and all(isinstance(a, str) for a in args)):
        return f"source {entry['id']!r}: args must be a list of strings"
    for key in ("env", "headers"):
        value = entry.get(key)
        if value is not None and not (isinstance(value, dict)
                                      and all(isinstance(v, str) for v in value.values())):
            return f"source {entry['id']!r}: {key} must map names to strings"
    return None


def read_sources() -> dict[str, Any]:
    """Every source of the person's registry (`global_path`): `{files, sources, problems}`.
    Each source is the entry as written plus `file`, the registry it came from; entries that
    cannot be queried are left out and named in `problems` (an id repeated: the last wins)."""
    files, by_id, problems = [], {}, []
    for path in (global_path(),):
        data = read_file(path)
        files.append({"path": str(path), "exists": data is not None,
                      "sources": len(data.get("sources", [])) if data else 0})
        for entry in (data or {}).get("sources", []):
            why = usable(entry)
            if why:
                problems.append(f"{path}: {why}; skipped")
                continue
            by_id[entry["id"]] = {**entry, "file": str(path)}
    return {"files": files, "sources": list(by_id.values()), "problems": problems}


def store_of(entry: dict[str, Any]) -> str | None:
    """The store_id of the pcp store an entry serves, if pcp wrote it."""
    extensions = entry.get("extensions") if isinstance(entry, dict) else None
    ours = extensions.get(EXT) if isinstance(extensions, dict) else None
    store_id = ours.get("store_id") if isinstance(ours, dict) else None
    return store_id if isinstance(store_id, str) else None


def check_entry(entry: dict[str, Any]) -> None:
    """The entry pcp is about to write must be valid against the published schema."""
    from pcp_cli.model.validate import errors_for

    errors = errors_for("v1/registry", {"pcp_registry_version": VERSION, "sources": [entry]})
    if errors:
        raise InvalidInput("the source entry does not fit the PCP registry schema",
                           details=errors, hint="; ".join(errors[:3]))


def register(path: Path, entry: dict[str, Any]) -> dict[str, Any]:
    """Write `entry` (a pcp store's own, `extensions[EXT].store_id` naming the store) into the
    registry at `path`: in place of this store's earlier entry (keeping what the person added
    to it, see `_keeping`), else appended. An id that another source already uses is refused.
    Returns `{path, entry, replaced}`."""
    check_entry(entry)
    store_id = store_of(entry)
    with _locked(path):
        data = read_file(path)
        created = data is None
        if data is None:
            data = {"pcp_registry_version": VERSION, "sources": []}
        data.setdefault("pcp_registry_version", VERSION)
        sources = data.setdefault("sources", [])
        mine = [i for i, e in enumerate(sources) if store_id and store_of(e) == store_id]
        taken = [e for i, e in enumerate(sources) if isinstance(e, dict)
                 and e.get("id") == entry["id"] and i not in mine]
        if taken:
            raise UsageError(f"{path} already has a source with the id {entry['id']!r} "
                             "that is not this store",
                             hint="pick another with --id ID, or remove that entry first")
        if mine:
            entry = _keeping(sources[mine[0]], entry)
            sources[mine[0]] = entry
            for extra in reversed(mine[1:]):  # this store twice (by hand): keep one
                del sources[extra]
        else:
            sources.append(entry)
        _write(path, data, created)
    return {"path": str(path), "entry": entry, "replaced": bool(mine)}


def _keeping(old: Any, new: dict[str, Any]) -> dict[str, Any]:
    """This store's new entry, keeping what the person added to its old one: other
    `extensions` keys, and a header value they put in place of pcp's token placeholder."""
    if not isinstance(old, dict):
        return new
    merged = dict(new)
    extensions = old.get("extensions")
    if isinstance(extensions, dict):
        merged["extensions"] = {**extensions, **(new.get("extensions") or {})}
    headers, before = new.get("headers"), old.get("headers")
    if isinstance(headers, dict) and isinstance(before, dict):
        merged["headers"] = {
            name: before[name] if PLACEHOLDER in value and isinstance(before.get(name), str)
            and PLACEHOLDER not in before[name] else value for name, value in headers.items()}
    return merged


def unregister(path: Path, store_id: str, source_id: str | None = None) -> dict[str, Any]:
    """Remove this store's entry (or the entry `source_id`, which must be this store's) from
    the registry at `path`. NotFound when it has none."""
    with _locked(path):
        data = read_file(path)
        sources = (data or {}).get("sources", [])
        gone = [e for e in sources if store_of(e) == store_id
                and (source_id is None or e.get("id") == source_id)]
        if data is None or not gone:
            what = f"a source {source_id!r} of this store" if source_id else "this store"
            raise NotFound(f"{path} has no entry for {what}",
                           hint="`pcp sources` lists what is registered")
        data["sources"] = [e for e in sources if not any(e is g for g in gone)]
        _write(path, data, False)
    return {"path": str(path), "removed": [e.get("id") for e in gone]}


def _write(path: Path, data: dict[str, Any], created: bool) -> None:
    from pcp_cli.store.atomic import write_atomic

    mode = None if created else _mode(path)
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    # entries may carry tokens in their headers: a new file is the person's alone; an existing
    # one keeps the permissions it had
    with contextlib.suppress(OSError):
        os.chmod(path, 0o600 if mode is None else mode)


def _mode(path: Path) -> int | None:
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return None


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One writer at a time (two apps registering at once would lose an entry). The lock file
    is opened in place, created if missing, and never replaced: a lock file renamed into place
    while another process held the old one locked two different files, and four stores
    registering at once lost one entry."""
    from filelock import FileLock

    lock = path.with_name(f".{path.name}.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock), thread_local=False):
        yield


# -- what `pcp sources` lists, and which stdio sources may run --------------------------------
def registered_sources() -> dict[str, Any]:
    """`pcp sources`: `read_sources`, each stdio source with `approval`: approved, changed or
    not_approved (`pcp_cli.api.device_approvals`)."""
    data = read_sources()
    approvals = device_approvals.read()
    for entry in data["sources"]:
        if entry["transport"] == "stdio":
            entry["approval"] = device_approvals.status(entry, approvals)
    return data


def approve_source(source_id: str) -> dict[str, Any]:
    """`pcp sources approve ID`: the person approves what the stdio source `source_id` runs
    now (its command, arguments and environment); a later change needs approving again."""
    known = {e["id"]: e for e in read_sources()["sources"]}
    entry = known.get(source_id)
    if entry is None:
        raise NotFound(f"{global_path()} has no source {source_id!r}",
                       hint=f"registered: {', '.join(known) or 'none'} (`pcp sources`)")
    if entry["transport"] != "stdio":
        raise UsageError(f"source {source_id!r} is reached over {entry['transport']}: pcp runs "
                         "no command for it, so there is nothing to approve")
    return device_approvals.approve(entry)


# -- this store in the registry (pcp register / unregister) ----------------------------------
def register_source(store: Store, entry: dict[str, Any]) -> dict[str, Any]:
    """`pcp register`: write this store's entry into `~/.pcp/sources.json` (others kept); a
    stdio entry is approved to run (the person ran `pcp register`)."""
    ours = {**entry, "extensions": {**(entry.get("extensions") or {}),
                                    EXT: {"store_id": store.manifest.store_id,
                                          "store": str(store.root.resolve())}}}
    out = register(global_path(), ours)
    if out["entry"]["transport"] == "stdio":
        device_approvals.approve(out["entry"])
    return out


def unregister_source(store: Store, source_id: str | None = None) -> dict[str, Any]:
    """`pcp unregister`: remove this store's entry from `~/.pcp/sources.json`."""
    return unregister(global_path(), store.manifest.store_id, source_id)
