"""Stores for the console tests: the example store with two grants, and conversations whose
self-statements `pcp propose` turns into proposals (one conversation titled `<script>`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pcp_cli import api
from tests.mcp.http_helpers import make_store

TOOLS = ("Emacs Vim Neovim Helix Kakoune Zed Geany Kate Gedit Atom Brackets TextMate BBEdit "
         "CotEditor Xcode Eclipse NetBeans IntelliJ PyCharm RStudio Jupyter Spyder Thonny "
         "Obsidian Logseq Zettlr Typora Joplin Anki Zotero").split()
HOSTILE = "<script>alert('pcp')</script>"


def add_conversations(root: Path, count: int) -> list[str]:
    """Conversations in which the person names `count` tools (a proposal each, after
    `propose`); the first is titled with a script tag. Returns the proposals' ids."""
    with api.open_store(root) as store:
        for chat in range((count + 5) // 6):
            body = ""
            for turn in range(6):
                number = chat * 6 + turn
                if number >= count:
                    break
                tool = f"{TOOLS[number % len(TOOLS)]}{'' if number < len(TOOLS) else number}"
                when = f"2024-{1 + chat % 12:02d}-{10 + turn:02d} 10:0{turn}"
                body += (f"### User · {when}\n\nHere is my setup. I use {tool} for my notes.\n\n"
                         f"### Assistant · {when}\n\nNoted, thanks for telling me.\n\n")
            title = HOSTILE if chat == 0 else f"Editors, part {chat}"
            api.add_page(store, body, page_type="conversation", title=title)
        result = api.propose(store)
    return [p["id"] for p in result["proposals"]]


@pytest.fixture
def console_store(tmp_path: Path) -> Path:
    root = make_store(tmp_path / "store")
    add_conversations(root, 8)
    return root
