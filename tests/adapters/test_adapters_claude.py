from __future__ import annotations

import json
from pathlib import Path

from pcp_cli.adapters import ImportItem, ItemProblem, iter_items
from pcp_cli.adapters.claude import iter_items as claude_items
from pcp_cli.adapters.claude import split_statements
from tests.adapters.adapter_builders import (
    CLAUDE_MEMORIES,
    CLAUDE_PROJECTS,
    CLAUDE_USERS,
    claude_conversation,
    claude_message,
    write_folder,
    write_zip,
)


def chat() -> dict:
    return claude_conversation(
        "conv-1",
        [
            claude_message(
                "m1",
                "human",
                "old text field",
                blocks=[{"type": "text", "text": "Summarise this file, 请。"}],
                attachments=[
                    {
                        "file_name": "notes.txt",
                        "file_size": 10,
                        "file_type": "txt",
                        "extracted_content": "line one\n```\nline two",
                    }
                ],
            ),
            claude_message(
                "m2",
                "assistant",
                "",
                blocks=[
                    {"type": "thinking", "thinking": "private reasoning"},
                    {"type": "text", "text": "It has two lines."},
                ],
            ),
            claude_message(
                "m3", "human", "Only the text field", blocks=[], files=[{"file_name": "photo.png"}]
            ),
        ],
        name="File summary",
    )


def full_export() -> dict:
    return {
        "users.json": CLAUDE_USERS,
        "projects.json": CLAUDE_PROJECTS,
        "memories.json": CLAUDE_MEMORIES,
        "conversations.json": [
            chat(),
            claude_conversation("conv-empty", [], name="Nothing here"),
        ],
    }


def by_key(results: list) -> dict[str, ImportItem]:
    return {r.key: r for r in results if isinstance(r, ImportItem)}


def test_single_file_layout_zip(tmp_path: Path) -> None:
    results = list(iter_items(write_zip(tmp_path / "claude.zip", full_export())))
    items = by_key(results)
    problems = [r for r in results if isinstance(r, ItemProblem)]

    profile = items["claude:user:user-1"]
    assert profile.kind == "profile_proposal" and profile.type == "profile"
    assert profile.record["name"] == "Ada Lumen" and profile.sensitivity == "medium"
    assert "ada@example.org" not in repr(profile)

    project = items["claude:project:proj-1"]
    assert project.namespace == "project:tidewatch-dashboard"
    assert (
        project.content == "Ocean sensor dashboard.\n\n## Project instructions\n\nAnswer briefly.\n"
    )
    doc = items["claude:project:proj-1:doc:doc-1"]
    assert doc.type == "document" and doc.title == "sensors.md"
    assert doc.namespace == "project:tidewatch-dashboard"
    assert doc.source_refs == ("claude:projects.json#project=proj-1/doc=doc-1",)
    assert doc.links == ("claude:project:proj-1",)
    assert not any("starter" in key for key in items)

    conversation = items["claude:conversation:conv-1"]
    assert conversation.origin == "recorded" and conversation.title == "File summary"
    assert conversation.source_refs == ("claude:conversations.json#conversation=conv-1",)
    assert conversation.record["message_count"] == 3
    assert conversation.content == (
        "### User · 2024-06-01 09:30\n\nSummarise this file, 请。\n\n"
        "**Attachment: notes.txt**\n\n````\nline one\n```\nline two\n````\n\n"
        "### Assistant · 2024-06-01 09:30\n\nIt has two lines.\n\n"
        "### User · 2024-06-01 09:30\n\nOnly the text field\n\n[file: photo.png]\n"
    )
    assert "private reasoning" not in conversation.content
    assert "old text field" not in conversation.content

    reasons = {p.item: p.reason for p in problems}
    assert "conversation=conv-empty" in reasons and "project=starter" in reasons
    assert all(p.skipped for p in problems)


def test_memories_become_proposals_one_per_statement(tmp_path: Path) -> None:
    items = by_key(list(claude_items(write_folder(tmp_path / "export", full_export()))))
    proposals = [i for i in items.values() if i.kind == "keystone_proposal"]
    assert sorted(p.content.strip() for p in proposals) == [
        "Ada builds dashboards.",
        "Ada writes science articles.",
        "Lives in Lisbon.",
        "She prefers Rust.",
        "The dashboard targets volunteers.",
    ]
    assert all(p.type == "keystone" and p.sensitivity == "medium" for p in proposals)
    volunteers = next(p for p in proposals if "volunteers" in p.content)
    assert volunteers.namespace == "project:tidewatch-dashboard"
    assert volunteers.source_refs == ("claude:memories.json#project=proj-1",)
    lisbon = next(p for p in proposals if "Lisbon" in p.content)
    assert lisbon.record["section"] == "Personal" and lisbon.namespace is None
    # Keys depend only on the statement, so a re-export gives the same keys.
    again = by_key(list(claude_items(write_folder(tmp_path / "again", full_export()))))
    assert set(again) == set(items)


def test_memory_list_of_strings_shape(tmp_path: Path) -> None:
    export = write_zip(
        tmp_path / "c.zip",
        {"memories.json": ["Prefers tea. Works remotely."], "users.json": CLAUDE_USERS},
    )
    contents = [
        i.content
        for i in claude_items(export)
        if isinstance(i, ImportItem) and i.kind == "keystone_proposal"
    ]
    assert contents == ["Prefers tea.\n", "Works remotely.\n"]


def test_split_layout_one_file_per_conversation(tmp_path: Path) -> None:
    first = chat()
    second = claude_conversation("conv-2", [claude_message("x", "human", "你好，世界")])
    export = write_zip(
        tmp_path / "split.zip",
        {
            "data-2024/users.json": CLAUDE_USERS,
            "data-2024/conversations/conv-1.json": first,
            "data-2024/conversations/conv-2.json": [second],
            "data-2024/conv-3/conversation.json": claude_conversation(
                "conv-3", [claude_message("y", "assistant", "hello")]
            ),
        },
    )
    items = by_key(list(iter_items(export)))
    assert {
        "claude:conversation:conv-1",
        "claude:conversation:conv-2",
        "claude:conversation:conv-3",
    } <= set(items)
    assert "你好，世界" in items["claude:conversation:conv-2"].content
    assert items["claude:conversation:conv-2"].source_refs == (
        "claude:conversations/conv-2.json#conversation=conv-2",
    )


def test_conversation_in_a_project_goes_to_its_namespace(tmp_path: Path) -> None:
    conversation = {**chat(), "project_uuid": "proj-1"}
    export = write_zip(
        tmp_path / "c.zip", {"projects.json": CLAUDE_PROJECTS, "conversations.json": [conversation]}
    )
    item = by_key(list(claude_items(export)))["claude:conversation:conv-1"]
    assert item.namespace == "project:tidewatch-dashboard"
    assert item.links == ("claude:project:proj-1",)


def test_truncated_conversations_file(tmp_path: Path) -> None:
    text = json.dumps([chat(), claude_conversation("conv-2", [claude_message("x", "human", "hi")])])
    export = write_zip(
        tmp_path / "c.zip", {"users.json": CLAUDE_USERS, "conversations.json": text[:-40]}
    )
    results = list(claude_items(export))
    assert "claude:conversation:conv-1" in by_key(results)
    assert isinstance(results[-1], ItemProblem) and "ends early" in results[-1].reason


def test_long_attachments_are_clipped(tmp_path: Path) -> None:
    message = claude_message(
        "m",
        "human",
        "see file",
        attachments=[{"file_name": "big.txt", "extracted_content": "x" * 50_000}],
    )
    export = write_zip(
        tmp_path / "c.zip",
        {"users.json": CLAUDE_USERS, "conversations.json": [claude_conversation("big", [message])]},
    )
    item = by_key(list(claude_items(export)))["claude:conversation:big"]
    assert len(item.content) < 21_000 and "truncated, 30000 more characters" in item.content


def test_split_statements_handles_headings_bullets_and_cjk() -> None:
    text = "## Work\n* Uses Vim. Writes Go!\n1) Ships weekly\n\n東京に住んでいる。猫が好き。"
    assert list(split_statements(text)) == [
        ("Work", "Uses Vim."),
        ("Work", "Writes Go!"),
        ("Work", "Ships weekly"),
        ("Work", "東京に住んでいる。"),
        ("Work", "猫が好き。"),
    ]


def test_an_oddly_shaped_message_skips_only_its_conversation(tmp_path: Path) -> None:
    broken = claude_conversation("bad", [claude_message("m", "human", "hi", attachments=5)])
    export = write_zip(tmp_path / "c.zip", {"conversations.json": [broken, chat()]})
    results = list(claude_items(export))
    assert list(by_key(results)) == ["claude:conversation:conv-1"]
    [problem] = [r for r in results if isinstance(r, ItemProblem)]
    assert problem.item == "#0" and "malformed" in problem.reason
