"""A test per documented exit status, each in its plain and its --json form.

Under --json an error is one JSON object on stderr and stdout stays empty.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pcp_cli.errors import ExitStatus
from tests.conftest import cli, run_pcp, snapshot
from tests.test_concurrency import helper_env

HELPERS = Path(__file__).resolve().parent / "helpers"


def add(store: Path, text: str = "some text") -> dict:
    result = cli("add", text, "--store", str(store), "--json")
    assert result.code == 0, result.stderr
    return result.json


def check_both(args: list[str], status: int, code: str | None = None) -> None:
    """Plain: `Error:` on stderr. --json: one JSON error object on stderr, stdout empty."""
    plain = cli(*args)
    assert plain.code == status, (plain.code, plain.stderr)
    assert plain.stderr.startswith(("Error:", "Usage:")), plain.stderr
    assert "Traceback" not in plain.stderr
    as_json = cli(*args, "--json")
    assert as_json.code == status, (as_json.code, as_json.stderr)
    assert as_json.stdout == ""
    error = json.loads(as_json.stderr)["error"]
    assert error["exit_status"] == status
    assert error["message"]
    assert {"code", "message", "hint", "exit_status"} <= set(error)
    if code is not None:
        assert error["code"] == code


def test_0_ok(store: Path) -> None:
    result = cli("ls", "--store", str(store))
    assert result.code == ExitStatus.OK == 0
    assert result.stderr == ""


@pytest.mark.parametrize("args", [
    ["ls", "--bogus"],
    ["show"],
    ["no-such-command"],
    ["keystone", "add", "x", "--confidence", "abc"],
    ["keystone", "add", "x", "--confidence", "2"],
    ["ls", "--type", "poem"],
])
def test_2_usage(store: Path, args: list[str]) -> None:
    check_both([*args, "--store", str(store)], ExitStatus.USAGE, "usage")


def test_2_delete_without_yes(store: Path) -> None:
    page = add(store)["page_id"]
    before = snapshot(store)
    check_both(["delete", page, "--store", str(store)], ExitStatus.USAGE, "usage")
    assert snapshot(store) == before


def test_3_not_found(store: Path, tmp_path: Path) -> None:
    check_both(["show", "pg_missing", "--store", str(store)], ExitStatus.NOT_FOUND, "not_found")
    page = add(store)["page_id"]
    check_both(["show", page, "--rev", "rev_missing", "--store", str(store)],
               ExitStatus.NOT_FOUND)
    check_both(["ls", "--store", str(tmp_path)], ExitStatus.NOT_FOUND, "store_not_found")


def test_4_conflict(store: Path) -> None:
    first = add(store)
    cli("revise", first["page_id"], "newer", "--store", str(store))
    before = snapshot(store)
    check_both(["revise", first["page_id"], "mine", "--expect", first["revision_id"],
                "--store", str(store)], ExitStatus.CONFLICT, "revision_conflict")
    assert snapshot(store) == before


def test_5_invalid_input(store: Path) -> None:
    check_both(["keystone", "add", "X", "--id", "../x", "--store", str(store)],
               ExitStatus.INVALID_INPUT, "invalid_input")
    result = cli("keystone", "add", "X", "--id", "../x", "--store", str(store), "--json")
    assert {"path", "line", "details"} <= set(json.loads(result.stderr)["error"])


def test_6_locked(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = add(store)["page_id"]
    holder = subprocess.Popen([sys.executable, str(HELPERS / "hold_lock.py"), str(store)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        monkeypatch.setenv("PCP_LOCK_TIMEOUT", "0.3")
        before = snapshot(store)
        check_both(["revise", page, "new text", "--store", str(store)], ExitStatus.LOCKED,
                   "store_locked")
        assert snapshot(store) == before
        # readers never block
        assert cli("show", page, "--store", str(store)).code == 0
        # and a real process reports the same
        result = run_pcp("add", "blocked", "--store", str(store),
                         env={"PCP_LOCK_TIMEOUT": "0.3"})
        assert result.code == 6 and "PCP_LOCK_TIMEOUT" in result.stderr
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    monkeypatch.setenv("PCP_LOCK_TIMEOUT", "5")
    assert cli("revise", page, "new text", "--store", str(store)).code == 0


def test_8_store_damaged(store: Path) -> None:
    page = add(store)
    path = store / "revisions" / page["page_id"] / f"{page['revision_id']}.json"
    path.write_bytes(b"{ this is not json")
    check_both(["show", page["page_id"], "--store", str(store)], ExitStatus.STORE_DAMAGED,
               "store_damaged")
    doctor = cli("doctor", "--json", "--store", str(store))
    assert doctor.code == 8
    assert "broken_revision" in {f["kind"] for f in doctor.json["findings"]}


def test_8_revision_with_wrong_ids(store: Path) -> None:
    a, b = add(store, "a"), add(store, "b")
    src = store / "revisions" / a["page_id"] / f"{a['revision_id']}.json"
    dst = store / "revisions" / b["page_id"] / f"{b['revision_id']}.json"
    dst.write_bytes(src.read_bytes())
    check_both(["show", b["page_id"], "--store", str(store)], ExitStatus.STORE_DAMAGED)


def _broken(*_args: object, **_kwargs: object) -> None:
    raise RuntimeError("a failure pcp has no message for")


BROKEN = ("from pcp_cli.store.store import Store\n"
          "def broken(*a, **k): raise RuntimeError('a failure pcp has no message for')\n"
          "Store.relations = broken\n"
          "import sys; from pcp_cli.cli.main import run; sys.exit(run(sys.argv[1:]))\n")


def test_1_unexpected(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception pcp does not turn into a message of its own (pcp has no test hook, so the
    relations listing is replaced by one that fails; every file-system failure pcp can meet has
    a message and status of its own, e.g. relations/ replaced by a file is exit 8)."""
    from pcp_cli.store.store import Store

    page_id = add(store)["page_id"]
    monkeypatch.setattr(Store, "relations", _broken)
    plain = cli("show", page_id, "--view", "relations", "--store", str(store))
    assert plain.code == ExitStatus.UNEXPECTED == 1
    assert plain.stderr.startswith("Error: unexpected RuntimeError: a failure pcp has")
    assert "--traceback" in plain.stderr and "Traceback" not in plain.stderr
    as_json = cli("show", page_id, "--view", "relations", "--store", str(store), "--json")
    assert as_json.code == 1 and as_json.stdout == ""
    assert json.loads(as_json.stderr)["error"]["code"] == "unexpected"
    # --traceback shows the whole traceback (a real process, since in-process it re-raises)
    shown = subprocess.run(
        [sys.executable, "-c", BROKEN, "--traceback", "show", page_id, "--view", "relations",
         "--store", str(store)], capture_output=True, text=True, env=helper_env(), timeout=120)
    assert shown.returncode == 1 and "Traceback (most recent call last)" in shown.stderr
    assert "RuntimeError: a failure pcp has no message for" in shown.stderr


# 7 (index unavailable) and 9 (import failed) belong to the index and importers, which are not
# part of the store core; their own tests cover them.
def test_every_status_is_documented() -> None:
    """The reference's exit-status table lists exactly the statuses pcp can return."""
    import re

    from tests.conftest import ROOT

    reference = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
    table = reference[reference.index("| status | meaning |"):]
    table = (table + "\n\n")[: (table + "\n\n").index("\n\n")]
    documented = [int(n) for n in re.findall(r"^\| (\d+) \|", table, re.MULTILINE)]
    assert documented == [int(s) for s in ExitStatus]


def test_11_storage_failed(store: Path) -> None:
    """The disk refused a write (here: the folder fsync fails with EIO): exit 11, undone."""
    before = snapshot(store)
    for extra in ([], ["--json"]):
        done = subprocess.run(
            [sys.executable, str(HELPERS / "fault_at.py"), "dirfsync", "1", "EIO", "add", "x",
             "--store", str(store), *extra],
            capture_output=True, text=True, env=helper_env(), timeout=120,
        )
        assert done.returncode == ExitStatus.STORAGE_FAILED == 11, done.stderr
        if extra:
            assert json.loads(done.stderr.splitlines()[0])["error"]["code"] == "storage_failed"
        else:
            assert done.stderr.startswith("Error: cannot write ")
    assert snapshot(store) == before


def test_6_a_catalog_another_process_keeps_locked(capsys: pytest.CaptureFixture[str]) -> None:
    """SQLite's "database is locked" (a writer held the catalog past the 30 s busy timeout: a
    first build of a big store, or a stopped process) is exit 6 with what to do, not an
    unexpected error with a traceback hint."""
    import sqlite3

    from pcp_cli.cli.main import guarded

    def work() -> int:
        raise sqlite3.OperationalError("database is locked")

    assert guarded(work, want_json=True) == ExitStatus.LOCKED
    error = json.loads(capsys.readouterr().err)["error"]
    assert error["code"] == "store_locked" and "catalog" in error["message"]
    assert "try again" in error["hint"]
