"""`pcp timeline list` and `pcp stats` answer from catalog rows (schema 7: each row's observed
time, a timeline event's `detail`), not from every event's revisions or every record's JSON:
the same output as reading the revisions, as current, and an older catalog upgraded in place.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from pcp_cli import api
from tests.conftest import cli, run_pcp


def _json(root: Path, *args: str) -> dict:
    out = cli(*args, "--store", str(root), "--json")
    assert out.code == 0, out.stderr
    return out.json


def _catalog(root: Path) -> sqlite3.Connection:
    return sqlite3.connect(root / ".pcp" / "catalog.sqlite", isolation_level=None)


def _with_extensions(root: Path) -> str:
    """An event whose extensions nest (their order must come out as the revision's)."""
    page = _json(root, "timeline", "add", "2022-05", "Moved the lab to Porto.",
                 "--category", "move", "--confidence", "0.7")["page_id"]
    with api.open_store(root) as store:
        store.revise(page, changes={"extensions": {"com.example.z": {"b": 1, "a": [2, 1]},
                                                   "com.example.a": "first"}})
    return page


def _listed(root: Path) -> str:
    """`timeline list --json` by a process of its own (nothing kept from another listing)."""
    out = run_pcp("timeline", "list", "--store", str(root), "--json")
    assert out.code == 0, out.stderr
    return out.stdout


def _without_detail(root: Path) -> int:
    with _catalog(root) as db:
        return int(db.execute("SELECT COUNT(*) FROM pages WHERE type = 'timeline_event' "
                              "AND lifecycle_status = 'active' AND detail IS NULL").fetchone()[0])


def test_events_from_rows_are_the_events_read_from_their_revisions(example: Path) -> None:
    page = _with_extensions(example)
    from_rows = _listed(example)
    assert _without_detail(example) == 0
    with _catalog(example) as db:
        db.execute("UPDATE pages SET detail = NULL")  # as a catalog written before `detail`
    (example / ".pcp" / "timeline.json").unlink()  # and no listing kept
    assert _listed(example) == from_rows  # read from the revisions this time
    event = next(e for e in _json(example, "timeline", "list")["events"] if e["id"] == page)
    assert event["extensions"] == {"com.example.a": "first",
                                   "com.example.z": {"a": [2, 1], "b": 1}}
    assert _without_detail(example) == 0  # what the revisions gave is kept for the next one
    (example / ".pcp" / "timeline.json").unlink()
    assert _listed(example) == from_rows


def test_an_event_edited_in_place_with_size_and_mtime_restored_is_listed_as_edited(
        example: Path) -> None:
    before = {e["id"]: e["summary"] for e in _json(example, "timeline", "list")["events"]}
    head = next(example.glob("pages/**/tl-001.md"))
    st = head.stat()
    text = head.read_text("utf-8")
    old = before["tl-001"].split()[0]
    new = old[::-1] if old[::-1] != old else old.upper()
    body = text.index("\n---\n", 3) + 5  # the edit is in the body, not the title
    assert len(new) == len(old) and old in text[body:]
    with open(head, "r+", encoding="utf-8") as f:
        f.write(text[:body] + text[body:].replace(old, new, 1))
    os.utime(head, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = {e["id"]: e["summary"] for e in _json(example, "timeline", "list")["events"]}
    assert after["tl-001"] == before["tl-001"].replace(old, new, 1)
    assert {k: v for k, v in after.items() if k != "tl-001"} == \
        {k: v for k, v in before.items() if k != "tl-001"}


def test_a_schema_6_catalog_is_upgraded_in_place(example: Path) -> None:
    _with_extensions(example)
    stats, timeline = _json(example, "stats"), _json(example, "timeline", "list")
    with _catalog(example) as db:
        identity = db.execute("SELECT value FROM meta WHERE key='catalog_id'").fetchone()
        if identity is None:
            api.open_store(example).close()
        for index in ("pages_observed_at", "pages_activity", "pages_timeline"):
            db.execute(f"DROP INDEX {index}")
        for trigger in ("tally_insert", "tally_delete", "tally_update"):
            db.execute(f"DROP TRIGGER {trigger}")
        db.execute("DROP TABLE tally")
        db.execute("ALTER TABLE pages DROP COLUMN observed")
        db.execute("ALTER TABLE pages DROP COLUMN detail")
        db.execute("UPDATE meta SET value = '6' WHERE key = 'schema'")
        identity = db.execute("SELECT value FROM meta WHERE key='catalog_id'").fetchone()
        seq = db.execute("SELECT value FROM meta WHERE key='seq'").fetchone()
    assert _json(example, "stats") == stats
    assert _json(example, "timeline", "list") == timeline
    with _catalog(example) as db:
        assert db.execute("SELECT value FROM meta WHERE key='schema'").fetchone() == ("8",)
        # kept, not rebuilt: the search index and the other followers carry on
        assert db.execute("SELECT value FROM meta WHERE key='catalog_id'").fetchone() == identity
        assert db.execute("SELECT value FROM meta WHERE key='seq'").fetchone() == seq
    assert _json(example, "timeline", "list") == timeline


def test_stats_counts_a_page_served_from_its_revision_and_its_time(example: Path) -> None:
    before = _json(example, "stats")
    head = next(example.glob("pages/**/tl-001.md"))
    head.write_text("---\ntitle: [unclosed\n---\nbroken by hand\n", "utf-8")
    after = _json(example, "stats")
    # its head file cannot be read: counted from its newest revision, as before the split
    assert after["total"] == before["total"]
    assert after["by_type"] == before["by_type"]
    assert after["time_range"] == before["time_range"]


def test_the_kept_listing_is_used_and_follows_every_change(example: Path) -> None:
    first = _listed(example)
    kept = example / ".pcp" / "timeline.json"
    assert kept.exists()
    assert _listed(example) == first  # from the kept file
    page = _json(example, "timeline", "add", "2026-01", "Opened the Porto office.")["page_id"]
    assert page in _listed(example)
    head = next(example.glob(f"pages/**/{page}.md"))
    st = head.stat()
    text = head.read_text("utf-8")
    with open(head, "r+", encoding="utf-8") as f:
        f.write(text.replace("Porto office", "Braga office"))
    os.utime(head, ns=(st.st_atime_ns, st.st_mtime_ns))
    listed = _listed(example)
    assert "Braga office" in listed and "Porto office" not in listed
    kept.write_text('{"key": "damaged"', "utf-8")
    assert _listed(example) == listed
