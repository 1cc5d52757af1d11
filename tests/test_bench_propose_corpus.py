"""The `pcp propose` quality corpus (bench/propose/) stays importable and honestly scored.

Not a quality measurement (that is bench/propose_quality.py, by hand): these check that the
committed exports are exactly what their sources build, that pcp imports every one of them
whole, and that the scorer counts what its docstring says.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import cli

BENCH = Path(__file__).resolve().parent.parent / "bench"
CORPUS = BENCH / "propose"


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def _contents(path: Path) -> object:
    """A file's bytes; for a zip, its members' (the deflated bytes vary with zlib builds)."""
    if path.suffix != ".zip":
        return path.read_bytes()
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


@pytest.fixture(scope="module")
def build_corpus() -> ModuleType:
    return _load("bench_build_corpus", CORPUS / "build_corpus.py")


@pytest.fixture(scope="module")
def quality() -> ModuleType:
    return _load("bench_propose_quality", BENCH / "propose_quality.py")


def test_committed_exports_are_what_the_sources_build(build_corpus, tmp_path):
    written = build_corpus.build(tmp_path)
    assert written
    for path in written:
        committed = CORPUS / path.relative_to(tmp_path)
        assert committed.exists(), f"{committed} is not committed: run build_corpus.py"
        assert _contents(committed) == _contents(path), (
            f"{committed.name} differs from its source: run bench/propose/build_corpus.py"
        )
    committed = {p.relative_to(CORPUS) for s in ("dev", "heldout") for p in (CORPUS / s).iterdir()}
    assert committed == {p.relative_to(tmp_path) for p in written}


@pytest.mark.parametrize(
    "export", sorted(CORPUS.glob("*/*.zip")), ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_every_export_imports_whole(export, store):
    labels = json.loads(export.with_suffix(".labels.json").read_text(encoding="utf-8"))
    result = cli("import", str(export), "--store", str(store), "--json")
    assert result.code == 0, result.stderr
    ls = cli("ls", "--type", "conversation", "--json", "--store", str(store))
    assert ls.code == 0, ls.stderr
    assert len(json.loads(ls.stdout)) == len(labels["conversations"])


def test_a_regenerated_reply_off_the_branch_is_not_imported(store):
    cli("import", str(CORPUS / "dev" / "ilse-chatgpt.zip"), "--store", str(store))
    found = cli("search", "Munich", "--json", "--store", str(store))
    assert found.code == 0, found.stderr
    assert json.loads(found.stdout)["results"] == []


def test_the_scorer_counts_a_match_a_duplicate_and_a_trap(quality):
    facts = [
        {"kind": "keystone", "category": "identity", "match": ["Porto"], "current": True},
        {"kind": "timeline_event", "category": "move", "match": ["Porto"], "current": True},
    ]
    traps = [{"kind": "other_person", "match": ["Lyon"], "text": "my sister lives in Lyon"}]
    proposals = [
        {"kind": "keystone", "category": "identity", "content": "Lives in Porto."},
        {"kind": "keystone", "category": "identity", "content": "Is based in porto."},
        {"kind": "keystone", "category": "identity", "content": "Lives in Porto, sister in Lyon."},
        {"kind": "keystone", "category": "preference", "content": "Likes YAML."},
    ]
    scored = quality.score(proposals, facts, traps)
    rows = scored["rows"]
    assert rows[0]["fact"] == 0 and not rows[0]["duplicate"]
    assert rows[1]["fact"] == 0 and rows[1]["duplicate"]  # right, but already found
    assert rows[2]["fact"] is None and rows[2]["trapped"]  # holds a trap: never correct
    assert rows[3]["fact"] is None
    assert set(scored["found"]) == {0}  # the keystone; the timeline event kind never matched
    assert [t["text"] for t in scored["taken"]] == ["my sister lives in Lyon"]
