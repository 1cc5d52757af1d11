from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pcp_cli.adapters import detect_format, iter_items
from pcp_cli.errors import InvalidInput
from tests.adapters.adapter_builders import (
    CLAUDE_PROJECTS,
    CLAUDE_USERS,
    claude_conversation,
    claude_message,
    gpt_branching,
    write_folder,
    write_zip,
)
from tests.conftest import V1_EXAMPLES

ARCHIVE_EXAMPLE = V1_EXAMPLES


def test_chatgpt_is_recognised_by_content_not_name(tmp_path: Path) -> None:
    data = [gpt_branching()]
    assert detect_format(write_zip(tmp_path / "a.zip", {"conversations.json": data})) == "chatgpt"
    renamed = tmp_path / "whatever.dat"
    renamed.write_text(json.dumps(data))
    assert detect_format(renamed) == "chatgpt"
    odd_zip = tmp_path / "export.bin"
    write_zip(odd_zip, {"conversations.json": data, "chat.html": "<html>"})
    assert detect_format(odd_zip) == "chatgpt"


def test_claude_zip_folder_and_bare_file(tmp_path: Path) -> None:
    conversation = claude_conversation("c", [claude_message("m", "human", "hi")])
    files = {"users.json": CLAUDE_USERS, "conversations.json": [conversation]}
    assert detect_format(write_zip(tmp_path / "c.zip", files)) == "claude"
    assert detect_format(write_folder(tmp_path / "c", files)) == "claude"
    bare = tmp_path / "conversations.json"
    bare.write_text(json.dumps([conversation]))
    assert detect_format(bare) == "claude"
    # An export without conversations is still Claude's.
    assert (
        detect_format(
            write_zip(
                tmp_path / "p.zip", {"projects.json": CLAUDE_PROJECTS, "conversations.json": []}
            )
        )
        == "claude"
    )


def test_markdown_folder(tmp_path: Path) -> None:
    assert detect_format(write_folder(tmp_path / "v", {"a/b.md": "# B\n"})) == "markdown"


@pytest.mark.parametrize("name", ["full-archive.example.json", "distilled-profile.example.json"])
def test_pcp_archive_and_profile(tmp_path: Path, name: str) -> None:
    copy = tmp_path / "input.json"
    shutil.copy(ARCHIVE_EXAMPLE / name, copy)
    assert detect_format(copy) == "archive"


def test_keystone_and_timeline_lists_are_archives(tmp_path: Path) -> None:
    keystones = tmp_path / "k.json"
    keystones.write_text(json.dumps([{"id": "ks_1", "content": "Prefers tea"}]))
    timeline = tmp_path / "t.json"
    timeline.write_text(json.dumps([{"id": "te_1", "date": "2020", "summary": "Moved"}]))
    assert detect_format(keystones) == detect_format(timeline) == "archive"
    with pytest.raises(InvalidInput) as caught:
        iter_items(keystones)
    assert caught.value.hint and "archive importer" in caught.value.hint


@pytest.mark.parametrize(
    "files",
    [{"readme.txt": "hello"}, {"data.json": {"something": "else"}}, {"bad.json": "{not json"}],
)
def test_unrecognisable_input_raises_with_a_hint(tmp_path: Path, files: dict) -> None:
    for target in (write_folder(tmp_path / "f", files), write_zip(tmp_path / "f.zip", files)):
        with pytest.raises(InvalidInput) as caught:
            detect_format(target)
        assert caught.value.hint and "ChatGPT" in caught.value.hint
    with pytest.raises(InvalidInput, match="no such file"):
        detect_format(tmp_path / "missing")
