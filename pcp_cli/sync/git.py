"""A thin wrapper over the `git` executable for one store inside one work tree."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from pcp_cli.errors import ExitStatus, PcpError, UsageError
from pcp_cli.model.filenames import shown


class GitError(PcpError):
    """A git command failed in a way pcp did not expect."""

    exit_status = ExitStatus.UNEXPECTED
    code = "git_failed"


class NoGitIdentity(UsageError):
    """git has no author name and email to commit with (a fresh machine): an expected
    condition the person fixes with two `git config` lines, never a crash."""

    code = "git_identity_missing"


IDENTITY_FIX = ('`git config --global user.name "Your Name"` and `git config --global '
                'user.email you@example.org` (or without --global, in the store\'s repository '
                'only)')


def git_available() -> bool:
    return shutil.which("git") is not None


def run_git(args: list[str], cwd: Path, *, check: bool = True,
            input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run `git ARGS` in `cwd`; raise GitError (with git's own words) when `check` and it fails."""
    if not git_available():
        raise UsageError("git is not installed or not on PATH",
                         hint="install git to keep the store in a repository")
    env = {**os.environ, "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, input=input, env=env)
    if check and proc.returncode != 0:
        raise GitError(f"git {' '.join(args[:2])} failed: {_tail(proc)}",
                       hint="rerun with --traceback, or run the git command yourself to see why")
    return proc


def _tail(proc: subprocess.CompletedProcess[bytes]) -> str:
    words = (proc.stderr or proc.stdout or b"").decode("utf-8", "replace").strip()
    lines = [line for line in words.splitlines() if line.strip()]
    return " / ".join(lines[-3:]) or f"exit status {proc.returncode}"


@dataclass(frozen=True)
class Repo:
    """The git work tree a store lives in; `prefix` is the store folder relative to its top."""

    top: Path
    store_root: Path

    @property
    def prefix(self) -> str:
        rel = self.store_root.relative_to(self.top).as_posix()
        return "" if rel == "." else rel

    @property
    def pathspec(self) -> str:
        """The store folder as a git pathspec (commits and status are limited to it)."""
        return self.prefix or "."

    def git(self, *args: str, check: bool = True,
            input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        return run_git(list(args), self.top, check=check, input=input)

    def out(self, *args: str) -> str:
        return self.git(*args).stdout.decode("utf-8", "replace").strip()

    def git_path(self, name: str) -> Path:
        path = Path(self.out("rev-parse", "--git-path", name))
        return path if path.is_absolute() else self.top / path

    def in_progress(self) -> str | None:
        """'merge' or 'rebase' when one is unfinished, else None."""
        if self.git_path("MERGE_HEAD").exists():
            return "merge"
        if self.git_path("rebase-merge").exists() or self.git_path("rebase-apply").exists():
            return "rebase"
        return None

    def branch(self) -> str | None:
        """The current branch (None when HEAD is detached)."""
        proc = self.git("symbolic-ref", "--quiet", "--short", "HEAD", check=False)
        if proc.returncode != 0:
            return None
        return proc.stdout.decode().strip() or None

    def head(self) -> str | None:
        """The commit HEAD points at (None on a branch with no commits yet)."""
        proc = self.git("rev-parse", "--verify", "--quiet", "HEAD", check=False)
        if proc.returncode != 0:
            return None
        return proc.stdout.decode().strip() or None

    def identity_problem(self) -> str | None:
        """Why git could not commit here for want of a name or email (None: it can). Asks git
        itself (`git var`), so config, environment and git's own fallbacks all count."""
        for ident in ("GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"):
            proc = self.git("var", ident, check=False)
            if proc.returncode != 0:
                words = proc.stderr.decode("utf-8", "replace")
                fatal = [line for line in words.splitlines() if line.startswith("fatal:")]
                return (fatal[-1].removeprefix("fatal:").strip() if fatal
                        else "no user.name and user.email")
        return None

    def require_identity(self, doing: str) -> None:
        problem = self.identity_problem()
        if problem is not None:
            raise NoGitIdentity(f"git does not know who you are, so {doing} cannot commit "
                                f"({problem})", hint=f"set it once: {IDENTITY_FIX}")

    def remotes(self) -> list[str]:
        return [line for line in self.out("remote").splitlines() if line]

    def config_get(self, key: str) -> str | None:
        proc = self.git("config", "--get", key, check=False)
        return proc.stdout.decode().strip() if proc.returncode == 0 else None

    def changes(self) -> list[dict[str, str]]:
        """Uncommitted changes inside the store: [{path, status}], paths relative to the store."""
        raw = self.git("status", "--porcelain=v1", "-z", "--untracked-files=all", "--",
                       self.pathspec).stdout.decode("utf-8", "surrogateescape")
        items = raw.split("\0")
        found: list[dict[str, str]] = []
        i = 0
        while i < len(items):
            item = items[i]
            i += 1
            if len(item) < 4:
                continue
            status, path = item[:2], item[3:]
            if status[0] in "RC":
                i += 1  # the rename source follows
            found.append({"path": shown(self._store_rel(path)),  # a non-UTF-8 name escaped
                          "status": status.strip() or status})
        return found

    def unmerged(self) -> list[str]:
        """Unmerged paths (a conflicted merge) inside the store, relative to the store."""
        raw = self.git("diff", "--name-only", "-z", "--diff-filter=U", "--",
                       self.pathspec).stdout.decode("utf-8", "replace")
        return sorted({self._store_rel(p) for p in raw.split("\0") if p})

    def stage_blob(self, stage: int, store_rel: str) -> bytes | None:
        """The blob of an unmerged path at stage 1 (base), 2 (ours) or 3 (theirs)."""
        path = f"{self.prefix}/{store_rel}" if self.prefix else store_rel
        proc = self.git("show", f":{stage}:{path}", check=False)
        return proc.stdout if proc.returncode == 0 else None

    def _store_rel(self, top_rel: str) -> str:
        prefix = self.prefix
        return top_rel[len(prefix) + 1:] if prefix and top_rel.startswith(prefix + "/") \
            else top_rel


def find_repo(store_root: Path) -> Repo | None:
    """The git work tree holding `store_root`, or None when it is not in one."""
    if not git_available():
        return None
    proc = run_git(["rev-parse", "--show-toplevel"], store_root, check=False)
    if proc.returncode != 0:
        return None
    top = Path(proc.stdout.decode("utf-8").strip()).resolve()
    return Repo(top, store_root.resolve())


def require_repo(store_root: Path) -> Repo:
    repo = find_repo(store_root)
    if repo is None:
        raise UsageError(f"{store_root} is not inside a git work tree",
                         hint="run `pcp init --git` in the store to make it a repository")
    return repo
