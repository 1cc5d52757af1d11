"""In-process `api.search` (the whole call, snippets included) p50/p95 on an existing store.

    python bench/inproc_search_bench.py STORE [--queries fresh|FILE.json] [--repeat 3]

`fresh` is store_search_bench.py's fresh set (words by Zipf rank); a FILE is a JSON list of
queries (bench/holdout_queries.json: 50 queries by random rank, kept aside, never tuned on).
Each query: one warm-up run, then the median of `--repeat` runs, as wall time and as this
process's CPU time (steadier on a loaded machine). Prints one JSON line. Not a test.

`--whole-process`: each query is instead one `python -m pcp_cli search Q --store STORE` run
(as a person runs it: start-up, store open and engine load included), timed as wall time and
the child's CPU (`os.wait4`), after one warm-up run; `--repeat` runs per query.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
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
    ap.add_argument("--whole-process", action="store_true",
                    help="time whole `pcp search` processes instead of in-process calls")
    args = ap.parse_args()
    if args.queries == "fresh":
        queries = fresh_queries(vocabulary(random.Random(7), 50_000))[0]
    else:
        queries = json.loads(Path(args.queries).read_text(encoding="utf-8"))
    walls, cpus, slowest = [], [], []
    if args.whole_process:
        whole_process(args, queries, walls, cpus, slowest)
        with api.open_store(args.store, readonly=True) as s:
            engine = api.search_engine(s)["engine"]
    else:
        engine = in_process(args, queries, walls, cpus, slowest)
    extra = {"per_query": sorted(slowest, reverse=True)} if args.per_query else {}
    import pcp_cli

    print(json.dumps({
        "store": args.store.name, "queries": args.queries, "n": len(queries),
        "code": str(Path(pcp_cli.__file__).parents[1]), "engine": engine,
        "whole_process": args.whole_process,
        "cpu_p50_ms": round(pct(cpus, 50), 1), "cpu_p95_ms": round(pct(cpus, 95), 1),
        "wall_p50_ms": round(pct(walls, 50), 1), "wall_p95_ms": round(pct(walls, 95), 1),
        "slowest_cpu": sorted(slowest, reverse=True)[:3], "loadavg": os.getloadavg(), **extra,
    }, ensure_ascii=False))


def whole_process(args: argparse.Namespace, queries: list[str], walls: list[float],
                  cpus: list[float], slowest: list[tuple[float, str]]) -> None:
    def run(q: str) -> tuple[float, float]:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "pcp_cli", "search", q, "--store",
                                 str(args.store)], cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env={**os.environ, "NO_COLOR": "1"})
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"pcp search {q!r} failed: {status}")
        return (time.perf_counter() - t0) * 1000, (usage.ru_utime + usage.ru_stime) * 1000

    run("warm up")
    for q in queries:
        runs = [run(q) for _ in range(args.repeat)]
        walls.append(statistics.median(w for w, _ in runs))
        cpus.append(statistics.median(c for _, c in runs))
        slowest.append((round(cpus[-1], 1), q))


def in_process(args: argparse.Namespace, queries: list[str], walls: list[float],
               cpus: list[float], slowest: list[tuple[float, str]]) -> str:
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
        return str(api.search_engine(s)["engine"])


if __name__ == "__main__":
    main()
