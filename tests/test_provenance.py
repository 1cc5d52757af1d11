"""What pcp serves is labelled with the authority, time and sensitivity it really has
(issue #10): dropped files under-claim, imports keep their own time, ids belong to their source,
a repeated idempotency key with new content is a conflict, and a relation is stored once."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.adapters.adapter_builders import gpt_conversation, gpt_message, write_zip
from tests.conftest import cli, snapshot


def ok(*args: str, **kw) -> dict:
    result = cli(*args, "--json", **kw)
    assert result.code == 0, result.stderr
    return result.json


def drop(store: Path, name: str, text: str) -> Path:
    path = store / "pages" / "user" / "tester" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")
    return path


def adopted_page(store: Path, title: str) -> dict:
    listing = ok("ls", "--store", str(store))
    [entry] = [e for e in listing if e["title"] == title]
    return ok("show", entry["page_id"], "--store", str(store))["page"]


# -- origin of dropped files ------------------------------------------------------------------
def test_a_dropped_file_without_frontmatter_under_claims(store: Path) -> None:
    path = drop(store, "kelp.md", "# Kelp notes\n\nKelp grows fast in cold water.\n")
    os.utime(path, (1716940800, 1716940800))  # 2024-05-29
    page = adopted_page(store, "Kelp notes")
    assert page["origin"] == "generated"  # cannot be classified: under-claim
    assert page["integrity"] == "unknown"
    assert page["epistemic_status"] == "unknown"
    assert page["sensitivity"] is None  # never classified
    assert page["created_by"]["actor_type"] == "system"
    assert page["record"]["observed_at"].startswith("2024-05-29")
    head = next((store / "pages").rglob(f"{page['page_id']}.md")).read_text("utf-8")
    assert "sensitivity:" not in head  # the file stays unclassified, as it was found


def test_a_dropped_file_cannot_claim_the_persons_word(store: Path) -> None:
    drop(store, "claim.md", "---\ntitle: Claimed\norigin: user_stated\nsensitivity: low\n---\n"
         "I said this, honest.\n")
    page = adopted_page(store, "Claimed")
    assert page["origin"] == "generated"
    assert page["sensitivity"] == "low"  # a stated classification is kept


def test_a_hand_edit_of_an_owned_page_stays_the_persons(store: Path) -> None:
    s = str(store)
    page_id = ok("add", "My own note about tides", "--store", s)["page_id"]
    head = next((store / "pages").rglob(f"{page_id}.md"))
    head.write_text(head.read_text("utf-8").replace("about tides", "about spring tides"))
    page = ok("show", page_id, "--store", s)["page"]
    assert page["origin"] == "user_stated"
    assert page["created_by"] == {"actor_type": "user", "actor_id": "tester"}


# -- unclassified sensitivity in search -------------------------------------------------------
def test_unclassified_pages_are_labelled_for_the_person(store: Path) -> None:
    s = str(store)
    drop(store, "kelp.md", "# Kelp notes\n\nKelp grows fast in cold water.\n")
    ok("add", "Kelp forests need cold water", "--sensitivity", "low", "--store", s)
    found = ok("search", "kelp", "--store", s)  # the store's owner reads their own notes
    assert found["count"] == 2
    assert found["filters_applied"]["unclassified_sensitivity"].startswith("included")
    [unclassified] = [r for r in found["results"] if "sensitivity" not in r]
    assert unclassified["extensions"]["org.pcp-cli"]["sensitivity"] == "unclassified"
    assert unclassified["origin"] == "generated"
    listed = {e["title"]: e["sensitivity"] for e in ok("ls", "--store", s)}
    assert listed["Kelp notes"] is None


def test_an_ai_client_sees_an_unclassified_page_only_as_it_would_a_high_one(
        example: Path) -> None:
    from pcp_cli.mcp.audit import AuditLog
    from pcp_cli.mcp.grants import Grant
    from pcp_cli.mcp.session import ToolSession
    from pcp_cli.mcp.store_backend import StoreBackend

    drop_at = example / "pages" / "user" / "ada-lumen" / "okapi.md"
    drop_at.write_text("# Okapi\n\nMy okapi allergy notes.\n", "utf-8")
    assert cli("ls", "--store", str(example)).code == 0  # adopt it
    [page_id] = [e["page_id"] for e in ok("ls", "--store", str(example))
                 if e["title"] == "Okapi"]
    reader = Grant("reader", "model", ("user:ada-lumen",), False, False, "pcp.yaml")
    session = ToolSession(StoreBackend(example), reader, AuditLog(example))
    found = session.call("pcp_search", {"query": "okapi"}).data
    assert found["count"] == 0
    assert "withheld" in found["filters_applied"]["unclassified_sensitivity"]
    asked = session.call("pcp_search", {"query": "okapi", "include_sensitive": True}).data
    assert asked["count"] == 0  # this grant never allows sensitive material
    read = session.call("pcp_read_pages", {"ids": [page_id]}).data
    assert read["not_found"] == [page_id]
    trusted = Grant("trusted", "model", ("user:ada-lumen",), True, False, "pcp.yaml")
    session = ToolSession(StoreBackend(example), trusted, AuditLog(example))
    assert session.call("pcp_search", {"query": "okapi"}).data["count"] == 0
    shown = session.call("pcp_search", {"query": "okapi", "include_sensitive": True}).data
    assert [r["id"] for r in shown["results"]] == [page_id]


# -- observed time ----------------------------------------------------------------------------
MAY_29 = 1716982200.0  # 2024-05-29T11:30:00Z


def chatgpt_export(tmp_path: Path) -> Path:
    conversation = gpt_conversation(
        "conv-kelp",
        [
            ("u", None, gpt_message("u", "user", "How fast does kelp grow?", time=MAY_29)),
            ("a", "u", gpt_message("a", "assistant", "Up to half a metre a day.",
                                   time=MAY_29 + 60)),
        ],
        current="a", title="Kelp growth", create_time=MAY_29, update_time=MAY_29 + 60,
    )
    return write_zip(tmp_path / "export.zip", {"conversations.json": [conversation]})


def test_search_timestamp_is_when_the_conversation_happened_not_the_import(
        store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = str(store)
    monkeypatch.setenv("PCP_NOW", "2026-11-30T09:00:00.000Z")
    ok("import", str(chatgpt_export(tmp_path)), "--store", s)
    [result] = ok("search", "kelp", "--store", s)["results"]
    assert result["timestamp"].startswith("2024-05-29T11:31")
    shown = ok("show", result["id"], "--store", s)
    assert shown["page"]["created_at"] == "2026-11-30T09:00:00.000Z"  # stored now…
    assert shown["observed_at"].startswith("2024-05-29T11:31")  # …observed then
    [listed] = ok("ls", "--store", s)
    assert listed["observed_at"].startswith("2024-05-29T11:31")


def test_importers_are_tools_named_by_actor_id(store: Path, tmp_path: Path) -> None:
    s = str(store)
    ok("import", str(chatgpt_export(tmp_path)), "--store", s)
    [result] = ok("search", "kelp", "--store", s)["results"]
    page = ok("show", result["id"], "--store", s)["page"]
    assert page["created_by"] == {"actor_type": "tool", "actor_id": "pcp-import-chatgpt"}
    assert page["provenance"][0]["actor_type"] == "tool"


def test_observed_time_accessor() -> None:
    from pcp_cli.model.page import observed_time

    stored = "2026-11-30T09:00:00.000Z"
    assert observed_time("note", {"observed_at": "2024-05-29"}, "imported", stored) == \
        "2024-05-29"
    assert observed_time("timeline_event", {"date": "2019-03"}, "user_stated", stored) == \
        "2019-03"
    assert observed_time("conversation", {"updated_at": "2024-01-02T00:00:00Z"}, "recorded",
                         stored) == "2024-01-02T00:00:00Z"
    # Outside material with no time of its own has none: storage time never stands in.
    assert observed_time("keystone", {}, "imported", stored) is None
    # The person's own writes were observed when they were stored.
    assert observed_time("note", {}, "user_stated", stored) == stored


def test_freshness_of_imported_material_is_not_the_import_time(
        store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = str(store)
    monkeypatch.setenv("PCP_NOW", "2026-11-30T09:00:00.000Z")
    keystones = tmp_path / "old.json"
    keystones.write_text(json.dumps([{"id": "old-1", "content": "Ada is a marine biologist.",
                                      "category": "identity", "source": "imported",
                                      "sensitivity": "low"}]))
    ok("import", str(keystones), "--store", s)
    text = cli("export", "--format", "micro_prompt", "--store", s).stdout
    assert "marine biologist" in text
    assert "2026-11-30" not in text  # the import day is not when this was known true


# -- search results carry source and confidence ----------------------------------------------
def test_search_results_carry_source_and_confidence(store: Path) -> None:
    s = str(store)
    ok("keystone", "add", "Prefers kelp over seagrass", "--category", "preference",
       "--confidence", "0.8", "--store", s)
    [result] = ok("search", "kelp", "--store", s)["results"]
    ext = result["extensions"]["org.pcp-cli"]
    assert ext["source"] == "user_stated" and ext["confidence"] == 0.8


# -- idempotency and relations ----------------------------------------------------------------
def test_same_key_with_different_content_is_a_conflict_naming_the_page(store: Path) -> None:
    s = str(store)
    first = ok("add", "keyed text", "--idempotency-key", "k-1", "--store", s)
    before = snapshot(store)
    again = cli("add", "other text", "--idempotency-key", "k-1", "--store", s)
    assert again.code == 4, again.stderr
    assert first["page_id"] in again.stderr and "k-1" in again.stderr
    assert snapshot(store) == before
    as_json = cli("add", "other text", "--idempotency-key", "k-1", "--json", "--store", s)
    assert as_json.error_json["error"]["code"] == "idempotency_conflict"


def test_mcp_write_with_a_reused_key_and_new_content_is_the_documented_error(
        example: Path, tmp_path: Path) -> None:
    from pcp_cli.mcp.audit import AuditLog
    from pcp_cli.mcp.grants import Grant
    from pcp_cli.mcp.session import ToolSession
    from pcp_cli.mcp.store_backend import StoreBackend

    grant = Grant("writer", "model", ("user:ada-lumen",), False, True, "pcp.yaml")
    session = ToolSession(StoreBackend(example), grant, AuditLog(example))
    first = session.call("pcp_write_page", {"content": "Notes v1", "idempotency_key": "n-1"})
    assert not first.is_error, first.text
    same = session.call("pcp_write_page", {"content": "Notes v1", "idempotency_key": "n-1"})
    assert same.data["status"] == "unchanged"
    changed = session.call("pcp_write_page", {"content": "Notes v2", "idempotency_key": "n-1"})
    assert changed.is_error
    assert changed.data["error"]["code"] == "idempotency_conflict"
    assert first.data["page_id"] in changed.data["error"]["message"]


def test_linking_twice_is_one_relation(store: Path) -> None:
    s = str(store)
    a = ok("add", "page A", "--store", s)["page_id"]
    b = ok("add", "page B", "--store", s)["page_id"]
    one = ok("link", a, "related_to", b, "--store", s)
    two = ok("link", a, "related_to", b, "--store", s)
    back = ok("link", b, "related_to", a, "--store", s)  # related_to reads both ways
    assert one["relation_id"] == two["relation_id"] == back["relation_id"]
    assert len(list((store / "relations").glob("*.json"))) == 1
    other = ok("link", a, "depends_on", b, "--store", s)
    assert other["relation_id"] != one["relation_id"]
    first, again = (cli("link", a, "part_of", b, "--store", s) for _ in range(2))
    assert first.stdout.startswith("linked ") and again.stdout.startswith("already linked ")


# -- imported ids belong to their source ------------------------------------------------------
def test_another_sources_id_never_addresses_the_persons_page(store: Path, tmp_path: Path) -> None:
    from tests.conftest import V1_EXAMPLES

    s = str(store)
    ok("import", str(V1_EXAMPLES / "full-archive.example.json"), "--store", s)
    own = ok("show", "ks-001", "--store", s)["page"]
    bob = tmp_path / "bob.json"
    bob.write_text(json.dumps([{"id": "ks-001",
                                "content": "A totally different person (Bob) likes jazz."}]))
    summary = ok("import", str(bob), "--store", s)
    assert (summary["created"], summary["revised"]) == (1, 0)
    after = ok("show", "ks-001", "--store", s)["page"]
    assert after["revision_id"] == own["revision_id"]  # Ada's keystone untouched
    [bobs] = [e for e in ok("keystone", "list", "--store", s) if "Bob" in e["content"]]
    assert bobs["id"] != "ks-001"
    # re-importing the same source is idempotent, and finds the mapped page again
    again = ok("import", str(bob), "--store", s)
    assert (again["created"], again["revised"], again["unchanged"]) == (0, 0, 1)
    # a newer version of Bob's file revises Bob's page, still not Ada's
    bob.write_text(json.dumps([{"id": "ks-001", "content": "Bob likes jazz and blues."}]))
    newer = ok("import", str(bob), "--store", s)
    assert (newer["created"], newer["revised"]) == (0, 1)
    assert ok("show", "ks-001", "--store", s)["page"]["revision_id"] == own["revision_id"]
    # both keep their v1 id on export where it is unique; the clash is exported apart
    exported = json.loads(cli("export", "--format", "archive", "--store", s).stdout)
    ids = [k["id"] for k in exported["keystones"]]
    assert len(ids) == len(set(ids)) and "ks-001" in ids
    assert next(k for k in exported["keystones"] if k["id"] == "ks-001")["content"].startswith(
        "Ada is")


def test_a_mapped_id_round_trips_on_export(store: Path, tmp_path: Path) -> None:
    s = str(store)
    ok("keystone", "add", "My own first claim", "--id", "k-7", "--store", s)
    other = tmp_path / "other.json"
    other.write_text(json.dumps([{"id": "k-7", "content": "Someone else's claim"}]))
    ok("import", str(other), "--store", s)
    exported = json.loads(cli("export", "--format", "archive", "--store", s).stdout)
    by_content = {k["content"]: k["id"] for k in exported["keystones"]}
    assert by_content["My own first claim"] == "k-7"
    assert by_content["Someone else's claim"] != "k-7"  # unique in the file
    # a store's own export imported back finds its own pages: no page is added
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(exported))
    back = ok("import", str(path), "--store", s)
    assert back["created"] == 0
    assert len(ok("keystone", "list", "--store", s)) == 2


def test_the_only_holder_of_a_source_id_exports_it(store: Path, tmp_path: Path) -> None:
    s = str(store)
    ok("keystone", "add", "Mine", "--id", "k-1", "--store", s)
    other = tmp_path / "other.json"
    other.write_text(json.dumps([{"id": "k-1", "content": "Theirs"},
                                 {"id": "k-2", "content": "Also theirs"}]))
    ok("import", str(other), "--store", s)
    exported = json.loads(cli("export", "--format", "archive", "--store", s).stdout)
    assert sorted(k["id"] for k in exported["keystones"] if k["content"] != "Theirs") == [
        "k-1", "k-2"]


# -- the micro_prompt and profile say what is true now ----------------------------------------
def micro_prompt(store: Path) -> str:
    result = cli("export", "--format", "micro_prompt", "--store", str(store))
    assert result.code == 0, result.stderr
    return result.stdout


def keystone(store: Path, text: str, *extra: str) -> str:
    return ok("keystone", "add", text, *extra, "--store", str(store))["page_id"]


def test_distilled_preferences_are_said_once(store: Path) -> None:
    s = str(store)
    keystone(store, "Ada is a marine biologist.", "--category", "identity")
    keystone(store, "Prefers morning deep work blocks.", "--category", "preference")
    keystone(store, "Never schedule meetings on Fridays.", "--category", "constraint")
    ok("profile", "distill", "--store", s)
    text = micro_prompt(store)
    assert text.count("morning deep work") == 1, text
    assert text.count("meetings on Fridays") == 1, text


def test_a_superseded_keystone_never_leaks_through_a_distilled_field(store: Path) -> None:
    s = str(store)
    keystone(store, "Ada is a marine biologist.", "--category", "identity")
    old = keystone(store, "Prefers long detailed explanations.", "--category", "preference")
    ok("profile", "distill", "--store", s)
    assert "long detailed explanations" in micro_prompt(store)
    keystone(store, "Prefers short bullet answers.", "--category", "preference",
             "--supersedes", old)
    text = micro_prompt(store)
    assert "long detailed explanations" not in text, text
    assert "short bullet answers" in text
    shown = ok("profile", "show", "--store", s)
    assert "long detailed" not in json.dumps(shown)
    left_out = shown["extensions"]["org.pcp-cli"]["stale_fields_left_out"]
    assert left_out and "pcp profile distill" in shown["extensions"]["org.pcp-cli"][
        "stale_reason"]
    human = cli("profile", "show", "--store", s)
    assert "stale" in human.stdout + human.stderr
    # distilling again derives the field from what is true now
    ok("profile", "distill", "--store", s)
    shown = ok("profile", "show", "--store", s)
    assert "short bullet answers" in json.dumps(shown) and "extensions" not in shown or \
        "stale_fields_left_out" not in shown.get("extensions", {}).get("org.pcp-cli", {})


def test_competing_focus_claims_print_only_the_newest_highest_authority_one(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    claims = [
        ("2026-01-01T00:00:00.000Z", "Focus is finishing the kelp atlas.", "user_stated"),
        ("2026-02-01T00:00:00.000Z", "Focus is selling seaweed snacks.", "imported"),
        ("2026-03-01T00:00:00.000Z", "Focus is learning the oboe.", "inferred"),
        ("2026-04-01T00:00:00.000Z", "Focus is the Tidewatch beta launch.", "user_stated"),
    ]
    for when, text, source in claims:
        monkeypatch.setenv("PCP_NOW", when)
        keystone(store, text, "--category", "objective", "--source", source)
    text = micro_prompt(store)
    assert "Tidewatch beta launch" in text, text
    for _, other, _ in claims[:3]:
        assert other.rstrip(".") not in text, text


def test_a_lower_authority_repeat_is_left_out(store: Path) -> None:
    keystone(store, "Prefers answers with concrete worked examples.", "--category",
             "preference")
    keystone(store, "Prefers answers with concrete worked examples first.", "--category",
             "preference", "--source", "inferred")
    text = micro_prompt(store)
    assert text.count("concrete worked examples") == 1, text


def claude_with_profile(tmp_path: Path) -> Path:
    from tests.adapters.adapter_builders import CLAUDE_MEMORIES, CLAUDE_USERS

    return write_zip(tmp_path / "claude.zip", {"users.json": CLAUDE_USERS,
                                               "memories.json": CLAUDE_MEMORIES})


def test_distill_after_a_claude_import_writes_the_stores_own_generated_profile(
        store: Path, tmp_path: Path) -> None:
    s = str(store)
    ok("import", str(claude_with_profile(tmp_path)), "--store", s)
    kid = keystone(store, "Ada is a marine biologist.", "--category", "identity")
    result = ok("profile", "distill", "--store", s)
    assert result["page_id"] == "profile" and result["status"] == "created"
    page = ok("show", "profile", "--store", s)["page"]
    assert (page["origin"], page["integrity"]) == ("generated", "derived")
    assert page["provenance"][0]["operation"] == "derive"
    assert ok("show", kid, "--store", s)["revision_id"] in page["provenance"][0][
        "input_revision_ids"]
    exported = json.loads(cli("export", "--format", "json", "--store", s).stdout)
    assert exported.get("profession") == "Marine biologist"
    # the imported proposal is untouched and still waits for review
    proposals = ok("review", "--store", s)
    assert any(p["kind"] == "profile" for p in proposals)


def test_distill_on_an_imported_profile_page_is_a_derivation(store: Path, tmp_path: Path
                                                             ) -> None:
    s = str(store)
    archive = tmp_path / "p.json"
    archive.write_text(json.dumps({"schema_version": "1.0", "name": "Ada Lumen",
                                   "summary": "Writes about the ocean."}))
    ok("import", str(archive), "--store", s)
    keystone(store, "Ada is a marine biologist.", "--category", "identity")
    ok("profile", "distill", "--store", s)
    page = ok("show", "profile", "--store", s)["page"]
    assert (page["origin"], page["integrity"]) == ("generated", "derived")


def test_every_counted_proposal_is_reviewable_accepted_and_rejected(
        store: Path, tmp_path: Path) -> None:
    s = str(store)
    summary = ok("import", str(claude_with_profile(tmp_path)), "--store", s)
    queue = ok("review", "--store", s)
    assert len(queue) == summary["proposals"]
    [profile] = [p for p in queue if p["kind"] == "profile"]
    assert profile["fields"] == {"name": "Ada Lumen"}
    accepted = ok("review", "accept", profile["page_id"], "--store", s)
    assert accepted["page_id"] == "profile"
    page = ok("show", "profile", "--store", s)["page"]
    assert page["record"]["name"] == "Ada Lumen" and "name" in page["record"]["pinned"]
    assert page["origin"] == "approved"
    assert json.loads(cli("export", "--format", "json", "--store", s).stdout)["name"] == \
        "Ada Lumen"
    assert len(ok("review", "--store", s)) == len(queue) - 1
    # a profile proposal can be rejected too
    again = tmp_path / "again"
    again.mkdir()
    other_store = again / "store"
    assert cli("init", str(other_store), "--owner", "tester").code == 0
    ok("import", str(claude_with_profile(tmp_path)), "--store", str(other_store))
    [pending] = [p for p in ok("review", "--store", str(other_store)) if p["kind"] == "profile"]
    rejected = ok("review", "reject", pending["page_id"], "--reason", "not me",
                  "--store", str(other_store))
    assert rejected["status"] == "revised"
    assert not any(p["kind"] == "profile" for p in ok("review", "--store", str(other_store)))


# -- derived pages point to their inputs ------------------------------------------------------
def test_a_summary_needs_its_inputs(example: Path) -> None:
    from pcp_cli.mcp.audit import AuditLog
    from pcp_cli.mcp.grants import Grant
    from pcp_cli.mcp.session import ToolSession
    from pcp_cli.mcp.store_backend import StoreBackend

    grant = Grant("writer", "model", ("user:ada-lumen",), False, True, "pcp.yaml")
    session = ToolSession(StoreBackend(example), grant, AuditLog(example))
    bare = session.call("pcp_write_page", {"content": "A summary of nothing", "type": "summary"})
    assert bare.is_error and "derived" in bare.data["error"]["message"]
    assert not any("A summary of nothing" in p.read_text() for p in (example / "pages").rglob(
        "*.md"))
    made = session.call("pcp_write_page", {"content": "Ada's identity, summarised",
                                           "type": "summary", "derived_from": ["ks-001"]})
    assert not made.is_error, made.text
    manifest = made.data["manifest"]
    assert manifest["integrity"] == "derived"
    step = manifest["provenance"][0]
    assert step["operation"] == "derive" and step["input_revision_ids"]
    hidden = session.call("pcp_write_page", {"content": "x", "type": "summary",
                                             "derived_from": ["no-such-page"]})
    assert hidden.is_error and hidden.data["error"]["code"] == "not_found"
    cli_bare = cli("add", "A summary", "--type", "summary", "--store", str(example))
    assert cli_bare.code == 2 and "derived" in cli_bare.stderr
