"""The two engines find the same pages: the same terms, the same query, the same filter.

Rankings differ (whoosh's BM25F, tantivy's BM25); what a query returns, as a set, does not.
Also: the engine choice (PCP_INDEX_ENGINE, `pcp index --engine`, `pcp status`) and the clear
error when the tantivy extra is missing.
"""

from __future__ import annotations

import json
import string
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcp_cli.errors import ExitStatus
from pcp_cli.index import IndexFilter, SearchIndex, engine_of
from pcp_cli.index.text import analyze, positions, terms
from pcp_cli.query.index_sync import close_all
from tests.conftest import cli

from .conftest import CORPUS, doc, ids
from .test_exact_recall import WORDS, stores

tantivy = pytest.importorskip("tantivy")
from pcp_cli.index.text import index_terms, learn_words  # noqa: E402

ALL = IndexFilter.everything()


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.sampled_from(
    list("abcXYZ ,.-_'\n\t") + ["running", "The", "of", "İstanbul", "生存", "即适者", "서울",
                                "ことば", "ß", "Ǆ", "é", "x" * 50, "ＡＢ", "٣٤"]), max_size=30)
    | st.text(max_size=40) | st.text(alphabet=string.printable, max_size=80))
def test_tantivy_indexes_exactly_pcps_own_terms(parts: list[str] | str) -> None:
    # the fast paths of indexing (ASCII, no CJK, CJK) give exactly `analyze`'s terms, and
    # the whoosh engine's positions group them
    text = "".join(parts)
    assert index_terms(text) == " ".join(terms(text))
    learn_words([text.upper(), text])  # what a rebuild does before it forks its workers
    assert index_terms(text) == " ".join(terms(text))
    grouped: dict[str, list[int]] = {}
    for term, pos, _start, _end in analyze(text):
        grouped.setdefault(term, []).append(pos)
    assert positions(text) == grouped


def test_a_full_word_cache_is_emptied_and_the_terms_stay_exact(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from pcp_cli.index import text

    monkeypatch.setattr(text, "_TERM_OF", {})
    monkeypatch.setattr(text, "_TERM_OF_MAX", 4)
    for sample in ["Running dogs and the cats ran", "生存 running İstanbul words many more",
                   "Éclairs, crêpes and more crêpes", "one two three four five six seven"]:
        assert index_terms(sample) == " ".join(terms(sample))
        assert positions(sample) == {t: [i for i, u in enumerate(terms(sample)) if u == t]
                                     for t in dict.fromkeys(terms(sample))}
        assert len(text._TERM_OF) <= 7  # bounded: emptied when a text brings too many


def _both(tmp: Path, pages: list, update: bool = True) -> dict[str, SearchIndex]:  # type: ignore[type-arg]
    out = {}
    for engine in ("whoosh", "tantivy"):
        ix = SearchIndex.open_or_create(tmp / engine, engine=engine)
        assert engine_of(ix) == engine
        ix.rebuild(pages)
        if update and len(pages) > 3:  # a replaced page and a deleted one, on both
            first = pages[0]
            ix.update([doc(first.page_id, "kelp ocean kelp coral", namespace=first.namespace,
                           tags=("Reef",))])
            ix.delete([pages[1].path])
        out[engine] = ix
    return out


def _same(indexes: dict[str, SearchIndex], query: str, flt: IndexFilter) -> set[str]:
    found = {name: [h.page_id for h in ix.search(query, filter=flt, limit=1000)]
             for name, ix in indexes.items()}
    assert len(set(found["tantivy"])) == len(found["tantivy"]), query
    assert set(found["whoosh"]) == set(found["tantivy"]), query
    return set(found["whoosh"])


def _queries(a: list[str], b: list[str]) -> list[str]:
    return [
        " ".join(a), " OR ".join(a), f"({' OR '.join(a)}) AND ({' OR '.join(b)})",
        f"{a[0]} AND {b[0]}", f"{' '.join(a)} NOT {b[0]}", f"type:note {' '.join(b)}",
        f'"{a[0]} {b[0]}"', f"tag:reef {a[0]}", f"{a[0]} OR tag:reef", f"title:{a[0]}",
        f"{a[0][:3]}*", f"ns:work {b[0]}", f"{a[0]} NOT ns:personal", "id:p002",
        f"{a[0]} AND NOT {b[0]}", f"status:superseded {a[0]}",
    ]


FILTERS = [
    IndexFilter(), ALL, IndexFilter(namespaces=("work",)),
    IndexFilter(namespaces=("work",), namespace_subtrees=True, exclude_types=("keystone",)),
    IndexFilter(lifecycle_statuses=None, since="2026-01-02", until="2026-01-04"),
    IndexFilter(tags=("REEF",), lifecycle_statuses=None),
    IndexFilter(page_ids=frozenset({"p000", "p003", "p004", "p005"}),
                exclude_page_ids=frozenset({"p004"})),
    IndexFilter(sensitivities=("low",), review_statuses=("affirmed", "proposed")),
    IndexFilter(types=()),
]


def _varied(pages: list) -> list:  # type: ignore[type-arg]
    """The property test's pages with every filter axis varied."""
    import dataclasses

    out = []
    for i, p in enumerate(pages):
        out.append(dataclasses.replace(
            p, type="keystone" if i % 5 == 4 else "note",
            namespace=("work:acme" if i % 6 == 5 else p.namespace),
            sensitivity=("high", "low", "medium", "unclassified")[i % 4],
            review_status="proposed" if i % 4 == 3 else "affirmed",
            tags=("reef",) if i % 3 == 0 else ("Kelp", "a,b"),
            timestamp=f"2026-01-0{1 + i % 6}T0{i % 10}:00:00Z"))
    return out


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pages=stores(), a=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
       b=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3))
def test_both_engines_find_the_same_pages(pages: list, a: list[str], b: list[str]) -> None:  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory() as tmp:
        indexes = _both(Path(tmp), _varied(pages))
        try:
            for flt in FILTERS:
                for query in _queries(a, b):
                    _same(indexes, query, flt)
        finally:
            for ix in indexes.values():
                ix.close()


@pytest.mark.parametrize("query", [
    "running", "生存", "进化论", '"quick brown fox"', "quick brown fox", "type:keystone",
    "tags:HEALTH", "origin:user_stated concise", "title:pasta", "id:zh", "pasta OR morning",
    "fox NOT jumps", "fox AND lazy", "qu*", "fox^2 dog", "date:[2025 TO 2027]", "the",
    "ことば", "서울에서", "type:note AND (fox OR pasta)", "*",
])
def test_the_example_corpus_gives_the_same_pages(tmp_path: Path, query: str) -> None:
    indexes = _both(tmp_path, CORPUS, update=False)
    for flt in (ALL, IndexFilter()):
        _same(indexes, query, flt)
    # the same matched fields, and unscored field terms are unscored on both
    hits = {name: {h.page_id: h for h in ix.search(query, filter=ALL, limit=100)}
            for name, ix in indexes.items()}
    for page, hit in hits["whoosh"].items():
        other = hits["tantivy"][page]
        assert other.matched_fields == hit.matched_fields, (query, page)
        assert (other.score == 0) == (hit.score == 0), (query, page)
        assert 0 <= other.score < 1


def test_newest_and_oldest_sort_by_timestamp(tmp_path: Path) -> None:
    pages = [doc(f"d{i}", "tide", timestamp=f"2026-0{i}-01T00:00:00Z") for i in (3, 1, 2)]
    indexes = _both(tmp_path, pages, update=False)
    for ix in indexes.values():
        assert ids(ix.search("tide", sort="newest", filter=ALL)) == ["d3", "d2", "d1"]
        assert ids(ix.search("tide", sort="oldest", filter=ALL, limit=2)) == ["d1", "d2"]
        assert all(h.score == 0 for h in ix.search("tide", sort="newest", filter=ALL))


def test_a_rare_word_ranks_first_on_both(tmp_path: Path) -> None:
    docs = [doc(f"o{i:02d}", f"the ocean is deep and wide, page {i}") for i in range(12)]
    docs += [doc("kelp", "kelp forests grow tall in the ocean"), doc("misc", "nothing")]
    for ix in _both(tmp_path, docs, update=False).values():
        assert ids(ix.search("ocean kelp", limit=25))[0] == "kelp"
        assert len(ix.search("ocean OR kelp", limit=25)) == 13


# -- the engine choice ------------------------------------------------------------------------
@pytest.fixture(autouse=True)
def _close_indexes() -> Iterator[None]:
    yield
    close_all()


def _store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    assert cli("init", str(root), "--owner", "me").code == 0
    assert cli("add", "Tide pools at dawn", "--store", str(root)).code == 0
    return root


def test_pcp_index_engine_switches_rebuilds_and_status_says_so(tmp_path: Path) -> None:
    root = _store(tmp_path)
    assert cli("search", "pools", "--store", str(root)).code == 0  # tantivy: the default
    assert json.loads((root / ".pcp/index/meta.json").read_text())["engine"] == "tantivy"
    out = cli("index", "--engine", "whoosh", "--store", str(root), "--json")
    assert out.code == 0, out.stderr
    assert out.json["engine"] == "whoosh" and out.json["rebuilt"]
    assert (root / ".pcp/index/.engine").read_text().strip() == "whoosh"
    meta = json.loads((root / ".pcp/index/meta.json").read_text())
    assert meta["engine"] == "whoosh"
    assert len(cli("search", "pools", "--store", str(root), "--json").json["results"]) == 1
    status = cli("status", "--store", str(root), "--json")
    assert status.json["search_engine"] == {
        "engine": "whoosh", "chosen_by": ".pcp/index/.engine",
        "index": {"exists": True, "built_by": "whoosh", "format": meta["format_version"],
                  "documents": 1, "usable": True, "reason": None},
        "build": None, "tantivy_installed": True}
    assert "Search engine: whoosh" in cli("status", "--store", str(root)).stdout
    again = cli("index", "--store", str(root))
    assert again.code == 0 and "whoosh search index is up to date" in again.stdout
    # the index is a cache: lose it and the next search rebuilds it, with the chosen engine
    for p in (root / ".pcp/index").glob("g-*"):
        import shutil

        shutil.rmtree(p)
    assert len(cli("search", "dawn", "--store", str(root), "--json").json["results"]) == 1
    assert json.loads((root / ".pcp/index/meta.json").read_text())["engine"] == "whoosh"
    back = cli("index", "--engine", "tantivy", "--store", str(root), "--json")
    assert back.code == 0 and back.json["engine"] == "tantivy" and back.json["rebuilt"]
    # chosen over an index of the other engine: the choice is written down
    assert (root / ".pcp/index/.engine").read_text().strip() == "tantivy"
    assert cli("status", "--store", str(root), "--json").json["search_engine"][
        "engine"] == "tantivy"


def test_an_index_whoosh_built_as_the_old_default_is_kept(tmp_path: Path) -> None:
    """An index built by whoosh when it was the default (no choice file) is not rebuilt behind
    the person's back now that tantivy is: it stays whoosh's until they choose."""
    root = _store(tmp_path)
    assert cli("index", "--engine", "whoosh", "--store", str(root)).code == 0
    (root / ".pcp/index/.engine").unlink()  # as an older pcp left it
    close_all()
    before = (root / ".pcp/index/meta.json").read_bytes()
    found = cli("search", "pools", "--store", str(root), "--json")
    assert found.code == 0 and len(found.json["results"]) == 1
    assert (root / ".pcp/index/meta.json").read_bytes() == before  # not rebuilt
    engine = cli("status", "--store", str(root), "--json").json["search_engine"]
    assert engine["engine"] == "whoosh" and engine["chosen_by"] == "the index it built"
    assert "(chosen by the index it built)" in cli("status", "--store", str(root)).stdout
    assert cli("index", "--engine", "tantivy", "--store", str(root)).code == 0
    assert json.loads((root / ".pcp/index/meta.json").read_text())["engine"] == "tantivy"


def test_each_engine_names_the_other_engines_index_as_such(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the whoosh engine used to call a tantivy index "written in format 'tantivy-2.1'"
    root = _store(tmp_path)
    assert cli("index", "--engine", "tantivy", "--store", str(root)).code == 0
    monkeypatch.setenv("PCP_INDEX_ENGINE", "whoosh")
    close_all()
    status = cli("status", "--store", str(root), "--json").json["search_engine"]
    assert status["index"] == {
        "exists": True, "built_by": "tantivy", "format": "tantivy-2.2", "documents": 1,
        "usable": False,
        "reason": "it was built by the tantivy engine, and this device uses whoosh"}
    assert ("The search index needs a rebuild: it was built by the tantivy engine"
            in cli("status", "--store", str(root)).stdout)
    out = cli("index", "--store", str(root))
    assert out.code == 0, out.stderr
    assert ("Rebuilt the whoosh search index (it was built by the tantivy engine, and this "
            "device uses whoosh): 1 pages." in out.stdout)
    assert "format" not in out.stdout
    monkeypatch.setenv("PCP_INDEX_ENGINE", "tantivy")
    close_all()
    assert cli("status", "--store", str(root), "--json").json["search_engine"]["index"][
        "reason"] == "it was built by the whoosh engine, and this device uses tantivy"
    back = cli("index", "--store", str(root))
    assert "(it was built by the whoosh engine, and this device uses tantivy)" in back.stdout


def test_the_environment_overrides_the_store_choice(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    root = _store(tmp_path)
    monkeypatch.setenv("PCP_INDEX_ENGINE", "tantivy")
    out = cli("search", "dawn", "--store", str(root), "--json")
    assert out.code == 0 and len(out.json["results"]) == 1
    assert json.loads((root / ".pcp/index/meta.json").read_text())["engine"] == "tantivy"
    engine = cli("status", "--store", str(root), "--json").json["search_engine"]
    assert (engine["engine"], engine["chosen_by"]) == ("tantivy", "PCP_INDEX_ENGINE")
    assert engine["index"]["built_by"] == "tantivy" and engine["index"]["usable"]
    clash = cli("index", "--engine", "whoosh", "--store", str(root))
    assert clash.code == ExitStatus.USAGE and "PCP_INDEX_ENGINE" in clash.stderr
    monkeypatch.setenv("PCP_INDEX_ENGINE", "lucene")
    close_all()  # a process reads the variable when it opens the index
    bad = cli("search", "dawn", "--store", str(root))
    assert bad.code == ExitStatus.USAGE and "lucene" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_an_unknown_engine_is_a_usage_error_and_changes_nothing(tmp_path: Path) -> None:
    root = _store(tmp_path)
    out = cli("index", "--engine", "lucene", "--store", str(root))
    assert out.code == ExitStatus.USAGE
    assert out.stderr.startswith("Error: Unknown search engine 'lucene'")
    assert not (root / ".pcp/index/.engine").exists()


def test_tantivy_without_its_package_is_one_clear_line(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import pcp_cli.index as index

    root = _store(tmp_path)
    monkeypatch.setitem(sys.modules, "tantivy", None)  # `import tantivy` fails
    monkeypatch.setattr(index, "DEFAULT_ENGINE", index.FALLBACK_ENGINE)  # as where it is
    assert cli("search", "dawn", "--store", str(root)).code == 0  # a whoosh index
    before = (root / ".pcp/index/meta.json").read_bytes()
    out = cli("index", "--engine", "tantivy", "--store", str(root))
    assert out.code == ExitStatus.INDEX_UNAVAILABLE == 7
    lines = out.stderr.strip().splitlines()
    assert lines[0] == ("Error: The tantivy search engine is chosen, but the tantivy package "
                        "is not installed.")
    assert "pip install 'pcp-cli[fast]'" in lines[1]
    assert not (root / ".pcp/index/.engine").exists()
    assert (root / ".pcp/index/meta.json").read_bytes() == before
    # chosen earlier, then the package went away: searches say so, never fall back silently
    (root / ".pcp/index/.engine").write_text("tantivy\n")
    close_all()  # as a new process would
    out = cli("search", "dawn", "--store", str(root), "--json")
    assert out.code == 7 and out.error_json["error"]["code"] == "index_engine_unavailable"
    assert cli("index", "--engine", "whoosh", "--store", str(root)).code == 0  # the way back


WITHOUT_TANTIVY = """
import runpy, sys
sys.modules["tantivy"] = None  # as where the fast extra is not installed: `import tantivy` fails
sys.argv = ["pcp", *sys.argv[1:]]
runpy.run_module("pcp_cli", run_name="__main__")
"""


def test_without_the_fast_extra_a_store_searches_with_whoosh_and_status_says_how(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`pip install pcp-cli` without `[fast]`: a real process finds the same page with whoosh,
    and `pcp status` names the engine and the install command that brings the fast one."""
    import subprocess

    monkeypatch.delenv("PCP_INDEX_ENGINE", raising=False)
    root = _store(tmp_path)

    def pcp(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", WITHOUT_TANTIVY, *args, "--store",
                               str(root)], capture_output=True, text=True, timeout=120)

    found = pcp("search", "pools", "--json")
    assert found.returncode == 0, found.stderr
    assert len(json.loads(found.stdout)["results"]) == 1
    assert json.loads((root / ".pcp/index/meta.json").read_text())["engine"] == "whoosh"
    status = pcp("status")
    assert status.returncode == 0, status.stderr
    assert ("Search engine: whoosh (the fast engine, tantivy, is not installed: "
            "pip install 'pcp-cli[fast]').") in status.stdout
    assert cli("status", "--store", str(root), "--json").json["search_engine"][
        "tantivy_installed"] is True  # this process has it: the line is not printed
    assert "not installed" not in cli("status", "--store", str(root)).stdout


def test_a_large_rebuild_that_fails_midway_keeps_the_old_index(tmp_path: Path) -> None:
    # above the threshold the text is analysed in worker processes: a failure while reading
    # the store still leaves the old index, and no generation behind
    from pcp_cli.index import _tantivy

    ix = SearchIndex.open_or_create(tmp_path / "ix", engine="tantivy")
    ix.rebuild(CORPUS)

    def exploding():  # type: ignore[no-untyped-def]
        for i in range(_tantivy.PARALLEL_THRESHOLD + 300):
            yield doc(f"n{i}", f"word{i % 50} tide")
        raise RuntimeError("store read failed")

    with pytest.raises(RuntimeError):
        ix.rebuild(exploding())
    assert ids(ix.search("pasta", filter=ALL)) == ["cook"]
    assert len(list((tmp_path / "ix").glob("g-*"))) == 1
    n = ix.rebuild(doc(f"n{i}", f"word{i % 50} tide 生存") for i in range(2300))
    assert n == 2300 == ix.doc_count()
    assert len(ix.search("word7 AND 生存", filter=ALL, limit=100)) == 46


KILLED_ANALYSIS = """
import os, signal, sys
from pcp_cli.cli import main
from pcp_cli.index import _tantivy

# every page is a "large" rebuild, in batches of two, and the analysis workers are killed
# (as the kernel's OOM killer would) on their first batch
_tantivy.PARALLEL_THRESHOLD = 5
_tantivy.ANALYSIS_BATCH = 2

def killed(jobs, results):
    jobs.get()
    os.kill(os.getpid(), signal.SIGKILL)

_tantivy._analysis_worker = killed
main(sys.argv[1:])
"""


@pytest.mark.slow
def test_a_killed_analysis_worker_fails_the_tantivy_rebuild_with_exit_7(example: Path) -> None:
    store = example
    import subprocess

    assert cli("index", "--engine", "tantivy", "--store", str(store)).code == 0
    meta = (store / ".pcp/index/meta.json").read_bytes()
    before = sorted(p.name for p in (store / ".pcp/index").iterdir())
    run = subprocess.run([sys.executable, "-c", KILLED_ANALYSIS, "index", "--rebuild",
                          "--store", str(store)], capture_output=True, text=True, timeout=60)
    assert run.returncode == ExitStatus.INDEX_UNAVAILABLE, run.stderr[-2000:]
    assert "worker process died" in run.stderr and "Traceback" not in run.stderr
    # the old index is untouched and still answers, in a new process
    assert (store / ".pcp/index/meta.json").read_bytes() == meta
    assert sorted(p.name for p in (store / ".pcp/index").iterdir()) == before
    close_all()
    found = cli("search", "Tidewatch", "--store", str(store), "--json")
    assert found.code == 0 and found.json["results"]
