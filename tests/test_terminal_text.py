"""Stored text printed on a terminal is read, never obeyed: an imported conversation or a
title holding escape codes (clear the screen, a hyperlink, colours), a bidi override or rich
markup (`[link=…]`) shows them as marks in `pcp ls`, `search`, `review` and `review show`,
and `--json` keeps the text as stored."""

from __future__ import annotations

import re
from pathlib import Path

from pcp_cli import api
from tests.conftest import cli
from tests.terminal import run_in_terminal

RLO, ESC = "\u202e", "\x1b"
TITLE = f"Invoice {RLO}fdp.exe {ESC}]8;;http://evil.test{ESC}\\here{ESC}]8;;{ESC}\\ " \
        "[link=http://evil.test]click[/link]"
# what pcp writes itself on a terminal: colours and styles (CSI ... m), nothing else
OWN_CODES = re.compile(r"\x1b\[[0-9;]*m")


def _hostile(store: Path) -> None:
    with api.open_store(store) as opened:
        api.add_page(opened, f"Quince notes {ESC}[2J{ESC}[31mred {RLO}txet.\n", title=TITLE,
                     page_id="hostile")
        api.add_page(opened, f"### User · 2024-01-10 10:00\n\nHere is my setup. I use Emacs "
                     f"{ESC}[2J for my notes.\n\n### Assistant · 2024-01-10 10:00\n\nNoted.\n",
                     page_type="conversation", title=f"Chat {RLO}txt.exe")
        api.propose(opened)


def test_escape_codes_bidi_overrides_and_markup_are_shown_on_a_terminal(store: Path) -> None:
    _hostile(store)
    number = next(n for n, item in enumerate(
        (i for _label, group in api.queue_groups(cli("review", "--json", "--store", store).json)
         for i in group), 1) if "Emacs" in item["content"])
    for args in (["ls"], ["search", "quince"], ["review"], ["review", "show", str(number)]):
        result = run_in_terminal(*args, "--store", store, env={"PAGER": "cat"}, columns=200)
        assert result.code == 0, (args, result.stderr)
        screen = OWN_CODES.sub("", result.screen)
        assert ESC not in screen and RLO not in screen, (args, screen)
        assert "[U+202E]" in screen, args
        if args[0] != "review":
            assert "[U+001B]]8;;http://evil.test" in screen and "[link=http://evil.test]" in screen
        else:
            assert "Emacs [U+001B]" in screen
    assert cli("show", "hostile", "--json", "--store", store).json["page"]["title"] == TITLE
