"""A model's change to the person's own material is a proposal (issue #31): `pcp_link_pages …
supersedes`, `pcp_tombstone_page` and `pcp_revise_page` against a page the person stated,
approved, recorded, imported or accepted change nothing, and are served nowhere, until the
person accepts them in `pcp review`; on the client's own pages they act at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import cli
from tests.mcp.test_mcp_truth import READER, WRITER, _added, ok

pytestmark = pytest.mark.anyio

@pytest.fixture
def mcp_session(mcp_inprocess_session):
    return mcp_inprocess_session


def queue(store: Path) -> dict[str, dict]:
    listed = cli("review", "--json", "--store", str(store))
    assert listed.code == 0, listed.stderr
    return {item["page_id"]: item for item in listed.json}


async def served(mcp_session, query: str) -> tuple[str, set[str]]:
    """(the micro_prompt, ids a search for `query` finds), as a reading client sees them."""
    async with mcp_session(READER) as client:
        micro = (await ok(client, "pcp_get_profile", {"format": "micro_prompt"}))["text"]
        # every granted scope: the model's own pages are in project:tidewatch
        found = await ok(client, "pcp_search", {"query": query, "scopes": ["*"]})
    return micro, {r["id"] for r in found["results"]}


async def test_a_models_supersedes_of_the_persons_keystone_waits_for_review(
        mcp_session, mcp_store: Path) -> None:
    """ks-008 is the person's own keystone (Svelte 5 + D3)."""
    micro_before, _ = await served(mcp_session, "Svelte")
    assert "Svelte 5" in micro_before
    async with mcp_session(WRITER) as client:
        mine = (await ok(client, "pcp_write_page", {
            "content": "Ada now prefers Lit web components over Svelte.",
            "namespace": "project:tidewatch"}))["page_id"]
        proposed = await ok(client, "pcp_link_pages", {
            "from_id": mine, "relation_type": "supersedes", "to_id": "ks-008"})
        assert proposed["proposed"] is True and proposed["review_status"] == "proposed"
        assert "waits for their review" in proposed["note"]
        # the proposal itself is served to nobody, not even the client that made it
        read = await ok(client, "pcp_read_pages", {"ids": [proposed["page_id"]]})
        assert read["not_found"] == [proposed["page_id"]]
    micro, found = await served(mcp_session, "Svelte")
    assert "Svelte 5" in micro and "ks-008" in found  # nothing retired
    assert proposed["page_id"] not in found
    shown = cli("show", "ks-008", "--json", "--store", str(mcp_store)).json
    assert shown["page"]["lifecycle_status"] == "active"
    assert cli("related", "ks-008", "--json", "--store", str(mcp_store)).json["pages"] == []

    item = queue(mcp_store)[proposed["page_id"]]
    assert item["kind"] == "change" and item["change"]["action"] == "supersede"
    assert item["change"]["proposed_by"] == {"actor_type": "model", "actor_id": "writer"}
    assert item["content"].startswith("Retire ks-008")
    accepted = cli("review", "accept", proposed["page_id"], "--store", str(mcp_store))
    assert accepted.code == 0, accepted.stderr
    micro, found = await served(mcp_session, "Svelte")
    assert "Svelte 5" not in micro and "ks-008" not in found and mine in found
    shown = cli("show", "ks-008", "--json", "--store", str(mcp_store)).json
    assert shown["page"]["lifecycle_status"] == "superseded"
    assert proposed["page_id"] not in queue(mcp_store)


async def test_a_models_tombstone_of_the_persons_page_is_a_proposal_and_rejecting_keeps_it(
        mcp_session, mcp_store: Path) -> None:
    page = _added(mcp_store, "add", "Kelp forest survey notes, June.")
    async with mcp_session(WRITER) as client:
        proposed = await ok(client, "pcp_tombstone_page", {"page_id": page,
                                                           "reason": "duplicate"})
    assert proposed["proposed"] is True and proposed["action"] == "tombstone"
    _, found = await served(mcp_session, "Kelp forest survey")
    assert page in found
    rejected = cli("review", "reject", proposed["page_id"], "--store", str(mcp_store))
    assert rejected.code == 0, rejected.stderr
    kept = cli("show", proposed["page_id"], "--json", "--store", str(mcp_store)).json["page"]
    assert kept["review_status"] == "rejected" and kept["lifecycle_status"] == "active"
    assert cli("show", page, "--json", "--store",
               str(mcp_store)).json["page"]["lifecycle_status"] == "active"


async def test_a_models_revision_of_the_persons_keystone_is_a_proposal(
        mcp_session, mcp_store: Path) -> None:
    head = cli("show", "ks-008", "--json", "--store", str(mcp_store)).json
    async with mcp_session(WRITER) as client:
        proposed = await ok(client, "pcp_revise_page", {
            "page_id": "ks-008", "expected_revision_id": head["revision_id"],
            "content": "Prefers Lit web components; avoids Svelte."})
        stale = await client.call_tool("pcp_revise_page", {
            "page_id": "ks-008", "expected_revision_id": "rev_01NOTTHEHEAD000000000000000",
            "content": "x"})
        assert stale.is_error
        assert stale.structured_content["error"]["code"] == "revision_conflict"
    assert proposed["proposed"] is True and proposed["action"] == "revise"
    now = cli("show", "ks-008", "--json", "--store", str(mcp_store)).json
    assert now["revision_id"] == head["revision_id"]
    assert cli("review", "accept", proposed["page_id"], "--store", str(mcp_store)).code == 0
    page = cli("show", "ks-008", "--json", "--store", str(mcp_store)).json["page"]
    assert page["payload"]["content"].startswith("Prefers Lit web components")
    assert page["origin"] == "approved"


async def test_on_its_own_pages_a_model_acts_at_once(mcp_session, mcp_store: Path) -> None:
    async with mcp_session(WRITER) as client:
        mine = (await ok(client, "pcp_write_page", {"content": "Scratch: tide table idea.",
                                                    "namespace": "project:tidewatch"}))
        revised = await ok(client, "pcp_revise_page", {
            "page_id": mine["page_id"], "expected_revision_id": mine["revision_id"],
            "content": "Scratch: tide table idea, v2."})
        assert "proposed" not in revised and revised["status"] == "revised"
        gone = await ok(client, "pcp_tombstone_page", {"page_id": mine["page_id"]})
        assert gone["lifecycle_status"] == "tombstoned"
    assert queue(mcp_store) == {} or all(i["kind"] != "change" for i in queue(mcp_store).values())


async def test_a_keystone_the_person_accepted_is_theirs(mcp_session, mcp_store: Path) -> None:
    """Accepted from a model's proposal it keeps `origin: inferred`: it is still the person's."""
    async with mcp_session(WRITER) as client:
        claim = (await ok(client, "pcp_propose_keystone", {
            "content": "Ada swims at dawn on Saturdays.", "category": "preference"}))["page_id"]
    assert cli("review", "accept", claim, "--store", str(mcp_store)).code == 0
    async with mcp_session(WRITER) as client:
        proposed = await ok(client, "pcp_tombstone_page", {"page_id": claim})
    assert proposed["proposed"] is True


async def test_a_decided_change_is_not_taken_back_from_the_queue(mcp_session,
                                                                 mcp_store: Path) -> None:
    page = _added(mcp_store, "add", "Tide gauge calibration, March.")
    async with mcp_session(WRITER) as client:
        proposed = await ok(client, "pcp_tombstone_page", {"page_id": page})
    assert cli("review", "accept", proposed["page_id"], "--store", str(mcp_store)).code == 0
    back = cli("review", "withdraw", proposed["page_id"], "--store", str(mcp_store))
    assert back.code == 2 and "a change made is not taken back" in back.stderr
    assert f"pcp history {page}" in back.stderr
