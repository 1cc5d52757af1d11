"""Reads that must not grow with the store answer exactly what the slower way answered.

Each case compares the fast path (an index, an SQL aggregate) with the plain computation over
every entry, on the example store, and checks the fast path is the one SQLite takes."""

from __future__ import annotations

import os
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


def test_the_kept_micro_prompt_is_the_text_computed_afresh_and_follows_every_change(
        example: Path):
    def export() -> str:
        out = cli("export", "--format", "micro_prompt", "--store", str(example))
        assert out.code == 0, out.stderr
        return out.stdout

    assert cli("ls", "--store", str(example)).code == 0  # a catalog: the kept path applies
    kept = example / ".pcp" / "micro-prompt.json"
    first = export()
    assert kept.exists()
    assert export() == first  # from what was kept
    kept.unlink()
    assert export() == first  # computed afresh: the same text
    head = example / "pages/user/ada-lumen/ks-001.md"
    st = head.stat()
    text = head.read_text(encoding="utf-8")
    old, new = "environmental nonprofits", "environmental charities!"
    assert len(old) == len(new)
    head.write_text(text.replace(old, new), encoding="utf-8")  # same size, mtime put back
    os.utime(head, ns=(st.st_atime_ns, st.st_mtime_ns))
    edited = export()
    assert "environmental charities!" in edited and edited != first
    kept.unlink()
    assert export() == edited
