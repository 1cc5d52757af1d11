"""Measure the search index on a corpus made by gen_corpus.py.

    python bench/search_bench.py CORPUS_DIR [--work DIR] [--skip-default] [--repeat 5]

Reports: full build time (tuned vs whoosh's default writer settings, same corpus and schema),
index open time, in-process p50/p95 over 50 fixed queries with and without snippets (limit
10, snippets cut from the page files as the caller will), update-one-page time and the time
until the next search sees it, and `rg -l -i` over the same folder when rg is on PATH.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pcp_cli.index import IndexDoc, IndexFilter, SearchIndex, make_snippet, query_words  # noqa: E402

QUERIES = [
    "time",
    "people",
    "work",
    "memory",
    "context profile",
    "search index",
    "keystone",
    "garden recipe",
    "travel budget",
    "meeting design review",
    "deploy server database",
    "client model prompt",
    "concise answer style",
    "train music",
    "piano coffee",
    "bread pasta garlic",
    "olive recipe",
    "marathon doctor",
    "insurance salary tax",
    "vacation flight hotel",
    "running",
    "runs",
    "researching history",
    '"design review"',
    '"search index"',
    '"olive oil"',
    "type:keystone",
    "type:conversation deploy",
    "tag:travel",
    "tag:food bread",
    "namespace:work:acme server",
    "ns:personal coffee",
    "origin:user_stated",
    "python AND code",
    "python OR piano",
    "music NOT piano",
    "(travel OR vacation) AND hotel",
    "生存",
    "进化论",
    "机器学习",
    "しりとり",
    "コーヒー",
    "서울",
    "프로그래머",
    "커피",
    "daizai",
    "bicaibufai",
    "nonexistentword",
    "library notebook",
    "schedule deadline release testing",
]


def split_page(text: str) -> tuple[dict, str]:
    _, front, body = text.split("---\n", 2)
    return yaml.safe_load(front), body


def load_docs(root: Path) -> Iterator[IndexDoc]:
    for dirpath, _, files in os.walk(root / "pages"):
        for name in sorted(files):
            if not name.endswith(".md"):
                continue
            path = Path(dirpath) / name
            meta, body = split_page(path.read_text(encoding="utf-8"))
            yield IndexDoc(
                path=str(path.relative_to(root)),
                page_id=meta["page_id"],
                revision_id=meta["revision_id"],
                title=meta["title"],
                body=body,
                type=meta["type"],
                namespace=meta["namespace"],
                origin=meta["origin"],
                sensitivity=meta["sensitivity"],
                lifecycle_status=meta["lifecycle_status"],
                review_status=meta["review_status"],
                tags=tuple(meta["tags"]),
                timestamp=meta["created_at"],
                mtime_ns=path.stat().st_mtime_ns,
            )


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def build(docs: list[IndexDoc], directory: Path, tuned: bool) -> float:
    shutil.rmtree(directory, ignore_errors=True)
    ix = SearchIndex.open_or_create(directory)
    t = time.perf_counter()
    ix.rebuild(docs, tuned=tuned)
    elapsed = time.perf_counter() - t
    ix.close()
    return elapsed


def search_with_snippets(ix: SearchIndex, root: Path, q: str, flt: IndexFilter) -> int:
    hits = ix.search(q, filter=flt, limit=10)
    words = query_words(q)
    for h in hits:
        _, body = split_body(root / h.path)
        make_snippet(body, words, 240)
    return len(hits)


def split_body(path: Path) -> tuple[str, str]:
    text = path.read_text(encoding="utf-8")
    end = text.find("\n---\n", 4)
    return text[: end + 5], text[end + 5 :]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--skip-default", action="store_true", help="skip the untuned build")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="pcp-bench-"))
    results: dict[str, object] = {"corpus": str(args.corpus), "cpus": os.cpu_count()}

    t = time.perf_counter()
    docs = list(load_docs(args.corpus))
    results["pages"] = len(docs)
    results["load_docs"] = ms(time.perf_counter() - t)
    print(f"loaded {len(docs)} pages in {results['load_docs']}", file=sys.stderr)

    if not args.skip_default:
        results["build_default"] = f"{build(docs, work / 'default', tuned=False):.1f} s"
        print(f"default build {results['build_default']}", file=sys.stderr)
        shutil.rmtree(work / "default", ignore_errors=True)
    index_dir = work / "tuned"
    results["build_tuned"] = f"{build(docs, index_dir, tuned=True):.1f} s"
    print(f"tuned build {results['build_tuned']}", file=sys.stderr)
    gen = next(index_dir.glob("g-*"))
    results["index_size"] = f"{sum(p.stat().st_size for p in gen.iterdir()) / 1e6:.1f} MB"
    results["segments"] = len(list(gen.glob("*.pst"))) + len(list(gen.glob("*.seg")))

    opens, firsts = [], []
    for _ in range(args.repeat):
        t = time.perf_counter()
        ix = SearchIndex.open_or_create(index_dir)
        opens.append(time.perf_counter() - t)
        t = time.perf_counter()
        ix.search("coffee", limit=10)
        firsts.append(time.perf_counter() - t)
        ix.close()
    results["open"] = ms(statistics.median(opens))
    results["first_search_after_open"] = ms(statistics.median(firsts))
    # In a fresh process, as `pcp search` runs: import + open + one search with snippets.
    code = (
        "import sys,time;t=time.perf_counter();"
        f"sys.path.insert(0,{str(Path(__file__).resolve().parents[1])!r});"
        "from pcp_cli.index import SearchIndex;"
        f"ix=SearchIndex.open_or_create({str(index_dir)!r});ix.search('coffee');"
        "print(time.perf_counter()-t)"
    )
    cold = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(3)
    ]
    results["process_import_open_search"] = ms(statistics.median(cold))

    ix = SearchIndex.open_or_create(index_dir)
    flt = IndexFilter()  # the default safeguards: active, affirmed, not high sensitivity
    for q in QUERIES:  # warm-up
        search_with_snippets(ix, args.corpus, q, flt)
    plain, snip, found = [], [], []
    for _ in range(args.repeat):
        for q in QUERIES:
            t = time.perf_counter()
            ix.search(q, filter=flt, limit=10)
            plain.append(time.perf_counter() - t)
            t = time.perf_counter()
            found.append(search_with_snippets(ix, args.corpus, q, flt))
            snip.append(time.perf_counter() - t)
    results["search_p50"] = ms(pct(plain, 50))
    results["search_p95"] = ms(pct(plain, 95))
    results["search_snippets_p50"] = ms(pct(snip, 50))
    results["search_snippets_p95"] = ms(pct(snip, 95))
    results["search_snippets_max"] = ms(max(snip))
    results["queries_with_hits"] = sum(1 for n in found[: len(QUERIES)] if n)

    target = docs[len(docs) // 2]
    edited = IndexDoc(
        **{
            **target.__dict__,
            "body": target.body + " zyzzyvaedit",
            "revision_id": target.revision_id + "x",
        }
    )
    ups, nexts = [], []
    for i in range(args.repeat):
        e = IndexDoc(**{**edited.__dict__, "body": edited.body + f" rep{i}"})
        t = time.perf_counter()
        ix.update([e], meta={"seq": i})
        ups.append(time.perf_counter() - t)
        t = time.perf_counter()
        hits = ix.search("zyzzyvaedit", filter=IndexFilter.everything())
        nexts.append(time.perf_counter() - t)
        assert [h.page_id for h in hits] == [target.page_id], hits
    results["update_one"] = ms(statistics.median(ups))
    results["next_search_after_update"] = ms(statistics.median(nexts))
    ix.close()

    rg = shutil.which("rg")
    if rg:
        times = []
        for q in ("coffee", "marathon doctor", "しりとり", "zyzzyva"):
            t = time.perf_counter()
            subprocess.run(
                [rg, "-l", "-i", q, str(args.corpus / "pages")],
                stdout=subprocess.DEVNULL,
                check=False,
            )
            times.append(time.perf_counter() - t)
        results["rg_l_i_median"] = ms(statistics.median(times))
    else:
        results["rg_l_i_median"] = "rg not on PATH"
    print(json.dumps(results, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
