"""Long commands show progress on a terminal (stderr): `pcp propose` over the pages it reads,
and the first `pcp search`, which builds the index. Piped, they print no bar."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE, cli

pytestmark = pytest.mark.slow  # real processes on a pseudo-terminal, an index built twice

REPO = Path(__file__).resolve().parents[1]


def _on_a_terminal(*args: str, timeout: float = 60) -> str:
    """Run pcp with stdin, stdout and stderr on one pseudo-terminal; what it showed."""
    master, slave = os.openpty()
    env = {**os.environ, "NO_COLOR": "1", "PCP_PAGER": "cat", "COLUMNS": "100",
           "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "pcp_cli", *args], stdin=slave,
                            stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the other end closed
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    proc.wait(timeout=timeout)
    os.close(master)
    assert proc.returncode == 0
    return b"".join(chunks).decode("utf-8", "replace")


def _fresh(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".pcp"))
    return root


def test_the_first_search_shows_the_index_being_built(tmp_path: Path) -> None:
    root = _fresh(tmp_path)
    shown = _on_a_terminal("search", "tidewatch", "--limit", "1", "--store", str(root))
    assert "indexing" in shown and "23/23" in shown
    again = _on_a_terminal("search", "tidewatch", "--limit", "1", "--store", str(root))
    assert "indexing" not in again  # built once
    piped = cli("search", "tidewatch", "--store", str(_fresh(tmp_path / "b")))
    assert "indexing" not in piped.stderr and "━" not in piped.stderr


def test_propose_shows_the_pages_it_reads(tmp_path: Path) -> None:
    root = _fresh(tmp_path)
    shown = _on_a_terminal("propose", "--dry-run", "--store", str(root))
    assert "reading" in shown and "7/7" in shown and "would propose" in shown
    assert "reading" not in cli("propose", "--dry-run", "--store", str(root)).stderr
