"""Update, delete, meta, and an index broken on disk on purpose."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pcp_cli.errors import ExitStatus, IndexUnavailable
from pcp_cli.index import FORMAT_VERSION, IndexFilter, IndexNeedsRebuild, SearchIndex

from .conftest import CORPUS, doc, ids

pytestmark = pytest.mark.usefixtures("engine")

ALL = IndexFilter.everything()


def generation(index_dir: Path) -> Path:
    meta = json.loads((index_dir / "meta.json").read_text())
    return index_dir / meta["generation"]


def test_update_replaces_by_path(ix: SearchIndex) -> None:
    assert ids(ix.search("pasta", filter=ALL)) == ["cook"]
    edited = doc("cook", "Baking bread with rye flour.", title="Bread", revision_id="rev_cook_2")
    assert ix.update([edited]) == 1
    assert ix.search("pasta", filter=ALL) == []
    (hit,) = ix.search("bread", filter=ALL)
    assert hit.revision_id == "rev_cook_2"
    assert ix.doc_count() == len(CORPUS)


def test_update_is_seen_by_a_second_reader(index_dir: Path, ix: SearchIndex) -> None:
    other = SearchIndex.open_or_create(index_dir)
    assert other.search("sourdough", filter=ALL) == []
    ix.update([doc("new", "sourdough starter")])
    assert ids(other.search("sourdough", filter=ALL)) == ["new"]


def test_delete(ix: SearchIndex) -> None:
    path = ix.search("pasta", filter=ALL)[0].path
    assert ix.delete([path, "pages/none.md"]) == 1
    assert ix.search("pasta", filter=ALL) == []
    assert ix.doc_count() == len(CORPUS) - 1
    reopened = SearchIndex.open_or_create(ix.directory)
    assert reopened.needs_rebuild is None
    assert reopened.search("pasta", filter=ALL) == []


def test_meta_persists_and_rides_along_with_writes(ix: SearchIndex, index_dir: Path) -> None:
    assert ix.meta == {}
    ix.set_meta(seq=3)
    ix.update([doc("n", "x y z")], meta={"seq": 4})
    ix.delete(["nothing"], meta={"seq": 5, "store_id": "st_1"})
    assert SearchIndex.open_or_create(index_dir).meta == {"seq": 5, "store_id": "st_1"}
    ix.rebuild(CORPUS, meta={"seq": 9})
    assert SearchIndex.open_or_create(index_dir).meta == {"seq": 9}


def test_stamps_list_what_is_indexed(ix: SearchIndex) -> None:
    ix.update([doc("cook", "new", revision_id="rev_cook_2", mtime_ns=123)])
    stamps = ix.stamps()
    assert len(stamps) == len(CORPUS)
    assert stamps["pages/personal/cook.md"].revision_id == "rev_cook_2"
    assert stamps["pages/personal/cook.md"].mtime_ns == 123


def test_missing_index_is_created_and_asks_for_a_first_build(index_dir: Path) -> None:
    index = SearchIndex.open_or_create(index_dir)
    assert index.created and index.needs_rebuild
    with pytest.raises(IndexNeedsRebuild):  # never an empty result from an unbuilt index
        index.search("pasta")
    index.rebuild([])
    assert index.needs_rebuild is None and index.search("pasta") == []
    index.rebuild(CORPUS, progress=lambda n: None)
    assert ids(index.search("pasta", filter=ALL)) == ["cook"]


def test_progress_is_reported(index_dir: Path) -> None:
    seen: list[int] = []
    index = SearchIndex.open_or_create(index_dir)
    index.rebuild((doc(f"p{i}", "word") for i in range(2500)), progress=seen.append)
    assert seen == [1000, 2000, 2500]
    assert index.doc_count() == 2500
    assert len(list(index.directory.glob("g-*"))) == 1  # the old generation is gone


# Each engine's own files for the same damage: postings, the term dictionary, the table of
# contents (tantivy keeps its segment list in the generation's meta.json).
ENGINE_FILES = {"whoosh": {"pst": "*.pst", "trm": "*.trm", "toc": "*.toc"},
                "tantivy": {"pst": "*.idx", "trm": "*.term", "toc": "meta.json"}}


def _break(index_dir: Path, how: str) -> None:
    gen = generation(index_dir)
    files = ENGINE_FILES[json.loads((index_dir / "meta.json").read_text()).get("engine",
                                                                             "whoosh")]
    if how == "garbage_meta":
        (index_dir / "meta.json").write_text("{not json")
    elif how == "incompatible":
        meta = json.loads((index_dir / "meta.json").read_text())
        meta["format_version"] = FORMAT_VERSION + 1
        (index_dir / "meta.json").write_text(json.dumps(meta))
    elif how == "truncated_postings":
        pst = next(gen.glob(files["pst"]))
        pst.write_bytes(pst.read_bytes()[: pst.stat().st_size // 2])
    elif how.startswith("garbage_same_size_"):
        part = next(gen.glob(files[how.rsplit("_", 1)[1]]))
        size = part.stat().st_size
        part.write_bytes(b"\x00garbage" * (size // 8) + b"x" * (size % 8))
    elif how == "garbage_toc":
        for toc in gen.glob(files["toc"]):
            toc.write_bytes(b"garbage" * 10)
    elif how == "files_deleted":
        for p in gen.iterdir():
            p.unlink()
    elif how == "generation_gone":
        for p in gen.iterdir():
            p.unlink()
        gen.rmdir()
    elif how == "unfinished_build":
        meta = json.loads((index_dir / "meta.json").read_text())
        meta["built"] = False
        (index_dir / "meta.json").write_text(json.dumps(meta))
    else:
        raise AssertionError(how)


BREAKAGES = [
    "garbage_meta",
    "incompatible",
    "truncated_postings",
    "garbage_same_size_pst",
    "garbage_same_size_trm",
    "garbage_toc",
    "files_deleted",
    "generation_gone",
    "unfinished_build",
]


@pytest.mark.parametrize("how", BREAKAGES)
def test_broken_index_is_reported_then_rebuilt(index_dir: Path, ix: SearchIndex, how: str) -> None:
    ix.close()
    _break(index_dir, how)
    broken = SearchIndex.open_or_create(index_dir)
    # Either opening notices, or the first search does; never a silent empty result.
    with pytest.raises(IndexNeedsRebuild) as err:
        broken.search("pasta", filter=ALL)
    assert err.value.exit_status == ExitStatus.INDEX_UNAVAILABLE
    assert err.value.hint and "rebuild" in err.value.hint
    assert broken.needs_rebuild
    broken.rebuild(CORPUS)
    assert broken.needs_rebuild is None
    assert ids(broken.search("pasta", filter=ALL)) == ["cook"]
    assert ids(SearchIndex.open_or_create(index_dir).search("pasta", filter=ALL)) == ["cook"]


def test_update_on_a_broken_index_asks_for_rebuild(index_dir: Path, ix: SearchIndex) -> None:
    ix.close()
    _break(index_dir, "incompatible")
    broken = SearchIndex.open_or_create(index_dir)
    with pytest.raises(IndexNeedsRebuild):
        broken.update([doc("x", "y")])


HOLD_LOCK = textwrap.dedent(
    """
    import sys, time
    from whoosh.filedb.filestore import FileStorage
    lock = FileStorage(sys.argv[1]).lock("WRITELOCK")
    assert lock.acquire(False)
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    """
)


def _hold_lock(index_dir: Path, seconds: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(index_dir), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def test_locked_index_fails_writers_but_not_readers(index_dir: Path, ix: SearchIndex) -> None:
    proc = _hold_lock(index_dir, 10)
    try:
        assert ids(ix.search("pasta", filter=ALL)) == ["cook"]  # readers just read
        started = time.monotonic()
        with pytest.raises(IndexUnavailable) as err:
            ix.update([doc("x", "y")])
        assert not isinstance(err.value, IndexNeedsRebuild)
        assert err.value.exit_status == ExitStatus.INDEX_UNAVAILABLE and err.value.hint
        assert 1.5 < time.monotonic() - started < 5  # waited briefly, then gave up
    finally:
        proc.kill()
        proc.wait()
    ix.update([doc("x", "yak")])  # the lock dies with its holder
    assert ids(ix.search("yak", filter=ALL)) == ["x"]


def test_writer_waits_for_a_short_lock(index_dir: Path, ix: SearchIndex) -> None:
    proc = _hold_lock(index_dir, 0.5)
    try:
        ix.update([doc("x", "yak")])
    finally:
        proc.wait()
    assert ids(ix.search("yak", filter=ALL)) == ["x"]


def test_failed_rebuild_keeps_the_old_index(index_dir: Path, ix: SearchIndex) -> None:
    def exploding():  # type: ignore[no-untyped-def]
        yield doc("a", "alpha")
        raise RuntimeError("store read failed")

    with pytest.raises(RuntimeError):
        ix.rebuild(exploding())
    reopened = SearchIndex.open_or_create(index_dir)
    assert reopened.needs_rebuild is None
    assert ids(reopened.search("pasta", filter=ALL)) == ["cook"]
    assert len(list(index_dir.glob("g-*"))) == 1
