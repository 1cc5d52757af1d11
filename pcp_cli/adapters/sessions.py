"""Coding-agent session logs as raw events: Claude Code and Codex CLI.

- Claude Code keeps one JSON Lines file per session, `~/.claude/projects/<project>/<session>.jsonl`
  (sub-agents in `agent-<id>.jsonl` beside it). Each line is one record: `user` and `assistant`
  lines carry an Anthropic-style `message` whose `content` is a string or a list of blocks
  (`text`, `thinking`, `tool_use`, `tool_result`, `image`); `summary`, `system` and
  `file-history-snapshot` lines are bookkeeping. Every line has a `uuid`, which keys its events.
- Codex CLI keeps `~/.codex/sessions/<yyyy>/<mm>/<dd>/rollout-<time>-<id>.jsonl`: a
  `session_meta` line, then `response_item` lines (`message`, `reasoning`, `function_call`,
  `function_call_output`, `custom_tool_call`, `local_shell_call`, ...), with `event_msg` lines
  that repeat them for the UI (not read: they would duplicate every message) and `turn_context`
  lines. Older rollouts start with a bare `{id, timestamp, instructions}` line followed by bare
  response items. Lines have no ids; an event is keyed by its file and line number (the file is
  only ever appended to).

Each session becomes one conversation (`conversation_id` the session id) in the namespace
`project:<name>`, `<name>` from the session's working folder. Messages are page text; tool
calls, tool results, reasoning and injected context (Codex's environment and instructions
messages, Claude Code's meta lines) are kept as events only. Each importer builds the same event
objects `pcp ingest` reads and hands them to the same machinery (pcp_cli/store/events.py).

A session still being written ends in a partial line: it is skipped with a warning and picked
up by the next import, which stores only the events that are new.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from pcp_cli.adapters.base import (
    Format,
    ItemProblem,
    Progress,
    not_text_problems,
    slugify,
    walk_folder,
)
from pcp_cli.errors import InvalidInput, StoreLocked, UsageError
from pcp_cli.model import jsonlimit, vocab
from pcp_cli.model.filenames import is_text, shown
from pcp_cli.model.ingest import EventInput, normalize_event, parse_timestamp

SESSION_FORMATS = ("claude_code", "codex")
SNIFF_BYTES = 256 * 1024
SNIFF_FILES = 50
# A source field kept with the event (namespaced `claude_code:<name>` / `codex:<name>`).
_KEEPABLE = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
_KNOWN = frozenset(("type", "conversation_id", "role", "content", "timestamp", "idempotency_key",
                    "namespace", "name", "input", "output", "call_id", "hidden", "extensions"))

# Claude Code: line fields that are not kept with the events (the message itself becomes the
# events; the rest are UI caches: a tool result's structured copy, file snapshots).
_CLAUDE_DROPPED = frozenset(("message", "toolUseResult", "snapshot", "type", "timestamp",
                             "content"))
_CLAUDE_BOOKKEEPING = frozenset(("file-history-snapshot", "queue-operation", "progress"))
# Codex: response items that are tool calls, and their outputs.
_CODEX_CALLS = {"function_call": "arguments", "custom_tool_call": "input",
                "local_shell_call": "action", "web_search_call": "action"}
_CODEX_OUTPUTS = ("function_call_output", "custom_tool_call_output")
_CODEX_LINE_TYPES = frozenset(("session_meta", "response_item", "event_msg", "turn_context",
                               "compacted"))
_CODEX_ITEM_TYPES = frozenset(("message", "reasoning", *_CODEX_CALLS, *_CODEX_OUTPUTS))
# Codex injects these as user messages; they are context, not what the person said.
_CODEX_CONTEXT = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
                  "<permissions instructions>")


@dataclass
class Session:
    """One parsed session file."""

    path: Path
    label: str  # how problems name it
    format: str
    conversation_id: str | None = None
    project: str | None = None
    events: list[EventInput] = field(default_factory=list)
    problems: list[ItemProblem] = field(default_factory=list)
    warnings: list[ItemProblem] = field(default_factory=list)


# --- recognising -----------------------------------------------------------------------------


def detect_sessions(path: Path) -> Format | None:
    """'claude_code' or 'codex' when `path` (a session file, or a folder holding them at any
    depth) is one; None otherwise. A JSON Lines file of plain events is pointed at `pcp ingest`."""
    if path.is_file():
        verdict = sniff(path)
        if verdict is None and _looks_like_events(path):
            raise InvalidInput("a JSON Lines file of events, not a session log",
                               path=str(path), hint=f"`pcp ingest {path}` reads these")
        return verdict
    if not path.is_dir():
        return None
    for count, candidate in enumerate(session_files(path)):
        if count >= SNIFF_FILES:
            break
        verdict = sniff(candidate)
        if verdict is not None:
            return verdict
    return None


def sniff(path: Path) -> Format | None:
    """Recognise one JSON Lines file from its first complete lines."""
    lines = list(_head_objects(path, 5))
    if not lines:
        return None
    first = lines[0]
    for obj in lines:
        if "sessionId" in obj or (obj.get("type") == "summary" and "leafUuid" in obj):
            return "claude_code"
        if obj.get("type") in _CODEX_LINE_TYPES and isinstance(obj.get("payload"), dict):
            return "codex"
    if "type" not in first and {"id", "timestamp"} <= set(first) and any(
        obj.get("type") in _CODEX_ITEM_TYPES or "record_type" in obj for obj in lines[1:]
    ):
        return "codex"
    if all(obj.get("type") == "file-history-snapshot" for obj in lines):
        return "claude_code"  # a Claude Code session opened but never talked in
    return None


def session_files(path: Path, not_text: list[Path] | None = None) -> list[Path]:
    """The `.jsonl` files under a folder (or the file itself), hidden folders left out; those
    whose names are not text are left out too, and added to `not_text` when it is given."""
    if path.is_file():
        found, odd = ([path], []) if is_text(path.name) else ([], [path])
    else:
        found, odd = walk_folder(path, lambda name: name.endswith(".jsonl"))
    if not_text is not None:
        not_text.extend(odd)
    return found


def _head_objects(path: Path, count: int) -> Iterator[dict[str, Any]]:
    try:
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError:
        return
    pieces = head.split(b"\n")
    if not head.endswith(b"\n"):
        pieces = pieces[:-1]  # possibly cut by the read
    seen = 0
    for piece in pieces:
        if not piece.strip():
            continue
        try:
            obj = jsonlimit.loads(piece)
        except (ValueError, jsonlimit.DepthError):
            continue
        if isinstance(obj, dict):
            yield obj
            seen += 1
            if seen >= count:
                return


def _looks_like_events(path: Path) -> bool:
    for obj in _head_objects(path, 1):
        return obj.get("type") in vocab.EVENT_TYPES
    return False


# --- reading lines ---------------------------------------------------------------------------


def read_lines(path: Path, label: str, session: Session) -> Iterator[tuple[int, dict[str, Any]]]:
    """The JSON object of each complete line. A bad line is skipped (a problem); a partial last
    line, the one a running agent is still writing, is skipped with a warning."""
    raw = path.read_bytes()
    complete = raw.endswith(b"\n")
    pieces = raw.split(b"\n")
    if complete or not pieces[-1]:
        pieces = pieces[:-1]
    last = len(pieces)
    for number, piece in enumerate(pieces, start=1):
        if not piece.strip():
            continue
        try:
            obj = jsonlimit.loads(piece)
        except jsonlimit.DepthError:
            session.problems.append(ItemProblem(
                label, f"line {number}", f"JSON nested deeper than {jsonlimit.MAX_JSON_DEPTH} "
                "levels; skipped", line=number))
            continue
        except ValueError:
            if number == last and not complete:
                session.warnings.append(ItemProblem(
                    label, f"line {number}", "incomplete last line (the session is still "
                    "being written); it is imported next time", line=number, skipped=False))
            else:
                session.problems.append(ItemProblem(label, f"line {number}",
                                                    "not valid JSON; skipped", line=number))
            continue
        if not isinstance(obj, dict):
            session.problems.append(ItemProblem(label, f"line {number}",
                                                "not a JSON object; skipped", line=number))
            continue
        yield number, obj


# --- building events -------------------------------------------------------------------------


def _event(session: Session, kind: str, key: str, timestamp: Any, fields: dict[str, Any],
           kept: dict[str, Any], line: int) -> None:
    obj: dict[str, Any] = {"type": kind, "idempotency_key": key, **fields}
    if session.conversation_id is not None:
        obj["conversation_id"] = session.conversation_id
    if parse_timestamp(timestamp) is not None:
        obj["timestamp"] = timestamp
    for name, value in kept.items():
        if name not in _KNOWN and name not in obj and _KEEPABLE.match(name):
            obj[name] = value
    session.events.append(normalize_event(
        obj, path=session.label, line=line, unknown_prefix=session.format,
        source_ref=f"{_ref(session.path)}:{line}", checked=True))


def _ref(path: Path) -> str:
    """Where an event came from, without the machine's folders: `<project>/<file>`."""
    return shown(f"{path.parent.name}/{path.name}")


def _text_of(content: Any) -> str:
    """The text of a tool result or message content: a string, or a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                if isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif block.get("type") in ("image", "input_image"):
                    parts.append("[image]")
        return "\n\n".join(p for p in parts if p)
    if content is None:
        return ""
    return json.dumps(content, ensure_ascii=False)


def _project_of(cwd: Any) -> str | None:
    if not isinstance(cwd, str) or not cwd.strip():
        return None
    name = (PureWindowsPath(cwd) if "\\" in cwd else PurePosixPath(cwd)).name
    return slugify(name, fallback="") or None


# --- Claude Code -------------------------------------------------------------------------------


def parse_claude_code(path: Path, label: str) -> Session:
    session = Session(path, label, "claude_code")
    lines = list(read_lines(path, label, session))
    session_id = next((o["sessionId"] for _, o in lines if isinstance(o.get("sessionId"), str)),
                      path.stem)
    if path.stem.startswith("agent-") and session_id != path.stem:
        session_id = f"{session_id}/{path.stem}"  # a sub-agent's own conversation
    session.conversation_id = session_id[:200]
    session.project = next((p for _, o in lines if (p := _project_of(o.get("cwd")))), None) \
        or _project_from_folder(path.parent.name)
    # A summary line has no time of its own: it gets the time of the message it summarises.
    times = {o["uuid"]: o.get("timestamp") for _, o in lines if isinstance(o.get("uuid"), str)}
    for number, obj in lines:
        if obj.get("type") == "summary" and "timestamp" not in obj:
            obj = {**obj, "timestamp": times.get(obj.get("leafUuid"))}
        try:
            _claude_line(session, number, obj)
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            session.problems.append(ItemProblem(label, f"line {number}",
                                                f"malformed record ({exc}); skipped",
                                                line=number))
    return session


def _project_from_folder(name: str) -> str | None:
    # `-home-ada-code-tidewatch` (the working folder with '/' turned into '-'): its last part.
    tail = name.strip("-").rsplit("-", 1)[-1]
    return slugify(tail, fallback="") or None


def _claude_line(session: Session, number: int, obj: dict[str, Any]) -> None:
    kind = obj.get("type")
    uuid = obj.get("uuid") if isinstance(obj.get("uuid"), str) else None
    base = uuid or f"{session.path.stem}:line:{number}"
    kept = {k: v for k, v in obj.items() if k not in _CLAUDE_DROPPED}
    when = obj.get("timestamp")
    if kind in _CLAUDE_BOOKKEEPING:
        return
    if kind == "summary":
        summary = obj.get("summary")
        if isinstance(summary, str) and summary.strip():
            leaf = obj.get("leafUuid") if isinstance(obj.get("leafUuid"), str) else base
            _event(session, "note", f"summary:{leaf}", when,
                   {"content": summary, "hidden": True}, kept, number)
        return
    if kind == "system":
        text = _text_of(obj.get("content"))
        if text.strip():
            _event(session, "message", base, when,
                   {"role": "system", "content": text, "hidden": True}, kept, number)
        return
    if kind not in ("user", "assistant"):
        return
    message = obj.get("message")
    if not isinstance(message, dict):
        raise ValueError("no message")
    role = message.get("role") if message.get("role") in ("user", "assistant") else kind
    for name in ("id", "model", "stop_reason"):
        if isinstance(message.get(name), str):
            kept[f"message_{name}"] = message[name]
    if isinstance(message.get("usage"), dict):
        kept["message_usage"] = message["usage"]
    # Meta lines (caveats, command output shown to the model) and compaction summaries are
    # context the agent injected, not what anyone said.
    hidden = bool(obj.get("isMeta") or obj.get("isCompactSummary"))
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise ValueError("message content is neither text nor a list of blocks")
    for index, block in enumerate(content):
        key = f"{base}#{index}"
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text" and isinstance(block.get("text"), str):
            fields: dict[str, Any] = {"role": role, "content": block["text"]}
            if hidden:
                fields["hidden"] = True
            _event(session, "message", key, when, fields, kept, number)
        elif btype == "image":
            _event(session, "message", key, when, {"role": role, "content": "[image]"}, kept,
                   number)
        elif btype in ("thinking", "redacted_thinking"):
            text = block.get("thinking") if btype == "thinking" else ""
            _event(session, "reasoning", key, when,
                   {"content": text if isinstance(text, str) else ""}, kept, number)
        elif btype == "tool_use":
            fields = {"name": str(block.get("name") or "tool")[:200],
                      "input": block.get("input")}
            if isinstance(block.get("id"), str):
                fields["call_id"] = block["id"][:200]
            _event(session, "tool_call", key, when, fields, kept, number)
        elif btype == "tool_result":
            fields = {"role": "tool", "content": _text_of(block.get("content"))}
            if isinstance(block.get("tool_use_id"), str):
                fields["call_id"] = block["tool_use_id"][:200]
            extra = {**kept, "is_error": block["is_error"]} if "is_error" in block else kept
            _event(session, "message", key, when, fields, extra, number)
        else:  # a block kind this importer does not know: kept, not shown
            _event(session, "message", key, when,
                   {"role": role, "content": json.dumps(block, ensure_ascii=False),
                    "hidden": True}, kept, number)


# --- Codex CLI ---------------------------------------------------------------------------------


def parse_codex(path: Path, label: str) -> Session:
    session = Session(path, label, "codex")
    lines = list(read_lines(path, label, session))
    started = None
    for _, obj in lines:
        payload = obj.get("payload")
        if obj.get("type") == "session_meta" and isinstance(payload, dict):
            session.conversation_id = str(payload.get("id") or "")[:200] or None
            session.project = _project_of(payload.get("cwd"))
            started = payload.get("timestamp") or obj.get("timestamp")
            break
        if "type" not in obj and {"id", "timestamp"} <= set(obj):  # the older first line
            session.conversation_id = str(obj["id"])[:200] or None
            started = obj.get("timestamp")
            break
    if session.conversation_id is None:
        session.conversation_id = path.stem[:200]
    if session.project is None:
        session.project = next((p for _, o in lines if isinstance(o.get("payload"), dict)
                                and (p := _project_of(o["payload"].get("cwd")))), None)
    when = started
    for number, obj in lines:
        when = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else when
        try:
            _codex_line(session, number, obj, when)
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            session.problems.append(ItemProblem(label, f"line {number}",
                                                f"malformed record ({exc}); skipped",
                                                line=number))
    return session


def _codex_line(session: Session, number: int, obj: dict[str, Any], when: Any) -> None:
    key = f"{session.path.stem}:{number}"
    line_type = obj.get("type")
    payload = obj.get("payload")
    if line_type == "session_meta" and isinstance(payload, dict):
        kept = {k: v for k, v in payload.items() if k not in ("instructions", "id")}
        text = payload.get("instructions")
        _event(session, "message", key, when,
               {"role": "system", "content": text if isinstance(text, str) else "",
                "hidden": True}, kept, number)
        return
    if "type" not in obj and {"id", "timestamp"} <= set(obj):  # older first line
        text = obj.get("instructions")
        if isinstance(text, str) and text.strip():
            _event(session, "message", key, when,
                   {"role": "system", "content": text, "hidden": True}, {}, number)
        return
    if line_type == "compacted" and isinstance(payload, dict):
        text = payload.get("message")
        if isinstance(text, str) and text.strip():
            _event(session, "note", key, when, {"content": text, "hidden": True}, {}, number)
        return
    if line_type == "response_item" and isinstance(payload, dict):
        item = payload
    elif line_type is None or line_type in _CODEX_ITEM_TYPES:  # older rollouts: bare items
        item = obj
    else:
        return  # event_msg (a UI copy of the items), turn_context, record_type: state ...
    kind = item.get("type")
    kept = {k: v for k, v in item.items()
            if k not in ("type", "content", "role", "encrypted_content", "summary", "name",
                         "arguments", "input", "output", "call_id", "action")}
    if kind == "message":
        role = item.get("role")
        text = _text_of(item.get("content"))
        hidden = role in ("developer", "system") or (
            role == "user" and text.lstrip().startswith(_CODEX_CONTEXT))
        fields: dict[str, Any] = {"role": role if role in vocab.EVENT_ROLES else "system",
                                  "content": text}
        if role not in vocab.EVENT_ROLES:
            kept["source_role"] = role  # Codex's `developer`
        if hidden:
            fields["hidden"] = True
        _event(session, "message", key, when, fields, kept, number)
    elif kind == "reasoning":
        parts = [_text_of(item.get("summary")), _text_of(item.get("content"))]
        _event(session, "reasoning", key, when,
               {"content": "\n\n".join(p for p in parts if p)}, kept, number)
    elif kind in _CODEX_CALLS:
        raw = item.get(_CODEX_CALLS[kind])
        if isinstance(raw, str) and kind == "function_call":
            with contextlib.suppress(ValueError, jsonlimit.DepthError):  # a JSON string, usually
                raw = jsonlimit.loads(raw)
        fields = {"name": str(item.get("name") or kind.removesuffix("_call"))[:200],
                  "input": raw}
        if isinstance(item.get("call_id"), str):
            fields["call_id"] = item["call_id"][:200]
        _event(session, "tool_call", key, when, fields, kept, number)
    elif kind in _CODEX_OUTPUTS:
        output = item.get("output")
        fields = {"role": "tool",
                  "content": output if isinstance(output, str) else _text_of(output)}
        if isinstance(item.get("call_id"), str):
            fields["call_id"] = item["call_id"][:200]
        _event(session, "message", key, when, fields, kept, number)


# --- importing ---------------------------------------------------------------------------------


def parse_session(path: Path, fmt: str, label: str) -> Session:
    if fmt == "claude_code":
        return parse_claude_code(path, label)
    return parse_codex(path, label)


def import_sessions(store: Any, path: Path, *, fmt: str, namespace: str | None = None,
                    dry_run: bool = False, progress: Progress | None = None) -> dict[str, Any]:
    """`pcp import` of a session file or a folder of them: the import summary, plus `events`
    (stored, unchanged, conflicts) and `sessions` (how many files were read)."""
    from pcp_cli.adapters.writer import ImportSummary, stopped_by_lock
    from pcp_cli.model.page import Actor
    from pcp_cli.store.events import ImportedFiles, ingest

    summary = ImportSummary(format=fmt, dry_run=dry_run, source=str(path),
                            namespace=namespace or store.default_namespace)
    actor = Actor("tool", f"pcp-import-{fmt}")
    not_text: list[Path] = []
    files = [p for p in session_files(path, not_text) if path.is_file() or sniff(p) == fmt]
    for problem in not_text_problems(path, not_text):
        summary.problem(problem.source, problem.item, problem.reason, "skipped")
    total = sum(p.stat().st_size for p in files) or None
    done = 0
    stored = unchanged = conflicts = not_read = 0
    seen = ImportedFiles(store)
    for file in files:
        label = str(file)
        try:
            stamp = seen.stamp(file)
            known = seen.unchanged(stamp, fmt)
            if known is not None:  # imported whole before, and nothing changed since
                not_read += 1
                unchanged += known
                summary.count("conversation", "unchanged")
                continue
            session = parse_session(file, fmt, label)
        except OSError as exc:
            summary.problem(label, None, f"cannot be read ({exc.strerror})", "failed")
            continue
        for problem in session.problems:
            summary.problem(problem.source, problem.item, problem.reason, "skipped")
        for warning in session.warnings:
            summary.problem(warning.source, warning.item, warning.reason, "warning")
        if session.events:
            target = f"project:{session.project}" if session.project else namespace
            try:
                report = ingest(store, session.events, source=fmt, actor=actor,
                                origin="recorded", namespace=target, strict=False,
                                dry_run=dry_run, note=f"rolled up from {fmt} session "
                                f"{_ref(file)}")
            except (InvalidInput, UsageError) as exc:  # e.g. its page's head file is broken
                summary.problem(label, None, f"not imported: {exc.message}", "failed")
                continue
            except StoreLocked as exc:
                seen.save()
                raise stopped_by_lock(exc, summary) from None
            stored += report.stored
            unchanged += report.unchanged
            conflicts += len(report.conflicts)
            for conflict in report.conflicts:
                summary.problem(label, conflict.get("where"), conflict["reason"], "failed")
            for page in report.conversations:
                summary.count(page["type"], page["status"])
            if not (session.problems or report.conflicts or dry_run) and report.conversations:
                page = report.conversations[0]
                seen.record(stamp, fmt, page["page_id"], page["revision_id"],
                            report.stored + report.unchanged)
        done += stamp[1]
        if progress is not None:
            progress(done, total)
    seen.save()
    data = summary.to_dict()
    data["events"] = {"stored": stored, "unchanged": unchanged, "conflicts": conflicts}
    data["sessions"] = len(files)
    data["sessions_not_read"] = not_read
    return data
