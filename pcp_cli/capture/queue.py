"""The hook's queue: a session noted at once, imported after the hook has returned.

`pcp-cli hooks run AGENT` (what the agent runs) reads the agent's payload, writes one small
file under `.pcp/hooks/queue/` and starts a detached worker (`pcp-cli hooks work`), then exits
0: it never opens the store, so it returns in the time Python takes to start. Whatever goes
wrong (a bad payload, no store, a full disk) is a line in `.pcp/hooks/hooks.log` and exit 0:
an agent must never see a failure (Claude Code reads exit 2 as "block") or a traceback.

The worker takes `.pcp/hooks/worker.lock` (one worker per store; another one finding it held
leaves at once, the holder picks up its entries) and imports each queued session with the
session importer (`pcp import` of that one file: only the events that are new are stored).
An entry is removed only after its import succeeded, so a worker killed mid-import loses
nothing: the next run imports it again (idempotently). A failed import is kept, its error in
`.pcp/hooks/failures.json`, retried by every later run and shown by `pcp hooks status`.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from pcp_cli.capture.agents import codex_home
from pcp_cli.errors import PcpError, StoreLocked
from pcp_cli.model.filenames import shown

HOOKS_DIR = Path(".pcp") / "hooks"
LOG_BYTES = 1_000_000  # past this, the log is moved to hooks.log.1


def hooks_dir(root: Path) -> Path:
    return root / HOOKS_DIR


def log(root: Path, message: str) -> None:
    """One line in the hooks log; never raises (a hook has nowhere else to say it)."""
    with contextlib.suppress(OSError):
        folder = hooks_dir(root)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "hooks.log"
        with contextlib.suppress(OSError):
            if path.stat().st_size > LOG_BYTES:
                os.replace(path, folder / "hooks.log.1")
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        with path.open("a", encoding="utf-8") as out:
            out.write(f"{stamp} {shown(' '.join(message.split())[:2000])}\n")


# -- the hook ---------------------------------------------------------------------------------
def parse_payload(agent: str, raw: str) -> dict[str, Any] | None:
    """The queue entry for one payload, or None for an event that asks for nothing (a Codex
    notification other than a finished turn). Raises ValueError for a payload that is not
    what the agent sends."""
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("the payload is not a JSON object")
    if agent == "claude-code":
        path = data.get("transcript_path")
        if not isinstance(path, str) or not path.strip():
            raise ValueError("no transcript_path in the payload")
        session = data.get("session_id")
        return {"agent": agent, "session": str(session or Path(path).stem)[:200],
                "path": path, "event": str(data.get("hook_event_name") or "")[:50],
                "cwd": data.get("cwd") if isinstance(data.get("cwd"), str) else None}
    if data.get("type") != "agent-turn-complete":
        return None
    thread = data.get("thread-id")
    if not isinstance(thread, str) or not thread.strip():
        raise ValueError("no thread-id in the agent-turn-complete payload")
    return {"agent": agent, "session": thread[:200], "path": None,
            "event": "agent-turn-complete", "codex_home": str(codex_home()),
            "cwd": data.get("cwd") if isinstance(data.get("cwd"), str) else None}


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)[:120]


def enqueue(root: Path, entry: dict[str, Any]) -> Path:
    """Write `entry` as a new queue file (its own name: a later event never overwrites an
    entry a worker is importing)."""
    folder = hooks_dir(root) / "queue"
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{time.time_ns()}-{os.getpid()}-{_safe(entry['agent'])}-{_safe(entry['session'])}"
    temp = folder / f".{name}.tmp"
    temp.write_text(json.dumps({**entry, "queued_at": time.time()}), "utf-8")
    os.replace(temp, folder / f"{name}.json")
    return folder / f"{name}.json"


def start_worker(root: Path) -> None:
    """A detached `hooks work` for `root`: its own session, no terminal, no inherited pipes
    (the agent waits for the hook's stdout to close), output into the log folder."""
    folder = hooks_dir(root)
    out = (folder / "worker.out").open("ab")
    try:
        kwargs: dict[str, Any] = {"start_new_session": True} if os.name != "nt" else {
            "creationflags": subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP}
        subprocess.Popen([sys.executable, "-m", "pcp_cli", "hooks", "work", "--store",
                          str(root)], stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                         close_fds=True, cwd=str(root), **kwargs)
    finally:
        out.close()


def run_hook(agent: str, store: str | None, raw: str, chained: list[str]) -> None:
    """What `pcp-cli hooks run AGENT` does. Never raises."""
    root = Path(store or os.environ.get("PCP_STORE") or "").expanduser()
    try:
        if chained:
            _run_chained(chained, raw)
        if not (root / "pcp.yaml").is_file():
            sys.stderr.write(f"pcp hook: no pcp store at {str(root) or '(none given)'}\n")
            return
        try:
            entry = parse_payload(agent, raw)
        except ValueError as exc:
            log(root, f"{agent} hook: bad payload ({exc}): {raw[:200]!r}")
            return
        if entry is None:
            return
        enqueue(root, entry)
        start_worker(root)
    except Exception as exc:  # the hook's one funnel: logged, exit 0
        log(root, f"{agent} hook failed: {type(exc).__name__}: {exc}")


def hook_main(args: list[str]) -> int:
    """`pcp-cli hooks run AGENT [--store PATH] [-- PROGRAM...] [PAYLOAD]`, without typer (the
    agent waits for it: see cli/main.py's _fast_command). Never fails: always 0."""
    try:
        agent = args[0] if args else ""
        rest = args[1:]
        store = None
        if rest[:1] == ["--store"] and len(rest) > 1:
            store, rest = rest[1], rest[2:]
        elif rest[:1] and rest[0].startswith("--store="):
            store, rest = rest[0].partition("=")[2], rest[1:]
        if agent == "codex":  # Codex appends the payload as the last argument
            raw = rest[-1] if rest else ""
            chained = rest[1:-1] if rest[:1] == ["--"] else []
        else:
            raw = sys.stdin.read(4_000_000) if not sys.stdin.isatty() else ""
            chained = []
        if agent not in ("claude-code", "codex"):
            sys.stderr.write(f"pcp hook: unknown agent {agent!r}\n")
            return 0
        run_hook(agent, store, raw, chained)
    except BaseException:  # noqa: BLE001 - an agent's hook must never fail its session
        pass
    return 0


def _run_chained(argv: list[str], raw: str) -> None:
    """The person's own Codex notify program, with the same payload, not waited for."""
    with contextlib.suppress(OSError):
        subprocess.Popen([*argv, raw], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=os.name != "nt")


# -- the worker -------------------------------------------------------------------------------
def queued(root: Path) -> list[tuple[Path, dict[str, Any]]]:
    """The queue's entries, oldest first (an unreadable one is logged and set aside)."""
    folder = hooks_dir(root) / "queue"
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            entry = json.loads(path.read_text("utf-8"))
            if not isinstance(entry, dict) or not isinstance(entry.get("session"), str):
                raise ValueError("not a queue entry")
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            log(root, f"queue entry {path.name} set aside: {exc}")
            with contextlib.suppress(OSError):
                os.replace(path, path.with_suffix(".bad"))
            continue
        found.append((path, entry))
    return found


def session_file(entry: dict[str, Any]) -> Path:
    """The session log an entry names: Claude Code says where; for Codex, the rollout file
    whose name ends in the thread id, under `<codex home>/sessions/<yyyy>/<mm>/<dd>/`."""
    if entry.get("path"):
        return Path(entry["path"])
    sessions = Path(entry.get("codex_home") or codex_home()) / "sessions"
    session = _safe(entry["session"])
    matches = sorted(sessions.glob(f"*/*/*/rollout-*{session}.jsonl"), reverse=True) or \
        sorted(sessions.rglob(f"rollout-*{session}.jsonl"), reverse=True)
    if not matches:
        raise FileNotFoundError(f"no Codex session file for thread {entry['session']} under "
                                f"{sessions}")
    return matches[0]


def _failures_path(root: Path) -> Path:
    return hooks_dir(root) / "failures.json"


def failures(root: Path) -> dict[str, Any]:
    try:
        data = json.loads(_failures_path(root).read_text("utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save_failures(root: Path, data: dict[str, Any]) -> None:
    from pcp_cli.store.atomic import write_atomic

    write_atomic(_failures_path(root), json.dumps(data, indent=1, sort_keys=True) + "\n")


def work(root: Path) -> int:
    """Import everything queued for `root`, one worker at a time; the number imported."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(hooks_dir(root) / "worker.lock"))
    done = 0
    tried: set[str] = set()  # each entry once per run: a failing one waits for the next run
    while True:
        try:
            lock.acquire(timeout=0)
        except Timeout:
            return done  # the worker holding it imports what we would have
        pid_file = hooks_dir(root) / "worker.pid"
        try:
            pid_file.write_text(f"{os.getpid()}\n")
            done += _drain(root, tried)
        finally:
            with contextlib.suppress(OSError):
                pid_file.unlink()
            lock.release()
        # an entry written after the last look, whose own worker found the lock held
        if not {p.name for p, _ in queued(root)} - tried:
            return done


def _drain(root: Path, tried: set[str]) -> int:
    fails = failures(root)
    done = 0
    while True:
        batch = [(p, e) for p, e in queued(root) if p.name not in tried]
        if not batch:
            break
        by_session: dict[tuple[str, str], list[Path]] = {}
        entries: dict[tuple[str, str], dict[str, Any]] = {}
        for path, entry in batch:
            key = (str(entry.get("agent")), entry["session"])
            by_session.setdefault(key, []).append(path)
            entries[key] = entry
            tried.add(path.name)
        for key, paths in by_session.items():
            name = f"{key[0]}:{key[1]}"
            entry = entries[key]
            try:
                source, summary = _import_waiting(root, name, entry)
                if summary.get("failed"):
                    raise RuntimeError(f"{summary['failed']} item(s) failed: " + "; ".join(
                        str(p.get("reason")) for p in summary.get("problems", [])[:3]))
            except Exception as exc:
                attempts = int((fails.get(name) or {}).get("attempts", 0)) + 1
                message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
                fails[name] = {"agent": key[0], "session": key[1], "error": message,
                               "attempts": attempts, "last_try": time.time(),
                               "path": entry.get("path")}
                log(root, f"import of {name} failed (attempt {attempts}): {message}")
                if not isinstance(exc, PcpError | OSError | RuntimeError):
                    log(root, "".join(traceback.format_exception(exc)[-3:]))
                continue
            for path in paths:  # only now: a killed worker leaves them for the next run
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
            fails.pop(name, None)
            done += 1
            log(root, f"imported {name} from {source} ({summary.get('created', 0)} created, "
                      f"{summary.get('revised', 0)} revised)")
    # only sessions still queued: one dropped meanwhile (`pcp hooks drop`) is not failing
    waiting = {f"{e.get('agent')}:{e['session']}" for _, e in queued(root)}
    _save_failures(root, {name: fail for name, fail in fails.items() if name in waiting})
    return done


# A session whose import met the store lock held (another import, a long `pcp doctor --fix`)
# is tried again after these pauses, in this run, before it is left for the next hook run:
# about ten minutes in all, each try itself waiting up to PCP_LOCK_TIMEOUT for the lock.
LOCKED_RETRY_PAUSES = (1, 2, 4, 8, 15, 30, 60, 120, 120, 120, 120)


def _import_waiting(root: Path, name: str, entry: dict[str, Any]) -> tuple[Path, dict[str, Any]]:
    """Import one queued session; met with a held store lock, wait and try again (backing off)
    rather than leave it for the next hook run."""
    from pcp_cli import api

    source = session_file(entry)
    fmt = "claude_code" if entry.get("agent") == "claude-code" else "codex"
    for pause in (*LOCKED_RETRY_PAUSES, None):
        try:
            with api.open_store(root) as store:
                return source, api.import_path(store, source, format=fmt)
        except StoreLocked as exc:
            if pause is None:
                raise
            log(root, f"import of {name} waits: {exc.message}; trying again in {pause} s")
            time.sleep(pause)
    raise AssertionError("unreachable")


def worker_pid(root: Path) -> int | None:
    """The pid of the worker importing now, if one is (a killed one leaves its file behind)."""
    try:
        pid = int((hooks_dir(root) / "worker.pid").read_text())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid


def _file_exists(entry: dict[str, Any]) -> bool:
    try:
        return session_file(entry).is_file()
    except (OSError, ValueError):
        return False


def drop_sessions(root: Path, sessions: list[str], *, gone: bool = False) -> dict[str, Any]:
    """`pcp hooks drop`: `drop` each session named (`agent:session`, or the session id
    alone), and with `gone` every one whose session file no longer exists. Returns
    {"dropped": [names], "unknown": [what named no queued or failing session]}."""
    entries = {f"{e.get('agent')}:{e['session']}": e for _, e in queued(root)}
    fails = failures(root)
    known = set(entries) | set(fails)
    wanted: set[str] = set()
    unknown: list[str] = []
    for given in sessions:
        hits = {n for n in known if given in (n, n.partition(":")[2])}
        wanted |= hits
        if not hits:
            unknown.append(given)
    if gone:
        wanted |= {n for n in known if not _file_exists(entries.get(n) or fails[n])}
    for name in sorted(wanted):
        drop(root, name)
    return {"dropped": sorted(wanted), "unknown": unknown}


def status(root: Path) -> dict[str, Any]:
    """What is queued, what keeps failing, and the log's last lines."""
    fails = failures(root)
    entries = queued(root)
    sessions = sorted({f"{e.get('agent')}:{e['session']}" for _, e in entries})
    named = {f"{e.get('agent')}:{e['session']}": e for _, e in entries}
    log_path = hooks_dir(root) / "hooks.log"
    try:
        tail = log_path.read_text("utf-8", errors="replace").splitlines()[-5:]
    except OSError:
        tail = []
    failing = [{**v, "file_exists": _file_exists(named.get(k) or v)}
               for k, v in sorted(fails.items())]
    return {"queued": len(entries), "sessions_waiting": sessions, "worker": worker_pid(root),
            "failing": failing, "log": str(log_path), "log_tail": tail}


def _named(root: Path, name: str) -> list[Path]:
    """The queue files of one session, `agent:session` as `status` names it."""
    return [path for path, entry in queued(root)
            if f"{entry.get('agent')}:{entry['session']}" == name]


def retry(root: Path, name: str) -> dict[str, Any]:
    """Try the session `name` again now (`pcp console`'s Health page): its failure count
    starts over and a worker is started. NotFound when nothing of it waits."""
    from pcp_cli.errors import NotFound

    fails = failures(root)
    if not _named(root, name):
        raise NotFound(f"nothing of {name} waits in the capture queue",
                       hint="it was imported or dropped meanwhile")
    if name in fails:
        fails.pop(name)
        _save_failures(root, fails)
    start_worker(root)
    return {"session": name, "retried": True}


def drop(root: Path, name: str) -> dict[str, Any]:
    """Drop the session `name` from the queue and forget its failures: it is not imported
    (the session file itself is left alone; `pcp import` can still read it)."""
    from pcp_cli.errors import NotFound

    fails = failures(root)
    paths = _named(root, name)
    if not paths and name not in fails:
        raise NotFound(f"nothing of {name} waits in the capture queue",
                       hint="it was imported or dropped meanwhile")
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    if fails.pop(name, None) is not None:
        _save_failures(root, fails)
    log(root, f"dropped {name} from the queue ({len(paths)} queue file(s))")
    return {"session": name, "dropped": len(paths)}
