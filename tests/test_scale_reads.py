"""Reads that must not grow with the store answer exactly what the slower way answered.

Each case compares the fast path (an index, an SQL aggregate) with the plain computation over
every entry, on the example store, and checks the fast path is the one SQLite takes."""

from __future__ import annotations

from pathlib import Path

from pcp_cli import api
from pcp_cli.query.stats import _count
from tests.conftest import cli


def test_stats_are_counted_from_the_covering_index_and_match_every_entry(example: Path):
    assert cli("ls", "--store", str(example)).code == 0  # builds the catalog
    with api.open_store(example, readonly=True) as store:
        db = store.catalog._db
        cases = [{}, {"statuses": ("active",), "sensitivities": ("low", None),
                      "exclude": ("ks-001",)}]
        for case in cases:
            sql = [tuple(row) for row in store.entry_groups(**case)]
            plain = _count(e for e in store.entries(
                statuses=case.get("statuses"), sensitivities=case.get("sensitivities"))
                if e.page_id not in case.get("exclude", ()))
            assert sorted(sql, key=repr) == sorted(plain, key=repr)
            assert sum(g[4] for g in sql) >= 10
        plan = db.execute(
            "EXPLAIN QUERY PLAN SELECT namespace, type, origin, lifecycle_status, COUNT(*), "
            "MIN(created_at), MAX(updated_at) FROM pages WHERE problem IS NULL AND page_id "
            "IS NOT NULL AND review_status IN ('affirmed') GROUP BY 1, 2, 3, 4").fetchall()
        assert "INDEX pages_groups" in " ".join(str(tuple(row)) for row in plan)
