"""Git multi-device sync: status, resolve and sync; the git logic itself lives in
`pcp_cli/sync/`."""

from __future__ import annotations

from typing import Any

from pcp_cli.api.index import search_engine
from pcp_cli.store.store import Store


def sync_status(store: Store) -> dict[str, Any]:
    """`pcp status --json`: hand edits, diverged pages, conflicts, missing heads, git state."""
    from pcp_cli.sync.sync import status

    data = status(store)
    data["search_engine"] = search_engine(store)
    return data


def merge_proposal(store: Store, page_id: str) -> str:
    """The text `pcp resolve --edit` opens: every head's body, clearly delimited."""
    from pcp_cli.sync.heads import merge_proposal as proposal

    store.current(page_id)
    return proposal(store, page_id)


def resolve_page(store: Store, page_id: str, *, keep: str | None = None,
                 content: str | None = None) -> dict[str, Any]:
    """`pcp resolve`: a revision whose parents are all the page's heads."""
    from pcp_cli.sync.git import find_repo
    from pcp_cli.sync.heads import resolve

    return resolve(store, page_id, keep=keep, content=content, repo=find_repo(store.root))


def setup_git(store: Store, *, create: bool = False) -> dict[str, Any] | None:
    """`pcp init [--git]`: .gitignore, .gitattributes and the merge driver (None: no git)."""
    from pcp_cli.sync.setup import setup_git as setup

    return setup(store.root, create=create)


def merge_driver_problem(store: Store) -> str | None:
    """`pcp doctor`: why the git merge driver registered for this clone no longer runs (its
    venv deleted, pcp uninstalled), or None."""
    from pcp_cli.sync.setup import driver_problem

    return driver_problem(store.root)


def merge_head_file(base: str, ours: str, theirs: str, path: str) -> None:
    """`pcp merge-file %O %A %B %P`, the git merge driver: result in `ours`; NotMerged if not."""
    from pathlib import Path

    from pcp_cli.sync.driver import merge_files

    merge_files(Path(base), Path(ours), Path(theirs), path)
