"""`pcp status` and `pcp sync`: what is not yet shared, and sharing it through a git remote."""

from __future__ import annotations

from typing import Any

from pcp_cli.audit_anchor import read_anchor
from pcp_cli.errors import ExitStatus, PcpError, UsageError
from pcp_cli.model.filenames import shown
from pcp_cli.store.graph import summaries
from pcp_cli.store.store import Store
from pcp_cli.sync.git import GitError, Repo, find_repo, require_repo
from pcp_cli.sync.heads import divergences, head_file_report, record_unmerged_sides, repair
from pcp_cli.sync.setup import driver_registered


class GitBusy(PcpError):
    """The repository is in the middle of a merge or rebase that a person has to finish."""

    exit_status = ExitStatus.CONFLICT
    code = "git_busy"


class RemoteFailed(PcpError):
    """The remote could not be reached, or refused the push."""

    exit_status = ExitStatus.REMOTE_FAILED
    code = "remote_failed"


def status(store: Store) -> dict[str, Any]:
    """Everything not yet settled: unrecorded hand edits, divergence, conflicts, git changes."""
    store.refuse_replaced_folders()
    # The store monitor may vouch for pages/ here as for every read (a full scan otherwise):
    # what status lists comes from the catalog's unsettled rows, which either way are current.
    store.refresh()
    graphs = summaries(store)
    report = head_file_report(store, graphs)
    data: dict[str, Any] = {
        "store": str(store.root),
        "hand_edits": report["hand_edits"],
        "diverged": divergences(store, graphs),
        "conflicts": report["conflicts"],
        "missing_head_files": report["missing_head_files"],
        "invalid_files": report["invalid_files"],
        "git": git_status(store),
        "monitor": monitor_status(store),
    }
    git = data["git"]
    data["clean"] = not any(data[key] for key in (
        "hand_edits", "diverged", "conflicts", "missing_head_files", "invalid_files")) and (
        git is None or not (git["uncommitted"] or git["in_progress"] or git["unmerged"]))
    return data


def monitor_status(store: Store) -> dict[str, Any]:
    """The store monitor as `pcp status` reports it (store/changes/monitor.py's `status`), with the
    number of head files the catalog lists: whether commands ask a monitor what changed or
    check every page file, and if they check, why and what that cost the last time."""
    from pcp_cli.store.changes import monitor

    return {**monitor.status(store.root), "pages": store.catalog.count()}


def git_status(store: Store) -> dict[str, Any] | None:
    repo = find_repo(store.root)
    if repo is None:
        return None
    return {
        "repository": str(repo.top),
        "store_prefix": repo.prefix,
        "branch": repo.branch(),
        "commit": repo.head(),
        "in_progress": repo.in_progress(),
        "unmerged": repo.unmerged(),
        "uncommitted": repo.changes(),
        "remotes": repo.remotes(),
        "merge_driver": driver_registered(repo),
    }


def check_not_busy(repo: Repo) -> None:
    busy = repo.in_progress()
    if busy:
        raise GitBusy(
            f"the repository at {repo.top} is in the middle of a {busy}",
            hint=f"finish it first: `pcp resolve PAGE_ID` (or `pcp doctor --fix`) rebuilds "
            f"each unmerged head file from the revision graph; then `git add -A` and "
            f"`git {'commit' if busy == 'merge' else 'rebase --continue'}` (or "
            f"`git {busy} --abort`); then run `pcp sync` again")
    if repo.unmerged():
        raise GitBusy("the repository has unmerged files",
                      hint="resolve them (`pcp doctor --fix` for head files), `git add` them, "
                      "and run `pcp sync` again")


def sync(store: Store, *, remote: str | None = None, message: str | None = None
         ) -> dict[str, Any]:
    """Record hand edits, commit, pull (merge), rebuild head files, report divergence, push."""
    repo = require_repo(store.root)
    check_not_busy(repo)
    repo.require_identity("pcp sync")  # before anything is recorded: nothing changes
    report: dict[str, Any] = {
        "store": str(store.root), "repository": str(repo.top), "remote": None,
        "branch": repo.branch(), "hand_edits": [], "committed": [], "merged": None,
        "repaired": [], "recorded_from_conflicts": [], "recorded_after_merge": [],
        "pushed": False, "diverged": [],
        "merge_driver": driver_registered(repo),
    }
    with store.locked():
        store.hand_edits.clear()
        store.refresh("full")
        report["hand_edits"] = [
            {"path": e.path, "page_id": e.page_id, "revision_id": e.revision_id,
             "adopted": e.adopted} for e in store.hand_edits]
        report["repaired"] += repair(store)
        _commit(repo, message or _default_message(repo), report)
        name = _pick_remote(repo, remote)
        report["remote"] = name
        branch = repo.branch()
        if name is None or branch is None:
            if branch is None:
                raise UsageError("HEAD is detached; pcp sync needs a branch",
                                 hint="`git switch BRANCH` first")
            report["diverged"] = divergences(store)
            return report
        if _remote_has_branch(repo, name, branch):
            report["merged"] = _merge(store, repo, name, branch, report)
            store.hand_edits.clear()
            report["repaired"] += repair(store)  # records edits the merge brought, first
            report["recorded_after_merge"] = [
                {"path": e.path, "page_id": e.page_id, "revision_id": e.revision_id}
                for e in store.hand_edits]
            store.refresh("full")
            _commit(repo, "pcp sync: rebuild head files from the revision graph", report)
        report["diverged"] = divergences(store)
        _push(repo, name, branch)
        report["pushed"] = True
    return report


def _default_message(repo: Repo) -> str:
    import socket  # here: `pcp status` imports this module, and only a sync names the host

    host = socket.gethostname().split(".")[0] or "a device"
    return f"pcp sync from {host}"


def _commit(repo: Repo, message: str, report: dict[str, Any]) -> None:
    repo.git("add", "-A", "--", repo.pathspec)
    staged = repo.git("diff", "--cached", "--name-only", "--", repo.pathspec).stdout
    if not staged.strip():
        return
    counts = _count(staged.decode("utf-8", "replace").splitlines(), repo.prefix)
    body = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)
    # The MCP audit chain's newest hash, where a cut of the local log cannot reach it.
    anchor = read_anchor(repo.store_root)
    trailer = ["-m", f"Audit-Chain-Head: {anchor['hash']}"] if anchor else []
    repo.git("commit", "--quiet", "--no-verify", "-m", message, "-m", f"Changed: {body}.",
             *trailer, "--only", "--", repo.pathspec)
    report["committed"].append(repo.head())


def _count(paths: list[str], prefix: str) -> dict[str, int]:
    counts = {"revisions": 0, "relations": 0, "events": 0, "head files": 0, "other files": 0}
    for path in paths:
        rel = path[len(prefix) + 1:] if prefix and path.startswith(prefix + "/") else path
        top = rel.split("/", 1)[0]
        key = {"revisions": "revisions", "relations": "relations", "events": "events",
               "pages": "head files"}.get(top, "other files")
        counts[key] += 1
    return counts


def _pick_remote(repo: Repo, remote: str | None) -> str | None:
    remotes = repo.remotes()
    if remote is not None:
        if remote not in remotes:
            raise UsageError(f"no git remote named {remote!r}",
                             hint=f"remotes here: {', '.join(remotes) or '(none)'}; add one with "
                             "`git remote add NAME URL`")
        return remote
    branch = repo.branch()
    upstream = repo.config_get(f"branch.{branch}.remote") if branch else None
    if upstream in remotes:
        return upstream
    if "origin" in remotes:
        return "origin"
    if len(remotes) == 1:
        return remotes[0]
    if remotes:
        raise UsageError(f"several remotes ({', '.join(remotes)}) and none is this branch's "
                         "upstream", hint="pass --remote NAME")
    return None


def _remote_has_branch(repo: Repo, remote: str, branch: str) -> bool:
    proc = repo.git("ls-remote", "--heads", remote, f"refs/heads/{branch}", check=False)
    if proc.returncode != 0:
        raise RemoteFailed(
            f"cannot reach remote {remote!r}: {_words(proc)}",
            hint="your changes are committed locally; run `pcp sync` again when the remote is "
            "reachable")
    return bool(proc.stdout.strip())


def _merge(store: Store, repo: Repo, remote: str, branch: str,
           report: dict[str, Any]) -> str:
    """Fetch and merge the remote branch; rebuild conflicted head files. Returns how it went."""
    before = repo.head()
    fetch = repo.git("fetch", "--quiet", remote, f"refs/heads/{branch}", check=False)
    if fetch.returncode != 0:
        raise RemoteFailed(f"cannot fetch from {remote!r}: {_words(fetch)}",
                           hint="your changes are committed locally; run `pcp sync` again later")
    merge = repo.git("merge", "--no-edit", "-m", f"pcp sync: merge {remote}/{branch}",
                     "FETCH_HEAD", check=False)
    if merge.returncode == 0:
        after = repo.head()
        return "up_to_date" if after == before else "merged"
    if repo.in_progress() != "merge":
        raise GitError(f"git merge failed: {_words(merge)}",
                       hint="fix what git reports, then run `pcp sync` again")
    everywhere = repo.git("diff", "--name-only", "-z", "--diff-filter=U").stdout.decode(
        "utf-8", "surrogateescape")
    prefix = f"{repo.prefix}/" if repo.prefix else ""
    others = [shown(p) for p in everywhere.split("\0") if p and not (
        p.startswith(prefix + "pages/") and p.endswith(".md"))]
    if others:
        raise GitBusy(
            "the merge stopped on files pcp cannot rebuild: " + ", ".join(sorted(others)),
            hint="resolve them by hand, `pcp doctor --fix`, `git add -A`, `git commit`, then "
            "`pcp sync` again")
    report["recorded_from_conflicts"] += record_unmerged_sides(store, repo)
    report["repaired"] += repair(store)
    repo.git("add", "-A", "--", repo.pathspec)
    repo.git("commit", "--quiet", "--no-verify", "--no-edit")
    report["committed"].append(repo.head())
    return "merged_with_repairs"


def _push(repo: Repo, remote: str, branch: str) -> None:
    proc = repo.git("push", "--quiet", "--set-upstream", remote, f"{branch}:{branch}",
                    check=False)
    if proc.returncode != 0:
        words = _words(proc)
        rejected = "rejected" in words or "fetch first" in words
        raise RemoteFailed(
            f"{'the remote refused the push' if rejected else 'cannot push'} to {remote!r}: "
            f"{words}",
            hint="another device pushed meanwhile: run `pcp sync` again" if rejected else
            "your changes are committed locally; run `pcp sync` again when the remote is "
            "reachable")


def _words(proc: Any) -> str:
    text = (proc.stderr or proc.stdout or b"").decode("utf-8", "replace").strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " / ".join(lines[-2:]) or f"exit status {proc.returncode}"
