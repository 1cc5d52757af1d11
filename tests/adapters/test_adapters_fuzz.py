"""Whatever shape a conversation has, a parser yields items or problems and never raises."""

from __future__ import annotations

import json
import tempfile
import zipfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcp_cli.adapters import ImportItem, ItemProblem
from pcp_cli.adapters.chatgpt import iter_items as chatgpt_items
from pcp_cli.adapters.claude import iter_items as claude_items
from tests.adapters.adapter_builders import gpt_branching

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.integers()
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "id",
                    "uuid",
                    "mapping",
                    "parent",
                    "children",
                    "message",
                    "content",
                    "parts",
                    "author",
                    "role",
                    "current_node",
                    "chat_messages",
                    "sender",
                    "text",
                    "attachments",
                    "create_time",
                    "created_at",
                    "metadata",
                    "docs",
                    "name",
                    "title",
                ]
            ),
            inner,
            max_size=6,
        )
    ),
    max_leaves=25,
)


def _run(parser, name: str, data: object) -> list:
    with tempfile.TemporaryDirectory() as scratch:
        export = Path(scratch) / "e.zip"
        with zipfile.ZipFile(export, "w") as archive:
            archive.writestr(name, json.dumps(data))
        return list(parser(export))


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(JSON, max_size=3))
def test_chatgpt_never_raises(conversations: list) -> None:
    results = _run(chatgpt_items, "conversations.json", [*conversations, gpt_branching()])
    assert all(isinstance(r, ImportItem | ItemProblem) for r in results)
    assert results[-1].key == "chatgpt:conversation:conv-branch"


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(JSON, max_size=3), JSON)
def test_claude_never_raises(conversations: list, memories: object) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        export = Path(scratch) / "e.zip"
        with zipfile.ZipFile(export, "w") as archive:
            archive.writestr("conversations.json", json.dumps(conversations))
            archive.writestr("memories.json", json.dumps(memories))
            archive.writestr("projects.json", json.dumps(conversations))
        results = list(claude_items(export))
    assert all(isinstance(r, ImportItem | ItemProblem) for r in results)
