"""End-to-end search benchmark on a real, synthetic pcp store.

    python bench/store_search_bench.py [-n 10000] [--work DIR] [--skip-default] [--keep]
        [--reuse-index] [--queries tuned|fresh] [--repeat 3] [--per-query]
        [--engine whoosh|tantivy]

Generates a store (revision files + head files written directly, with gen_corpus.py's Zipfian
English vocabulary, ~3% long conversation transcripts, ~3% CJK pages), then measures in one run:

- the first catalog scan, and the full index build through `pcp index --rebuild`'s code path
  (tuned) against whoosh 2.7.4's default writer settings on the same documents;
- one page edited by hand (rewritten in place, and replaced by rename as editors and git do):
  the extra time of the next search (store refresh + index catch-up) over an unchanged one;
- in-process `api.search` p50/p95 over 50 fixed queries (`--queries fresh`: 25 others, picked
  by word rank, that no ranking code was tuned on), snippets included (index current), each
  query's median of `--repeat` runs after a warm-up run, as wall time and as this process's CPU
  time (steadier on a loaded machine); and the same with the per-call store open + change
  scan that the MCP server does;
- whole-process `python -m pcp_cli search Q --store S --json` wall time against `rg -l -i`
  over the store's pages/ folder, for the plain-word queries.

`--engine` sets PCP_INDEX_ENGINE for the run (in-process and the `pcp search` processes), so
the same store copy can be measured on each engine in turn (each keeps its own index there
once built; switching engines on one copy rebuilds).

`--reuse-index` keeps an existing store and its index and measures searches only (no build,
no edited page), so one store can be measured with two versions of the code in turn.
Prints one JSON object. Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from gen_corpus import (  # noqa: E402
    NAMESPACES,
    ORIGINS,
    TAGS,
    TYPES,
    cjk_body,
    sentences,
    vocabulary,
    weighted,
    zipf_cum,
)
from search_bench import QUERIES  # noqa: E402

from pcp_cli import api  # noqa: E402
from pcp_cli.model.page import Actor, PageState, ProvenanceStep, Revision, file_json  # noqa: E402
from pcp_cli.store.headfile import render_head  # noqa: E402
from pcp_cli.store.store import Store  # noqa: E402

# Plain-word queries: the lookups `rg -l -i` can do the same way (any of the words).
RG_QUERIES = ["time", "people", "memory", "garden recipe", "travel budget", "piano coffee",
              "marathon doctor", "library notebook", "生存", "nonexistentword"]


def fresh_queries(vocab: list[str]) -> tuple[list[str], list[str]]:
    """A second query set no ranking code was tuned on: words picked by their Zipf rank in the
    generated vocabulary (rank 0 is on nearly every page, rank 20,000 on a handful), mixing a
    very common word with a rare one (where issue #10's lost matches were), ANDs, NOT, a
    phrase and field terms. Returns (all queries, the plain-word ones for `rg`)."""
    w = vocab.__getitem__
    plain = [w(1), w(8), w(120), w(2000), w(20000), f"{w(0)} {w(5000)}", f"{w(2)} {w(700)}",
             f"{w(10)} {w(40)}", f"{w(4)} {w(9)}", f"{w(1)} {w(50)} {w(3000)}"]
    others = [w(3), w(30), w(500), w(8000), f"{w(6)} {w(11)} {w(13)} {w(14)}",
              f"{w(2)} OR {w(900)}", f"{w(3)} AND {w(60)}", f"({w(5)} OR {w(70)}) AND {w(12)}",
              f"{w(7)} NOT {w(15)}", f'"{w(0)} {w(1)}"', f"type:note {w(7)}",
              f"tag:music {w(300)}", f"ns:work {w(15)}", "type:keystone", f"{w(1)} {w(16000)}"]
    return plain + others, plain


def gen_store(root: Path, n: int, seed: int = 7, long_share: float | None = None) -> None:
    """`long_share`: the share of long conversation transcripts (default: gen_corpus's ~3%)."""
    store = Store.init(root, owner_id="usr_bench", namespace="personal")
    rng = random.Random(seed)
    vocab = vocabulary(rng, 50_000)
    cum = zipf_cum(len(vocab))
    actor = Actor("user", "usr_bench")
    made: set[Path] = set()
    for i in range(n):
        page_id = f"pg_{i:07d}"
        ptype = weighted(rng, TYPES)
        if long_share is not None:
            ptype = "conversation" if rng.random() < long_share else (
                "note" if ptype == "conversation" else ptype)
        ns = weighted(rng, NAMESPACES)
        if ptype == "conversation":
            turns = [("**User:** " if t % 2 == 0 else "**Assistant:** ")
                     + sentences(rng, vocab, cum, rng.randint(30, 150))
                     for t in range(rng.randint(20, 60))]
            body = "\n\n".join(turns)
        elif rng.random() < 0.03:
            body = cjk_body(rng)
        elif ptype == "keystone":
            body = sentences(rng, vocab, cum, rng.randint(10, 40))
        else:
            body = "\n\n".join(sentences(rng, vocab, cum, rng.randint(30, 120))
                               for _ in range(rng.randint(1, 4)))
        title = " ".join(rng.choices(vocab, cum_weights=cum, k=rng.randint(2, 6))).capitalize()
        day = 1 + (i * 7919) % 2000
        year, rest = 2021 + day // 365, day % 365
        stamp = f"{year}-{1 + rest // 31:02d}-{1 + rest % 28:02d}T{i % 24:02d}:00:00.000Z"
        record: dict[str, object] = {}
        if ptype == "keystone":
            record = {"category": "other", "source": "user_stated"}
        elif ptype == "timeline_event":
            record = {"date": stamp[:7], "category": "other", "source": "user_stated"}
        state = PageState(
            page_id=page_id, type=ptype, namespace=ns, owner_id="usr_bench", content=body,
            title=title,
            lifecycle_status="active" if rng.random() < 0.9 else "superseded",
            review_status="affirmed" if rng.random() < 0.95 else "proposed",
            origin=rng.choice(ORIGINS),
            sensitivity="high" if rng.random() < 0.05 else "low",
            tags=tuple(sorted(set(rng.sample(TAGS, rng.randint(0, 3))))),
            record=record,
        )
        rev_id = f"rev_{i:07d}"
        revision = Revision(
            revision_id=rev_id, state=state, created_at=stamp, created_by=actor,
            provenance=(ProvenanceStep(operation="write", actor_type="user",
                                       actor_id="usr_bench", timestamp=stamp),),
            page_created_at=stamp,
        )
        rev_path = store.layout.revision_path(page_id, rev_id)
        rev_path.parent.mkdir(parents=True, exist_ok=True)
        rev_path.write_text(file_json(revision.to_dict()), encoding="utf-8")
        head = store.layout.head_path(ns, page_id)
        if head.parent not in made:
            head.parent.mkdir(parents=True, exist_ok=True)
            made.add(head.parent)
        head.write_text(render_head(revision), encoding="utf-8")
    store.close()


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def timed(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t, out


def edit(path: Path, word: str, *, rename: bool) -> None:
    text = path.read_text(encoding="utf-8").rstrip("\n") + f"\n\nEdited: {word}.\n"
    if rename:
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    else:
        path.write_text(text, encoding="utf-8")


def search_once(root: Path, query: str) -> dict:
    with api.open_store(root, readonly=True) as store:
        return api.search(store, query)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=10_000)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--skip-default", action="store_true",
                    help="skip the build with whoosh's default settings")
    ap.add_argument("--keep", action="store_true", help="keep the generated store")
    ap.add_argument("--reuse-index", action="store_true",
                    help="keep the store's index and measure searches only (no build, no edit)")
    ap.add_argument("--queries", choices=("tuned", "fresh"), default="tuned",
                    help="the 50 queries the ranking was tuned on, or a fresh set by word rank")
    ap.add_argument("--repeat", type=int, default=1,
                    help="in-process runs per query (after a warm-up run); the median counts")
    ap.add_argument("--per-query", action="store_true", help="print each query's times")
    ap.add_argument("--engine", choices=("whoosh", "tantivy"), default=None,
                    help="the search engine (PCP_INDEX_ENGINE) for this run")
    args = ap.parse_args()
    if args.engine:
        os.environ["PCP_INDEX_ENGINE"] = args.engine
    work = args.work or Path(tempfile.mkdtemp(prefix="pcp-store-bench-"))
    root = work / f"store-{args.n}"
    res: dict[str, object] = {"pages": args.n, "cpus": os.cpu_count(),
                              "engine": os.environ.get("PCP_INDEX_ENGINE", "whoosh"),
                              "load_before": os.getloadavg()}
    if not (root / "pcp.yaml").exists():
        t, _ = timed(gen_store, root, args.n)
        res["generate_s"] = round(t, 1)
    queries, rg_queries = QUERIES, RG_QUERIES
    if args.queries == "fresh":
        queries, rg_queries = fresh_queries(vocabulary(random.Random(7), 50_000))
    res["queries"] = args.queries
    opts = {"repeat": args.repeat, "per_query_out": args.per_query}
    if args.reuse_index:
        measure_search(root, res, queries, rg_queries, **opts)
        return
    shutil.rmtree(root / ".pcp", ignore_errors=True)
    size = sum(p.stat().st_size for p in (root / "pages").rglob("*.md"))
    res["pages_mb"] = round(size / 1e6, 1)

    # -- build -----------------------------------------------------------------------------
    t, store = timed(api.open_store, root, readonly=True)
    res["first_catalog_scan_s"] = round(t, 2)
    t, report = timed(api.index_store, store, rebuild=True)
    res["build_tuned_s"] = round(t, 2)
    res["indexed"] = report["documents"]
    if not args.skip_default and res["engine"] == "whoosh":
        from pcp_cli.index import SearchIndex
        from pcp_cli.query.index_sync import _all_docs

        default_dir = work / "default-index"
        shutil.rmtree(default_dir, ignore_errors=True)
        ix = SearchIndex.open_or_create(default_dir)
        t, _ = timed(ix.rebuild, _all_docs(store), tuned=False)
        ix.close()
        shutil.rmtree(default_dir, ignore_errors=True)
        res["build_whoosh_default_s"] = round(t, 2)
        res["build_speedup"] = round(t / res["build_tuned_s"], 2)  # type: ignore[operator]
    store.close()

    # -- change scan and catch-up ------------------------------------------------------------
    with api.open_store(root, readonly=True) as s:
        t, _ = timed(s.catalog.refresh, "full")
        res["full_stat_scan_ms"] = ms(t)
        t, _ = timed(s.catalog.refresh, "auto")
        res["auto_scan_ms"] = ms(t)
    base = [timed(search_once, root, "garden")[0] for _ in range(5)]
    res["search_unchanged_ms"] = ms(statistics.median(base))
    with api.open_store(root, readonly=True) as s:
        current = s.entries(types=("note",), statuses=("active",))
        victim = root / next(e.path for e in current[len(current) // 2:]
                             if e.sensitivity != "high")
    for mode in ("rename", "in_place"):
        word = f"zqxedit{mode.replace('_', '')}"
        edit(victim, word, rename=mode == "rename")
        t, data = timed(search_once, root, word)
        res[f"edit_{mode}_next_search_ms"] = ms(t)
        res[f"edit_{mode}_extra_ms"] = ms(t - statistics.median(base))
        res[f"edit_{mode}_found"] = data["count"] == 1

    measure_search(root, res, queries, rg_queries, **opts)
    if not args.keep and args.work is None:
        shutil.rmtree(work, ignore_errors=True)


def measure_search(root: Path, res: dict[str, object], queries: list[str],
                   rg_queries: list[str], *, repeat: int = 1, per_query_out: bool = False,
                   ) -> None:
    """In-process `api.search` latency and whole-process `pcp search` against `rg -l -i`."""
    # -- in-process latency ----------------------------------------------------------------
    # Wall time, and CPU time of this process (steadier on a loaded machine); each query's
    # median of `repeat` runs after one warm-up run.
    with api.open_store(root, readonly=True) as s:
        api.search(s, "warm up")
        times, cpus, per_query = [], [], {}
        for q in queries:
            api.search(s, q)
            walls, cpu = [], []
            for _ in range(repeat):
                c0 = time.process_time()
                t, data = timed(api.search, s, q)
                cpu.append(time.process_time() - c0)
                walls.append(t)
            times.append(statistics.median(walls))
            cpus.append(statistics.median(cpu))
            per_query[q] = {"wall_ms": ms(times[-1]), "cpu_ms": ms(cpus[-1]),
                            "count": data["count"]}
    res["inproc_p50_ms"] = ms(pct(times, 50))
    res["inproc_p95_ms"] = ms(pct(times, 95))
    res["inproc_max_ms"] = ms(max(times))
    res["inproc_cpu_p50_ms"] = ms(pct(cpus, 50))
    res["inproc_cpu_p95_ms"] = ms(pct(cpus, 95))
    res["inproc_cpu_max_ms"] = ms(max(cpus))
    if per_query_out:
        res["per_query"] = per_query
    times = [timed(search_once, root, q)[0] for q in queries]
    res["inproc_with_open_p50_ms"] = ms(pct(times, 50))
    res["inproc_with_open_p95_ms"] = ms(pct(times, 95))

    # -- whole process vs rg -----------------------------------------------------------------
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [sys.executable, "-m", "pcp_cli", "search"]
    subprocess.run(cmd + ["warm", "--store", str(root), "--json"], capture_output=True,
                   env=env, cwd=ROOT, check=True)
    pcp_t, rg_t = [], []
    rg = shutil.which("rg")
    for q in rg_queries:
        t0 = time.perf_counter()
        subprocess.run(cmd + [q, "--store", str(root), "--json"], capture_output=True,
                       env=env, cwd=ROOT, check=True)
        pcp_t.append(time.perf_counter() - t0)
        if rg:
            pattern = [a for w in q.split() for a in ("-e", w)]
            t0 = time.perf_counter()
            subprocess.run([rg, "-l", "-i", *pattern, str(root / "pages")],
                           capture_output=True)
            rg_t.append(time.perf_counter() - t0)
    res["process_pcp_median_ms"] = ms(statistics.median(pcp_t))
    res["process_pcp_max_ms"] = ms(max(pcp_t))
    if rg_t:
        res["process_rg_median_ms"] = ms(statistics.median(rg_t))
        res["process_rg_max_ms"] = ms(max(rg_t))
        res["pcp_over_rg"] = round(statistics.median(pcp_t) / statistics.median(rg_t), 2)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    res["python_startup_ms"] = ms(time.perf_counter() - t0)
    res["load_after"] = os.getloadavg()
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
