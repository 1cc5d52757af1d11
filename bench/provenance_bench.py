"""What the provenance work (issue #10) costs: search results, micro_prompt and links.

    python bench/provenance_bench.py gen STORE [-n 10000]
    python bench/provenance_bench.py measure STORE [--code DIR] [--rounds 3] [--reuse DIR]

`gen` writes a synthetic store (bench/store_search_bench.py's generator). `measure` copies it,
then times, in one process, with the pcp_cli found in `--code` (another checkout, e.g. main)
or this one:
- in-process `api.search` p50/p95 over the 50 fixed queries of search_bench.py, index current
  (results now look up each hit's record for `source`/`confidence`);
- `pcp export --format micro_prompt`'s library call, p50 of 21 runs;
- 300 `lifecycle.link` calls (100 new relations, each repeated twice) on a store that already holds
  2,000 relations (links are idempotent now: each call looks the edge up).
Wall and CPU time (`time.process_time`) of each call are both reported: on a shared machine
the CPU time is the steadier figure. `--reuse DIR` keeps the copy (catalog and index built once,
by the first run) in DIR and skips the links, which change the store, so that several code
bases can take turns on their own prepared copies, minutes apart. Prints one JSON object. Not a
test.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def gen(root: Path, n: int) -> None:
    sys.path.insert(0, str(BENCH.parent))
    sys.path.insert(0, str(BENCH))
    from store_search_bench import gen_store

    gen_store(root, n)


def measure(source: Path, code: Path | None, rounds: int, reuse: Path | None = None) -> dict:
    sys.path.insert(0, str(BENCH))
    from search_bench import QUERIES  # (it puts this checkout first on sys.path)

    if code is not None:  # then the other checkout wins, and nothing of this one stays loaded
        for name in [n for n in sys.modules if n == "pcp_cli" or n.startswith("pcp_cli.")]:
            del sys.modules[name]
        sys.path.insert(0, str(code))

    from pcp_cli import api
    from pcp_cli.store import lifecycle

    work = reuse or Path(tempfile.mkdtemp(prefix="pcp-prov-bench-"))
    root = work / "store"
    if not root.exists():
        shutil.copytree(source, root, ignore=shutil.ignore_patterns(".pcp"))
    try:
        with api.open_store(root) as store:
            api.search(store, "warm up")  # builds the catalog and the index
            times: list[float] = []
            cpu: list[float] = []
            for _ in range(rounds):
                for query in QUERIES:
                    start, start_cpu = time.perf_counter(), time.process_time()
                    api.search(store, query)
                    times.append(time.perf_counter() - start)
                    cpu.append(time.process_time() - start_cpu)
            prompt: list[float] = []
            prompt_cpu: list[float] = []
            for _ in range(21):
                start, start_cpu = time.perf_counter(), time.process_time()
                api.export_text(store, "micro_prompt")
                prompt.append(time.perf_counter() - start)
                prompt_cpu.append(time.process_time() - start_cpu)
            if reuse is not None:
                return {"code": str(Path(api.__file__).parent.parent), **_summary(
                    times, cpu, prompt, prompt_cpu)}
            ids = [e.page_id for e in store.entries(types=("note",))][:2300]
            for a, b in zip(ids[:2000], ids[1:2001], strict=True):
                lifecycle.link(store, a, "depends_on", b)
            pairs = list(zip(ids[2000:2100], ids[2100:2200], strict=True))
            start = time.perf_counter()
            for a, b in pairs * 3:
                lifecycle.link(store, a, "related_to", b)
            link_time = time.perf_counter() - start
            relations = len(store.relations())
        import pcp_cli

        return {
            "code": str(Path(pcp_cli.__file__).parent.parent),
            **_summary(times, cpu, prompt, prompt_cpu),
            "link_300_calls_s": round(link_time, 3),
            "relations_after": relations,
        }
    finally:
        if reuse is None:
            shutil.rmtree(work, ignore_errors=True)


def _summary(times: list[float], cpu: list[float], prompt: list[float],
             prompt_cpu: list[float]) -> dict:
    def ms(value: float) -> float:
        return round(value * 1000, 2)

    return {
        "search_ms": {"p50": ms(statistics.median(times)), "p95": ms(pct(times, 95)),
                      "n": len(times)},
        "search_cpu_ms": {"p50": ms(statistics.median(cpu)), "p95": ms(pct(cpu, 95))},
        "micro_prompt_ms_p50": ms(statistics.median(prompt)),
        "micro_prompt_cpu_ms_p50": ms(statistics.median(prompt_cpu)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("store", type=Path)
    g.add_argument("-n", type=int, default=10_000)
    m = sub.add_parser("measure")
    m.add_argument("store", type=Path)
    m.add_argument("--code", type=Path, default=None)
    m.add_argument("--rounds", type=int, default=3)
    m.add_argument("--reuse", type=Path, default=None)
    args = ap.parse_args()
    if args.cmd == "gen":
        gen(args.store, args.n)
    else:
        print(json.dumps(measure(args.store, args.code, args.rounds, args.reuse)))


if __name__ == "__main__":
    main()
