"""pcp served to the npm clients people run, at the versions pinned in
tests/mcp/npm_clients/package-lock.json:

- the `mcp-remote` bridge (what `pcp mcp-config --for claude-desktop --http` configures), run
  through npx as the configuration runs it, as a stdio MCP server that the MCP Python SDK's
  stdio client drives, against a real `pcp serve --http`;
- the MCP Inspector CLI at the version npx picks on Node 20 (0.15.0: later ones need Node 22),
  over stdio, which sends every `--tool-arg` as a string, and over HTTP through mcp-remote
  (0.15 has no `--header` option);
- the Inspector CLI at the version npx picks on Node 22 (tests/mcp/node22_clients/, which also
  installs that Node from npm), over HTTP with an `Authorization` header.

Skipped only when `node` is not installed; the first test to need a folder runs `npm ci` in it
(node_modules/ is git-ignored), and a failed install fails the test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.mcp.http_helpers import REPO, make_store, npm_ci, pcp, running_server, token

CLIENT_DIR = Path(__file__).resolve().parent / "npm_clients"
INSTALLED = CLIENT_DIR / "node_modules" / "mcp-remote" / "package.json"
INSPECTOR = CLIENT_DIR / "node_modules" / "@modelcontextprotocol" / "inspector" / "package.json"
NODE22_DIR = Path(__file__).resolve().parent / "node22_clients"
NODE22_INSPECTOR = NODE22_DIR / "node_modules" / "@modelcontextprotocol" / "inspector"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _install() -> None:
    npm_ci(CLIENT_DIR, INSTALLED)


def _version(package_json: Path) -> str:
    return str(json.loads(package_json.read_text())["version"])


@pytest.mark.anyio
async def test_mcp_remote_bridges_a_client_to_pcp_serve_http(tmp_path: Path) -> None:
    """The entry `pcp mcp-config --for claude-desktop --http` prints, as Claude Desktop runs it.
    The bridge opens a GET event stream as it starts and would hold it open; initialize,
    tools/list and calls right after, four at once (the per-client cap), all succeed: the
    stream takes none of the client's requests in flight."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    _install()
    store = make_store(tmp_path / "store")
    secret = token(store, "claude-desktop")
    with running_server(store) as server:
        # The entry Claude Desktop is given, with the token pasted in; npx finds mcp-remote in
        # npm_clients/ (installed above) and downloads nothing.
        entry = json.loads(pcp(store, "mcp-config", "claude-desktop", "--for", "claude-desktop",
                               "--http", server.url, "--json").stdout)
        bridge = entry["config"]["mcpServers"]["pcp"]
        placeholder = "<token from: pcp grant token claude-desktop>"
        params = StdioServerParameters(
            command=bridge["command"], cwd=str(CLIENT_DIR),
            args=[arg.replace(placeholder, secret) for arg in bridge["args"]],
            env={"MCP_REMOTE_CONFIG_DIR": str(tmp_path / "mcp-auth"),
                 "npm_config_cache": str(tmp_path / "npm-cache")},
        )
        bridge_log = tmp_path / "mcp-remote.log"
        with bridge_log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog),
                              read_timeout_seconds=60) as client:
                listing = await client.list_tools()
                first = await client.call_tool("pcp_search", {"query": "tidewatch", "limit": 3})
                together: list[Any] = []

                async def stats() -> None:
                    together.append(await client.call_tool("pcp_stats", {}))

                async with anyio.create_task_group() as group:  # at the cap (4) at once
                    for _ in range(4):
                        group.start_soon(stats)
                scopes = await client.call_tool("pcp_list_scopes", {})
        assert server.process.poll() is None
        server_log = server.stderr.read_text()
    names = {tool.name for tool in listing.tools}
    assert {"pcp_search", "pcp_read_pages"} <= names and "pcp_write_page" not in names
    assert first.is_error is False, first.content
    assert first.structured_content["results"], first.structured_content
    assert len(together) == 4 and all(r.is_error is False for r in together)
    assert sorted(s["namespace"] for s in scopes.structured_content["scopes"]) == [
        "project:tidewatch", "user:ada-lumen"]
    assert "429" not in bridge_log.read_text() and "too many" not in server_log


def _inspector(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PCP_STORE": str(store), "PYTHONPATH": str(REPO),
           "npm_config_cache": str(store.parent / "npm-cache")}
    return subprocess.run(
        ["npx", "--no-install", "@modelcontextprotocol/inspector", "--cli",
         sys.executable, "-m", "pcp_cli", "serve", "--client-id", "claude-desktop",
         "--store", str(store), *args],
        cwd=CLIENT_DIR, capture_output=True, text=True, env=env, timeout=120)


def test_the_inspector_cli_calls_a_tool_with_string_arguments(tmp_path: Path) -> None:
    """Inspector 0.15 sends `limit=2` as the string "2": taken as the integer the schema asks
    for; a string that is no integer is still refused, naming the parameter."""
    _install()
    assert _version(INSPECTOR) == "0.15.0"
    store = make_store(tmp_path / "store")
    out = _inspector(store, "--method", "tools/call", "--tool-name", "pcp_search",
                     "--tool-arg", "query=tidewatch", "--tool-arg", "limit=2")
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout)
    assert result.get("isError") is not True, result
    found = result["structuredContent"]
    assert 1 <= len(found["results"]) <= 2 and found["count"] >= len(found["results"])

    bad = _inspector(store, "--method", "tools/call", "--tool-name", "pcp_search",
                     "--tool-arg", "query=tidewatch", "--tool-arg", "limit=two")
    refused = json.loads(bad.stdout)
    assert refused["isError"] is True
    assert "limit must be an integer or null, not 'two'" in refused["content"][0]["text"]

    listed = _inspector(store, "--method", "tools/list")
    assert listed.returncode == 0, listed.stderr[-3000:]
    assert "pcp_search" in {t["name"] for t in json.loads(listed.stdout)["tools"]}


def test_the_inspector_cli_names_scopes_and_exclude_stale_as_strings(tmp_path: Path) -> None:
    """The arguments issue #34 added, as Inspector 0.15 sends them (every --tool-arg a string):
    `scopes=*` is the schema's "*" (every scope of the grant), `exclude_stale=true` the
    boolean; a call naming no scope reads the grant's default scope only, and says so."""
    _install()
    store = make_store(tmp_path / "store")
    plain = _inspector(store, "--method", "tools/call", "--tool-name", "pcp_search",
                       "--tool-arg", "query=tidewatch")
    wide = _inspector(store, "--method", "tools/call", "--tool-name", "pcp_search",
                      "--tool-arg", "query=tidewatch", "--tool-arg", "scopes=*",
                      "--tool-arg", "exclude_stale=true")
    stats = _inspector(store, "--method", "tools/call", "--tool-name", "pcp_stats",
                       "--tool-arg", "scopes=*")
    listed = _inspector(store, "--method", "tools/list")
    for out in (plain, wide, stats, listed):
        assert out.returncode == 0, out.stderr[-3000:]
    narrow = json.loads(plain.stdout)["structuredContent"]["filters_applied"]
    assert narrow["scopes"] == ["user:ada-lumen"] and "default" in narrow["scope_source"]
    every = json.loads(wide.stdout)["structuredContent"]["filters_applied"]
    assert every["scopes"] == ["project:tidewatch", "user:ada-lumen"]
    assert every["exclude_stale"] is True
    counted = json.loads(stats.stdout)["structuredContent"]
    assert set(counted["by_namespace"]) == {"project:tidewatch", "user:ada-lumen"}
    assert counted["protocols"]["portable_context_protocol"]["served"] == "1.2"
    search = next(t for t in json.loads(listed.stdout)["tools"] if t["name"] == "pcp_search")
    assert {"const": "*"} in search["inputSchema"]["properties"]["scopes"]["anyOf"]


def test_the_inspector_cli_0_15_over_http_through_mcp_remote(tmp_path: Path) -> None:
    """Inspector 0.15 has no --header option; on Node 20 it reaches `pcp serve --http` through
    the mcp-remote bridge, as docs/mcp.md says."""
    _install()
    store = make_store(tmp_path / "store")
    secret = token(store, "claude-desktop")
    env = {**os.environ, "MCP_REMOTE_CONFIG_DIR": str(tmp_path / "mcp-auth"),
           "npm_config_cache": str(tmp_path / "npm-cache")}
    with running_server(store) as server:
        out = subprocess.run(
            ["npx", "--no-install", "@modelcontextprotocol/inspector", "--cli",
             "npx", "--no-install", "mcp-remote", server.url,
             "--header", f"Authorization:Bearer {secret}",
             "--method", "tools/call", "--tool-name", "pcp_search",
             "--tool-arg", "query=tidewatch", "--tool-arg", "limit=2"],
            cwd=CLIENT_DIR, capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout)
    assert result.get("isError") is not True, result
    assert 1 <= len(result["structuredContent"]["results"]) <= 2


def test_the_inspector_cli_on_node_22_over_http_with_a_bearer_header(tmp_path: Path) -> None:
    npm_ci(NODE22_DIR, NODE22_INSPECTOR / "package.json")
    node = NODE22_DIR / "node_modules" / ".bin" / "node"
    version = subprocess.run([str(node), "--version"], capture_output=True, text=True)
    assert version.stdout.startswith("v22."), version
    store = make_store(tmp_path / "store")
    secret = token(store, "claude-desktop")
    launcher = NODE22_INSPECTOR / "clients" / "launcher" / "build" / "index.js"
    env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ['PATH']}",
           "MCP_CATALOG_PATH": str(tmp_path / "inspector-catalog.json")}
    with running_server(store) as server:
        out = subprocess.run(
            [str(node), str(launcher), "--cli", server.url,
             "--header", f"Authorization: Bearer {secret}",
             "--method", "tools/call", "--tool-name", "pcp_search",
             "--tool-arg", "query=tidewatch", "--tool-arg", "limit=2"],
            cwd=NODE22_DIR, capture_output=True, text=True, env=env, timeout=120)
        without = subprocess.run(
            [str(node), str(launcher), "--cli", server.url, "--method", "tools/list"],
            cwd=NODE22_DIR, capture_output=True, text=True, env=env, timeout=120)
    assert _version(NODE22_INSPECTOR / "package.json") == "2.12.0"
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout)
    assert result.get("isError") is not True, result
    assert 1 <= len(result["structuredContent"]["results"]) <= 2
    assert without.returncode != 0  # no token: refused (the Inspector then wants OAuth)
