"""A real `pcp serve --http` on 127.0.0.1 (a free port the server picks), for the HTTP tests.

`running_server(store, *extra_args)` starts it as a subprocess, waits (bounded) for the line on
stderr that names its URL, and always stops it on exit. `npm_ci(folder)` installs the npm clients
a folder's package-lock.json pins (node_modules/ is git-ignored), once, under a file lock so
parallel test processes do not install over each other.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
EXAMPLE = REPO / "store_layout" / "example"
# Only a guard against a server that hangs: the wait is for its URL line, however long a loaded
# machine takes to print it (no test may depend on the machine's speed).
START_TIMEOUT = 600.0
URL_LINE = re.compile(r"serving MCP over HTTP at (https?://127\.0\.0\.1:\d+/mcp)")

CLIENTS = """\
# who may see what: see the MCP section of the README
clients:
  claude-desktop:
    scopes: ["user:ada-lumen", "project:tidewatch"]
    allow_sensitive: false
    allow_write: false
  tidewatch:
    description: a coding agent working on Tidewatch only
    scopes: ["project:tidewatch"]
# end of grants
"""


def make_store(root: Path) -> Path:
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".pcp"))
    manifest = root / "pcp.yaml"
    manifest.write_text(manifest.read_text().replace("clients: {}\n", CLIENTS))
    return root


def pcp(store: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PCP_STORE": str(store), "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "pcp_cli", *args], capture_output=True,
                          text=True, env=env, check=check, timeout=60)


def token(store: Path, client: str, *extra: str) -> str:
    return pcp(store, "grant", "token", client, *extra).stdout.strip()


@dataclass
class Running:
    url: str
    process: subprocess.Popen[bytes]
    stderr: Path

    @property
    def base(self) -> str:
        return self.url.removesuffix("/mcp")


@contextmanager
def running_server(store: Path, *extra: str) -> Iterator[Running]:
    stderr = store.parent / f"http-server-{time.monotonic_ns()}.log"
    env = {**os.environ, "PCP_STORE": str(store), "PYTHONPATH": str(REPO)}
    with stderr.open("wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "pcp_cli", "serve", "--http", "127.0.0.1:0", *extra],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env,
            cwd=store)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        url = None
        while url is None:
            found = URL_LINE.search(stderr.read_text(errors="replace"))
            if found:
                url = found.group(1)
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"pcp serve --http did not start:\n{stderr.read_text()}")
            time.sleep(0.05)
        # The URL is printed just before uvicorn starts accepting; wait until it does.
        import socket

        host, port = url.split("//")[1].split("/")[0].split(":")
        while True:
            try:
                socket.create_connection((host, int(port)), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield Running(url, process, stderr)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def npm_ci(folder: Path, installed: Path) -> None:
    """`npm ci` in `folder` unless `installed` (a file the install creates) exists. A failed
    install fails the test: it does not skip."""
    if installed.exists():
        return
    npm = shutil.which("npm")
    assert npm, "node is installed but npm is not: cannot install the npm clients"
    # pytest-xdist runs tests in several processes: one installs, the others wait for it.
    with FileLock(folder / ".npm-install.lock"):
        if installed.exists():
            return
        out = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                             cwd=folder, capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, f"npm ci in {folder.name} failed:\n{out.stderr[-2000:]}"
