"""Git multi-device sync: the repository setup, the head-file merge driver, status, resolve, sync.

A library module: it runs the `git` executable (never a git library), raises PcpErrors, and
never prints. The CLI front end is `pcp_cli/cli/sync.py`.

Why this is safe to merge: revisions, relations and events are immutable files with ULID names,
so two devices never write the same path there. Only a page's small head file
(`pages/<namespace>/<page_id>.md`) can conflict; it is a cache of one revision, so it can always
be rebuilt from the revision graph. Divergence is recorded where every device sees it: a page
whose graph has two heads.
"""

from __future__ import annotations

from pcp_cli.sync.git import GitError, Repo, find_repo

__all__ = ["GitError", "Repo", "find_repo"]
