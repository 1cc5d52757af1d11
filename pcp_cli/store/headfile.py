"""A page's head file (`pages/<namespace>/<page_id>.md`): render from a revision, parse back.

Rendering is deterministic; parsing turns whatever a person or a merge left in the file into a
PageState, or an InvalidInput naming the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pcp_cli.errors import InvalidInput, PcpError
from pcp_cli.model.check import check_state
from pcp_cli.model.page import STATE_KEYS, PageState, Revision
from pcp_cli.store import frontmatter

# Collections are written only when non-empty; every other state key always, in STATE_KEYS
# order, with the revision id after the page id.
_WHEN_SET = ("tags", "source_refs", "record", "facets", "extensions")
_ALWAYS = ("page_id", "revision_id") + tuple(
    key for key in STATE_KEYS[1:] if key not in _WHEN_SET and key != "payload"
)


# Facets kept in the revision only, never in the head file's frontmatter: one entry per event
# of a conversation, which would grow the frontmatter past its limit (5,000 messages made
# 262 KiB). Parsing puts them back from the revision the head file names.
REVISION_ONLY_FACETS = ("source_spans",)


def frontmatter_for(revision: Revision, *, spans: bool = False) -> dict[str, Any]:
    """The frontmatter of a head file for `revision`; `spans` keeps the revision-only facets
    (as earlier versions of pcp wrote head files, which doctor compares old files with)."""
    state = {**revision.state.to_dict(), "revision_id": revision.revision_id}
    if not spans and any(key in state["facets"] for key in REVISION_ONLY_FACETS):
        state["facets"] = {key: value for key, value in state["facets"].items()
                           if key not in REVISION_ONLY_FACETS}
    # An unclassified page (sensitivity None) keeps its file without the key, as it was found.
    data: dict[str, Any] = {key: state[key] for key in _ALWAYS
                            if not (key == "sensitivity" and state[key] is None)}
    for key in _WHEN_SET:
        if state[key]:
            data[key] = state[key]
    if revision.state.media_type != "text/markdown":
        data["media_type"] = revision.state.media_type
    data["created_at"] = revision.page_created_at
    data["updated_at"] = revision.created_at
    data["content_hash"] = revision.content_hash
    return data


def render_head(revision: Revision, *, spans: bool = False) -> str:
    return frontmatter.render(frontmatter_for(revision, spans=spans), revision.state.content)


@dataclass(frozen=True)
class ParsedHead:
    """What a head file says. `state` is None for a new file that has no page id yet."""

    frontmatter: dict[str, Any]
    body: str
    revision_id: str | None
    state: PageState | None
    state_hash: str | None = None  # state.content_hash, when parse_head worked it out


def parse_head(
    raw: bytes,
    *,
    path: str,
    file_page_id: str | None,
    folder_namespace: str,
    owner_id: str,
    load_revision: Callable[[str, str], Revision] | None = None,
) -> ParsedHead:
    """Parse and check a head file. Raises InvalidInput (with file and line) when it is bad.

    `load_revision(page_id, revision_id)` supplies the revision-only facets (REVISION_ONLY_FACETS)
    from the revision the file names; without it, or when that revision cannot be read, the
    state has none."""
    text = frontmatter.decode(raw, path)
    if frontmatter.has_conflict_markers(text):
        match = frontmatter.CONFLICT_START.search(text)
        line = text[: match.start()].count("\n") + 1 if match else None
        raise InvalidInput(
            "the file holds git conflict markers",
            path=path,
            line=line,
            hint="run `pcp resolve PAGE_ID` or `pcp doctor --fix` to rebuild it from its revisions",
        )
    head = frontmatter.split(text, path)
    data = head.frontmatter
    block = text[4 : text.find("\n---", 3) + 1] if data else ""

    def line_of(key: str) -> int | None:
        match = re.search(rf"^{re.escape(key)}\s*:", block, re.MULTILINE)
        return block[: match.start()].count("\n") + 2 if match else (2 if data else None)

    def raw_of(key: str) -> str | None:
        match = re.search(rf"^{re.escape(key)}\s*:[ \t]*(.*?)[ \t]*$", block, re.MULTILINE)
        return match.group(1)[:80] if match and match.group(1) else None

    check_state(data, path=path, line_of=line_of, raw_of=raw_of)
    page_id = data.get("page_id")
    if page_id is not None and file_page_id is not None and page_id != file_page_id:
        raise InvalidInput(
            f"page_id {page_id!r} does not match the file name {file_page_id}.md",
            path=path,
            line=line_of("page_id"),
            hint="rename the file back, or remove page_id to adopt the file as a new page",
        )
    namespace = data.get("namespace", folder_namespace)
    revision_id = data.get("revision_id")
    if page_id is None:
        return ParsedHead(data, head.body, None, None)
    state_data = {key: value for key, value in data.items() if key not in _INFORMATIONAL}
    state_data.update(
        {
            "namespace": namespace,
            "owner_id": data.get("owner_id", owner_id),
            "type": data.get("type", "note"),
            "payload": {
                "media_type": data.get("media_type", "text/markdown"),
                "content": head.body,
            },
        }
    )
    state = PageState.from_dict(state_data)
    state_hash = None
    if load_revision is not None and isinstance(revision_id, str):
        # A file that says exactly what its revision recorded (the hash it names) lacks no
        # facet of it: that revision need not be read (a fifth of a first scan's time).
        state_hash = state.content_hash
        if state_hash != data.get("content_hash"):
            _restore_revision_facets(state_data, page_id, revision_id, load_revision)
            state = PageState.from_dict(state_data)
            state_hash = state.content_hash
    return ParsedHead(data, head.body, revision_id, state, state_hash)


def _restore_revision_facets(state_data: dict[str, Any], page_id: str, revision_id: str,
                             load_revision: Callable[[str, str], Revision]) -> None:
    facets = state_data.get("facets")
    facets = facets if isinstance(facets, dict) else {}
    if any(key in facets for key in REVISION_ONLY_FACETS):
        return  # a head file from an earlier version still holds them
    try:
        kept = load_revision(page_id, revision_id).state.facets
    except PcpError:
        return
    restored = {key: kept[key] for key in REVISION_ONLY_FACETS if key in kept}
    if restored:
        state_data["facets"] = {**facets, **restored}


_INFORMATIONAL = ("revision_id", "created_at", "updated_at", "media_type", "content_hash")


def title_from_body(body: str, fallback: str) -> str:
    for line in body.splitlines():
        if line.startswith("# "):
            return line[2:].strip()[:200]
    return fallback
