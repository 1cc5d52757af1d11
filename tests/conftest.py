"""Shared fixtures: an isolated environment, real store folders, and a `cli()` runner.

Tests use real temporary folders, never a mocked store. `cli()` runs the CLI in-process and
returns stdout, stderr, the exit status and parsed JSON; `run_pcp()` runs a real `pcp` process
for tests about processes.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# Property tests check what pcp answers, never how fast: hypothesis' per-example deadline (200
# ms) fails them on a loaded 2-core CI machine. Timings belong in bench/.
settings.register_profile("pcp", deadline=None)
settings.load_profile("pcp")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "store_layout" / "example"
# The project's own copies of the published PCP v1.1 schemas and examples: the suite never reads
# outside the repository (it must pass from a clone with nothing beside it).
V1_SCHEMAS = ROOT / "pcp_cli" / "model" / "schemas" / "v1"
V1_EXAMPLES = ROOT / "tests" / "data" / "pcp-v1" / "examples"
# ... and of the v1.2 draft's, which is what pcp emits by default (the v1.1 ones are for a reader
# that asks for v1.1).
V12_SCHEMAS = ROOT / "pcp_cli" / "model" / "schemas" / "v1.2"
V12_EXAMPLES = ROOT / "tests" / "data" / "pcp-v1.2" / "examples"
# The developers' workplace keeps the published originals beside the project (or beside the
# folder of worktrees it is checked out in); only the tests that compare our copies with them
# read these, and skip when they are absent.
SHARED = next((folder for folder in (ROOT.parent / "shared", ROOT.parent.parent / "shared")
               if folder.is_dir()), ROOT.parent / "shared")
SHARED_V1 = SHARED / "pcp-v1"
SHARED_V12 = SHARED / "pcp-v1.2"


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for name in list(os.environ):
        if name.startswith("PCP_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("PCP_LOCK_TIMEOUT", "60")
    # No command of a test starts a store monitor by itself (a background process that would
    # outlive the test): the monitor's own tests take this away and stop what they start.
    monkeypatch.setenv("PCP_MONITOR", "off")


@pytest.fixture(params=["whoosh", "tantivy"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test once per search engine (PCP_INDEX_ENGINE); tantivy is skipped when the
    `fast` extra is not installed. Use it with `pytestmark = pytest.mark.usefixtures("engine")`
    on modules that test what a search finds, never on whoosh's internals."""
    if request.param == "tantivy":
        pytest.importorskip("tantivy")
    monkeypatch.setenv("PCP_INDEX_ENGINE", request.param)
    return str(request.param)


@dataclass
class Result:
    stdout: str
    stderr: str
    code: int

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)

    @property
    def error_json(self) -> Any:
        return json.loads(self.stderr)


class _Stdin(io.TextIOWrapper):
    pass


def cli(*args: str, input: str | bytes | None = None, cwd: Path | None = None) -> Result:
    """Run `pcp ARGS` in this process; never raises for a non-zero exit."""
    from pcp_cli.cli.main import run

    out, err = io.StringIO(), io.StringIO()
    raw = input.encode("utf-8") if isinstance(input, str) else (input or b"")
    stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    saved = sys.stdout, sys.stderr, sys.stdin
    old_cwd = Path.cwd()
    sys.stdout, sys.stderr, sys.stdin = out, err, stdin
    try:
        if cwd is not None:
            os.chdir(cwd)
        code = run([str(a) for a in args])
    finally:
        sys.stdout, sys.stderr, sys.stdin = saved
        os.chdir(old_cwd)
    return Result(out.getvalue(), err.getvalue(), int(code))


def run_pcp(*args: str, input: str | None = None, cwd: Path | None = None,
            env: dict[str, str] | None = None, timeout: float = 120) -> Result:
    """Run a real `pcp` process (python -m pcp_cli)."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "pcp_cli", *map(str, args)],
        input=input, capture_output=True, text=True, cwd=cwd, env=full_env, timeout=timeout,
    )
    return Result(proc.stdout, proc.stderr, proc.returncode)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A new empty store owned by 'tester'."""
    root = tmp_path / "store"
    result = cli("init", str(root), "--owner", "tester")
    assert result.code == 0, result.stderr
    return root


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A private copy of the bundled example store."""
    root = tmp_path / "example"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".pcp"))
    return root


@contextmanager
def holding_the_lock(store: Path) -> Iterator[None]:
    """Another process holds the store's writer lock (tests/helpers/hold_lock.py) from when
    it says so until the block ends."""
    holder = subprocess.Popen([sys.executable, str(ROOT / "tests" / "helpers" / "hold_lock.py"),
                               str(store)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)


def snapshot(root: Path, *, skip_local: bool = True) -> dict[str, bytes]:
    """Every file under `root` (but .pcp/ and .git/) and its bytes."""
    files = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if skip_local and rel.parts and rel.parts[0] in (".pcp", ".git"):
            continue
        if path.is_file():
            files[rel.as_posix()] = path.read_bytes()
    return files


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """No store monitor started by a test may outlive the run: any still running on a store
    under this run's temporary folders is stopped, and the run fails."""
    try:
        base = str(session.config._tmp_path_factory.getbasetemp())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return
    left = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"monitor" in argv and b"run" in argv and any(
                a.decode(errors="replace").startswith(base) for a in argv):
            left.append(int(proc.name))
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, 15)
    if left:
        sys.stderr.write(f"\n{len(left)} store monitor(s) outlived the tests that started "
                         f"them (pids {left}); stopped now\n")
        session.exitstatus = 1
