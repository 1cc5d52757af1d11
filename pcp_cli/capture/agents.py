"""The coding agents' own hook configuration: pcp's entries written into it, and taken out.

- Claude Code reads `hooks` from `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json`
  when set): for each event a list of matcher groups, `{"matcher"?, "hooks": [{"type":
  "command", "command", "timeout"}]}`. pcp adds one group to `SessionEnd` (the session is
  over) and one to `PreCompact` (a long session is about to be summarised: what it said so far
  is stored first). The command gets the event as JSON on stdin: `session_id`,
  `transcript_path`, `cwd`, `hook_event_name` (and `reason` or `trigger`).
- Codex CLI reads `notify` from `~/.codex/config.toml` (`$CODEX_HOME/config.toml`): one
  command array, run after every turn with a JSON argument appended last (`type:
  "agent-turn-complete"`, `thread-id`, `turn-id`, `cwd`, `input-messages`,
  `last-assistant-message`). Codex runs one notify program only, so a `notify` the person
  already had is kept after pcp's own arguments, behind `--`: pcp's hook runs it on with the
  same argument, and `uninstall` puts it back as it was.

Everything else in either file is kept as it was (TOML comments and layout too: tomlkit edits
the document in place). A file that cannot be read or parsed is reported with its line, and
nothing is written; a changed file is first copied beside itself (`<name>.pcp-backup-<time>`).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from pcp_cli.errors import InvalidInput, UsageError
from pcp_cli.store.atomic import write_atomic

AGENTS = ("claude-code", "codex")
CLAUDE_EVENTS = ("SessionEnd", "PreCompact")
# Seconds Claude Code gives the command (the hook returns in well under one).
CLAUDE_TIMEOUT = 10


def check_agent(agent: str) -> str:
    if agent not in AGENTS:
        raise UsageError(f"unknown agent {agent!r}", hint=f"one of: {', '.join(AGENTS)}")
    return agent


def claude_settings_path() -> Path:
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base).expanduser() if base else Path.home() / ".claude") / "settings.json"


def codex_home() -> Path:
    base = os.environ.get("CODEX_HOME")
    return Path(base).expanduser() if base else Path.home() / ".codex"


def config_path(agent: str) -> Path:
    return claude_settings_path() if check_agent(agent) == "claude-code" else (
        codex_home() / "config.toml")


def hook_argv(agent: str, store_root: Path) -> list[str]:
    """The command the agent runs: the `pcp-cli` script beside this interpreter (a pipx or
    venv install), else this interpreter with `-m pcp_cli`; absolute paths both, so the hook
    does not depend on the agent's PATH."""
    script = Path(sys.executable).parent / ("pcp-cli.exe" if os.name == "nt" else "pcp-cli")
    head = [str(script)] if script.is_file() else [sys.executable, "-m", "pcp_cli"]
    return [*head, "hooks", "run", agent, "--store", str(store_root)]


def is_pcp_argv(argv: list[str], agent: str) -> bool:
    """True for a command that runs pcp's hook for `agent` (whatever the store or install)."""
    for i in range(len(argv) - 2):
        if argv[i:i + 3] == ["hooks", "run", agent]:
            head = argv[:i]
            name = Path(head[0]).name if head else ""
            return name.startswith("pcp-cli") or head[-2:] == ["-m", "pcp_cli"]
    return False


# -- reading and writing the files --------------------------------------------------------------
def _read_text(path: Path) -> str | None:
    try:
        return path.read_text("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot be read ({exc})", path=str(path),
                           hint="fix or move the file, then run this again") from None


def _write(path: Path, old: str | None, new: str) -> str | None:
    """Write `new` over `old` (a backup of `old` first); the backup's path, if one was made."""
    backup = None
    if old is not None:
        backup = path.with_name(f"{path.name}.pcp-backup-{time.strftime('%Y%m%dT%H%M%S')}")
        shutil.copy2(path, backup)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, new)
    return str(backup) if backup else None


def _load_claude(path: Path) -> tuple[str | None, dict[str, Any]]:
    text = _read_text(path)
    if text is None or not text.strip():
        return text, {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"is not valid JSON ({exc.msg}, column {exc.colno})", path=str(path),
                           line=exc.lineno, hint="fix the file, then run this again") from None
    if not isinstance(data, dict):
        raise InvalidInput("is not a JSON object", path=str(path))
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise InvalidInput("`hooks` is not an object", path=str(path))
    for event in CLAUDE_EVENTS:
        groups = (hooks or {}).get(event)
        if groups is not None and not (isinstance(groups, list)
                                       and all(isinstance(g, dict) for g in groups)):
            raise InvalidInput(f"`hooks.{event}` is not a list of matcher groups",
                               path=str(path))
    return text, data


def _without_pcp_claude(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with pcp's Claude Code hooks taken out (empty groups and events too)."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return data
    kept: dict[str, Any] = {}
    for event, groups in hooks.items():
        if event not in CLAUDE_EVENTS or not isinstance(groups, list):
            kept[event] = groups
            continue
        new_groups = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                new_groups.append(group)
                continue
            left = [h for h in inner if not (isinstance(h, dict) and isinstance(
                h.get("command"), str) and _is_pcp_command(h["command"], "claude-code"))]
            if left:
                new_groups.append({**group, "hooks": left} if len(left) != len(inner)
                                  else group)
        if new_groups:
            kept[event] = new_groups
    out = dict(data)
    if kept:
        out["hooks"] = kept
    else:
        del out["hooks"]
    return out


def _is_pcp_command(command: str, agent: str) -> bool:
    try:
        return is_pcp_argv(shlex.split(command), agent)
    except ValueError:
        return False


def _claude_change(store_root: Path | None) -> tuple[Path, str | None, str | None]:
    """(the settings file, its text now, its text after installing for `store_root`, or
    after uninstalling when None)."""
    path = claude_settings_path()
    text, data = _load_claude(path)
    new = _without_pcp_claude(data)
    if store_root is not None:
        command = shlex.join(hook_argv("claude-code", store_root))
        hooks = dict(new.get("hooks") or {})
        for event in CLAUDE_EVENTS:
            hooks[event] = [*hooks.get(event, []), {"hooks": [
                {"type": "command", "command": command, "timeout": CLAUDE_TIMEOUT}]}]
        new = {**new, "hooks": hooks}
    if new == data:
        return path, text, text
    return path, text, json.dumps(new, indent=2, ensure_ascii=False) + "\n"


def _load_codex(path: Path) -> tuple[str | None, Any]:
    import tomlkit
    from tomlkit.exceptions import ParseError

    text = _read_text(path)
    try:
        doc = tomlkit.parse(text or "")
    except ParseError as exc:
        raise InvalidInput(f"is not valid TOML ({exc.args[0] if exc.args else exc})",
                           path=str(path), line=exc.line,
                           hint="fix the file, then run this again") from None
    notify = doc.get("notify")
    if notify is not None and not (isinstance(notify, list)
                                   and all(isinstance(a, str) for a in notify)):
        raise InvalidInput("`notify` is not an array of strings", path=str(path))
    return text, doc


def _codex_change(store_root: Path | None) -> tuple[Path, str | None, str | None]:
    import tomlkit

    path = codex_home() / "config.toml"
    text, doc = _load_codex(path)
    notify = [str(a) for a in doc.get("notify") or []]
    chained = notify
    if is_pcp_argv(notify, "codex"):
        chained = notify[notify.index("--") + 1:] if "--" in notify else []
    if store_root is not None:
        wanted: list[str] | None = hook_argv("codex", store_root) + (
            ["--", *chained] if chained else [])
    else:
        wanted = chained or None
    if wanted == (notify or None):
        return path, text, text
    if wanted is None:
        del doc["notify"]
    elif "notify" in doc:
        doc["notify"] = wanted
    else:
        # a top-level key goes before the first table (else TOML reads it as the table's),
        # right after the last top-level line, so that uninstalling gives back the same bytes
        body = doc.body
        at = next((i for i, (_, item) in enumerate(body)
                   if isinstance(item, tomlkit.items.Table | tomlkit.items.AoT)), None)
        if at is None:
            doc["notify"] = wanted
        else:
            while at > 0 and isinstance(body[at - 1][1], tomlkit.items.Whitespace):
                at -= 1
            body.insert(at, (tomlkit.key("notify"), tomlkit.item(wanted)))
            doc = tomlkit.parse(tomlkit.dumps(doc))  # re-index the keys
    return path, text, tomlkit.dumps(doc)


def _change(agent: str, store_root: Path | None) -> tuple[Path, str | None, str | None]:
    check_agent(agent)
    return (_claude_change if agent == "claude-code" else _codex_change)(store_root)


# -- the operations ---------------------------------------------------------------------------
def install(agent: str, store_root: Path) -> dict[str, Any]:
    """Add (or update) pcp's hook for `agent`, for the store at `store_root`."""
    path, old, new = _change(agent, store_root)
    changed = new != old
    backup = _write(path, old, new or "") if changed else None
    return {"agent": agent, "config": str(path), "changed": changed, "backup": backup,
            "command": hook_argv(agent, store_root)}


def uninstall(agent: str, store_root: Path | None = None) -> dict[str, Any]:
    """Take pcp's hook for `agent` out of its configuration, and nothing else. With
    `store_root`, only when it is installed for that store (`other_store` says which store it
    is installed for when it is left)."""
    if store_root is not None:
        now = installed(agent)
        if now["installed"] and now["store"] != str(store_root):
            return {"agent": agent, "config": now["config"], "changed": False, "backup": None,
                    "other_store": now["store"]}
    path, old, new = _change(agent, None)
    changed = new != old and old is not None
    backup = _write(path, old, new or "") if changed else None
    return {"agent": agent, "config": str(path), "changed": changed, "backup": backup,
            "other_store": None}


def installed(agent: str) -> dict[str, Any]:
    """Whether `agent`'s configuration runs pcp's hook, and for which store."""
    path = config_path(agent)
    argv: list[str] = []
    error = None
    try:
        if agent == "claude-code":
            _, data = _load_claude(path)
            for event in CLAUDE_EVENTS:
                for group in (data.get("hooks") or {}).get(event) or []:
                    for h in group.get("hooks") or []:
                        if isinstance(h, dict) and _is_pcp_command(str(h.get("command")),
                                                                   agent):
                            argv = shlex.split(h["command"])
        else:
            _, doc = _load_codex(path)
            notify = [str(a) for a in doc.get("notify") or []]
            argv = notify if is_pcp_argv(notify, agent) else []
    except InvalidInput as exc:
        error = exc.message
    store = argv[argv.index("--store") + 1] if "--store" in argv[:-1] else None
    return {"agent": agent, "config": str(path), "installed": bool(argv), "store": store,
            "error": error}
