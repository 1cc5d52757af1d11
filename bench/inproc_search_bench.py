"""In-process `api.search` (the whole call, snippets included) p50/p95 on an existing store.

    python bench/inproc_search_bench.py STORE [--queries fresh|FILE.json] [--repeat 3]

`fresh` is store_search_bench.py's fresh set (words by Zipf rank); a FILE is a JSON list of
queries (bench/holdout_queries.json: 50 queries by random rank, kept aside, never tuned on).
Each query: one warm-up run, then the median of `--repeat` runs, as wall time and as this
process's CPU time (steadier on a loaded machine). Prints one JSON line. Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from gen_corpus import vocabulary  # noqa: E402
from store_search_bench import fresh_queries  # noqa: E402

from pcp_cli import api  # noqa: E402


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("store", type=Path)
    ap.add_argument("--queries", default="fresh")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--per-query", action="store_true",
                    help="also print every query's CPU median (ms), slowest first")
    args = ap.parse_args()
    if args.queries == "fresh":
        queries = fresh_queries(vocabulary(random.Random(7), 50_000))[0]
    else:
        queries = json.loads(Path(args.queries).read_text(encoding="utf-8"))
    walls, cpus, slowest = [], [], []
    with api.open_store(args.store, readonly=True) as s:
        api.search(s, "warm up")
        for q in queries:
            api.search(s, q)
            w, c = [], []
            for _ in range(args.repeat):
                c0, t0 = time.process_time(), time.perf_counter()
                api.search(s, q)
                w.append(time.perf_counter() - t0)
                c.append(time.process_time() - c0)
            walls.append(statistics.median(w) * 1000)
            cpus.append(statistics.median(c) * 1000)
            slowest.append((round(cpus[-1], 1), q))
        engine = api.search_engine(s)["engine"]
    extra = {"per_query": sorted(slowest, reverse=True)} if args.per_query else {}
    import pcp_cli

    print(json.dumps({
        "store": args.store.name, "queries": args.queries, "n": len(queries),
        "code": str(Path(pcp_cli.__file__).parents[1]), "engine": engine,
        "cpu_p50_ms": round(pct(cpus, 50), 1), "cpu_p95_ms": round(pct(cpus, 95), 1),
        "wall_p50_ms": round(pct(walls, 50), 1), "wall_p95_ms": round(pct(walls, 95), 1),
        "slowest_cpu": sorted(slowest, reverse=True)[:3], "loadavg": os.getloadavg(), **extra,
    }, ensure_ascii=False))


if __name__ == "__main__":
    main()
