"""ChatGPT export (Settings → Data controls → Export): `conversations.json`, zipped or bare.

The file is one JSON list, often hundreds of megabytes on a single line, so it is streamed
with ijson one conversation at a time. Each conversation is a tree of message nodes (every
regenerated reply is a branch); we import the branch the person last saw, from `current_node`
up through `parent` to the root.
"""

from __future__ import annotations

import os
from decimal import Decimal
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
    fence,
    guarded,
    heading_time,
    iso_from_epoch,
    json_records,
)

SOURCE_SYSTEM = "chatgpt"
EXT_KEY = "org.pcp-cli.chatgpt"
_ROLES = {"user": "User", "assistant": "Assistant"}
# Tools whose input is code the model ran for the person (the code interpreter / data
# analysis): that code is part of the conversation and kept as a fenced block. Messages to
# any other tool are tool calls and left out.
CODE_RUNNERS = frozenset({"python"})
# Content types that are the model's private workings or UI scaffolding, not the conversation.
_SKIPPED_CONTENT = {
    "user_editable_context",
    "thoughts",
    "reasoning_recap",
    "model_editable_context",
}
_PLACEHOLDERS = {
    "image_asset_pointer": "[image]",
    "audio_asset_pointer": "[audio]",
    "real_time_user_audio_video_asset_pointer": "[audio/video]",
    "video_container_asset_pointer": "[video]",
}


def iter_items(path: str | os.PathLike[str], *, progress: Progress | None = None) -> ParseResult:
    """Yield one conversation page per ChatGPT conversation, or a problem for each bad one."""
    with Source(Path(path)) as source:
        yield from source.not_text_problems()
        names = _conversation_files(source)
        if not names:
            yield ItemProblem(str(path), None, "no conversations.json in this export")
            return
        tracker = ProgressTracker(progress, sum(source.sizes[n] for n in names))
        for name in names:
            yield from _iter_file(source, name, tracker)


def _conversation_files(source: Source) -> list[str]:
    if not source.is_zip and not source.path.is_dir():
        return source.names
    found = [
        n
        for n in source.names
        if PurePosixPath(n).name.lower() == "conversations.json"
        or PurePosixPath(n).name.lower().startswith("conversations-")
        and n.lower().endswith(".json")
    ]
    return sorted(found, key=lambda n: (n.count("/"), n))


def _iter_file(source: Source, name: str, tracker: ProgressTracker) -> ParseResult:
    label = source.label(name)
    ref_name = PurePosixPath(name).name
    count = 0
    with source.open(name) as raw:
        stream = tracker.wrap(raw, label)
        try:
            for index, conversation in enumerate(json_records(stream)):
                count += 1
                results = _conversation(conversation, index, label, ref_name)
                yield from guarded(results, label, f"#{index}")
        except ijson.IncompleteJSONError as exc:
            yield ItemProblem(
                label,
                None,
                f"file ends early or is malformed after {count} complete conversation(s); "
                f"the rest was not imported ({exc})",
            )
        except (ijson.JSONError, UnicodeDecodeError) as exc:
            yield ItemProblem(label, None, f"not valid JSON after {count} conversation(s): {exc}")


def _conversation(data: Any, index: int, label: str, ref_name: str) -> ParseResult:
    if not isinstance(data, dict):
        yield ItemProblem(label, f"#{index}", "conversation is not a JSON object")
        return
    conv_id = data.get("conversation_id") or data.get("id")
    if not isinstance(conv_id, str) or not conv_id.strip() or len(conv_id) > 200:
        yield ItemProblem(label, f"#{index}", "conversation has no usable id or conversation_id")
        return
    where = f"conversation={conv_id}"
    mapping = data.get("mapping")
    if not isinstance(mapping, dict) or not mapping:
        yield ItemProblem(label, where, "conversation has no message mapping")
        return
    warnings: list[str] = []
    branch = _current_branch(mapping, data.get("current_node"), warnings)
    turns = [turn for node in branch if (turn := _turn(node)) is not None]
    for warning in warnings:
        yield ItemProblem(label, where, warning, skipped=False)
    if not turns:
        yield ItemProblem(label, where, "conversation has no visible messages; skipped")
        return
    title = data.get("title") if isinstance(data.get("title"), str) else ""
    title = (title or "").strip() or "Untitled conversation"
    started = iso_from_epoch(data.get("create_time"))
    updated = iso_from_epoch(data.get("update_time"))
    times = [t for _, t, _ in turns if t]
    started = started or (min(times) if times else None)
    updated = updated or (max(times) if times else started)
    roles = sorted({role for role, _, _ in turns})
    record: dict[str, Any] = {
        "source_system": SOURCE_SYSTEM,
        "source_id": conv_id,
        "started_at": started,
        "updated_at": updated,
        "message_count": len(turns),
        "participants": roles,
    }
    if isinstance(data.get("default_model_slug"), str):
        record["model"] = data["default_model_slug"]
    extension: dict[str, Any] = {"branch_length": len(branch), "node_count": len(mapping)}
    for key in ("gizmo_id", "conversation_template_id"):
        if isinstance(data.get(key), str):
            extension[key] = data[key]
    yield ImportItem(
        key=f"chatgpt:conversation:{conv_id}",
        kind="page",
        type="conversation",
        title=title,
        content=_render(turns),
        origin="recorded",
        source_refs=(f"chatgpt:{ref_name}#conversation={conv_id}",),
        record=record,
        extensions={EXT_KEY: extension},
        timestamp=updated,
    )


def _current_branch(
    mapping: dict[str, Any], current: object, warnings: list[str]
) -> list[dict[str, Any]]:
    """The nodes from the root down to `current_node`, guarding against cycles."""
    if not isinstance(current, str) or current not in mapping:
        current = _latest_leaf(mapping)
        warnings.append(
            "current_node is missing or unknown; imported the deepest, latest branch instead"
        )
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    node_id: object = current
    while isinstance(node_id, str) and node_id in mapping:
        if node_id in seen:
            warnings.append(f"the parent chain loops back to node {node_id}; stopped there")
            break
        seen.add(node_id)
        node = mapping[node_id]
        if not isinstance(node, dict):
            break
        chain.append(node)
        node_id = node.get("parent")
    chain.reverse()
    return chain


def _latest_leaf(mapping: dict[str, Any]) -> str | None:
    """The leaf with the longest path to a root; ties go to the latest message."""
    depth: dict[str, int] = {}

    def depth_of(start: str) -> int:
        path: list[str] = []
        node_id: object = start
        while isinstance(node_id, str) and node_id in mapping and node_id not in depth:
            if node_id in path:  # a cycle: count it as a root
                break
            path.append(node_id)
            node = mapping[node_id]
            node_id = node.get("parent") if isinstance(node, dict) else None
        base = depth.get(node_id, 0) if isinstance(node_id, str) else 0
        for offset, nid in enumerate(reversed(path), start=1):
            depth[nid] = base + offset
        return depth.get(start, 0)

    best: tuple[int, float, str] | None = None
    for node_id, node in mapping.items():
        if not isinstance(node, dict):
            continue
        children = [c for c in node.get("children") or () if c in mapping]
        if children:
            continue
        message = node.get("message") if isinstance(node.get("message"), dict) else {}
        when = message.get("create_time") if isinstance(message, dict) else None
        when = when if isinstance(when, int | float | Decimal) else 0.0
        candidate = (depth_of(node_id), float(when), node_id)
        if best is None or candidate > best:
            best = candidate
    return best[2] if best else None


def _turn(node: dict[str, Any]) -> tuple[str, str | None, str] | None:
    """(role, time, Markdown text) for a visible user or assistant message, else None."""
    message = node.get("message")
    if not isinstance(message, dict):
        return None
    author = message.get("author") if isinstance(message.get("author"), dict) else {}
    role = author.get("role") if isinstance(author, dict) else None
    if role not in _ROLES:
        return None  # system scaffolding and tool output
    metadata = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
    if isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"):
        return None
    content = message.get("content")
    recipient = message.get("recipient")
    if recipient not in (None, "all") and recipient not in CODE_RUNNERS:
        # The model addressing a tool: a search query or browser command for `browser`/`web`,
        # a JSON prompt for `dalle.text2im`, a memory note for `bio`, whatever its content
        # type (these often come as `code`). Tool calls are left out of the transcript.
        return None
    text = _render_content(content)
    if not text.strip():
        return None
    return role, iso_from_epoch(message.get("create_time")), text.strip()


def _render_content(content: object) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, dict):
        return ""
    kind = content.get("content_type")
    if kind in _SKIPPED_CONTENT:
        return ""
    if kind == "code":
        return fence(str(content.get("text") or ""), str(content.get("language") or "").strip())
    if kind == "execution_output":
        return fence(str(content.get("text") or ""), "text")
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n\n".join(p for p in (_render_part(part) for part in parts) if p.strip())
    if isinstance(content.get("text"), str):
        return content["text"]
    if isinstance(content.get("result"), str):
        return content["result"]
    return f"[{kind}]" if isinstance(kind, str) else ""


def _render_part(part: object) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return ""
    kind = part.get("content_type")
    if kind == "audio_transcription" and isinstance(part.get("text"), str):
        return part["text"]
    if kind in _PLACEHOLDERS:
        return _PLACEHOLDERS[kind]
    if isinstance(part.get("text"), str):
        return part["text"]
    return f"[{kind}]" if isinstance(kind, str) else "[attachment]"


def _render(turns: list[tuple[str, str | None, str]]) -> str:
    blocks = []
    for role, when, text in turns:
        stamp = heading_time(when)
        heading = f"### {_ROLES[role]} · {stamp}" if stamp else f"### {_ROLES[role]}"
        blocks.append(f"{heading}\n\n{text}")
    return "\n\n".join(blocks) + "\n"
