"""Make a store's git repository pcp-aware: ignore `.pcp/`, route head files to the merge driver.

`.gitignore` and `.gitattributes` live in the store folder (so they travel with every clone and
work when the store is a subfolder of a bigger repository). The merge driver itself is named in
the repository's own config (`.git/config`), which git never copies into a clone: each device
registers it once with `pcp init --git`; `pcp sync` copes without it.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from pcp_cli.store.atomic import write_atomic
from pcp_cli.sync.git import IDENTITY_FIX, Repo, find_repo, run_git

DRIVER = "pcp"
GITIGNORE_LINE = ".pcp/"
ATTRIBUTES_LINE = "pages/**/*.md merge=pcp"
ATTRIBUTES = (
    "# pcp: a page's head file is rebuilt from its revisions, never merged line by line.\n"
    f"{ATTRIBUTES_LINE}\n"
    "# Immutable files: never merged, never end-of-line converted.\n"
    "revisions/** -text\n"
    "relations/** -text\n"
    "events/** -text\n"
)


STABLE_NAME = "pcp-cli"  # the console script `pip`/`pipx`/`uv tool` install beside `pcp`
DRIVER_ARGS = "merge-file %O %A %B %P"


def driver_command() -> str:
    """The command git runs to merge a head file.

    `pcp-cli merge-file …` when a pcp-cli is on PATH: found by name when git runs it, so it
    keeps working after the venv it was registered from is gone, as long as pcp is installed
    somewhere on PATH (`pipx install`, `uv tool install`). The name `pcp-cli`, not `pcp`,
    because Debian's Performance Co-Pilot also installs a `/usr/bin/pcp`. Without one on PATH,
    this interpreter (`python -m pcp_cli`), which lasts only as long as its environment.
    """
    import shutil

    if shutil.which(STABLE_NAME):
        return f"{STABLE_NAME} {DRIVER_ARGS}"
    return f"{shlex.quote(sys.executable)} -m pcp_cli {DRIVER_ARGS}"


def driver_is_stable(command: str) -> bool:
    return command.startswith(f"{STABLE_NAME} ")


def driver_problem(store_root: Path) -> str | None:
    """Why the registered merge driver would not run (None: it runs, or git is not used).

    Runs the registered command's program with `--version`, as git would run it (through the
    shell, from the repository), and expects pcp to answer.
    """
    import subprocess

    repo = find_repo(store_root)
    if repo is None:
        return None
    command = repo.config_get(f"merge.{DRIVER}.driver")
    if not command:
        return None  # not registered on this device: `pcp sync` copes, `pcp status` says so
    program = command.split(" merge-file", 1)[0]
    try:
        proc = subprocess.run(f"{program} --version", shell=True, cwd=repo.top,
                              capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the registered merge driver `{command}` does not run ({exc})"
    answer = proc.stdout.decode("utf-8", "replace").strip()
    if proc.returncode != 0 or not answer.startswith("pcp "):
        why = "not found" if proc.returncode == 127 else (
            f"exit status {proc.returncode}" if proc.returncode else f"it answered {answer!r}")
        return f"the registered merge driver `{command}` no longer runs ({why})"
    return None


def setup_git(store_root: Path, *, create: bool = False) -> dict[str, Any] | None:
    """Set up git for the store; `git init` first when `create`. None when not in a work tree."""
    repo = find_repo(store_root)
    created = False
    if repo is None:
        if not create:
            return None
        run_git(["init", "--quiet"], store_root)
        created = True
        repo = find_repo(store_root)
        assert repo is not None
    _ensure_lines(store_root / ".gitignore", [GITIGNORE_LINE],
                  "# local, derived state: never committed\n")
    _ensure_lines(store_root / ".gitattributes", [ATTRIBUTES_LINE], ATTRIBUTES)
    register_driver(repo)
    problem = repo.identity_problem()  # said now, not at the first `pcp sync`
    return {"repository": str(repo.top), "created": created, "merge_driver": driver_command(),
            "identity_problem": problem, "identity_fix": IDENTITY_FIX if problem else None}


def register_driver(repo: Repo) -> None:
    repo.git("config", "--local", f"merge.{DRIVER}.name",
             "pcp page head files (picks a head from the revision graph)")
    repo.git("config", "--local", f"merge.{DRIVER}.driver", driver_command())


def driver_registered(repo: Repo) -> bool:
    return bool(repo.config_get(f"merge.{DRIVER}.driver"))


def _ensure_lines(path: Path, lines: list[str], fresh: str) -> None:
    """Create `path` with `fresh`, or append the missing `lines` to what a person wrote there."""
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        write_atomic(path, fresh)
        return
    present = {line.strip() for line in text.splitlines()}
    missing = [line for line in lines if line not in present]
    if missing:
        sep = "" if not text or text.endswith("\n") else "\n"
        write_atomic(path, text + sep + "".join(f"{line}\n" for line in missing))
