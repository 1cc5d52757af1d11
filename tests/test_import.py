"""`pcp import` end to end: each source into a real store, idempotency, problems, dry run.

The exports are small synthetic ones built by tests/adapters/adapter_builders.py, including the
awkward cases: branches, null times, non-text parts, attachments, empty conversations, a
malformed item and a truncated file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pcp_cli import api
from pcp_cli.api import imports
from pcp_cli.errors import ExitStatus
from pcp_cli.store.store import Store, page_id_for_key
from tests.adapters.adapter_builders import (
    CLAUDE_MEMORIES,
    CLAUDE_PROJECTS,
    CLAUDE_USERS,
    claude_conversation,
    claude_message,
    gpt_branching,
    gpt_conversation,
    gpt_message,
    write_folder,
    write_zip,
)
from tests.conftest import Result, cli, snapshot

SUMMARY_KEYS = {"format", "dry_run", "created", "revised", "unchanged", "skipped", "failed",
                "problems"}


def imp(store: Path, source: Path, *args: str) -> Result:
    return cli("import", str(source), "--store", str(store), "--json", *args)


def head(store: Path, key: str) -> dict[str, Any]:
    with Store.open(store, readonly=True) as opened:
        opened.refresh()
        return opened.current(page_id_for_key(key)).to_dict()


def revision_count(store: Path, key: str) -> int:
    return len(list((store / "revisions" / page_id_for_key(key)).glob("*.json")))


def awkward_chatgpt() -> list[dict[str, Any]]:
    """A branch, null times, non-text parts, an empty conversation and a malformed one."""
    multimodal = gpt_conversation(
        "conv-odd",
        [
            ("root", None, None),
            ("u1", "root", gpt_message("u1", "user", [
                {"content_type": "image_asset_pointer", "asset_pointer": "file-service://x"},
                "What is in this picture?",
            ], time=None, content_type="multimodal_text")),
            ("a1", "u1", gpt_message("a1", "assistant", "A heron.", time=None)),
        ],
        current="a1",
        title="",
        create_time=None,
        update_time=None,
    )
    empty = gpt_conversation("conv-empty", [("root", None, None)], current="root")
    malformed = {"title": "no id", "mapping": {}}
    return [gpt_branching(), multimodal, empty, malformed]


# -- ChatGPT ---------------------------------------------------------------------------------


def test_chatgpt_pages_carry_origin_source_refs_and_provenance(store: Path, tmp_path: Path
                                                               ) -> None:
    export = write_zip(tmp_path / "chatgpt.zip", {"conversations.json": awkward_chatgpt()})
    result = imp(store, export)
    assert result.code == 0, result.stderr
    summary = result.json
    assert set(summary) >= SUMMARY_KEYS
    assert (summary["format"], summary["dry_run"]) == ("chatgpt", False)
    assert (summary["created"], summary["revised"], summary["unchanged"]) == (2, 0, 0)
    assert (summary["skipped"], summary["failed"]) == (2, 0)
    assert summary["by_type"] == {"conversation": {"created": 2, "revised": 0, "unchanged": 0}}
    reasons = {p["item"]: p for p in summary["problems"]}
    assert reasons["conversation=conv-empty"]["source"] == "chatgpt.zip!conversations.json"
    assert reasons["#3"]["outcome"] == "skipped" and "no usable id" in reasons["#3"]["reason"]

    page = head(store, "chatgpt:conversation:conv-branch")
    assert page["type"] == "conversation" and page["origin"] == "recorded"
    assert page["review_status"] == "affirmed"
    assert page["source_refs"] == ["chatgpt:conversations.json#conversation=conv-branch"]
    assert page["idempotency_key"] == "chatgpt:conversation:conv-branch"
    assert page["provenance"][0]["operation"] == "import"
    assert page["provenance"][0]["actor_type"] == "tool"
    assert "A monoid in endofunctors." in page["payload"]["content"]
    assert "OLD ANSWER" not in page["payload"]["content"]  # only the current branch

    odd = head(store, "chatgpt:conversation:conv-odd")
    assert odd["title"] == "Untitled conversation"
    assert odd["payload"]["content"] == (
        "### User\n\n[image]\n\nWhat is in this picture?\n\n### Assistant\n\nA heron.\n")
    assert odd["record"]["started_at"] is None


def test_reimporting_the_same_export_creates_nothing(store: Path, tmp_path: Path) -> None:
    export = write_zip(tmp_path / "chatgpt.zip", {"conversations.json": awkward_chatgpt()})
    assert imp(store, export).code == 0
    before = snapshot(store)
    again = imp(store, export)
    assert again.code == 0
    assert (again.json["created"], again.json["revised"], again.json["unchanged"]) == (0, 0, 2)
    assert snapshot(store) == before


def test_a_changed_item_gets_one_new_revision(store: Path, tmp_path: Path) -> None:
    first = gpt_branching()
    assert imp(store, write_zip(tmp_path / "1.zip", {"conversations.json": [first]})).code == 0
    changed = gpt_branching()
    changed["title"] = "Monads, revisited"
    changed["mapping"]["u2"]["message"]["content"]["parts"] = ["Thanks a lot!"]
    result = imp(store, write_zip(tmp_path / "2.zip", {"conversations.json": [changed]}))
    assert (result.json["created"], result.json["revised"]) == (0, 1)
    key = "chatgpt:conversation:conv-branch"
    assert revision_count(store, key) == 2
    page = head(store, key)
    assert page["title"] == "Monads, revisited" and "Thanks a lot!" in page["payload"]["content"]
    assert page["parent_revision_id"] is not None
    assert page["provenance"][0]["operation"] == "import"


def test_a_hand_edit_survives_reimporting_an_unchanged_export(store: Path, tmp_path: Path
                                                             ) -> None:
    export = write_zip(tmp_path / "c.zip", {"conversations.json": [gpt_branching()]})
    assert imp(store, export).code == 0
    page_id = page_id_for_key("chatgpt:conversation:conv-branch")
    [head_file] = store.glob(f"pages/**/{page_id}.md")
    head_file.write_text(head_file.read_text("utf-8") + "\nMy own note.\n", "utf-8")
    result = imp(store, export)
    assert result.json["unchanged"] == 1 and result.json["revised"] == 0
    assert "My own note." in head(store, "chatgpt:conversation:conv-branch")["payload"]["content"]


def test_truncated_file_imports_what_is_complete_and_exits_9(store: Path, tmp_path: Path
                                                            ) -> None:
    second = gpt_conversation("conv-2", [("u", None, gpt_message("u", "user", "Second"))],
                              current="u")
    text = json.dumps([gpt_branching(), second])
    export = tmp_path / "conversations.json"
    export.write_text(text[: len(text) - 30], "utf-8")
    result = imp(store, export)
    assert result.code == ExitStatus.IMPORT_FAILED
    summary = result.json
    assert (summary["created"], summary["failed"]) == (1, 1)
    [problem] = summary["problems"]
    assert problem["source"] == str(export) and problem["item"] is None
    assert "ends early" in problem["reason"] and problem["outcome"] == "failed"
    assert json.loads(result.stderr)["error"]["code"] == "import_failed"
    # The whole file again: the first conversation is unchanged, the second is added.
    export.write_text(text, "utf-8")
    again = imp(store, export)
    assert again.code == 0
    assert (again.json["created"], again.json["unchanged"]) == (1, 1)


def test_problems_go_to_stderr_and_the_summary_to_stdout(store: Path, tmp_path: Path) -> None:
    export = write_zip(tmp_path / "chatgpt.zip", {"conversations.json": awkward_chatgpt()})
    result = cli("import", str(export), "--store", str(store))
    assert result.code == 0
    assert result.stdout.splitlines()[:2] == [
        f"chatgpt: imported {export}",
        "created 2, revised 0, unchanged 0, skipped 2, failed 0",
    ]
    assert "conv-empty" not in result.stdout
    assert ("skipped: chatgpt.zip!conversations.json [conversation=conv-empty]: "
            "conversation has no visible messages; skipped") in result.stderr
    assert "skipped: chatgpt.zip!conversations.json [#3]:" in result.stderr


# -- Claude ----------------------------------------------------------------------------------


def claude_export(tmp_path: Path) -> Path:
    attachment = claude_message("m1", "human", "Summarise this", attachments=[
        {"file_name": "notes.txt", "extracted_content": "line one"}])
    in_project = {**claude_conversation("conv-1", [
        attachment, claude_message("m2", "assistant", "One line.")], name="Notes"),
        "project_uuid": "proj-1"}
    return write_zip(tmp_path / "claude.zip", {
        "users.json": CLAUDE_USERS,
        "projects.json": CLAUDE_PROJECTS,
        "memories.json": CLAUDE_MEMORIES,
        "conversations.json": [in_project, claude_conversation("conv-empty", [])],
    })


def test_claude_export_maps_projects_memories_and_the_user(store: Path, tmp_path: Path
                                                           ) -> None:
    result = imp(store, claude_export(tmp_path))
    assert result.code == 0, result.stderr
    summary = result.json
    assert summary["format"] == "claude"
    assert summary["by_type"] == {
        "conversation": {"created": 1, "revised": 0, "unchanged": 0},
        "document": {"created": 1, "revised": 0, "unchanged": 0},
        "keystone": {"created": 5, "revised": 0, "unchanged": 0},
        "note": {"created": 1, "revised": 0, "unchanged": 0},
        "profile": {"created": 1, "revised": 0, "unchanged": 0},
    }
    assert summary["proposals"] == 6 and summary["skipped"] == 2
    assert summary["relations"] == {"created": 2, "unchanged": 0}

    conversation = head(store, "claude:conversation:conv-1")
    assert conversation["namespace"] == "project:tidewatch-dashboard"
    assert "**Attachment: notes.txt**" in conversation["payload"]["content"]
    doc = head(store, "claude:project:proj-1:doc:doc-1")
    assert doc["namespace"] == "project:tidewatch-dashboard" and doc["origin"] == "imported"

    # Memories: one keystone proposal per statement, in the review queue, never affirmed.
    with api.open_store(store, readonly=True) as opened:
        assert api.keystone_entries(opened) == []
        proposed = api.keystone_entries(opened, include_all=True)
        assert len(proposed) == 5
        assert {e.review_status for e in proposed} == {"proposed"}
        assert {e.origin for e in proposed} == {"imported"}
        # users.json: a proposed profile page of its own; the person's profile is untouched.
        assert api.profile_revision(opened) is None
        profile = opened.current(page_id_for_key("claude:user:user-1"))
        assert profile.page_id != api.PROFILE_PAGE_ID
        assert profile.state.review_status == "proposed"
        assert profile.state.record["name"] == "Ada Lumen"
        relations = opened.relations(page_id_for_key("claude:project:proj-1"))
        assert {r.relation_type for r in relations} == {"related_to"}
    listing = cli("keystone", "list", "--store", str(store), "--json")
    assert listing.json == []


def test_reimporting_claude_adds_no_proposals_or_relations(store: Path, tmp_path: Path) -> None:
    export = claude_export(tmp_path)
    assert imp(store, export).code == 0
    before = snapshot(store)
    again = imp(store, export).json
    assert (again["created"], again["revised"], again["unchanged"]) == (0, 0, 9)
    assert again["proposals"] == 0
    assert again["relations"] == {"created": 0, "unchanged": 2}
    assert snapshot(store) == before


# -- Markdown --------------------------------------------------------------------------------

VAULT = {
    "Home.md": "---\ntitle: Start here\ntags: [index]\ncreated: 2024-01-02\nmood: calm\n---\n"
    "See [[Projects/Tidewatch|the dashboard]] and [[Nowhere]].\n",
    "Projects/Tidewatch.md": "# Tidewatch\n\nBack to [[Home]].\n",
    "docs/Manual.md": "# Manual\n\nLinks to [[Home]].\n",
    "bad.md": "---\ntags: [unclosed\n---\nbody\n",
    ".obsidian/workspace.md": "# hidden\n",
}


def test_markdown_vault_notes_documents_frontmatter_and_wikilinks(store: Path, tmp_path: Path
                                                                  ) -> None:
    vault = write_folder(tmp_path / "vault", VAULT)
    result = imp(store, vault)
    assert result.code == 0, result.stderr
    summary = result.json
    assert summary["format"] == "markdown"
    assert summary["by_type"] == {"document": {"created": 1, "revised": 0, "unchanged": 0},
                                  "note": {"created": 2, "revised": 0, "unchanged": 0}}
    [bad] = summary["problems"]
    assert bad["item"] == "bad.md" and bad["outcome"] == "skipped"
    assert bad["reason"].endswith("(line 3)")  # where YAML noticed the unclosed list

    home = head(store, "markdown:Home.md")
    assert home["title"] == "Start here" and home["tags"] == ["index"]
    assert home["record"] == {"created_at": "2024-01-02"}
    assert home["extensions"]["org.pcp-cli.frontmatter"] == {"mood": "calm"}
    assert home["source_refs"] == ["markdown:Home.md"] and home["origin"] == "imported"
    assert head(store, "markdown:docs/Manual.md")["type"] == "document"
    assert not (store / "revisions" / page_id_for_key("markdown:.obsidian/workspace.md")).exists()

    # Home ↔ Tidewatch link both ways but make one related_to relation; Manual → Home another.
    assert summary["relations"] == {"created": 2, "unchanged": 0}
    with Store.open(store, readonly=True) as opened:
        pairs = {frozenset((r.from_page_id, r.to_page_id)) for r in opened.relations()}
    ids = {key: page_id_for_key(f"markdown:{key}")
           for key in ("Home.md", "Projects/Tidewatch.md", "docs/Manual.md")}
    assert pairs == {frozenset((ids["Home.md"], ids["Projects/Tidewatch.md"])),
                     frozenset((ids["docs/Manual.md"], ids["Home.md"]))}
    again = imp(store, vault).json
    assert again["relations"] == {"created": 0, "unchanged": 2}
    assert len(list((store / "relations").glob("*.json"))) == 2


def test_namespace_option_places_the_pages(store: Path, tmp_path: Path) -> None:
    vault = write_folder(tmp_path / "vault", {"a.md": "# A\n"})
    result = imp(store, vault, "--namespace", "archive:notes")
    assert result.code == 0 and result.json["namespace"] == "archive:notes"
    assert head(store, "markdown:a.md")["namespace"] == "archive:notes"
    assert (store / "pages" / "archive" / "notes").is_dir()


# -- dry run, formats and exit statuses --------------------------------------------------------


def test_dry_run_reports_and_writes_nothing(store: Path, tmp_path: Path) -> None:
    export = claude_export(tmp_path)
    before = snapshot(store)
    result = imp(store, export, "--dry-run")
    assert result.code == 0
    assert result.json["dry_run"] is True
    assert (result.json["created"], result.json["proposals"]) == (9, 6)
    assert result.json["relations"] == {"created": 2, "unchanged": 0}
    assert snapshot(store) == before
    # After a real import, a dry run of a changed export says what would be revised.
    assert imp(store, export).code == 0
    chats = [claude_conversation("conv-1", [claude_message("m1", "human", "Changed")])]
    changed = write_zip(tmp_path / "changed.zip", {"conversations.json": chats})
    before = snapshot(store)
    planned = imp(store, changed, "--dry-run").json
    assert (planned["created"], planned["revised"], planned["unchanged"]) == (0, 1, 0)
    assert snapshot(store) == before


def test_format_can_be_forced_and_auto_recognises_content(store: Path, tmp_path: Path) -> None:
    export = tmp_path / "renamed.txt"
    export.write_text(json.dumps([gpt_branching()]), "utf-8")
    assert imp(store, export).json["format"] == "chatgpt"
    forced = imp(store, export, "--format", "chatgpt")
    assert forced.code == 0 and forced.json["unchanged"] == 1


@pytest.mark.parametrize(
    ("setup", "args", "status"),
    [
        ("missing", (), ExitStatus.INVALID_INPUT),
        ("not-an-export", (), ExitStatus.INVALID_INPUT),
        ("not-json", ("--format", "chatgpt"), ExitStatus.INVALID_INPUT),
        ("chat", ("--format", "yaml"), ExitStatus.USAGE),
        ("chat", ("--namespace", "Bad Namespace"), ExitStatus.USAGE),
    ],
)
def test_exit_statuses(store: Path, tmp_path: Path, setup: str, args: tuple[str, ...],
                       status: ExitStatus) -> None:
    path = tmp_path / "input.json"
    if setup == "not-an-export":
        path.write_text('{"hello": "world"}', "utf-8")
    elif setup == "not-json":
        path.write_text("this is not JSON", "utf-8")
    elif setup == "chat":
        path.write_text(json.dumps([gpt_branching()]), "utf-8")
    before = snapshot(store)
    result = imp(store, path, *args)
    assert result.code == status, result.stderr
    assert result.stdout == ""
    assert snapshot(store) == before


def test_library_entry_point_reports_progress_and_calls_the_index_hook(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    export = write_zip(tmp_path / "c.zip", {"conversations.json": [gpt_branching()]})
    calls: list[Store] = []
    monkeypatch.setattr(imports, "after_import", calls.append)
    seen: list[tuple[int, int | None]] = []
    with api.open_store(store) as opened:
        summary = api.import_path(opened, export, dry_run=True,
                                  progress=lambda done, total: seen.append((done, total)))
        assert calls == [] and summary["created"] == 1
        seen.clear()
        summary = api.import_path(opened, export, progress=lambda d, t: seen.append((d, t)))
        assert calls == [opened]
    assert seen and seen[-1][0] == seen[-1][1]
    assert summary["created"] == 1


def test_imported_conversations_reach_the_catalog_change_feed(store: Path, tmp_path: Path
                                                              ) -> None:
    """The search index follows the catalog's change sequence; imports land in it at once."""
    with Store.open(store) as opened:
        start = opened.catalog.seq()
    export = write_zip(tmp_path / "c.zip", {"conversations.json": [gpt_branching()]})
    assert imp(store, export).code == 0
    with Store.open(store, readonly=True) as opened:
        changed = opened.catalog.changes_since(start).changed
    assert [(e.page_id, e.type) for e in changed] == [
        (page_id_for_key("chatgpt:conversation:conv-branch"), "conversation")]


def test_a_revision_without_its_head_file_is_finished_on_the_next_run(store: Path,
                                                                      tmp_path: Path) -> None:
    """What a kill between the revision file and the head file leaves behind."""
    export = write_zip(tmp_path / "c.zip", {"conversations.json": [gpt_branching()]})
    assert imp(store, export).code == 0
    page_id = page_id_for_key("chatgpt:conversation:conv-branch")
    [head_file] = store.glob(f"pages/**/{page_id}.md")
    head_file.unlink()
    result = imp(store, export)
    assert result.code == 0 and result.json["created"] == 1
    assert head_file.exists()
    assert revision_count(store, "chatgpt:conversation:conv-branch") == 1


def test_an_empty_revision_folder_is_written_afresh(store: Path, tmp_path: Path) -> None:
    """What a kill before the first revision file was renamed into place leaves behind."""
    export = write_zip(tmp_path / "c.zip", {"conversations.json": [gpt_branching()]})
    page_id = page_id_for_key("chatgpt:conversation:conv-branch")
    folder = store / "revisions" / page_id
    folder.mkdir()
    (folder / f".rev_X.json.pcp-tmp-{12345}").write_text("{", "utf-8")
    result = imp(store, export)
    assert result.code == 0, result.stderr
    assert result.json["created"] == 1
    assert revision_count(store, "chatgpt:conversation:conv-branch") == 1


@pytest.mark.parametrize("shape", ["chatgpt-folder", "claude-folder", "markdown-file"])
def test_auto_recognises_folders_and_single_files(store: Path, tmp_path: Path, shape: str
                                                  ) -> None:
    if shape == "chatgpt-folder":
        path = write_folder(tmp_path / "gpt", {"conversations.json": [gpt_branching()],
                                               "chat.html": "<html></html>"})
    elif shape == "claude-folder":
        chat = claude_conversation("c1", [claude_message("m", "human", "Hello")])
        path = write_folder(tmp_path / "claude", {"users.json": CLAUDE_USERS,
                                                  "conversations.json": [chat]})
    else:
        path = write_folder(tmp_path / "notes", {"one.md": "# One\n"}) / "one.md"
    result = imp(store, path)
    assert result.code == 0, result.stderr
    assert result.json["format"] == shape.split("-")[0]
    assert result.json["created"] >= 1 and result.json["failed"] == 0


def test_progress_bar_is_drawn_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from pcp_cli.cli import imports

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    piped = io.StringIO()
    monkeypatch.setattr("sys.stderr", piped)
    with imports._progress_bar() as (update, waiting):
        assert update is None and waiting is None
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    with imports._progress_bar() as (update, waiting):
        assert update is not None and waiting is not None
        update(50, 100)
        waiting(True)  # another pcp process holds the store lock: the bar says so
        waiting(False)
        update(100, 100)
    assert piped.getvalue() == "" and terminal.getvalue() != ""
    assert "waiting for another pcp process to release the store lock" in terminal.getvalue()


def test_an_unrecorded_hand_edit_is_recorded_before_a_changed_item_revises(
    store: Path, tmp_path: Path
) -> None:
    first = gpt_branching()
    assert imp(store, write_zip(tmp_path / "1.zip", {"conversations.json": [first]})).code == 0
    key = "chatgpt:conversation:conv-branch"
    [head_file] = store.glob(f"pages/**/{page_id_for_key(key)}.md")
    head_file.write_text(head_file.read_text("utf-8") + "\nMy own note.\n", "utf-8")
    changed = gpt_branching()
    changed["title"] = "Monads, revisited"
    with Store.open(store) as opened:  # no refresh: the edit is only on disk
        summary = api.import_path(opened, write_zip(tmp_path / "2.zip",
                                                    {"conversations.json": [changed]}))
        assert summary["revised"] == 1
        history = opened.revisions(page_id_for_key(key))
    assert [r.provenance[0].operation for r in history] == ["import", "revise", "import"]
    assert "My own note." in history[1].state.content


def test_a_damaged_zip_member_fails_the_rest_and_keeps_what_was_read(store: Path,
                                                                     tmp_path: Path) -> None:
    import zipfile

    filler = "tide " * 2000
    chats = [gpt_conversation(f"c{n:02d}", [("u", None, gpt_message("u", "user", filler))],
                              current="u", title=f"Chat {n}") for n in range(30)]
    chats[-1]["title"] = "ZZZZ"
    export = tmp_path / "damaged.zip"
    with zipfile.ZipFile(export, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("conversations.json", json.dumps(chats))
    raw = bytearray(export.read_bytes())
    at = raw.rindex(b"ZZZZ")
    raw[at] = ord("Y")  # still valid JSON, but the member's CRC no longer matches
    export.write_bytes(bytes(raw))
    result = imp(store, export)
    assert result.code == ExitStatus.IMPORT_FAILED, result.stderr
    summary = result.json
    assert 1 <= summary["created"] < 30 and summary["failed"] == 1
    [problem] = summary["problems"]
    assert problem["item"] is None and "BadZipFile" in problem["reason"]
