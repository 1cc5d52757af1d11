"""`pcp_link_pages` with revision ids (issue #34): the relation is pinned to those revisions,
which must be readable under the grant as pcp_read_pages would read them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import cli
from tests.test_link_revisions import ok

pytestmark = pytest.mark.anyio


@pytest.fixture
def mcp_session(mcp_inprocess_session):
    return mcp_inprocess_session


@pytest.fixture
def mcp_store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    assert cli("init", str(root), "--owner", "tester").code == 0
    manifest = root / "pcp.yaml"
    manifest.write_text(manifest.read_text().replace("clients: {}\n", """clients:
  writer:
    scopes: ["user:tester"]
    allow_write: true
"""))
    return root


async def test_pcp_link_pages_takes_revision_ids(mcp_session, mcp_store: Path) -> None:
    design = ok("add", "Design draft", "--store", mcp_store)
    spec = ok("add", "Spec draft", "--store", mcp_store)
    hidden = ok("add", "A private spec", "--sensitivity", "high", "--store", mcp_store)
    elsewhere = ok("add", "Another project", "--namespace", "project:x", "--store", mcp_store)
    async with mcp_session(["--client-id", "writer", "--allow-write"]) as client:
        result = await client.call_tool("pcp_link_pages", {
            "from_id": design["revision_id"], "relation_type": "depends_on",
            "to_id": spec["revision_id"]})
        assert not result.is_error, result.content[0].text
        linked = result.structured_content
        refused = [await client.call_tool("pcp_link_pages", {
            "from_id": design["revision_id"], "relation_type": "depends_on", "to_id": other})
            for other in (hidden["revision_id"], elsewhere["revision_id"],
                          "rev_01NOPE0000000000000000000")]
        read = await client.call_tool("pcp_read_pages", {"ids": [design["page_id"]],
                                                         "views": ["relations"]})
    assert linked["pinned"] == ["from", "to"]
    assert linked["to_revision_id"] == spec["revision_id"]
    for answer in refused:  # outside the grant, too sensitive, or absent: alike
        assert answer.is_error and "not found" in answer.content[0].text
    [relation] = read.structured_content["pages"][0]["relations"]
    assert relation["pinned_now"]["to"]["is_head"] is True
    assert [json.loads(p.read_text())["relation_type"]
            for p in (mcp_store / "relations").glob("*.json")] == ["depends_on"]
