"""Build the `pcp propose` quality corpus from its readable sources.

    python bench/propose/build_corpus.py          # writes dev/ and heldout/ beside this file

Each file under `source/` holds one persona's conversations in a small plain-text format
(see `source/README.md`). This script renders them into the real export formats pcp imports
(a ChatGPT export zip with `conversations.json` whose conversations are `mapping` trees; a
Claude export zip with `users.json`, `projects.json` and `conversations.json` whose
conversations hold `chat_messages`) and writes, beside each export, `<export>.labels.json`:
the facts each conversation states about the person in the person's own turns, and the trap
sentences that must not become proposals.

The output is deterministic (ids and times come from the source), so the committed exports
are exactly what this script writes.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import uuid
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "source"
KINDS = ("keystone", "timeline_event")
KEYSTONE_CATEGORIES = (
    "identity",
    "preference",
    "rule",
    "objective",
    "constraint",
    "relationship",
    "glossary",
    "other",
)
TIMELINE_CATEGORIES = ("job", "move", "milestone", "publication", "relationship", "other")
TRAP_KINDS = (
    "hypothetical",
    "other_person",
    "assistant_paraphrase",
    "question",
    "quoted",
    "pasted",
    "code",
    "negated",
    "joke",
)
FIXED_TIME = (2025, 1, 1, 0, 0, 0)  # zip member times, so rebuilding changes no byte


@dataclass
class Turn:
    role: str  # user | assistant | code | tool | alt
    text: str
    attachments: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Conversation:
    persona: str
    key: str
    fmt: str
    split: str
    title: str
    start: datetime
    turns: list[Turn]
    facts: list[dict[str, Any]]
    traps: list[dict[str, Any]]


class SourceError(ValueError):
    pass


# --- reading the sources ---------------------------------------------------------------------


def read_persona(path: Path) -> tuple[dict[str, str], list[Conversation]]:
    text = path.read_text(encoding="utf-8")
    header, *chunks = re.split(r"^=== ", text, flags=re.M)
    meta = _fields(header)
    persona = meta.get("persona") or path.stem
    conversations = [_conversation(persona, chunk, path) for chunk in chunks]
    return meta, conversations


def _fields(block: str) -> dict[str, str]:
    out = {}
    for line in block.splitlines():
        if ":" in line and not line.startswith("#"):
            key, _, value = line.partition(":")
            out[key.strip()] = value.strip()
    return out


def _conversation(persona: str, chunk: str, path: Path) -> Conversation:
    head, *sections = re.split(r"^--- ", chunk, flags=re.M)
    first, _, rest = head.partition("\n")
    key = first.strip()
    meta = _fields(rest)
    where = f"{path.name}: {key}"
    for needed in ("format", "split", "title", "date"):
        if needed not in meta:
            raise SourceError(f"{where}: no {needed}:")
    if meta["format"] not in ("chatgpt", "claude") or meta["split"] not in ("dev", "heldout"):
        raise SourceError(f"{where}: format must be chatgpt|claude and split dev|heldout")
    turns: list[Turn] = []
    facts: list[dict[str, Any]] = []
    traps: list[dict[str, Any]] = []
    for section in sections:
        label, _, content = section.partition("\n")
        label = label.strip()
        content = content.strip("\n")
        if label in ("user", "assistant", "code", "tool", "alt"):
            turns.append(Turn(label, content.rstrip()))
        elif label.startswith("attach "):
            if not turns or turns[-1].role != "user":
                raise SourceError(f"{where}: an attachment must follow a user turn")
            turns[-1].attachments.append((label[len("attach ") :].strip(), content.rstrip()))
        elif label == "facts":
            facts.extend(_fact(line, where) for line in _lines(content))
        elif label == "traps":
            traps.extend(_trap(line, where) for line in _lines(content))
        else:
            raise SourceError(f"{where}: unknown section --- {label}")
    if not any(t.role == "user" for t in turns):
        raise SourceError(f"{where}: no user turn")
    start = datetime.fromisoformat(meta["date"]).replace(tzinfo=UTC)
    conv = Conversation(
        persona, key, meta["format"], meta["split"], meta["title"], start, turns, facts, traps
    )
    _check_labels(conv, where)
    return conv


def _lines(content: str) -> list[str]:
    return [ln.strip() for ln in content.splitlines() if ln.strip() and not ln.startswith("#")]


def _fact(line: str, where: str) -> dict[str, Any]:
    # kind | category | match words, comma separated | date or - | current|past | fact [| lang=xx]
    parts = [p.strip() for p in line.split("|")]
    lang = "en"
    if len(parts) == 7 and parts[6].startswith("lang="):
        lang = parts.pop()[len("lang=") :]
    if len(parts) != 6:
        raise SourceError(f"{where}: a fact needs 6 fields (and an optional lang=xx): {line}")
    kind, category, words, date, state, fact = parts
    kind = {"k": "keystone", "t": "timeline_event"}.get(kind, kind)
    if kind not in KINDS:
        raise SourceError(f"{where}: unknown kind {kind}")
    allowed = KEYSTONE_CATEGORIES if kind == "keystone" else TIMELINE_CATEGORIES
    if category not in allowed:
        raise SourceError(f"{where}: {category} is not a {kind} category")
    if state not in ("current", "past"):
        raise SourceError(f"{where}: state must be current|past: {line}")
    if date != "-" and not re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", date):
        raise SourceError(f"{where}: bad date {date}")
    if kind == "timeline_event" and date == "-":
        raise SourceError(f"{where}: a timeline event needs a date: {line}")
    match = [w.strip() for w in words.split(",") if w.strip()]
    if not match:
        raise SourceError(f"{where}: a fact needs match words: {line}")
    return {
        "kind": kind,
        "category": category,
        "fact": fact,
        "match": match,
        "date": None if date == "-" else date,
        "current": state == "current",
        "lang": lang,
    }


def _trap(line: str, where: str) -> dict[str, Any]:
    # kind | match words | the sentence
    parts = [p.strip() for p in line.split("|", 2)]
    if len(parts) != 3 or parts[0] not in TRAP_KINDS:
        raise SourceError(f"{where}: a trap is 'kind | words | sentence' with kind in {TRAP_KINDS}")
    return {
        "kind": parts[0],
        "match": [w.strip() for w in parts[1].split(",") if w.strip()],
        "text": parts[2],
    }


def _check_labels(conv: Conversation, where: str) -> None:
    """Every fact's words are in the person's own turns; every trap's sentence is in the text."""
    own = "\n".join(t.text for t in conv.turns if t.role == "user").casefold()
    everything = "\n".join(
        [t.text for t in conv.turns] + [a[1] for t in conv.turns for a in t.attachments]
    ).casefold()
    for fact in conv.facts:
        missing = [w for w in fact["match"] if w.casefold() not in own]
        if missing:
            raise SourceError(f"{where}: fact words {missing} not in the person's turns")
    for trap in conv.traps:
        probe = trap["text"].casefold()[:40]
        if probe not in everything:
            raise SourceError(f"{where}: trap sentence not found: {trap['text'][:60]}")


# --- rendering the exports -------------------------------------------------------------------


def _uid(*parts: str) -> str:
    return str(uuid.UUID(hashlib.sha256("/".join(parts).encode()).hexdigest()[:32]))


def _times(conv: Conversation) -> list[datetime]:
    """A plausible time for each turn: the person types, the model answers within a minute."""
    out, now = [], conv.start
    for index, turn in enumerate(conv.turns):
        seed = int(hashlib.sha256(f"{conv.key}/{index}".encode()).hexdigest()[:6], 16)
        if turn.role == "user":
            now += timedelta(seconds=40 + seed % 400 + len(turn.text) // 4)
        else:
            now += timedelta(seconds=4 + seed % 30)
        out.append(now)
    return out


def _user_text(turn: Turn) -> str:
    """ChatGPT has no attachments with text: people paste the document into the message."""
    return "\n\n".join([turn.text, *(body for _, body in turn.attachments)])


def chatgpt_conversation(conv: Conversation) -> dict[str, Any]:
    conv_id = _uid("chatgpt", conv.persona, conv.key)
    times = _times(conv)
    mapping: dict[str, Any] = {}
    root = _uid(conv_id, "root")
    mapping[root] = {"id": root, "message": None, "parent": None, "children": []}
    system = _uid(conv_id, "system")
    mapping[system] = _gpt_node(
        system, root, "system", "", conv.start.timestamp(), hidden=True, time=None
    )
    mapping[root]["children"].append(system)
    parent = system
    for index, (turn, when) in enumerate(zip(conv.turns, times, strict=True)):
        node_id = _uid(conv_id, str(index))
        if turn.role == "alt":  # a reply the person regenerated: a sibling off the branch
            mapping[node_id] = _gpt_node(node_id, parent, "assistant", turn.text, when.timestamp())
            mapping[parent]["children"].append(node_id)
            continue
        role = {"user": "user", "assistant": "assistant", "code": "assistant", "tool": "tool"}[
            turn.role
        ]
        text = _user_text(turn) if turn.role == "user" else turn.text
        mapping[node_id] = _gpt_node(
            node_id,
            parent,
            role,
            text,
            when.timestamp(),
            code=turn.role == "code",
            output=turn.role == "tool",
        )
        mapping[parent]["children"].append(node_id)
        parent = node_id
    return {
        "title": conv.title,
        "create_time": conv.start.timestamp(),
        "update_time": times[-1].timestamp(),
        "mapping": mapping,
        "moderation_results": [],
        "current_node": parent,
        "plugin_ids": None,
        "conversation_id": conv_id,
        "conversation_template_id": None,
        "gizmo_id": None,
        "is_archived": False,
        "safe_urls": [],
        "default_model_slug": "gpt-4o",
        "id": conv_id,
    }


def _gpt_node(
    node_id: str,
    parent: str,
    role: str,
    text: str,
    when: float,
    *,
    hidden: bool = False,
    code: bool = False,
    output: bool = False,
    time: float | None | str = "given",
) -> dict[str, Any]:
    if code:
        content: dict[str, Any] = {"content_type": "code", "language": "unknown", "text": text}
    elif output:
        content = {"content_type": "execution_output", "text": text}
    else:
        content = {"content_type": "text", "parts": [text]}
    metadata: dict[str, Any] = {}
    if hidden:
        metadata["is_visually_hidden_from_conversation"] = True
    if role == "assistant":
        metadata.update({"model_slug": "gpt-4o", "default_model_slug": "gpt-4o"})
    return {
        "id": node_id,
        "message": {
            "id": node_id,
            "author": {
                "role": role,
                "name": "python" if output else None,
                "metadata": {},
            },
            "create_time": when if time == "given" else time,
            "update_time": None,
            "content": content,
            "status": "finished_successfully",
            "end_turn": True if role == "assistant" and not code else None,
            "weight": 1.0,
            "metadata": metadata,
            "recipient": "python" if code else "all",
        },
        "parent": parent,
        "children": [],
    }


def claude_conversation(conv: Conversation, account: str) -> dict[str, Any]:
    conv_id = _uid("claude", conv.persona, conv.key)
    times = _times(conv)
    messages = []
    parent = "00000000-0000-4000-8000-000000000000"
    for index, (turn, when) in enumerate(zip(conv.turns, times, strict=True)):
        if turn.role in ("alt", "tool"):
            continue
        message_id = _uid(conv_id, str(index))
        stamp = when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        sender = "human" if turn.role == "user" else "assistant"
        text = turn.text if turn.role != "code" else f"```python\n{turn.text}\n```"
        messages.append(
            {
                "uuid": message_id,
                "text": text,
                "content": [
                    {
                        "start_timestamp": stamp,
                        "stop_timestamp": stamp,
                        "type": "text",
                        "text": text,
                        "citations": [],
                    }
                ],
                "sender": sender,
                "created_at": stamp,
                "updated_at": stamp,
                "attachments": [
                    {
                        "file_name": name,
                        "file_size": len(body.encode()),
                        "file_type": "txt",
                        "extracted_content": body,
                    }
                    for name, body in turn.attachments
                ],
                "files": [],
                "parent_message_uuid": parent,
            }
        )
        parent = message_id
    return {
        "uuid": conv_id,
        "name": conv.title,
        "summary": "",
        "created_at": conv.start.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "updated_at": times[-1].strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "account": {"uuid": account},
        "chat_messages": messages,
    }


def conversation_id(conv: Conversation) -> str:
    return _uid(conv.fmt, conv.persona, conv.key)


def _write_zip(path: Path, files: dict[str, Any]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, value in files.items():
            info = zipfile.ZipInfo(name, FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, json.dumps(value, ensure_ascii=False, indent=None))


def build(out: Path = HERE) -> list[Path]:
    written = []
    for split in ("dev", "heldout"):
        folder = out / split
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*"):
            old.unlink()
    for source in sorted(SOURCE.glob("*.txt")):
        meta, conversations = read_persona(source)
        persona = meta.get("persona") or source.stem
        for split in ("dev", "heldout"):
            for fmt in ("chatgpt", "claude"):
                chosen = [c for c in conversations if c.split == split and c.fmt == fmt]
                if not chosen:
                    continue
                target = out / split / f"{persona}-{fmt}.zip"
                account = _uid("account", persona)
                if fmt == "chatgpt":
                    files = {
                        "conversations.json": [chatgpt_conversation(c) for c in chosen],
                        "user.json": {"id": f"user-{account[:12]}", "chatgpt_plus_user": True},
                        "message_feedback.json": [],
                    }
                else:
                    files = {
                        "users.json": [
                            {
                                "uuid": account,
                                "full_name": meta.get("name", persona),
                                "email_address": f"{persona}@example.invalid",
                            }
                        ],
                        "projects.json": [],
                        "conversations.json": [claude_conversation(c, account) for c in chosen],
                    }
                _write_zip(target, files)
                labels = {
                    "persona": persona,
                    "format": fmt,
                    "split": split,
                    "conversations": [
                        {
                            "id": conversation_id(c),
                            "key": c.key,
                            "title": c.title,
                            "date": c.start.date().isoformat(),
                            "facts": c.facts,
                            "traps": c.traps,
                        }
                        for c in chosen
                    ],
                }
                label_path = target.with_suffix(".labels.json")
                label_path.write_text(
                    json.dumps(labels, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
                )
                written += [target, label_path]
    return written


def main() -> int:
    try:
        written = build()
    except SourceError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 5
    total = sum(p.stat().st_size for p in written)
    print(f"wrote {len(written)} files, {total / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
