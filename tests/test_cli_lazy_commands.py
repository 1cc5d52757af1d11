"""Running one command builds the typer app with that command's module alone.

The table in cli/main.py says which module registers which command; these tests keep it true and
check that a command behaves the same whether the app holds one module or all of them.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import pytest

from pcp_cli.cli import main as _main  # noqa: F401 - the module, below

MAIN = sys.modules["pcp_cli.cli.main"]


def registered(module: str) -> set[str]:
    import typer

    app = typer.Typer()
    importlib.import_module(module).register(app)
    command = typer.main.get_command(app)
    return set(getattr(command, "commands", {}) or {command.name: command})


def test_the_table_names_every_command_of_every_module() -> None:
    expected = {name: module for module in MAIN.COMMAND_MODULES for name in registered(module)}
    assert expected == MAIN.COMMAND_MODULE


def test_a_command_imports_only_its_own_module() -> None:
    code = ("import io, contextlib, json, sys\n"
            "from pcp_cli.cli.main import run, COMMAND_MODULES\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    run(['show', '--help'])\n"
            "print(json.dumps(sorted(m for m in COMMAND_MODULES if m in sys.modules)))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == ["pcp_cli.cli.pages"]


@pytest.mark.parametrize("args", [["show", "--help"], ["keystone", "add", "--help"],
                                  ["status", "--help"], ["merge-file", "--help"], ["show"],
                                  ["search", "--help"], ["ls", "--bogus"], ["lss"]])
def test_one_module_or_all_the_same_output(args: list[str]) -> None:
    """Help, usage errors and an unknown command read the same as with the whole app."""
    code = ("import io, contextlib, json, sys\n"
            "import pcp_cli.cli.main\n"
            "m = sys.modules['pcp_cli.cli.main']\n"
            "if sys.argv[1] == 'all':\n"
            "    m.COMMAND_MODULE = {}\n"
            "out, err = io.StringIO(), io.StringIO()\n"
            "with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):\n"
            "    code = m.run(sys.argv[2:])\n"
            "print(json.dumps([code, out.getvalue(), err.getvalue()]))\n")
    results = [subprocess.run([sys.executable, "-c", code, which, *args], capture_output=True,
                              text=True, timeout=60, env={**os.environ, "COLUMNS": "100"})
               for which in ("one", "all")]
    one, every = (json.loads(r.stdout.strip().splitlines()[-1]) for r in results)
    assert one == every
    assert one[1] or one[2]


@pytest.mark.parametrize("name", sorted(MAIN.COMMAND_MODULE))
def test_a_command_builds_only_itself(name: str) -> None:
    """typer evaluates the annotations of every command it builds: running one builds it alone
    (its module's other commands are dropped), and the table's every name is found."""
    assert set(MAIN.get_command(name).commands) == {name}
