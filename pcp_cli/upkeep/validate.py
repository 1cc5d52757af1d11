"""`pcp validate`: check every file of a store against the store's JSON Schemas.

Also renders every keystone, timeline_event and profile page as its Portable Context Protocol
v1 object and checks it against the published v1.2 schemas, and its v1.1 form against the v1.1
ones (both shipped as package data, unchanged),
through `pcp_cli.model.validate` (where jsonschema lives).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pcp_cli.errors import InvalidInput
from pcp_cli.model.page import Revision, hash_state
from pcp_cli.model.validate import errors_for


@dataclass(frozen=True)
class Problem:
    path: str
    message: str
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"



def validate_store(root: Path, *, events: Sequence[tuple[Path, Any]] | None = None
                   ) -> list[Problem]:
    """Every problem of the store at `root`. `events`: its event files already read, each
    with its parsed JSON or the ValueError/OSError that stopped it (`pcp doctor` reads them
    once for all its checks)."""
    from pcp_cli.model.filenames import shown
    from pcp_cli.render.portable import portable_object
    from pcp_cli.render.versions import as_version
    from pcp_cli.store.atomic import is_temp_name, writer_alive
    from pcp_cli.store.files import walk_pages
    from pcp_cli.store.frontmatter import (
        CONFLICT_START,
        decode,
        has_conflict_markers,
        load_mapping,
        split,
    )
    from pcp_cli.store.layout import Layout, is_foreign_root

    layout = Layout(root)
    problems: list[Problem] = []

    def rel(path: Path) -> str:
        return layout.rel(path)

    # pcp.yaml
    try:
        manifest = load_mapping(decode(layout.manifest.read_bytes(), "pcp.yaml"), "pcp.yaml")
        problems += [Problem("pcp.yaml", e) for e in errors_for("manifest", manifest)]
    except InvalidInput as exc:
        problems.append(Problem("pcp.yaml", exc.message))
    except OSError as exc:
        problems.append(Problem("pcp.yaml", f"cannot read: {exc.strerror}"))

    # head files
    for path, _stat, odd in walk_pages(layout.pages):
        if odd is not None:
            problems.append(Problem(shown(rel(path)), odd.message))
            continue
        try:
            text = decode(path.read_bytes(), rel(path))
            if has_conflict_markers(text):
                marker = CONFLICT_START.search(text)
                problems.append(Problem(rel(path), "git conflict markers (`pcp doctor --fix` "
                                        "rebuilds the file from its revisions)",
                                        text[: marker.start()].count("\n") + 1 if marker
                                        else None))
                continue
            head = split(text, rel(path))
        except InvalidInput as exc:
            problems.append(Problem(rel(path), exc.message.split(": ", 1)[-1], exc.line))
            continue
        if not head.frontmatter:
            problems.append(Problem(rel(path), "no frontmatter: not yet adopted as a page "
                                    "(any pcp command adopts it)"))
            continue
        for error in errors_for("frontmatter", head.frontmatter):
            problems.append(Problem(rel(path), _said_by_yaml(error, head.frontmatter, text),
                                    _line_of(text, error)))
        if path.stem != head.frontmatter.get("page_id", path.stem):
            problems.append(Problem(rel(path), "page_id does not match the file name",
                                    _line_of(text, "page_id")))

    # revisions
    revisions: dict[str, Revision] = {}
    for path in sorted(layout.revisions.glob("*/*.json")) if layout.revisions.exists() else []:
        data = _load_json(path, rel(path), problems)
        if data is None:
            continue
        errors = errors_for("revision", data)
        problems += [Problem(rel(path), e) for e in errors]
        if errors:
            continue
        revision = Revision.from_dict(data)
        if revision.page_id != path.parent.name or revision.revision_id != path.stem:
            problems.append(Problem(rel(path), "ids inside do not match the file's path"))
        if hash_state(revision.state.to_dict()) != data["content_hash"]:
            problems.append(Problem(rel(path), "content_hash does not match the content"))
        revisions[revision.revision_id] = revision
    if events is None:
        paths = sorted(layout.events.glob("*/*/*.json")) if layout.events.exists() else []
        events = [(path, _load_json(path, rel(path), problems)) for path in paths]
    from pcp_cli.store.retention import collected_revision_ids

    # a parent removed by `pcp retention collect` (its event says so) was removed on purpose
    collected = collected_revision_ids(events)
    for revision in revisions.values():
        for parent in revision.parent_ids:
            if parent not in revisions and parent not in collected:
                problems.append(Problem(
                    rel(layout.revision_path(revision.page_id, revision.revision_id)),
                    f"parent revision {parent} does not exist"))

    # relations and events
    for path in sorted(layout.relations.glob("*.json")) if layout.relations.exists() else []:
        data = _load_json(path, rel(path), problems)
        if data is not None:
            problems += [Problem(rel(path), e) for e in errors_for("relation", data)]
            for end in ("from", "to"):
                if isinstance(data, dict) and data.get(f"{end}_revision_id") not in revisions:
                    problems.append(Problem(rel(path), f"{end}_revision_id names no revision"))
    for path, data in events:
        if isinstance(data, (ValueError, OSError)):
            _load_json_problem(data, rel(path), problems)
        elif data is not None:
            problems += [Problem(rel(path), e) for e in errors_for("event", data)]

    # the portable objects rendered from the newest revision of each page
    newest: dict[str, Revision] = {}
    for revision in revisions.values():
        known = newest.get(revision.page_id)
        if known is None or (revision.created_at, revision.revision_id) > (
            known.created_at, known.revision_id
        ):
            newest[revision.page_id] = revision
    for revision in newest.values():
        where = rel(layout.revision_path(revision.page_id, revision.revision_id))
        portable = portable_object(revision)
        if portable is None:
            continue
        obj, name = portable
        # what pcp serves (v1.2), and what a reader asking for v1.1 gets
        problems += [Problem(where, f"as a v1.2 {revision.state.type}: {e}")
                     for e in errors_for(f"v1.2/{name}", obj)]
        problems += [Problem(where, f"as a v1.1 {revision.state.type}: {e}")
                     for e in errors_for(f"v1/{name}", as_version(obj, name, "1.1"))]

    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".pcp", ".git")
                       and (dirpath == str(root) or not is_foreign_root(Path(dirpath) / d))]
        for name in filenames:
            if is_temp_name(name) and not writer_alive(name):
                problems.append(Problem(rel(Path(dirpath) / name),
                                        "temporary file from an interrupted write "
                                        "(`pcp doctor --fix` removes it)"))
    return problems


def _load_json(path: Path, shown: str, problems: list[Problem]) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (ValueError, OSError) as exc:
        _load_json_problem(exc, shown, problems)
    return None


def _load_json_problem(exc: ValueError | OSError, shown: str, problems: list[Problem]) -> None:
    if isinstance(exc, OSError):
        problems.append(Problem(shown, f"cannot read: {exc.strerror}"))
    else:
        problems.append(Problem(shown, f"not valid JSON: {exc}"))


def _said_by_yaml(error: str, frontmatter: dict[str, Any], text: str) -> str:
    """A top-level string field YAML read as something else says what YAML made of it."""
    from pcp_cli.model.check import not_a_string

    key, _, reason = error.partition(": ")
    if reason.endswith("is not of type 'string'") and key in frontmatter:
        number = _line_of(text, key)
        line = text.splitlines()[number - 1] if number else ""
        raw = line.partition(":")[2].strip()[:80] or None
        return not_a_string(key, frontmatter[key], raw)
    return error


def _line_of(text: str, error: str) -> int | None:
    key = error.split(":", 1)[0].split("/", 1)[0]
    if key == "(top)":  # an unknown key: the message names it
        unexpected = re.search(r"\('([^']+)'(?:, '[^']+')* (?:was|were) unexpected\)", error)
        if not unexpected:
            return None
        key = unexpected.group(1)
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith(f"{key}:"):
            return number
        if number > 1 and line == "---":
            break
    return None
