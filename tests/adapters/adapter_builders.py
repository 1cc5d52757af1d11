"""Small synthetic exports shaped like the real ones, built in a test's tmp_path."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any


def write_zip(path: Path, files: dict[str, Any]) -> Path:
    """A zip holding each name → JSON value (or raw bytes/str as given)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, value in files.items():
            archive.writestr(name, _bytes(value))
    return path


def write_folder(path: Path, files: dict[str, Any]) -> Path:
    for name, value in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(_bytes(value))
    return path


def _bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


# --- ChatGPT --------------------------------------------------------------------------------


def gpt_message(
    node_id: str,
    role: str,
    text: Any,
    *,
    time: float | None = 1714557720.0,
    hidden: bool = False,
    content_type: str = "text",
) -> dict[str, Any]:
    parts = text if isinstance(text, list) else [text]
    metadata: dict[str, Any] = {}
    if hidden:
        metadata["is_visually_hidden_from_conversation"] = True
    return {
        "id": node_id,
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": time,
        "update_time": None,
        "content": {"content_type": content_type, "parts": parts},
        "status": "finished_successfully",
        "metadata": metadata,
        "recipient": "all",
    }


def gpt_conversation(
    conv_id: str,
    nodes: list[tuple[str, str | None, dict[str, Any] | None]],
    *,
    current: str | None,
    title: str = "A chat",
    create_time: float | None = 1714557600.0,
    update_time: float | None = 1714558000.0,
) -> dict[str, Any]:
    """nodes: (node_id, parent_id, message) in any order; children are derived."""
    mapping: dict[str, Any] = {
        nid: {"id": nid, "message": msg, "parent": parent, "children": []}
        for nid, parent, msg in nodes
    }
    for nid, parent, _ in nodes:
        if parent in mapping:
            mapping[parent]["children"].append(nid)
    return {
        "title": title,
        "create_time": create_time,
        "update_time": update_time,
        "mapping": mapping,
        "current_node": current,
        "id": conv_id,
        "conversation_id": conv_id,
        "default_model_slug": "gpt-4o",
        "is_archived": False,
    }


def gpt_branching() -> dict[str, Any]:
    """root → hidden system → user → two assistant replies (regenerated) → user follow-up."""
    return gpt_conversation(
        "conv-branch",
        [
            ("root", None, None),
            ("sys", "root", gpt_message("sys", "system", "", time=None, hidden=True)),
            ("u1", "sys", gpt_message("u1", "user", "What is a monad?", time=1714557720.0)),
            ("a1", "u1", gpt_message("a1", "assistant", "OLD ANSWER", time=1714557730.0)),
            (
                "a2",
                "u1",
                gpt_message("a2", "assistant", "A monoid in endofunctors.", time=1714557790.0),
            ),
            ("u2", "a2", gpt_message("u2", "user", "Thanks!", time=1714557800.0)),
        ],
        current="u2",
        title="Monads",
    )


# --- Claude ---------------------------------------------------------------------------------


def claude_message(
    uuid: str, sender: str, text: str, *, blocks: list[dict[str, Any]] | None = None, **extra: Any
) -> dict[str, Any]:
    message = {
        "uuid": uuid,
        "text": text,
        "content": blocks if blocks is not None else [{"type": "text", "text": text}],
        "sender": sender,
        "created_at": "2024-06-01T09:30:00.000000Z",
        "updated_at": "2024-06-01T09:30:00.000000Z",
        "attachments": [],
        "files": [],
    }
    message.update(extra)
    return message


def claude_conversation(
    uuid: str, messages: list[dict[str, Any]], name: str = "Chat"
) -> dict[str, Any]:
    return {
        "uuid": uuid,
        "name": name,
        "created_at": "2024-06-01T09:29:00.000000Z",
        "updated_at": "2024-06-01T10:00:00.000000Z",
        "account": {"uuid": "user-1"},
        "chat_messages": messages,
    }


CLAUDE_USERS = [{"uuid": "user-1", "full_name": "Ada Lumen", "email_address": "ada@example.org"}]
CLAUDE_PROJECTS = [
    {
        "uuid": "proj-1",
        "name": "Tidewatch Dashboard",
        "description": "Ocean sensor dashboard.",
        "is_private": True,
        "is_starter_project": False,
        "prompt_template": "Answer briefly.",
        "created_at": "2024-05-01T08:00:00Z",
        "updated_at": "2024-05-02T08:00:00Z",
        "docs": [
            {
                "uuid": "doc-1",
                "filename": "sensors.md",
                "content": "# Sensors\n\nBuoys.",
                "created_at": "2024-05-01T08:05:00Z",
            }
        ],
    },
    {
        "uuid": "starter",
        "name": "How to use Claude",
        "description": "An example project",
        "is_starter_project": True,
        "docs": [],
    },
]
CLAUDE_MEMORIES = [
    {
        "conversations_memory": "**Work context**\n\n- Ada builds dashboards. She prefers Rust.\n"
        "- Ada writes science articles.\n\n**Personal**\n\nLives in Lisbon.",
        "project_memories": {"proj-1": "The dashboard targets volunteers."},
    }
]
