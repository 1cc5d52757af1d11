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
            async with Client(transport, mode=mode, read_timeout_seconds=300) as client:
                yield client

    return open_session


@pytest.fixture
def mcp_inprocess_session(
    mcp_store: Path, server_stderr: Path
) -> Callable[..., AbstractAsyncContextManager[Any]]:
    """`mcp_session`'s twin for tests of what the tools answer, not of the process: the server
    `pcp serve` would run (the same construction, grant and backend), connected in this process
    over the SDK's in-memory transport (JSON-RPC messages, the initialize handshake), so a session
    costs no process start-up (~1 s of CPU: python and the SDK's imports). The watch of the
    store's files stays off (it is process-wide), so every call's refresh scans. A module opts
    in with a `mcp_session` fixture returning this one; tests/mcp/test_mcp_serve.py and
    test_mcp_stdio.py keep the real process."""
    from mcp import Client

    from pcp_cli.mcp.commands import stdio_server

    @asynccontextmanager
    async def open_session(
        args: list[str] | None = None, env: dict[str, str] | None = None, mode: str = "legacy"
    ) -> AsyncIterator[Any]:
        assert not env, "an environment needs the real process: use the stdio mcp_session"
        options: dict[str, Any] = {"client_id": None, "scopes": [], "allow_write": False}
        rest = list(args or [])
        while rest:
            arg = rest.pop(0)
            if arg == "--allow-write":
                options["allow_write"] = True
            elif arg == "--client-id" and rest:
                options["client_id"] = rest.pop(0)
            elif arg == "--scope" and rest:
                options["scopes"].append(rest.pop(0))
            else:
                raise AssertionError(f"{arg}: not an in-process option; use the stdio session")
        with server_stderr.open("a") as errlog:
            server = stdio_server(mcp_store, log=errlog, watch=False, **options)
            async with Client(server, mode=mode, read_timeout_seconds=300) as client:
                yield client

    return open_session
