"""The person's text editor: $VISUAL, then $EDITOR, then vi, run the way git runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pcp_cli.errors import UsageError


def editor_command() -> str:
    for name in ("VISUAL", "EDITOR"):
        value = (os.environ.get(name) or "").strip()
        if value:
            return value
    return "vi"


def run_editor(path: Path) -> None:
    """Open `path` in the editor and wait for it; UsageError if it fails (nothing is recorded).

    The command goes through the shell, as in git, so `EDITOR="code --wait"` works.
    """
    command = editor_command()
    if os.name == "nt":  # pragma: no cover - no POSIX shell
        import shlex

        args: list[str] | str = [*shlex.split(command, posix=False), str(path)]
        shell = False
    else:
        args, shell = [f'{command} "$@"', command, str(path)], True
    try:
        proc = subprocess.run(args, shell=shell)
    except OSError as exc:  # pragma: no cover - the shell itself is missing
        raise UsageError(f"cannot run the editor {command!r}: {exc.strerror}") from None
    if proc.returncode == 127:
        raise UsageError(f"the editor {command!r} was not found",
                         hint="set $EDITOR (or $VISUAL) to your editor's command")
    if proc.returncode != 0:
        raise UsageError(f"the editor ({command}) exited with status {proc.returncode}; "
                         "nothing was recorded")


def ask_yes(question: str) -> bool:
    """Ask on stderr, read the answer from stdin; yes unless 'n'. End of input means no."""
    sys.stderr.write(f"{question} [Y/n] ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    if not answer:
        sys.stderr.write("\n")
        return False
    return not answer.strip().lower().startswith("n")
