"""The MCP authorization flow driven by the official TypeScript SDK's OAuth client
(`@modelcontextprotocol/sdk`, pinned in tests/mcp/ts_client/package-lock.json): discovery,
registration, consent (the script plays the person, with the approval code from the server's
stderr), token, tools/list, refresh, revocation, refused. Skipped only when `node` is missing;
installs the SDK itself as test_mcp_http_ts does."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.mcp.http_helpers import make_store, running_server
from tests.mcp.test_mcp_http_ts import CLIENT_DIR, _install_sdk

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
]


def test_the_typescript_sdk_oauth_client(tmp_path: Path) -> None:
    _install_sdk()
    store = make_store(tmp_path / "store")
    with running_server(store) as server:
        out = subprocess.run(["node", "oauth_client.mjs", server.url, str(server.stderr)],
                             cwd=CLIENT_DIR, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-3000:]
        seen = json.loads(out.stdout)
        assert server.process.poll() is None
    assert seen["first_connect"] == "unauthorized" and seen["redirected"] == 1
    assert seen["state_matches"]
    assert "pcp_search" in seen["tools"] and "pcp_write_page" not in seen["tools"]
    assert 0 < seen["expires_in"] <= 3600
    assert seen["refresh"] == "AUTHORIZED" and seen["rotated"]
    assert seen["tools_after_refresh"] == len(seen["tools"])
    assert seen["revoke_status"] == 200 and seen["after_revoke_status"] == 401
