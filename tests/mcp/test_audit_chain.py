"""The audit log is a hash chain: removing, changing or inserting a record is reported by file
and line (`pcp audit --verify`, `pcp doctor`); rotation keeps the chain across files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pcp_cli.mcp.audit import AuditLog, audit_path, read_audit, verify_audit
from tests.conftest import cli
from tests.test_concurrency import helper_env


def _write(root: Path, n: int, client: str = "claude-desktop") -> None:
    log = AuditLog(root)
    for i in range(n):
        log.record(client_id=client, actor="model", tool="pcp_search",
                   params={"query": f"q{i}"}, outcome="allowed", result_count=i)


def _problems(root: Path) -> list[tuple[str, int]]:
    return [(p["file"], p["line"]) for p in verify_audit(root)["problems"]]


def test_an_intact_log_verifies(store: Path) -> None:
    _write(store, 5)
    report = verify_audit(store)
    assert report["valid"] and report["records"] == 5 and report["problems"] == []
    result = cli("audit", "--verify", "--store", str(store))
    assert result.code == 0 and "intact" in result.stdout
    assert cli("doctor", "--store", str(store)).code == 0


def test_a_deleted_line_is_reported_where_it_was_cut(store: Path) -> None:
    _write(store, 5)
    path = audit_path(store)
    lines = path.read_text().splitlines(keepends=True)
    del lines[3]  # line 1 is the log's creation; this is the third call
    path.write_text("".join(lines))
    assert _problems(store) == [("audit.jsonl", 4)]
    result = cli("audit", "--verify", "--store", str(store), "--json")
    assert result.code == 8
    assert result.json["problems"][0]["line"] == 4
    found = cli("doctor", "--store", str(store), "--json")
    assert found.code == 8
    assert [f["kind"] for f in found.json["findings"]] == ["audit_log"]
    assert "line 4" in found.json["findings"][0]["message"]


def test_a_forged_client_id_is_reported_on_its_line(store: Path) -> None:
    _write(store, 4)
    path = audit_path(store)
    lines = path.read_text().splitlines(keepends=True)
    record = json.loads(lines[2])
    record["client_id"] = "forged"
    lines[2] = json.dumps(record, sort_keys=True) + "\n"
    path.write_text("".join(lines))
    assert _problems(store) == [("audit.jsonl", 3)]
    assert "changed" in verify_audit(store)["problems"][0]["problem"]


def test_a_forged_record_with_its_hash_recomputed_breaks_the_next_link(store: Path) -> None:
    from pcp_cli.mcp.audit import chain

    _write(store, 4)
    path = audit_path(store)
    lines = path.read_text().splitlines(keepends=True)
    record = json.loads(lines[2])
    record["client_id"] = "forged"
    lines[2] = json.dumps(chain(record, record["prev"]), sort_keys=True) + "\n"
    path.write_text("".join(lines))
    assert _problems(store) == [("audit.jsonl", 4)]


def test_a_cut_beginning_is_reported(store: Path) -> None:
    _write(store, 3)
    path = audit_path(store)
    path.write_text("".join(path.read_text().splitlines(keepends=True)[2:]))
    assert _problems(store) == [("audit.jsonl", 1)]


def test_rotation_keeps_the_chain_across_files(store: Path, monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
    monkeypatch.setenv("PCP_AUDIT_MAX_BYTES", "1500")
    _write(store, 20)
    files = sorted((store / ".pcp").glob("audit*.jsonl"))
    assert len(files) > 2
    report = verify_audit(store)
    assert report["valid"], report["problems"]
    assert report["records"] == 20
    assert [r["params"]["query"] for r in read_audit(store)] == [f"q{i}" for i in range(20)]
    # each new file opens with a creation record naming the file it continues
    current = json.loads(audit_path(store).read_text().splitlines()[0])
    assert current["event"] == "log_created" and current["continues"] == report["files"][-2]
    # removing a whole rotated file in the middle breaks the chain at the next file's start
    middle = (store / ".pcp" / report["files"][1])
    middle.unlink()
    problems = verify_audit(store)["problems"]
    assert [(p["file"], p["line"]) for p in problems] == [(report["files"][2], 1)]


@pytest.mark.slow
def test_concurrent_servers_keep_one_chain(store: Path) -> None:
    code = ("import sys; from pcp_cli.mcp.audit import AuditLog\n"
            "log = AuditLog(sys.argv[1])\n"
            "for i in range(60):\n"
            "    log.record(client_id=sys.argv[2], actor='model', tool='pcp_stats', params={},"
            " outcome='allowed')\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(store), f"c{n}"],
                              env={**helper_env(), "PCP_AUDIT_MAX_BYTES": "6000"})
             for n in range(4)]
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    report = verify_audit(store)
    assert report["valid"], report["problems"][:5]
    assert report["records"] == 240


def test_a_rotation_that_loses_the_race_for_the_new_file_keeps_the_chain(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Between opening the new file and locking it, another server may fill and rotate it: the
    rotating server must not append to that rotated file (it broke the chain after it)."""
    monkeypatch.setenv("PCP_AUDIT_MAX_BYTES", "1500")
    other, slow = AuditLog(store), AuditLog(store)
    log = audit_path(store)
    while not log.exists() or log.stat().st_size < 1500:  # the next record rotates
        other.record(client_id="other", actor="model", tool="pcp_stats", params={},
                     outcome="allowed")
    opened = 0
    real_open = slow._open_fd

    def open_then_lose_the_race() -> int:
        nonlocal opened
        opened += 1
        fd = real_open()
        if opened == 2:  # the rotation's reopen: the other server gets there first
            before = len(AuditLog(store).rotated())
            while len(AuditLog(store).rotated()) == before:
                other.record(client_id="other", actor="model", tool="pcp_stats", params={},
                             outcome="allowed")
        return fd

    monkeypatch.setattr(slow, "_open_fd", open_then_lose_the_race)
    slow.record(client_id="slow", actor="model", tool="pcp_stats", params={}, outcome="allowed")
    assert opened >= 2
    report = verify_audit(store)
    assert report["problems"] == [], report["problems"]
    assert any(r["client_id"] == "slow" for r in read_audit(store))


def test_threads_of_one_server_keep_one_chain(store: Path) -> None:
    """`pcp serve --http` answers calls on worker threads that share one AuditLog."""
    import threading

    log = AuditLog(store)

    def calls(client: str) -> None:
        for i in range(40):
            log.record(client_id=client, actor="model", tool="pcp_search",
                       params={"query": f"q{i}"}, outcome="allowed", result_count=i)

    threads = [threading.Thread(target=calls, args=(f"c{n}",)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    report = verify_audit(store)
    assert report["problems"] == [] and report["records"] == 8 * 40


def test_a_torn_last_line_is_reported_and_the_chain_goes_on(store: Path) -> None:
    _write(store, 2)
    with audit_path(store).open("ab") as handle:
        handle.write(b'{"time": "2026-11-30T09:00:00.000Z", "client_id": "a", "tool": "pcp_se')
    _write(store, 2)
    assert _problems(store) == [("audit.jsonl", 4)]
    assert verify_audit(store)["records"] == 4


# -- the chain's tail is anchored outside the log ----------------------------------------------
@pytest.mark.parametrize(("cut", "said"), [
    ("last_records", "the log was cut short"),
    ("emptied", "the log was emptied"),
    ("deleted", "the log was deleted"),
])
def test_a_cut_tail_an_emptied_or_a_deleted_log_is_reported(store: Path, cut: str,
                                                             said: str) -> None:
    _write(store, 5)
    path = audit_path(store)
    lines = path.read_text().splitlines(keepends=True)
    if cut == "last_records":
        path.write_text("".join(lines[:-2]))  # a valid chain still, but short of its anchor
    elif cut == "emptied":
        path.write_text("")
    else:
        path.unlink()
    report = verify_audit(store)
    assert not report["valid"]
    assert [p["problem"].split(":")[0] for p in report["problems"]] == [said]
    result = cli("audit", "--verify", "--store", str(store))
    assert result.code == 8 and said in result.stdout + result.stderr
    found = cli("doctor", "--store", str(store), "--json")
    assert [f["kind"] for f in found.json["findings"]] == ["audit_log"]


def test_the_anchor_follows_every_record_and_rotation(store: Path, monkeypatch) -> None:
    monkeypatch.setenv("PCP_AUDIT_MAX_BYTES", "600")
    _write(store, 12)
    assert len(list(audit_path(store).parent.glob("audit-*.jsonl"))) >= 1
    anchor = json.loads((store / ".pcp" / "audit-anchor.json").read_text())
    last = json.loads(audit_path(store).read_text().splitlines()[-1])
    assert anchor["hash"] == last["hash"]
    assert verify_audit(store)["valid"]


def test_pcp_sync_names_the_chain_head_in_its_commit(tmp_path: Path, monkeypatch) -> None:
    from tests.gitsync_helpers import git, git_env

    git_env(monkeypatch)
    root = tmp_path / "synced"
    assert cli("init", "--git", str(root), "--owner", "ada").code == 0
    _write(root, 2)
    assert cli("add", "a page", "--store", str(root)).code == 0
    synced = cli("sync", "--store", str(root))
    assert synced.code == 0, synced.stderr
    anchor = json.loads((root / ".pcp" / "audit-anchor.json").read_text())
    message = git(root, "log", "-1", "--format=%B").stdout
    assert f"Audit-Chain-Head: {anchor['hash']}" in message
