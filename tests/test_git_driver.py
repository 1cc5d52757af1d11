"""The head-file merge driver: deterministic, symmetric, and never writes conflict markers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pcp_cli.store.store import Store
from pcp_cli.sync.driver import classify, merge
from tests.conftest import ROOT, cli

PATH = "pages/user/tester/{}.md"


def heads(store_root: Path) -> tuple[str, bytes, bytes, bytes]:
    """(page id, base, one revision's head file, a sibling revision's head file)."""
    page_id = cli("add", "Base text", "--store", str(store_root), "--json").json["page_id"]
    with Store.open(store_root) as store:
        store.refresh()
        head = store.layout.head_path(store.default_namespace, page_id)
        base = head.read_bytes()
        base_rev = store.current(page_id)
        store.revise(page_id, changes={"content": "One side"})
        one = head.read_bytes()
        store.writes.write_head(base_rev)  # the other device revises the same base
        store.revise(page_id, changes={"content": "Other side"})
        other = head.read_bytes()
    return page_id, base, one, other


def test_both_clean_picks_the_newer_in_either_order(store: Path) -> None:
    page_id, base, one, other = heads(store)
    path = PATH.format(page_id)
    assert merge(base, one, other, path) == (other, True)
    assert merge(base, other, one, path) == (other, True)  # symmetric: every device agrees
    assert classify(one, path).kind == classify(other, path).kind == "clean"


def test_trivial_merges(store: Path) -> None:
    page_id, base, one, other = heads(store)
    path = PATH.format(page_id)
    assert merge(base, base, other, path) == (other, True)
    assert merge(base, one, base, path) == (one, True)
    assert merge(base, one, one, path) == (one, True)


def test_an_unrecorded_hand_edit_is_kept(store: Path) -> None:
    page_id, base, one, other = heads(store)
    path = PATH.format(page_id)
    edited = one.replace(b"One side", b"One side, edited by hand")
    assert classify(edited, path).kind == "edited"
    assert merge(base, edited, other, path) == (edited, True)
    assert merge(base, other, edited, path) == (edited, True)


def test_two_hand_edits_or_a_broken_file_leave_ours_and_report_a_conflict(store: Path) -> None:
    page_id, base, one, other = heads(store)
    path = PATH.format(page_id)
    mine = one.replace(b"One side", b"mine by hand")
    theirs = other.replace(b"Other side", b"theirs by hand")
    assert merge(base, mine, theirs, path) == (mine, False)
    broken = b"<<<<<<< ours\n" + one + b"=======\n" + other + b">>>>>>> theirs\n"
    assert classify(broken, path).kind == "bad"
    result, clean = merge(base, one, broken, path)
    assert (result, clean) == (one, False)
    assert b"<<<<<<<" not in result


def test_merge_file_command_writes_ours_and_exits_like_git_expects(store: Path,
                                                                  tmp_path: Path) -> None:
    page_id, base, one, other = heads(store)
    files = {}
    for name, data in (("O", base), ("A", one), ("B", other)):
        files[name] = tmp_path / name
        files[name].write_bytes(data)
    command = [sys.executable, "-m", "pcp_cli", "merge-file", str(files["O"]), str(files["A"]),
               str(files["B"]), PATH.format(page_id)]
    proc = subprocess.run(command, cwd=ROOT, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert files["A"].read_bytes() == other
    files["A"].write_bytes(one.replace(b"One side", b"mine"))
    files["B"].write_bytes(other.replace(b"Other side", b"theirs"))
    proc = subprocess.run(command, cwd=ROOT, capture_output=True)
    assert proc.returncode == 1
    assert files["A"].read_bytes() == one.replace(b"One side", b"mine")


def test_merge_file_is_hidden_from_help() -> None:
    result = cli("--help")
    assert "merge-file" not in result.stdout
    for command in ("status", "resolve", "sync"):
        assert command in result.stdout


@pytest.mark.parametrize("command", ["status", "resolve", "sync"])
def test_commands_have_help(command: str) -> None:
    result = cli(command, "--help")
    assert result.code == 0 and len(result.stdout) > 100
