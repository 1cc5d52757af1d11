"""Every command has help text and is in the reference (docs/commands.md); the examples in the
README and docs/ are what pcp prints."""

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


def test_every_command_is_in_the_reference() -> None:
    reference = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    missing = [path for path, _ in _commands()
               if path.split()[-1] not in HIDDEN and f"`{path}" not in reference
               and f"{path} " not in reference]
    assert not missing, f"commands docs/commands.md does not mention: {missing}"


def test_the_readme_links_every_reference_file() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    unlinked = [p.name for p in sorted((ROOT / "docs").glob("*.md"))
                if f"](docs/{p.name})" not in readme]
    assert not unlinked, f"reference files the README does not link: {unlinked}"


def test_the_readme_stays_short() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 300, f"README.md has {lines} lines: move reference material into docs/"


def test_the_documented_examples_are_what_pcp_prints() -> None:
    """Each `$ pcp … --store store_layout/example` example shows pcp's real output."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("doc_examples", ROOT / "tools/doc_examples.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("doc_examples", module)
    spec.loader.exec_module(module)
    assert sum(len(module.examples(path)) for path in module.doc_files()) >= 6
    problems = module.check()
    assert not problems, "\n\n".join(problems) + "\n(python tools/doc_examples.py --write)"
