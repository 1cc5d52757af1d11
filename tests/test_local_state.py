"""`.pcp/` is derived: whatever there is not what pcp expects is moved aside and rebuilt with a
warning, never a failed command; generations left by killed index rebuilds are removed."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import cli, run_pcp
from tests.test_concurrency import helper_env


@pytest.fixture
def searched(store: Path) -> Path:
    assert cli("add", "hello wide world", "--store", str(store)).code == 0
    assert cli("search", "hello", "--store", str(store)).code == 0
    return store


def _hits(store: Path) -> list[str]:
    """Search in a new process: its index open is the "next open"."""
    result = run_pcp("search", "hello", "--store", str(store), "--json")
    assert result.code == 0, result.stderr
    return [r["snippet"] for r in result.json["results"]]


def test_a_catalog_that_is_a_folder_is_moved_aside_and_rebuilt(searched: Path) -> None:
    local = searched / ".pcp"
    for path in local.glob("catalog.sqlite*"):
        path.unlink()
    (local / "catalog.sqlite").mkdir()
    (local / "catalog.sqlite" / "junk").write_text("x")
    listed = cli("ls", "--store", str(searched), "--json")
    assert listed.code == 0, listed.stderr
    assert len(listed.json) == 1
    assert listed.stderr.startswith("Warning: ") and "catalog.sqlite was a folder" in \
        listed.stderr
    assert (local / "catalog.sqlite").is_file()
    assert list(local.glob("catalog.sqlite.moved-aside-*"))
    assert cli("ls", "--store", str(searched)).stderr == ""  # healed: said once


@pytest.mark.usefixtures("engine")
def test_an_index_that_is_a_file_is_moved_aside_and_rebuilt(searched: Path) -> None:
    import shutil

    index = searched / ".pcp" / "index"
    shutil.rmtree(index)
    index.write_text("not an index")
    result = cli("search", "hello", "--store", str(searched), "--json")
    assert result.code == 0, result.stderr
    assert len(result.json["results"]) == 1
    assert "index was a file" in result.stderr
    assert index.is_dir()


def test_a_local_folder_that_is_a_file_is_moved_aside(searched: Path) -> None:
    import shutil

    shutil.rmtree(searched / ".pcp")
    (searched / ".pcp").write_text("oops")
    assert _hits(searched)
    assert (searched / ".pcp").is_dir()


@pytest.mark.usefixtures("engine")
def test_orphan_generations_are_removed_on_the_next_open(searched: Path) -> None:
    index = searched / ".pcp" / "index"
    for n in range(3):
        orphan = index / f"g-dead{n}"
        orphan.mkdir()
        (orphan / "_MAIN_1.toc").write_text("left by a killed rebuild")
    assert _hits(searched)
    assert len([p for p in index.iterdir() if p.name.startswith("g-")]) == 1


@pytest.mark.usefixtures("engine")
def test_a_generation_being_built_is_left_alone(searched: Path) -> None:
    """A rebuild holds the index's write lock while it builds: its new folder is kept."""
    index = searched / ".pcp" / "index"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys,time; from whoosh.filedb.filestore import FileStorage; "
         f"lock = FileStorage({str(index)!r}).lock('WRITELOCK'); assert lock.acquire(False); "
         "print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True, env=helper_env())
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        building = index / "g-building"
        building.mkdir()
        assert _hits(searched)
        assert building.exists()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    time.sleep(0.05)
    assert _hits(searched)
    assert not (index / "g-building").exists()


@pytest.mark.slow
def test_killed_rebuilds_leave_no_generation_behind(searched: Path) -> None:
    """A real `pcp index --rebuild` killed while it builds, three times."""
    index = searched / ".pcp" / "index"
    for n in range(30):
        assert cli("add", f"filler page {n} hello", "--store", str(searched)).code == 0
    for _ in range(3):
        proc = subprocess.Popen(
            [sys.executable, "-m", "pcp_cli", "index", "--rebuild", "--store", str(searched)],
            env=helper_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        current = {p.name for p in index.iterdir() if p.name.startswith("g-")}
        while time.monotonic() < deadline and proc.poll() is None:
            now = {p.name for p in index.iterdir() if p.name.startswith("g-")}
            if now - current:
                break
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert _hits(searched)
    assert cli("index", "--store", str(searched), "--json").json["documents"] == 31
    assert len([p for p in index.iterdir() if p.name.startswith("g-")]) == 1


def test_a_hand_edit_of_pcp_yaml_is_seen_by_the_next_command(store: Path) -> None:
    """pcp.yaml's parse is remembered in .pcp/manifest.json, keyed by the file's bytes: an
    edit (even one that keeps the size and the mtime) is parsed afresh, a broken edit is the
    usual error naming the file, and a damaged cache is ignored."""
    import os

    manifest = store / "pcp.yaml"
    for _ in range(2):  # the first command after `pcp init` makes .pcp/, the next one fills it
        assert cli("ls", "--store", str(store), "--json").code == 0
    assert (store / ".pcp" / "manifest.json").exists()
    text = manifest.read_text("utf-8")
    st = manifest.stat()
    granted = text.replace("clients: {}", "clients: {agent: {allow_sensitive: false, "
                           "allow_write: false, scopes: ['user:*']}}")
    assert granted != text
    manifest.write_text(granted, "utf-8")
    listed = cli("grant", "list", "--store", str(store), "--json").json
    assert [c["client_id"] for c in listed] == ["agent"]
    broken = granted.replace("owner_id:", "owner_id: [", 1)
    manifest.write_text(broken, "utf-8")
    os.utime(manifest, ns=(st.st_atime_ns, st.st_mtime_ns))
    result = cli("ls", "--store", str(store), "--json")
    assert result.code == 5, result.stderr
    assert "pcp.yaml" in result.stderr
    manifest.write_text(text, "utf-8")
    (store / ".pcp" / "manifest.json").write_text("{not json", "utf-8")
    assert cli("ls", "--store", str(store), "--json").code == 0


def test_a_catalog_without_the_unsettled_index_opens_while_another_writer_holds_it(
        store: Path) -> None:
    """The partial index `pcp status` uses is added to existing catalogs on open; while
    another process holds the catalog's write lock the open goes on without it (no 30 s wait)
    and a later open adds it."""
    import sqlite3

    assert cli("add", "a page", "--store", str(store)).code == 0
    time.sleep(0.1)  # past the racy tick: the next scan settles the row, later ones write nothing
    assert cli("status", "--store", str(store), "--json").code == 0
    path = store / ".pcp" / "catalog.sqlite"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("DROP INDEX pages_unsettled")
    db.execute("BEGIN IMMEDIATE")  # another writer, mid-transaction
    started = time.monotonic()
    try:
        result = cli("status", "--store", str(store), "--json")
    finally:
        db.execute("COMMIT")
    assert result.code == 0, result.stderr
    assert time.monotonic() - started < 10
    assert cli("status", "--store", str(store), "--json").code == 0
    assert db.execute("SELECT 1 FROM sqlite_master WHERE name='pages_unsettled'").fetchone()
