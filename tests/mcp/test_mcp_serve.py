"""`pcp serve` end to end: the real server over a copy of the example store (Ada Lumen), spawned
as a subprocess and driven over stdio by the MCP SDK's client, as an AI client would.

Written against the shapes and behaviours the issue fixes (grant applied, suppression,
sensitivity, schema validity, audit), not against how the search ranks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from pcp_cli.mcp.audit import audit_path, read_audit
from pcp_cli.mcp.tools import READ_TOOLS, WRITE_TOOLS
from tests.conftest import V1_SCHEMAS, cli, run_pcp, snapshot

pytestmark = pytest.mark.anyio

EMPTY_PROFILE = "No profile is available yet in this context store."
# Pages of the example store by namespace (see store_layout/example).
USER_PAGE = "ks-001"
SENSITIVE_PAGE = "health-notes"  # sensitivity: high, in user:ada-lumen
PROPOSED_PAGE = "ks-p01"  # a keystone awaiting review
TIDEWATCH_PAGES = {"tidewatch-architecture", "conv-tidewatch-mobile"}

# Every read tool with arguments that succeed.
READ_CALLS = [
    ("pcp_get_profile", {}),
    ("pcp_get_profile", {"format": "markdown"}),
    ("pcp_get_profile", {"format": "micro_prompt"}),
    ("pcp_search", {"query": "tidewatch"}),
    ("pcp_search", {"query": "svelte", "types": ["keystone"], "include_superseded": True}),
    ("pcp_get_timeline", {}),
    ("pcp_get_timeline", {"from": "2020", "to": "2024-12", "limit": 3}),
    ("pcp_stats", {}),
    ("pcp_describe_capabilities", {}),
    ("pcp_list_scopes", {}),
    ("pcp_read_pages", {"ids": [USER_PAGE, "tidewatch-architecture"],
                        "views": ["manifest", "payload", "relations", "history", "facets",
                                  "source_spans"]}),
    ("pcp_related_pages", {"page_id": "tidewatch-architecture", "depth": 2, "scopes": ["*"]}),
    ("pcp_suppress_pages", {"ids": ["ks-002"]}),
]
assert {name for name, _ in READ_CALLS} == set(READ_TOOLS)


def validator(name: str) -> Draft202012Validator:
    schema = json.loads((V1_SCHEMAS / f"{name}.schema.json").read_text())
    return Draft202012Validator(schema)


def valid(name: str, obj: object) -> None:
    errors = sorted(validator(name).iter_errors(obj), key=str)
    assert not errors, [e.message for e in errors]


async def call(client, name, arguments=None):
    result = await client.call_tool(name, arguments or {})
    return result, result.structured_content


async def ok(client, name, arguments=None):
    result, data = await call(client, name, arguments)
    assert not result.is_error, result.content[0].text
    return data


def texts_of(result) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


# -- tools --------------------------------------------------------------------------------------
async def test_tools_listed_writes_only_with_grant_and_flag(mcp_session):
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        assert {t.name for t in (await client.list_tools()).tools} == set(READ_TOOLS)
    async with mcp_session(["--client-id", "claude-desktop", "--allow-write"]) as client:
        assert {t.name for t in (await client.list_tools()).tools} == set(READ_TOOLS)
    async with mcp_session(["--client-id", "writer"]) as client:
        assert {t.name for t in (await client.list_tools()).tools} == set(READ_TOOLS)
    async with mcp_session(["--client-id", "writer", "--allow-write"]) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert names == set(READ_TOOLS) | set(WRITE_TOOLS)
    assert not any("delete" in name for name in names)


async def test_every_read_tool_on_the_example_store(mcp_session):
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        profile = await ok(client, "pcp_get_profile")
        valid("profile", profile)
        assert profile["name"] == "Ada Lumen"

        result, data = await call(client, "pcp_get_profile", {"format": "micro_prompt"})
        assert data["format"] == "micro_prompt"
        assert texts_of(result) == data["text"]
        assert len(data["text"]) <= 1400 and "(profile as of " in data["text"]
        markdown = await ok(client, "pcp_get_profile", {"format": "markdown"})
        assert markdown["text"].startswith("#")

        found = await ok(client, "pcp_search", {"query": "tidewatch", "limit": 5})
        assert found["schema_version"] == "1.0" and found["query"] == "tidewatch"
        assert "filters_applied" in found
        assert 0 < len(found["results"]) <= 5 and found["count"] == len(found["results"])
        for item in found["results"]:
            valid("search-result", item)

        timeline = await ok(client, "pcp_get_timeline")
        assert timeline["events"]
        for event in timeline["events"]:
            valid("timeline-event", event)
        dates = [e["date"] for e in timeline["events"]]
        assert dates == sorted(dates)
        window = await ok(client, "pcp_get_timeline", {"from": "2020", "to": "2024-12"})
        assert window["events"] and all("2020" <= e["date"][:4] <= "2024"
                                        for e in window["events"])

        stats = await ok(client, "pcp_stats")
        assert stats["total"] == sum(stats["by_type"].values())
        assert set(stats["by_namespace"]) <= {"user:ada-lumen", "project:tidewatch"}

        caps = await ok(client, "pcp_describe_capabilities")
        assert caps["grant"]["client_id"] == "claude-desktop" and caps["writes_enabled"] is False
        assert caps["store"]

        scopes = await ok(client, "pcp_list_scopes")
        assert [s["namespace"] for s in scopes["scopes"]] == ["project:tidewatch",
                                                              "user:ada-lumen"]

        views = ["manifest", "payload", "relations", "history", "facets", "source_spans"]
        read = await ok(client, "pcp_read_pages", {"ids": [USER_PAGE], "views": views})
        page = read["pages"][0]
        assert page["page_id"] == USER_PAGE
        assert page["revision_id"].startswith("rev_")  # says which revision it returned
        assert page["manifest"]["revision_id"] == page["revision_id"]
        assert isinstance(page["payload"], str) and page["payload"]
        assert page["history"][-1]["revision_id"] == page["revision_id"]
        assert {"relations", "facets", "source_spans"} <= set(page)
        assert read["not_found"] == [] and read["next_cursor"] is None


def stat_snapshot(root: Path) -> dict[str, tuple[int, ...]]:
    """Every path outside .pcp/ and .git/ (folders too) with what a write would move: inode,
    mtime, ctime, size and mode. A tool that only touches a file or replaces it by an equal
    copy changes these, not the bytes."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.split("/", 1)[0] in (".pcp", ".git"):
            continue
        st = path.lstat()
        found[rel] = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_mode)
    return found


async def test_read_tools_change_nothing_outside_dot_pcp(mcp_session, mcp_store):
    before = snapshot(mcp_store)
    stats = stat_snapshot(mcp_store)
    async with mcp_session(["--client-id", "writer"]) as client:
        for name, arguments in READ_CALLS:
            await ok(client, name, arguments)
    assert snapshot(mcp_store) == before
    after = stat_snapshot(mcp_store)
    assert after.keys() == stats.keys()  # the listing: nothing added or removed
    changed = {rel for rel in stats if after[rel] != stats[rel]}
    assert not changed, f"touched by a read tool: {sorted(changed)}"
    assert len(read_audit(mcp_store)) == len(READ_CALLS)


# -- grants -------------------------------------------------------------------------------------
async def test_a_project_client_never_sees_the_owners_pages(mcp_session):
    answers = []
    async with mcp_session(["--client-id", "tidewatch"]) as client:
        for query in ("Ada", "tide", "svelte", "doctor"):
            result, data = await call(client, "pcp_search", {
                "query": query, "limit": 25, "include_sensitive": True,
                "include_superseded": True, "scopes": ["user:ada-lumen", "project:tidewatch"]})
            answers.append(texts_of(result))
            assert {r["id"] for r in data["results"]} <= TIDEWATCH_PAGES
            # Not even a count of what was left out for the grant's sake.
            assert data["filters_applied"].get("suppressed") in (None, 0, [])
        # A pattern is narrowed to the grant: the project's pages, nothing else, no notice.
        result, data = await call(client, "pcp_search", {"query": "tidewatch", "scopes": ["*"]})
        assert data["results"] and {r["id"] for r in data["results"]} <= TIDEWATCH_PAGES
        assert "notices" not in data

        result, timeline = await call(client, "pcp_get_timeline", {"limit": 100})
        answers.append(texts_of(result))
        assert timeline["events"] == []

        result, stats = await call(client, "pcp_stats")
        answers.append(texts_of(result))
        assert stats["total"] == 2 and set(stats["by_namespace"]) == {"project:tidewatch"}

        result, scopes = await call(client, "pcp_list_scopes")
        answers.append(texts_of(result))
        assert [s["namespace"] for s in scopes["scopes"]] == ["project:tidewatch"]
        assert scopes["scopes"][0]["pages"] == 2

        result, read = await call(client, "pcp_read_pages", {
            "ids": ["tidewatch-architecture", USER_PAGE, SENSITIVE_PAGE, "no-such-page"],
            "views": ["manifest", "relations"]})
        answers.append(texts_of(result))
        assert [p["page_id"] for p in read["pages"]] == ["tidewatch-architecture"]
        assert read["not_found"] == [USER_PAGE, SENSITIVE_PAGE, "no-such-page"]
        # Its relation to a keystone in user:ada-lumen (ks-002) is not shown either.
        ends = {r[k] for r in read["pages"][0]["relations"]
                for k in ("from_page_id", "to_page_id")}
        assert ends == TIDEWATCH_PAGES

        result, data = await call(client, "pcp_get_profile")
        answers.append(texts_of(result))
        assert data == {"schema_version": "1.0"}
        result, data = await call(client, "pcp_get_profile", {"format": "micro_prompt"})
        assert data["text"] == EMPTY_PROFILE

        result, caps = await call(client, "pcp_describe_capabilities")
        answers.append(texts_of(result))

        suppress, _ = await call(client, "pcp_suppress_pages", {"ids": [USER_PAGE]})
        missing, _ = await call(client, "pcp_suppress_pages", {"ids": ["no-such-page"]})
        assert texts_of(suppress).replace(USER_PAGE, "X") == \
            texts_of(missing).replace("no-such-page", "X")
    for text in answers:
        # The only mention allowed is the client's own request, echoed as ignored.
        text = text.replace("outside this client's grant: user:ada-lumen", "")
        assert "user:ada-lumen" not in text, text
        assert "ada-lumen/" not in text and "Doctor" not in text


async def test_scope_flag_narrows_and_never_widens(mcp_session, server_stderr):
    async with mcp_session(["--client-id", "claude-desktop", "--scope", "project:tidewatch",
                            "--scope", "project:secret"]) as client:
        scopes = await ok(client, "pcp_list_scopes")
        assert [s["namespace"] for s in scopes["scopes"]] == ["project:tidewatch"]
        found = await ok(client, "pcp_search", {"query": "tide", "limit": 25})
        assert {r["id"] for r in found["results"]} <= TIDEWATCH_PAGES
    log = server_stderr.read_text()
    assert "project:secret is outside the grant" in log
    assert "scopes project:tidewatch;" in log


async def test_unnamed_client_gets_the_safe_default(mcp_session, server_stderr):
    async with mcp_session(["--client-id", "stranger", "--allow-write"]) as client:
        assert {t.name for t in (await client.list_tools()).tools} == set(READ_TOOLS)
        caps = await ok(client, "pcp_describe_capabilities")
        assert caps["grant"]["scopes"] == ["user:ada-lumen"]
        assert caps["grant"]["allow_sensitive"] is False
        found = await ok(client, "pcp_search", {"query": "tidewatch", "limit": 25})
        assert not {r["id"] for r in found["results"]} & TIDEWATCH_PAGES
    assert "stranger has no grant in pcp.yaml" in server_stderr.read_text()


async def test_sensitive_material_needs_a_grant_that_allows_it(mcp_session):
    query = {"query": "check-up", "include_sensitive": True, "limit": 25}
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        data = await ok(client, "pcp_search", query)
        assert data["results"] == []
        assert data["filters_applied"]["include_sensitive"] is False
        assert any("include_sensitive ignored" in n for n in data["notices"])
        read = await ok(client, "pcp_read_pages", {"ids": [SENSITIVE_PAGE]})
        assert read["not_found"] == [SENSITIVE_PAGE]
        stats = await ok(client, "pcp_stats")
        md = await ok(client, "pcp_get_profile", {"format": "markdown"})
        assert "check-up" not in md["text"]
    async with mcp_session(["--client-id", "writer"]) as client:
        data = await ok(client, "pcp_search", {**query, "include_sensitive": False})
        assert data["results"] == []  # still opt-in per call
        data = await ok(client, "pcp_search", query)
        assert [r["id"] for r in data["results"]] == [SENSITIVE_PAGE]
        assert data["results"][0]["sensitivity"] == "high"
        read = await ok(client, "pcp_read_pages", {"ids": [SENSITIVE_PAGE]})
        assert "check-up" in read["pages"][0]["payload"]
        unasked = await ok(client, "pcp_stats")  # counted only when the call asks, too
        writer_stats = await ok(client, "pcp_stats", {"include_sensitive": True})
    assert unasked["by_namespace"] == stats["by_namespace"]
    assert writer_stats["by_namespace"]["user:ada-lumen"] == \
        stats["by_namespace"]["user:ada-lumen"] + 1


async def test_proposed_keystones_are_never_served(mcp_session):
    async with mcp_session(["--client-id", "writer"]) as client:
        read = await ok(client, "pcp_read_pages", {"ids": [PROPOSED_PAGE]})
        assert read["not_found"] == [PROPOSED_PAGE]
        data = await ok(client, "pcp_search", {"query": "newsletter", "limit": 25})
        assert PROPOSED_PAGE not in {r["id"] for r in data["results"]}


# -- suppression --------------------------------------------------------------------------------
async def test_suppression_lasts_for_the_session_only(mcp_session, mcp_store):
    before = snapshot(mcp_store)
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        found = await ok(client, "pcp_search", {"query": "tidewatch", "limit": 25})
        target = found["results"][0]["id"]
        stats = await ok(client, "pcp_stats")
        data = await ok(client, "pcp_suppress_pages", {"ids": [target, "no-such-page"]})
        assert data["suppressed"] == [target] and data["not_found"] == ["no-such-page"]
        found = await ok(client, "pcp_search", {"query": "tidewatch", "limit": 25})
        assert target not in {r["id"] for r in found["results"]}
        read = await ok(client, "pcp_read_pages", {"ids": [target]})
        assert read["not_found"] == [target]
        assert (await ok(client, "pcp_stats"))["total"] == stats["total"] - 1
        profile = await ok(client, "pcp_get_profile", {"format": "markdown"})
        assert profile["text"]
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        found = await ok(client, "pcp_search", {"query": "tidewatch", "limit": 25})
        assert target in {r["id"] for r in found["results"]}
    assert snapshot(mcp_store) == before


async def test_suppressed_keystone_leaves_the_profile(mcp_session):
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        before = await ok(client, "pcp_get_profile", {"format": "markdown"})
        read = await ok(client, "pcp_read_pages", {"ids": ["ks-002"], "views": ["payload"]})
        claim = read["pages"][0]["payload"].strip().splitlines()[0][:40]
        assert claim in before["text"]
        event = (await ok(client, "pcp_get_timeline"))["events"][-1]
        assert event["summary"][:40] in before["text"]
        await ok(client, "pcp_suppress_pages", {"ids": ["ks-002", event["id"]]})
        after = await ok(client, "pcp_get_profile", {"format": "markdown"})
        assert claim not in after["text"]
        assert event["summary"][:40] not in after["text"]


# -- audit --------------------------------------------------------------------------------------
async def test_every_call_is_audited_and_pcp_audit_filters(mcp_session, mcp_store):
    async with mcp_session(["--client-id", "claude-desktop"],
                           env={"PCP_NOW": "2026-01-01T10:00:00.000Z"}) as client:
        await ok(client, "pcp_search", {"query": "tide"})
        await call(client, "pcp_read_pages", {"ids": ["../x"]})
    async with mcp_session(["--client-id", "tidewatch"],
                           env={"PCP_NOW": "2026-03-01T10:00:00.000Z"}) as client:
        await ok(client, "pcp_stats")
    records = read_audit(mcp_store)
    assert [(r["client_id"], r["tool"], r["outcome"]) for r in records] == [
        ("claude-desktop", "pcp_search", "allowed"),
        ("claude-desktop", "pcp_read_pages", "refused"),
        ("tidewatch", "pcp_stats", "allowed"),
    ]
    assert all(r["actor"] == "model" for r in records)
    assert audit_path(mcp_store).parent == mcp_store / ".pcp"

    out = cli("audit", "--store", str(mcp_store), "--json")
    assert out.code == 0 and len(out.json) == 3
    out = cli("audit", "--store", str(mcp_store), "--json", "--client", "claude-desktop")
    assert [r["tool"] for r in out.json] == ["pcp_search", "pcp_read_pages"]
    out = cli("audit", "--store", str(mcp_store), "--json", "--since", "2026-02-01")
    assert [r["client_id"] for r in out.json] == ["tidewatch"]
    out = cli("audit", "--store", str(mcp_store))
    assert out.code == 0 and "pcp_stats" in out.stdout
    out = cli("audit", "--store", str(mcp_store), "--since", "yesterday")
    assert out.code == 5 and "Hint:" in out.stderr


async def test_a_call_that_cannot_be_audited_fails(mcp_session, mcp_store):
    audit_path(mcp_store).parent.mkdir(exist_ok=True)
    audit_path(mcp_store).mkdir()  # a folder cannot be appended to (root ignores chmod)
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        result, data = await call(client, "pcp_search", {"query": "tidewatch"})
        assert result.is_error and data["error"]["code"] == "audit_unavailable"
        assert "results" not in data and "Tidewatch" not in texts_of(result)
        result, _ = await call(client, "pcp_get_profile")
        assert result.is_error


# -- live store -----------------------------------------------------------------------------------
async def test_a_cli_write_is_seen_by_the_running_server(mcp_session, mcp_store):
    env = {"PCP_STORE": str(mcp_store)}
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        data = await ok(client, "pcp_search", {"query": "quokka"})
        assert data["results"] == []
        added = run_pcp("add", "Quokka sightings on Rottnest, for the newsletter.", "--json",
                        env=env)
        assert added.code == 0, added.stderr
        page_id = added.json["page_id"]
        data = await ok(client, "pcp_search", {"query": "quokka"})
        assert [r["id"] for r in data["results"]] == [page_id]
        read = await ok(client, "pcp_read_pages", {"ids": [page_id]})
        assert read["pages"][0]["revision_id"] == added.json["revision_id"]
        revised = run_pcp("revise", page_id, "Quokkas seen twice.", "--json", env=env)
        assert revised.code == 0, revised.stderr
        read = await ok(client, "pcp_read_pages", {"ids": [page_id]})
        assert read["pages"][0]["revision_id"] == revised.json["revision_id"]
        assert read["pages"][0]["payload"].startswith("Quokkas seen twice.")


async def test_long_payloads_come_in_pages_with_a_cursor(mcp_session, mcp_store):
    body = "".join(f"Line {i:05d} of a long transcript about tides.\n" for i in range(1500))
    added = run_pcp("add", "-", "--type", "document", "--json", input=body,
                    env={"PCP_STORE": str(mcp_store)})
    assert added.code == 0, added.stderr
    page_id = added.json["page_id"]
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        args = {"ids": [page_id], "views": ["manifest", "payload"]}
        data = await ok(client, "pcp_read_pages", args)
        assert data["pages"][0]["manifest"]["page_id"] == page_id
        text, calls = data["pages"][0]["payload"], 1
        assert len(text) == 20_000 and data["next_cursor"]
        while data["next_cursor"]:
            data = await ok(client, "pcp_read_pages", {**args, "cursor": data["next_cursor"]})
            assert data["pages"][0]["revision_id"] == added.json["revision_id"]
            text += data["pages"][0]["payload"]
            calls += 1
    assert text == body and calls == 4


# -- robustness -----------------------------------------------------------------------------------
async def test_bad_calls_are_tool_errors_with_hints(mcp_session, mcp_store):
    bad_calls = [
        ("pcp_search", {"query": "tide", "limit": 26}, "out of range"),
        ("pcp_search", {"query": "x" * 1001}, "limit is 1000"),
        ("pcp_search", {"query": ["tide"]}, "must be a string"),
        ("pcp_get_timeline", {"from": "2020-13-45x"}, "not well-formed"),
        ("pcp_read_pages", {"ids": [f"p{i}" for i in range(21)]}, "limit is 20"),
        ("pcp_read_pages", {"ids": ["ks-001"], "views": ["everything"]}, "is not one of"),
        ("pcp_read_pages", {"ids": ["ks-001"], "cursor": "nope"}, "cursor is not valid"),
        ("pcp_get_profile", {"format": "pdf"}, "is not one of"),
        ("pcp_write_page", {"content": "x"}, "unknown tool"),
    ]
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        for name, arguments, expected in bad_calls:
            result, data = await call(client, name, arguments)
            assert result.is_error, name
            assert expected in texts_of(result), (name, texts_of(result))
            assert "\nHint: " in texts_of(result) and data["error"]["hint"]
        await ok(client, "pcp_stats")  # still serving


async def test_a_broken_page_file_is_a_tool_error_and_serving_goes_on(mcp_session, mcp_store):
    head = mcp_store / "pages" / "user" / "ada-lumen" / "ks-004.md"
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        await ok(client, "pcp_read_pages", {"ids": ["ks-004"]})
        head.write_text("---\ntitle: [unclosed\n---\nbroken\n")
        result, data = await call(client, "pcp_read_pages", {"ids": ["ks-004", USER_PAGE]})
        assert result.is_error and data["error"]["code"] == "store_damaged"
        assert "ks-004" in data["error"]["message"] and "pcp doctor" in data["error"]["hint"]
        read = await ok(client, "pcp_read_pages", {"ids": [USER_PAGE]})
        assert read["pages"][0]["page_id"] == USER_PAGE
        found = await ok(client, "pcp_search", {"query": "svelte", "limit": 25})
        assert "ks-004" not in {r["id"] for r in found["results"]}
    async with mcp_session(["--client-id", "tidewatch"]) as client:
        # Outside the grant a damaged page is as missing as any other.
        read = await ok(client, "pcp_read_pages", {"ids": ["ks-004"]})
        assert read["not_found"] == ["ks-004"]


# -- writes ---------------------------------------------------------------------------------------
WRITER = ["--client-id", "writer", "--allow-write"]


async def test_write_page_is_idempotent_and_recorded_as_the_model(mcp_session, mcp_store):
    args = {"content": "Summary of the Tidewatch sync.", "title": "Sync summary",
            "namespace": "project:tidewatch", "tags": ["sync"], "idempotency_key": "sync-1"}
    async with mcp_session(WRITER) as client:
        first = await ok(client, "pcp_write_page", args)
        again = await ok(client, "pcp_write_page", args)
        assert (again["page_id"], again["revision_id"]) == (first["page_id"],
                                                          first["revision_id"])
        assert first["status"] == "created" and again["status"] == "unchanged"
        read = await ok(client, "pcp_read_pages", {"ids": [first["page_id"]],
                                                   "views": ["manifest", "history"]})
        manifest = read["pages"][0]["manifest"]
        assert manifest["origin"] == "generated"
        assert manifest["created_by"] == {"actor_type": "model", "actor_id": "writer"}
        assert read["pages"][0]["history"][0]["created_by"]["actor_type"] == "model"
        denied, data = await call(client, "pcp_write_page",
                                  {"content": "x", "namespace": "team:secret"})
        assert denied.is_error and data["error"]["code"] == "not_permitted"
    stored = json.loads(next((mcp_store / "revisions" / first["page_id"]).glob("*.json"))
                        .read_text())
    assert stored["created_by"] == {"actor_type": "model", "actor_id": "writer"}


async def test_revise_link_tombstone(mcp_session, mcp_store):
    """On the client's own page (on the person's, each is a proposal: test_mcp_model_changes)."""
    async with mcp_session(WRITER) as client:
        mine = (await ok(client, "pcp_write_page", {
            "content": "Issue 11: sea-level sensors.", "title": "Newsletter draft",
            "namespace": "project:tidewatch"}))["page_id"]
        head = (await ok(client, "pcp_read_pages", {"ids": [mine]}))["pages"][0]
        revised = await ok(client, "pcp_revise_page", {
            "page_id": mine, "expected_revision_id": head["revision_id"],
            "content": "Issue 12: tide gauges."})
        assert revised["status"] == "revised"
        assert revised["manifest"]["created_by"]["actor_type"] == "model"
        assert revised["manifest"]["origin"] == "generated"
        stale, data = await call(client, "pcp_revise_page", {
            "page_id": mine, "expected_revision_id": head["revision_id"],
            "content": "Lost update"})
        assert stale.is_error and data["error"]["code"] == "revision_conflict"
        assert revised["revision_id"] in data["error"]["message"]
        assert "pcp_read_pages" in data["error"]["hint"]
        missing, data = await call(client, "pcp_revise_page", {
            "page_id": "no-such-page", "expected_revision_id": "rev_x", "content": "x"})
        assert missing.is_error and data["error"]["code"] == "not_found"

        link = await ok(client, "pcp_link_pages", {
            "from_id": mine, "relation_type": "related_to",
            "to_id": "tidewatch-architecture"})
        assert link["created_by"] == {"actor_type": "model", "actor_id": "writer"}
        rels = await ok(client, "pcp_read_pages", {"ids": [mine], "views": ["relations"]})
        assert link["relation_id"] in {r["relation_id"] for r in rels["pages"][0]["relations"]}

        gone = await ok(client, "pcp_tombstone_page", {"page_id": mine, "reason": "obsolete"})
        assert gone["lifecycle_status"] == "tombstoned"
        read = await ok(client, "pcp_read_pages", {"ids": [mine]})
        assert read["not_found"] == [mine]
    shown = cli("show", mine, "--json", "--store", str(mcp_store))
    assert shown.code == 0 and shown.json["page"]["lifecycle_status"] == "tombstoned"


async def test_proposed_keystone_goes_to_review(mcp_session, mcp_store):
    async with mcp_session(WRITER) as client:
        before = await ok(client, "pcp_get_profile", {"format": "micro_prompt"})
        proposed = await ok(client, "pcp_propose_keystone", {
            "content": "Ada prefers zebrafish metaphors.", "category": "preference",
            "confidence": 0.4})
        assert proposed["review_status"] == "proposed"
        found = await ok(client, "pcp_search", {"query": "zebrafish"})
        assert found["results"] == []
        after = await ok(client, "pcp_get_profile", {"format": "micro_prompt"})
        assert after == before
        read = await ok(client, "pcp_read_pages", {"ids": [proposed["page_id"]]})
        assert read["not_found"] == [proposed["page_id"]]
    listed = cli("ls", "--include-proposed", "--type", "keystone", "--json",
                 "--store", str(mcp_store))
    entry = next(e for e in listed.json if e["page_id"] == proposed["page_id"])
    assert entry["review_status"] == "proposed" and entry["origin"] == "inferred"
    history = cli("history", proposed["page_id"], "--json", "--store", str(mcp_store))
    assert history.json["revisions"][0]["created_by"] == {"actor_type": "model",
                                                          "actor_id": "writer"}


# -- the command ----------------------------------------------------------------------------------
def test_errors_before_serving_use_the_cli_funnel(tmp_path, mcp_store):
    out = run_pcp("serve", env={"PCP_STORE": str(tmp_path / "nowhere")})
    assert out.code == 3 and out.stdout == "" and "Hint:" in out.stderr
    manifest = mcp_store / "pcp.yaml"
    manifest.write_text(manifest.read_text().replace(
        'scopes: ["project:tidewatch"]', 'scopes: "project:tidewatch"'))
    out = run_pcp("serve", "--client-id", "tidewatch", env={"PCP_STORE": str(mcp_store)})
    assert out.code == 5 and out.stdout == "" and "clients.tidewatch.scopes" in out.stderr
    out = run_pcp("serve", "--client-id", "bad id", env={"PCP_STORE": str(mcp_store)})
    assert out.code == 2 and out.stdout == ""


def _front_end_modules_after(calls: list[list[str]]) -> tuple[list[int], list[str]]:
    """In a fresh interpreter, run `pcp ARGS` for each of `calls` (output swallowed): their
    exit statuses, and which of the SDK, Starlette and uvicorn got imported on the way."""
    probe = ("import sys, io, contextlib, json\n"
             "from pcp_cli.cli.main import run\n"
             "with contextlib.redirect_stdout(io.StringIO()), "
             "contextlib.redirect_stderr(io.StringIO()):\n"
             f"    codes = [run(args) for args in {calls!r}]\n"
             "print(json.dumps([codes, sorted({m.split('.')[0] for m in sys.modules if "
             "m.split('.')[0] in ('mcp', 'mcp_types', 'starlette', 'uvicorn')})]))\n")
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=repo, check=True)
    codes, modules = json.loads(out.stdout)
    return codes, modules


def test_help_does_not_import_the_sdk():
    codes, modules = _front_end_modules_after([["--help"], ["serve", "--help"],
                                               ["audit", "--help"]])
    assert codes == [0, 0, 0] and modules == []


@pytest.mark.slow  # a real server start-up
async def test_start_up_loads_no_search_engine(mcp_store, tmp_path, capsys):
    """Spawn -> initialize -> tools/list of the real server: what it imported on the way (never
    a search engine, numpy or the embedder: those wait for the first search). What it costs in
    time is measured in bench/ (bench/RESULTS.md), never asserted here: a loaded machine is
    slow, not wrong."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    imports = tmp_path / "importtime.txt"
    params = StdioServerParameters(
        command=sys.executable, args=["-X", "importtime", "-m", "pcp_cli", "serve",
                                      "--client-id", "claude-desktop"],
        env={"PCP_STORE": str(mcp_store), "PYTHONPATH": str(Path(__file__).parents[2])})
    start = time.perf_counter()
    with imports.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy",
                          read_timeout_seconds=300) as client:
            assert "pcp_search" in {t.name for t in (await client.list_tools()).tools}
    took = time.perf_counter() - start
    loaded = {line.rsplit("|", 1)[-1].strip() for line in imports.read_text().splitlines()
              if line.startswith("import time:")}
    heavy = {m for m in loaded if m.split(".")[0] in ("whoosh", "tantivy", "numpy",
                                                        "wordllama")}
    assert "mcp" in loaded and heavy == set()
    with capsys.disabled():
        print(f"\npcp serve start-up (spawn -> initialize -> list_tools, with -X importtime): "
              f"{took:.2f}s", file=sys.stderr)


def test_a_bad_argument_is_answered_before_the_sdk_is_imported(tmp_path, mcp_store):
    """A typo in `pcp serve`'s arguments, or a store that is not there, is a usage error at
    once: not after the MCP SDK, Starlette and uvicorn have loaded (about two seconds of a
    loaded machine's CPU)."""
    here, nowhere = str(mcp_store), str(tmp_path / "nowhere")
    codes, modules = _front_end_modules_after([
        ["serve", "--http", "99999", "--store", here],
        ["serve", "--http", "8.8.8.8:80", "--store", here],
        ["serve", "--http", "8765", "--max-concurrent", "0", "--store", here],
        ["serve", "--store", nowhere], ["serve", "--http", "8765", "--store", nowhere]])
    assert codes == [2, 2, 2, 3, 3] and modules == []


async def test_out_of_grant_write_target_looks_like_missing(mcp_session, mcp_store):
    async with mcp_session([*WRITER, "--scope", "project:tidewatch"]) as client:
        outside, _ = await call(client, "pcp_tombstone_page", {"page_id": USER_PAGE})
        missing, _ = await call(client, "pcp_tombstone_page", {"page_id": "no-such-page"})
        assert outside.is_error and missing.is_error
        assert texts_of(outside).replace(USER_PAGE, "X") == \
            texts_of(missing).replace("no-such-page", "X")
        # The default namespace is outside this narrowed grant: a keystone cannot go there.
        refused, data = await call(client, "pcp_propose_keystone", {"content": "Ada sails."})
        assert refused.is_error and data["error"]["code"] == "not_permitted"
        refused, data = await call(client, "pcp_write_page", {"content": "journal"})
        assert refused.is_error and data["error"]["code"] == "not_permitted"
        await ok(client, "pcp_write_page", {"content": "my private journal entry",
                                            "namespace": "project:tidewatch"})
    records = read_audit(mcp_store)
    assert [r["outcome"] for r in records] == ["refused"] * 4 + ["allowed"]
    assert records[-1]["params"]["content"] == {"omitted": True, "chars": 24}
    assert "journal entry" not in audit_path(mcp_store).read_text()


def test_stdout_carries_only_protocol_messages(mcp_store, tmp_path):
    """Raw pipes, no SDK client: every line `pcp serve` writes to stdout is JSON-RPC."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "pcp_get_profile", "arguments": {"format": "micro_prompt"}}},
    ]
    stdin = "".join(json.dumps(r) + "\n" for r in requests)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pcp_cli", "serve", "--client-id", "tidewatch"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "PCP_STORE": str(mcp_store),
             "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    proc.stdin.write(stdin.encode())
    proc.stdin.flush()
    lines = [proc.stdout.readline(), proc.stdout.readline()]
    proc.stdin.close()
    lines += proc.stdout.read().splitlines()
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=30) == 0
    responses = [json.loads(line) for line in lines if line.strip()]
    assert [r["id"] for r in responses] == [1, 2]
    assert responses[1]["result"]["structuredContent"]["text"] == EMPTY_PROFILE
    assert "pcp serve: store " in stderr and "scopes project:tidewatch;" in stderr
