"""Check (or rewrite) the terminal examples in README.md and docs/*.md against what pcp prints.

An example is a line `$ pcp …` inside a ```text block, followed by its output up to the next `$ `
line or the end of the block. Only examples that read the bundled example store
(`--store store_layout/example`) are run, on a private copy of it (one of its own for an example
of several commands joined with `&&`, which may write), through bash so that pipes
(`| column -t -s $'\t'`, `| jq …`) work as a reader would type them. A command whose stdout is
not piped runs on a pseudo-terminal 100 columns wide, so it prints what a terminal shows.

    python tools/doc_examples.py          # report examples that differ (exit 1)
    python tools/doc_examples.py --write  # replace each example's output with the real one
"""

from __future__ import annotations

import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_STORE = "store_layout/example"
COLUMNS = 100
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass
class Example:
    path: Path
    line: int  # 0-based index of the `$ ` line
    end: int  # 0-based index one past the last output line
    command: str
    expected: str


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def examples(path: Path) -> list[Example]:
    lines = path.read_text(encoding="utf-8").split("\n")
    found: list[Example] = []
    in_text = False
    current: Example | None = None
    for i, line in enumerate(lines):
        if line.startswith("```"):
            if current:
                current.end = i
                found.append(current)
                current = None
            in_text = line.strip() == "```text" and not in_text
            continue
        if not in_text:
            continue
        if line.startswith("$ "):
            if current:
                current.end = i
                found.append(current)
            command = line[2:]
            current = Example(path, i, i, command, "") if _runnable(command) else None
    for ex in found:
        ex.expected = "\n".join(lines[ex.line + 1 : ex.end]).rstrip("\n")
    return found


def _runnable(command: str) -> bool:
    return command.startswith("pcp ") and f"--store {EXAMPLE_STORE}" in command


def _strip_comment(command: str) -> str:
    return re.sub(r"\s+#[^'\"]*$", "", command)


def run(command: str, workdir: Path) -> str:
    """What `command` prints, as a reader at a 100-column terminal would see it."""
    shell = (
        f'pcp() {{ "{sys.executable}" -m pcp_cli "$@"; }}\n' + _strip_comment(command) + "\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PCP_")}
    env.update(NO_COLOR="1", COLUMNS=str(COLUMNS), LINES="50", TERM="dumb", PCP_PAGER="cat")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    primary, secondary = pty.openpty()
    import fcntl
    import termios

    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 50, COLUMNS, 0, 0))
    proc = subprocess.Popen(
        ["bash", "-c", shell], cwd=workdir, env=env, stdin=subprocess.DEVNULL,
        stdout=secondary, stderr=subprocess.DEVNULL,
    )
    os.close(secondary)
    chunks = []
    while True:
        try:
            data = os.read(primary, 65536)
        except OSError:  # the other side closed
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(primary)
    text = b"".join(chunks).decode("utf-8").replace("\r\n", "\n")
    text = ANSI.sub("", text)
    # a cursor names the store's state, which differs between two copies of the example
    text = re.sub(r"(More: --cursor )\S+", r"\1…", text)
    return "\n".join(line.rstrip() for line in text.split("\n")).rstrip("\n")


def _own_copy(workdir: Path) -> Path:
    """A fresh copy of the example store for an example of several commands joined with `&&`
    (they change the store: `pcp propose && pcp review accept …`), so no other example sees
    what it wrote."""
    own = Path(tempfile.mkdtemp(dir=workdir))
    shutil.copytree(ROOT / EXAMPLE_STORE, own / EXAMPLE_STORE,
                    ignore=shutil.ignore_patterns(".pcp"))
    return own


def check(write: bool = False) -> list[str]:
    """Every example whose output differs from pcp's, as `file:line: command` lines."""
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        shutil.copytree(ROOT / EXAMPLE_STORE, workdir / EXAMPLE_STORE,
                        ignore=shutil.ignore_patterns(".pcp"))
        for path in doc_files():
            found = examples(path)
            lines = path.read_text(encoding="utf-8").split("\n")
            for ex in reversed(found):
                actual = run(ex.command, _own_copy(workdir) if " && " in ex.command
                             else workdir)
                if actual.rstrip() == ex.expected.rstrip():
                    continue
                where = f"{path.relative_to(ROOT)}:{ex.line + 1}"
                problems.append(f"{where}: {ex.command}\n--- documented\n{ex.expected}\n"
                                f"--- pcp prints\n{actual}")
                if write:
                    documented = lines[ex.line + 1 : ex.end]
                    blank = len(documented) - len("\n".join(documented).rstrip("\n").split("\n"))
                    lines[ex.line + 1 : ex.end] = actual.split("\n") + [""] * max(blank, 0)
            if write:
                path.write_text("\n".join(lines), encoding="utf-8")
    return problems


def main() -> int:
    write = "--write" in sys.argv[1:]
    problems = check(write=write)
    for problem in problems:
        print(problem, end="\n\n")
    if write and problems:
        print(f"rewrote {len(problems)} example(s)")
        return 0
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
