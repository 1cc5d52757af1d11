"""The review queue: proposals never reach the read surface until the person accepts them."""

from __future__ import annotations

import json

from pcp_cli import api
from tests.conftest import cli

PROPOSAL = "Ada seems to prefer dark-mode dashboards."


def test_example_proposal_is_queued_and_served_nowhere(example):
    queue = cli("review", "--json", "--store", example)
    assert queue.code == 0
    items = queue.json
    assert [i["page_id"] for i in items] == ["ks-p01"]
    assert items[0]["content"] == PROPOSAL and items[0]["source"] == "inferred"
    listing = cli("keystone", "list", "--json", "--store", example).json
    assert "ks-p01" not in {k["id"] for k in listing}
    pages = cli("ls", "--json", "--store", example).json
    assert "ks-p01" not in {p["page_id"] for p in pages}
    for fmt in ("json", "markdown", "micro_prompt", "archive"):
        out = cli("export", "--format", fmt, "--store", example).stdout
        assert "dark-mode" not in out, fmt
    with api.open_store(example) as store:
        assert "ks-p01" not in {e.page_id for e in store.entries()}  # what search/stats use


def test_human_review_listing(example):
    result = cli("review", "--store", example)
    assert result.code == 0 and "ks-p01" in result.stdout and "dark-mode" in result.stdout


def test_propose_then_accept_records_who_and_when(store, monkeypatch):
    result = cli("keystone", "propose", "Likes short answers.", "--category", "preference",
                 "--id", "ks-short", "--json", "--store", store)
    assert result.code == 0, result.stderr
    assert "Likes short answers" not in cli("export", "--format", "micro_prompt",
                                            "--store", store).stdout
    monkeypatch.setenv("PCP_NOW", "2026-03-01T12:00:00.000Z")
    accepted = cli("review", "accept", "ks-short", "--json", "--store", store)
    assert accepted.code == 0, accepted.stderr
    assert accepted.json["status"] == "revised"
    monkeypatch.delenv("PCP_NOW")
    page = cli("show", "ks-short", "--json", "--store", store).json["page"]
    assert page["review_status"] == "affirmed" and page["epistemic_status"] == "affirmed"
    assert page["record"]["last_confirmed_at"] == "2026-03-01T12:00:00.000Z"
    assert page["record"]["affirmed_by"] == "tester"
    assert page["created_by"] == {"actor_type": "user", "actor_id": "tester"}
    assert page["provenance"][0]["note"] == "accepted by tester"
    prompt = cli("export", "--format", "micro_prompt", "--store", store).stdout
    assert "Likes short answers." in prompt and prompt.strip().endswith("(profile as of "
                                                                          "2026-03-01)")
    assert cli("review", "--json", "--store", store).json == []
    keystones = cli("keystone", "list", "--json", "--store", store).json
    assert [k["id"] for k in keystones] == ["ks-short"]


def test_reject_keeps_the_proposal_for_audit_and_never_serves_it(example):
    result = cli("review", "reject", "ks-p01", "--reason", "I like light mode", "--store",
                 example)
    assert result.code == 0, result.stderr
    assert result.stdout.startswith("rejected ks-p01")
    page = cli("show", "ks-p01", "--json", "--store", example).json["page"]
    assert page["review_status"] == "rejected"
    assert page["record"]["rejection_reason"] == "I like light mode"
    assert page["provenance"][0]["note"] == "rejected by ada-lumen: I like light mode"
    assert cli("review", "--json", "--store", example).json == []
    for fmt in ("markdown", "micro_prompt", "archive"):
        assert "dark-mode" not in cli("export", "--format", fmt, "--store", example).stdout
    everything = cli("keystone", "list", "--all", "--json", "--store", example).json
    assert "ks-p01" in {k["id"] for k in everything}  # still there for audit


def test_only_proposals_can_be_accepted_or_rejected(example):
    for args in (("accept", "ks-001"), ("reject", "ks-001"), ("accept", "tl-001")):
        result = cli("review", *args, "--store", example)
        assert result.code == 2, (args, result.stderr)
    assert cli("review", "accept", "no-such-page", "--store", example).code == 3
    assert cli("review", "reject", "ks-p01", "--store", example).code == 0
    assert cli("review", "accept", "ks-p01", "--store", example).code == 2


def test_a_proposal_supersedes_nothing_until_accepted(example):
    result = cli("keystone", "propose", "Ada now freelances only two days a week.",
                 "--category", "constraint", "--supersedes", "ks-005", "--id", "ks-new",
                 "--store", example)
    assert result.code == 0, result.stderr
    prompt = cli("export", "--format", "micro_prompt", "--store", example).stdout
    assert "25 focused hours" in prompt and "two days a week" not in prompt
    old = cli("show", "ks-005", "--json", "--store", example).json["page"]
    assert old["lifecycle_status"] == "active"

    assert cli("review", "accept", "ks-new", "--store", example).code == 0
    prompt = cli("export", "--format", "micro_prompt", "--store", example).stdout
    assert "two days a week" in prompt and "25 focused hours" not in prompt
    old = cli("show", "ks-005", "--json", "--store", example).json["page"]
    assert old["lifecycle_status"] == "superseded"
    assert old["record"]["superseded_by"] == "ks-new"
    relations = cli("show", "ks-new", "--view", "relations", "--json",
                    "--store", example).json["relations"]
    assert [(r["relation_type"], r["to_page_id"]) for r in relations] == [
        ("supersedes", "ks-005")]


def test_propose_takes_the_options_of_keystone_add(store):
    result = cli("keystone", "propose", "Might be vegetarian.", "--category", "identity",
                 "--confidence", "0.3", "--importance", "0.2", "--source", "inferred",
                 "--sensitivity", "medium", "--json", "--store", store)
    assert result.code == 0, result.stderr
    item = cli("review", "--json", "--store", store).json[0]
    assert (item["category"], item["confidence"], item["importance"], item["source"],
            item["sensitivity"], item["origin"]) == (
        "identity", 0.3, 0.2, "inferred", "medium", "inferred")
    assert json.dumps(item)  # plain JSON


def test_library_propose_by_an_ai_client_records_the_client(store):
    from pcp_cli.model.page import Actor

    with api.open_store(store) as opened:
        result = api.propose_keystone(opened, "Works at night.", category="constraint",
                                      actor=Actor("model", "claude-desktop"))
        queue = api.review_queue(opened)
    assert queue[0]["page_id"] == result.page_id
    assert queue[0]["proposed_by"] == {"actor_type": "model", "actor_id": "claude-desktop"}


def test_a_rejected_proposal_is_kept_not_tombstoned_and_listed_by_review_all(example):
    """The rejection is one layer (review_status), the lifecycle another: a rejected proposal
    stays an active page, kept for audit, and `pcp review --all` still lists it."""
    assert cli("review", "reject", "ks-p01", "--reason", "I like light mode", "--store",
               example).code == 0
    page = cli("show", "ks-p01", "--json", "--store", example).json["page"]
    assert (page["review_status"], page["lifecycle_status"]) == ("rejected", "active")
    assert cli("review", "--json", "--store", example).json == []
    for args in (("review", "--all"), ("review", "list", "--all")):
        listed = cli(*args, "--json", "--store", example)
        assert listed.code == 0, listed.stderr
        [item] = listed.json
        assert (item["page_id"], item["review_status"]) == ("ks-p01", "rejected")
        assert item["rejection_reason"] == "I like light mode"
        assert item["rejected_at"] > item["proposed_at"]
    human = cli("review", "--all", "--store", example).stdout
    assert "Nothing awaits review." in human and "I like light mode" in human
