"""A machine where git has no identity: `pcp init --git` says so at once, and `pcp sync` says
how to set one (exit 2, no traceback hint), changing nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import cli, snapshot


@pytest.fixture
def no_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No global or system git config and no identity in the environment (HOME is isolated
    by the conftest), as on a fresh machine."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-global-gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
                 "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    probe = tmp_path / "probe"
    probe.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=probe, check=True)
    if subprocess.run(["git", "var", "GIT_COMMITTER_IDENT"], cwd=probe,
                      capture_output=True).returncode == 0:
        pytest.skip("git finds an identity from this machine's host name")


@pytest.mark.slow
@pytest.mark.usefixtures("no_identity")
def test_without_a_git_identity_init_warns_and_sync_says_how_to_set_one(tmp_path: Path) -> None:
    root = tmp_path / "store"
    init = cli("init", str(root), "--owner", "ada", "--git")
    assert init.code == 0, init.stderr
    assert "git has no identity" in init.stderr and "git config" in init.stderr
    assert "git has no identity" not in init.stdout  # a warning: stderr only
    as_json = cli("init", str(root), "--git", "--json")
    assert as_json.json["git"]["identity_problem"]
    assert cli("add", "Tidewatch ingests readings", "--store", str(root)).code == 0
    before = snapshot(root)

    sync = cli("sync", "--store", str(root))
    assert sync.code == 2, sync.stderr
    first = sync.stderr.splitlines()[0]
    assert first.startswith("Error: git does not know who you are")
    assert 'git config --global user.name "Your Name"' in sync.stderr
    assert "git config --global user.email" in sync.stderr
    assert "without --global" in sync.stderr
    assert "--traceback" not in sync.stderr
    assert snapshot(root) == before
    error = cli("sync", "--json", "--store", str(root)).error_json["error"]
    assert error["code"] == "git_identity_missing" and error["exit_status"] == 2

    # set in the store's repository only: sync commits
    subprocess.run(["git", "config", "user.name", "Ada"], cwd=root, check=True)
    subprocess.run(["git", "config", "user.email", "ada@example.org"], cwd=root, check=True)
    done = cli("sync", "--json", "--store", str(root))
    assert done.code == 0, done.stderr
    assert done.json["committed"]
    again = cli("init", str(root), "--git")
    assert "git has no identity" not in again.stderr
