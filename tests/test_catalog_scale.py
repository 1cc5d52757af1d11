"""The catalog at a million pages, tested small: a scan that reads many files writes them a
chunk at a time (so the first scan does not hold every file's bytes), and stopped between chunks
the next scan finishes the job; `Changes` still names every row; reading every row (an index
rebuild) goes a batch at a time and gives what `entries` gives."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pcp_cli import api
from pcp_cli.store import catalog as catalog_mod
from tests.conftest import cli


def rows(root: Path) -> list[tuple]:
    with api.open_store(root, refresh=False) as store:
        return [(e.path, e.page_id, e.revision_id, e.content_hash, e.title, e.digest,
                 e.problem, e.edited) for e in store.catalog.entries()]


def first_scan(root: Path) -> catalog_mod.Changes:
    with api.open_store(root, refresh=False) as store:
        changes = store.catalog.refresh()
        return changes if not changes else catalog_mod.Changes(
            changes.changed, changes.removed)  # read back before the catalog closes


def test_a_first_scan_in_chunks_makes_the_same_catalog(example, tmp_path, monkeypatch):
    whole = tmp_path / "whole"
    shutil.copytree(example, whole)
    all_at_once = first_scan(whole)
    monkeypatch.setattr(catalog_mod, "APPLY_CHUNK", 2)
    chunked = first_scan(example)
    assert rows(example) == rows(whole)
    assert len(rows(example)) > 10  # several chunks
    assert [e.path for e in chunked.changed] == [e.path for e in all_at_once.changed]
    assert sorted(e.path for e in chunked.changed) == [r[0] for r in rows(example)]


def test_a_scan_stopped_between_chunks_is_finished_by_the_next(example, tmp_path,
                                                                monkeypatch):
    whole = tmp_path / "whole"
    shutil.copytree(example, whole)
    first_scan(whole)
    monkeypatch.setattr(catalog_mod, "APPLY_CHUNK", 3)
    real = catalog_mod.Catalog._apply
    calls: list[int] = []

    def stop_at_the_second_chunk(self, *args):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(self, *args)

    monkeypatch.setattr(catalog_mod.Catalog, "_apply", stop_at_the_second_chunk)
    with pytest.raises(KeyboardInterrupt):
        first_scan(example)
    assert 0 < len(rows(example)) < len(rows(whole))  # the first chunk was kept
    monkeypatch.setattr(catalog_mod.Catalog, "_apply", real)
    with api.open_store(example, refresh=False) as store:
        assert store.catalog._fingerprints() is None  # not vouched for yet
        assert store.catalog.refresh()
        assert store.catalog._fingerprints() is not None
        assert not store.catalog.refresh()  # nothing left to do
    assert rows(example) == rows(whole)


def test_a_chunked_rescan_reports_each_changed_file_once(example, monkeypatch):
    gone = example / "pages" / "user" / "gone.md"
    gone.write_text("A note soon removed.\n", "utf-8")
    first_scan(example)
    heads = sorted((example / "pages").rglob("*.md"))[:7]
    for path in heads:
        path.write_text(path.read_text("utf-8") + "\nEdited.\n", "utf-8")
    gone.unlink()
    monkeypatch.setattr(catalog_mod, "APPLY_CHUNK", 2)
    with api.open_store(example, refresh=False) as store:
        changes = store.catalog.refresh()
        assert changes.removed == ("pages/user/gone.md",)
        assert [e.path for e in changes.changed] == sorted(
            p.relative_to(example).as_posix() for p in heads if p != gone)


def test_each_entry_gives_what_entries_gives_a_batch_at_a_time(example):
    from pcp_cli.query.index_sync import INDEXABLE

    with api.open_store(example) as store:
        whole = store.catalog.entries(INDEXABLE)
        assert len(whole) > 10
        assert list(store.catalog.each_entry(INDEXABLE, batch=3)) == whole
        assert list(store.catalog.each_entry("type = ?", ("keystone",), batch=2)) == \
            store.catalog.entries("type = ?", ("keystone",))


def test_a_first_scan_reads_a_revision_only_for_what_the_head_file_lacks(store, tmp_path,
                                                                           monkeypatch):
    """A head file that says what its revision recorded is cataloged from the file alone; a
    page whose revision holds facets the file leaves out (source_spans) still gets them, so
    neither looks edited by hand."""
    from pcp_cli.store.store import Store
    from tests.test_ingest import EVENTS, ingest, write

    assert ingest(store, write(tmp_path, EVENTS)).code == 0
    assert cli("add", "a plain note", "--store", str(store)).code == 0
    for f in (store / ".pcp").glob("catalog.sqlite*"):
        f.unlink()
    real = Store.load_revision
    loaded: list[str] = []

    def load_revision(self, page_id, revision_id):
        loaded.append(page_id)
        return real(self, page_id, revision_id)

    monkeypatch.setattr(Store, "load_revision", load_revision)
    with api.open_store(store, readonly=True) as opened:
        read_by_the_scan = set(loaded)
        entries = opened.catalog.entries("page_id IS NOT NULL")
        assert len(entries) == 3 and not any(e.edited or e.problem for e in entries)
        spanned = {e.page_id for e in entries if opened.current(e.page_id).state.facets.get(
            "source_spans")}
        assert len(spanned) == 2 and read_by_the_scan == spanned  # not the note's revision
        for entry in entries:
            assert entry.content_hash == opened.current(entry.page_id).content_hash


def test_namespaces_are_the_distinct_ones_in_order(store):
    for text, ns in [("a", "work"), ("b", "personal"), ("c", "work:acme"), ("d", "work")]:
        assert cli("add", text, "--namespace", ns, "--store", str(store)).code == 0
    with api.open_store(store) as opened:
        found = opened.catalog.namespaces()
        assert found == sorted({e.namespace for e in opened.catalog.entries() if e.namespace})
        assert found == ["personal", "work", "work:acme"]
