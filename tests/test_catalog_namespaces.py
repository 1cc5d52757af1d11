"""`Catalog.namespaces()` (every search resolves its scopes with it) is a skip scan over an
index: one seek per namespace, not a scan of every row, and the same answer as the plain
DISTINCT query, with the index or without it."""

from __future__ import annotations

from pathlib import Path

from pcp_cli import api
from tests.conftest import cli

PLAIN = "SELECT DISTINCT namespace FROM pages WHERE namespace IS NOT NULL ORDER BY 1"


def test_namespaces_are_the_distinct_ones_in_order_from_the_index(store: Path) -> None:
    for text, ns in [("b note", "project:b"), ("a note", "personal"), ("z", "project:b"),
                     ("c", "project:a:deep"), ("d", "project"), ("e", "personal")]:
        assert cli("add", text, "--namespace", ns, "--store", str(store)).code == 0
    with api.open_store(store) as opened:
        catalog = opened.catalog
        db = catalog._db
        plain = [row[0] for row in db.execute(PLAIN)]
        assert plain == sorted({"project:b", "personal", "project:a:deep", "project"})
        assert catalog.namespaces() == plain
        from pcp_cli.store.catalog import _NAMESPACES_SKIP_SCAN

        steps = " ".join(str(tuple(r)) for r in db.execute(
            "EXPLAIN QUERY PLAN " + _NAMESPACES_SKIP_SCAN))
        assert "pages_namespace" in steps and "SCAN pages" not in steps
        # partial: a whole-table GROUP BY namespace (`pcp stats`) keeps its own plan
        grouped = " ".join(str(tuple(r)) for r in db.execute(
            "EXPLAIN QUERY PLAN SELECT namespace, COUNT(*) FROM pages WHERE problem IS NULL "
            "GROUP BY namespace"))
        assert "pages_namespace" not in grouped
        db.execute("DROP INDEX pages_namespace")  # an older catalog, or one that could not
        assert catalog.namespaces() == plain      # build it yet: the plain query


def test_an_empty_store_has_no_namespaces(store: Path) -> None:
    with api.open_store(store) as opened:
        assert opened.catalog.namespaces() == []
