"""Issue #22: does ordering nearly tied results by authority and recency lose relevance?

    python bench/tiebreak_bench.py [-n 10000] [--work DIR] [--engine whoosh|tantivy]...

On a generated store (store_search_bench.py's: random origins and observed times), every query
of the held-out set (bench/holdout_queries.json, never tuned on) runs through `api.search`
twice in the same process, on the same index: *before*, with the tie-break switched off (the
ranking the engine returned, as before issue #22), and *after*, with it (pcp_cli/query/
tiebreak.py). The measures, with no labels needed, take the engine's relevance score as the
graded relevance (the *before* order is then the ideal one):

- nDCG@10 of the *after* top 10 (1.0: nothing of relevance lost);
- the share of the *before* top 10 still in the *after* top 10;
- the sum of the top 10's scores, after / before;
- the queries whose order changed, and the largest move of a result (in ranks);
- what the tie-break is for: the mean authority rank (0 = user_stated … 5 = inferred) of the
  top 3 and the share of user_stated results among them, before and after;
- the median time of a search, before and after (a band cut by the fetch widens it).

Prints one JSON object. Not a test.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from store_search_bench import gen_store  # noqa: E402

from pcp_cli import api  # noqa: E402
from pcp_cli.query import tiebreak  # noqa: E402

K = 10


def ndcg(after: list[float], ideal: list[float], k: int = K) -> float:
    def dcg(gains: list[float]) -> float:
        return sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))

    best = dcg(sorted(ideal, reverse=True))
    return 1.0 if best == 0 else dcg(after) / best


def run(store: api.Store, queries: list[str], tie_break: bool, repeat: int) -> dict[str, dict]:
    original = tiebreak.order
    if not tie_break:
        tiebreak.order = lambda items, **_: list(items)  # type: ignore[assignment]
    try:
        out: dict[str, dict] = {}
        for q in queries:
            data = api.search(store, q, limit=K)  # warm-up, and the answer
            times = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                api.search(store, q, limit=K)
                times.append(time.perf_counter() - t0)
            out[q] = {"results": [(r["id"], r.get("score", 0.0), r["origin"])
                                  for r in data["results"]],
                      "ms": statistics.median(times) * 1000}
        return out
    finally:
        tiebreak.order = original


def compare(before: dict[str, dict], after: dict[str, dict]) -> dict[str, object]:
    ndcgs, overlap, mass, moved, changed = [], [], [], 0, 0
    auth_b, auth_a, user_b, user_a = [], [], [], []
    for q, b in before.items():
        rb, ra = b["results"], after[q]["results"]
        if not rb:
            continue
        gain = {pid: score for pid, score, _ in rb}
        # a result only the after run has comes from the same band: its own score is its gain
        gain.update({pid: score for pid, score, _ in ra if pid not in gain})
        ndcgs.append(ndcg([gain[p] for p, _, _ in ra], [s for _, s, _ in rb]))
        overlap.append(len({p for p, _, _ in rb} & {p for p, _, _ in ra}) / len(rb))
        mass.append(sum(s for _, s, _ in ra) / (sum(s for _, s, _ in rb) or 1))
        if [p for p, _, _ in rb] != [p for p, _, _ in ra]:
            changed += 1
        pos = {p: i for i, (p, _, _) in enumerate(rb)}
        moved = max([moved, *(abs(pos[p] - i) for i, (p, _, _) in enumerate(ra) if p in pos)])
        for rows, auth, user in ((rb, auth_b, user_b), (ra, auth_a, user_a)):
            top = rows[:3]
            auth.append(statistics.fmean(tiebreak.authority(o) for _, _, o in top))
            user.append(sum(o == "user_stated" for _, _, o in top) / len(top))
    return {
        "queries_with_results": len(ndcgs),
        "ndcg@10_mean": round(statistics.fmean(ndcgs), 4),
        "ndcg@10_min": round(min(ndcgs), 4),
        "top10_overlap_mean": round(statistics.fmean(overlap), 4),
        "top10_score_mass_ratio_mean": round(statistics.fmean(mass), 4),
        "queries_reordered": changed,
        "largest_move_ranks": moved,
        "top3_authority_mean": {"before": round(statistics.fmean(auth_b), 3),
                                "after": round(statistics.fmean(auth_a), 3)},
        "top3_user_stated_share": {"before": round(statistics.fmean(user_b), 3),
                                   "after": round(statistics.fmean(user_a), 3)},
        "search_ms_median": {
            "before": round(statistics.median(v["ms"] for v in before.values()), 2),
            "after": round(statistics.median(v["ms"] for v in after.values()), 2)},
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=10_000)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--engine", action="append", choices=("whoosh", "tantivy"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--epsilon", type=float, action="append",
                    help="band widths to measure (default: the shipped TIE_EPSILON)")
    args = ap.parse_args()
    queries = json.loads((ROOT / "bench" / "holdout_queries.json").read_text())
    queries = list(dict.fromkeys(queries))
    work = args.work or Path(tempfile.mkdtemp(prefix="pcp-tiebreak-bench-"))
    root = work / f"store-{args.n}"
    res: dict[str, object] = {"pages": args.n, "queries": len(queries), "k": K,
                              "tie_epsilon": tiebreak.TIE_EPSILON, "cpus": os.cpu_count(),
                              "load_before": os.getloadavg()}
    if not (root / "pcp.yaml").exists():
        gen_store(root, args.n)
    for engine in args.engine or ["whoosh"]:
        os.environ["PCP_INDEX_ENGINE"] = engine
        with api.open_store(root) as store:
            api.index_store(store, engine=engine, vectors=False)
            # alternate, so that neither run has the warmer caches
            shipped = tiebreak.TIE_EPSILON
            for epsilon in args.epsilon or [shipped]:
                tiebreak.TIE_EPSILON = epsilon
                before = run(store, queries, False, args.repeat)
                after = run(store, queries, True, args.repeat)
                for mine, again in ((before, run(store, queries, False, args.repeat)),
                                    (after, run(store, queries, True, args.repeat))):
                    for q in mine:
                        mine[q]["ms"] = min(mine[q]["ms"], again[q]["ms"])
                res[f"{engine} epsilon={epsilon:g}"] = compare(before, after)
            tiebreak.TIE_EPSILON = shipped
    res["load_after"] = os.getloadavg()
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
