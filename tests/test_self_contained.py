"""The suite passes from a clone with nothing beside it, as CI and every user run it.

The published PCP v1 originals stand beside the project only in the developers' workplace; a test
that read them there would fail everywhere else. These tests copy the project's own files into an
empty folder and run pytest there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow

# Tests that read the v1 schemas, the v1 examples or the example store.
DATA_READERS = [
    "tests/test_example_store.py",
    "tests/test_archive_import.py",
    "tests/render/test_portable.py",
    "tests/adapters/test_adapters_detect.py",
]


def project_files() -> list[str]:
    """The files a clone would have: tracked plus new ones git does not ignore."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: cannot tell which files a clone would have")
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout.decode()
    return [name for name in out.split("\0") if name and (ROOT / name).is_file()]


@pytest.fixture(scope="module")
def lone_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    clone = tmp_path_factory.mktemp("lone") / "pcp"
    for name in project_files():
        target = clone / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    assert not (clone.parent / "shared").exists()
    # A checkout of its own, as a clone is (some tests ask git what is tracked).
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(git + ["init", "-q"], cwd=clone, check=True)
    subprocess.run(git + ["add", "-A"], cwd=clone, check=True)
    subprocess.run(git + ["commit", "-q", "-m", "lone clone"], cwd=clone, check=True)
    return clone


def pytest_in(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PCP_", "PYTEST_"))}
    env["PYTHONPATH"] = str(clone)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-m", "", *args],
        cwd=clone, env=env, capture_output=True, text=True, timeout=600,
    )


def test_the_whole_suite_collects_in_a_lone_clone(lone_clone: Path) -> None:
    run = pytest_in(lone_clone, "--collect-only")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "error" not in run.stdout.lower().splitlines()[-1], run.stdout[-3000:]


def test_the_data_reading_tests_pass_in_a_lone_clone(lone_clone: Path) -> None:
    run = pytest_in(lone_clone, *DATA_READERS)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert " passed" in run.stdout.splitlines()[-1]
