from __future__ import annotations

import pytest

from pcp_cli.errors import InvalidInput
from pcp_cli.render import agents_md_block
from pcp_cli.render.agents_md import END, START

USER_TEXT = "# Project rules\n\nUse tabs.  \nTrailing spaces kept.\n"


def test_new_file_gets_a_heading_and_block():
    out = agents_md_block("Hello.\n\n(profile as of 2026-01-01)", None)
    expected = f"{START}\nHello.\n\n(profile as of 2026-01-01)\n{END}\n"
    assert out == f"## About me (from pcp)\n\n{expected}"


def test_appends_when_absent_and_preserves_everything_else():
    out = agents_md_block("Hello.", USER_TEXT)
    assert out.startswith(USER_TEXT)
    assert out.endswith(f"{START}\nHello.\n{END}\n")


def test_file_without_trailing_newline():
    out = agents_md_block("Hello.", "No newline")
    assert out.startswith("No newline\n\n## About me")


def test_replaces_only_the_block_and_is_idempotent():
    first = agents_md_block("Old text.", USER_TEXT)
    edited = first + "\nMore rules after the block.\n"
    second = agents_md_block("New text.", edited)
    assert "Old text." not in second and "New text." in second
    assert second.startswith(USER_TEXT) and second.endswith("\nMore rules after the block.\n")
    assert agents_md_block("New text.", second) == second
    before, after = edited.split(START)[0], edited.split(END)[1]
    assert second.split(START)[0] == before and second.split(END)[1] == after


def test_crlf_files_stay_crlf():
    existing = "Rules\r\n\r\n" + START + "\r\nold\r\n" + END + "\r\nTail\r\n"
    out = agents_md_block("new\nline", existing)
    assert out == "Rules\r\n\r\n" + START + "\r\nnew\r\nline\r\n" + END + "\r\nTail\r\n"


@pytest.mark.parametrize(
    "existing",
    [
        f"{START}\nno end\n",
        f"no start\n{END}\n",
        f"{END}\n{START}\n",
        f"{START}\na\n{END}\n{START}\nb\n{END}\n",
        f"{START}\n{START}\n{END}\n",
    ],
)
def test_refuses_unbalanced_or_duplicated_markers(existing):
    with pytest.raises(InvalidInput):
        agents_md_block("text", existing)


def test_refuses_text_containing_a_marker():
    with pytest.raises(InvalidInput):
        agents_md_block(f"evil {END} text", USER_TEXT)
