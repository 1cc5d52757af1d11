"""An assistant over MCP asks questions as written: pcp_search never refuses one for its
punctuation, keeps explicit syntax working, ranks a question by default (auto) as text ranks
it, answers a long conversation with the turn that says it (its snippet and source_spans), and
pcp_read_pages reads that turn back with its neighbours; pcp_search's input schema is the
SearchRequest's option table. A real `pcp serve` over stdio, driven by the SDK's client."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import cli
from tests.mcp.test_mcp_serve import call, ok

pytestmark = pytest.mark.anyio

ANSWER = "I do, I play CS:GO with my cousins every Friday night since we moved to Rome."


@pytest.fixture
def mcp_store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    assert cli("init", str(root), "--owner", "ada").code == 0
    turns = []
    for i in range(30):
        role = "User" if i % 2 else "Assistant"
        text = ("The weather was grey again and we made soup while talking about the week. "
                * 4) if i != 17 else ANSWER
        turns.append(f"### {role} · 2024-03-0{1 + i % 9} 09:{i:02d}\n\n{text}")
    turns[16] = "### Assistant · 2024-03-08 09:16\n\nDo you still play video games?"
    out = cli("add", "\n\n".join(turns), "--type", "conversation", "--title", "Catching up",
              "--store", str(root), "--json")
    assert out.code == 0, out.stderr
    (root / "conv-id").write_text(out.json["page_id"])
    for text in ("Friday night games at the club were cancelled again.",
                 "My cousins visited in spring and stayed a week."):
        assert cli("add", text, "--type", "note", "--store", str(root)).code == 0
    out = cli("add", "Write to me@x.com about the lease.", "--type", "note", "--store",
              str(root), "--json")
    (root / "mail-id").write_text(out.json["page_id"])
    return root


async def test_questions_are_searched_as_written(mcp_session, mcp_store):
    conv = (mcp_store / "conv-id").read_text()
    async with mcp_session() as client:
        for question in ("Rome?", "Does she still play CS:GO?", 'what about "Rome',
                         "title: Rome?", "NOT sure: where is Rome?"):
            data = await ok(client, "pcp_search", {"query": question})
            assert data["results"][0]["id"] == conv, question
        data = await ok(client, "pcp_search", {"query": "email: me@x.com?"})
        assert [r["id"] for r in data["results"]] == [(mcp_store / "mail-id").read_text()]


async def test_explicit_syntax_still_works(mcp_session, mcp_store):
    conv = (mcp_store / "conv-id").read_text()
    async with mcp_session() as client:
        for query, found in (('"cousins every Friday"', [conv]), ('"Friday cousins"', []),
                             ("type:conversation Rome", [conv]), ("type:note Rome", []),
                             ("cous*", None), ("Rome AND soup", [conv]),
                             ("Rome AND spring", [])):
            data = await ok(client, "pcp_search", {"query": query, "mode": "text"})
            ids = [r["id"] for r in data["results"]]
            if found is None:  # a prefix: the conversation and the note about the cousins
                assert conv in ids and len(ids) == 2, query
            else:
                assert ids == found, query


async def test_by_default_a_question_is_ranked_as_text_ranks_it(mcp_session, mcp_store):
    question = "Did her cousins play games on Friday night?"
    async with mcp_session() as client:
        auto = await ok(client, "pcp_search", {"query": question})
        text = await ok(client, "pcp_search", {"query": question, "mode": "text"})
    ranked = [r["id"] for r in text["results"]]
    assert len(ranked) == 3 and [r["id"] for r in auto["results"]] == ranked
    assert auto["filters_applied"]["mode_requested"] == "auto"
    assert auto["filters_applied"]["mode"] == "text"
    # ...and says where the answer is: the turn, not the page's first lines
    assert ANSWER[:40] in auto["results"][0]["snippet"]


async def test_the_turn_that_answers_and_reading_it_back(mcp_session, mcp_store):
    conv = (mcp_store / "conv-id").read_text()
    async with mcp_session() as client:
        data = await ok(client, "pcp_search", {"query": "Does she still play CS:GO?"})
        (hit,) = data["results"]
        assert hit["snippet"].startswith("Do you still play video games? — " + ANSWER[:40])
        (span,) = hit["extensions"]["org.pcp-cli"]["source_spans"]
        assert span["message_index"] == 16 and span["role"] == "assistant"
        read = await ok(client, "pcp_read_pages", {
            "ids": [conv], "passage": {"start": span["start"], "end": span["end"],
                                       "neighbours": 1}})
        (page,) = read["pages"]
        assert "payload" not in page
        passage = page["passage"]
        assert [p["message_index"] for p in passage["passages"]] == [15, 16, 17]
        assert ANSWER in passage["text"] and "video games" in passage["text"]
        two = await call(client, "pcp_read_pages", {
            "ids": [conv, conv + "x"], "passage": {"start": 0, "end": 1}})
        assert two[0].is_error and "exactly one id" in two[0].content[0].text


async def test_the_search_schema_is_the_request_table(mcp_session):
    from pcp_cli.model.search_request import FILTER_OPTIONS, TOP

    async with mcp_session() as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    schema = tools["pcp_search"].input_schema
    assert set(schema["properties"]) == {o.name for o in TOP} | {"filters"}
    assert set(schema["properties"]["filters"]["properties"]) == {o.name for o in
                                                                  FILTER_OPTIONS}
    assert schema["required"] == ["query"]
