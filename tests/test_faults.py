"""Faults injected into real pcp processes: a failed write, fsync, rename or folder fsync (EIO or
ENOSPC), or a SIGKILL at that very step (tests/helpers/fault_at.py; pcp has no test hook).

After every fault the store validates, `pcp doctor --fix` leaves it clean, and everything
acknowledged before the fault is intact. A fault the disk reports fails the command with exit
status 11 and leaves the store exactly as it was. The recorded sequence of one write proves the
order that makes it crash-safe: data written to a temporary file, fsynced, renamed into place,
the folder fsynced.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pcp_cli.errors import ExitStatus
from tests.conftest import cli, snapshot
from tests.test_concurrency import HELPERS, helper_env

OPS = ("write", "fsync", "rename", "dirfsync")


def faulty(store: Path, op: str, n: int, fault: str, *args: str,
           trace: Path | None = None) -> subprocess.CompletedProcess[str]:
    extra = {"PCP_FAULT_TRACE": str(trace)} if trace else {}
    return subprocess.run(
        [sys.executable, str(HELPERS / "fault_at.py"), op, str(n), fault, *args,
         "--store", str(store)],
        capture_output=True, text=True, env=helper_env(**extra), timeout=120,
    )


def trace_of(store: Path, tmp_path: Path, *args: str) -> list[tuple[str, str]]:
    """The file operations one command performs (run on a throw-away copy of `store`)."""
    import shutil

    copy = tmp_path / f"trace-copy-{len(list(tmp_path.iterdir()))}"
    shutil.copytree(store, copy)
    log = tmp_path / f"{copy.name}.log"
    done = faulty(copy, "trace", 0, "none", *args, trace=log)
    assert done.returncode == 0, done.stderr
    lines = log.read_text().splitlines() if log.exists() else []
    steps = [tuple(line.split(" ", 1)) for line in lines]
    return [(op, path.replace(str(copy), "STORE")) for op, path in steps]


def durable(store: Path) -> dict[str, bytes]:
    """The immutable files: every acknowledged revision, relation and event."""
    return {rel: data for rel, data in snapshot(store).items()
            if rel.split("/", 1)[0] in ("revisions", "relations", "events")
            and not rel.endswith(".gitkeep")}


def assert_healthy(store: Path, before: dict[str, bytes], pages: list[str]) -> None:
    fixed = cli("doctor", "--fix", "--store", str(store), "--json")
    assert fixed.code in (0, 8), fixed.stderr
    clean = cli("doctor", "--store", str(store), "--json")
    assert clean.code == 0, clean.stdout + clean.stderr
    valid = cli("validate", str(store))
    assert valid.code == 0, valid.stderr
    after = snapshot(store)
    for rel, data in before.items():
        assert after.get(rel) == data, f"{rel} lost or changed"
    for page_id in pages:
        shown = cli("show", page_id, "--store", str(store), "--json")
        assert shown.code == 0, shown.stderr


@pytest.fixture
def seeded(store: Path) -> tuple[Path, list[str]]:
    pages = []
    for text in ("first page", "second page"):
        result = cli("add", text, "--store", str(store), "--json")
        assert result.code == 0, result.stderr
        pages.append(result.json["page_id"])
    return store, pages


@pytest.mark.parametrize("fault", ["EIO", "ENOSPC"])
@pytest.mark.parametrize("op", OPS)
def test_a_refused_write_fails_with_its_own_status_and_changes_nothing(
        seeded: tuple[Path, list[str]], op: str, fault: str) -> None:
    store, pages = seeded
    before = snapshot(store)
    done = faulty(store, op, 1, fault, "add", "never acknowledged")
    assert done.returncode == ExitStatus.STORAGE_FAILED == 11, done.stderr
    first = done.stderr.splitlines()[0]
    assert first.startswith("Error: cannot write ") and fault in first, first
    assert "undone" in first or "nothing was written" in first or "unchanged" in first, first
    assert "Traceback" not in done.stderr
    assert snapshot(store) == before
    clean = cli("doctor", "--store", str(store))
    assert clean.code == 0, clean.stdout + clean.stderr
    assert cli("validate", str(store)).code == 0
    assert cli("ls", "--store", str(store), "--json").json.__len__() >= 0


def test_a_failed_folder_fsync_of_the_head_file_takes_the_revision_back(
        seeded: tuple[Path, list[str]]) -> None:
    """The revision file is published first: a refused head write must not leave it behind."""
    store, pages = seeded
    before = snapshot(store)
    # a revise fsyncs the revision's folder, then the head file's: fail the head file's
    done = faulty(store, "dirfsync", 2, "EIO", "revise", pages[0], "new text")
    assert done.returncode == 11, done.stderr
    assert f"page {pages[0]} is unchanged" in done.stderr
    assert snapshot(store) == before


def test_json_error_for_a_full_disk(seeded: tuple[Path, list[str]]) -> None:
    import json

    store, _ = seeded
    done = faulty(store, "write", 1, "ENOSPC", "add", "x", "--json")
    assert done.returncode == 11
    error = json.loads(done.stderr.splitlines()[0])["error"]
    assert error["code"] == "storage_failed" and error["exit_status"] == 11


def test_every_file_is_written_to_a_temp_file_fsynced_renamed_then_its_folder_fsynced(
        seeded: tuple[Path, list[str]], tmp_path: Path) -> None:
    """Fails if the file fsync is skipped, if a file is written in place, or if the folder is
    not fsynced after the rename."""
    store, pages = seeded
    for args in (("add", "a new page"), ("revise", pages[0], "new words")):
        steps = trace_of(store, tmp_path, *args)
        renames = [path for op, path in steps if op == "rename"]
        assert renames, steps
        for op, path in steps:
            if op == "write":
                assert ".pcp-tmp-" in Path(path).name, f"written in place: {path}"
        # Every open for writing in the process (audit hooks), not only the atomic module's:
        # a plain write_bytes of a head file is caught here.
        opened = [path for op, path in steps if op == "open-write"]
        assert any(".pcp-tmp-" in p for p in opened), steps  # the hook saw the real writes
        for path in opened:
            if path.startswith("STORE/") and not path.startswith(("STORE/.pcp/", "STORE/.git/")):
                assert ".pcp-tmp-" in Path(path).name, f"opened for writing in place: {path}"
        for target in renames:
            where = steps.index(("rename", target))
            folder = str(Path(target).parent)
            temp = [p for op, p in steps[:where] if op == "write"
                    and Path(p).parent == Path(folder)
                    and Path(p).name.startswith(f".{Path(target).name}.pcp-tmp-")]
            assert temp, f"{target} was not written to a temp file first"
            assert ("fsync", temp[-1]) in steps[:where], f"{target}: no fsync before rename"
            last_write = max(i for i, s in enumerate(steps) if s == ("write", temp[-1]))
            assert steps.index(("fsync", temp[-1]), last_write) < where
            assert ("dirfsync", folder) in steps[where:], f"{folder} not fsynced after rename"
        assert any(Path(t).parts[-3] == "revisions" or "revisions" in t for t in renames)


@pytest.mark.slow
def test_killed_at_every_step_of_one_write(seeded: tuple[Path, list[str]],
                                           tmp_path: Path) -> None:
    """SIGKILL before each file operation of one `pcp revise`: the page is at the old revision
    or the new one, never lost, and doctor --fix mends what the kill left."""
    import shutil

    store, pages = seeded
    steps = trace_of(store, tmp_path, "revise", pages[0], "the new text")
    counts = {op: sum(1 for s, _ in steps if s == op) for op in OPS}
    assert all(counts.values()), counts
    for op in OPS:
        for n in range(1, counts[op] + 1):
            copy = tmp_path / f"kill-{op}-{n}"
            shutil.copytree(store, copy)
            before = durable(copy)
            done = faulty(copy, op, n, "kill", "revise", pages[0], "the new text")
            assert done.returncode == -signal.SIGKILL, (op, n, done.stderr)
            assert_healthy(copy, before, pages)
            content = cli("show", pages[0], "--store", str(copy), "--json").json["page"]["payload"]
            assert content["content"] in ("first page\n", "the new text\n", "first page",
                                          "the new text"), content


def _battery_commands(pages: list[str], tmp_path: Path) -> list[tuple[str, ...]]:
    note = tmp_path / "dropped.md"
    note.write_text("# Imported note\n\nsome words\n")
    return [
        ("add", "a brand new page"),
        ("revise", pages[0], "revised words"),
        ("link", pages[0], "related_to", pages[1]),
        ("archive", pages[1]),
        ("tombstone", pages[1]),
        ("delete", pages[1], "--yes"),
        ("keystone", "add", "I like tea", "--category", "preference"),
        ("timeline", "add", "2020-05", "moved house"),
        ("profile", "set", "name", "Tess"),
        ("import", str(note)),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("index", range(10))
def test_battery_every_write_command_under_every_fault(
        seeded: tuple[Path, list[str]], tmp_path: Path, index: int) -> None:
    """Each write command, with each of its file operations failed (EIO, ENOSPC) or killed in
    turn: refused faults exit 11 and change nothing; after any fault the store is healthy."""
    store, pages = seeded
    _battery(store, pages, _battery_commands(pages, tmp_path)[index], tmp_path)


def _more_commands(pages: list[str], keystone: str, proposal: str,
                   tmp_path: Path) -> list[tuple[str, ...]]:
    events = tmp_path / "events.jsonl"
    events.write_text(
        '{"type": "message", "conversation_id": "c1", "role": "user", "content": "hello"}\n'
        '{"type": "message", "conversation_id": "c1", "role": "assistant", "content": "hi"}\n')
    return [
        ("keystone", "add", "I like coffee", "--category", "preference",
         "--supersedes", keystone),
        ("keystone", "confirm", keystone),
        ("review", "accept", proposal),
        ("review", "reject", proposal),
        ("ingest", str(events), "--source", "battery"),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("index", range(5))
def test_battery_keystone_review_and_ingest_under_every_fault(
        seeded: tuple[Path, list[str]], tmp_path: Path, index: int) -> None:
    """The battery again for the commands that need a keystone or a proposal to act on, and
    for ingest (events first, then the conversation page)."""
    store, pages = seeded
    made = cli("keystone", "add", "I like tea", "--category", "preference",
               "--store", str(store), "--json")
    assert made.code == 0, made.stderr
    proposed = cli("keystone", "propose", "I like green tea", "--category", "preference",
                   "--supersedes", made.json["page_id"], "--store", str(store), "--json")
    assert proposed.code == 0, proposed.stderr
    keystone, proposal = made.json["page_id"], proposed.json["page_id"]
    args = _more_commands(pages, keystone, proposal, tmp_path)[index]
    _battery(store, [*pages, keystone, proposal], args, tmp_path)


def _battery(store: Path, pages: list[str], args: tuple[str, ...], tmp_path: Path) -> None:
    import shutil

    steps = trace_of(store, tmp_path, *args)
    faults = ("EIO", "ENOSPC", "kill")
    turn = 0
    for op in OPS:
        count = sum(1 for s, _ in steps if s == op)
        for n in range(1, count + 1):
            fault = faults[turn % len(faults)]
            turn += 1
            copy = tmp_path / f"b-{op}-{n}"
            shutil.copytree(store, copy)
            before_all = snapshot(copy)
            before = durable(copy)
            done = faulty(copy, op, n, fault, *args)
            if fault == "kill":
                assert done.returncode == -signal.SIGKILL, (args, op, n, done.stderr)
            else:
                assert done.returncode == 11, (args, op, n, done.stderr)
                assert "Traceback" not in done.stderr
                if args[0] == "delete" and "is recorded" in done.stderr:
                    # a delete rolls forward: its event is written first, then doctor
                    # --fix finishes what the fault stopped
                    assert "`pcp doctor --fix` finishes the delete" in done.stderr
                elif "does not supersede" in done.stderr:
                    # a keystone that supersedes another is written first, then doctor
                    # --fix finishes the supersession
                    assert "`pcp doctor --fix` finishes the supersession" in done.stderr
                elif args[0] == "ingest" and "the events are stored" in done.stderr:
                    # so does an ingest: its events are kept, sending them again finishes
                    assert "send the same events again" in done.stderr
                else:
                    assert snapshot(copy) == before_all, (args, op, n, done.stderr)
                    assert cli("doctor", "--store", str(copy)).code == 0, (args, op, n)
            if args[0] == "ingest":  # what the person does after any failed ingest
                again = cli(*args, "--store", str(copy))
                assert again.code == 0, (args, op, n, again.stderr)
            deleting = args[0] == "delete"
            survivors = [p for p in pages if not deleting or p != args[1]]
            assert_healthy(copy, {k: v for k, v in before.items()
                                  if not deleting or args[1] not in k}, survivors)
            shutil.rmtree(copy)
    assert turn, f"{args}: no file operation was traced"
