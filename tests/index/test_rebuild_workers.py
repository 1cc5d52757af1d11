"""A large rebuild: pcp's worker processes, compact posting runs and length tables give the
index whoosh's own writer gives, and a worker that fails or dies fails the rebuild cleanly
(the old index kept, no generation left behind)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pcp_cli.errors import IndexUnavailable
from pcp_cli.index import SearchIndex, _whoosh, _whoosh_build
from pcp_cli.index.text import analyze, positions

from .conftest import CORPUS, doc, ids

WORDS = ("garden recipe travel budget piano coffee marathon doctor library notebook time "
         "people memory school family student world month child line group state").split()


def corpus(n: int) -> list:  # type: ignore[type-arg]
    rng = random.Random(16)
    out = []
    for i in range(n):
        words = rng.choices(WORDS, weights=range(len(WORDS), 0, -1), k=rng.randint(3, 60))
        if i % 97 == 0:
            words.append("生存競争")
        out.append(doc(f"p{i:05d}", " ".join(words), title=" ".join(words[:3]),
                       tags=(rng.choice(WORDS),)))
    return out


@given(st.text(alphabet=st.sampled_from("ab cdé_-Zz9 生存競争テ\n,."), max_size=80))
def test_positions_group_what_analyze_yields(text: str) -> None:
    grouped: dict[str, list[int]] = {}
    for term, pos, _start, _end in analyze(text):
        grouped.setdefault(term, []).append(pos)
    assert positions(text) == grouped
    assert list(positions(text)) == list(grouped)  # same first-seen order


QUERIES = ["garden", "time people", "garden recipe travel", '"garden recipe"', "生存",
           "travel AND budget", "piano NOT coffee", "title:school", "tag:doctor month"]


def all_hits(ix: SearchIndex, query: str) -> dict[str, float]:
    return {h.path: round(h.score_raw, 9) for h in ix.search(query, limit=5000)}


@pytest.mark.slow
def test_parallel_rebuild_with_spilled_runs_matches_whooshs_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = corpus(_whoosh.MP_THRESHOLD + 300)
    reference = SearchIndex.open_or_create(tmp_path / "reference", engine="whoosh")
    reference.rebuild(docs, tuned=False)  # whoosh's own writer, one process
    # A tiny pool: every worker spills many compressed runs and merges them.
    monkeypatch.setattr(_whoosh_build, "LIMIT_MB", 1)
    built = SearchIndex.open_or_create(tmp_path / "built", engine="whoosh")
    assert built.rebuild(docs) == len(docs)
    try:
        assert built.doc_count() == len(docs)
        assert len(built._ix._segments()) == _whoosh_build.WORKERS
        for q in QUERIES:
            assert all_hits(built, q) == all_hits(reference, q), q
        # Nothing temporary is left in the index folder.
        leftovers = [p.name for p in (tmp_path / "built").rglob("*")
                     if p.name.endswith((".tmp", ".run"))]
        assert leftovers == []
    finally:
        built.close()
        reference.close()


def _fails(ix: object, jobs: object, results: object) -> None:
    raise RuntimeError("disk on fire")


def _dies(ix: object, jobs: object, results: object) -> None:
    os._exit(3)


@pytest.mark.slow
@pytest.mark.parametrize("worker", [_fails, _dies], ids=["raises", "killed"])
def test_a_failed_worker_fails_the_rebuild_and_keeps_the_old_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, worker: object
) -> None:
    index_dir = tmp_path / "index"
    ix = SearchIndex.open_or_create(index_dir, engine="whoosh")
    ix.rebuild(CORPUS)
    before = sorted(p.name for p in index_dir.iterdir())
    monkeypatch.setattr(_whoosh_build, "_worker", worker)
    with pytest.raises(IndexUnavailable) as err:
        ix.rebuild(corpus(_whoosh.MP_THRESHOLD + 10))
    assert err.value.hint and "rebuild" in err.value.hint
    assert sorted(p.name for p in index_dir.iterdir()) == before
    again = SearchIndex.open_or_create(index_dir, engine="whoosh")
    assert again.needs_rebuild is None
    assert ids(again.search("pasta")) == ["cook"]
    again.close()
    ix.close()


FAILED_REBUILD = """
import os, sys
from pcp_cli.errors import IndexUnavailable
from pcp_cli.index import SearchIndex, _whoosh, _whoosh_build
from pcp_cli.index.types import IndexDoc

def dies(ix, jobs, results):
    os._exit(3)

_whoosh_build._worker = dies
docs = [IndexDoc(path=f"pages/personal/p{i}.md", page_id=f"p{i}", revision_id=f"rev_{i}",
                 title="t", body="garden recipe " * 200, type="note", namespace="personal",
                 timestamp="2026-01-01T00:00:00Z")
        for i in range(_whoosh.MP_THRESHOLD + 400)]
ix = SearchIndex.open_or_create(sys.argv[1], engine="whoosh")
try:
    ix.rebuild(docs)
except IndexUnavailable:
    print("refused")
"""


@pytest.mark.slow
def test_a_process_whose_rebuild_workers_died_still_exits(tmp_path: Path) -> None:
    # The documents queued for the dead workers must not keep the process from exiting (its
    # queue's feeder thread would wait forever on a pipe nobody reads).
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", FAILED_REBUILD, str(tmp_path / "index")],
                         capture_output=True, text=True, timeout=60)
    assert run.stdout.strip() == "refused", run.stderr[-2000:]
