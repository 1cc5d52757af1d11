"""`pcp serve --http` driven by the official TypeScript SDK's streamable HTTP client
(`@modelcontextprotocol/sdk`, pinned in tests/mcp/ts_client/package-lock.json).

Skipped only when `node` is not installed. When the SDK is not installed yet, the test runs
`npm ci` in tests/mcp/ts_client/ itself (node_modules/ is git-ignored), so CI needs no extra
step; if that install fails the test fails, it does not skip.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.mcp.http_helpers import make_store, npm_ci, pcp, running_server, token

CLIENT_DIR = Path(__file__).resolve().parent / "ts_client"
SDK = CLIENT_DIR / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
]


def _install_sdk() -> None:
    npm_ci(CLIENT_DIR, SDK)


def test_the_typescript_sdk_client(tmp_path: Path) -> None:
    _install_sdk()
    store = make_store(tmp_path / "store")
    revoked = token(store, "tidewatch")
    pcp(store, "grant", "revoke-tokens", "tidewatch")
    tokens = {"desktop": token(store, "claude-desktop"), "agent": token(store, "tidewatch"),
              "revoked": revoked}
    with running_server(store, "--max-body-bytes", "65536") as server:
        out = subprocess.run(["node", "client.mjs", server.url, json.dumps(tokens)],
                             cwd=CLIENT_DIR, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-3000:]
        seen = json.loads(out.stdout)
        assert server.process.poll() is None
    assert "pcp_search" in seen["tools"] and "pcp_write_page" not in seen["tools"]
    assert seen["search_error"] is False and seen["search_ids"]
    assert seen["desktop_scopes"] == ["project:tidewatch", "user:ada-lumen"]
    assert seen["agent_scopes"] == ["project:tidewatch"]
    assert set(seen["agent_star_ids"]) <= {"tidewatch-architecture", "conv-tidewatch-mobile"}
    for case in ("no_token", "wrong_token", "revoked_token"):
        assert seen[case]["refused"], case
        assert seen[case]["code"] == 401, seen[case]
    assert seen["bad_origin"]["refused"] and seen["bad_origin"]["code"] == 403, seen["bad_origin"]
    assert seen["oversized"]["refused"] and seen["oversized"]["code"] == 413, seen["oversized"]
    assert seen["after_oversized_ok"] is True


def test_several_typescript_clients_share_one_grant(tmp_path: Path) -> None:
    """Each TypeScript SDK client tries to hold a GET event stream open; the server answers GET
    with 405, so connected clients use none of their grant's requests in flight."""
    _install_sdk()
    store = make_store(tmp_path / "store")
    shared = token(store, "claude-desktop")
    count = 6
    with running_server(store) as server:
        out = subprocess.run(["node", "many.mjs", server.url, shared, str(count)],
                             cwd=CLIENT_DIR, capture_output=True, text=True, timeout=180)
        assert out.returncode == 0, out.stderr[-3000:]
        seen = json.loads(out.stdout)
    assert seen["errors"] == []
    assert seen["connected"] == count
    assert seen["answers"] == count + 4
