"""`pcp hooks`: the agents' own configuration merged and unmerged, and the hook itself, which
returns at once, exits 0 whatever it is given, and loses no session when its worker dies."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from tests.conftest import cli, holding_the_lock

DATA = Path(__file__).parent / "data" / "sessions"
CLAUDE_LOG = DATA / "claude" / "projects" / "-home-ada-code-tidewatch" / \
    "4f35e220-c435-4cf7-b9b9-f40426042847.jsonl"
CODEX_HOME = DATA / "codex"
CODEX_THREAD = "5973b6c0-94b8-487b-a530-2aeb6098ae0e"

SETTINGS = """{
  "model": "opus",
  "hooks": {
    "SessionEnd": [{"hooks": [{"type": "command", "command": "echo bye"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "check.sh"}]}]
  },
  "permissions": {"allow": ["Bash(ls:*)"]}
}
"""
CONFIG_TOML = """# my Codex settings
model = "o3"  # the model I use

[mcp_servers.docs]
command = "docs-mcp"
args = ["--port", "0"]
"""


def claude_payload(path: Path | str, event: str = "SessionEnd", session: str = "4f35e220") -> str:
    """What Claude Code writes on the hook's stdin (SessionEnd; PreCompact has `trigger`)."""
    extra = {"reason": "exit"} if event == "SessionEnd" else {"trigger": "auto",
                                                             "custom_instructions": ""}
    return json.dumps({"session_id": session, "transcript_path": str(path),
                       "cwd": "/home/ada/code/tidewatch", "hook_event_name": event, **extra})


def codex_payload(thread: str = CODEX_THREAD) -> str:
    """What Codex appends as the notify program's last argument."""
    return json.dumps({"type": "agent-turn-complete", "thread-id": thread, "turn-id": "12345",
                       "cwd": "/home/ada/code/tidewatch", "client": "codex-tui",
                       "input-messages": ["Rename `foo` to `bar`."],
                       "last-assistant-message": "Rename complete."})


@pytest.fixture
def home() -> Path:
    home = Path(os.environ["HOME"])
    (home / ".claude").mkdir()
    (home / ".codex").mkdir()
    (home / ".claude" / "settings.json").write_text(SETTINGS)
    (home / ".codex" / "config.toml").write_text(CONFIG_TOML)
    return home


def backups(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.pcp-backup-*"))


# -- install, merge, idempotence, uninstall ----------------------------------------------------
@pytest.mark.slow  # among the default run's slowest (10-26 s): in the slow set
def test_claude_install_merges_and_uninstall_gives_the_file_back(home: Path, store: Path) -> None:
    settings = home / ".claude" / "settings.json"
    result = cli("hooks", "install", "claude-code", "--store", str(store), "--json")
    assert result.code == 0, result.stderr
    data = json.loads(settings.read_text())
    before = json.loads(SETTINGS)
    assert data["model"] == "opus" and data["permissions"] == before["permissions"]
    assert data["hooks"]["PreToolUse"] == before["hooks"]["PreToolUse"]
    assert data["hooks"]["SessionEnd"][0] == before["hooks"]["SessionEnd"][0]  # theirs kept
    for event in ("SessionEnd", "PreCompact"):
        ours = [h for g in data["hooks"][event] for h in g["hooks"] if "hooks run" in h["command"]]
        assert len(ours) == 1 and ours[0]["type"] == "command"
        assert ours[0]["command"].endswith(f"hooks run claude-code --store {store.resolve()}")
        assert Path(ours[0]["command"].split()[0]).is_absolute()
    assert [b.read_text() for b in backups(settings.parent)] == [SETTINGS]

    again = cli("hooks", "install", "claude-code", "--store", str(store), "--json")
    assert again.json["changed"] is False
    assert json.loads(settings.read_text()) == data and len(backups(settings.parent)) == 1

    status = cli("hooks", "status", "--store", str(store), "--json").json
    claude = next(a for a in status["agents"] if a["agent"] == "claude-code")
    assert claude["installed"] and claude["store"] == str(store.resolve())

    assert cli("hooks", "uninstall", "claude-code").code == 0
    assert json.loads(settings.read_text()) == before


def test_codex_install_keeps_comments_and_chains_an_existing_notify(home: Path,
                                                                    store: Path) -> None:
    config = home / ".codex" / "config.toml"
    assert cli("hooks", "install", "codex", "--store", str(store)).code == 0
    text = config.read_text()
    assert "# my Codex settings" in text and "# the model I use" in text
    parsed = tomllib.loads(text)
    assert parsed["model"] == "o3" and parsed["mcp_servers"]["docs"]["args"] == ["--port", "0"]
    assert parsed["notify"][-4:] == ["run", "codex", "--store", str(store.resolve())]
    assert cli("hooks", "install", "codex", "--store", str(store)).code == 0
    assert config.read_text() == text  # twice is once
    assert cli("hooks", "uninstall", "codex").code == 0
    assert config.read_text() == CONFIG_TOML  # byte for byte

    # a notify the person had is run on after pcp's, and comes back on uninstall
    mine = CONFIG_TOML.replace('model = "o3"', 'model = "o3"\nnotify = ["notify-send", "-t"]')
    config.write_text(mine)
    assert cli("hooks", "install", "codex", "--store", str(store)).code == 0
    notify = tomllib.loads(config.read_text())["notify"]
    assert notify[notify.index("--"):] == ["--", "notify-send", "-t"]
    assert cli("hooks", "uninstall").code == 0
    assert config.read_text() == mine


def test_install_writes_a_missing_file(store: Path) -> None:
    home = Path(os.environ["HOME"])
    assert cli("hooks", "install", "codex", "--store", str(store)).code == 0
    assert cli("hooks", "install", "claude-code", "--store", str(store)).code == 0
    assert tomllib.loads((home / ".codex" / "config.toml").read_text())["notify"][-1] == \
        str(store.resolve())
    assert "SessionEnd" in json.loads((home / ".claude" / "settings.json").read_text())["hooks"]


@pytest.mark.parametrize(("agent", "name", "broken", "line"), [
    ("claude-code", ".claude/settings.json", '{\n  "model": "opus",\n  "hooks": \n}\n', 4),
    ("codex", ".codex/config.toml", 'model = "o3"\n[mcp_servers\n', 2),
])
def test_a_malformed_config_is_named_with_its_line_and_left_alone(
        home: Path, store: Path, agent: str, name: str, broken: str, line: int) -> None:
    path = home / name
    path.write_text(broken)
    result = cli("hooks", "install", agent, "--store", str(store))
    assert result.code == 5
    assert result.stderr.startswith(f"Error: {path}:{line}: ")
    assert "Traceback" not in result.stderr
    assert path.read_text() == broken and not backups(path.parent)
    assert cli("hooks", "uninstall", agent).code == 5 and path.read_text() == broken


def test_unknown_agent_is_a_usage_error(store: Path) -> None:
    result = cli("hooks", "install", "cursor", "--store", str(store))
    assert result.code == 2 and "claude-code, codex" in result.stderr


# -- the hook -----------------------------------------------------------------------------------
def hook(agent: str, store: Path, *extra: str, stdin: str = "",
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The hook as the agent runs it: a real process, its own stdin."""
    return subprocess.run([sys.executable, "-m", "pcp_cli", "hooks", "run", agent, "--store",
                           str(store), *extra], input=stdin, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=60)


def wait_for_queue(store: Path, timeout: float = 90) -> dict:
    """`pcp hooks status` once no worker runs and nothing left is untried."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = cli("hooks", "status", "--store", str(store), "--json").json
        worker = status["worker"]
        failing = {f"{f['agent']}:{f['session']}" for f in status["failing"]}
        if not worker and set(status["sessions_waiting"]) <= failing:
            return status
        time.sleep(0.2)
    raise AssertionError("the hook's worker did not finish")


def conversations(store: Path) -> list[dict]:
    return cli("ls", "--type", "conversation", "--store", str(store), "--json").json


def log_text(store: Path) -> str:
    return (store / ".pcp" / "hooks" / "hooks.log").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("event", ["SessionEnd", "PreCompact"])
def test_claude_code_payload_imports_the_session(store: Path, event: str) -> None:
    done = hook("claude-code", store, stdin=claude_payload(CLAUDE_LOG, event))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    status = wait_for_queue(store)
    assert status["queued"] == 0 and status["failing"] == []
    assert [c["namespace"] for c in conversations(store)] == ["project:tidewatch"]


@pytest.mark.slow
def test_codex_payload_finds_the_rollout_file(store: Path, tmp_path: Path) -> None:
    marker = tmp_path / "chained.json"
    done = hook("codex", store, "--", sys.executable, "-c",
                f"import sys; open({str(marker)!r}, 'w').write(sys.argv[1])", codex_payload(),
                env={"CODEX_HOME": str(CODEX_HOME)})
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    wait_for_queue(store)
    assert len(conversations(store)) == 1
    deadline = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert json.loads(marker.read_text())["thread-id"] == CODEX_THREAD  # theirs ran too


@pytest.mark.slow
@pytest.mark.parametrize(("agent", "stdin", "args"), [
    ("claude-code", "garbage{", ()),
    ("claude-code", "[1, 2]", ()),
    ("claude-code", '{"session_id": "x"}', ()),
    ("codex", "", ("not json",)),
    ("codex", "", ('{"type": "agent-turn-complete"}',)),
    ("claude-code", "", ("--bogus", "--store")),
])
def test_a_bad_payload_is_logged_and_exits_0(store: Path, agent: str, stdin: str,
                                             args: tuple[str, ...]) -> None:
    done = hook(agent, store, *args, stdin=stdin)
    assert done.returncode == 0 and done.stdout == "" and "Traceback" not in done.stderr
    assert "bad payload" in log_text(store)
    assert not list((store / ".pcp" / "hooks" / "queue").glob("*.json"))


def test_the_hook_exits_0_without_a_store_or_an_agent(tmp_path: Path) -> None:
    for args in (("hooks", "run", "claude-code", "--store", str(tmp_path / "none")),
                 ("hooks", "run"), ("hooks", "run", "cursor", "--what")):
        result = cli(*args, input="{}")
        assert result.code == 0 and "Traceback" not in result.stderr


@pytest.mark.slow
def test_a_failed_import_is_shown_and_retried_until_it_succeeds(store: Path,
                                                                tmp_path: Path) -> None:
    later = tmp_path / "later" / "4f35e220-c435-4cf7-b9b9-f40426042847.jsonl"
    assert hook("claude-code", store, stdin=claude_payload(later)).returncode == 0
    status = wait_for_queue(store)
    assert status["queued"] == 1 and status["failing"][0]["attempts"] == 1
    assert str(later) in status["failing"][0]["error"]
    human = cli("hooks", "status", "--store", str(store))
    assert "failing: claude-code:4f35e220 (1 attempts)" in human.stdout

    later.parent.mkdir()
    shutil.copy(CLAUDE_LOG, later)
    # the next session's hook retries the one that failed
    assert hook("claude-code", store, stdin=claude_payload(CLAUDE_LOG, session="other")
                ).returncode == 0
    status = wait_for_queue(store)
    assert status["queued"] == 0 and status["failing"] == []
    assert len(conversations(store)) == 1  # the same session, twice: one conversation


@pytest.mark.slow
def test_a_worker_killed_mid_import_loses_no_session(store: Path) -> None:
    """The worker is killed while its import waits for the store's writer lock: the queue
    entry stays, and the next hook run imports it."""
    from filelock import FileLock

    held = FileLock(str(store / ".pcp" / "lock"))
    held.acquire()
    try:
        assert hook("claude-code", store, stdin=claude_payload(CLAUDE_LOG)).returncode == 0
        pid_file = store / ".pcp" / "hooks" / "worker.pid"
        deadline = time.monotonic() + 60
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = int(pid_file.read_text())
        time.sleep(0.5)  # well inside the import, blocked on the lock
        os.kill(pid, signal.SIGKILL)
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        held.release()
    assert len(list((store / ".pcp" / "hooks" / "queue").glob("*.json"))) == 1
    assert conversations(store) == []

    assert hook("claude-code", store, stdin=claude_payload(CLAUDE_LOG, "PreCompact")
                ).returncode == 0
    status = wait_for_queue(store)
    assert status["queued"] == 0 and len(conversations(store)) == 1


# -- uninstall for a store, sessions that are gone, a held lock ---------------------------------
def test_uninstall_takes_the_store_and_leaves_another_stores_hook(home: Path, store: Path,
                                                                  tmp_path: Path) -> None:
    config = home / ".codex" / "config.toml"
    other = tmp_path / "other"
    assert cli("init", str(other), "--owner", "tester").code == 0
    assert cli("hooks", "install", "codex", "--store", str(store)).code == 0
    left = cli("hooks", "uninstall", "codex", "--store", str(other), "--json")
    assert left.code == 0, left.stderr
    assert left.json[0]["changed"] is False and left.json[0]["other_store"] == str(
        store.resolve())
    assert "run" in tomllib.loads(config.read_text())["notify"]  # still there
    said = cli("hooks", "uninstall", "codex", "--store", str(other)).stdout
    assert f"it imports into {store.resolve()}, not {other.resolve()}" in said
    assert cli("hooks", "uninstall", "codex", "--store", str(store)).code == 0
    assert config.read_text() == CONFIG_TOML


def test_a_session_whose_file_is_gone_is_shown_and_can_be_dropped(store: Path,
                                                                  tmp_path: Path) -> None:
    """The worker in this process (the hook's real process is tested above): the session
    fails, `status` says its file is gone and how to stop retrying it, `drop` does."""
    from pcp_cli.capture import queue

    gone = tmp_path / "gone" / "4f35e220.jsonl"
    queue.enqueue(store, queue.parse_payload("claude-code", claude_payload(gone)))
    queue.enqueue(store, queue.parse_payload("claude-code", claude_payload(
        CLAUDE_LOG, session="kept")))
    queue.work(store)
    status = cli("hooks", "status", "--store", str(store), "--json").json
    assert status["queued"] == 1
    [failing] = status["failing"]
    assert failing["session"] == "4f35e220" and failing["file_exists"] is False
    human = cli("hooks", "status", "--store", str(store)).stdout
    assert "its session file is gone: `pcp hooks drop claude-code:4f35e220` stops retrying it" \
        in human

    assert cli("hooks", "drop", "nothing-like-it", "--store", str(store)).code == 3
    dropped = cli("hooks", "drop", "--gone", "--store", str(store), "--json")
    assert dropped.code == 0, dropped.stderr
    assert dropped.json == {"dropped": ["claude-code:4f35e220"], "unknown": []}
    status = cli("hooks", "status", "--store", str(store), "--json").json
    assert (status["queued"], status["failing"]) == (0, [])
    assert len(conversations(store)) == 1  # what was imported stays
    assert cli("hooks", "drop", "--store", str(store)).code == 2  # nothing named


def test_a_hook_import_that_meets_a_held_lock_waits_for_it(store: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """The worker (here in a thread) meets the store lock held by another process: it says so
    in the log, waits, and imports once the lock is free, in the same run."""
    import threading

    from pcp_cli.capture import queue

    monkeypatch.setenv("PCP_LOCK_TIMEOUT", "0.2")
    monkeypatch.setattr(queue, "LOCKED_RETRY_PAUSES", (0.1,) * 600)
    worker = threading.Thread(target=queue.work, args=(store,))
    with holding_the_lock(store):
        queue.enqueue(store, queue.parse_payload("claude-code", claude_payload(CLAUDE_LOG)))
        worker.start()
        deadline = time.monotonic() + 60
        while "trying again in" not in _log(store) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "import of claude-code:4f35e220 waits: another pcp process has held the store " \
            "lock" in _log(store)
    worker.join(timeout=120)
    status = cli("hooks", "status", "--store", str(store), "--json").json
    assert (status["queued"], status["failing"]) == (0, [])
    assert len(conversations(store)) == 1


def _log(store: Path) -> str:
    path = store / ".pcp" / "hooks" / "hooks.log"
    return path.read_text() if path.exists() else ""


def test_the_hook_returns_while_its_import_waits_for_the_store(store: Path) -> None:
    """The agent never waits for the import: with the store lock held, the hook (a real
    process, as the agent runs it) exits 0 at once, its worker still waiting; once the lock is
    free the session is imported."""
    with holding_the_lock(store):
        done = hook("claude-code", store, stdin=claude_payload(CLAUDE_LOG),
                    env={"PCP_LOCK_TIMEOUT": "600"})
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        # the import cannot have run: the lock was held all along
        assert conversations(store) == []
        assert len(list((store / ".pcp" / "hooks" / "queue").glob("*.json"))) == 1
    status = wait_for_queue(store)
    assert (status["queued"], status["failing"]) == (0, [])
    assert len(conversations(store)) == 1


@pytest.mark.slow
def test_a_real_hook_run_that_meets_a_held_lock_imports_once_it_is_free(store: Path) -> None:
    with holding_the_lock(store):
        done = hook("claude-code", store, stdin=claude_payload(CLAUDE_LOG),
                    env={"PCP_LOCK_TIMEOUT": "0.5"})
        assert done.returncode == 0
        deadline = time.monotonic() + 120
        while "trying again in" not in _log(store) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "trying again in 1 s" in _log(store)
    status = wait_for_queue(store)
    assert (status["queued"], status["failing"]) == (0, [])
    assert len(conversations(store)) == 1
