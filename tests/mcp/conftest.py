"""Fixtures for driving an MCP server over real stdio, as an AI client would.

`mcp_session(args, env=None, mode="legacy")` is an async context manager yielding a connected
`mcp.Client`; the server command comes from the `mcp_server_command` fixture: the real
`pcp serve` on `mcp_store` (a copy of the example store with client grants). Modules that test
framework behaviour the real store cannot produce override it with `fake_server_command`.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

EXAMPLE = REPO / "store_layout" / "example"
CLIENTS = """\
clients:
  claude-desktop:
    scopes: ["user:ada-lumen", "project:tidewatch"]
    allow_sensitive: false
    allow_write: false
  writer:
    scopes: ["user:ada-lumen", "project:*"]
    allow_sensitive: true
    allow_write: true
  tidewatch:
    description: a coding agent working on Tidewatch only
    scopes: ["project:tidewatch"]
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def mcp_store(tmp_path: Path) -> Path:
    """A private copy of the example store (Ada Lumen) whose pcp.yaml grants three clients."""
    root = tmp_path / "store"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".pcp"))
    manifest = root / "pcp.yaml"
    text = manifest.read_text()
    assert "clients: {}\n" in text
    manifest.write_text(text.replace("clients: {}\n", CLIENTS))
    return root


@pytest.fixture
def mcp_server_command() -> list[str]:
    """argv that starts `pcp serve`; `--client-id` etc. are appended per session."""
    return [sys.executable, "-m", "pcp_cli", "serve"]


@pytest.fixture
def fake_server_command() -> list[str]:
    """argv of the stand-in server over an in-memory backend (framework-only tests)."""
    return [sys.executable, str(HERE / "fake_backend_server.py")]


@pytest.fixture
def server_stderr(tmp_path: Path) -> Path:
    return tmp_path / "server-stderr.log"


@pytest.fixture
def mcp_session(
    mcp_store: Path, mcp_server_command: list[str], server_stderr: Path
) -> Callable[..., AbstractAsyncContextManager[Any]]:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    @asynccontextmanager
    async def open_session(
        args: list[str] | None = None, env: dict[str, str] | None = None, mode: str = "legacy"
    ) -> AsyncIterator[Any]:
        params = StdioServerParameters(
            command=mcp_server_command[0],
            args=[*mcp_server_command[1:], *(args or [])],
            env={"PCP_STORE": str(mcp_store), "PYTHONPATH": str(REPO), **(env or {})},
            cwd=str(mcp_store),
        )
        with server_stderr.open("a") as errlog:
            transport = stdio_client(params, errlog=errlog)
            async with Client(transport, mode=mode, read_timeout_seconds=30) as client:
                yield client

    return open_session
