"""The index stays current without `pcp index`, and a broken index is never a silent empty
answer."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pcp_cli import api
from tests.conftest import cli

pytestmark = pytest.mark.usefixtures("engine")

HEAD = Path("pages/user/ada-lumen/client-checklist.md")


@pytest.fixture(autouse=True)
def _close_indexes() -> Iterator[None]:
    yield
    from pcp_cli.query.index_sync import close_all

    close_all()


def ids(root: Path, query: str, *args: str) -> list[str]:
    out = cli("search", query, *args, "--store", str(root), "--json")
    assert out.code == 0, out.stderr
    return [r["id"] for r in out.json["results"]]


def index_meta(root: Path) -> dict:
    return json.loads((root / ".pcp/index/meta.json").read_text())


def edit_body(root: Path, rel: Path, new_body: str) -> None:
    path = root / rel
    text = path.read_text()
    front, _, _ = text.partition("\n---\n")
    path.write_text(front + "\n---\n" + new_body)


# -- current without being asked ------------------------------------------------------------
def test_a_pcp_write_is_found_by_the_next_search(example):
    assert ids(example, "marzipan") == []
    out = cli("add", "Marzipan recipe from grandmother.", "--store", str(example), "--json")
    assert ids(example, "marzipan") == [out.json["page_id"]]


def test_hand_edit_found_by_next_search_without_pcp_index(example):
    ids(example, "tidewatch")  # builds the index
    edit_body(example, HEAD, "Bring the waterproof notebook and the gazpacho thermos.\n")
    assert ids(example, "gazpacho") == ["client-checklist"]


def test_hand_edit_seen_by_a_read_only_caller(example):
    """The MCP server opens the store read-only: the edit is not recorded, but it is found."""
    with api.open_store(example, readonly=True) as store:
        api.search(store, "tidewatch")
    edit_body(example, HEAD, "Remember the kumquat crate.\n")
    with api.open_store(example, readonly=True) as store:
        data = api.search(store, "kumquat")
    assert [r["id"] for r in data["results"]] == ["client-checklist"]
    assert "kumquat" in data["results"][0]["snippet"]


def test_deleted_head_file_disappears_from_results(example):
    assert "tidewatch-architecture" in ids(example, "tidewatch")
    (example / "pages/project/tidewatch/tidewatch-architecture.md").unlink()
    with api.open_store(example, readonly=True) as store:
        found = [r["id"] for r in api.search(store, "tidewatch")["results"]]
    assert "tidewatch-architecture" not in found and found


def test_dropped_in_markdown_file_is_found(example):
    ids(example, "tidewatch")
    (example / "pages/user/ada-lumen/dropped.md").write_text("# Dropped\n\nA note about okapis.\n")
    assert len(ids(example, "okapis")) == 1  # adopted as a new page


def test_long_lived_process_sees_writes_of_another_store_handle(example):
    with api.open_store(example, readonly=True) as reader:
        assert api.search(reader, "pelican")["count"] == 0
    with api.open_store(example) as writer:
        api.add_page(writer, "The pelican colony on the breakwater.")
    with api.open_store(example, readonly=True) as reader:
        assert api.search(reader, "pelican")["count"] == 1


def test_after_import_catches_the_index_up(example, tmp_path):
    ids(example, "tidewatch")
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "walrus.md").write_text("# Walrus\n\nWalrus tusks and ice floes.\n")
    out = cli("import", str(folder), "--format", "markdown", "--store", str(example))
    assert out.code == 0, out.stderr
    with api.open_store(example, readonly=True) as store:
        assert index_meta(example)["user"]["catalog_seq"] == store.catalog.seq()
    assert len(ids(example, "walrus")) == 1


# -- pcp index --------------------------------------------------------------------------------
def test_pcp_index_updates_and_rebuilds(example):
    first = cli("index", "--store", str(example), "--json")
    assert first.code == 0 and first.json["rebuilt"] is True
    assert first.json["documents"] == 23  # every readable page, proposals and superseded too
    again = cli("index", "--store", str(example), "--json").json
    assert again["rebuilt"] is False and again["updated"] == again["removed"] == 0
    cli("add", "One more page about narwhals.", "--store", str(example))
    update = cli("index", "--store", str(example), "--json").json
    assert update["rebuilt"] is False and update["updated"] == 1 and update["documents"] == 24
    full = cli("index", "--rebuild", "--store", str(example), "--json").json
    assert full["rebuilt"] is True and full["reason"] == "asked for" and full["documents"] == 24
    human = cli("index", "--store", str(example))
    assert human.code == 0 and "up to date" in human.stdout


# -- a broken index is rebuilt, never an empty answer -------------------------------------------
def test_missing_index_is_rebuilt(example):
    ids(example, "tidewatch")
    shutil.rmtree(example / ".pcp/index")
    out = cli("search", "tidewatch", "--store", str(example))
    assert "tidewatch-architecture" in out.stdout
    assert "Building the search index for 23 pages" in out.stderr
    again = cli("--traceback", "search", "tidewatch", "--store", str(example))
    assert again.code == 0 and again.stderr == ""


def test_corrupt_index_is_rebuilt_transparently(example):
    ids(example, "tidewatch")
    for path in (example / ".pcp/index").rglob("*"):
        if path.is_file() and path.name != "WRITELOCK":
            path.write_bytes(b"\x00garbage\xff" * 100)
    assert "tidewatch-architecture" in ids(example, "tidewatch")


def test_garbage_files_in_a_fresh_index_folder(example):
    folder = example / ".pcp/index"
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text("{not json")
    (folder / "g-1").mkdir()
    (folder / "g-1" / "MAIN_x.toc").write_bytes(b"garbage")
    assert "tidewatch-architecture" in ids(example, "tidewatch")


def test_other_format_index_is_rebuilt(example):
    ids(example, "tidewatch")
    meta = index_meta(example)
    meta["format_version"] = 999
    (example / ".pcp/index/meta.json").write_text(json.dumps(meta))
    assert "tidewatch-architecture" in ids(example, "tidewatch")
    assert index_meta(example)["format_version"] != 999


def test_replaced_catalog_triggers_a_rebuild(example):
    ids(example, "tidewatch")
    for path in (example / ".pcp").glob("catalog.sqlite*"):
        path.unlink()
    (example / "pages/project/tidewatch/tidewatch-architecture.md").unlink()
    found = ids(example, "tidewatch")
    assert found and "tidewatch-architecture" not in found


HOLD_LOCK = """
import sys, time
from whoosh.filedb.filestore import FileStorage
lock = FileStorage(sys.argv[1]).lock("WRITELOCK")
assert lock.acquire(False)
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
"""


@pytest.fixture
def locked_index(example):
    """Another process holding the index's write lock."""
    ids(example, "tidewatch")

    def hold(seconds: float = 30) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-c", HOLD_LOCK,
                                 str(example / ".pcp/index"), str(seconds)],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        holders.append(proc)
        return proc

    holders: list[subprocess.Popen] = []
    yield hold
    for proc in holders:
        proc.kill()
        proc.wait()


def test_locked_index_still_answers_from_what_it_holds(example, locked_index):
    """The index was built (by the fixture) before the lock: a search reads it as it stood and
    says so; only an index that needs a rebuild is exit 7 (the next test)."""
    assert cli("add", "A page about ospreys.", "--store", str(example)).code == 0
    locked_index()
    started = time.monotonic()
    out = cli("search", "tidewatch", "--store", str(example), "--json")
    assert time.monotonic() - started < 10
    assert out.code == 0, out.stderr
    assert "tidewatch-architecture" in [r["id"] for r in out.json["results"]]
    assert out.json["filters_applied"]["index"].startswith("stale")
    ospreys = cli("search", "ospreys", "--store", str(example), "--json")
    assert ospreys.code == 0 and ospreys.json["results"] == []  # not caught up: it said so


@pytest.mark.slow  # among the default run's slowest (10-26 s): in the slow set
def test_locked_index_that_needs_a_rebuild_is_exit_7(example, locked_index):
    (example / ".pcp/index/meta.json").write_text("{broken")
    locked_index()
    out = cli("search", "tidewatch", "--store", str(example))
    assert out.code == 7
    assert "another pcp process" in out.stderr and "Hint:" in out.stderr
    assert "Traceback" not in out.stderr


def test_damage_found_only_while_reading_is_rebuilt(example):
    from pcp_cli.query.index_sync import close_all

    ids(example, "tidewatch")
    close_all()
    meta = index_meta(example)
    generation = example / ".pcp/index" / meta["generation"]
    for path in generation.iterdir():
        if path.suffix in (".pst", ".trm", ".seg", ".fvz", ".vps", ".dcz", ".fln", ".lns") or \
                path.name.endswith(".pst"):
            size = path.stat().st_size
            path.write_bytes(bytes((i * 37) % 256 for i in range(size)))  # same size
    assert "tidewatch-architecture" in ids(example, "tidewatch")


def _rewrite_in_place(path: Path, old: str, new: str) -> None:
    """What many editors do: the same file (inode) rewritten, here with the same size."""
    assert len(old) == len(new)
    data = path.read_bytes()
    assert old.encode() in data
    with open(path, "r+b") as fh:
        fh.write(data.replace(old.encode(), new.encode()))


def test_an_in_place_rewrite_keeping_size_and_mtime_is_seen_by_the_next_search(example):
    """Same inode, same size, mtime (and the folder's) put back: no threshold, no `pcp index`.
    Only the ctime, which no program can set, tells the rewrite apart."""
    import os

    edit_body(example, HEAD, "Bring the walrus-grade notebook.\n")
    assert ids(example, "walrus") == ["client-checklist"]
    assert ids(example, "walrus") == ["client-checklist"]  # past the first scans
    path = example / HEAD
    before, folder = path.stat(), path.parent.stat()
    _rewrite_in_place(path, "walrus", "ferret")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.utime(path.parent, ns=(folder.st_atime_ns, folder.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino, before.st_size, before.st_mtime_ns)
    assert ids(example, "ferret") == ["client-checklist"]
    assert ids(example, "walrus") == []


def test_a_same_size_rewrite_within_one_timestamp_tick_is_seen(example):
    """A rewrite right after a scan may keep mtime and ctime (one clock tick): the row read
    within that tick is racy and the next scan compares its content."""
    import hashlib

    path = example / HEAD
    edit_body(example, HEAD, "word0000\n")
    same_tick = 0
    with api.open_store(example, readonly=True) as store:
        for i in range(1, 60):
            store.catalog.refresh()
            seen = path.stat()
            _rewrite_in_place(path, f"word{i - 1:04d}", f"word{i:04d}")
            now = path.stat()
            same_tick += (now.st_mtime_ns, now.st_ctime_ns) == (seen.st_mtime_ns,
                                                                seen.st_ctime_ns)
            store.catalog.refresh()
            row = store.catalog.entries("path = ?", (HEAD.as_posix(),))[0]
            assert row.digest == hashlib.sha256(path.read_bytes()).hexdigest(), i
            if same_tick >= 3:
                break
    # Not asserted: whether this file system's clock ever put two writes in one tick.


def test_progress_bar_only_on_a_terminal_and_only_once_reported(monkeypatch):
    import io

    from pcp_cli.cli.output import progress_bar as _progress_bar

    with _progress_bar(10) as update:
        assert update is None  # stderr is not a terminal under pytest
    fake = io.StringIO()
    fake.isatty = lambda: True  # type: ignore[method-assign]
    monkeypatch.setattr(sys, "stderr", fake)
    with _progress_bar(3000) as update:
        assert update is not None
    assert fake.getvalue() == ""  # a small rebuild never reports: no bar at all
    with _progress_bar(3000) as update:
        update(1000)
        update(2000)
