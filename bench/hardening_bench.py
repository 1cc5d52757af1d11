"""What the hardening costs, measured against another checkout in the same run.

    python bench/hardening_bench.py OTHER_CHECKOUT [-n 2000] [--rounds 5]

Generates one synthetic store (store_search_bench.gen_store), then times, for this checkout and
for OTHER_CHECKOUT (e.g. an export of main), each as real `python -m pcp_cli` processes on a
copy of the same store:

- `pcp doctor` (now: a verify scan that reads every head file, plus validate's checks);
- `pcp index` on an up-to-date index (now: a verify scan comparing content hashes);
- `pcp ls` (the stat scan every command does: now also refuses links and nested stores);
- 20 `pcp revise` in one process loop (each write now also keeps the head file's old bytes so
  a refused folder fsync can be undone).

Prints one JSON object with medians over `--rounds`. Not a test.
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
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from store_search_bench import gen_store  # noqa: E402

REVISE = """
import sys, time
from pcp_cli import api
store = api.open_store(sys.argv[1])
ids = [e.page_id for e in store.entries()][:20]
start = time.perf_counter()
for n, page_id in enumerate(ids):
    store.revise(page_id, changes={"content": f"bench text {n}"})
print(time.perf_counter() - start)
"""


def run(checkout: Path, *args: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pcp_cli", *args], env=env,
                          capture_output=True, text=True, cwd=checkout)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 8):
        raise SystemExit(f"{args}: {done.returncode} {done.stderr[-500:]}")
    return elapsed


def revise(checkout: Path, store: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run([sys.executable, "-c", REVISE, str(store)], env=env,
                          capture_output=True, text=True, cwd=checkout, check=True)
    return float(done.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("other", type=Path)
    parser.add_argument("-n", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    opts = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="pcp-hardening-bench-"))
    try:
        base = work / "base"
        gen_store(base, opts.n)
        results: dict[str, dict[str, float]] = {}
        for label, checkout in (("this", ROOT), ("other", opts.other.resolve())):
            store = work / label
            shutil.copytree(base, store)
            s = str(store)
            run(checkout, "ls", "--store", s)  # first catalog scan
            run(checkout, "index", "--store", s)  # first build
            times: dict[str, list[float]] = {"doctor": [], "index": [], "ls": [], "revise20": []}
            for _ in range(opts.rounds):
                times["doctor"].append(run(checkout, "doctor", "--store", s))
                times["index"].append(run(checkout, "index", "--store", s))
                times["ls"].append(run(checkout, "ls", "--store", s))
                times["revise20"].append(revise(checkout, store))
            results[label] = {k: round(statistics.median(v), 3) for k, v in times.items()}
        ratio = {k: round(results["this"][k] / results["other"][k], 2) for k in results["this"]}
        print(json.dumps({"pages": opts.n, "rounds": opts.rounds, "median_s": results,
                          "ratio_this_over_other": ratio,
                          "load": os.getloadavg()}, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
