"""Every command has help text and is in the reference (docs/commands.md); the examples in the
README and docs/ are what pcp prints; and the other direction: every command and option the
README and docs/ show really exists."""

from __future__ import annotations

import re

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


def _params(command: object) -> list[object]:
    return [p for p in getattr(command, "params", []) if not getattr(p, "hidden", False)]


def test_every_option_and_argument_has_help_text() -> None:
    missing = [f"{path} {param.opts[0]}" for path, command in _commands()
               for param in _params(command)
               if not (getattr(param, "help", None) or "").strip()]
    assert not missing, f"options/arguments without help: {missing}"


def test_metavars_are_words_people_read() -> None:
    """`TEXT`, `NS`, `PAGE`: never a Python type such as `<list[str]>` or `LIST[STR]`."""
    from tests.conftest import cli

    bad = []
    for path, _command in _commands():
        shown = cli(*path.split()[1:], "--help").stdout.split("Examples:")[0]
        # typer prints an argument's type beside its name (`QUERY <str>`); everywhere else,
        # and for every option, the metavar is a word.
        usage = shown.split("\n")[0]
        options = shown.split("Options:")[-1]
        for part, text in (("usage", usage), ("options", options)):
            found = re.findall(r"<(?:str|int|float|bool|path|list\[[a-z]+\])>|LIST\[|INTEGER|"
                               r"FLOAT", text)
            bad += [f"{path} {part}: {mark}" for mark in found]
        bad += [f"{path}: {mark}" for mark in re.findall(r"list\[[a-z]+\]", shown)]
    assert not bad, f"unreadable metavars: {bad}"


def test_every_command_has_an_example_and_no_cut_descriptions() -> None:
    """Each command's --help ends with examples (typer's epilog); command lists wrap their
    descriptions instead of cutting them with "…"."""
    from tests.conftest import cli

    no_example = [path for path, command in _commands()
                  if path.split()[-1] not in HIDDEN and "Examples:" not in (
                      getattr(command, "epilog", None) or "")]
    assert not no_example, f"commands without an example in --help: {no_example}"
    for args in (["--help"], ["keystone", "--help"], ["timeline", "--help"],
                 ["review", "--help"], ["profile", "--help"]):
        listing = cli(*args).stdout.split("Commands:")[-1]
        assert "..." not in listing, listing
        assert not [line for line in listing.splitlines() if line.endswith("…")], listing


def _documented_invocations(text: str) -> list[str]:
    """Every `pcp …` a document shows: inline code spans and the lines of its code blocks."""
    import re

    spans = re.findall(r"`(pcp [^`]+)`", text)
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", text, re.MULTILINE | re.DOTALL):
        spans += [line.removeprefix("$ ").strip() for line in block.splitlines()]
    parts = [part.strip() for span in spans for part in span.split("; ")]
    # "pcp serve: …" and "pcp 0.2.0" are what pcp prints, not commands
    return [part for part in parts if part.startswith("pcp ") and len(part.split()) > 1
            and not part.split()[1].endswith(":") and part.split()[1][:1].isalpha()
            or part.startswith("pcp -")]


def test_the_documented_commands_and_options_really_exist() -> None:
    """Every `pcp WORD …` in the README and docs/ names a real command (and a real subcommand
    of a group), and every `--option` shown with it is one that command takes."""
    import shlex

    root = typer.main.get_command(build_app())
    wrong: list[str] = []
    invocations = [(path.name, text)
                   for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
                   for text in _documented_invocations(path.read_text(encoding="utf-8"))]
    assert len(invocations) > 50  # the parse found the documents' commands
    invocations = [(where, part.strip()) for where, text in invocations  # one per command
                   for part in text.split(" && ") if part.strip().startswith("pcp ")]
    for where, text in invocations:
        try:
            words = shlex.split(text.split(" | ")[0].split(" # ")[0])
        except ValueError:
            words = text.split()
        command: object = root
        path = ["pcp"]
        rest = words[1:]
        while rest and getattr(command, "commands", None) is not None:
            word = rest[0]
            if word.startswith("-") or word in ("…", "..."):
                break
            sub = command.commands.get(word)  # type: ignore[attr-defined]
            if sub is None:
                if word.isupper() or word.startswith(("[", "<", "{")):
                    break  # a placeholder for a group's subcommand
                wrong.append(f"{where}: {text!r}: no command {' '.join([*path, word])!r}")
                command = None
                break
            command, path, rest = sub, [*path, word], rest[1:]
        if command is None or getattr(command, "commands", None) is not None:
            continue
        known = {"--help", "-h", "--traceback", "--version"}
        for param in getattr(command, "params", []):
            known.update(getattr(param, "opts", []))
            known.update(getattr(param, "secondary_opts", []))
        for word in rest:
            option = word.strip("[]()`,.;").split("=", 1)[0]
            if option.startswith("--") and len(option) > 2 and option not in known:
                wrong.append(f"{where}: {text!r}: {' '.join(path)} has no option {option}")
    assert not wrong, "\n".join(wrong)
