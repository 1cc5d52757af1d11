"""Helpers for the git sync tests: a bare remote, devices that clone it, and what to compare."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import ROOT, Result, cli

MARKER = "<<<<<<<"


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if check:
        assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
    return proc


def git_env(monkeypatch: Any) -> None:
    """A reproducible git identity, no user config, and pcp importable by git's merge driver."""
    for name, value in {
        "GIT_AUTHOR_NAME": "Ada Lumen", "GIT_AUTHOR_EMAIL": "ada@example.org",
        "GIT_COMMITTER_NAME": "Ada Lumen", "GIT_COMMITTER_EMAIL": "ada@example.org",
        "GIT_CONFIG_NOSYSTEM": "1", "PYTHONPATH": str(ROOT),
    }.items():
        monkeypatch.setenv(name, value)


@dataclass
class Device:
    name: str
    root: Path  # the store folder

    def pcp(self, *args: str, ok: bool = True, input: str | None = None) -> Result:
        result = cli(*args, "--store", str(self.root), input=input)
        if ok:
            assert result.code == 0, f"{self.name}: pcp {' '.join(args)}: {result.stderr}"
        return result

    def add(self, text: str, *extra: str) -> str:
        return self.pcp("add", text, *extra, "--json").json["page_id"]

    def sync(self, *extra: str) -> dict[str, Any]:
        return self.pcp("sync", *extra, "--json").json

    def status(self) -> dict[str, Any]:
        return self.pcp("status", "--json").json

    def diverged(self) -> set[str]:
        return {item["page_id"] for item in self.status()["diverged"]}

    def heads(self, page_id: str) -> list[str]:
        return self.pcp("history", page_id, "--json").json["heads"]

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return git(self.root, *args, check=check)

    def files(self, folder: str) -> dict[str, bytes]:
        base = self.root / folder
        return {p.relative_to(self.root).as_posix(): p.read_bytes()
                for p in sorted(base.rglob("*")) if p.is_file() and p.name != ".gitkeep"}

    def served_text(self) -> str:
        """Everything pcp serves: ls, and every page shown as JSON and as text."""
        out = [self.pcp("ls", "--status", "active", "--status", "superseded", "--status",
                        "archived", "--status", "tombstoned", "--json").stdout]
        for page_dir in sorted((self.root / "revisions").iterdir()):
            if page_dir.is_dir():
                out.append(self.pcp("show", page_dir.name, "--json").stdout)
                out.append(self.pcp("show", page_dir.name).stdout)
        return "\n".join(out)


def make_remote(tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "--quiet", "--bare", str(bare))
    return bare


def first_device(tmp_path: Path, bare: Path, name: str = "laptop") -> Device:
    root = tmp_path / name
    result = cli("init", "--git", str(root), "--owner", "ada", "--json")
    assert result.code == 0, result.stderr
    git(root, "remote", "add", "origin", str(bare))
    return Device(name, root)


def clone_device(tmp_path: Path, bare: Path, name: str, *, driver: bool) -> Device:
    git(tmp_path, "clone", "--quiet", str(bare), name)
    device = Device(name, tmp_path / name)
    if driver:
        result = cli("init", "--git", str(device.root))
        assert result.code == 0, result.stderr
    return device


def no_markers_anywhere(device: Device) -> None:
    for path in (device.root / "pages").rglob("*.md"):
        assert MARKER not in path.read_text("utf-8"), path
    assert MARKER not in device.served_text()


def fsck_clean(path: Path) -> None:
    proc = git(path, "fsck", "--full", "--strict", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "error" not in proc.stderr.lower() and "missing" not in proc.stdout.lower()


def write_editor(tmp_path: Path, text: str) -> str:
    """An $EDITOR script that replaces the file it is given with `text`."""
    script = tmp_path / "editor.py"
    script.write_text(
        "import sys, pathlib\n"
        f"pathlib.Path(sys.argv[1]).write_text({json.dumps(text)}, encoding='utf-8')\n")
    import sys as _sys

    return f"{_sys.executable} {script}"
