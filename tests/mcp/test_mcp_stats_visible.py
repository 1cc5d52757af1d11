"""Over MCP, `pcp_stats` counts only what the client may read: a tombstoned page is withdrawn,
and a count of it would tell the client it exists."""

from __future__ import annotations

from pathlib import Path

from pcp_cli.mcp.grants import Grant
from pcp_cli.mcp.store_backend import StoreBackend
from tests.conftest import cli

READER = Grant("reader", "model", ("user:ada-lumen", "project:tidewatch"), False, False,
               "pcp.yaml")


def test_stats_never_count_a_tombstoned_page(example: Path) -> None:
    backend = StoreBackend(example)
    before = backend.stats(READER, suppressed=frozenset())
    assert cli("tombstone", "tidewatch-architecture", "--store", str(example)).code == 0
    after = backend.stats(READER, suppressed=frozenset())
    assert after["total"] == before["total"] - 1
    assert "tombstoned" not in after["by_lifecycle"]
    # the owner's own `pcp stats` still counts it
    mine = cli("stats", "--store", str(example), "--json").json
    assert mine["by_lifecycle"].get("tombstoned") == 1
