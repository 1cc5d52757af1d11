"""`pcp.yaml`: the store manifest (format version, ids, default namespace, client grants)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pcp_cli.errors import InvalidInput
from pcp_cli.model.ids import is_safe_id, new_id
from pcp_cli.store import frontmatter
from pcp_cli.store.atomic import write_atomic
from pcp_cli.store.layout import check_namespace

FORMAT = "pcp-store/1"
KNOWN_KEYS = ("format", "store_id", "owner_id", "default_namespace", "clients", "settings",
              "retention")


@dataclass(frozen=True)
class Manifest:
    store_id: str
    owner_id: str
    default_namespace: str
    format: str = FORMAT
    clients: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    # how long tombstoned pages and replaced revisions are kept (store/retention.py)
    retention: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "format": self.format,
            "store_id": self.store_id,
            "owner_id": self.owner_id,
            "default_namespace": self.default_namespace,
            "clients": self.clients,
        }
        if self.settings:
            data["settings"] = self.settings
        if self.retention is not None:
            data["retention"] = self.retention
        return data

    @classmethod
    def new(cls, owner_id: str, namespace: str | None) -> Manifest:
        if not is_safe_id(owner_id):
            raise InvalidInput(
                f"owner id {owner_id!r} is not a safe identifier",
                hint="use letters, digits, '.', '_' and '-', e.g. 'ada-lumen'",
            )
        default = namespace or f"user:{owner_id.lower()}"
        return cls(
            store_id=new_id("page").replace("pg_", "st_"),
            owner_id=owner_id,
            default_namespace=check_namespace(default),
        )


def read_manifest(path: Path) -> Manifest:
    rel = path.name
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read the store manifest: {exc.strerror}", path=rel) from None
    data = _parsed(path, raw)
    for key in data:
        if key not in KNOWN_KEYS:
            raise InvalidInput(f"unknown key {key!r} in the store manifest", path=rel,
                               hint=f"known keys: {', '.join(KNOWN_KEYS)}")
    if data.get("format") != FORMAT:
        raise InvalidInput(
            f"store format {data.get('format')!r} is not supported (this pcp reads {FORMAT})",
            path=rel,
            hint="upgrade pcp, or check that this folder is a pcp store",
        )
    for key in ("store_id", "owner_id", "default_namespace"):
        if not isinstance(data.get(key), str):
            raise InvalidInput(f"{key} is missing or not a string", path=rel)
    try:
        check_namespace(data["default_namespace"])
    except InvalidInput as exc:
        raise InvalidInput(exc.message, path=rel, hint=exc.hint) from None
    clients = data.get("clients") or {}
    settings = data.get("settings") or {}
    if data.get("retention") is not None:
        from pcp_cli.model.retention import policy_from

        policy_from(data["retention"])  # a misspelt rule must not silently keep or delete
    if not isinstance(clients, dict) or not isinstance(settings, dict):
        raise InvalidInput("clients and settings must be mappings", path=rel)
    return Manifest(
        store_id=data["store_id"],
        owner_id=data["owner_id"],
        default_namespace=data["default_namespace"],
        format=data["format"],
        clients=clients,
        settings=settings,
        retention=data.get("retention"),
    )


# What pcp.yaml's bytes parsed to, under .pcp/ (derived, per device): every command opens the
# store and reads pcp.yaml, and parsing it is the only reason a search that finds the store
# unchanged would import yaml (~12 ms). Keyed by the SHA-256 of the bytes, so an edited
# pcp.yaml is parsed again; only a mapping that JSON keeps exactly is remembered.
PARSED_CACHE = ".pcp/manifest.json"


def _parsed(path: Path, raw: bytes) -> dict[str, Any]:
    digest = hashlib.sha256(raw).hexdigest()
    cache = path.parent / PARSED_CACHE
    try:
        saved = json.loads(cache.read_bytes())
        if isinstance(saved, dict) and saved.get("sha256") == digest and \
                isinstance(saved.get("data"), dict):
            return saved["data"]
    except (OSError, ValueError):
        pass
    rel = path.name
    data = frontmatter.load_mapping(frontmatter.decode(raw, rel), rel)
    try:
        text = json.dumps({"sha256": digest, "data": data}, ensure_ascii=False, sort_keys=True)
        if json.loads(text)["data"] == data and cache.parent.is_dir():
            tmp = cache.with_name(f".{cache.name}.{os.getpid()}.tmp")
            tmp.write_text(text, "utf-8")
            os.replace(tmp, cache)  # a cache: no fsync; a torn file is just parsed again
    except (OSError, TypeError, ValueError):
        pass
    return data


def write_manifest(path: Path, manifest: Manifest) -> None:
    header = "# pcp store manifest: see store_layout/README.md for every key.\n"
    write_atomic(path, header + frontmatter.dump_mapping(manifest.to_dict()))


def replace_clients(path: Path, clients: dict[str, Any]) -> None:
    """Rewrite only the `clients:` section of `pcp.yaml` (`replace_section`)."""
    replace_section(path, "clients", clients)


def replace_section(path: Path, key: str, value: dict[str, Any]) -> None:
    """Rewrite only the `key:` section of `pcp.yaml` (atomically), keeping every other line
    of the file as it was, comments included. Comments inside the old section (lines indented
    under it) are replaced with the new section; a comment at the start of a line after it
    belongs to what follows and is kept. Raises InvalidInput, changing nothing, if the result
    would not read back as exactly the same manifest with the new section."""
    rel = path.name
    text = frontmatter.decode(path.read_bytes(), rel)
    before = frontmatter.load_mapping(text, rel)
    lines = text.splitlines(keepends=True)
    pattern = re.compile(rf"^{re.escape(key)}\s*:")
    start = next((i for i, line in enumerate(lines) if pattern.match(line)), None)
    block = frontmatter.dump_mapping({key: value}) if value else f"{key}: {{}}\n"
    if start is None:
        new_lines = [*lines]
        if new_lines and not new_lines[-1].endswith("\n"):
            new_lines[-1] += "\n"
        new_lines.append(block)
    else:
        end = start + 1
        while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t"):
            end += 1
        # Blank lines that end the section separate it from what follows: keep them.
        while end > start + 1 and not lines[end - 1].strip():
            end -= 1
        new_lines = [*lines[:start], block, *lines[end:]]
    new_text = "".join(new_lines)
    after = frontmatter.load_mapping(new_text, rel)
    expected = {**before, key: value}
    if after != expected:
        raise InvalidInput(
            f"pcp.yaml could not be edited safely (its {key} section is not a plain block)",
            path=rel, hint=f"edit the {key} section of pcp.yaml by hand",
        )
    write_atomic(path, new_text)
