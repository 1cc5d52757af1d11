"""`pcp serve` watches its store: an edit saved in place while it runs (same inode, same size,
mtime put back) is found by the next `pcp_search`, and an unchanged store is not rescanned."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.mcp.test_mcp_serve import ok

pytestmark = pytest.mark.anyio

HEAD = Path("pages/user/ada-lumen/client-checklist.md")


def ids(data) -> list[str]:
    return [r["id"] for r in data["results"]]


async def test_an_in_place_edit_is_found_by_the_next_call(mcp_session, mcp_store):
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        assert ids(await ok(client, "pcp_search", {"query": "quokka"})) == []
        await ok(client, "pcp_search", {"query": "tidewatch"})
        path = mcp_store / HEAD
        st = path.stat()
        data = path.read_bytes()
        assert b"README" in data
        with open(path, "r+b") as fh:
            fh.write(data.replace(b"README", b"QUOKKA"))
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert path.stat().st_ino == st.st_ino and path.stat().st_size == st.st_size
        assert ids(await ok(client, "pcp_search", {"query": "quokka"})) == ["client-checklist"]
        path.write_bytes(data)  # and back again
        assert ids(await ok(client, "pcp_search", {"query": "quokka"})) == []
