from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from pcp_cli.adapters import ImportItem, ItemProblem, iter_items
from pcp_cli.adapters.chatgpt import iter_items as chatgpt_items
from tests.adapters.adapter_builders import (
    gpt_branching,
    gpt_conversation,
    gpt_message,
    write_folder,
    write_zip,
)


def split(results: list[ImportItem | ItemProblem]) -> tuple[list[ImportItem], list[ItemProblem]]:
    items = [r for r in results if isinstance(r, ImportItem)]
    problems = [r for r in results if isinstance(r, ItemProblem)]
    return items, problems


def test_zip_imports_only_the_current_branch(tmp_path: Path) -> None:
    export = write_zip(tmp_path / "export.zip", {"conversations.json": [gpt_branching()]})
    items, problems = split(list(iter_items(export)))
    assert problems == []
    [item] = items
    assert item.key == "chatgpt:conversation:conv-branch"
    assert item.kind == "page" and item.type == "conversation" and item.origin == "recorded"
    assert item.title == "Monads"
    assert item.source_refs == ("chatgpt:conversations.json#conversation=conv-branch",)
    assert item.content == (
        "### User · 2024-05-01 10:02\n\nWhat is a monad?\n\n"
        "### Assistant · 2024-05-01 10:03\n\nA monoid in endofunctors.\n\n"
        "### User · 2024-05-01 10:03\n\nThanks!\n"
    )
    assert "OLD ANSWER" not in item.content
    assert item.record == {
        "source_system": "chatgpt",
        "source_id": "conv-branch",
        "started_at": "2024-05-01T10:00:00.000Z",
        "updated_at": "2024-05-01T10:06:40.000Z",
        "message_count": 3,
        "participants": ["assistant", "user"],
        "model": "gpt-4o",
    }
    assert item.timestamp == "2024-05-01T10:06:40.000Z"


def test_bare_file_and_folder_give_the_same_items(tmp_path: Path) -> None:
    data = [gpt_branching()]
    bare = tmp_path / "conversations.json"
    bare.write_text(json.dumps(data), encoding="utf-8")
    folder = write_folder(tmp_path / "unzipped", {"conversations.json": data})
    zipped = write_zip(tmp_path / "export.zip", {"conversations.json": data})
    assert list(iter_items(bare)) == list(iter_items(folder)) == list(iter_items(zipped))


def test_null_times_non_text_parts_hidden_and_empty_messages(tmp_path: Path) -> None:
    conversation = gpt_conversation(
        "conv-odd",
        [
            ("root", None, None),
            (
                "ctx",
                "root",
                {
                    **gpt_message("ctx", "user", "", time=None, hidden=True),
                    "content": {
                        "content_type": "user_editable_context",
                        "user_profile": "secret custom instructions",
                    },
                },
            ),
            (
                "u1",
                "ctx",
                gpt_message(
                    "u1",
                    "user",
                    [
                        {
                            "content_type": "image_asset_pointer",
                            "asset_pointer": "file-service://x",
                        },
                        "What is in this picture? 日本語のテキスト",
                    ],
                    time=None,
                    content_type="multimodal_text",
                ),
            ),
            ("t1", "u1", gpt_message("t1", "tool", "tool output", time=None)),
            ("a0", "t1", gpt_message("a0", "assistant", "", time=None)),
            (
                "a1",
                "a0",
                {
                    **gpt_message("a1", "assistant", "", time=None),
                    "content": {
                        "content_type": "code",
                        "language": "python",
                        "text": "print('```')",
                    },
                },
            ),
            ("a2", "a1", gpt_message("a2", "assistant", "A cat. 猫です。", time=None)),
        ],
        current="a2",
        create_time=None,
        update_time=None,
    )
    [item] = list(
        chatgpt_items(write_zip(tmp_path / "e.zip", {"conversations.json": [conversation]}))
    )
    assert isinstance(item, ImportItem)
    assert item.content == (
        "### User\n\n[image]\n\nWhat is in this picture? 日本語のテキスト\n\n"
        "### Assistant\n\n````python\nprint('```')\n````\n\n"
        "### Assistant\n\nA cat. 猫です。\n"
    )
    assert "secret" not in item.content and "tool output" not in item.content
    assert item.record["started_at"] is None and item.timestamp is None
    assert item.record["message_count"] == 3


def test_missing_current_node_falls_back_to_the_deepest_latest_leaf(tmp_path: Path) -> None:
    conversation = gpt_branching()
    conversation["current_node"] = "gone"
    results = list(
        chatgpt_items(write_zip(tmp_path / "e.zip", {"conversations.json": [conversation]}))
    )
    items, problems = split(results)
    assert [p.skipped for p in problems] == [False]
    assert "current_node" in problems[0].reason
    assert "Thanks!" in items[0].content and "OLD ANSWER" not in items[0].content


def test_a_cycle_in_the_parent_chain_stops_the_walk(tmp_path: Path) -> None:
    conversation = gpt_conversation(
        "conv-cycle",
        [
            ("x", "y", gpt_message("x", "user", "first")),
            ("y", "x", gpt_message("y", "assistant", "second")),
        ],
        current="y",
    )
    results = list(
        chatgpt_items(write_zip(tmp_path / "e.zip", {"conversations.json": [conversation]}))
    )
    items, problems = split(results)
    assert len(items) == 1 and "loops back" in problems[0].reason and not problems[0].skipped


def test_bad_conversations_are_reported_and_the_rest_continue(tmp_path: Path) -> None:
    no_mapping = {"id": "conv-nomap", "title": "x", "create_time": 1.0}
    empty = gpt_conversation("conv-empty", [("root", None, None)], current="root")
    no_id = {"title": "nameless", "mapping": {}}
    data = [no_mapping, empty, "not an object", no_id, gpt_branching()]
    results = list(chatgpt_items(write_zip(tmp_path / "e.zip", {"conversations.json": data})))
    items, problems = split(results)
    assert [i.key for i in items] == ["chatgpt:conversation:conv-branch"]
    assert [(p.item, p.skipped) for p in problems] == [
        ("conversation=conv-nomap", True),
        ("conversation=conv-empty", True),
        ("#2", True),
        ("#3", True),
    ]
    assert all(p.source.endswith("e.zip!conversations.json") for p in problems)


def test_truncated_file_yields_complete_conversations_then_a_problem(tmp_path: Path) -> None:
    first = gpt_branching()
    second = gpt_branching()
    second["id"] = second["conversation_id"] = "conv-two"
    text = json.dumps([first, second])
    cut = text[: len(text) - len(json.dumps(second)) // 2]
    export = write_zip(tmp_path / "e.zip", {"conversations.json": cut})
    items, problems = split(list(chatgpt_items(export)))
    assert [i.key for i in items] == ["chatgpt:conversation:conv-branch"]
    assert len(problems) == 1 and "ends early" in problems[0].reason


def test_progress_reports_bytes_up_to_the_total(tmp_path: Path) -> None:
    data = [gpt_branching() for _ in range(50)]
    for n, conversation in enumerate(data):
        conversation["id"] = conversation["conversation_id"] = f"c{n}"
    export = write_zip(tmp_path / "e.zip", {"conversations.json": data})
    calls: list[tuple[int, int | None]] = []
    items = list(chatgpt_items(export, progress=lambda done, total: calls.append((done, total))))
    assert len(items) == 50
    total = len(json.dumps(data, ensure_ascii=False).encode())
    assert calls and calls[-1] == (total, total)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)


def _write_large_export(path: Path, conversations: int) -> int:
    """A conversations.json of many branching conversations, written incrementally."""
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        for n in range(conversations):
            nodes: list[tuple[str, str | None, dict | None]] = [("root", None, None)]
            parent = "root"
            for turn in range(20):
                role = "user" if turn % 2 == 0 else "assistant"
                text = f"message {turn} of conversation {n} " + "lorem ipsum dolor " * 40
                nodes.append((f"n{turn}", parent, gpt_message(f"n{turn}", role, text)))
                if role == "assistant":
                    nodes.append((f"alt{turn}", parent, gpt_message(f"alt{turn}", role, text)))
                parent = f"n{turn}"
            conversation = gpt_conversation(f"conv-{n}", nodes, current=parent)
            out.write(("," if n else "") + json.dumps(conversation))
        out.write("]")
    return path.stat().st_size


@pytest.mark.slow  # among the default run's slowest (10-26 s): in the slow set
def test_streaming_keeps_peak_memory_well_below_file_size(tmp_path: Path) -> None:
    size = _write_large_export(tmp_path / "conversations.json", 600)
    assert size > 15_000_000
    tracemalloc.start()
    try:
        count = sum(
            1 for r in chatgpt_items(tmp_path / "conversations.json") if isinstance(r, ImportItem)
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 600
    assert peak < size / 10, f"peak {peak} bytes for a {size}-byte file"


def test_a_file_holding_one_conversation_object(tmp_path: Path) -> None:
    bare = tmp_path / "one.json"
    bare.write_text(json.dumps(gpt_branching()), encoding="utf-8")
    assert [r.key for r in iter_items(bare)] == ["chatgpt:conversation:conv-branch"]


def test_an_oddly_shaped_conversation_is_skipped_not_fatal(tmp_path: Path) -> None:
    odd = gpt_branching()
    odd["id"] = odd["conversation_id"] = "conv-odd"
    odd["mapping"]["u1"]["message"]["metadata"] = {"is_visually_hidden_from_conversation": False}
    odd["mapping"]["u1"]["children"] = 5  # not a list
    odd["current_node"] = None  # forces the leaf search, which reads children
    data = [odd, gpt_branching()]
    items, problems = split(
        list(chatgpt_items(write_zip(tmp_path / "e.zip", {"conversations.json": data})))
    )
    assert [i.key for i in items] == ["chatgpt:conversation:conv-branch"]
    assert problems[-1].item == "#0" and "malformed" in problems[-1].reason


def test_messages_addressed_to_tools_are_left_out(tmp_path: Path) -> None:
    search = gpt_message("s", "assistant", 'search("tide tables")')
    search["recipient"] = "browser"
    code = {**gpt_message("c", "assistant", ""), "recipient": "python"}
    code["content"] = {"content_type": "code", "language": "python", "text": "1 + 1"}
    conversation = gpt_conversation(
        "conv-tools",
        [
            ("u", None, gpt_message("u", "user", "Tides?")),
            ("s", "u", search),
            ("c", "s", code),
            ("a", "c", gpt_message("a", "assistant", "High tide at noon.")),
        ],
        current="a",
    )
    [item] = list(iter_items(write_zip(tmp_path / "e.zip", {"conversations.json": [conversation]})))
    assert "tide tables" not in item.content
    assert "```python\n1 + 1\n```" in item.content and "High tide at noon." in item.content


def test_code_addressed_to_other_tools_is_a_tool_call_and_left_out(tmp_path: Path) -> None:
    """Real exports send tool calls as `code` content: `search(...)` to `browser`, a JSON
    prompt to `dalle.text2im`. Those are tool calls (left out, as the README says); only
    code the model ran in the code interpreter (`python`) is kept."""

    def code_to(node: str, recipient: str, text: str, language: str = "unknown") -> dict:
        message = {**gpt_message(node, "assistant", ""), "recipient": recipient}
        message["content"] = {"content_type": "code", "language": language, "text": text}
        return message

    browse = code_to("b", "browser", 'search("kelp forest density 2024")')
    draw = code_to("d", "dalle.text2im", '{"size": "1024x1024", "prompt": "a kelp forest"}',
                   language="json")
    run = code_to("p", "python", "print(2 + 2)", language="python")
    conversation = gpt_conversation(
        "conv-tool-code",
        [
            ("u", None, gpt_message("u", "user", "Draw kelp and count it")),
            ("b", "u", browse),
            ("d", "b", draw),
            ("p", "d", run),
            ("a", "p", gpt_message("a", "assistant", "Here is your kelp.")),
        ],
        current="a",
    )
    [item] = list(iter_items(write_zip(tmp_path / "e.zip", {"conversations.json": [conversation]})))
    assert "kelp forest density" not in item.content
    assert "1024x1024" not in item.content and '"prompt"' not in item.content
    assert "```python\nprint(2 + 2)\n```" in item.content
    assert "Here is your kelp." in item.content
