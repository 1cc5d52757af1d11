"""stdout carries data only; messages go to stderr; --json is JSON and nothing else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import cli, run_pcp

DATA_COMMANDS = [
    ("ls",),
    ("show", "ks-008"),
    ("show", "ks-008", "--view", "history"),
    ("history", "ks-008"),
    ("keystone", "list"),
    ("profile", "show"),
    ("doctor",),
]


@pytest.mark.parametrize("args", DATA_COMMANDS, ids=lambda a: " ".join(a))
def test_json_output_is_json_only(example: Path, args: tuple[str, ...]) -> None:
    result = cli(*args, "--json", "--store", str(example))
    assert result.code == 0, result.stderr
    json.loads(result.stdout)
    assert result.stderr == ""


def test_write_commands_json_is_one_object(store: Path) -> None:
    result = cli("add", "x", "--json", "--store", str(store))
    assert result.code == 0 and result.stderr == ""
    assert set(json.loads(result.stdout)) == {"page_id", "revision_id", "status"}


def test_doctor_advice_goes_to_stderr(store: Path) -> None:
    (store / "pages" / "dropped.md").write_text("hello\n", "utf-8")
    result = cli("doctor", "--store", str(store))
    assert result.code == 8
    assert "pages/dropped.md" in result.stdout  # the findings are the data
    assert "doctor --fix" in result.stderr and "doctor --fix" not in result.stdout


def test_piped_output_is_plain_text(example: Path) -> None:
    result = run_pcp("ls", "--store", str(example))
    assert result.code == 0
    assert "\x1b[" not in result.stdout
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert rows and all(len(row) == 6 for row in rows)


@pytest.mark.parametrize("args", [(), ("keystone",), ("timeline",), ("profile",)])
def test_group_without_command_prints_help_and_exits_2(args: tuple[str, ...]) -> None:
    result = cli(*args)
    assert result.code == 2
    assert result.stderr.startswith("Usage:") and "Commands:" in result.stderr
    assert "Error:" not in result.stderr and result.stdout == ""


def test_help_exits_0_on_stdout() -> None:
    result = cli("--help")
    assert result.code == 0 and "Usage:" in result.stdout and result.stderr == ""


def test_ls_says_more_after_its_table_on_a_terminal(example) -> None:
    """The "More: --cursor" line comes after the table it continues (into the pager with it),
    not before it on stderr; piped, it stays on stderr (stdout is data)."""
    from tests.terminal import run_in_terminal

    out = run_in_terminal("ls", "--limit", "3", "--store", str(example),
                          env={"NO_COLOR": "1", "PCP_PAGER": "cat"})
    assert out.code == 0, out.stderr
    lines = out.screen.rstrip("\n").splitlines()
    assert lines[-1].startswith("More: --cursor ") and "More" not in out.stderr
    assert any("page_id" in line for line in lines[:-1])
    piped = cli("ls", "--limit", "3", "--store", str(example))
    assert "More: --cursor" in piped.stderr and "More" not in piped.stdout
