"""`pcp_ingest_event` over MCP: the real `pcp serve`, driven by the SDK's client.

Behind the write capability only; the same event objects `pcp ingest` reads; stored once per
(client, key); a key re-used with other content is a tool error; the conversation page it rolls
up into is readable with its source_spans pointing at the stored events.
"""

from __future__ import annotations

import json

import pytest

from pcp_cli.model.ingest import ingest_schema
from tests.conftest import cli
from tests.mcp.test_mcp_serve import call, ok

pytestmark = pytest.mark.anyio


@pytest.fixture
def mcp_session(mcp_inprocess_session):
    """What the tools answer, not the process: the server in-process (tests/mcp/conftest.py)."""
    return mcp_inprocess_session


WRITER = ["--client-id", "writer", "--allow-write"]


def message(text, key, *, role="user", at="2026-05-14T09:30:00Z", **extra):
    return {"type": "message", "conversation_id": "sess-1", "role": role, "content": text,
            "timestamp": at, "idempotency_key": key, "namespace": "project:tidewatch", **extra}


async def test_only_offered_with_the_write_capability(mcp_session):
    async with mcp_session(["--client-id", "writer"]) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert "pcp_ingest_event" not in names
        capabilities = await ok(client, "pcp_describe_capabilities")
        assert "pcp_ingest_event" not in capabilities["tools"]
        result, _ = await call(client, "pcp_ingest_event", {"event": message("hi", "k")})
        assert result.is_error
    async with mcp_session(WRITER) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        capabilities = await ok(client, "pcp_describe_capabilities")
    assert "pcp_ingest_event" in capabilities["tools"]  # claimed because it is served
    tool = tools["pcp_ingest_event"]
    assert tool.annotations.read_only_hint is False
    assert tool.input_schema["required"] == ["event"]
    # What the tool advertises is the published schema `pcp ingest` checks lines against.
    advertised = tool.input_schema["properties"]["event"]
    assert advertised["properties"] == ingest_schema()["properties"]
    assert advertised["allOf"] == ingest_schema()["allOf"]


async def test_ingest_is_idempotent_and_rolls_up_a_readable_page(mcp_session, mcp_store):
    async with mcp_session(WRITER) as client:
        first = await ok(client, "pcp_ingest_event",
                         {"event": message("Why does the tide gauge drift?", "m1")})
        again = await ok(client, "pcp_ingest_event",
                         {"event": message("Why does the tide gauge drift?", "m1")})
        assert first["status"] == "stored" and again["status"] == "unchanged"
        assert again["event_id"] == first["event_id"]
        assert first["page_status"] == "created" and again["page_status"] == "unchanged"
        reply = await ok(client, "pcp_ingest_event", {"event": message(
            "Thermal expansion of the mount.", "m2", role="assistant",
            at="2026-05-14T09:31:00Z", **{"com.example.model": "m-1"})})
        assert reply["page_status"] == "revised" and reply["page_id"] == first["page_id"]
        tool = await ok(client, "pcp_ingest_event", {"event": {
            "type": "tool_call", "conversation_id": "sess-1", "name": "read_sensor",
            "input": {"id": 7}, "output": {"c": 21.5}, "timestamp": "2026-05-14T09:30:30Z",
            "namespace": "project:tidewatch"}})
        assert tool["status"] == "stored"
        read = await ok(client, "pcp_read_pages", {"ids": [first["page_id"]],
                                                   "views": ["payload", "source_spans",
                                                             "history", "manifest"]})
    page = read["pages"][0]
    text = page["payload"]
    assert "Why does the tide gauge drift?" in text and "Thermal expansion" in text
    assert "read_sensor" not in text  # a tool call is an event, not page text
    spans = page["source_spans"]["spans"]
    assert [s["kind"] for s in spans] == ["message", "tool_call", "message"]
    for span in spans:
        stored = json.loads((mcp_store / span["path"]).read_text())
        assert stored["event_id"] == span["event_id"]
        if "start" in span:
            assert text[span["start"]:span["end"]] == stored["data"]["content"]
    assert page["manifest"]["namespace"] == "project:tidewatch"
    assert page["manifest"]["origin"] == "generated"  # an AI client's record under-claims
    assert page["manifest"]["created_by"] == {"actor_type": "model", "actor_id": "writer"}
    assert [h["operation"] for h in page["history"]] == ["derive", "derive", "derive"]
    events = sorted((mcp_store / "events").rglob("ev_*.json"))
    assert len(events) == 3
    kept = [json.loads(p.read_text()) for p in events]
    assert {e["source"] for e in kept} == {"mcp:writer"}
    assert any(e["data"].get("extensions") == {"com.example.model": "m-1"} for e in kept)


async def test_a_reused_key_with_other_content_is_a_conflict(mcp_session, mcp_store):
    async with mcp_session(WRITER) as client:
        await ok(client, "pcp_ingest_event", {"event": message("first words", "k1")})
        before = sorted((mcp_store / "events").rglob("ev_*.json"))
        result, data = await call(client, "pcp_ingest_event",
                                  {"event": message("other words", "k1")})
        assert result.is_error
        assert data["error"]["code"] == "idempotency_conflict"
        assert "k1" in data["error"]["message"]
    assert sorted((mcp_store / "events").rglob("ev_*.json")) == before


async def test_bad_events_are_tool_errors_naming_the_field(mcp_session, mcp_store):
    async with mcp_session(WRITER) as client:
        result, data = await call(client, "pcp_ingest_event", {"event": {
            "type": "message", "conversation_id": "c", "content": "no role"}})
        assert result.is_error and data["error"]["code"] == "invalid_input"
        # Checked against the published schema at the tool boundary: the message names the field.
        assert "event.role is required" in data["error"]["message"]
        result, data = await call(client, "pcp_ingest_event", {"event": {
            "type": "message", "conversation_id": "c", "role": "user", "content": "x",
            "timestamp": "last tuesday"}})
        assert result.is_error and "ISO 8601" in data["error"]["message"]
        result, data = await call(client, "pcp_ingest_event", {"event": "not an object"})
        assert result.is_error
    assert not list((mcp_store / "events").rglob("ev_*.json"))


async def test_grant_limits_where_events_may_land(mcp_session, mcp_store):
    narrowed = [*WRITER, "--scope", "project:tidewatch"]
    async with mcp_session(narrowed) as client:
        result, data = await call(client, "pcp_ingest_event", {"event": {
            **message("x", "k"), "namespace": "user:ada-lumen"}})
        assert result.is_error and data["error"]["code"] == "not_permitted"
        # No namespace: the store's default (user:ada-lumen), also outside this grant.
        event = message("y", "k2")
        del event["namespace"]
        result, data = await call(client, "pcp_ingest_event", {"event": event})
        assert result.is_error and data["error"]["code"] == "not_permitted"
    assert not list((mcp_store / "events").rglob("ev_*.json"))


async def test_keys_are_per_client(mcp_session, mcp_store):
    manifest = mcp_store / "pcp.yaml"
    manifest.write_text(manifest.read_text().replace(
        "  tidewatch:\n", "  second:\n    scopes: [\"project:*\"]\n    allow_write: true\n"
        "  tidewatch:\n"))
    async with mcp_session(WRITER) as client:
        mine = await ok(client, "pcp_ingest_event", {"event": message("mine", "same-key")})
    async with mcp_session(["--client-id", "second", "--allow-write"]) as client:
        theirs = await ok(client, "pcp_ingest_event", {"event": message("theirs", "same-key")})
    assert theirs["status"] == "stored" and theirs["event_id"] != mine["event_id"]
    assert theirs["page_id"] != mine["page_id"]
    # The CLI sees both conversation pages.
    listing = cli("ls", "--type", "conversation", "--json", "--store", str(mcp_store)).json
    assert {mine["page_id"], theirs["page_id"]} <= {p["page_id"] for p in listing}
