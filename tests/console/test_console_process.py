"""`pcp console` as a person runs it: the first line is the sign-in link, Ctrl-C or SIGTERM
stops it normally, a port in use fails with one line; and no other command loads it."""

from __future__ import annotations

import html
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from pcp_cli import api
from tests.conftest import cli
from tests.console.conftest import add_conversations
from tests.console.helpers import Console, pcp_console
from tests.mcp.http_helpers import REPO, make_store
from tests.test_concurrency import HELPERS
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


@pytest.mark.slow
def test_a_write_under_way_when_told_to_stop_finishes_audited_and_answered(
        tmp_path: Path) -> None:
    """SIGTERM arrives during a bulk accept that outlives uvicorn's grace period (the fault
    holds the write until uvicorn has given up on it): every proposal is accepted, recorded in
    the audit log as the owner's, the store is clean, and the request is answered (it was a
    500 and a traceback, the write finishing unseen after `stopped`)."""
    root = make_store(tmp_path / "store")
    ids = add_conversations(root, 12)
    env = {**os.environ, "PCP_STORE": str(root), "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [sys.executable, str(HELPERS / "fault_at.py"), "write", "3", "term", "console",
         "--no-browser"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env=env, text=True)
    try:
        link = process.stdout.readline().strip()  # type: ignore[union-attr]
        parts = urlsplit(link)
        console = Console(root, link, parts.netloc, int(parts.port or 0))
        console.signin()
        reply = console.post("/review/decide", [("action", "accept-selected"),
                                                *(("selected", i) for i in ids)])
    finally:
        code = process.wait(timeout=120)
    stderr = process.stderr.read()  # type: ignore[union-attr]
    assert code == 0 and "Traceback" not in stderr, stderr
    assert reply.status == 200, reply
    assert f"accepted {len(ids)}" in reply.body and "stopped meanwhile" in reply.body
    with api.open_store(root) as store:
        assert {store.current(i).state.review_status for i in ids} == {"affirmed"}
        assert api.check_store(store) == []
    log = [json.loads(line) for line in (root / ".pcp" / "audit.jsonl").read_text().splitlines()]
    owner = [r for r in log if r.get("client_id") == "console"]
    assert [(r["tool"], r["actor"], r["outcome"]) for r in owner] == [
        ("console.review_accept", "user", "allowed")]
    assert owner[0]["page_ids"] == ids


@pytest.mark.slow
def test_the_browser_is_opened_without_the_token_on_a_command_line(
        example: Path, tmp_path: Path) -> None:
    """Every user of the machine can read a process's command line (`ps`): the browser gets
    a file only this user can read, which leads to the one-time link; it goes when the
    console stops."""
    seen = tmp_path / "argv.json"
    browser = tmp_path / "browser"
    browser.write_text(f"#!{sys.executable}\nimport json, sys\n"
                       f"open({str(seen)!r}, 'w').write(json.dumps(sys.argv[1:]))\n")
    browser.chmod(0o755)
    env = {**os.environ, "PCP_STORE": str(example), "PYTHONPATH": str(REPO),
           "BROWSER": str(browser)}
    process = subprocess.Popen([sys.executable, "-m", "pcp_cli", "console"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env, text=True)
    try:
        link = process.stdout.readline().strip()  # type: ignore[union-attr]
        token = link.split("token=")[1]
        while not seen.exists() or not seen.read_text():
            assert process.poll() is None, process.stderr.read()  # type: ignore[union-attr]
            time.sleep(0.05)  # the browser stand-in is a process of its own: wait for it
        argv = json.loads(seen.read_text())
        assert len(argv) == 1 and argv[0].startswith("file://") and token not in argv[0]
        opened = Path(urlsplit(argv[0]).path)
        assert opened.stat().st_mode & 0o777 == 0o600
        assert opened.parent.stat().st_mode & 0o777 == 0o700
        assert html.escape(link) in opened.read_text()
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    assert not opened.exists() and not opened.parent.exists()


@pytest.mark.slow
def test_told_to_stop_as_soon_as_the_link_is_printed(example: Path) -> None:
    """SIGTERM the moment the link is out (uvicorn not yet serving): a normal stop, exit 0
    (it died of the signal, -15, when it came before uvicorn took the signals over)."""
    with pcp_console(example):  # sends SIGTERM on exit, asserts exit 0 and "stopped"
        pass
