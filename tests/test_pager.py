"""Long output goes through a pager on a terminal, as in git; never when piped."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import cli
from tests.terminal import run_in_terminal


@pytest.fixture
def fake_pager(tmp_path: Path) -> tuple[str, Path]:
    """A pager that records what it was given (and its LESS setting) in a file."""
    caught = tmp_path / "paged.txt"
    script = tmp_path / "fake_pager.py"
    script.write_text(
        "import os, sys\n"
        f"data = sys.stdin.buffer.read()\n"
        f"open({str(caught)!r}, 'wb').write(data)\n"
        "sys.stdout.write('[paged %d bytes, LESS=%s]\\n' % (len(data), os.environ.get('LESS')))\n",
        "utf-8")
    return f"{sys.executable} {script}", caught


@pytest.fixture
def page(store: Path) -> str:
    result = cli("add", "Tidewatch architecture\n\n" + "A line of the page.\n" * 50,
                 "--store", str(store), "--json")
    return result.json["page_id"]


@pytest.mark.parametrize("command", [["show"], ["history"], ["ls"], ["timeline", "list"]])
def test_a_terminal_gets_the_output_through_pcp_pager(store: Path, page: str, command: list[str],
                                                     fake_pager: tuple[str, Path]) -> None:
    pager, caught = fake_pager
    cli("timeline", "add", "2024-03", "Moved to Lisbon", "--store", str(store))
    args = [*command, page] if command in (["show"], ["history"]) else command
    shown = run_in_terminal(*args, "--store", str(store), env={"PCP_PAGER": pager})
    assert shown.code == 0, shown.stderr
    assert "[paged " in shown.screen
    assert "LESS=FRX" in shown.screen  # set as git sets it, when the person has not
    paged = caught.read_text("utf-8")
    expected = {"show": "A line of the page.", "history": "rev_", "ls": "Tidewatch",
                "timeline": "Moved to Lisbon"}[command[0]]
    assert expected in paged


def test_pager_falls_back_to_pager_then_is_skipped_by_no_pager_cat_or_a_pipe(
        store: Path, page: str, fake_pager: tuple[str, Path]) -> None:
    pager, caught = fake_pager
    via_pager_env = run_in_terminal("show", page, "--store", str(store), env={"PAGER": pager})
    assert "[paged " in via_pager_env.screen
    for args, env in ((["--no-pager", "show", page], {"PCP_PAGER": pager}),
                      (["show", page, "--no-pager"], {"PCP_PAGER": pager}),
                      (["show", page], {"PCP_PAGER": "cat", "PAGER": pager})):
        caught.unlink(missing_ok=True)
        direct = run_in_terminal(*args, "--store", str(store), env=env)
        assert direct.code == 0, direct.stderr
        assert "[paged " not in direct.screen and not caught.exists()
        assert "A line of the page." in direct.screen
    piped = cli("show", page, "--store", str(store))  # stdout is not a terminal
    assert "A line of the page." in piped.stdout and not caught.exists()


@pytest.mark.slow
def test_show_of_a_huge_page_does_not_flood_a_terminal_unasked(store: Path) -> None:
    body = "".join(f"line {n} of a very long page\n" for n in range(200_000))  # ~5 MB
    big = store.parent / "big.md"
    big.write_text("Huge page\n\n" + body, "utf-8")
    page = cli("add", "--file", str(big), "--store", str(store), "--json").json["page_id"]
    shown = run_in_terminal("show", page, "--store", str(store), env={"PCP_PAGER": "cat"})
    assert shown.code == 0, shown.stderr
    assert len(shown.screen) < 100_000
    assert "--full" in shown.stderr and "showing" in shown.stderr
    everything = run_in_terminal("show", page, "--full", "--store", str(store),
                                 env={"PCP_PAGER": "cat"})
    assert "line 199999 of a very long page" in everything.screen
    piped = cli("show", page, "--store", str(store))
    assert "line 199999 of a very long page" in piped.stdout


def test_a_pager_that_cannot_run_does_not_swallow_the_output(store: Path, page: str) -> None:
    shown = run_in_terminal("show", page, "--store", str(store),
                            env={"PCP_PAGER": "no-such-pager-anywhere"})
    assert shown.code == 0
    assert "A line of the page." in shown.screen
    assert "could not be run" in shown.stderr
