"""`pcp console` as a person runs it: the first line is the sign-in link, Ctrl-C or SIGTERM
stops it normally, a port in use fails with one line; and no other command loads it."""

from __future__ import annotations

import signal
import socket
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import cli
from tests.console.helpers import pcp_console
from tests.test_imports_light import probe

CONSOLE_MODULES = ("jinja2", "starlette", "uvicorn", "markupsafe", "pcp_cli.console")


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_prints_the_link_first_and_stops_on_a_signal(example: Path, stop: int) -> None:
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    with pcp_console(example, stop=stop) as link, browser.open(link) as answer:
        assert answer.status == 200 and "pcp console" in answer.read().decode()  # signed in


def test_a_port_in_use_fails_with_one_line(example: Path) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        result = cli("console", "--no-browser", "--port", str(taken.getsockname()[1]),
                     "--store", example)
    finally:
        taken.close()
    assert result.code == 2 and result.stdout == ""
    assert "cannot listen on 127.0.0.1" in result.stderr and "Traceback" not in result.stderr
    assert cli("console", "--no-browser", "--store", example.parent / "none").code != 0


@pytest.mark.parametrize("args", [["--help"], ["console", "--help"], ["review", "--help"]])
def test_other_commands_load_none_of_the_console(args: list[str]) -> None:
    data = probe(*args)
    assert data["code"] == 0
    loaded = [m for m in data["modules"] if m.split(".")[0] in CONSOLE_MODULES
              or m.startswith("pcp_cli.console")]
    assert loaded == []


def test_ls_loads_none_of_the_console(example: Path) -> None:
    data = probe("ls", "--store", str(example))
    assert not [m for m in data["modules"] if m.split(".")[0] in CONSOLE_MODULES
                or m.startswith("pcp_cli.console")]
