"""The store monitor by default (issue #35), and only its owner believed (issue #31).

- A store big enough to need a monitor gets one from the first command that has to scan it,
  without the person doing anything; a small store, `pcp monitor stop` and `PCP_MONITOR=off`
  get none; where none can run, the person is told once, with the reason, and `pcp status`
  says it every time.
- The monitor's socket folder outside the store must be a private folder of the owner's, and
  an answer is believed only from a process of the owner's (SO_PEERCRED): another local user
  who made that folder first cannot answer "nothing changed" and hide a hand edit.
- Fast twins of the slow set's journal-limit and overflow tests, on the monitor's own journal.

The suite runs with PCP_MONITOR=off (tests/conftest.py): each test here that lets a command
start a monitor takes that away, waits for the monitor's socket to answer (never a fixed
sleep), and stops it at the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pcp_cli.store.changes import monitor
from pcp_cli.store.changes import watch as watching
from tests.conftest import cli, run_pcp

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not watching.local_file_system(Path("/tmp")),
    reason="the store monitor needs Linux's inotify on a local file system")


def _notes(store: Path, n: int) -> None:
    for i in range(n):
        assert cli("add", f"note number {i} about kelp", "--title", f"Note {i}",
                   "--store", str(store)).code == 0


def _wait_for(condition, what: str, seconds: float = 60.0) -> None:
    """Wait until `condition()` holds (the monitor answering, say): a generous deadline that
    only a broken build reaches, never a sleep a fast machine would pass and a slow one not."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {seconds:.0f} s")
        time.sleep(0.05)


@pytest.fixture
def by_default(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """Commands may start monitors as outside the tests (a store of 3 pages is big enough);
    every store named in the list is stopped afterwards."""
    monkeypatch.delenv("PCP_MONITOR")
    monkeypatch.setenv("PCP_MONITOR_MIN_PAGES", "3")
    started: list[Path] = []
    yield started
    for store in started:
        run_pcp("monitor", "stop", "--store", str(store))
        _wait_for(lambda s=store: not monitor.ask_alive(s), "the monitor stopping")


def _token(store: Path) -> str | None:
    import sqlite3

    with sqlite3.connect(store / ".pcp" / "catalog.sqlite") as db:
        row = db.execute("SELECT value FROM meta WHERE key='monitor_token'").fetchone()
    return row[0] if row else None


# -- started by default ------------------------------------------------------------------------

def test_a_big_store_gets_a_monitor_from_the_first_command_that_scans_it(
        store: Path, by_default: list[Path]) -> None:
    _notes(store, 4)
    by_default.append(store)
    first = run_pcp("ls", "--store", str(store))
    assert first.code == 0 and first.stderr == ""  # nothing to say: it just starts
    _wait_for(lambda: monitor.ask_alive(store), "the monitor answering")
    assert not (store / ".pcp/monitor/auto").exists()  # started for its size, not marked
    assert run_pcp("ls", "--store", str(store)).code == 0
    token = _token(store)
    assert token is not None and monitor.ask(store, token) == (token, [])  # it vouched
    status = run_pcp("status", "--store", str(store), "--json").json["monitor"]
    assert status["running"] and status["starts"] == "by size" and status["pages"] == 4
    shown = run_pcp("status", "--store", str(store)).stdout
    assert "Store monitor: running" in shown


def test_what_a_command_answers_is_the_same_with_and_without_the_monitor(
        store: Path, by_default: list[Path]) -> None:
    """Correct before fast: the same listing, search, stats and status either way, after a
    hand edit that kept the file's size and mtime."""
    _notes(store, 5)
    head = next((store / "pages").rglob("*.md"))
    st = head.stat()
    text = head.read_text("utf-8")
    head.write_text(text.replace("about kelp", "about reef"), "utf-8")
    os.utime(head, ns=(st.st_atime_ns, st.st_mtime_ns))
    asks = [("ls", "--json"), ("search", "tuna", "--json"), ("stats", "--json"),
            ("timeline", "list", "--json"), ("search", "kelp", "--json")]
    found = run_pcp("search", "reef", "--json", "--store", str(store), env={"PCP_MONITOR": "off"})
    assert len(found.json["results"]) == 1
    by_default.append(store)
    assert run_pcp("ls", "--store", str(store)).code == 0
    _wait_for(lambda: monitor.ask_alive(store), "the monitor answering")
    head.write_text(head.read_text("utf-8").replace("about reef", "about tuna"), "utf-8")
    os.utime(head, ns=(st.st_atime_ns, st.st_mtime_ns))
    with_monitor = [run_pcp(*a, "--store", str(store)).stdout for a in asks]
    again = [run_pcp(*a, "--store", str(store), env={"PCP_MONITOR": "off"}).stdout
             for a in asks]
    assert with_monitor == again
    assert len(json.loads(with_monitor[1])["results"]) == 1
    assert len(json.loads(with_monitor[4])["results"]) == 4


def test_a_small_store_a_stopped_monitor_and_PCP_MONITOR_off_start_none(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spawned: list[Path] = []
    monkeypatch.setattr(monitor, "spawn", lambda root, **kw: spawned.append(root))
    _notes(store, 4)
    assert cli("ls", "--store", str(store)).code == 0  # PCP_MONITOR=off (the suite's)
    monkeypatch.delenv("PCP_MONITOR")
    assert cli("ls", "--store", str(store)).code == 0  # 4 pages: under the default size
    assert spawned == []
    monkeypatch.setenv("PCP_MONITOR_MIN_PAGES", "3")
    assert cli("monitor", "stop", "--store", str(store)).code == 0  # the person said no
    assert cli("ls", "--store", str(store)).code == 0
    assert spawned == []
    assert cli("status", "--store", str(store), "--json").json["monitor"]["starts"] == "off"
    shown = cli("status", "--store", str(store)).stdout
    assert "Store monitor: switched off" in shown and "4 files" in shown
    (store / ".pcp/monitor/off").unlink()  # as `pcp monitor start` does
    assert cli("ls", "--store", str(store)).code == 0
    assert spawned == [store.resolve()] or spawned == [store]


def test_where_it_cannot_run_the_person_is_told_once_with_the_reason(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PCP_MONITOR")
    monkeypatch.setenv("PCP_MONITOR_MIN_PAGES", "3")
    why = "the store is not on a local file system (inotify does not see other machines' writes)"
    monkeypatch.setattr(monitor, "supported", lambda root: why)
    monkeypatch.setattr(monitor, "spawn", lambda root, **kw: pytest.fail("started anyway"))
    _notes(store, 4)
    first = cli("ls", "--store", str(store))
    assert first.code == 0
    notes = [line for line in first.stderr.splitlines() if line.startswith("Note:")]
    assert len(notes) == 1 and why in notes[0] and "4 pages" in notes[0], first.stderr
    assert "Note:" not in cli("ls", "--store", str(store)).stderr  # once
    assert "Note:" not in cli("search", "kelp", "--store", str(store)).stderr
    status = cli("status", "--store", str(store))
    assert f"Store monitor: cannot run here: {why}" in status.stdout
    assert cli("status", "--store", str(store), "--json").json["monitor"]["why_not"] == why
    later = "the store monitor needs Linux's inotify; every command scans instead"
    monkeypatch.setattr(monitor, "supported", lambda root: later)
    again = cli("ls", "--store", str(store))
    assert later in again.stderr  # another reason is said once too


def test_out_of_inotify_budget_the_person_is_told_once_and_status_says_so(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No inotify instance to spare (the machine's budget is used up by other programs): the
    monitor's start fails and keeps why; the next command that scans says so once, with the
    reason and what the scan cost, and `pcp status` says it until the person starts it."""
    import errno

    def no_budget() -> None:
        raise OSError(errno.EMFILE, "Too many open files")

    _notes(store, 4)
    monkeypatch.setattr(watching, "_Hub", no_budget)
    monkeypatch.delenv("PCP_MONITOR")
    monkeypatch.setenv("PCP_MONITOR_MIN_PAGES", "3")
    with pytest.raises(OSError, match="no inotify instance to spare"):
        monitor.run(store, idle_timeout=1)  # as the first command's spawn would have run it
    monkeypatch.setattr(monitor, "spawn", lambda root, **kw: pytest.fail("started again"))
    first = cli("ls", "--store", str(store))
    notes = [line for line in first.stderr.splitlines() if line.startswith("Note:")]
    assert len(notes) == 1, first.stderr
    assert "4 pages" in notes[0] and "no inotify instance to spare" in notes[0]
    assert "Every command checks every page file" in notes[0]
    assert "Note:" not in cli("ls", "--store", str(store)).stderr  # once
    status = cli("status", "--store", str(store))
    assert ("Store monitor: cannot run here: the monitor could not start: no inotify instance "
            "to spare (fs.inotify.max_user_instances). Each command checks every page file "
            "(4 files,") in status.stdout
    assert "no inotify instance" in cli("status", "--store", str(store), "--json").json[
        "monitor"]["why_not"]


def test_a_monitor_that_cannot_start_is_not_started_again_and_status_says_why(
        store: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Its socket folder (outside the store when the store's path is long) is open to
    everyone: the monitor refuses to run there, keeps why, and commands scan without starting
    it again; `pcp monitor start` tries again."""
    runtime = tmp_path / "run"
    runtime.mkdir()
    (runtime / "pcp-monitor").mkdir()
    (runtime / "pcp-monitor").chmod(0o777)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setattr(monitor, "_SOCKET_MAX", 10)  # every path is "too long"
    _notes(store, 2)
    with pytest.raises(OSError, match="open to other users"):
        monitor.run(store, idle_timeout=1)
    failed = json.loads((store / ".pcp/monitor/failed.json").read_text())
    assert "open to other users" in failed["why"]
    monkeypatch.setattr(monitor, "_socket_folder_problem", lambda root: None)
    assert "could not start" in monitor.why_not(store) and not monitor.may_start(store)


# -- only the owner is believed (issue #31) -----------------------------------------------------

class _Liar(threading.Thread):
    """Listens at the monitor's socket and answers every question "nothing changed"."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(4)
        self.asked = 0

    def run(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn, contextlib.suppress(OSError):  # the asker hung up on the liar
                conn.recv(65536)
                self.asked += 1
                conn.sendall(b'{"token": "liar:1", "paths": [], "revisions": []}\n')


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A folder with a short path that every user may enter (a socket address holds 108
    bytes; pytest's temporary folders are long and closed to other users)."""
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="pcpm", dir="/tmp"))
    base.chmod(0o755)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def _long_store(tmp_path: Path) -> Path:
    """A store whose path is too long for a socket address: its monitor's socket lives in the
    runtime folder, where another user could have been first."""
    root = tmp_path / ("x" * 60) / ("y" * 60) / "store"
    root.parent.mkdir(parents=True)
    assert cli("init", str(root), "--owner", "tester").code == 0
    _notes(root, 3)
    assert monitor.socket_path(root).parent != monitor.folder(root)
    return root


def test_an_answer_from_another_users_process_is_never_believed(
        tmp_path: Path, short_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process at the socket that the kernel says runs as another user answers "nothing
    changed": the hand edit is still found, and no token from it is kept. (Another user is
    played by this test's uid seen as foreign: the check compares SO_PEERCRED's uid with
    ours.)"""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(short_tmp))
    store = _long_store(tmp_path)
    assert cli("ls", "--store", str(store)).code == 0
    folder = monitor.socket_path(store).parent
    folder.mkdir(parents=True, mode=0o700)
    liar = _Liar(monitor.socket_path(store))
    liar.start()
    try:
        uid = os.getuid()
        monkeypatch.setattr(monitor, "_check_peer", _seen_as(uid + 1))
        head = next((store / "pages").rglob("*.md"))
        st = head.stat()
        head.write_text(head.read_text("utf-8").replace("about kelp", "about reef"), "utf-8")
        os.utime(head, ns=(st.st_atime_ns, st.st_mtime_ns))
        found = cli("search", "reef", "--store", str(store), "--json")
        assert found.code == 0 and len(found.json["results"]) == 1, found.stderr
        assert "runs as another user" in found.stderr  # said, once
        assert _token(store) is None
        assert liar.asked >= 1
    finally:
        liar.server.close()


def test_a_socket_in_a_folder_open_to_other_users_is_not_asked(
        tmp_path: Path, short_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The folder is checked apart from the answer: in a folder anyone may write, whoever
    answers could have put the socket there."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(short_tmp))
    store = _long_store(tmp_path)
    assert cli("ls", "--store", str(store)).code == 0
    folder = monitor.socket_path(store).parent
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    liar = _Liar(monitor.socket_path(store))
    liar.start()
    try:
        head = next((store / "pages").rglob("*.md"))
        head.write_text(head.read_text("utf-8").replace("about kelp", "about reef"), "utf-8")
        found = cli("search", "reef", "--store", str(store), "--json")
        assert found.code == 0 and len(found.json["results"]) == 1, found.stderr
        assert "open to other users" in found.stderr
        assert liar.asked == 0 and _token(store) is None
    finally:
        liar.server.close()


def _seen_as(peer_uid: int):
    """`monitor._check_peer` as it runs when the process at the other end is `peer_uid`'s: the
    real credentials are read from the kernel, and compared with this process's uid as if it
    were `peer_uid`'s (so ours is another user's)."""
    real = monitor._check_peer

    def check(conn: socket.socket) -> None:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        assert struct.unpack("3i", creds)[1] == os.getuid()  # what the kernel says
        saved = monitor._owner
        monitor._owner = lambda: peer_uid  # type: ignore[assignment]
        try:
            real(conn)
        finally:
            monitor._owner = saved  # type: ignore[assignment]

    return check


@pytest.mark.skipif(os.geteuid() != 0, reason="playing another user needs root")
def test_another_user_who_made_the_socket_folder_first_cannot_hide_a_hand_edit(
        tmp_path: Path, short_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The attack of issue #31, with a real second user: `nobody` makes the monitor's folder
    under the temporary folder first and serves "nothing changed" from it. The folder is not
    the owner's: no monitor is started there and no answer from it is believed."""
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr("tempfile.tempdir", str(short_tmp / "tmp"))
    (short_tmp / "tmp").mkdir()
    (short_tmp / "tmp").chmod(0o1777)  # as /tmp is
    store = _long_store(tmp_path)
    sock = monitor.socket_path(store)
    ready = sock.with_name("ready")
    pid = os.fork()
    if pid == 0:  # the other user
        try:
            os.setgid(65534)
            os.setuid(65534)
            sock.parent.mkdir(mode=0o777)
            sock.parent.chmod(0o777)
            liar = _Liar(sock)
            ready.touch()
            liar.run()
        finally:
            os._exit(0)
    try:
        _wait_for(ready.exists, "the other user's socket")
        assert monitor.private_folder(sock.parent) is not None
        assert cli("ls", "--store", str(store)).code == 0
        head = next((store / "pages").rglob("*.md"))
        st = head.stat()
        head.write_text(head.read_text("utf-8").replace("about kelp", "about reef"), "utf-8")
        os.utime(head, ns=(st.st_atime_ns, st.st_mtime_ns))
        status = cli("status", "--store", str(store), "--json").json
        assert [e["path"] for e in status["hand_edits"]] == [
            head.relative_to(store).as_posix()]  # never "clean"
        found = cli("search", "reef", "--store", str(store), "--json")
        assert found.code == 0 and len(found.json["results"]) == 1, found.stderr
        assert _token(store) is None
        with pytest.raises(OSError, match="belongs to another user|open to other users"):
            monitor.run(store, idle_timeout=1)
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)


def test_the_monitor_answers_only_its_own_user(store: Path, monkeypatch: pytest.MonkeyPatch):
    """The server side of the same check: a question from another user's process is not
    answered (it would learn which pages changed)."""
    answered: list[int] = []
    real = monitor._answer
    monkeypatch.setattr(monitor, "_answer", lambda *a: answered.append(1) or real(*a))
    monkeypatch.setattr(monitor, "_check_peer", _seen_as(os.getuid() + 1))
    stop = threading.Event()
    monkeypatch.setattr("signal.signal", lambda *a: None)  # not the main thread
    runner = threading.Thread(target=lambda: monitor.run(store, idle_timeout=2), daemon=True)
    runner.start()
    _wait_for(lambda: monitor.socket_path(store).exists(), "the monitor's socket")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(5)
        conn.connect(str(monitor.socket_path(store)))
        try:  # closed without an answer, before or after the question was sent
            conn.sendall(b'{"since": null}\n')
            assert conn.recv(100) == b""
        except (BrokenPipeError, ConnectionResetError):
            pass
    assert answered == []
    stop.set()
    runner.join(timeout=30)


# -- fast twins of the slow set's journal limit and overflow ------------------------------------

def test_past_its_journal_limit_the_monitor_cannot_vouch_for_older_tokens(store: Path) -> None:
    _notes(store, 5)
    pages = (store / "pages").resolve()
    hub = watching._Hub()
    try:
        journal = monitor.Journal(limit=3)
        store_watch = watching.StoreWatch(hub, pages)
        monitor.take(store_watch, journal)
        token = journal.token()
        heads = sorted(pages.rglob("*.md"))
        for head in heads[:2]:
            head.write_text(head.read_text("utf-8") + "\nedited\n", "utf-8")
        monitor.take(store_watch, journal)
        named = journal.since(token)
        assert named == sorted(h.relative_to(store.resolve()).as_posix() for h in heads[:2])
        for head in heads:  # five distinct files: past the limit of three
            head.write_text(head.read_text("utf-8") + "\nagain\n", "utf-8")
        monitor.take(store_watch, journal)
        assert journal.since(token) is None  # forgotten: the command scans everything
        fresh = journal.token()
        monitor.take(store_watch, journal)
        assert journal.since(fresh) == []  # and it vouches from there on
    finally:
        os.close(hub.fd)


def test_a_kernel_queue_overflow_makes_the_monitor_refuse_to_vouch(store: Path) -> None:
    _notes(store, 2)
    pages = (store / "pages").resolve()
    hub = watching._Hub()
    try:
        journal = monitor.Journal(limit=1000)
        store_watch = watching.StoreWatch(hub, pages)
        monitor.take(store_watch, journal)
        token = journal.token()
        # what the kernel queues when events were lost (IN_Q_OVERFLOW, wd -1)
        hub._note(struct.pack("iIII", -1, watching._IN_Q_OVERFLOW, 0, 0))
        monitor.take(store_watch, journal)
        assert journal.since(token) is None
        fresh = journal.token()
        monitor.take(store_watch, journal)  # the folders watched again
        assert journal.since(fresh) == []
    finally:
        os.close(hub.fd)


def test_past_its_journal_limit_revisions_are_not_vouched_for_either(store: Path) -> None:
    from pcp_cli.store.changes.revisions_watch import RevisionsWatch

    _notes(store, 4)
    root = store.resolve()
    hub = watching._Hub()
    try:
        journal = monitor.Journal(limit=2)
        store_watch = watching.StoreWatch(hub, root / "pages")
        revisions_watch = RevisionsWatch(hub, root / "revisions")
        while revisions_watch.busy:
            monitor.take(store_watch, journal, revisions_watch)
        monitor.take(store_watch, journal, revisions_watch)
        token = journal.token()
        assert journal.revisions_since(token) == []
        for folder in sorted(p for p in (root / "revisions").iterdir() if p.is_dir()):
            (folder / "extra.json").write_text("{}", "utf-8")  # a file added by hand
        monitor.take(store_watch, journal, revisions_watch)
        assert journal.revisions_since(token) is None
        assert journal.since(token) is None
    finally:
        os.close(hub.fd)


# -- the entries of revisions/ itself, for the read-side damage check ---------------------------

def test_the_entries_of_revisions_are_named_even_past_the_budget(store: Path) -> None:
    from pcp_cli.store.changes.revisions_watch import RevisionsWatch

    _notes(store, 3)
    root = store.resolve()
    hub = watching._Hub()
    try:
        journal = monitor.Journal(limit=1000)
        store_watch = watching.StoreWatch(hub, root / "pages")
        revisions_watch = RevisionsWatch(hub, root / "revisions", budget=1)  # 3 folders: past it
        monitor.take(store_watch, journal, revisions_watch)
        assert revisions_watch.refused is not None and revisions_watch.top is not None
        token = journal.token()
        assert journal.top_since(token) == [] and not revisions_watch.vouching
        (root / "revisions" / "pg_NEW").mkdir()
        (root / "revisions" / "pg_FILE").write_text("not a folder\n", "utf-8")
        monitor.take(store_watch, journal, revisions_watch)
        assert journal.top_since(token) == ["pg_FILE", "pg_NEW"]
        assert journal.since(token) == []  # never named as head files
        fresh = journal.token()
        hub._note(struct.pack("iIII", -1, watching._IN_Q_OVERFLOW, 0, 0))
        monitor.take(store_watch, journal, revisions_watch)
        assert journal.top_since(fresh) is None  # events lost: cannot vouch
    finally:
        os.close(hub.fd)


@pytest.fixture
def in_process_monitor(store: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The store's monitor run in a thread of this process (answering real socket questions),
    stopped by removing its socket at the end."""
    monkeypatch.setattr("signal.signal", lambda *a: None)  # not the main thread
    runner = threading.Thread(target=lambda: monitor.run(store, idle_timeout=60), daemon=True)
    runner.start()
    _wait_for(lambda: monitor.ask_alive(store), "the monitor answering")
    yield store
    monitor.socket_path(store).unlink()  # the monitor leaves when its socket is not its own
    runner.join(timeout=30)


def test_after_a_new_page_the_damage_check_looks_at_the_names_the_monitor_gives(
        in_process_monitor: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a monitor, a page added (revisions/ changed) costs the next read's damage check the
    entries created since its token, not a listing of every page folder; a revision folder
    replaced by a file is still damage to the next read."""
    import shutil

    from pcp_cli.upkeep import damage

    store = in_process_monitor
    _notes(store, 3)
    assert cli("ls", "--store", str(store)).code == 0  # a clean check, with the monitor's token
    assert json.loads((store / ".pcp/folder-check").read_text())["top"] is not None
    listings: list[int] = []
    real = damage._listed_damage
    monkeypatch.setattr(damage, "_listed_damage", lambda s: listings.append(1) or real(s))
    _notes(store, 1)  # a new page folder in revisions/
    assert cli("search", "kelp", "--store", str(store)).code == 0
    assert listings == []
    victim = sorted(p for p in (store / "revisions").iterdir() if p.is_dir())[0]
    shutil.rmtree(victim)
    victim.write_text("not a folder\n", "utf-8")
    done = cli("ls", "--store", str(store))
    assert done.code == 8 and f"revisions/{victim.name}: not a folder" in done.stderr
    assert listings == []  # found from the names alone
