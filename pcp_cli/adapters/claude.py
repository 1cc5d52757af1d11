"""Claude export (Settings → Privacy → Export data): a zip, or the folder it unpacks to.

Files read, in this order so that projects are known before what refers to them:

- `users.json`     → a profile proposal with the person's name (never the email address)
- `projects.json`  → pages in namespace `project:<slug>`: the description, then each doc
- `memories.json`  → one keystone proposal per remembered statement
- conversations    → one conversation page each, from `conversations.json` (a list), or a
                     split layout: `conversations/*.json` or `<folder>/conversation.json`,
                     each holding one conversation object or a list of them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import ijson

from pcp_cli.adapters.base import (
    ImportItem,
    ItemProblem,
    ParseResult,
    Progress,
    ProgressTracker,
    Source,
    clip,
    fence,
    guarded,
    heading_time,
    iso_from_text,
    json_records,
    short_hash,
    slugify,
)

SOURCE_SYSTEM = "claude"
EXT_KEY = "org.pcp-cli.claude"
ATTACHMENT_LIMIT = 20_000
_SENDERS = {"human": "User", "user": "User", "assistant": "Assistant"}


def iter_items(path: str | os.PathLike[str], *, progress: Progress | None = None) -> ParseResult:
    """Yield the profile proposal, project pages, memory proposals and conversations."""
    with Source(Path(path)) as source:
        yield from source.not_text_problems()
        plan = _plan(source)
        if not any(plan.values()):
            yield ItemProblem(str(path), None, "no Claude export files found here")
            return
        names = [n for group in plan.values() for n in group]
        tracker = ProgressTracker(progress, sum(source.sizes[n] for n in names))
        state = _State()
        handlers = {
            "users": _users,
            "projects": _projects,
            "memories": _memories,
            "conversations": _conversations,
        }
        for group, handler in handlers.items():
            for name in plan[group]:
                yield from _read(source, name, tracker, state, handler)


class _State:
    """What later files need from earlier ones: project uuid → namespace."""

    def __init__(self) -> None:
        self.namespaces: dict[str, str] = {}
        self._slugs: dict[str, str] = {}

    def namespace_for(self, uuid: str, name: str) -> str:
        slug = slugify(name, fallback=slugify(uuid, fallback="project"))
        if self._slugs.setdefault(slug, uuid) != uuid:
            slug = f"{slug}-{slugify(uuid)[:8]}"
            self._slugs[slug] = uuid
        namespace = f"project:{slug}"
        self.namespaces[uuid] = namespace
        return namespace


def _plan(source: Source) -> dict[str, list[str]]:
    plan: dict[str, list[str]] = {"users": [], "projects": [], "memories": [], "conversations": []}
    for name in sorted(source.names, key=lambda n: (n.count("/"), n)):
        posix = PurePosixPath(name)
        base = posix.name.lower()
        if not base.endswith(".json"):
            continue
        if base in ("users.json", "projects.json", "memories.json"):
            plan[base[:-5]].append(name)
        elif base in ("conversations.json", "conversation.json") or "conversations" in {
            part.lower() for part in posix.parts[:-1]
        }:
            plan["conversations"].append(name)
    if not source.is_zip and not source.path.is_dir():
        plan["conversations"] = source.names  # a bare conversations file
    return plan


def _read(
    source: Source, name: str, tracker: ProgressTracker, state: _State, handler: Any
) -> ParseResult:
    label = source.label(name)
    count = 0
    with source.open(name) as raw:
        try:
            for index, data in enumerate(json_records(tracker.wrap(raw, label))):
                count += 1
                yield from guarded(handler(data, index, label, name, state), label, f"#{index}")
        except (ijson.JSONError, ijson.IncompleteJSONError, UnicodeDecodeError) as exc:
            yield ItemProblem(
                label,
                None,
                f"file ends early or is not valid JSON after {count} item(s); "
                f"the rest was not imported ({exc})",
            )


def _ref_name(name: str) -> str:
    """A member name without the export's own top folder: `conversations/<x>.json` stays."""
    parts = PurePosixPath(name).parts
    lowered = [part.lower() for part in parts[:-1]]
    if "conversations" in lowered:
        return "/".join(parts[lowered.index("conversations") :])
    if parts[-1].lower() == "conversation.json":
        return "/".join(parts[-2:])
    return parts[-1]


def _uuid(data: Any) -> str | None:
    value = data.get("uuid") if isinstance(data, dict) else None
    return value if isinstance(value, str) and value.strip() and len(value) <= 200 else None


# --- users.json -----------------------------------------------------------------------------


def _users(data: Any, index: int, label: str, name: str, state: _State) -> ParseResult:
    uuid = _uuid(data)
    if uuid is None:
        yield ItemProblem(label, f"#{index}", "user entry has no uuid")
        return
    full_name = data.get("full_name") if isinstance(data.get("full_name"), str) else ""
    full_name = full_name.strip()
    if not full_name:
        yield ItemProblem(label, f"user={uuid}", "user entry has no name; nothing to propose")
        return
    yield ImportItem(
        key=f"claude:user:{uuid}",
        kind="profile_proposal",
        type="profile",
        title="Profile (from Claude export)",
        content=f"Name: {full_name}\n",
        source_refs=(f"claude:{PurePosixPath(name).name}#user={uuid}",),
        record={"name": full_name, "source_system": SOURCE_SYSTEM},
        sensitivity="medium",
    )


# --- projects.json --------------------------------------------------------------------------


def _projects(data: Any, index: int, label: str, name: str, state: _State) -> ParseResult:
    uuid = _uuid(data)
    if uuid is None:
        yield ItemProblem(label, f"#{index}", "project has no uuid")
        return
    where = f"project={uuid}"
    if data.get("is_starter_project") is True:
        yield ItemProblem(label, where, "Claude's own starter project; skipped")
        return
    title = data.get("name") if isinstance(data.get("name"), str) else ""
    title = title.strip() or "Untitled project"
    namespace = state.namespace_for(uuid, title)
    ref = f"claude:{PurePosixPath(name).name}#{where}"
    project_key = f"claude:project:{uuid}"
    body = [str(data.get("description") or "").strip()]
    template = data.get("prompt_template")
    if isinstance(template, str) and template.strip():
        body.append("## Project instructions\n\n" + template.strip())
    created = iso_from_text(data.get("created_at"))
    updated = iso_from_text(data.get("updated_at")) or created
    yield ImportItem(
        key=project_key,
        kind="page",
        type="note",
        title=title,
        content="\n\n".join(b for b in body if b) + "\n",
        namespace=namespace,
        source_refs=(ref,),
        record={"source_system": SOURCE_SYSTEM, "source_id": uuid, "created_at": created},
        timestamp=updated,
    )
    docs = data.get("docs")
    for position, doc in enumerate(docs if isinstance(docs, list) else ()):
        doc_uuid = _uuid(doc)
        if doc_uuid is None:
            yield ItemProblem(label, f"{where}/doc#{position}", "project doc has no uuid")
            continue
        content = doc.get("content")
        if not isinstance(content, str):
            yield ItemProblem(label, f"{where}/doc={doc_uuid}", "project doc has no text content")
            continue
        filename = doc.get("filename") if isinstance(doc.get("filename"), str) else ""
        yield ImportItem(
            key=f"{project_key}:doc:{doc_uuid}",
            kind="page",
            type="document",
            title=filename.strip() or "Untitled document",
            content=content if content.endswith("\n") else content + "\n",
            namespace=namespace,
            source_refs=(f"{ref}/doc={doc_uuid}",),
            record={
                "source_system": SOURCE_SYSTEM,
                "source_id": doc_uuid,
                "filename": filename,
                "created_at": iso_from_text(doc.get("created_at")),
            },
            links=(project_key,),
            timestamp=iso_from_text(doc.get("created_at")),
        )


# --- memories.json --------------------------------------------------------------------------


def _memories(data: Any, index: int, label: str, name: str, state: _State) -> ParseResult:
    ref = f"claude:{PurePosixPath(name).name}"
    texts: list[tuple[str, str, str | None]] = []  # (scope, text, namespace)
    if isinstance(data, str):
        texts.append((f"item{index}", data, None))
    elif isinstance(data, dict):
        conv = data.get("conversations_memory")
        if isinstance(conv, str):
            texts.append(("conversations_memory", conv, None))
        projects = data.get("project_memories")
        if isinstance(projects, dict):
            for uuid, text in projects.items():
                if isinstance(text, str):
                    texts.append((f"project={uuid}", text, state.namespaces.get(uuid)))
        for field_name in ("memory", "text", "content"):
            if isinstance(data.get(field_name), str):
                texts.append((f"item{index}", data[field_name], None))
                break
    if not texts:
        yield ItemProblem(label, f"#{index}", "memory entry holds no text")
        return
    seen: set[str] = set()
    for scope, text, namespace in texts:
        for section, statement in split_statements(text):
            key = f"claude:memory:{scope}:{short_hash(statement.casefold())}"
            if key in seen:
                continue
            seen.add(key)
            record: dict[str, Any] = {"category": "other", "source": "imported"}
            if section:
                record["section"] = section
            yield ImportItem(
                key=key,
                kind="keystone_proposal",
                type="keystone",
                title=clip(statement, 80).split("\n")[0],
                content=statement + "\n",
                namespace=namespace,
                source_refs=(f"{ref}#{scope}",),
                record=record,
                sensitivity="medium",
            )


_BULLET = re.compile(r"^(?:[-*+•]|\d+[.)])\s+")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$")
_BOLD_HEADING = re.compile(r"^\*\*([^*]+?)\*\*:?$")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+(?=[A-Z0-9\"“(‘'])|(?<=[。！？])")


def split_statements(text: str) -> Iterator[tuple[str | None, str]]:
    """(section, statement) pairs: one per bullet, line or sentence; headings become sections."""
    section: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        heading = _HEADING.match(stripped) or _BOLD_HEADING.match(stripped)
        if heading:
            section = heading.group(1).strip()
            continue
        stripped = _BULLET.sub("", stripped)
        for sentence in _SENTENCE_END.split(stripped):
            sentence = sentence.strip()
            if len(sentence) >= 3:
                yield section, sentence


# --- conversations --------------------------------------------------------------------------


def _conversations(data: Any, index: int, label: str, name: str, state: _State) -> ParseResult:
    uuid = _uuid(data)
    if uuid is None:
        yield ItemProblem(label, f"#{index}", "conversation has no uuid")
        return
    where = f"conversation={uuid}"
    messages = data.get("chat_messages")
    if not isinstance(messages, list):
        yield ItemProblem(label, where, "conversation has no chat_messages list")
        return
    turns = [turn for message in messages if (turn := _turn(message)) is not None]
    if not turns:
        yield ItemProblem(label, where, "conversation has no messages; skipped")
        return
    title = data.get("name") if isinstance(data.get("name"), str) else ""
    times = [t for _, t, _ in turns if t]
    started = iso_from_text(data.get("created_at")) or (min(times) if times else None)
    updated = iso_from_text(data.get("updated_at")) or (max(times) if times else started)
    record: dict[str, Any] = {
        "source_system": SOURCE_SYSTEM,
        "source_id": uuid,
        "started_at": started,
        "updated_at": updated,
        "message_count": len(turns),
        "participants": sorted({role.lower() for role, _, _ in turns}),
    }
    project = data.get("project_uuid")
    if not isinstance(project, str) and isinstance(data.get("project"), dict):
        project = data["project"].get("uuid")
    namespace = state.namespaces.get(project) if isinstance(project, str) else None
    if isinstance(project, str):
        record["project_uuid"] = project
    yield ImportItem(
        key=f"claude:conversation:{uuid}",
        kind="page",
        type="conversation",
        title=title.strip() or "Untitled conversation",
        content=_render(turns),
        origin="recorded",
        namespace=namespace,
        source_refs=(f"claude:{_ref_name(name)}#{where}",),
        record=record,
        links=(f"claude:project:{project}",) if namespace else (),
        timestamp=updated,
    )


def _turn(message: Any) -> tuple[str, str | None, str] | None:
    if not isinstance(message, dict):
        return None
    role = _SENDERS.get(str(message.get("sender") or "").lower())
    if role is None:
        return None
    body = _message_text(message)
    extras = []
    for attachment in message.get("attachments") or ():
        if not isinstance(attachment, dict):
            continue
        file_name = str(attachment.get("file_name") or "attachment")
        extracted = attachment.get("extracted_content")
        if isinstance(extracted, str) and extracted.strip():
            extras.append(
                f"**Attachment: {file_name}**\n\n" + fence(clip(extracted, ATTACHMENT_LIMIT))
            )
        else:
            extras.append(f"[attachment: {file_name}]")
    for file in message.get("files") or ():
        if isinstance(file, dict) and isinstance(file.get("file_name"), str):
            extras.append(f"[file: {file['file_name']}]")
    text = "\n\n".join(part for part in [body.strip(), *extras] if part)
    if not text:
        return None
    return role, iso_from_text(message.get("created_at")), text


def _message_text(message: dict[str, Any]) -> str:
    blocks = message.get("content")
    if isinstance(blocks, list) and blocks:
        parts = []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif kind == "tool_use":
                parts.append(f"[tool use: {block.get('name') or 'tool'}]")
            elif kind == "image":
                parts.append("[image]")
        text = "\n\n".join(p for p in parts if p.strip())
        if text.strip():
            return text
    return message.get("text") if isinstance(message.get("text"), str) else ""


def _render(turns: list[tuple[str, str | None, str]]) -> str:
    blocks = []
    for role, when, text in turns:
        stamp = heading_time(when)
        blocks.append(f"### {role} · {stamp}\n\n{text}" if stamp else f"### {role}\n\n{text}")
    return "\n\n".join(blocks) + "\n"
