"""The server framework end to end over a fake backend: a real server subprocess driven over
stdio by the SDK's client. The fake backend produces what a real store cannot on demand (a
backend that prints to stdout, an unexpected exception with private details, fixed pages) so
the framework's guarantees are tested on their own; test_mcp_serve.py drives the real
`pcp serve`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pcp_cli.mcp.audit import audit_path, read_audit
from pcp_cli.mcp.tools import READ_TOOLS

pytestmark = pytest.mark.anyio


@pytest.fixture
def mcp_server_command(fake_server_command):
    return fake_server_command


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
        await _call(client, "pcp_search", {"query": "tide", "scopes": ["*"]})
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


async def test_backend_printing_does_not_corrupt_the_stream(mcp_session, server_stderr):
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        for _ in range(2):
            result, data = await _call(client, "pcp_stats", {"scopes": ["*"]})
            assert not result.is_error and data["pages"] == 2
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
         "params": {"name": "pcp_stats", "arguments": {"scopes": "*"}}},
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
    assert responses[1]["result"]["structuredContent"]["pages"] == 2
    assert "stray print" in (tmp_path / "stderr.log").read_text()
