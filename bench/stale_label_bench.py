"""What stale labelling (PCP v1.2 §4.2, query/staleness.py) costs a search.

    python bench/stale_label_bench.py [-n 20000] [--work DIR] [--repeat 5] [--dated 0.1]

Generates a store (store_search_bench.gen_store: ~12% keystones), gives `--dated` of its
keystones a `stale_after` (half of them in the past) by rewriting their head files' record (then
`pcp ls` records the edits), builds the index, and measures in one run, in process, the CPU time
of `api.search` over the fixed queries of store_search_bench (each query's median of
`--repeat` runs after a warm-up):

- `baseline`: the staleness lookup replaced by an empty one (what a search cost before);
- `kept`: as shipped, the dated keystones kept for the catalog state (the usual search);
- `cold`: the kept list dropped before every search (the first search after any write);

the three taking turns on every repeat of every query.

Prints one JSON object: medians and p95 in ms and the ratios to the baseline, the load. Not a
test.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from store_search_bench import QUERIES, gen_store  # noqa: E402

from pcp_cli import api  # noqa: E402
from pcp_cli.query import staleness as stale_rule  # noqa: E402


def date_keystones(root: Path, share: float, seed: int = 3) -> int:
    """Give `share` of the keystones a stale_after (half past, half future) in their head
    files; the next refresh records them as hand edits, as a person's edit would be."""
    rng = random.Random(seed)
    dated = 0
    for path in sorted((root / "pages").rglob("*.md")):
        text = path.read_text("utf-8")
        if "\ntype: keystone\n" not in text or rng.random() >= share:
            continue
        day = "2001-01-01" if dated % 2 else "2999-12-31"
        if "\nrecord:\n" in text:
            text = text.replace("\nrecord:\n", f"\nrecord:\n  stale_after: '{day}'\n", 1)
        else:
            text = text.replace("\ncreated_at:", f"\nrecord:\n  stale_after: '{day}'\ncreated_at:",
                                1)
        path.write_text(text, "utf-8")
        dated += 1
    return dated


def cpu_ms(run) -> float:  # type: ignore[no-untyped-def]
    start = time.process_time()
    run()
    return (time.process_time() - start) * 1000


def measure(store: api.Store, repeat: int) -> dict[str, list[float]]:
    """Each query's CPU median per variant; the variants take turns on every repeat, so
    the machine's load drifts over all three alike."""
    real = stale_rule.dated

    def drop() -> None:
        stale_rule._MEMO.clear()
        (store.layout.local / stale_rule.KEPT).unlink(missing_ok=True)

    def none(current: object) -> dict[str, str]:
        return {}

    per_query: dict[str, list[float]] = {"baseline": [], "kept": [], "cold": []}
    for query in QUERIES:
        api.search(store, query, limit=10)  # warm-up
        runs: dict[str, list[float]] = {name: [] for name in per_query}
        for _ in range(repeat):
            for name in per_query:
                stale_rule.dated = none if name == "baseline" else real  # type: ignore
                if name == "cold":
                    drop()
                runs[name].append(cpu_ms(lambda q=query: api.search(store, q, limit=10)))
        stale_rule.dated = real  # type: ignore[assignment]
        for name, values in runs.items():
            per_query[name].append(statistics.median(values))
    return per_query


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"median_ms": round(statistics.median(ordered), 3),
            "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 3)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=20000)
    parser.add_argument("--work", default=None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dated", type=float, default=0.1)
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="stale-bench-"))
    root = work / "store"
    gen_store(root, args.n, seed=35)
    dated = date_keystones(root, args.dated)
    with api.open_store(root) as store:  # records the edits, builds the catalog
        api.index_store(store)
        keystones = len(store.entries(types=("keystone",), statuses=None, review=None))
        load_before = os.getloadavg()
        measured = measure(store, args.repeat)
        load_after = os.getloadavg()
    baseline, kept, cold = measured["baseline"], measured["kept"], measured["cold"]
    base = statistics.median(baseline)
    print(json.dumps({
        "pages": args.n, "keystones": keystones, "dated_keystones": dated,
        "queries": len(QUERIES), "repeat": args.repeat,
        "baseline": summary(baseline), "kept": summary(kept), "cold": summary(cold),
        "kept_vs_baseline": round(statistics.median(kept) / base, 3),
        "cold_vs_baseline": round(statistics.median(cold) / base, 3),
        "load_before": load_before, "load_after": load_after,
    }, indent=2))


if __name__ == "__main__":
    main()
