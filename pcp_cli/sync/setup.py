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
from pcp_cli.sync.git import Repo, find_repo, run_git

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


def driver_command() -> str:
    """The command git runs to merge a head file: this interpreter, so a venv works without PATH."""
    return f"{shlex.quote(sys.executable)} -m pcp_cli merge-file %O %A %B %P"


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
    return {"repository": str(repo.top), "created": created, "merge_driver": driver_command()}


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
