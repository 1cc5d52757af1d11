"""Long commands show progress on a terminal (stderr): `pcp propose` over the pages it reads,
and the first `pcp search`, which builds the index. Piped, they print no bar."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE, cli
from tests.terminal import run_in_terminal

pytestmark = pytest.mark.slow  # real processes on a pseudo-terminal, an index built twice

def _on_a_terminal(*args: str) -> str:
    """What pcp showed with stdin, stdout and stderr on one pseudo-terminal."""
    result = run_in_terminal(*args, env={"NO_COLOR": "1", "PCP_PAGER": "cat", "TERM": "xterm"},
                             stderr_too=True)  # a dumb terminal gets no live bar
    assert result.code == 0, result.screen
    return result.screen


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
