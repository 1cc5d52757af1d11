"""The audit log: one record per call, no page content, and no answer without a record."""

from __future__ import annotations

import json
import os

import pytest

from pcp_cli.errors import InvalidInput
from pcp_cli.mcp.audit import (
    AuditLog,
    AuditUnavailable,
    audit_path,
    read_audit,
    sanitize_params,
)


def _record(log, **overrides):
    fields = {
        "client_id": "claude-desktop",
        "actor": "model",
        "tool": "pcp_search",
        "params": {"query": "tide"},
        "outcome": "allowed",
        "result_count": 2,
    }
    fields.update(overrides)
    return log.record(**fields)


def test_appends_one_json_line_per_call(tmp_path, monkeypatch):
    monkeypatch.setenv("PCP_NOW", "2026-11-30T10:00:00.000Z")
    log = AuditLog(tmp_path, session_id="ses_1")
    _record(log)
    _record(log, tool="pcp_stats", params={}, result_count=None, outcome="refused",
            error_code="not_found")
    lines = [json.loads(line) for line in audit_path(tmp_path).read_text().splitlines()]
    created, *calls = lines
    assert created["event"] == "log_created" and created["prev"] is None
    assert created["log_id"].startswith("log_") and created["continues"] is None
    for before, after in zip(lines, lines[1:], strict=False):
        assert after["prev"] == before["hash"]  # the chain
    assert [{k: v for k, v in r.items() if k not in ("prev", "hash")} for r in calls] == [
        {
            "time": "2026-11-30T10:00:00.000Z",
            "session_id": "ses_1",
            "client_id": "claude-desktop",
            "actor": "model",
            "tool": "pcp_search",
            "params": {"query": "tide"},
            "result_count": 2,
            "outcome": "allowed",
            "error_code": None,
        },
        {
            "time": "2026-11-30T10:00:00.000Z",
            "session_id": "ses_1",
            "client_id": "claude-desktop",
            "actor": "model",
            "tool": "pcp_stats",
            "params": {},
            "result_count": None,
            "outcome": "refused",
            "error_code": "not_found",
        },
    ]
    assert oct(audit_path(tmp_path).stat().st_mode & 0o777) == "0o600"


def test_never_records_page_content_and_caps_lengths():
    params = {
        "content": "my secret diary " * 100,
        "title": "t" * 500,
        "tags": [f"t{i}" for i in range(80)],
        "nested": {"payload": "x", "deep": {"deeper": {"deepest": 1}}},
    }
    clean = sanitize_params(params)
    assert clean["content"] == {"omitted": True, "chars": 1600}
    assert "diary" not in json.dumps(clean)
    assert len(clean["title"]) == 201
    assert len(clean["tags"]) == 51 and clean["tags"][-1] == "… 30 more"
    assert clean["nested"]["payload"] == {"omitted": True, "chars": 1}
    assert clean["nested"]["deep"]["deeper"] == "…"
    assert sanitize_params("not a dict") == "not a dict"


def test_unknown_outcome_is_a_bug(tmp_path):
    with pytest.raises(ValueError):
        _record(AuditLog(tmp_path), outcome="maybe")


def test_unwritable_log_fails_the_call(tmp_path):
    # Tests may run as root, where chmod does not stop writes: put a directory in the way.
    audit_path(tmp_path).mkdir(parents=True)
    with pytest.raises(AuditUnavailable) as info:
        _record(AuditLog(tmp_path))
    assert info.value.code == "audit_unavailable"
    assert info.value.hint


def test_unwritable_store_folder_fails_the_call(tmp_path):
    (tmp_path / ".pcp").write_text("a file where the folder should be")
    with pytest.raises(AuditUnavailable):
        AuditLog(tmp_path).open()


def test_write_failure_after_open_fails_the_call(tmp_path, monkeypatch):
    log = AuditLog(tmp_path)
    with log.open() as sink:
        def broken(fd):
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "fsync", broken)
        with pytest.raises(AuditUnavailable, match="No space left"):
            sink.write(client_id=None, actor="model", tool="pcp_stats", params={},
                       outcome="allowed")


def test_read_audit_filters_and_tolerates_torn_last_line(tmp_path, monkeypatch):
    log = AuditLog(tmp_path)
    monkeypatch.setenv("PCP_NOW", "2026-11-01T09:00:00.000Z")
    _record(log, client_id="a")
    monkeypatch.setenv("PCP_NOW", "2026-11-30T09:00:00.000Z")
    _record(log, client_id="b")
    _record(log, client_id="a")
    with audit_path(tmp_path).open("ab") as handle:
        handle.write(b'{"time": "2026-11-30T09:00:00.000Z", "client_id": "a", "tool": "pcp_se')
    assert len(read_audit(tmp_path)) == 3
    assert [r["client_id"] for r in read_audit(tmp_path, client="a")] == ["a", "a"]
    assert len(read_audit(tmp_path, since="2026-11-15")) == 2
    assert len(read_audit(tmp_path, client="a", since="2026-11-30T09:00:00Z")) == 1
    # Appending after a torn line still yields readable records.
    _record(log, client_id="c")
    assert [r["client_id"] for r in read_audit(tmp_path)] == ["a", "b", "a", "c"]


def test_read_audit_missing_log_is_empty(tmp_path):
    assert read_audit(tmp_path) == []


def test_read_audit_bad_since(tmp_path):
    with pytest.raises(InvalidInput):
        read_audit(tmp_path, since="last tuesday")


def test_read_audit_newest_reads_from_the_end_across_rotations(tmp_path, monkeypatch):
    """The console's Assistants pages: newest first, through rotated files, a torn line
    skipped, at most `limit` (then `whole` is false), stopping after `max_bytes`; the same
    records `read_audit` gives, reversed, whatever the chunk boundaries."""
    from pcp_cli.mcp import audit

    monkeypatch.setenv("PCP_AUDIT_MAX_BYTES", "600")
    log = AuditLog(tmp_path)
    odd = 'client "quoted" \u202e'
    for number in range(30):
        _record(log, client_id=["a", "b", odd][number % 3], params={"query": f"q{number}"})
    with audit_path(tmp_path).open("ab") as handle:
        handle.write(b'{"time": "2026-11-30T09:00:00.000Z", "client_id": "a", "tool": "pcp_se')
    assert len(audit.log_files(tmp_path)) > 3  # rotated
    everything = read_audit(tmp_path)
    newest, whole = audit.read_audit_newest(tmp_path)
    assert whole and newest == everything[::-1] and len(newest) == 30
    for client in ("a", odd):
        mine, whole = audit.read_audit_newest(tmp_path, client=client)
        assert whole and mine == read_audit(tmp_path, client=client)[::-1]
    few, whole = audit.read_audit_newest(tmp_path, client="b", limit=4)
    assert not whole and few == read_audit(tmp_path, client="b")[::-1][:4]
    exact, whole = audit.read_audit_newest(tmp_path, client="b", limit=10)
    assert whole and len(exact) == 10
    cut, whole = audit.read_audit_newest(tmp_path, max_bytes=1500)
    assert not whole and 0 < len(cut) < 30 and cut == everything[::-1][:len(cut)]
    for path in audit.log_files(tmp_path):
        lines = path.read_bytes().split(b"\n")
        assert list(audit._lines_backwards(path, chunk=7)) == lines[::-1]
