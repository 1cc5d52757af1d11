"""Reads that must not grow with the store answer exactly what the slower way answered.

Each case compares the fast path (an index, an SQL aggregate) with the plain computation over
every entry, on the example store, and checks the fast path is the one SQLite takes."""

from __future__ import annotations

import os
from pathlib import Path

from pcp_cli import api
from pcp_cli.query.stats import _count
from pcp_cli.store.catalog import ACTIVITY
from tests.conftest import cli

# What reads ask of the tally: every filter shape stats, ListScopes and a reader use.
_CASES = [
    {},
    {"statuses": ("active",), "sensitivities": ("low", None), "exclude": ("ks-001",)},
    {"statuses": ("active", "superseded", "archived"), "sensitivities": ("low", "medium")},
    {"review": None, "sensitivities": ()},
    {"review": ("proposed",), "exclude": ("ks-001", "tl-001", "no-such-page")},
]


def _tally(db) -> list[tuple]:
    return sorted(tuple(row) for row in db.execute("SELECT key, n FROM tally WHERE n > 0"))


def _counted(db) -> list[tuple]:
    """What the tally should say: the readable rows counted afresh."""
    return sorted(tuple(row) for row in db.execute(
        "SELECT json_array(namespace, type, origin, lifecycle_status, review_status, "
        "sensitivity), COUNT(*) FROM pages WHERE problem IS NULL AND page_id IS NOT NULL "
        "GROUP BY 1"))


def _same_as_every_entry(store) -> None:
    """The tally's counts, ranges and namespace counts are what a pass over every entry
    gives, for every case."""
    from pcp_cli.query.observed import entry_observed

    for case in _CASES:
        statuses, sensitivities = case.get("statuses"), case.get("sensitivities")
        exclude = case.get("exclude", ())
        entries = [e for e in store.entries(statuses=statuses, sensitivities=sensitivities,
                                            review=case.get("review", ("affirmed",)))
                   if e.page_id not in exclude]
        groups = store.entry_groups(**case)
        assert sorted(groups, key=repr) == sorted(_count(entries), key=repr), case
        if case.get("review", ("affirmed",)) != ("affirmed",):
            continue
        ranges = {ns: (low, high) for ns, low, high in store.observed_ranges(
            statuses=statuses, sensitivities=sensitivities, exclude=exclude) if low}
        plain: dict = {}
        for e in entries:
            if (t := entry_observed(e)) and t[:4].isdigit():
                low, high = plain.get(e.namespace, (t, t))
                plain[e.namespace] = (min(low, t), max(high, t))
        assert ranges == plain, case
        every = store.entries(sensitivities=None)
        readable = {e.page_id for e in store.entries(sensitivities=sensitivities)} - set(exclude)
        counts = {row[0]: row[1:] for row in store.namespace_counts(
            sensitivities=sensitivities, exclude=exclude)}
        for ns in {e.namespace for e in every}:
            mine = [e for e in every if e.namespace == ns]
            active = [e for e in mine if e.lifecycle_status == "active"]
            mine_readable = [e for e in active if e.page_id in readable]
            assert counts[ns] == (
                len(active),
                max((e.updated_at or e.created_at for e in mine
                     if e.updated_at or e.created_at), default=None),
                len(mine_readable),
                max((e.updated_at for e in mine_readable if e.updated_at), default=None)), (
                    case, ns)


def test_stats_and_scopes_are_read_from_the_tally_and_match_every_entry(example: Path):
    assert cli("ls", "--store", str(example)).code == 0  # builds the catalog
    with api.open_store(example, readonly=True) as store:
        db = store.catalog._db
        assert _tally(db) == _counted(db)
        _same_as_every_entry(store)
        # each group's earliest or newest time is one seek, never a pass over the rows
        for column, index in (("observed", "pages_observed_at"), (ACTIVITY, "pages_activity")):
            plan = " ".join(str(tuple(row)) for row in db.execute(
                f"EXPLAIN QUERY PLAN SELECT {column} FROM pages WHERE namespace IS ? "
                f"AND review_status IS ? AND lifecycle_status IS ? AND sensitivity IS ? "
                f"AND problem IS NULL AND page_id IS NOT NULL AND {column} IS NOT NULL "
                f"AND page_id NOT IN (?) ORDER BY {column} DESC LIMIT 1",
                ("user", "affirmed", "active", None, "x")))
            assert f"SEARCH pages USING INDEX {index}" in plan and "TEMP B-TREE" not in plan


def test_the_tally_follows_every_kind_of_write(example: Path) -> None:
    """Pages added, revised into another group, superseded, edited by hand into a file that
    cannot be read, deleted by hand, and the catalog rescanned: after each, the tally is the
    count of the rows, and stats and scopes what a pass over every entry gives."""
    def check() -> None:
        with api.open_store(example) as store:
            store.refresh()
            db = store.catalog._db
            assert _tally(db) == _counted(db)
            _same_as_every_entry(store)

    assert cli("ls", "--store", str(example)).code == 0
    check()
    added = cli("add", "a note about kelp", "--title", "Kelp", "--namespace", "work:kelp",
                "--store", str(example), "--json").json["page_id"]
    check()
    assert cli("revise", added, "--sensitivity", "high", "--store", str(example)).code == 0
    check()
    assert cli("tombstone", added, "--reason", "test",
               "--store", str(example)).code == 0
    check()
    head = next(example.glob("pages/**/tl-001.md"))
    head.write_text("---\ntitle: [unclosed\n---\nbroken by hand\n", "utf-8")
    check()
    next(example.glob("pages/**/ks-001.md")).unlink()
    check()
    with api.open_store(example) as store:  # a catalog rebuilt from nothing
        store.catalog._db.execute("DELETE FROM pages")
        store.catalog._db.execute("DELETE FROM meta WHERE key = 'fingerprints'")
    check()


def test_a_schema_7_catalog_gets_its_tally_in_place(example: Path) -> None:
    import sqlite3

    stats = cli("stats", "--json", "--store", str(example)).json
    scopes = cli("scopes", "--json", "--store", str(example)).json
    with sqlite3.connect(example / ".pcp" / "catalog.sqlite", isolation_level=None) as db:
        for trigger in ("tally_insert", "tally_delete", "tally_update"):
            db.execute(f"DROP TRIGGER {trigger}")
        db.execute("DROP TABLE tally")
        db.execute("UPDATE meta SET value = '7' WHERE key = 'schema'")
        kept = db.execute("SELECT key, value FROM meta WHERE key IN ('catalog_id', 'seq') "
                          "ORDER BY key").fetchall()
    assert cli("stats", "--json", "--store", str(example)).json == stats
    assert cli("scopes", "--json", "--store", str(example)).json == scopes
    with sqlite3.connect(example / ".pcp" / "catalog.sqlite", isolation_level=None) as db:
        assert db.execute("SELECT value FROM meta WHERE key='schema'").fetchone() == ("8",)
        assert db.execute("SELECT key, value FROM meta WHERE key IN ('catalog_id', 'seq') "
                          "ORDER BY key").fetchall() == kept  # the followers carry on
        assert _tally(db) == _counted(db)


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
