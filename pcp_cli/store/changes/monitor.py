"""The store monitor: one process per store that watches its head files, so a command asks
"what changed since my token?" instead of stat'ing every head file (`pcp monitor`).

Without it, every command's change scan stats every head file (catalog.py): ~0.6 s at 100,000
pages, before the command shows anything. With it, a command costs what it shows. The design
is git's fsmonitor, and so are its rules:

- **Tokens.** The monitor has an `instance` (a random id minted when it starts) and a sequence
  number that grows by one for each head-file event it notes. A token is `instance:seq`. The
  catalog keeps the token of its last completed refresh (`meta.monitor_token`); a command sends
  it and gets back a new token and the head files named by events after the old one. It then
  looks at those files only (`Catalog.scan_paths`, which also re-checks the rows still marked
  racy) and stores the new token. A token is always taken *before* the files are looked at, so
  a change made while a command scans is reported again to the next one: a token can only
  under-claim what is current, never over-claim.
- **When the monitor cannot vouch, the full scan runs**, exactly as without a monitor: no
  monitor running (or not answering within `ASK_TIMEOUT_S`), a token from another instance (the
  monitor restarted: whatever changed while it was down is unknown), a token older than what
  the monitor still remembers (its journal holds at most `PCP_MONITOR_JOURNAL_LIMIT` paths; past
  that it forgets the oldest and vouches only from there), a kernel event-queue overflow, a
  folder created, removed or renamed under `pages/` (the set of watches changes), or a watch it
  could not add. Each of these moves the monitor's *floor*: tokens below it get "cannot vouch".
- **No cookie files.** git's daemon writes a cookie file and waits for its event before it
  answers, because macOS delivers file events late. Linux queues an inotify event inside the
  system call that made the change, so a monitor that drains its queue when a question arrives
  has seen every change completed before the question was sent.
- **Who starts it.** The first command that has to scan a store of `AUTO_MIN_PAGES` head files
  or more (`PCP_MONITOR_MIN_PAGES`) starts it in the background, and the commands after it ask
  it (`after_scan`); that command itself does the full scan. A store can also be marked by hand
  (`pcp monitor start`: `.pcp/monitor/auto`, any size), or kept without one (`pcp monitor
  stop`: `.pcp/monitor/off`, until `pcp monitor start`); `PCP_MONITOR=off` keeps every command
  of a process from starting one (the test suite, a script). It runs only where inotify can be
  trusted: Linux, local file systems (as `pcp serve`'s watch, watch.py). Where it cannot
  run (another OS, a network file system, no inotify watch or instance to spare, a socket
  folder someone else owns), every command keeps scanning, and the first one on a store that
  big says so once, with the reason (a `PcpNotice`); `pcp status` says it every time, with
  what the last scan cost. A monitor that failed to start is not started again for
  `RETRY_FAILED_S`.
- **Only the owner is believed.** The socket lives in the store's `.pcp/monitor/` or, when that
  path is too long for a socket address, in a folder under `$XDG_RUNTIME_DIR` (else the
  temporary folder) that must be a real folder owned by this user and closed to others; and
  every answer is authenticated by the kernel (`SO_PEERCRED`): an answer from a process of
  another user is never taken (another user who made that folder first could otherwise answer
  "nothing changed" and hide a hand edit). The monitor answers its own user only.
- **It stops by itself** after `--idle-timeout` seconds with no question (default one hour),
  when its store folder goes away, and on SIGTERM / SIGINT.

It also watches `revisions/` and every page folder in it (revisions_watch.py), for `pcp
status`'s revision graphs: asked with `"revisions": true`, it also names the page folders that
gained or lost a file since the token, under the same rules, and one more: past its share of
the system's inotify watches it does not watch `revisions/` at all and never vouches for it
(`pcp monitor status` says why), while still vouching for the head files.

The protocol is one JSON line each way over a Unix socket (`.pcp/monitor/socket`, or a short
path under the runtime folder when the store's path is too long for a socket address):
`{"since": TOKEN | null}` -> `{"token": TOKEN, "paths": [store-relative head files] | null}`
(`null`: cannot vouch, scan everything); with `"revisions": true` the answer also has
`"revisions": [page folder names] | null`, and with `"top": true`, `"top": [names] | null`: the
entries created, removed or renamed in `revisions/` itself (one watch, kept even past the budget
for page folders), for the read-side damage check (upkeep/damage.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

# Every command that reads the store imports this module (Catalog.refresh asks the monitor), so
# it imports at its top only what asking needs; starting and being the monitor import the rest.

ASK_TIMEOUT_S = 2.0  # a monitor that cannot answer in this long is treated as absent
DEFAULT_IDLE_TIMEOUT_S = 3600.0
DEFAULT_JOURNAL_LIMIT = 200_000  # distinct head-file paths remembered between two floors
_SOCKET_MAX = 100  # sun_path is 108 bytes on Linux, 104 on macOS
AUTO_MIN_PAGES = 2_000  # a full scan of this many head files costs ~10 ms of CPU: worth a monitor
MODE_ENV = "PCP_MONITOR"  # "off": no command of this process starts a monitor by itself
RETRY_FAILED_S = 600.0  # a monitor that could not start is not started again for this long
STARTING_S = 30.0  # a monitor started this recently is given time to answer, not started again


def folder(root: Path) -> Path:
    return root / ".pcp" / "monitor"


def socket_path(root: Path) -> Path:
    """Where the monitor of the store at `root` listens: in its `.pcp/monitor/` folder, or,
    when that path is too long for a socket address, in a private folder of this user's
    (`runtime_folder`)."""
    local = folder(root) / "socket"
    if len(os.fsencode(str(local))) <= _SOCKET_MAX:
        return local
    import hashlib

    digest = hashlib.sha256(os.fsencode(str(root.resolve()))).hexdigest()[:24]
    return runtime_folder() / f"{digest}.sock"


def runtime_folder() -> Path:
    """This user's folder for monitor sockets whose store path is too long: `pcp-monitor` in
    `$XDG_RUNTIME_DIR` (the login's private folder) when that is set, else
    `pcp-monitor-UID` in the temporary folder. Either must pass `private_folder` before a
    socket in it is used."""
    import tempfile

    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        return Path(runtime) / "pcp-monitor"
    return Path(tempfile.gettempdir()) / f"pcp-monitor-{os.getuid()}"


def private_folder(path: Path) -> str | None:
    """None when `path` is a folder (not a link) owned by this user that no one else may enter
    or write, else why not. Anyone may create a name in /tmp first: a folder made there by
    another user would let them put a socket of theirs where the monitor's is looked for."""
    import stat

    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return f"{path} does not exist"
    except OSError as exc:
        return f"{path} cannot be checked ({exc.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a folder"
    if st.st_uid != os.getuid():
        return f"{path} belongs to another user (uid {st.st_uid})"
    if st.st_mode & 0o077:
        return f"{path} is open to other users (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _socket_folder_problem(root: Path) -> str | None:
    """Why the socket's folder cannot be trusted, for a socket outside the store; None if it
    can (or does not exist yet: the monitor makes it, private)."""
    path = socket_path(root)
    if path.parent == folder(root) or not os.path.lexists(path.parent):
        return None
    why = private_folder(path.parent)
    return None if why is None else f"the monitor's socket folder {why}"


class ForeignAnswer(OSError):
    """The process at the monitor's socket belongs to another user: it is never believed."""


def _check_peer(conn: Any) -> None:
    """Raise ForeignAnswer unless the other end of the Unix socket `conn` runs as this user (the
    kernel's SO_PEERCRED, which the peer cannot forge). Linux only, as the monitor is."""
    import socket
    import struct

    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    if uid != _owner():
        raise ForeignAnswer(f"the process answering at {socket_path_of(conn)} runs as "
                            f"another user (uid {uid})")


def _owner() -> int:
    """The user whose monitor answers are believed: this process's."""
    return os.getuid()


def socket_path_of(conn: Any) -> str:
    try:
        return str(conn.getpeername()) or "the monitor's socket"
    except OSError:
        return "the monitor's socket"


def auto_started(root: Path) -> bool:
    return (folder(root) / "auto").exists()


def ask(root: Path, token: str | None) -> tuple[str, list[str] | None] | None:
    """Ask the store's monitor what changed since `token`: (new token, head files named since,
    or None: cannot vouch), or None when no monitor answers (then the caller scans everything,
    and a store marked for it gets its monitor started for the next command)."""
    return _ask(root, {"since": token}, "paths")


def ask_revisions(root: Path, token: str | None) -> tuple[str, list[str] | None] | None:
    """`ask` for `revisions/`: (new token, the page folders that gained or lost a file since
    `token`, or None: cannot vouch), or None when no monitor answers. A monitor that does not
    watch `revisions/` (too many folders, or an older pcp's) cannot vouch."""
    return _ask(root, {"since": token, "revisions": True}, "revisions")


def ask_top(root: Path, token: str | None) -> tuple[str, list[str] | None] | None:
    """`ask` for the entries of `revisions/` itself: (new token, the names created, removed or
    renamed there since `token`, or None: cannot vouch), or None when no monitor answers."""
    return _ask(root, {"since": token, "top": True}, "top")


def _ask(root: Path, question: dict[str, Any], key: str
         ) -> tuple[str, list[str] | None] | None:
    path = socket_path(root)
    try:
        if not os.path.exists(path):  # no monitor: not even the socket module is loaded
            raise FileNotFoundError(path)
        if path.parent != folder(root):
            why = private_folder(path.parent)
            if why is not None:
                raise ForeignAnswer(f"the monitor's socket folder {why}")
        import socket

        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(ASK_TIMEOUT_S)
            conn.connect(str(path))
            _check_peer(conn)
            conn.sendall(json.dumps(question).encode() + b"\n")
            answer = _read_line(conn)
    except ForeignAnswer as exc:
        _tell(root, f"{exc}; it is not believed and every command checks every page file")
        return None
    except (OSError, ValueError):
        if auto_started(root) and may_start(root):
            with contextlib.suppress(OSError):
                spawn(root)
        return None
    try:
        reply = json.loads(answer)
        named = reply.get(key)
        if named is not None:
            named = [str(p) for p in named]
        return str(reply["token"]), named
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _read_line(conn: Any, limit: int = 1 << 30) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n") or size > limit:
            break
    data = b"".join(chunks)
    if not data.endswith(b"\n"):
        raise ValueError("the monitor's answer was cut off")
    return data


# -- starting and stopping ----------------------------------------------------------------------
def status(root: Path) -> dict[str, Any]:
    """What `pcp monitor status` shows: running or not, its process, since when, auto."""
    info = _read_info(root)
    pong = _ping(root)
    running = pong is not None
    revisions = pong.get("revisions") if isinstance(pong, dict) else None
    return {"running": running, "auto": auto_started(root),
            "pid": info.get("pid") if running else None,
            "started_at": info.get("started_at") if running else None,
            "socket": str(socket_path(root)), "supported": supported(root),
            # who starts it: "marked" (pcp monitor start), "off" (pcp monitor stop, or
            # PCP_MONITOR=off), else "by size" (the first command on a big store)
            "starts": starts(root), "min_pages": min_pages(),
            # why it cannot run here now, if it cannot (None: it can)
            "why_not": None if running else why_not(root),
            # what the last full scan of a big store cost (files, seconds), if one ran
            "last_scan": _read_json(folder(root) / "scan.json") or None,
            # whether it watches revisions/ for `pcp status`, and if not, why
            "revisions": revisions if isinstance(revisions, dict) else None}


def ask_alive(root: Path) -> bool:
    return _ping(root) is not None


def _ping(root: Path) -> Any:
    import socket

    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(ASK_TIMEOUT_S)
            conn.connect(str(socket_path(root)))
            _check_peer(conn)
            conn.sendall(b'{"ping": true}\n')
            return json.loads(_read_line(conn))
    except (OSError, ValueError):
        return None


def supported(root: Path) -> str | None:
    """None when a monitor can watch this store, else why not."""
    from pcp_cli.store.changes.watch import local_file_system

    if not sys.platform.startswith("linux"):
        return "the store monitor needs Linux's inotify; every command scans instead"
    if not local_file_system(root / "pages"):
        return ("the store is not on a local file system (inotify does not see other machines' "
                "writes); every command scans instead")
    return None


def min_pages() -> int:
    """How many head files make a store big enough for a monitor started by itself."""
    try:
        return max(0, int(os.environ.get("PCP_MONITOR_MIN_PAGES") or AUTO_MIN_PAGES))
    except ValueError:
        return AUTO_MIN_PAGES


def starts(root: Path) -> str:
    """Who starts this store's monitor: "off" (`pcp monitor stop`, or PCP_MONITOR=off in this
    process), "marked" (`pcp monitor start`: any command, at any size), else "by size"."""
    if os.environ.get(MODE_ENV, "").strip().lower() in ("off", "0", "no", "false"):
        return "off"
    if (folder(root) / "off").exists():
        return "off"
    return "marked" if auto_started(root) else "by size"


def why_not(root: Path) -> str | None:
    """Why a monitor cannot run on this store here, now (None: it can): the platform or file
    system, a socket folder that is not private, or the last start's failure (for
    `RETRY_FAILED_S`)."""
    why = supported(root) or _socket_folder_problem(root)
    if why is not None:
        return why
    failed = _read_json(folder(root) / "failed.json")
    at = failed.get("at")
    if isinstance(at, (int, float)) and time.time() - at < RETRY_FAILED_S:
        return f"the monitor could not start: {failed.get('why')}"
    return None


def may_start(root: Path) -> bool:
    """Whether a command may start the monitor now: it can run here, nobody said no, and none
    was started in the last `STARTING_S` (it may still be setting its watches)."""
    if starts(root) == "off" or why_not(root) is not None:
        return False
    starting = folder(root) / "starting"  # the pid of one started and not yet answering
    try:
        if time.time() - os.stat(starting).st_mtime > STARTING_S:
            return True
        return not _alive(int(starting.read_text("ascii")))
    except (OSError, ValueError):
        return True  # none started lately


def _alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie does not: its parent may never reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text("ascii", errors="replace")
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] not in (["Z"], ["X"])


def after_scan(root: Path, files: int, seconds: float) -> None:
    """A command just scanned every head file because no monitor could vouch: on a store of
    `min_pages()` files or more, start one for the commands after it; where none can run,
    keep what the scan cost (for `pcp status`) and say why, once per reason."""
    if files < min_pages():
        return
    with contextlib.suppress(OSError):
        _write_json(folder(root) / "scan.json", {"files": files, "seconds": round(seconds, 3)})
    if starts(root) == "off":
        return
    why = why_not(root)
    if why is None:
        if may_start(root):
            with contextlib.suppress(OSError):
                spawn(root)
        return
    _tell(root, f"this store has {files:,} pages and the store monitor cannot run: {why}. "
          f"Every command checks every page file ({seconds:.2f} s this time); `pcp status` "
          "says more")


def _tell(root: Path, message: str) -> None:
    """Say `message` (a PcpNotice the front end shows) unless this store was told it already."""
    import warnings

    from pcp_cli.errors import PcpNotice

    told = folder(root) / "told"
    reason = message.split(". Every command")[0]
    try:
        if told.read_text("utf-8") == reason:
            return
    except OSError:
        pass
    with contextlib.suppress(OSError):
        folder(root).mkdir(parents=True, exist_ok=True)
        told.write_text(reason, "utf-8")
    warnings.warn(PcpNotice(message), stacklevel=2)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, path)


def spawn(root: Path, *, idle_timeout: float | None = None) -> None:
    """Start the monitor in the background (a new session, output to `.pcp/monitor/log`)."""
    import subprocess

    folder(root).mkdir(parents=True, exist_ok=True)
    args = [sys.executable, "-m", "pcp_cli", "monitor", "run", "--store", str(root)]
    if idle_timeout is not None:
        args += ["--idle-timeout", str(idle_timeout)]
    with open(folder(root) / "log", "ab") as log:
        child = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                 start_new_session=True, close_fds=True)
    (folder(root) / "starting").write_text(str(child.pid), "ascii")


def start(root: Path, *, idle_timeout: float | None = None, wait_s: float = 10.0) -> bool:
    """Mark the store for its monitor and start it; True once it answers."""
    folder(root).mkdir(parents=True, exist_ok=True)
    (folder(root) / "auto").touch()
    for mark in ("off", "failed.json", "told"):  # the person asked: try again, say again
        with contextlib.suppress(FileNotFoundError):
            (folder(root) / mark).unlink()
    if ask_alive(root):
        return True
    spawn(root, idle_timeout=idle_timeout)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if ask_alive(root):
            return True
        time.sleep(0.05)
    return False


def stop(root: Path, *, wait_s: float = 10.0) -> bool:
    """Remove the mark, keep commands from starting it again (`.pcp/monitor/off`, until `pcp
    monitor start`) and stop the running monitor; True if one was running."""
    with contextlib.suppress(FileNotFoundError):
        (folder(root) / "auto").unlink()
    folder(root).mkdir(parents=True, exist_ok=True)
    (folder(root) / "off").touch()
    import signal

    info = _read_info(root)
    pid = info.get("pid")
    if not isinstance(pid, int) or not ask_alive(root):
        return False
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and ask_alive(root):
        time.sleep(0.05)
    return True


def _read_info(root: Path) -> dict[str, Any]:
    return _read_json(folder(root) / "info.json")


# -- the monitor process --------------------------------------------------------------------------
REVISIONS = "revisions/"  # how the journal names a page folder under revisions/
TOP = "revisions-top/"  # how it names an entry created, removed or renamed in revisions/ itself


class Journal:
    """What the monitor remembers: the newest sequence number of each head file it saw named,
    and the floor below which it cannot vouch."""

    def __init__(self, limit: int) -> None:
        import uuid

        self.instance = uuid.uuid4().hex[:16]
        self.limit = limit
        self.seq = 0
        self.floor = 0
        self.revisions_floor = 0  # the floor for `revisions/` alone (it is watched apart)
        self.top_floor = 0  # the floor for the entries of `revisions/` itself
        self.paths: dict[str, int] = {}

    def token(self) -> str:
        return f"{self.instance}:{self.seq}"

    def note(self, path: str) -> None:
        self.seq += 1
        self.paths.pop(path, None)  # keep insertion order = order of the newest event
        self.paths[path] = self.seq
        if len(self.paths) > self.limit:
            self.forget()

    def forget(self) -> None:
        """Everything before now is unknown (an overflow, a folder added): vouch from here."""
        self.seq += 1
        self.floor = self.seq
        self.paths.clear()

    def forget_revisions(self) -> None:
        """What happened under `revisions/` before now is unknown; head files are still known."""
        for path in [p for p in self.paths if p.startswith(REVISIONS)]:
            del self.paths[path]
        self.seq += 1
        self.revisions_floor = self.seq

    def forget_top(self) -> None:
        """What happened in `revisions/` itself before now is unknown."""
        for path in [p for p in self.paths if p.startswith(TOP)]:
            del self.paths[path]
        self.seq += 1
        self.top_floor = self.seq

    def since(self, token: Any) -> list[str] | None:
        """The head files named after `token`, None if it cannot vouch."""
        found = self._since(token, self.floor)
        return None if found is None else [p for p in found
                                            if not p.startswith((REVISIONS, TOP))]

    def top_since(self, token: Any) -> list[str] | None:
        """The entries created, removed or renamed in `revisions/` itself after `token`, None
        if it cannot vouch."""
        found = self._since(token, max(self.floor, self.top_floor))
        return None if found is None else [p[len(TOP):] for p in found if p.startswith(TOP)]

    def revisions_since(self, token: Any) -> list[str] | None:
        """The page folders under `revisions/` named after `token`, None if it cannot vouch."""
        found = self._since(token, max(self.floor, self.revisions_floor))
        return None if found is None else [p[len(REVISIONS):] for p in found
                                           if p.startswith(REVISIONS)]

    def _since(self, token: Any, floor: int) -> list[str] | None:
        if not isinstance(token, str) or ":" not in token:
            return None
        instance, _, seq = token.partition(":")
        try:
            since = int(seq)
        except ValueError:
            return None
        if instance != self.instance or since < floor or since > self.seq:
            return None
        return sorted(p for p, s in self.paths.items() if s > since)


def run(root: Path, *, idle_timeout: float = DEFAULT_IDLE_TIMEOUT_S,
        journal_limit: int | None = None) -> int:
    """The monitor itself (`pcp monitor run`): watch, answer, until idle, stopped or gone. A
    start that fails (no inotify instance or watch to spare, a socket folder that is not
    private) is kept in `.pcp/monitor/failed.json`, so commands do not start it again for
    `RETRY_FAILED_S` and `pcp status` says why."""
    try:
        return _run(root, idle_timeout, journal_limit)
    except OSError as exc:
        with contextlib.suppress(OSError):
            _write_json(folder(root) / "failed.json",
                        {"why": str(exc.strerror or exc) if exc.errno else str(exc),
                         "at": time.time()})
        raise


def _run(root: Path, idle_timeout: float, journal_limit: int | None) -> int:
    import errno
    import selectors
    import signal
    import socket

    from pcp_cli.store.changes import watch as watching
    from pcp_cli.store.changes.revisions_watch import RevisionsWatch

    why = supported(root)
    if why is not None:
        raise OSError(why)
    limit = journal_limit or int(os.environ.get("PCP_MONITOR_JOURNAL_LIMIT")
                                 or DEFAULT_JOURNAL_LIMIT)
    journal = Journal(limit)
    pages = (root / "pages").resolve()
    sock_path = socket_path(root)
    sock_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if sock_path.parent != folder(root):
        why = private_folder(sock_path.parent)
        if why is not None:
            raise OSError(f"the monitor's socket folder {why}")
    try:
        hub = watching._Hub()
    except OSError as exc:
        if exc.errno == errno.EMFILE:
            raise OSError("no inotify instance to spare (fs.inotify.max_user_instances)") from exc
        raise
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        store_watch = watching.StoreWatch(hub, pages)
        revisions_watch = RevisionsWatch(hub, root.resolve() / "revisions")
        take(store_watch, journal, revisions_watch)  # watch every folder before answering
        if store_watch.rewatch:  # could not watch every folder under pages/: never vouching
            raise OSError(
                "no inotify watch to spare for the folders under pages/ "
                "(fs.inotify.max_user_watches)" if hub.error == errno.ENOSPC else
                f"a folder under pages/ cannot be watched ({os.strerror(hub.error or 0)})")
        # Bind a fresh name, then rename it over the old one: a second monitor started at the
        # same moment takes over the name; the first notices and leaves (see `_owns`).
        fresh = sock_path.with_name(f".{sock_path.name}.{os.getpid()}")
        with contextlib.suppress(FileNotFoundError):
            fresh.unlink()
        server.bind(str(fresh))
        server.listen(16)
        os.replace(fresh, sock_path)
        identity = os.stat(sock_path).st_ino
        _write_info(root, journal)
        for mark in ("failed.json", "starting"):  # started, and answering
            with contextlib.suppress(FileNotFoundError):
                (folder(root) / mark).unlink()
        stopping: list[int] = []

        def stop_now(signum: int, _frame: Any) -> None:
            stopping.append(signum)

        signal.signal(signal.SIGTERM, stop_now)
        signal.signal(signal.SIGINT, stop_now)
        selector = selectors.DefaultSelector()
        selector.register(server, selectors.EVENT_READ, "ask")
        selector.register(hub.fd, selectors.EVENT_READ, "events")
        take(store_watch, journal, revisions_watch)  # what happened while binding
        last_question = time.monotonic()
        while not stopping:
            busy = revisions_watch.busy  # still setting watches: a chunk per turn
            ready = selector.select(timeout=0 if busy else min(5.0, idle_timeout))
            if busy and not ready:
                take(store_watch, journal, revisions_watch)
            for key, _ in ready:
                if key.data == "events":
                    take(store_watch, journal, revisions_watch)
                    continue
                try:
                    conn, _ = server.accept()
                except OSError:
                    continue
                with conn:
                    try:
                        _check_peer(conn)  # answers its own user only
                    except OSError:
                        continue
                    if _answer(conn, store_watch, journal, revisions_watch):
                        last_question = time.monotonic()
            if time.monotonic() - last_question > idle_timeout:
                break
            if not pages.is_dir() or not _owns(sock_path, identity):
                break
    finally:
        server.close()
        with contextlib.suppress(OSError):
            if _owns(sock_path, locals().get("identity")):
                sock_path.unlink()
        os.close(hub.fd)
    return 0


def take(store_watch: Any, journal: Journal, revisions_watch: Any = None) -> None:
    """Drain the kernel's events into the journal; a change in what is watched moves the floor
    (of everything for pages/, of revisions/ alone for revisions/)."""
    full, taken = store_watch.take()
    if revisions_watch is not None:
        revisions_full, folders = revisions_watch.take()
        if revisions_full:
            journal.forget_revisions()
        else:
            for name in sorted(folders):
                journal.note(REVISIONS + name)
        top_full, entries = revisions_watch.take_top()
        if top_full:
            journal.forget_top()
        else:
            for name in sorted(entries):
                journal.note(TOP + name)
    if full:
        journal.forget()
        return
    for path in sorted(taken):
        journal.note(path)


def _answer(conn: Any, store_watch: Any, journal: Journal, revisions_watch: Any = None) -> bool:
    """Answer one question; True when it was a command's (a status probe, `{"ping": true}`,
    does not keep an idle monitor alive)."""
    conn.settimeout(ASK_TIMEOUT_S)
    try:
        question = json.loads(_read_line(conn, limit=1 << 16))
    except (OSError, ValueError):
        return False
    if not isinstance(question, dict):
        return False
    if question.get("ping"):
        pong: dict[str, Any] = {"token": journal.token(), "paths": None}
        if revisions_watch is not None:
            pong["revisions"] = {"watched": revisions_watch.refused is None,
                                 "folders": len(revisions_watch.folders),
                                 "why_not": revisions_watch.refused}
        with contextlib.suppress(OSError):
            conn.sendall(json.dumps(pong).encode() + b"\n")
        return False
    # everything completed before the question is queued by now
    take(store_watch, journal, revisions_watch)
    since = question.get("since")
    reply = {"token": journal.token(), "paths": journal.since(since)}
    if question.get("revisions"):
        reply["revisions"] = journal.revisions_since(since) if revisions_watch is not None \
            and revisions_watch.vouching else None
    if question.get("top"):
        reply["top"] = journal.top_since(since) if revisions_watch is not None \
            and revisions_watch.top is not None else None
    with contextlib.suppress(OSError):
        conn.sendall(json.dumps(reply).encode() + b"\n")
    return True


def _owns(sock_path: Path, identity: int | None) -> bool:
    try:
        return identity is not None and os.stat(sock_path).st_ino == identity
    except OSError:
        return False


def _write_info(root: Path, journal: Journal) -> None:
    info = {"pid": os.getpid(), "instance": journal.instance,
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    target = folder(root) / "info.json"
    tmp = target.with_name(f".info.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(info), encoding="utf-8")
    os.replace(tmp, target)
