"""Every command has help text and is in the README; the README's commands really exist."""

from __future__ import annotations

import typer

from pcp_cli.cli.main import build_app
from tests.conftest import ROOT

HIDDEN = {"merge-file"}  # invoked by git, not by people (documented in the git section)


def _commands() -> list[tuple[str, object]]:
    root = typer.main.get_command(build_app())
    found = []

    def walk(command: object, path: str) -> None:
        subcommands = getattr(command, "commands", None)
        if subcommands:
            for name, sub in sorted(subcommands.items()):
                walk(sub, f"{path} {name}")
        else:
            found.append((path, command))

    walk(root, "pcp")
    return found


def test_every_command_has_help_text() -> None:
    missing = [path for path, command in _commands()
               if not (getattr(command, "help", None) or "").strip()]
    assert not missing, f"commands without help: {missing}"


def test_every_command_is_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [path for path, _ in _commands()
               if path.split()[-1] not in HIDDEN and f"`{path}" not in readme
               and f"{path} " not in readme]
    assert not missing, f"commands the README does not mention: {missing}"
