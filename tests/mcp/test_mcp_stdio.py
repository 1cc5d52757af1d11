"""End to end: a real server subprocess driven over stdio by the SDK's client."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pcp_cli.mcp.audit import audit_path, read_audit
from pcp_cli.mcp.tools import READ_TOOLS, WRITE_TOOLS

pytestmark = pytest.mark.anyio


def _tool_names(listing):
    return {tool.name for tool in listing.tools}


async def _call(client, name, arguments=None):
    result = await client.call_tool(name, arguments or {})
    return result, result.structured_content


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_read_tools_only_by_default(mcp_session, mode):
    async with mcp_session(["--client-id", "claude-desktop"], mode=mode) as client:
        listing = await client.list_tools()
    assert _tool_names(listing) == set(READ_TOOLS)
    for tool in listing.tools:
        assert tool.annotations.read_only_hint is True
        assert tool.input_schema["type"] == "object"
        assert tool.input_schema["additionalProperties"] is False
    search = next(t for t in listing.tools if t.name == "pcp_search")
    assert search.input_schema["required"] == ["query"]
    assert search.input_schema["properties"]["limit"]["maximum"] == 25


async def test_write_tools_need_grant_and_flag(mcp_session):
    async with mcp_session(["--client-id", "writer"]) as client:
        assert _tool_names(await client.list_tools()) == set(READ_TOOLS)
    async with mcp_session(["--client-id", "claude-desktop", "--allow-write"]) as client:
        assert _tool_names(await client.list_tools()) == set(READ_TOOLS)
    async with mcp_session(["--client-id", "writer", "--allow-write"]) as client:
        listing = await client.list_tools()
    assert _tool_names(listing) == set(READ_TOOLS) | set(WRITE_TOOLS)
    hints = {t.name: t.annotations for t in listing.tools}
    assert hints["pcp_tombstone_page"].destructive_hint is True
    assert hints["pcp_write_page"].destructive_hint is False
    assert hints["pcp_propose_keystone"].destructive_hint is False
    assert hints["pcp_revise_page"].idempotent_hint is False
    assert all(hints[name].read_only_hint is False for name in WRITE_TOOLS)
    assert "pcp_delete_page" not in hints


async def test_calls_return_structured_json(mcp_session):
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        result, data = await _call(client, "pcp_get_profile", {"format": "micro_prompt"})
        assert not result.is_error
        assert result.content[0].text.startswith("Ada Lumen")
        result, data = await _call(client, "pcp_get_profile")
        assert data["schema_version"] == "1.0"
        assert json.loads(result.content[0].text) == data
        result, data = await _call(client, "pcp_search", {"query": "tide"})
        assert not result.is_error
        assert {r["id"] for r in data["results"]} == {"pg_role", "pg_tide"}
        assert data["filters_applied"]["scopes"] == ["user:ada-lumen", "project:tidewatch"]
        _, caps = await _call(client, "pcp_describe_capabilities")
        assert caps["grant"]["client_id"] == "claude-desktop"
        assert caps["writes_enabled"] is False
        _, timeline = await _call(client, "pcp_get_timeline", {"from": "2019", "to": "2021-01"})
        assert timeline["events"][0]["date"] == "2020-05"


async def test_nothing_outside_the_grant_leaks(mcp_session):
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        _, data = await _call(client, "pcp_search",
                              {"query": "tide", "include_sensitive": True,
                               "scopes": ["project:secret", "user:ada-lumen"]})
        assert {r["id"] for r in data["results"]} == {"pg_role"}
        assert data["filters_applied"]["include_sensitive"] is False
        assert len(data["notices"]) == 2
        _, data = await _call(client, "pcp_search", {"query": "secret", "scopes": ["*"]})
        assert data["results"] == []
        _, data = await _call(client, "pcp_read_pages", {"ids": ["pg_secret", "pg_missing"]})
        assert data["pages"] == [] and data["not_found"] == ["pg_secret", "pg_missing"]
        _, scopes = await _call(client, "pcp_list_scopes")
        assert [s["namespace"] for s in scopes["scopes"]] == ["project:tidewatch",
                                                              "user:ada-lumen"]
        _, stats = await _call(client, "pcp_stats")
        assert stats["pages"] == 2  # not the out-of-grant or sensitive pages


async def test_out_of_grant_write_target_looks_like_missing(mcp_session):
    args = ["--client-id", "writer", "--allow-write", "--scope", "user:ada-lumen"]
    async with mcp_session(args) as client:
        out, _ = await _call(client, "pcp_tombstone_page", {"page_id": "pg_tide"})
        missing, _ = await _call(client, "pcp_tombstone_page", {"page_id": "pg_nope"})
        assert out.is_error and missing.is_error
        assert out.content[0].text.replace("pg_tide", "X") == \
            missing.content[0].text.replace("pg_nope", "X")
        assert out.structured_content["error"]["code"] == "not_found"
        denied, _ = await _call(client, "pcp_write_page",
                                {"content": "x", "namespace": "project:tidewatch"})
        assert denied.is_error and "outside this client's grant" in denied.content[0].text


async def test_malformed_calls_are_tool_errors_and_server_keeps_serving(mcp_session, mcp_store):
    bad_calls = [
        ("pcp_search", {"query": "tide", "limit": "ten"}, "limit must be an integer"),
        ("pcp_search", {"query": "tide", "limit": 100}, "out of range"),
        ("pcp_search", {}, "query is required"),
        ("pcp_search", {"query": "tide", "types": ["weird"]}, "is not one of"),
        ("pcp_get_profile", {"format": "yaml"}, "is not one of"),
        ("pcp_get_timeline", {"from": "last year"}, "not well-formed"),
        ("pcp_stats", {"verbose": True}, "unknown parameter"),
        ("pcp_read_pages", {"ids": ["../etc/passwd"]}, "not well-formed"),
        ("pcp_read_pages", {"ids": ["pg_tide"], "cursor": "garbage!"}, "cursor is not valid"),
        ("pcp_write_page", {"content": "x"}, "unknown tool"),
        ("no_such_tool", {}, "unknown tool"),
    ]
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        for name, arguments, expected in bad_calls:
            result, data = await _call(client, name, arguments)
            assert result.is_error, name
            text = result.content[0].text
            assert expected in text, (name, text)
            assert "\nHint: " in text
            assert data["error"]["hint"]
        result, _ = await _call(client, "pcp_search", {"query": "tide", "limit": 1.0})
        assert not result.is_error
    refused = [r for r in read_audit(mcp_store) if r["outcome"] == "refused"]
    assert len(refused) == len(bad_calls)


async def test_backend_errors_become_tool_errors(mcp_session, server_stderr, mcp_store):
    async with mcp_session(["--client-id", "writer", "--allow-write"]) as client:
        result, data = await _call(client, "pcp_revise_page", {
            "page_id": "pg_role", "expected_revision_id": "rev_old", "content": "new"})
        assert result.is_error
        assert data["error"]["code"] == "revision_conflict"
        assert "Hint: read the page again" in result.content[0].text
        result, data = await _call(client, "pcp_tombstone_page",
                                   {"page_id": "pg_role", "reason": "boom"})
        assert result.is_error and data["error"]["code"] == "internal"
        assert "/etc/shadow" not in result.content[0].text
        result, _ = await _call(client, "pcp_stats")
        assert not result.is_error
    assert "secret internal detail" in server_stderr.read_text()
    outcomes = [(r["tool"], r["outcome"], r["error_code"]) for r in read_audit(mcp_store)]
    assert outcomes == [
        ("pcp_revise_page", "error", "revision_conflict"),
        ("pcp_tombstone_page", "error", "internal"),
        ("pcp_stats", "allowed", None),
    ]


async def test_audit_records_every_call_without_content(mcp_session, mcp_store):
    async with mcp_session(["--client-id", "writer", "--allow-write"]) as client:
        await _call(client, "pcp_search", {"query": "tide"})
        result, data = await _call(client, "pcp_write_page",
                                   {"content": "my private journal entry", "title": "Journal"})
        assert not result.is_error
        await _call(client, "pcp_search", {"query": 7})
    records = read_audit(mcp_store)
    assert [(r["tool"], r["outcome"]) for r in records] == [
        ("pcp_search", "allowed"), ("pcp_write_page", "allowed"), ("pcp_search", "refused")]
    assert records[0]["client_id"] == "writer" and records[0]["actor"] == "model"
    assert records[0]["result_count"] == 3
    assert records[1]["params"]["content"] == {"omitted": True, "chars": 24}
    assert "journal entry" not in audit_path(mcp_store).read_text()
    assert records[2]["error_code"] == "invalid_input"


async def test_audit_failure_fails_the_call(mcp_session, mcp_store):
    audit_path(mcp_store).mkdir(parents=True)  # root ignores chmod; a directory cannot be appended
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        result, data = await _call(client, "pcp_search", {"query": "tide"})
        assert result.is_error
        assert data == {"error": {"code": "audit_unavailable", "message": data["error"]["message"],
                                  "hint": data["error"]["hint"]}}
        assert "results" not in json.dumps(data)
        # Still serving: listing works and the next call fails the same way.
        assert _tool_names(await client.list_tools()) == set(READ_TOOLS)
        result, _ = await _call(client, "pcp_stats")
        assert result.is_error


async def test_read_pages_pages_long_payloads(mcp_session):
    async with mcp_session(["--client-id", "claude-desktop", "--max-payload-chars", "1000"]) \
            as client:
        arguments = {"ids": ["pg_role", "pg_tide"]}
        _, data = await _call(client, "pcp_read_pages", arguments)
        assert data["pages"][0]["payload"].startswith("Ada is")
        text = data["pages"][1]["payload"]
        assert data["pages"][1]["manifest"]["title"] == "Tidewatch design"
        total = sum(len(p["payload"]) for p in data["pages"])
        assert total == 1000
        calls = 1
        while data["next_cursor"]:
            _, data = await _call(client, "pcp_read_pages",
                                  {**arguments, "cursor": data["next_cursor"]})
            calls += 1
            assert sum(len(p["payload"]) for p in data["pages"]) <= 1000
            assert "manifest" not in data["pages"][0]
            text += data["pages"][0]["payload"]
        assert text == "Tidewatch predicts tides. " + "0123456789" * 300
        assert calls == 4
        result, _ = await _call(client, "pcp_read_pages",
                                {"ids": ["pg_tide"], "cursor": data["next_cursor"] or "x"})
        assert result.is_error


async def test_suppression_hides_pages_for_the_session_only(mcp_session):
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        _, data = await _call(client, "pcp_suppress_pages", {"ids": ["pg_role", "pg_secret"]})
        assert data["suppressed"] == ["pg_role"] and data["not_found"] == ["pg_secret"]
        _, data = await _call(client, "pcp_search", {"query": "tide"})
        assert {r["id"] for r in data["results"]} == {"pg_tide"}
        _, data = await _call(client, "pcp_read_pages", {"ids": ["pg_role"]})
        assert data["not_found"] == ["pg_role"]
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        _, data = await _call(client, "pcp_search", {"query": "tide"})
        assert {r["id"] for r in data["results"]} == {"pg_role", "pg_tide"}


async def test_backend_printing_does_not_corrupt_the_stream(mcp_session, server_stderr):
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        for _ in range(2):
            result, data = await _call(client, "pcp_stats")
            assert not result.is_error and data == {"pages": 2}
    log = server_stderr.read_text()
    assert "stray print from the backend" in log
    assert "stray raw write to fd 1" in log


def test_stdout_carries_only_protocol_messages(mcp_store, mcp_server_command, tmp_path):
    """Raw pipes, no SDK client: every line the server writes to stdout is JSON-RPC."""
    repo = Path(__file__).resolve().parents[2]

    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "pcp_stats", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
    ]
    with (tmp_path / "stderr.log").open("w") as errlog:
        proc = subprocess.Popen(
            [*mcp_server_command, "--client-id", "claude-desktop"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog,
            env={"PCP_STORE": str(mcp_store), "PYTHONPATH": str(repo)},
        )
        lines = []
        for request in requests:
            proc.stdin.write((json.dumps(request) + "\n").encode())
            proc.stdin.flush()
            if "id" in request:
                lines.append(proc.stdout.readline())
        proc.stdin.close()
        lines.extend(proc.stdout.read().splitlines(keepends=True))
        assert proc.wait(timeout=20) == 0
    responses = [json.loads(line) for line in lines if line.strip()]
    assert [r.get("id") for r in responses] == [1, 2, 3]
    assert all(r["jsonrpc"] == "2.0" for r in responses)
    assert responses[1]["result"]["structuredContent"] == {"pages": 2}
    assert "stray print" in (tmp_path / "stderr.log").read_text()
